"""rclpy client of the calibrate_motors action for tests/ros2/calibration.rs; reports on stdout, one JSON object a
line. Run with the project's ROS venv python:

  python tests/ros/calibration_client.py NS [--timeout 170] [--phases all|switched]

(`--phases switched`: only step 6, as the multi-host test runs it from another host.)

On the simulated robot of namespace /NS (on a calibration arena, its true pose on /NS/sim/ground_truth), in order:
  1. bad goals: {"event": "bad_goal", "goal": {...}, "accepted": bool} each;
  2. heading drift of a straight cmd_vel (0.08 m/s for 3 s) from the ground truth, then the same backward so that the
     robot is back over the line: {"event": "drift", "phase": "before", "dtheta": rad, "distance": m};
  3. a short calibration: {"event": "feedback", ...} each, then {"event": "result", "status": N, "accepted": bool,
     "result": {...}};
  4. the drift again: {"event": "drift", "phase": "after", ...};
  5. a goal cancelled while the robot pivots: {"event": "cancel", "status": N, "moving": rad/s, "stop_s": s,
     "owner_after": name, "after_cancel_distance": m} (the distance a cmd_vel drives after the cancel: the wheels
     are ROS's again);
  6. switch_controller: to calibrate_motors (refused), then to ros during a run: {"event": "switched",
     "refused_success", "refused_message", "owner_during", "switch_success", "status", "message", "owner_after"};
then {"event": "done"}. Any failure reports {"event": "error", "message": ...} and exits with status 1; the whole
run is bounded by --timeout ({"event": "timeout"}, exit status 2).
"""

import argparse
import json
import math
import sys
import threading
import time

import rclpy
from rclpy.action import ActionClient
from rclpy.qos import QoSProfile, ReliabilityPolicy

from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from rclpy.qos import DurabilityPolicy
from std_msgs.msg import String
from thymio_rt_msgs.action import CalibrateMotors
from thymio_rt_msgs.srv import SwitchController

SPEED = 0.08
DRIVE_S = 3.0


def report(**kw):
    print(json.dumps(kw) + "\n", end="", flush=True)  # one write: lines from callback threads never interleave


class Client:
    def __init__(self, node, ns, deadline):
        self.node = node
        self.ns = ns
        self.deadline = deadline
        self.truth = None
        self.truth_count = 0
        qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        node.create_subscription(Odometry, f"/{ns}/sim/ground_truth", self.on_truth, qos)
        self.cmd = node.create_publisher(Twist, f"/{ns}/cmd_vel", qos)
        self.action = ActionClient(node, CalibrateMotors, f"/{ns}/calibrate_motors")
        self.feedback = []
        self.owner = None
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        node.create_subscription(String, f"/{ns}/controller_owner", self.on_owner, latched)
        self.switch = node.create_client(SwitchController, f"/{ns}/switch_controller")

    def on_owner(self, msg):
        self.owner = msg.data

    def switch_to(self, owner):
        self.wait("the switch service", lambda: self.switch.service_is_ready(), 20)
        fut = self.switch.call_async(SwitchController.Request(owner=owner))
        self.wait("the switch answer", fut.done, 10)
        return fut.result()

    def on_truth(self, msg):
        self.truth = msg
        self.truth_count += 1

    def spin(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.check()
            rclpy.spin_once(self.node, timeout_sec=min(0.02, max(0.0, end - time.monotonic())))

    def check(self):
        if time.monotonic() > self.deadline:
            report(event="timeout")
            sys.exit(2)

    def wait(self, what, pred, seconds):
        end = time.monotonic() + seconds
        while not pred():
            if time.monotonic() > end:
                raise RuntimeError(f"timed out waiting for {what}")
            self.spin(0.02)

    def fresh_truth(self):
        n = self.truth_count
        self.wait("ground truth", lambda: self.truth_count > n + 1, 10)
        return self.truth

    @staticmethod
    def pose(m):
        p = m.pose.pose
        return p.position.x, p.position.y, 2.0 * math.atan2(p.orientation.z, p.orientation.w)

    def drive(self, linear, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            t = Twist()
            t.linear.x = linear
            self.cmd.publish(t)
            self.spin(0.1)
        self.cmd.publish(Twist())
        # stopped (the true speed is zero)
        self.wait("the robot to stop", lambda: self.truth is not None and abs(self.truth.twist.twist.linear.x) < 1e-3
                  and abs(self.truth.twist.twist.angular.z) < 1e-3, 5)

    def drift(self, phase, back):
        self.wait("a cmd_vel subscriber", lambda: self.cmd.get_subscription_count() > 0, 20)
        x0, y0, t0 = self.pose(self.fresh_truth())
        self.drive(SPEED, DRIVE_S)
        x1, y1, t1 = self.pose(self.fresh_truth())
        d = math.atan2(math.sin(t1 - t0), math.cos(t1 - t0))
        report(event="drift", phase=phase, dtheta=d, distance=math.hypot(x1 - x0, y1 - y0))
        if back:
            # both wheels reversed retrace the same arc: back over the calibration line
            self.drive(-SPEED, DRIVE_S)

    def send(self, goal, feedback=True):
        fut = self.action.send_goal_async(goal, feedback_callback=self.on_feedback if feedback else None)
        self.wait("the goal response", fut.done, 20)
        return fut.result()

    def on_feedback(self, msg):
        f = msg.feedback
        report(event="feedback", phase=f.phase, motor=f.motor, motor_speed=f.motor_speed,
               measured_speed=f.measured_speed, samples=f.samples, progress=f.progress)
        self.feedback.append(f)

    def bad_goals(self):
        for fields in ({"motor_speeds": [0, 100]}, {"motor_speeds": [100, 600]}, {"motors": ["middle"]},
                       {"timeout": 1e300}, {"timeout": 1e-300}):
            g = CalibrateMotors.Goal()
            for k, v in fields.items():
                setattr(g, k, v)
            h = self.send(g, feedback=False)
            report(event="bad_goal", goal=fields, accepted=bool(h.accepted))

    def calibrate(self):
        g = CalibrateMotors.Goal()
        g.motor_speeds = [250, 450]
        g.samples = 2
        h = self.send(g)
        if not h.accepted:
            report(event="result", accepted=False, status=-1, result={})
            return
        res = h.get_result_async()
        self.wait("the calibration result", res.done, 150)
        r = res.result().result
        report(event="result", accepted=True, status=res.result().status, result={
            "success": r.success, "message": r.message, "left_q0": r.left_q0, "left_q1": r.left_q1,
            "right_q0": r.right_q0, "right_q1": r.right_q1, "left_deadband": r.left_deadband,
            "right_deadband": r.right_deadband, "calibration_file": r.calibration_file})

    def switched_away(self):
        """A switch_controller to ros during a run aborts the goal; calibrate_motors itself is refused."""
        refused = self.switch_to("calibrate_motors")
        self.feedback = []
        g = CalibrateMotors.Goal()
        g.motor_speeds = [300, 450]
        g.samples = 2
        h = self.send(g)
        if not h.accepted:
            raise RuntimeError("the goal to switch away from was not accepted")
        self.wait("the sweep", lambda: any(f.phase == "sweep" for f in self.feedback), 30)
        self.wait("owner calibrate_motors", lambda: self.owner == "calibrate_motors", 5)
        during = self.owner
        answer = self.switch_to("ros")
        res = h.get_result_async()
        self.wait("the aborted result", res.done, 10)
        self.wait("the robot to stop", lambda: abs(self.truth.twist.twist.angular.z) < 0.02, 5)
        report(event="switched", refused_success=refused.success, refused_message=refused.message,
               owner_during=during, switch_success=answer.success, status=res.result().status,
               message=res.result().result.message, owner_after=self.owner)

    def cancel(self):
        self.feedback = []
        g = CalibrateMotors.Goal()
        g.motor_speeds = [300, 450]
        g.samples = 2
        h = self.send(g)
        if not h.accepted:
            raise RuntimeError("the goal to cancel was not accepted")
        self.wait("the sweep", lambda: any(f.phase == "sweep" for f in self.feedback), 30)
        self.spin(1.0)
        moving = self.fresh_truth().twist.twist.angular.z
        t0 = time.time()
        cf = h.cancel_goal_async()
        self.wait("the robot to stop", lambda: abs(self.truth.twist.twist.angular.z) < 0.02
                  and abs(self.truth.twist.twist.linear.x) < 2e-3, 5)
        # the first stopped sample's stamp (the driver's system clock) against the system clock at the cancel
        stamp = self.truth.header.stamp
        stop_s = stamp.sec + stamp.nanosec * 1e-9 - t0
        self.wait("the cancel response", cf.done, 10)
        res = h.get_result_async()
        self.wait("the cancelled result", res.done, 10)
        x0, y0, _ = self.pose(self.fresh_truth())
        self.drive(0.05, 1.0)
        x1, y1, _ = self.pose(self.fresh_truth())
        self.wait("owner ros", lambda: self.owner == "ros", 5)
        report(event="cancel", status=res.result().status, moving=moving, stop_s=stop_s, owner_after=self.owner,
               cancel_accepted=len(cf.result().goals_canceling) > 0, after_cancel_distance=math.hypot(x1 - x0, y1 - y0))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ns")
    ap.add_argument("--timeout", type=float, default=170.0)
    ap.add_argument("--phases", choices=["all", "switched"], default="all")
    args = ap.parse_args()
    deadline = time.monotonic() + args.timeout
    rclpy.init()
    node = rclpy.create_node(f"calibration_client_{args.ns}")
    c = Client(node, args.ns, deadline)
    try:
        if not c.action.wait_for_server(timeout_sec=60):
            raise RuntimeError("no calibrate_motors action server")
        report(event="server")
        if args.phases == "all":
            c.bad_goals()
            c.drift("before", back=True)
            c.calibrate()
            c.drift("after", back=True)
            c.cancel()
        c.switched_away()
        report(event="done")
    except Exception as e:  # reported to the test, which fails with it
        report(event="error", message=repr(e))
        sys.exit(1)
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == "__main__":
    main()
