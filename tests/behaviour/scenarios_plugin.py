"""Behaviour scenario of an RT controller from outside the repository (docs/control.md "Writing an RT controller"): the
template crate examples/my_controller, built as a user builds it, runs the driver with its own `follow_heading`
registered and its configuration's `control.controllers` (go_to_pose and follow_heading loaded, the start values
gain 3.0 and speed 0.08). Run by tests/packaging/plugin_crate.rs against that crate's binary, not thymio-rt's.
"""

from client import check, check_eq
from scenarios_control import expect_switch, switch_to
from scenarios_io import ODOM, x_of

LOADED = "ros, joint, go_to_pose, follow_heading"


def plugin(c, env):
    """A controller not loaded is refused with the loaded ones; the user's controller takes the wheels, drives the
    robot (odometry) at the configured speed and publishes its topics (one of a non-shipped message type); its
    start values are its parameters'."""
    odom = c.subscribe(c.name("odom"), ODOM)
    start = odom.wait(timeout=30, what="the first odometry")
    for absent in ("line_follower", "calibrate_motors"):
        ok, why = switch_to(c, absent)
        check(not ok, f"{absent} (not loaded) accepted: {why}")
        check(why.startswith(f'unknown owner "{absent}": the owners are ') and why.endswith(LOADED),
              f"the refusal of {absent}: {why!r}")
    node = c.private()
    check_eq(c.get_parameter(node, "controllers.follow_heading.speed", timeout=30), 0.08,
             "follow_heading's speed from control.controllers")
    check_eq(c.get_parameter(node, "controllers.follow_heading.gain"), 3.0,
             "follow_heading's gain from control.controllers")
    error = c.subscribe(c.private("controllers/follow_heading/heading_error"), "std_msgs/Float64")
    # a message type of the controller's own choosing, published from the RT loop
    aim = c.subscribe(c.private("controllers/follow_heading/aim"), "geometry_msgs/PointStamped")
    expect_switch(c, "follow_heading")
    first = error.wait(timeout=10, what="follow_heading's heading_error")
    check(abs(first["data"]) < 3.2, f"a heading error in [-pi, pi]: {first}")
    moved = odom.wait(lambda m: x_of(m) - x_of(start) > 0.04, 15, "follow_heading driving the robot 4 cm ahead")
    # heading 0: the aim is 0.2 m ahead of the robot on the odometry x axis (its publication and the odometry
    # sample are up to a publishing period apart: 4 mm at 0.08 m/s)
    aim.forget()
    point = aim.wait(timeout=5, what="follow_heading's aim (geometry_msgs/PointStamped)")
    check_eq(point["header"]["frame_id"], "odom", "aim's frame")
    ahead = point["point"]["x"] - x_of(odom.latest())
    check(0.17 < ahead < 0.23 and abs(point["point"]["y"]) < 0.02, f"aim 0.2 m ahead on x: {point}, {ahead} ahead")
    check(point["header"]["stamp"]["sec"] > 0, f"aim stamped: {point['header']}")
    # the configured 0.08 m/s, not the default 0.05 (the simulated wheels' gains spread it a little)
    check(0.065 < moved["twist"]["twist"]["linear"]["x"] < 0.11,
          f"driving at about the configured 0.08 m/s: {moved['twist']['twist']}")
    # a service of a type of the controller's choosing (std_srvs/SetBool), answered from the RT cycle: paused, the
    # robot stops; resumed, it drives again
    pause = c.private("controllers/follow_heading/pause")
    r = c.call(pause, "std_srvs/SetBool", {"data": True}, timeout=10)
    check(r.ok and r.response["success"] and r.response["message"] == "paused", f"pause: {r}")
    odom.wait(lambda m: abs(m["twist"]["twist"]["linear"]["x"]) < 0.005, 10, "the paused robot at rest")
    r = c.call(pause, "std_srvs/SetBool", {"data": False}, timeout=10)
    check(r.ok and r.response["message"] == "running", f"resume: {r}")
    odom.wait(lambda m: m["twist"]["twist"]["linear"]["x"] > 0.05, 10, "the resumed robot driving again")
    expect_switch(c, "ros")


GROUPS = {"plugin": plugin}
