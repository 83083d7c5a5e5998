"""The ROS 2 end of the latency benchmark (rclpy, another process than the driver).

  python e2e_client.py odom    --topic odom --count N --out FILE [--timeout S]
  python e2e_client.py cmd_vel --topic cmd_vel --count N --rate HZ --q0 Q0 --out FILE

odom: records, for every nav_msgs/Odometry received, time.monotonic_ns() at the callback and
the pose's x. cmd_vel: waits for the driver's subscription, then publishes Twist messages whose
linear speed maps to a distinct wheel target (q0 · (20 + k mod 400)) and records
time.monotonic_ns() just before each publish. Prints READY when its ROS endpoint is matched.
"""
import argparse
import json
import sys
import time

import rclpy
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from rclpy.qos import QoSProfile, ReliabilityPolicy, HistoryPolicy


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["odom", "cmd_vel"])
    p.add_argument("--topic", required=True)
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--rate", type=float, default=100.0)
    p.add_argument("--q0", type=float, default=0.000332)
    p.add_argument("--timeout", type=float, default=300.0)
    a = p.parse_args()
    rclpy.init()
    node = rclpy.create_node("latency_probe")
    deadline = time.time() + a.timeout
    rows = []
    if a.mode == "odom":
        # best effort matches both reliable and best-effort publishers
        qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.BEST_EFFORT, history=HistoryPolicy.KEEP_LAST)

        def on_odom(msg: Odometry) -> None:
            rows.append((time.monotonic_ns(), msg.pose.pose.position.x))

        node.create_subscription(Odometry, a.topic, on_odom, qos)
        while node.count_publishers(a.topic) == 0 and time.time() < deadline:
            rclpy.spin_once(node, timeout_sec=0.05)
        print("READY", flush=True)
        while len(rows) < a.count and time.time() < deadline:
            rclpy.spin_once(node, timeout_sec=0.05)
    else:
        pub = node.create_publisher(Twist, a.topic, QoSProfile(depth=10))
        while pub.get_subscription_count() == 0 and time.time() < deadline:
            rclpy.spin_once(node, timeout_sec=0.05)
        print("READY", flush=True)
        period = 1.0 / a.rate
        nxt = time.monotonic()
        for k in range(a.count):
            nxt += period
            left = nxt - time.monotonic()
            if left > 0:
                time.sleep(left)
            msg = Twist()
            msg.linear.x = a.q0 * (20 + k % 400)
            rows.append((time.monotonic_ns(), 20 + k % 400))
            pub.publish(msg)
            if time.time() > deadline:
                break
        # stop the robot
        pub.publish(Twist())
        time.sleep(0.2)
    with open(a.out, "w") as f:
        json.dump(rows, f)
    node.destroy_node()
    rclpy.shutdown()
    return 0 if len(rows) >= a.count else 1


if __name__ == "__main__":
    sys.exit(main())
