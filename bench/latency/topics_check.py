"""The topics a driver publishes, for the latency bench's `topics` section (bench/latency/topics.rs).

Usage: topics_check.py 2|1 SECONDS
Waits for discovery, subscribes to every topic another node publishes (ROS 2: best effort, which matches reliable
publishers too; ROS 1: rospy.AnyMsg), counts the messages each brings in SECONDS and prints one JSON line
{"/topic": ["type", count], ...}. ROS 2 from the venv's rclpy (ROS_DOMAIN_ID from the environment), ROS 1 from
Debian's rospy (ROS_MASTER_URI from the environment).
"""

import json
import sys
import time

NAME = "bench_topics"


def ros2(seconds: float) -> dict:
    import rclpy
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    import importlib

    rclpy.init()
    node = rclpy.create_node(NAME)
    end = time.monotonic() + 3.0
    while time.monotonic() < end:
        rclpy.spin_once(node, timeout_sec=0.1)
    counts, subs = {}, []
    for name, types in node.get_topic_names_and_types():
        if not [p for p in node.get_publishers_info_by_topic(name) if p.node_name != NAME]:
            continue
        counts[name] = [types[0], 0]
        pkg, _, leaf = types[0].split("/")
        try:
            cls = getattr(importlib.import_module(f"{pkg}.msg"), leaf)
        except (AttributeError, ModuleNotFoundError):
            continue

        def count(_msg, n=name):
            counts[n][1] += 1

        qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.BEST_EFFORT)
        subs.append(node.create_subscription(cls, name, count, qos))
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        rclpy.spin_once(node, timeout_sec=0.1)
    return counts


def ros1(seconds: float) -> dict:
    import rosgraph
    import rospy

    rospy.init_node(NAME, disable_signals=True, disable_rosout=True)
    master = rosgraph.Master("/" + NAME)
    counts = {}
    subs = []
    for topic, ty in master.getPublishedTopics("/"):
        counts[topic] = [ty, 0]

        def count(_msg, t=topic):
            counts[t][1] += 1

        subs.append(rospy.Subscriber(topic, rospy.AnyMsg, count))
    time.sleep(seconds)
    return counts


def main() -> int:
    ros, seconds = sys.argv[1], float(sys.argv[2])
    counts = ros2(seconds) if ros == "2" else ros1(seconds)
    print(json.dumps(counts), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
