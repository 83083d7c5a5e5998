"""Soak client: drives N robots with cmd_vel (circles, 5 Hz each) and counts their odom messages for a duration.

  python tests/ros/soak_client.py --ns /soak --robots 8 --prefix thymio_ --seconds 3600

Prints {"event": "ready"} once subscribed, then at the end one JSON line
{"event": "done", "odom": {topic: count}, "cmd_vel": published, "first_odom": {topic: seconds after start},
 "end": seconds after start}.
"""
import argparse
import json
import time

import rclpy
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--ns", required=True)
    p.add_argument("--robots", type=int, default=8)
    p.add_argument("--prefix", default="thymio_")
    p.add_argument("--seconds", type=float, default=60.0)
    a = p.parse_args()
    rclpy.init()
    node = rclpy.create_node("soak_client")
    qos = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1000, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.VOLATILE)
    start = time.monotonic()
    counts, first = {}, {}
    pubs = []
    for i in range(1, a.robots + 1):
        base = f"{a.ns}/{a.prefix}{i}"
        topic = f"{base}/odom"
        counts[topic] = 0

        def on_odom(_msg, topic=topic):
            counts[topic] += 1
            first.setdefault(topic, time.monotonic() - start)

        node.create_subscription(Odometry, topic, on_odom, qos)
        pubs.append(node.create_publisher(Twist, f"{base}/cmd_vel", 10))
    print(json.dumps({"event": "ready"}), flush=True)
    published = 0
    next_cmd = time.monotonic()
    end = start + a.seconds
    k = 0
    while time.monotonic() < end:
        now = time.monotonic()
        if now >= next_cmd:
            next_cmd += 0.2
            k += 1
            for j, pub in enumerate(pubs):
                t = Twist()
                # circles of alternating direction keep the robots in their area
                t.linear.x = 0.05
                t.angular.z = 0.5 if (k // 50 + j) % 2 == 0 else -0.5
                pub.publish(t)
                published += 1
        rclpy.spin_once(node, timeout_sec=max(0.0, min(0.05, next_cmd - time.monotonic())))
    # drain what is in flight
    drain_end = time.monotonic() + 1.0
    while time.monotonic() < drain_end:
        rclpy.spin_once(node, timeout_sec=0.05)
    print(json.dumps({"event": "done", "odom": counts, "cmd_vel": published, "first_odom": first,
                      "end": time.monotonic() - start}), flush=True)
    node.destroy_node()
    rclpy.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
