"""Behaviour scenarios of the robot's I/O: drive, sensors, variables and their errors, load_script and its errors.

Each group is `def group(c, env)`: `c` a `client.Client` (either transport), `env` the harness's arguments (`dir`: a
directory of the test's own). Texts the ROS 2 code defines are compared exactly (the engine's error texts, the
interface's report lines).
"""

import math
import os
import time

from client import ScenarioFailure, check, check_eq, wait_until

TWIST = "geometry_msgs/Twist"
ODOM = "nav_msgs/Odometry"
RANGE = "sensor_msgs/Range"


def x_of(odom):
    return odom["pose"]["pose"]["position"]["x"]


def speed_of(odom):
    return odom["twist"]["twist"]["linear"]["x"]


def stamp(m):
    return m["header"]["stamp"]["sec"] + m["header"]["stamp"]["nanosec"] * 1e-9


def drive(c, env):
    """cmd_vel moves the simulated robot (odometry and /tf follow); the cmd_vel watchdog stops it."""
    odom = c.subscribe(c.name("odom"), ODOM)
    tf = c.subscribe("/tf", "tf2_msgs/TFMessage")
    first = odom.wait(timeout=30, what="the first odometry")
    check_eq(first["header"]["frame_id"], c.frame("odom"), "odom's frame")
    check_eq(first["child_frame_id"], c.frame("base_link"), "odom's child frame")
    check(abs(speed_of(first)) < 1e-3, f"at rest before any command: {first['twist']}")
    x0 = x_of(first)
    moving = c.stream(c.name("cmd_vel"), TWIST, {"linear": {"x": 0.1}},
                      lambda: odom.poll(lambda m: x_of(m) > x0 + 0.05 and speed_of(m) > 0.05), 15,
                      "odometry 5 cm ahead at cmd_vel's speed")
    last_command = time.monotonic()
    check(0.07 < speed_of(moving) < 0.13, f"odometry's speed under cmd_vel 0.1 m/s: {speed_of(moving)}")
    check(abs(moving["pose"]["pose"]["position"]["y"]) < 0.01, f"straight ahead: {moving['pose']['pose']}")
    tf.wait(lambda m: any(t["child_frame_id"] == c.frame("base_link") and t["header"]["frame_id"] == c.frame("odom")
                          and t["transform"]["translation"]["x"] > x0 + 0.04 for t in m["transforms"]),
            5, f"{c.frame('odom')} -> {c.frame('base_link')} moved on /tf")
    # no more commands: the watchdog (cmd_vel_timeout 0.5 s) stops the robot
    stopped = odom.wait(lambda m: abs(speed_of(m)) < 1e-3, 5, "the cmd_vel watchdog's stop")
    after = time.monotonic() - last_command
    check(after < 2.0, f"stopped {after:.2f} s after the last cmd_vel (cmd_vel_timeout 0.5 s)")
    later = odom.wait(lambda m: stamp(m) > stamp(stopped) + 0.5, 5, "odometry 0.5 s after the stop")
    check(abs(x_of(later) - x_of(stopped)) < 0.002, f"still moving after the stop: {x_of(stopped)} -> {x_of(later)}")


def sensors(c, env):
    """The sensor topics and their content, on a robot facing away from a wall 9 cm behind it (REP-117 ranges)."""
    center = c.subscribe(c.name("proximity/center"), RANGE)
    rear = c.subscribe(c.name("proximity/rear_left"), RANGE)
    laser = c.subscribe(c.name("proximity/laser"), "sensor_msgs/LaserScan")
    ground = [c.subscribe(c.name(f"ground/{side}"), RANGE) for side in ("left", "right")]
    imu = c.subscribe(c.name("imu"), "sensor_msgs/Imu")
    temperature = c.subscribe(c.name("temperature"), "sensor_msgs/Temperature")
    description = c.subscribe(c.name("robot_description"), "std_msgs/String", latched=True)
    c.call(c.name("is_ready"), "std_srvs/Empty", {}, timeout=30)

    front = center.wait(timeout=20, what="a proximity range")
    check_eq(front["header"]["frame_id"], c.frame("proximity_center_link"), "proximity/center's frame")
    check_eq(front["radiation_type"], 1, "proximity's radiation type (INFRARED)")
    check(0 < front["min_range"] < front["max_range"] < 1, f"proximity's limits: {front}")
    check(front["field_of_view"] > 0, f"proximity's field of view: {front}")
    check_eq(front["range"], math.inf, "nothing ahead (REP-117: +inf)")
    wall = rear.wait(lambda m: math.isfinite(m["range"]), 10, "the wall behind")
    check(0.06 < wall["range"] < 0.13, f"the wall 9 cm behind seen at {wall['range']} m")
    check_eq(wall["header"]["frame_id"], c.frame("proximity_rear_left_link"), "proximity/rear_left's frame")
    scan = laser.wait(timeout=10, what="a laser scan")
    check(len(scan["ranges"]) > 2 and scan["angle_min"] < scan["angle_max"], f"laser scan shape: {scan}")
    check(all(r == math.inf for r in scan["ranges"]), f"nothing ahead on the laser scan: {scan['ranges']}")
    for side, sub in zip(("left", "right"), ground):
        g = sub.wait(timeout=10, what=f"ground/{side}")
        check_eq(g["header"]["frame_id"], c.frame(f"ground_{side}_link"), f"ground/{side}'s frame")
        check_eq(g["range"], -math.inf, f"ground/{side} sees the floor (REP-117: -inf)")
    i = imu.wait(timeout=10, what="an imu sample")
    check(8.0 < i["linear_acceleration"]["z"] < 11.0, f"gravity on the flat floor: {i['linear_acceleration']}")
    check_eq(i["header"]["frame_id"], c.frame("base_link"), "imu's frame")
    t = temperature.wait(timeout=10, what="a temperature")
    check(-10 < t["temperature"] < 60, f"temperature {t['temperature']} °C")
    check_eq(t["header"]["frame_id"], c.frame("base_link"), "temperature's frame")
    urdf = description.wait(timeout=10, what="the robot description")
    check("left_wheel_joint" in urdf["data"], "robot_description is the robot's URDF")


def _node_id(c):
    """The id of the one node of the network, once the driver drives it (its first odometry: the configured script
    is loaded — a `load_script` before that would be replaced by it) and aseba/get_nodes lists it."""
    c.subscribe(c.name("odom"), ODOM).wait(timeout=30, what="the first odometry (the robot driven)")
    get_nodes = lambda: c.call(c.name("aseba/get_nodes"), "asebaros_msgs/GetNodeList", {}, timeout=30)
    nodes = wait_until(lambda: get_nodes().response["nodes"], 30, "a node in aseba/get_nodes", step=0.2)
    check_eq([(n["id"], n["name"]) for n in nodes], [(1, "thymio-II")], "the nodes")
    return 1


def expect_refusal(c, reply, line):
    """An error of a service of the asebaros interface: the caller learns it — on ROS 2 the asebaros services have
    no error field: answered empty; on ROS 1 the call fails with `line`, ROS 2's report, as its error (rospy's
    ServiceException) — and the driver reports `line` as an error on /rosout."""
    if c.transport == "ros1":
        if c.soft(not reply.ok, f"a ROS 1 service error expected for {line!r}, got {reply}"):
            c.soft(line in reply.error, f"ROS 1 error {reply.error!r} does not say {line!r} (ROS 2's report)")
    else:
        check(reply.ok, f"ROS 2 answers: {reply}")
    c.expect_log("error", line)


def variables(c, env):
    """get/set_variable, their errors (unknown variable, wrong size), and no service for an unknown node."""
    node = _node_id(c)
    get = lambda v: c.call(c.name("aseba/get_variable"), "asebaros_msgs/GetVariable", {"variable": v})
    put = lambda v, d: c.call(c.name("aseba/set_variable"), "asebaros_msgs/SetVariable", {"variable": v, "data": d})
    check_eq(get("_id").response, {"data": [node]}, "get_variable _id")
    check(put("leds.top", [32, 0, 16]).ok, "set_variable leds.top")
    deadline = time.monotonic() + 5
    while get("leds.top").response["data"] != [32, 0, 16]:
        check(time.monotonic() < deadline, "set_variable leds.top [32, 0, 16] not applied within 5 s")
        time.sleep(0.05)
    # errors: the engine's texts, the same on both transports
    r = get("no.such.variable")
    expect_refusal(c, r, f'get_variable: node {node} has no variable "no.such.variable"')
    if r.ok:
        check_eq(r.response, {"data": []}, "get_variable of an unknown variable (ROS 2: empty)")
    expect_refusal(c, put("no.such.variable", [1]), f'set_variable: node {node} has no variable "no.such.variable"')
    expect_refusal(c, put("leds.top", list(range(9))), 'set_variable: variable "leds.top" has size 3, got 9 values')
    check_eq(get("leds.top").response, {"data": [32, 0, 16]}, "leds.top after the refused set")
    # a node the network does not have has no services (per-node services live in its namespace); the graph may
    # hold other drivers' services (the other groups of this test process share its DDS domain): ours only
    services = c.services()
    check(c.name("aseba/get_variable") in services, f"{c.name('aseba/get_variable')} served")
    ours = c.name("")
    stray = [s for s in services if s.startswith(ours) and s.endswith("/aseba/get_variable")
             and s != c.name("aseba/get_variable")]
    check_eq(stray, [], "get_variable services of nodes that do not exist")


ECHO = """<!DOCTYPE aesl-source>
<network>
<event size="1" name="ping"/>
<event size="2" name="pong"/>
<constant value="2" name="GAIN"/>
<node nodeId="1" name="thymio-II">var answer = GAIN * 7
var pings = 0
onevent ping
pings++
emit pong [event.args[0] * GAIN, pings]</node>
</network>
"""


def load_script(c, env):
    """A good script runs (its constants from the request); a missing file, a compile error and a script for no
    node of the network: the same outcome and the same /rosout line on both transports."""
    _node_id(c)
    d = env["dir"]
    good, broken, nobody = (os.path.join(d, f) for f in ("echo.aesl", "broken.aesl", "nobody.aesl"))
    with open(good, "w") as f:
        f.write(ECHO)
    with open(broken, "w") as f:
        f.write(ECHO.replace("var answer = GAIN * 7", "var answer = GAIN *"))
    with open(nobody, "w") as f:
        f.write(ECHO.replace('nodeId="1" name="thymio-II"', 'nodeId="9" name="no-such-robot"'))
    load = lambda path, constants=(): c.call(c.name("aseba/load_script"), "asebaros_msgs/LoadScript",
                                             {"file_name": path, "constants": list(constants)}, timeout=20)
    r = load(good, [{"name": "GAIN", "value": 3}])
    check(r.ok, f"load_script of a good script: {r}")
    c.expect_log("info", f"load_script: {good} loaded on nodes [1]")
    answer = c.call(c.name("aseba/get_variable"), "asebaros_msgs/GetVariable", {"variable": "answer"})
    check_eq(answer.response, {"data": [21]}, "the loaded script's variable (GAIN = 3 from the request)")
    pong = c.subscribe(c.name("aseba/events/pong"), "asebaros_msgs/Event")
    try:
        got = c.stream(c.name("aseba/events/ping"), "asebaros_msgs/Event", {"source": 0, "data": [5]},
                       lambda: pong.poll(), 15, "the script's pong to a ping", period=0.2)
    except ScenarioFailure as e:
        pings = c.call(c.name("aseba/get_variable"), "asebaros_msgs/GetVariable", {"variable": "pings"})
        raise ScenarioFailure(f"{e} (the script counted {pings.response} pings; ping has "
                              f"{c.subscribers(c.name('aseba/events/ping'))} subscriber(s))")
    check_eq(got["data"][0], 15, "pong's first value (5 * GAIN)")

    missing = good + ".missing"
    expect_refusal(c, load(missing), f"load_script: cannot read script {missing}: not found")
    expect_refusal(c, load(broken), f"load_script: {broken}:2:1: Expecting one of ")
    r = load(nobody)
    c.expect_log("warn", f"load_script: {nobody} has code for none of the nodes")
    c.soft(r.ok, f"a script for none of the nodes is a warning, not an error (as ROS 2): {r}")
    # the good script still runs
    check_eq(c.call(c.name("aseba/get_variable"), "asebaros_msgs/GetVariable", {"variable": "answer"}).response,
             {"data": [21]}, "the script in effect after the refused loads")


BATTERY = "sensor_msgs/BatteryState"
# nrt_interface::battery::DISCHARGE_CURVE: one Li-Po cell's charge against its voltage
_CURVE = [(3.30, 0.00), (3.61, 0.05), (3.69, 0.10), (3.73, 0.20), (3.77, 0.30), (3.80, 0.40), (3.84, 0.50),
          (3.87, 0.60), (3.95, 0.70), (4.02, 0.80), (4.11, 0.90), (4.20, 1.00)]


def _charge(volts):
    if volts <= _CURVE[0][0]:
        return 0.0
    for (v0, p0), (v1, p1) in zip(_CURVE, _CURVE[1:]):
        if volts <= v1:
            return p0 + (volts - v0) / (v1 - v0) * (p1 - p0)
    return 1.0


def battery(c, env):
    """battery_state (sensor_msgs/BatteryState, every second): the simulator's charged battery (_vbat 794 on the
    firmware's ADC scale, 655 = 3.3 V: 4.0 V) with the percentage read off the Li-Po discharge curve, status UNKNOWN
    (the firmware has no charging flag), LIPO, present, in the robot's base frame; a level written into _vbat
    (set_variable, as a test sets the simulated battery) shows in the next readings with its percentage."""
    sub = c.subscribe(c.name("battery_state"), BATTERY)
    first = sub.wait(timeout=30, what="the first battery_state")
    check(abs(first["voltage"] - 794 * 3.3 / 655) < 0.03, f"the simulator's battery at {first['voltage']} V (4.0)")
    check(abs(first["percentage"] - _charge(first["voltage"])) < 1e-3,
          f"{first['percentage']} at {first['voltage']} V: the curve says {_charge(first['voltage'])}")
    check_eq((first["power_supply_status"], first["power_supply_technology"], first["present"]), (0, 3, True),
             "status UNKNOWN, technology LIPO, present")
    check_eq(first["header"]["frame_id"], c.frame("base_link"), "battery_state's frame")
    t0 = time.monotonic()
    sub.wait(timeout=5, what="the next battery_state")
    sub.wait(timeout=5, what="the one after")
    took = time.monotonic() - t0
    check(1.0 < took < 3.5, f"two more readings in {took:.2f} s (one a second)")
    # the battery set to 700 (3.53 V): the next readings say so
    put = c.call(c.name("aseba/set_variable"), "asebaros_msgs/SetVariable", {"variable": "_vbat", "data": [700, 0]})
    check(put.ok, f"set_variable _vbat: {put}")
    low = sub.wait(lambda m: abs(m["voltage"] - 700 * 3.3 / 655) < 0.03, 10, "battery_state at 3.53 V")
    check(abs(low["percentage"] - _charge(low["voltage"])) < 1e-3 and low["percentage"] < 0.05,
          f"{low['percentage']} at {low['voltage']} V: the curve says {_charge(low['voltage'])}")


GROUPS = {"drive": drive, "sensors": sensors, "variables": variables, "load_script": load_script,
          "battery": battery}
