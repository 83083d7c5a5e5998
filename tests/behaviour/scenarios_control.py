"""Behaviour scenarios of control from ROS: the communication switch, the joint space, the RT controllers'
endpoints, the calibration action and live parameters (README "RT controllers and the communication switch",
"Motor calibration"). Texts are the ROS 2 code's (nrt/ros2/src/switch.rs, calibration_action.rs; the engine's
calibration_run.rs; handoff::endpoints).
"""

import math
import time

from client import check, check_eq
from scenarios_io import ODOM, TWIST, speed_of, x_of

SWITCH = "thymio_rt_msgs/SwitchController"
OWNERS = "ros, joint, line_follower, go_to_pose"


def switch_to(c, owner):
    r = c.call(c.name("switch_controller"), SWITCH, {"owner": owner}, timeout=20)
    check(r.ok, f"switch_controller {owner}: {r}")
    return r.response["success"], r.response["message"]


def expect_switch(c, owner):
    ok, why = switch_to(c, owner)
    check(ok, f"switch_controller to {owner} refused: {why}")
    check_eq(why, f"{owner} owns the wheels", "switch_controller's answer")


def diagnostics_value(message, key):
    """The value of `key` in a /diagnostics array (the robot's status), or None."""
    for status in message["status"]:
        for pair in status["values"]:
            if pair["key"] == key:
                return pair["value"]
    return None


def switch(c, env):
    """Refusals (unknown owner, calibrate_motors), success, the latched controller_owner, cmd_vel dropped while
    another owner has the wheels (and counted in /diagnostics) and driving again under `ros`."""
    diagnostics = c.subscribe("/diagnostics", "diagnostic_msgs/DiagnosticArray")
    odom = c.subscribe(c.name("odom"), ODOM)
    odom.wait(timeout=30, what="the first odometry")
    ok, why = switch_to(c, "wheels_please")
    check(not ok, f"an unknown owner accepted: {why}")
    check(why.startswith('unknown owner "wheels_please": the owners are ') and OWNERS in why,
          f"the refusal of an unknown owner: {why!r}")
    ok, why = switch_to(c, "calibrate_motors")
    check(not ok, f"calibrate_motors taken by switch_controller: {why}")
    check_eq(why, "calibrate_motors takes the wheels through its action (calibrate_motors) only",
             "the refusal of calibrate_motors")
    expect_switch(c, "go_to_pose")
    # a late subscriber learns the owner (latched)
    owner = c.subscribe(c.name("controller_owner"), "std_msgs/String", latched=True)
    check_eq(owner.wait(timeout=10, what="the latched owner")["data"], "go_to_pose", "controller_owner")
    x0 = x_of(odom.latest())
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        c.publish(c.name("cmd_vel"), TWIST, {"linear": {"x": 0.1}})
        time.sleep(0.05)
    x1 = x_of(odom.latest())
    check(abs(x1 - x0) < 0.005, f"cmd_vel moved the robot while go_to_pose owned the wheels: {x0} -> {x1}")
    # /diagnostics says who owns the wheels and counts the commands it dropped
    diagnostics.wait(lambda m: diagnostics_value(m, "Owner") == "go_to_pose"
                     and int(diagnostics_value(m, "Non-owner commands dropped") or 0) > 0, 10,
                     "/diagnostics: owner go_to_pose, cmd_vel commands dropped")
    expect_switch(c, "ros")
    owner.wait(lambda m: m["data"] == "ros", 10, "controller_owner back to ros")
    c.stream(c.name("cmd_vel"), TWIST, {"linear": {"x": 0.1}},
             lambda: odom.poll(lambda m: x_of(m) > x1 + 0.03), 10, "cmd_vel driving again under ros")


JOINT_STATE = "thymio_rt_msgs/JointState"


def joints(c, env):
    """~/joint_states content (names, owner), ~/joint_command after switching to `joint` (wheels by name, in any
    order), the watchdog, and ROS-Thymio's joint_states beside it."""
    wheels = [c.frame("left_wheel_joint"), c.frame("right_wheel_joint")]
    js = c.subscribe(c.private("joint_states"), JOINT_STATE)
    plain_js = c.subscribe(c.name("joint_states"), "sensor_msgs/JointState")
    odom = c.subscribe(c.name("odom"), ODOM)
    first = js.wait(timeout=30, what="an extended joint state")
    check_eq(first["name"], wheels, "~/joint_states' joint names")
    check_eq(first["owner"], "ros", "~/joint_states' owner at start")
    check_eq(first["pwm"], [], "~/joint_states' pwm (not reported by the driver script)")
    p = plain_js.wait(timeout=10, what="ROS-Thymio's joint state")
    check_eq(p["name"], wheels, "joint_states' names")
    expect_switch(c, "joint")
    x0 = x_of(odom.latest())
    command = {"name": ["right_wheel_joint", "left_wheel_joint"], "velocity": [4.0, 2.0]}
    m = c.stream(c.private("joint_command"), "sensor_msgs/JointState", command,
                 lambda: js.poll(lambda m: m["velocity"][0] > 1.5 and m["velocity"][1] > 3.5), 10,
                 "the wheels at 2 and 4 rad/s in ~/joint_states", period=0.1)
    check_eq(m["owner"], "joint", "~/joint_states' owner under joint")
    ref = m["velocity_reference"]
    check(1.7 < ref[0] < 2.3 and 3.5 < ref[1] < 4.5, f"velocity references {ref} for left 2, right 4 rad/s")
    # the odometry follows (its own rate, its own subscription): keep commanding until it shows the motion
    c.stream(c.private("joint_command"), "sensor_msgs/JointState", command,
             lambda: odom.poll(lambda m: x_of(m) > x0 + 0.01), 10, "joint commands moving the robot in odom",
             period=0.1)
    # no more commands: the watchdog stops the wheels and says so in the fault flags (4)
    stopped = js.wait(lambda m: abs(m["velocity"][0]) < 0.05 and abs(m["velocity"][1]) < 0.05, 5,
                      "the wheels stopped by the watchdog")
    check(all(f & 4 for f in stopped["fault"]), f"watchdog fault flags: {stopped['fault']}")
    expect_switch(c, "ros")


def controllers(c, env):
    """go_to_pose's endpoints: set_goal (service), goal (topic) and reached, on the driver node."""
    base = c.private("controllers/go_to_pose/")
    reached = c.subscribe(base + "reached", "std_msgs/Bool")
    odom = c.subscribe(c.name("odom"), ODOM)
    start = odom.wait(timeout=30, what="the first odometry")
    expect_switch(c, "go_to_pose")
    r = c.call(base + "set_goal", "thymio_rt_msgs/SetPose2D", {"pose": {"x": 0.1, "y": 0.0, "theta": 0.0}})
    check(r.ok and r.response["success"], f"set_goal: {r}")
    reached.wait(lambda m: m["data"], 20, "go_to_pose reached its goal")
    end = odom.latest()
    check(abs(x_of(end) - x_of(start) - 0.1) < 0.02, f"stopped at x {x_of(end)} for a goal 0.1 ahead")
    # a goal by topic, 5 cm further
    c.stream(base + "goal", "geometry_msgs/Pose2D", {"x": 0.15, "y": 0.0, "theta": 0.0},
             lambda: reached.poll(lambda m: not m["data"]), 10, "go_to_pose leaving its goal", period=0.2)
    reached.wait(lambda m: m["data"], 20, "go_to_pose reached the goal sent by topic")
    check(abs(x_of(odom.latest()) - x_of(start) - 0.15) < 0.02, "stopped 0.15 ahead")
    expect_switch(c, "ros")


ACTION = "thymio_rt_msgs/CalibrateMotors"


def calibration(c, env):
    """Bad goals rejected with the reason on /rosout; a good goal runs (feedback, owner calibrate_motors) and a
    cancel gives the wheels back to `ros`."""
    name = c.name("calibrate_motors")
    owner = c.subscribe(c.name("controller_owner"), "std_msgs/String", latched=True)
    owner.wait(lambda m: m["data"] == "ros", 30, "the owner at start")
    for goal, why in (({"motor_speeds": [0, 100]}, "motor_speeds: 0 is outside 1..500 units"),
                      ({"motors": ["middle"]}, 'motors: "middle" is not a motor (left, right), or is named twice')):
        h = c.send_goal(name, ACTION, goal, timeout=30)
        check(not h.accepted, f"bad goal {goal} accepted")
        c.expect_log("warn", f"calibrate_motors (node 1): goal rejected: {why}")
    h = c.send_goal(name, ACTION, {"motor_speeds": [300, 450], "samples": 2}, timeout=30)
    check(h.accepted, "a good goal rejected")
    owner.wait(lambda m: m["data"] == "calibrate_motors", 10, "calibrate_motors owning the wheels")
    deadline = time.monotonic() + 15
    while not any(f["phase"] == "deadband" and f["motor"] == "left" for f in h.feedback):
        check(time.monotonic() < deadline, f"no deadband feedback of the left motor: {h.feedback}")
        time.sleep(0.05)
    check(all(0 <= f["progress"] <= 1 for f in h.feedback), f"feedback progress: {h.feedback}")
    h.cancel()
    status, _result = h.result(timeout=10)
    check_eq(status, "canceled", "the cancelled goal's status")
    owner.wait(lambda m: m["data"] == "ros", 10, "the wheels back to ros after the cancel")


def parameters(c, env):
    """A live controller parameter: out of range refused (ROS 2 with the reason; ROS 1's dynamic_reconfigure has
    no reason field: the value in effect is kept), in range applied at once (go_to_pose no faster than it)."""
    node, name = c.private(), "controllers.go_to_pose.max_linear"
    check_eq(c.get_parameter(node, name, timeout=30), 0.1, f"{name} at start")
    applied, reason, in_effect = c.set_parameter(node, name, 1.0)
    check(not applied, f"{name} = 1.0 (outside [0, 0.3]) applied")
    check_eq(in_effect, 0.1, f"{name} after the refused set")
    if c.transport == "ros2":
        check("is outside [0, 0.3]" in reason and "max_linear" in reason, f"the refusal's reason: {reason!r}")
    applied, reason, in_effect = c.set_parameter(node, name, 0.05)
    check(applied, f"{name} = 0.05 refused: {reason}")
    check_eq(in_effect, 0.05, f"{name} in effect")
    odom = c.subscribe(c.name("odom"), ODOM)
    start = odom.wait(timeout=10, what="odometry")
    expect_switch(c, "go_to_pose")
    reached = c.subscribe(c.private("controllers/go_to_pose/reached"), "std_msgs/Bool")
    r = c.call(c.private("controllers/go_to_pose/set_goal"), "thymio_rt_msgs/SetPose2D",
               {"pose": {"x": 0.15, "y": 0.0, "theta": 0.0}})
    check(r.ok and r.response["success"], f"set_goal: {r}")
    fastest, deadline = 0.0, time.monotonic() + 20
    while not reached.poll(lambda m: m["data"]):
        check(time.monotonic() < deadline, "goal not reached within 20 s")
        fastest = max(fastest, speed_of(odom.wait(timeout=5)))
    check(0.02 < fastest < 0.06, f"fastest {fastest} m/s with max_linear 0.05 (default 0.1)")
    check(math.isclose(x_of(odom.latest()) - x_of(start), 0.15, abs_tol=0.02), "reached 0.15 ahead")
    expect_switch(c, "ros")


GROUPS = {"switch": switch, "joints": joints, "controllers": controllers, "calibration": calibration,
          "parameters": parameters}
