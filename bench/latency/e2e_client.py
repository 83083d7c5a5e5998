"""The ROS 2 end of the latency benchmark (rclpy, another process than the driver), as a user's node: it publishes
`cmd_vel` at a fixed rate and receives `odom`, both at once, in one single-threaded executor.

  python e2e_client.py --out FILE --duration S [--rate HZ] [--timeout S]

Prints READY once the driver's `cmd_vel` subscription and `odom` publisher are matched, then runs for S seconds and
writes FILE: {"cmd_vel": [[t_ns, linear_x], ...], "odom": [[t_ns, x, y, yaw], ...]}, with t_ns =
time.monotonic_ns() (CLOCK_MONOTONIC, the relay's clock) just before each publish and at each odom callback.

The speed alternates in sign (±(0.03 + 0.01·(k mod 5)) m/s): every message changes the wheel targets, and the robot
rocks in place instead of driving into a wall. See bench/latency/matching.rs for how both are matched to the wire.
"""
import argparse
import json
import math
import sys
import time

import rclpy
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--duration", type=float, required=True)
    p.add_argument("--rate", type=float, default=20.0)
    p.add_argument("--timeout", type=float, default=60.0, help="longest wait for the driver's endpoints")
    a = p.parse_args()
    rclpy.init()
    node = rclpy.create_node("latency_client")
    odom_rows, cmd_rows = [], []

    def on_odom(msg: Odometry) -> None:
        t = time.monotonic_ns()
        q = msg.pose.pose.orientation
        odom_rows.append((t, msg.pose.pose.position.x, msg.pose.pose.position.y, 2 * math.atan2(q.z, q.w)))

    # best effort matches both reliable and best-effort publishers
    odom_qos = QoSProfile(depth=1000, reliability=ReliabilityPolicy.BEST_EFFORT, history=HistoryPolicy.KEEP_LAST)
    node.create_subscription(Odometry, "odom", on_odom, odom_qos)
    pub = node.create_publisher(Twist, "cmd_vel", QoSProfile(depth=10))
    deadline = time.monotonic() + a.timeout
    while (pub.get_subscription_count() == 0 or node.count_publishers("odom") == 0) and time.monotonic() < deadline:
        rclpy.spin_once(node, timeout_sec=0.05)
    if pub.get_subscription_count() == 0 or node.count_publishers("odom") == 0:
        print("the driver's cmd_vel subscription or odom publisher did not appear", flush=True)
        return 1
    print("READY", flush=True)
    k = 0

    def on_timer() -> None:
        nonlocal k
        msg = Twist()
        msg.linear.x = (1 if k % 2 == 0 else -1) * (0.03 + 0.01 * (k % 5))
        k += 1
        cmd_rows.append((time.monotonic_ns(), msg.linear.x))
        pub.publish(msg)

    timer = node.create_timer(1.0 / a.rate, on_timer)
    end = time.monotonic() + a.duration
    while time.monotonic() < end:
        rclpy.spin_once(node, timeout_sec=0.05)
    # let the last cmd_vel reach the wire before the stop, which a driver may coalesce it with
    timer.cancel()
    end = time.monotonic() + 0.2
    while time.monotonic() < end:
        rclpy.spin_once(node, timeout_sec=0.05)
    pub.publish(Twist())  # stop the robot
    with open(a.out, "w") as f:
        json.dump({"cmd_vel": cmd_rows, "odom": odom_rows}, f)
    print(f"DONE {len(cmd_rows)} cmd_vel, {len(odom_rows)} odom", flush=True)
    node.destroy_node()
    rclpy.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
