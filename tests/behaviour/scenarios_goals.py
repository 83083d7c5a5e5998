"""Behaviour scenarios of the goal actions (docs/control.md "Goal actions"): drive_distance, rotate_angle and
navigate_to_position reach their goals on odometry with feedback, own the wheels while they run and give them back
to `ros`; a bad goal is rejected with its reason; a cancel stops the robot; a goal driving off the table is aborted
by the cliff reflex before the edge. Texts are the layer's (nrt/interface/src/goal_actions.rs, handoff::GoalAbort).
"""

import json
import math
import os
import signal
import subprocess
import sys
import threading
import time

from client import check, check_eq
from scenarios_control import _enable_cliff_stop, _yaw, switch_to
from scenarios_io import ODOM, TWIST, x_of

DRIVE = "thymio_rt_msgs/DriveDistance"
ROTATE = "thymio_rt_msgs/RotateAngle"
NAVIGATE = "thymio_rt_msgs/NavigateToPosition"


def _y_of(odom):
    return odom["pose"]["pose"]["position"]["y"]


def _wrap(a):
    return (a + math.pi) % (2.0 * math.pi) - math.pi


def _owner(c):
    owner = c.subscribe(c.name("controller_owner"), "std_msgs/String", latched=True)
    owner.wait(lambda m: m["data"] == "ros", 30, "the owner at start")
    return owner


def _run(c, owner, action, type_name, goal, name, timeout=30.0):
    """Sends `goal` to `action`, checks that its controller owns the wheels while it runs, and returns its
    (status, result, feedback) once the wheels are back to `ros`."""
    h = c.send_goal(c.name(action), type_name, goal, timeout=30)
    check(h.accepted, f"{action} goal {goal} rejected")
    owner.wait(lambda m: m["data"] == name, 10, f"{name} owning the wheels")
    status, result = h.result(timeout=timeout)
    owner.wait(lambda m: m["data"] == "ros", 10, f"the wheels back to ros after {action}")
    return status, result, h.feedback


def goals(c, env):
    """Each goal action reaches its goal (odometry within its tolerance, result pose = odometry), with feedback
    counting down; a NaN goal is rejected with its reason on /rosout; the goal controllers cannot be taken through
    switch_controller; a cancelled drive stops short with the wheels back to `ros`."""
    owner = _owner(c)
    odom = c.subscribe(c.name("odom"), ODOM)
    odom.wait(timeout=30, what="the first odometry")
    ok, why = switch_to(c, "drive_distance")
    check(not ok, "drive_distance taken by switch_controller")
    check_eq(why, "drive_distance takes the wheels through its action (drive_distance) only",
             "the refusal of drive_distance")
    # drive_distance: 0.15 m ahead at most 0.08 m/s
    start = odom.latest()
    status, result, feedback = _run(c, owner, "drive_distance", DRIVE,
                                    {"distance": 0.15, "max_translation_speed": 0.08}, "drive_distance")
    check_eq(status, "succeeded", f"drive_distance's status ({result})")
    check(result["success"] and result["reason"] == "", f"drive_distance's result: {result}")
    end = odom.latest()
    check(abs(x_of(end) - x_of(start) - 0.15) < 0.015, f"drove {x_of(end) - x_of(start)} m for 0.15")
    check(abs(result["pose"]["x"] - x_of(end)) < 0.01, f"result pose {result['pose']} vs odometry {x_of(end)}")
    left = [f["remaining_travel_distance"] for f in feedback]
    check(len(left) >= 3 and left[0] > 0.1 and left[-1] < left[0], f"drive_distance feedback: {left}")
    # rotate_angle: a quarter turn counter-clockwise
    yaw0 = _yaw(odom.latest())
    status, result, feedback = _run(c, owner, "rotate_angle", ROTATE,
                                    {"angle": math.pi / 2, "max_rotation_speed": 1.0}, "rotate_angle")
    check_eq(status, "succeeded", f"rotate_angle's status ({result})")
    turned = _wrap(_yaw(odom.latest()) - yaw0)
    check(abs(turned - math.pi / 2) < 0.05, f"turned {turned} rad for pi/2")
    check(len(feedback) >= 2 and feedback[0]["remaining_angle_travel"] > 1.0, f"rotate_angle feedback: {feedback}")
    # navigate_to_position: 0.1 m to the side and back to heading 0
    p = odom.latest()
    goal = {"x": x_of(p) + 0.1, "y": _y_of(p) - 0.1, "theta": 0.0}
    status, result, feedback = _run(c, owner, "navigate_to_position", NAVIGATE,
                                    {"goal_pose": goal, "achieve_goal_heading": True}, "navigate_to_position",
                                    timeout=40)
    check_eq(status, "succeeded", f"navigate_to_position's status ({result})")
    end = odom.latest()
    off = math.hypot(x_of(end) - goal["x"], _y_of(end) - goal["y"])
    check(off < 0.03 and abs(_wrap(_yaw(end))) < 0.08, f"ended {off} m from the goal, heading {_yaw(end)}")
    check(len(feedback) >= 2, f"navigate_to_position feedback: {feedback}")
    # a bad goal: rejected, the reason on /rosout
    h = c.send_goal(c.name("drive_distance"), DRIVE, {"distance": float("nan")}, timeout=30)
    check(not h.accepted, "a NaN distance accepted")
    c.expect_log("warn", "drive_distance (node 1): goal rejected: the goal must be finite")
    # a cancel: stopped well short of 1 m, the wheels back to ros, cmd_vel drives again
    x0 = x_of(odom.latest())
    h = c.send_goal(c.name("drive_distance"), DRIVE, {"distance": 1.0, "max_translation_speed": 0.1}, timeout=30)
    check(h.accepted, "a 1 m drive rejected")
    odom.wait(lambda m: x_of(m) > x0 + 0.05, 10, "the 1 m drive under way")
    h.cancel()
    status, _result = h.result(timeout=10)
    check_eq(status, "canceled", "the cancelled goal's status")
    owner.wait(lambda m: m["data"] == "ros", 10, "the wheels back to ros after the cancel")
    time.sleep(0.3)
    x1 = x_of(odom.latest())
    check(x1 < x0 + 0.5, f"went on after the cancel: {x1 - x0} m")
    c.stream(c.name("cmd_vel"), TWIST, {"linear": {"x": 0.08}},
             lambda: odom.poll(lambda m: x_of(m) > x1 + 0.02), 10, "cmd_vel driving after the cancel")


def goal_cliff(c, env):
    """drive_distance toward the table's edge (config/arena/table.yaml, the edge 0.9 m ahead) with the cliff reflex
    on: the goal is aborted with reason `cliff` before the robot falls (ground truth), the wheels back to `ros`."""
    truth = c.subscribe(c.name("sim/ground_truth"), ODOM)
    start = x_of(truth.wait(timeout=30, what="the first ground truth"))
    check(abs(start - 0.3) < 0.01, f"starts at x = {start} (table.yaml: 0.3)")
    _enable_cliff_stop(c)
    owner = _owner(c)
    status, result, feedback = _run(c, owner, "drive_distance", DRIVE,
                                    {"distance": 2.0, "max_translation_speed": 0.1}, "drive_distance", timeout=30)
    check_eq(status, "aborted", f"the drive off the table's status ({result})")
    check_eq(result["reason"], "cliff", f"the abort's reason ({result})")
    check(not result["success"], f"result: {result}")
    c.expect_log("warn", "drive_distance (node 1): aborted: the cliff reflex stopped the robot")
    time.sleep(0.5)
    x = x_of(truth.latest())
    check(1.0 < x < 1.19, f"stopped at x = {x}: the edge is at 1.2 (fallen past it, or stopped far before)")
    check(feedback and feedback[-1]["remaining_travel_distance"] > 0.8, f"feedback: {feedback[-1:]}")


def goal_ranges(c, env):
    """Poses and goals in range (issue 42): set_odometry refuses x, y beyond +-10 km and a yaw beyond +-1000 rad
    (the red team's 1e17, after which a 5 cm drive never ended), naming the range, and changes nothing; a yaw is
    normalised to (-pi, pi]; at a far but allowed origin a 5 cm drive_distance ends as asked; speed limits that are
    not finite or negative, and targets out of range, are rejected with the reason."""
    odom = c.subscribe(c.name("odom"), ODOM)
    odom.wait(timeout=30, what="the first odometry")
    service, kind = c.private("set_odometry"), "thymio_rt_msgs/SetOdometry"
    for field, value, unit in [("x", 1e17, "10000 m"), ("y", -1e308, "10000 m"), ("yaw", 1e17, "1000 rad"),
                               ("x", 10000.5, "10000 m")]:
        r = c.call(service, kind, {field: value})
        check(r.ok and not r.response["success"], f"set_odometry {field} = {value} accepted: {r}")
        message = r.response["message"]
        check(f"|{field}| must be at most {unit}" in message and message.endswith("odometry unchanged"),
              f"set_odometry {field} = {value}: {message!r}")
    odom.forget()
    check(abs(x_of(odom.wait(timeout=5, what="odometry after the refusals"))) < 1.0, "a refused reset moved the pose")
    # a far but allowed origin, its yaw normalised
    r = c.call(service, kind, {"x": 9000.0, "y": -9000.0, "yaw": 7.0})
    check(r.ok and r.response["success"], f"set_odometry at x = 9000 refused: {r}")
    odom.forget()
    at = odom.wait(lambda m: abs(x_of(m) - 9000.0) < 1e-3, 5, "odometry at x = 9000 after set_odometry")
    check(abs(_yaw(at) - (7.0 - 2.0 * math.pi)) < 1e-3, f"yaw {_yaw(at)} for 7 rad: not normalised to (-pi, pi]")
    h = c.send_goal(c.name("drive_distance"), DRIVE, {"distance": 0.05, "max_translation_speed": 0.05}, timeout=30)
    check(h.accepted, "a 5 cm drive rejected at x = 9000")
    status, result = h.result(timeout=15)
    check_eq(status, "succeeded", f"the 5 cm drive at x = 9000 ({result})")
    end = odom.latest()
    went = math.hypot(x_of(end) - 9000.0, end["pose"]["pose"]["position"]["y"] + 9000.0)
    check(abs(went - 0.05) < 0.01, f"drove {went} m for 5 cm at x = 9000")
    # goals out of range, rejected with the reason (ROS 2: on /rosout; ROS 1: the status text too)
    for action, type_name, goal, why in [
        ("drive_distance", DRIVE, {"distance": 0.05, "max_translation_speed": float("nan")},
         "the goal must be finite: max_translation_speed = NaN"),
        ("drive_distance", DRIVE, {"distance": 0.05, "max_translation_speed": float("inf")},
         "the goal must be finite: max_translation_speed = inf"),
        ("drive_distance", DRIVE, {"distance": 0.05, "max_translation_speed": -0.1},
         "max_translation_speed = -0.1 m/s: a speed limit must be 0 (the controller's parameter) or from 0.01"),
        ("rotate_angle", ROTATE, {"angle": 1.0, "max_rotation_speed": -1.0},
         "max_rotation_speed = -1 rad/s: a speed limit must be 0"),
        ("drive_distance", DRIVE, {"distance": 1e17}, "distance = 100000000000000000 m is out of range"),
        ("navigate_to_position", NAVIGATE, {"goal_pose": {"x": 1e17, "y": 0.0, "theta": 0.0}},
         "x = 100000000000000000 m is out of range: |x| must be at most 10000 m"),
    ]:
        h = c.send_goal(c.name(action), type_name, goal, timeout=30)
        check(not h.accepted, f"{action} {goal} accepted")
        c.expect_log("warn", f"{action} (node 1): goal rejected: {why}")


def goal_inactive(c, env):
    """A goal for a managed node that is not active is rejected at once with that reason (it was accepted, then
    aborted ~1 s later as a stall); active, a goal runs; deactivated during it, it is aborted as `inactive`."""
    from scenarios_lifecycle import _change

    odom = c.subscribe(c.name("odom"), ODOM)
    odom.wait(timeout=30, what="the first odometry")
    events = c.subscribe(c.private("transition_event"), "lifecycle_msgs/TransitionEvent")
    t0 = time.monotonic()
    h = c.send_goal(c.name("drive_distance"), DRIVE, {"distance": 0.05}, timeout=30)
    check(not h.accepted, "a goal accepted while the node is unconfigured")
    c.expect_log("warn", "drive_distance (node 1): goal rejected: the robot's wheels are held: its managed node "
                 "is not active")
    check(time.monotonic() - t0 < 30, "the rejection came late")
    _change(c, events, label="configure")
    h = c.send_goal(c.name("drive_distance"), DRIVE, {"distance": 0.05}, timeout=30)
    check(not h.accepted, "a goal accepted while the node is inactive")
    _change(c, events, label="activate")
    h = c.send_goal(c.name("drive_distance"), DRIVE, {"distance": 0.05, "max_translation_speed": 0.05}, timeout=30)
    check(h.accepted, "a goal rejected while the node is active")
    status, result = h.result(timeout=15)
    check_eq(status, "succeeded", f"the goal of the active node ({result})")
    x0 = x_of(odom.latest())
    h = c.send_goal(c.name("drive_distance"), DRIVE, {"distance": 1.0, "max_translation_speed": 0.1}, timeout=30)
    check(h.accepted, "a 1 m drive rejected")
    odom.wait(lambda m: x_of(m) > x0 + 0.03, 10, "the 1 m drive under way")
    _change(c, events, label="deactivate")
    status, result = h.result(timeout=10)
    check_eq((status, result["reason"]), ("aborted", "inactive"), f"the goal deactivated during it ({result})")


def _kill_after(proc, seconds):
    """SIGKILLs `proc` after `seconds` whatever happens (a scenario that fails leaves no client behind)."""
    t = threading.Timer(seconds, lambda: proc.poll() is None and proc.kill())
    t.daemon = True
    t.start()


def _turn_rate(odom):
    return odom["twist"]["twist"]["angular"]["z"]


def goal_client_gone(c, env):
    """A goal whose client process is killed (SIGKILL: no cancel, no goodbye) is aborted as `client_gone` once
    nobody listened to the action's status or feedback for CLIENT_GONE_TIMEOUT (2 s); the robot stops and `ros`
    gets the wheels back (it drove on, 16 s and more, before). The goal, 60 rad at 1 rad/s, would take a minute. On
    ROS 1 the killed client's connections close at once; on ROS 2 it leaves the DDS graph when its participant's
    lease runs out (Fast DDS's default: 20 s). This process never makes a client of the action."""
    owner = c.subscribe(c.name("controller_owner"), "std_msgs/String", latched=True)
    owner.wait(lambda m: m["data"] == "ros", 30, "the owner at start")
    odom = c.subscribe(c.name("odom"), ODOM)
    odom.wait(timeout=30, what="the first odometry")
    here = os.path.dirname(os.path.abspath(__file__))
    goal = json.dumps({"angle": 60.0, "max_rotation_speed": 1.0})
    child = subprocess.Popen([sys.executable, os.path.join(here, "goal_client.py"), c.transport, c.ns,
                              "rotate_angle", ROTATE, goal], stdout=subprocess.PIPE, text=True)
    _kill_after(child, 90)
    try:
        line = child.stdout.readline().strip()
        check_eq(line, "accepted", "the killed client's goal")
        owner.wait(lambda m: m["data"] == "rotate_angle", 10, "rotate_angle owning the wheels")
        odom.wait(lambda m: abs(_turn_rate(m)) > 0.5, 10, "the 60 rad turn under way")
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(10)
    killed = time.monotonic()
    bound = 2.0 + 3.0 if c.transport == "ros1" else 2.0 + 20.0 + 5.0
    owner.wait(lambda m: m["data"] == "ros", bound, f"the wheels back to ros within {bound} s of the kill")
    took = time.monotonic() - killed
    c.expect_log("warn", "rotate_angle (node 1): aborted: nobody listened to the action's status or feedback")
    odom.forget()
    odom.wait(lambda m: abs(_turn_rate(m)) < 1e-3, 5, "the robot stopped")
    print(f"goal_client_gone: the wheels back {took:.1f} s after the kill", file=sys.stderr)


def emergency_stop(c, env):
    """The emergency stop (std_srvs/SetBool `emergency_stop`): true holds every wheel in the RT loop whatever the
    owner — a running drive_distance is aborted with reason `emergency_stop`, cmd_vel moves nothing, a new goal is
    rejected — and the latched `emergency_stop` topic and /diagnostics say so; false releases: cmd_vel drives again.
    Texts are the layer's (nrt_interface::actuators::emergency_stop_text, goal_actions.rs)."""
    from scenarios_control import BOOL, DIAGNOSTICS, diagnostics_value
    from scenarios_io import speed_of

    owner = _owner(c)
    odom = c.subscribe(c.name("odom"), ODOM)
    odom.wait(timeout=30, what="the first odometry")
    diagnostics = c.subscribe("/diagnostics", DIAGNOSTICS)
    flag = c.subscribe(c.name("emergency_stop"), BOOL, latched=True)
    check_eq(flag.wait(timeout=30, what="the latched emergency_stop")["data"], False, "emergency_stop at start")
    diagnostics.wait(lambda m: diagnostics_value(m, "Emergency stop") == "released", 10,
                     "/diagnostics: Emergency stop released")
    # a goal under way: aborted
    x0 = x_of(odom.latest())
    h = c.send_goal(c.name("drive_distance"), DRIVE, {"distance": 1.0, "max_translation_speed": 0.1}, timeout=30)
    check(h.accepted, "a 1 m drive rejected")
    odom.wait(lambda m: x_of(m) > x0 + 0.03, 10, "the 1 m drive under way")
    r = c.call(c.name("emergency_stop"), "std_srvs/SetBool", {"data": True}, timeout=20)
    check(r.ok, f"emergency_stop true: {r}")
    check(r.response["success"], f"emergency_stop true refused: {r.response}")
    check_eq(r.response["message"], "emergency stop: every wheel held until emergency_stop is called with false",
             "emergency_stop true's answer")
    flag.wait(lambda m: m["data"], 10, "emergency_stop true")
    status, result = h.result(timeout=10)
    check_eq((status, result["reason"]), ("aborted", "emergency_stop"), f"the goal under way ({result})")
    owner.wait(lambda m: m["data"] == "ros", 10, "the wheels back to ros after the abort")
    odom.forget()
    odom.wait(lambda m: abs(speed_of(m)) < 1e-3, 5, "the robot stopped")
    # cmd_vel insists: nothing moves
    held = x_of(odom.latest())
    end = time.monotonic() + 1.5
    while time.monotonic() < end:
        c.publish(c.name("cmd_vel"), TWIST, {"linear": {"x": 0.1}})
        time.sleep(0.05)
    later = odom.latest()
    check(abs(x_of(later) - held) < 0.003 and abs(speed_of(later)) < 1e-3,
          f"moved under the emergency stop: {held} -> {x_of(later)}, speed {speed_of(later)}")
    diagnostics.wait(lambda m: diagnostics_value(m, "Emergency stop") == "holding", 10,
                     "/diagnostics: Emergency stop holding")
    h = c.send_goal(c.name("drive_distance"), DRIVE, {"distance": 0.05}, timeout=30)
    check(not h.accepted, "a goal accepted under the emergency stop")
    c.expect_log("warn", "drive_distance (node 1): goal rejected: the robot's wheels are held by its emergency stop")
    # released: cmd_vel drives again
    r = c.call(c.name("emergency_stop"), "std_srvs/SetBool", {"data": False}, timeout=20)
    check(r.ok and r.response["success"], f"emergency_stop false: {r}")
    check_eq(r.response["message"], "emergency stop released", "emergency_stop false's answer")
    flag.wait(lambda m: not m["data"], 10, "emergency_stop false")
    c.stream(c.name("cmd_vel"), TWIST, {"linear": {"x": 0.1}},
             lambda: odom.poll(lambda m: x_of(m) > held + 0.02), 10, "cmd_vel driving after the release")


GROUPS = {"goals": goals, "goal_cliff": goal_cliff, "goal_ranges": goal_ranges, "goal_inactive": goal_inactive,
          "goal_client_gone": goal_client_gone, "emergency_stop": emergency_stop}
