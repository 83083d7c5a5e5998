#!/usr/bin/python3
"""actionlib client (Debian's python3-actionlib SimpleActionClient, run with /usr/bin/python3) of the ROS 1
calibrate_motors action, for tests/ros1/calibration.rs; reports on stdout, one JSON object a line:

  calibration_client.py NS [--timeout 170]

The thymio_rt_msgs action classes are generated with genpy (Debian's python3-genpy) from the one definition in
msgs/ros/thymio_rt_msgs (genaction's rules: <A>ActionGoal, <A>ActionResult, <A>ActionFeedback, <A>Action) into a
temporary directory. On the simulated robot of namespace /NS (over the calibration line of the arena), in order:
  1. bad goals: {"event": "bad_goal", "goal": {...}, "state": N, "text": status text} each;
  2. a short calibration: {"event": "feedback", ...} each, then {"event": "result", "state": N, "result": {...}};
  3. a goal cancelled during its sweep: {"event": "cancel", "state": N, "message": result message,
     "after_cancel_distance": m, "after_cancel_s": s} (the distance a 0.05 m/s cmd_vel drives in odom after the
     cancel, once controller_owner says ros, driven until 3 cm show or 10 s pass, and the time it took, the owner and
     the last odometry's speeds: the wheels are ROS's again);
  4. the driver's lines on /rosout: {"event": "rosout", "lines": [[level, name, msg], ...]} once a "goal rejected"
     line came;
then {"event": "done"}. A failure reports {"event": "error", "message": ...} and exits with status 1; the whole run
is bounded by --timeout ({"event": "timeout"}, exit status 2).
"""
import argparse
import importlib
import json
import math
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ACTION = os.path.join(ROOT, "msgs", "ros", "thymio_rt_msgs", "action", "CalibrateMotors.action")
MSG_DIR = os.path.join(ROOT, "nrt", "ros1_client", "msg")


def report(**kw):
    print(json.dumps(kw) + "\n", end="", flush=True)  # one write: lines from callback threads never interleave


def action_msgs():
    """Generates (genaction's rules, then genpy) and imports thymio_rt_msgs' CalibrateMotors action classes."""
    from genpy.generator import MsgGenerator
    from genpy import generate_initpy

    goal, result, feedback = open(ACTION).read().split("\n---\n")
    a = "CalibrateMotors"
    texts = {
        a + "Goal": goal,
        a + "Result": result,
        a + "Feedback": feedback,
        a + "ActionGoal": f"Header header\nactionlib_msgs/GoalID goal_id\n{a}Goal goal\n",
        a + "ActionResult": f"Header header\nactionlib_msgs/GoalStatus status\n{a}Result result\n",
        a + "ActionFeedback": f"Header header\nactionlib_msgs/GoalStatus status\n{a}Feedback feedback\n",
        a + "Action": f"{a}ActionGoal action_goal\n{a}ActionResult action_result\n{a}ActionFeedback action_feedback\n",
    }
    out = tempfile.mkdtemp(prefix="thymio_rt_msgs_action_py_")
    src = os.path.join(out, "src")
    os.makedirs(src)
    for name, text in texts.items():
        with open(os.path.join(src, name + ".msg"), "w") as f:
            f.write(text)
    pkg = os.path.join(out, "thymio_rt_msgs")
    dst = os.path.join(pkg, "msg")
    search = {"thymio_rt_msgs": [src],
              "actionlib_msgs": [os.path.join(MSG_DIR, "actionlib_msgs", "msg")],
              "std_msgs": [os.path.join(MSG_DIR, "std_msgs", "msg")]}
    files = sorted(os.path.join(src, f) for f in os.listdir(src))
    if MsgGenerator().generate_messages("thymio_rt_msgs", files, dst, search) != 0:
        raise RuntimeError("genpy failed on the CalibrateMotors action")
    generate_initpy.write_modules(dst)
    with open(os.path.join(pkg, "__init__.py"), "w"):
        pass
    sys.path.insert(0, out)
    return importlib.import_module("thymio_rt_msgs.msg")


class Client:
    def __init__(self, ns, deadline):
        import actionlib
        import rospy
        from geometry_msgs.msg import Twist
        from nav_msgs.msg import Odometry
        from rosgraph_msgs.msg import Log

        self.rospy = rospy
        self.tm = action_msgs()
        self.deadline = deadline
        self.lines = []
        self.odom = None
        rospy.Subscriber("/rosout", Log, self.on_log, queue_size=100)
        rospy.Subscriber(f"/{ns}/odom", Odometry, self.on_odom, queue_size=10)
        from std_msgs.msg import String
        self.owner = None
        rospy.Subscriber(f"/{ns}/controller_owner", String, self.on_owner, queue_size=10)
        self.cmd = rospy.Publisher(f"/{ns}/cmd_vel", Twist, queue_size=1)
        self.Twist = Twist
        self.action = actionlib.SimpleActionClient(f"/{ns}/calibrate_motors", self.tm.CalibrateMotorsAction)
        self.feedback = []

    def on_log(self, m):
        # the driver's lines (not this client's own)
        if m.name != self.rospy.get_name():
            self.lines.append([m.level, m.name, m.msg])

    def on_odom(self, m):
        self.odom = m

    def on_owner(self, m):
        self.owner = m.data

    def check(self):
        if time.monotonic() > self.deadline:
            report(event="timeout")
            os._exit(2)

    def wait(self, what, pred, seconds):
        end = time.monotonic() + seconds
        while not pred():
            self.check()
            if time.monotonic() > end:
                raise RuntimeError(f"timed out waiting for {what}")
            time.sleep(0.02)

    def on_feedback(self, f):
        report(event="feedback", phase=f.phase, motor=f.motor, motor_speed=f.motor_speed,
               measured_speed=f.measured_speed, samples=f.samples, progress=f.progress)
        self.feedback.append(f)

    def send(self, goal, feedback=True):
        self.action.send_goal(goal, feedback_cb=self.on_feedback if feedback else None)

    def finished(self, seconds):
        if not self.action.wait_for_result(self.rospy.Duration(seconds)):
            raise RuntimeError("no result in time")
        return self.action.get_state(), self.action.get_result()

    def bad_goals(self):
        for fields in ({"motor_speeds": [0, 100]}, {"motor_speeds": [100, 600]}, {"motors": ["middle"]},
                       {"timeout": 1e300}, {"timeout": 1e-300}):
            g = self.tm.CalibrateMotorsGoal()
            for k, v in fields.items():
                setattr(g, k, v)
            self.send(g, feedback=False)
            state, _ = self.finished(20)
            report(event="bad_goal", goal=fields, state=state, text=self.action.get_goal_status_text())

    def calibrate(self):
        g = self.tm.CalibrateMotorsGoal(motor_speeds=[250, 450], samples=2)
        self.send(g)
        state, r = self.finished(150)
        report(event="result", state=state, text=self.action.get_goal_status_text(), result={
            "success": r.success, "message": r.message, "left_q0": r.left_q0, "left_q1": r.left_q1,
            "right_q0": r.right_q0, "right_q1": r.right_q1, "left_deadband": r.left_deadband,
            "right_deadband": r.right_deadband, "calibration_file": r.calibration_file})

    def position(self):
        p = self.odom.pose.pose.position
        return p.x, p.y

    def cancel(self):
        self.feedback = []
        self.send(self.tm.CalibrateMotorsGoal(motor_speeds=[300, 450], samples=2))
        self.wait("the sweep", lambda: any(f.phase == "sweep" for f in self.feedback), 30)
        self.action.cancel_goal()
        state, r = self.finished(10)
        # the wheels are cmd_vel's again: a forward command moves the robot (odometry); the driver subscribes to
        # cmd_vel from its start, but a loaded machine may connect it late
        self.wait("odometry", lambda: self.odom is not None, 10)
        self.wait("the driver's cmd_vel connection", lambda: self.cmd.get_num_connections() > 0, 20)
        try:
            self.wait("the wheels back to ros", lambda: self.owner == "ros", 10)
        except RuntimeError as e:
            raise RuntimeError(f"{e}: controller_owner says {self.owner!r}") from e
        x0, y0 = self.position()
        # 0.05 m/s until odometry shows 3 cm (a loaded machine delays both the first command and the odometry that
        # shows it) or 10 s pass: a robot whose wheels were not given back stays where it is and the test sees it
        start = time.monotonic()
        end = start + 10.0
        moved = 0.0
        while time.monotonic() < end and moved < 0.03:
            t = self.Twist()
            t.linear.x = 0.05
            self.cmd.publish(t)
            time.sleep(0.05)
            x1, y1 = self.position()
            moved = math.hypot(x1 - x0, y1 - y0)
        self.cmd.publish(self.Twist())
        report(event="cancel", state=state, message=r.message, after_cancel_distance=moved,
               after_cancel_s=time.monotonic() - start, owner=self.owner,
               odom_speed=self.odom.twist.twist.linear.x, odom_turn=self.odom.twist.twist.angular.z)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ns")
    ap.add_argument("--timeout", type=float, default=170.0)
    args = ap.parse_args()
    deadline = time.monotonic() + args.timeout
    import rospy
    rospy.init_node("calibration_client", anonymous=True, disable_signals=True)
    try:
        c = Client(args.ns, deadline)
        if not c.action.wait_for_server(rospy.Duration(60)):
            raise RuntimeError("no calibrate_motors action server")
        report(event="server")
        c.bad_goals()
        c.calibrate()
        c.cancel()
        c.wait("a goal rejected line on /rosout", lambda: any("goal rejected" in l[2] for l in c.lines), 10)
        report(event="rosout", lines=c.lines)
        report(event="done")
    except Exception as e:  # reported to the test, which fails with it
        report(event="error", message=repr(e))
        sys.stdout.flush()
        os._exit(1)
    rospy.signal_shutdown("done")
    os._exit(0)


if __name__ == "__main__":
    main()
