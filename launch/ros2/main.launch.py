"""ROS-Thymio's ROS 2 main.launch with thymio-rt, in Python: main.launch beside it is the same in XML (see it for the
arguments and what they mean).

    ros2 launch thymio_rt main.launch.py name:=thymio device:=ser:device=/dev/ttyACM0

The parameters are typed here (an integer stays an integer, a string a string, whatever its text), so that the
driver gets the same values as from main.launch. tests/ros2/params.rs starts the driver with exactly what this file
passes (under a stand-in for launch and launch_ros: `ros2 launch` itself is not on the test machine).
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

# ROS-Thymio's arguments and their defaults (main.launch says where two differ from ROS-Thymio's)
ARGUMENTS = {
    'name': '',
    'device': '',
    'port': '44444',
    'single': 'true',
    'simulation': 'false',
    'simulation_has_reduced_api': 'true',
    'axis_length': '0.0935',
    'odom_max_rate': '-1',
    'calibration_file': '',
    'emit_motor': '1',
    'emit_buttons': '0',
    'emit_acc': '1',
    'emit_ground_raw': '0',
    'emit_proximity': '1',
    'enable_prox_comm': '1',
    'motor_deadband': '10',
    'motor_period': '5',
    'acc_period': '2',
    'buttons_period': '5',
    'model': 'true',
    'highest_acceptable_protocol_version': '100',
}

# script constant <- argument
CONSTANTS = {
    'MOTOR_PERIOD': 'motor_period',
    'MOTOR_DEADBAND': 'motor_deadband',
    'ACC_PERIOD': 'acc_period',
    'BUTTONS_PERIOD': 'buttons_period',
    'EMIT_GROUND_RAW': 'emit_ground_raw',
    'EMIT_BUTTONS': 'emit_buttons',
    'EMIT_ACC': 'emit_acc',
    'EMIT_PROXIMITY': 'emit_proximity',
    'EMIT_MOTOR': 'emit_motor',
    'ENABLE_PROX_COMM': 'enable_prox_comm',
}


def flag(text):
    """A launch boolean ("true", "false", "1", "0", any case), as launch's conditions read it."""
    value = text.strip().lower()
    if value not in ('true', 'false', '1', '0'):
        raise ValueError(f'not a boolean: {text!r} (true, false, 1 or 0)')
    return value in ('true', '1')


def driver(context):
    """The thymio-rt node for the arguments in effect."""
    arg = {name: LaunchConfiguration(name).perform(context) for name in ARGUMENTS}
    single = flag(arg['single'])
    simulation = flag(arg['simulation'])
    reduced_api = simulation and flag(arg['simulation_has_reduced_api'])
    script = 'thymio_ros_playground.aesl' if reduced_api else 'thymio_ros.aesl'
    parameters = {
        # asebaros' parameters ("" is the embedded simulated Thymio-II)
        'targets': [arg['device'] or 'sim:'],
        'port': int(arg['port']),
        'highest_acceptable_protocol_version': int(arg['highest_acceptable_protocol_version']),
        'set_id_variable': simulation,
        'nodes.thymio.maximal_number': 1 if single else 0,
        'nodes.thymio.prefix': '' if single else 'thymio_',
        'script.path': f'builtin:aseba/{script}',
        # thymio_driver's parameters
        'axis_length': float(arg['axis_length']),
        'odom_max_rate': float(arg['odom_max_rate']),
        'tf_prefix': arg['name'],
        'calibration_file': arg['calibration_file'],
        'simulation': simulation,
        'publish_model': flag(arg['model']),
    }
    for constant, name in CONSTANTS.items():
        parameters[f'script.constants.{constant}'] = int(arg[name])
    return [
        Node(
            package='thymio_rt',
            executable='thymio-rt',
            namespace=arg['name'] if single else '',
            output='screen',
            arguments=['run'],
            parameters=[parameters],
        )
    ]


def generate_launch_description():
    return LaunchDescription(
        [DeclareLaunchArgument(name, default_value=default) for name, default in ARGUMENTS.items()]
        + [OpaqueFunction(function=driver)]
    )
