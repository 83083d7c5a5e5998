"""An rclpy peer driven by the Rust tests: it subscribes to a topic and reports on stdout, one JSON object a line.

Run with the project's ROS venv python (scripts/setup-ros2.sh):
    python tests/ros/rclpy_peer.py echo --topic /tf --type tf2_msgs/msg/TFMessage [--durability transient_local]
        [--count 1] [--timeout 20]
Lines: {"event": "ready"} once the subscription exists, {"event": "message", "data": {...}} per message,
then {"event": "done"} after --count messages, or {"event": "timeout"} (exit status 2) after --timeout seconds.
The process always ends by itself.
"""

import argparse
import array
import importlib
import json
import sys
import time

import rclpy
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy


def message_class(type_name):
    """`pkg/msg/Name` -> the generated Python class."""
    package, kind, name = type_name.split("/")
    return getattr(importlib.import_module(f"{package}.{kind}"), name)


def to_plain(value):
    """A ROS message (or field value) as JSON-ready Python values."""
    if hasattr(value, "get_fields_and_field_types"):
        return {field: to_plain(getattr(value, field)) for field in value.get_fields_and_field_types()}
    if isinstance(value, (list, tuple, array.array)):
        return [to_plain(v) for v in value]
    if hasattr(value, "tolist"):  # numpy arrays of fixed-size fields
        return value.tolist()
    if isinstance(value, bytes):
        return list(value)
    return value


def emit(obj):
    print(json.dumps(obj), flush=True)


def echo(args):
    durability = {
        "volatile": DurabilityPolicy.VOLATILE,
        "transient_local": DurabilityPolicy.TRANSIENT_LOCAL,
    }[args.durability]
    qos = QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=args.depth,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=durability,
    )
    node = rclpy.create_node("rclpy_peer_echo")
    received = []
    node.create_subscription(message_class(args.type), args.topic, received.append, qos)
    emit({"event": "ready"})
    deadline = time.monotonic() + args.timeout
    reported = 0
    while reported < args.count:
        left = deadline - time.monotonic()
        if left <= 0:
            emit({"event": "timeout"})
            return 2
        rclpy.spin_once(node, timeout_sec=min(left, 0.5))
        while received and reported < args.count:
            emit({"event": "message", "data": to_plain(received.pop(0))})
            reported += 1
    emit({"event": "done"})
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("echo", help="subscribe and print the messages")
    p.add_argument("--topic", required=True)
    p.add_argument("--type", required=True, help="pkg/msg/Name")
    p.add_argument("--durability", choices=["volatile", "transient_local"], default="volatile")
    p.add_argument("--depth", type=int, default=10)
    p.add_argument("--count", type=int, default=1)
    p.add_argument("--timeout", type=float, default=20.0)
    args = parser.parse_args()

    rclpy.init()
    try:
        return {"echo": echo}[args.command](args)
    finally:
        rclpy.try_shutdown()


if __name__ == "__main__":
    sys.exit(main())
