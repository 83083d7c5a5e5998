"""Behaviour scenarios of control from ROS: the communication switch, the joint space, the RT controllers'
endpoints, the calibration action and live parameters (docs/control.md "RT controllers and the communication switch",
"Motor calibration"). Texts are the ROS 2 code's (nrt/ros2/src/switch.rs, calibration_action.rs; the engine's
calibration_run.rs; handoff::endpoints).
"""

import math
import time

from client import check, check_eq
from scenarios_io import ODOM, TWIST, speed_of, stamp, x_of

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


def controller_status(message, name):
    """The /diagnostics status of RT controller `name` (`<prefix>: Controller <name>`), or None."""
    for status in message["status"]:
        if status["name"].endswith(f": Controller {name}"):
            return status
    return None


def status_value(status, key):
    """The value of `key` in one status, or None."""
    return next((pair["value"] for pair in status["values"] if pair["key"] == key), None)


def _controller_updated(status):
    value = status and status_value(status, "update [µs] p50/p99/max")
    return bool(value) and value != "no calls"


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
    # ... and what each RT controller costs: go_to_pose, the owner, was updated within its budget
    status = diagnostics.wait(lambda m: _controller_updated(controller_status(m, "go_to_pose")), 10,
                              "/diagnostics: the go_to_pose controller's status with its update calls")
    go_to_pose = controller_status(status, "go_to_pose")
    check_eq(go_to_pose["message"], "OK", "go_to_pose's status (within its budget)")
    check_eq(status_value(go_to_pose, "Budget per update [µs]"), "1000.0", "the default budget")
    check_eq(status_value(go_to_pose, "Stopped over budget"), "0", "go_to_pose's stops over budget")
    check(controller_status(status, "line_follower") is not None, "line_follower's status")
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
    # in position within position_tolerance (0.02 m), then it turns to the goal's heading on the spot, which may move
    # the centre by a few millimetres it does not correct (hysteresis: up to twice the tolerance); 5 mm allowed
    check(abs(x_of(odom.latest()) - x_of(start) - 0.15) < 0.025, "stopped 0.15 ahead")
    # a geometry_msgs/PoseStamped goal (an endpoint of a type of the controller's choosing, converted on the NRT
    # side): another frame than odometry's refused before RT, saying so; one in odom taken, 5 cm further
    x = x_of(start) + 0.2
    goal = lambda frame: {"header": {"frame_id": frame},
                          "pose": {"position": {"x": x, "y": 0.0, "z": 0.0},
                                   "orientation": {"x": 0.0, "y": 0.0, "z": 0.0, "w": 1.0}}}
    refused = 'go_to_pose/goal_pose: frame "map" is not the odometry frame (odom)'
    c.stream(base + "goal_pose", "geometry_msgs/PoseStamped", goal("map"),
             lambda: c.log.poll(lambda m: m["level"] == "warn" and refused in m["msg"]), 10,
             "the map-frame goal refused with its reason on /rosout", period=0.2)
    check(reached.poll(lambda m: not m["data"]) is None, "a refused goal_pose changed the goal")
    c.stream(base + "goal_pose", "geometry_msgs/PoseStamped", goal("odom"),
             lambda: reached.poll(lambda m: not m["data"]), 10, "go_to_pose taking the PoseStamped goal",
             period=0.2)
    reached.wait(lambda m: m["data"], 20, "go_to_pose reached the PoseStamped goal")
    check(abs(x_of(odom.latest()) - x) < 0.025, f"stopped at x {x_of(odom.latest())} for a PoseStamped goal at {x}")
    expect_switch(c, "ros")


ACTION = "thymio_rt_msgs/CalibrateMotors"


def calibration(c, env):
    """Bad goals rejected with the reason on /rosout; a good goal runs (feedback, owner calibrate_motors) and a
    cancel gives the wheels back to `ros`; the emergency stop aborts a run under way and rejects new ones."""
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
    # the emergency stop holds the wheels: a run under way is aborted with its reason (it would fit a held
    # wheel), and no new run starts until it is released
    h = c.send_goal(name, ACTION, {"motor_speeds": [300, 450], "samples": 2}, timeout=30)
    check(h.accepted, "a good goal rejected")
    owner.wait(lambda m: m["data"] == "calibrate_motors", 10, "calibrate_motors owning the wheels again")
    r = c.call(c.name("emergency_stop"), "std_srvs/SetBool", {"data": True}, timeout=20)
    check(r.ok and r.response["success"], f"emergency_stop true: {r}")
    status, result = h.result(timeout=10)
    check_eq((status, result["success"], result["message"]), ("aborted", False, HELD_BY_ESTOP),
             "the run under way at the emergency stop")
    c.expect_log("warn", f"calibrate_motors (node 1): failed: {HELD_BY_ESTOP}")
    owner.wait(lambda m: m["data"] == "ros", 10, "the wheels back to ros after the abort")
    h = c.send_goal(name, ACTION, {"motor_speeds": [300, 450], "samples": 2}, timeout=30)
    check(not h.accepted, "a calibration accepted under the emergency stop")
    c.expect_log("warn", f"calibrate_motors (node 1): goal rejected: {HELD_BY_ESTOP}")
    r = c.call(c.name("emergency_stop"), "std_srvs/SetBool", {"data": False}, timeout=20)
    check(r.ok and r.response["success"], f"emergency_stop false: {r}")


# The goal actions' and the calibration's text while the emergency stop holds the wheels.
HELD_BY_ESTOP = ("the robot's wheels are held by its emergency stop (call emergency_stop with false to release "
                 "them)")


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


def _drain(sub, into):
    """Appends every message received on `sub` so far to `into`; `into`."""
    while True:
        m = sub.poll()
        if m is None:
            return into
        into.append(m)


def _crossing(messages, value, level):
    """The stamp of the first message whose `value` reaches `level`, or None."""
    return next((stamp(m) for m in messages if value(m) >= level), None)


def motion_limits(c, env):
    """Motion limits set live (docs/safety.md "Motion limits"): with linear.x.max_acceleration 0.2 m/s², a cmd_vel step
    0 -> 0.15 m/s ramps on ~/cmd_vel_out (publish_limited_velocity, set live) at that rate, and the wheels follow
    (odometry); a refused limit keeps the one in effect; the cmd_vel watchdog's stop is not slowed by a small
    max_deceleration; publish_limited_velocity false stops ~/cmd_vel_out."""
    node, accel, decel, top = c.private(), 0.2, 0.05, 0.15
    out = c.subscribe(c.private("cmd_vel_out"), "geometry_msgs/TwistStamped")
    odom = c.subscribe(c.name("odom"), ODOM)
    first = odom.wait(timeout=30, what="the first odometry")
    check_eq(c.get_parameter(node, "publish_limited_velocity", timeout=30), False, "publish_limited_velocity at start")
    for name, value in [("linear.x.max_acceleration", accel), ("linear.x.max_deceleration", decel),
                        ("publish_limited_velocity", True)]:
        applied, reason, in_effect = c.set_parameter(node, name, value)
        check(applied, f"{name} = {value} refused: {reason}")
        check_eq(in_effect, value, f"{name} in effect")
    name = "linear.x.max_acceleration"
    # below the physical minimum (0 would keep the robot still): refused with the range (issue 42)
    applied, reason, in_effect = c.set_parameter(node, name, 0.0)
    check(not applied, f"{name} = 0.0 applied")
    check_eq(in_effect, accel, f"{name} after the refused set")
    if c.transport == "ros2":
        check(name in reason and "[0.05, 1000] m/s²" in reason, f"the refusal's reason: {reason!r}")
    # at rest, ~/cmd_vel_out says so (published with every odometry sample)
    rest = out.wait(timeout=10, what="~/cmd_vel_out at rest")
    check_eq(rest["header"]["frame_id"], c.frame("base_link"), "cmd_vel_out's frame")
    check(abs(rest["twist"]["linear"]["x"]) < 1e-9, f"at rest: {rest['twist']}")
    out.forget()
    odom.forget()
    seen, speeds = [], []
    linear = lambda m: m["twist"]["linear"]["x"]  # noqa: E731

    def at_top():
        _drain(odom, speeds)
        _drain(out, seen)
        return bool(seen and speeds and linear(seen[-1]) > top - 1e-6 and speed_of(speeds[-1]) > top - 0.03)

    c.stream(c.name("cmd_vel"), TWIST, {"linear": {"x": top}}, at_top, 10,
             f"cmd_vel_out and odometry at {top} m/s")
    last_command = time.time()  # the system clock, which the driver's stamps use too
    # the limited twist ramps at max_acceleration (a step would have no message between 10 % and 90 %)
    lo, hi = _crossing(seen, linear, 0.1 * top), _crossing(seen, linear, 0.9 * top)
    ramp = [m for m in seen if 0.1 * top <= linear(m) <= 0.9 * top]
    check(len(ramp) >= 3, f"cmd_vel_out stepped: {[round(linear(m), 3) for m in seen]}")
    slope = 0.8 * top / (hi - lo) if hi > lo else math.inf
    check(0.6 * accel < slope < 1.5 * accel, f"cmd_vel_out's slope {slope:.3f} m/s² (max_acceleration {accel})")
    check(all(linear(m) <= top + 1e-6 for m in seen), "cmd_vel_out above the command")
    # the wheels follow: the odometry's speed ramps too
    lo, hi = _crossing(speeds, speed_of, 0.25 * top), _crossing(speeds, speed_of, 0.75 * top)
    check(lo is not None and hi is not None, "odometry's speed never ramped")
    slope = 0.5 * top / (hi - lo) if hi > lo else math.inf
    check(slope < 2.5 * accel, f"odometry's slope {slope:.3f} m/s² (max_acceleration {accel}): not limited")
    # no more commands: the watchdog (cmd_vel_timeout 0.5 s) stops the robot at once, not at max_deceleration
    # (which would take top / decel = 3 s)
    stopped = out.wait(lambda m: abs(linear(m)) < 1e-9, 5, "cmd_vel_out at 0 after the watchdog")
    # timed by the messages' stamps: the client's own delay in receiving them does not count
    after = stamp(stopped) - last_command
    check(after < 1.5, f"cmd_vel_out at 0 {after:.2f} s after the last cmd_vel: the stop was slowed")
    still = odom.wait(lambda m: abs(speed_of(m)) < 1e-3, 5, "odometry at rest after the watchdog")
    after = stamp(still) - last_command
    check(after < 2.0, f"odometry at rest {after:.2f} s after the last cmd_vel: the stop was slowed")
    check(stamp(still) - stamp(stopped) < 1.0, "odometry stopped long after cmd_vel_out")
    # publish_limited_velocity false: no more ~/cmd_vel_out (live)
    applied, reason, _ = c.set_parameter(node, "publish_limited_velocity", False)
    check(applied, f"publish_limited_velocity = false refused: {reason}")
    t0 = stamp(odom.latest())
    odom.wait(lambda m: stamp(m) > t0 + 0.3, 5, "odometry 0.3 s later")
    out.forget()
    t1 = stamp(odom.latest())
    odom.wait(lambda m: stamp(m) > t1 + 0.5, 5, "odometry 0.5 s later")
    check(out.poll() is None, "cmd_vel_out still published with publish_limited_velocity false")
    check(abs(speed_of(first)) < 1e-3, f"at rest before any command: {first['twist']}")


# the odometry group's configuration (tests/behaviour.rs gives it to both transports): diff_drive_controller's names
POSE_DIAGONAL = [0.001, 0.002, 1000000.0, 1000000.0, 1000000.0, 0.03]
TWIST_DIAGONAL = [0.004, 0.005, 1000000.0, 1000000.0, 1000000.0, 0.06]


def _yaw(odom):
    q = odom["pose"]["pose"]["orientation"]
    return 2.0 * math.atan2(q["z"], q["w"])


def _diagonal(covariance):
    return [covariance[i * 7] for i in range(6)]


def _odom_tf(c, message):
    return [t for t in message["transforms"]
            if t["header"]["frame_id"] == c.frame("odom_rt") and t["child_frame_id"] == c.frame("base_rt")]


def odometry(c, env):
    """Odometry parameters as diff_drive_controller names them (docs/ros2.md "Odometry for Nav2"): odom_frame_id and
    base_frame_id (aliases of odom_frame and robot_frame), the covariance diagonals from the configuration (and live
    on ROS 2), ~/set_odometry resetting the pose (z, roll, pitch refused), enable_odom_tf removing odom -> base from
    /tf (live) while the wheels' transforms stay."""
    node = c.private()
    odom = c.subscribe(c.name("odom"), ODOM)
    tf = c.subscribe("/tf", "tf2_msgs/TFMessage")
    first = odom.wait(timeout=30, what="the first odometry")
    check_eq(first["header"]["frame_id"], c.frame("odom_rt"), "odom's frame (odom_frame_id)")
    check_eq(first["child_frame_id"], c.frame("base_rt"), "odom's child frame (base_frame_id)")
    pose_cov, twist_cov = first["pose"]["covariance"], first["twist"]["covariance"]
    check_eq(_diagonal(pose_cov), POSE_DIAGONAL, "odom's pose covariance diagonal")
    check_eq(_diagonal(twist_cov), TWIST_DIAGONAL, "odom's twist covariance diagonal")
    check(sum(1 for v in pose_cov if v != 0.0) == 6, f"pose covariance off its diagonal: {list(pose_cov)}")
    # set_odometry: the pose jumps to the one asked (the robot is at rest)
    service, kind = c.private("set_odometry"), "thymio_rt_msgs/SetOdometry"
    r = c.call(service, kind, {"x": 1.5, "y": -0.25, "yaw": 0.5})
    check(r.ok and r.response["success"], f"set_odometry refused: {r}")
    odom.forget()
    reset = odom.wait(lambda m: abs(x_of(m) - 1.5) < 1e-3, 5, "odometry at x = 1.5 after set_odometry")
    check(abs(reset["pose"]["pose"]["position"]["y"] + 0.25) < 1e-3, f"y after set_odometry: {reset['pose']}")
    check(abs(_yaw(reset) - 0.5) < 1e-3, f"yaw after set_odometry: {_yaw(reset)}")
    # the odometry integrates on from the new pose: driving moves it along yaw 0.5
    moved = c.stream(c.name("cmd_vel"), TWIST, {"linear": {"x": 0.1}},
                     lambda: odom.poll(lambda m: math.hypot(x_of(m) - 1.5, m["pose"]["pose"]["position"]["y"] + 0.25)
                                       > 0.03), 10, "odometry 3 cm from the reset pose")
    heading = math.atan2(moved["pose"]["pose"]["position"]["y"] + 0.25, x_of(moved) - 1.5)
    check(abs(heading - 0.5) < 0.1, f"moved from the reset pose along {heading:.3f} rad, not its yaw 0.5")
    odom.wait(lambda m: abs(speed_of(m)) < 1e-3, 5, "the cmd_vel watchdog's stop")
    # refusals: planar odometry only; nothing changes
    at_rest = odom.latest()
    r = c.call(service, kind, {"x": 0.0, "pitch": 0.2})
    check(r.ok and not r.response["success"] and "pitch" in r.response["message"],
          f"set_odometry with pitch 0.2: {r}")
    odom.forget()
    later = odom.wait(lambda m: stamp(m) > stamp(at_rest) + 0.3, 5, "odometry 0.3 s after the refused reset")
    check(abs(x_of(later) - x_of(at_rest)) < 1e-3, f"a refused reset moved the pose: {x_of(at_rest)} -> {x_of(later)}")
    # enable_odom_tf (live): off, odom -> base leaves /tf and the wheels' transforms stay
    tf.wait(lambda m: _odom_tf(c, m), 5, "odom_rt -> base_rt on /tf")
    applied, reason, in_effect = c.set_parameter(node, "enable_odom_tf", False)
    check(applied and in_effect is False, f"enable_odom_tf = false: {applied} {reason} {in_effect}")
    # a message published before the change may still arrive: wait for the odometry to go 0.3 s on first
    t0 = stamp(odom.latest())
    odom.wait(lambda m: stamp(m) > t0 + 0.3, 5, "odometry 0.3 s later")
    tf.forget()
    t1 = stamp(odom.latest())
    odom.wait(lambda m: stamp(m) > t1 + 0.5, 5, "odometry 0.5 s later")
    seen = _drain(tf, [])
    wheels = [t for m in seen for t in m["transforms"] if t["header"]["frame_id"] == c.frame("base_rt")]
    check(wheels, "no wheel transforms on /tf with enable_odom_tf false")
    check(not any(_odom_tf(c, m) for m in seen), "odom_rt -> base_rt still on /tf with enable_odom_tf false")
    applied, reason, _ = c.set_parameter(node, "enable_odom_tf", True)
    check(applied, f"enable_odom_tf = true refused: {reason}")
    tf.wait(lambda m: _odom_tf(c, m), 5, "odom_rt -> base_rt back on /tf")
    if c.transport == "ros2":
        # the diagonals are live (ROS 1's dynamic_reconfigure has no list type: set at start there)
        diagonal = [0.5, 0.5, 0.5, 0.5, 0.5, 0.25]
        applied, reason, in_effect = c.set_parameter(node, "pose_covariance_diagonal", diagonal)
        check(applied and in_effect == diagonal, f"pose_covariance_diagonal set live: {applied} {reason} {in_effect}")
        odom.wait(lambda m: _diagonal(m["pose"]["covariance"]) == diagonal, 5, "the new pose covariance on odom")
        applied, reason, in_effect = c.set_parameter(node, "pose_covariance_diagonal", [0.1, 0.1])
        check(not applied and "6 variances" in reason, f"a diagonal of 2 values: {applied} {reason!r}")
        check_eq(in_effect, diagonal, "pose_covariance_diagonal after the refused set")



BOOL = "std_msgs/Bool"
DIAGNOSTICS = "diagnostic_msgs/DiagnosticArray"


def _enable_cliff_stop(c):
    """Turns the cliff reflex on live (`cliff_stop.enabled` on asebaros: off by default); the latched
    `cliff_stop` topic, released."""
    bridge = c.name("asebaros")
    check_eq(c.get_parameter(bridge, "cliff_stop.enabled", timeout=30), False, "cliff_stop.enabled at start")
    applied, reason, in_effect = c.set_parameter(bridge, "cliff_stop.enabled", True)
    check(applied, f"cliff_stop.enabled = true refused: {reason}")
    check_eq(in_effect, True, "cliff_stop.enabled in effect")
    flag = c.subscribe(c.name("cliff_stop"), BOOL, latched=True)
    check_eq(flag.wait(timeout=10, what="the latched cliff_stop")["data"], False, "cliff_stop at start")
    return flag


def cliff(c, env):
    """The cliff reflex on the table arena (config/arena/table.yaml, docs/safety.md "Cliff reflex"): driving straight at
    0.12 m/s the ground sensors cross a black tape line (not stopped) and then reach the table's east edge
    (x = 1.2 m), where forward motion stops before the robot falls, however insistent cmd_vel is (ground truth);
    `cliff_stop` (latched) and /diagnostics say it holds; backing away is allowed and releases it."""
    truth = c.subscribe(c.name("sim/ground_truth"), ODOM)
    diagnostics = c.subscribe("/diagnostics", DIAGNOSTICS)
    start = x_of(truth.wait(timeout=30, what="the first ground truth"))
    check(abs(start - 0.3) < 0.01, f"starts at x = {start} (table.yaml: 0.3)")
    flag = _enable_cliff_stop(c)
    diagnostics.wait(lambda m: diagnostics_value(m, "Cliff stop") == "armed", 10, "/diagnostics: Cliff stop armed")
    # over the black tape (ground sensors at x 0.5-0.55, the centre at 0.43-0.48): not stopped
    c.stream(c.name("cmd_vel"), TWIST, {"linear": {"x": 0.12}},
             lambda: truth.poll(lambda m: x_of(m) > 0.6), 15, "the robot past the black tape")
    check(flag.poll(lambda m: m["data"]) is None, "the cliff reflex stopped the robot on the black tape")
    # at the edge: held, however long cmd_vel insists
    c.stream(c.name("cmd_vel"), TWIST, {"linear": {"x": 0.12}},
             lambda: flag.poll(lambda m: m["data"]), 15, "cliff_stop true at the table's edge")
    stopping = x_of(truth.latest())
    end = time.monotonic() + 2.0
    while time.monotonic() < end:
        c.publish(c.name("cmd_vel"), TWIST, {"linear": {"x": 0.12}})
        time.sleep(0.05)
    later = x_of(truth.latest())
    check(1.1 < later < 1.19, f"held at x = {later}: the edge is at 1.2 (fallen past it, or stopped far before)")
    check(later - stopping < 0.01, f"crept on toward the edge while held: {stopping} -> {later}")
    diagnostics.wait(lambda m: diagnostics_value(m, "Cliff stop") == "holding", 10,
                     "/diagnostics: Cliff stop holding")
    # backing away is allowed and releases the reflex
    c.stream(c.name("cmd_vel"), TWIST, {"linear": {"x": -0.1}},
             lambda: truth.poll(lambda m: x_of(m) < later - 0.05), 10, "backing away from the edge")
    flag.wait(lambda m: not m["data"], 10, "cliff_stop false after backing away")


def cliff_line(c, env):
    """The cliff reflex on, on the line track (config/arena/line.yaml): driving along the black strip (both ground
    sensors on black all the way) is not stopped: the robot moves 0.3 m and `cliff_stop` stays false."""
    truth = c.subscribe(c.name("sim/ground_truth"), ODOM)
    x0 = x_of(truth.wait(timeout=30, what="the first ground truth"))
    flag = _enable_cliff_stop(c)
    c.stream(c.name("cmd_vel"), TWIST, {"linear": {"x": 0.12}},
             lambda: truth.poll(lambda m: x_of(m) > x0 + 0.3), 10, "0.3 m along the black line")
    check(flag.poll(lambda m: m["data"]) is None, "the cliff reflex stopped the robot on the black line")



def pickup(c, env):
    """The pick-up reflex (`pickup_stop.enabled`, off by default, set live): the simulated robot lifted while cmd_vel
    drives it (a tilted reading written into `acc`: the simulator's lift, sim/src/thymio/lift.rs) has every wheel
    held (odometry, from the measured wheel speeds, says they stopped, however insistent cmd_vel is); `picked_up`
    (latched) and /diagnostics say so; set back down (a floor reading) it is released and cmd_vel drives again; a
    goal under way when the robot is lifted is aborted as `picked_up`."""
    from scenarios_io import speed_of

    odom = c.subscribe(c.name("odom"), ODOM)
    diagnostics = c.subscribe("/diagnostics", DIAGNOSTICS)
    odom.wait(timeout=30, what="the first odometry")
    bridge = c.name("asebaros")
    check_eq(c.get_parameter(bridge, "pickup_stop.enabled", timeout=30), False, "pickup_stop.enabled at start")
    applied, reason, _ = c.set_parameter(bridge, "pickup_stop.enabled", True)
    check(applied, f"pickup_stop.enabled = true refused: {reason}")
    flag = c.subscribe(c.name("picked_up"), BOOL, latched=True)
    check_eq(flag.wait(timeout=10, what="the latched picked_up")["data"], False, "picked_up at start")
    diagnostics.wait(lambda m: diagnostics_value(m, "Pick-up stop") == "armed", 10, "/diagnostics: Pick-up stop armed")
    x0 = x_of(odom.latest())
    c.stream(c.name("cmd_vel"), TWIST, {"linear": {"x": 0.1}},
             lambda: odom.poll(lambda m: x_of(m) > x0 + 0.03), 10, "driving before the lift")
    put = lambda acc: c.call(c.name("aseba/set_variable"), "asebaros_msgs/SetVariable",
                             {"variable": "acc", "data": acc})
    check(put([2, 18, 12]).ok, "set_variable acc (the lift)")
    c.stream(c.name("cmd_vel"), TWIST, {"linear": {"x": 0.1}},
             lambda: flag.poll(lambda m: m["data"]), 10, "picked_up true once lifted")
    odom.forget()
    c.stream(c.name("cmd_vel"), TWIST, {"linear": {"x": 0.1}},
             lambda: odom.poll(lambda m: abs(speed_of(m)) < 1e-3), 5, "the wheels held while lifted")
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        c.publish(c.name("cmd_vel"), TWIST, {"linear": {"x": 0.1}})
        time.sleep(0.05)
    check(abs(speed_of(odom.latest())) < 1e-3, f"the wheels turned while lifted: {odom.latest()['twist']}")
    diagnostics.wait(lambda m: diagnostics_value(m, "Pick-up stop") == "holding", 10,
                     "/diagnostics: Pick-up stop holding")
    # set back down: released, cmd_vel drives again
    check(put([0, 0, 22]).ok, "set_variable acc (set down)")
    flag.wait(lambda m: not m["data"], 10, "picked_up false once set down")
    x1 = x_of(odom.latest())
    c.stream(c.name("cmd_vel"), TWIST, {"linear": {"x": 0.1}},
             lambda: odom.poll(lambda m: x_of(m) > x1 + 0.02), 10, "cmd_vel driving once set down")
    # a goal under way when the robot is picked up: aborted as picked_up
    x2 = x_of(odom.latest())
    h = c.send_goal(c.name("drive_distance"), "thymio_rt_msgs/DriveDistance",
                    {"distance": 1.0, "max_translation_speed": 0.1}, timeout=30)
    check(h.accepted, "a 1 m drive rejected")
    odom.wait(lambda m: x_of(m) > x2 + 0.03, 10, "the 1 m drive under way")
    check(put([2, 18, 12]).ok, "set_variable acc (lifted during the goal)")
    status, result = h.result(timeout=10)
    check_eq((status, result["reason"]), ("aborted", "picked_up"), f"the goal when lifted ({result})")
    check(put([0, 0, 22]).ok, "set_variable acc (set down again)")
    flag.wait(lambda m: not m["data"], 10, "picked_up false once set down again")


GROUPS = {"switch": switch, "joints": joints, "controllers": controllers, "calibration": calibration,
          "parameters": parameters, "motion_limits": motion_limits, "odometry": odometry, "cliff": cliff,
          "cliff_line": cliff_line, "pickup": pickup}
