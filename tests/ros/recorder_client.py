"""rclpy client of a recorded closed-loop run, for tests/recorder/recorder.rs; reports on stdout, one JSON object a
line. Run with the project's ROS venv python:

  python tests/ros/recorder_client.py NS [--timeout 60] [--link-loss]

On the robot of namespace /NS, in order:
  1. waits for odometry, then drives with cmd_vel (0.05 m/s, 0.2 rad/s) until it moved 2 cm, then sends zero until
     the odometry's twist is zero: {"event": "drove", "distance": m};
  2. switch_controller to go_to_pose (RT controller), a goal 3 cm ahead through its set_goal service, waits for
     `reached`, then switch_controller back to ros: {"event": "switched", "to": owner, "success", "message"} each,
     {"event": "reached"};
  3. with --link-loss: {"event": "link_loss"}, then waits for a line on stdin (the test killed and restarted the
     simulator), then drives again until the odometry moved 1 cm and stops: {"event": "drove_again", ...};
then {"event": "done"}. Every odometry message received is reported as {"event": "odom", "sec", "nanosec",
"frame", "child", "pose": [x, y, z, qx, qy, qz, qw], "twist": [vx, vy, vz, wx, wy, wz]} with every float also as
its IEEE-754 bits ("pose_bits", "twist_bits": unsigned 64-bit integers) so that the test compares exact values.
Any failure reports {"event": "error", "message": ...} and exits with status 1; the run is bounded by --timeout
({"event": "timeout"}, exit status 2).
"""

import argparse
import json
import math
import select
import struct
import sys
import time

import rclpy
from rclpy.qos import QoSProfile, ReliabilityPolicy

from geometry_msgs.msg import Pose2D, Twist
from nav_msgs.msg import Odometry
from std_msgs.msg import Bool
from thymio_rt_msgs.srv import SetPose2D, SwitchController


def report(**kw):
    print(json.dumps(kw) + "\n", end="", flush=True)  # one write: lines from callback threads never interleave


def bits(values):
    return [struct.unpack("<Q", struct.pack("<d", v))[0] for v in values]


class Client:
    def __init__(self, node, ns, deadline):
        self.node = node
        self.ns = ns
        self.deadline = deadline
        self.odom = None
        self.reached = None
        qos = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
        node.create_subscription(Odometry, f"/{ns}/odom", self.on_odom, qos)
        base = f"/{ns}/thymio_driver/controllers/go_to_pose/"
        node.create_subscription(Bool, base + "reached", self.on_reached, QoSProfile(depth=10))
        self.cmd = node.create_publisher(Twist, f"/{ns}/cmd_vel", QoSProfile(depth=10))
        self.switch = node.create_client(SwitchController, f"/{ns}/switch_controller")
        self.set_goal = node.create_client(SetPose2D, base + "set_goal")

    def on_odom(self, m):
        self.odom = m
        p, q = m.pose.pose.position, m.pose.pose.orientation
        lin, ang = m.twist.twist.linear, m.twist.twist.angular
        pose = [p.x, p.y, p.z, q.x, q.y, q.z, q.w]
        twist = [lin.x, lin.y, lin.z, ang.x, ang.y, ang.z]
        report(event="odom", sec=m.header.stamp.sec, nanosec=m.header.stamp.nanosec, frame=m.header.frame_id,
               child=m.child_frame_id, pose=pose, twist=twist, pose_bits=bits(pose), twist_bits=bits(twist))

    def on_reached(self, m):
        self.reached = m.data

    def spin(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if time.monotonic() > self.deadline:
                report(event="timeout")
                sys.exit(2)
            rclpy.spin_once(self.node, timeout_sec=min(0.02, max(0.0, end - time.monotonic())))

    def wait(self, what, pred, seconds):
        end = time.monotonic() + seconds
        while not pred():
            if time.monotonic() > end:
                raise RuntimeError(f"timed out waiting for {what}")
            self.spin(0.02)

    def position(self):
        p = self.odom.pose.pose.position
        return p.x, p.y

    def drive(self, distance, seconds):
        """cmd_vel until the odometry moved `distance`, then zero until its twist is zero; returns the distance."""
        self.wait("a cmd_vel subscriber", lambda: self.cmd.get_subscription_count() > 0, 10)
        self.wait("odometry", lambda: self.odom is not None, 20)
        x0, y0 = self.position()
        moved = lambda: math.hypot(self.position()[0] - x0, self.position()[1] - y0)
        go = Twist()
        go.linear.x, go.angular.z = 0.05, 0.2
        end = time.monotonic() + seconds
        while moved() < distance:
            if time.monotonic() > end:
                raise RuntimeError(f"the robot did not move {distance} m with cmd_vel (moved {moved()})")
            self.cmd.publish(go)
            self.spin(0.1)
        still = lambda: abs(self.odom.twist.twist.linear.x) < 1e-3 and abs(self.odom.twist.twist.angular.z) < 1e-3
        end = time.monotonic() + 10
        while not still():
            if time.monotonic() > end:
                raise RuntimeError("the robot did not stop on a zero cmd_vel")
            self.cmd.publish(Twist())
            self.spin(0.1)
        return moved()

    def switch_to(self, owner):
        self.wait("the switch service", self.switch.service_is_ready, 20)
        fut = self.switch.call_async(SwitchController.Request(owner=owner))
        self.wait("the switch answer", fut.done, 10)
        r = fut.result()
        report(event="switched", to=owner, success=r.success, message=r.message)
        if not r.success:
            raise RuntimeError(f"switch_controller to {owner} refused: {r.message}")

    def go_to_pose(self):
        self.switch_to("go_to_pose")
        x, y = self.position()
        self.reached = None
        self.wait("the set_goal service", self.set_goal.service_is_ready, 20)
        fut = self.set_goal.call_async(SetPose2D.Request(pose=Pose2D(x=x + 0.03, y=y, theta=0.0)))
        self.wait("the set_goal answer", fut.done, 10)
        if not fut.result().success:
            raise RuntimeError(f"set_goal refused: {fut.result()}")
        # `reached` goes false when the new goal is taken, true when it is reached
        self.wait("go_to_pose leaving its goal", lambda: self.reached is False, 10)
        self.wait("go_to_pose reaching its goal", lambda: self.reached is True, 30)
        report(event="reached", x=self.position()[0], y=self.position()[1])
        self.switch_to("ros")

    def wait_stdin_line(self):
        while True:
            self.spin(0.05)
            ready, _, _ = select.select([sys.stdin], [], [], 0)
            if ready:
                sys.stdin.readline()
                return


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ns")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--link-loss", action="store_true")
    args = ap.parse_args()
    deadline = time.monotonic() + args.timeout
    rclpy.init()
    node = rclpy.create_node(f"recorder_client_{args.ns}")
    c = Client(node, args.ns, deadline)
    try:
        report(event="drove", distance=c.drive(0.02, 20))
        c.go_to_pose()
        if args.link_loss:
            report(event="link_loss")
            c.wait_stdin_line()
            report(event="drove_again", distance=c.drive(0.01, 20))
        report(event="done")
    except Exception as e:  # reported to the test, which fails with it
        report(event="error", message=repr(e))
        sys.exit(1)
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == "__main__":
    main()
