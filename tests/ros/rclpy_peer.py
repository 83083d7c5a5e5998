"""An rclpy peer driven by the Rust tests; it reports on stdout, one JSON object a line.

Run with the project's ROS venv python (scripts/setup-ros2.sh):

  python tests/ros/rclpy_peer.py echo --topic /tf --type tf2_msgs/msg/TFMessage [--durability transient_local]
      [--depth 10] [--count 1] [--timeout 20]
    Subscribes and reports {"event": "ready"}, then {"event": "message", "data": {...}} per message, then
    {"event": "done"} after --count messages or {"event": "timeout"} (exit status 2) after --timeout seconds.

  python tests/ros/rclpy_peer.py serve [--timeout 120]
    Reports {"event": "ready"}, then executes the commands read on stdin, one JSON object a line:
      {"op": "subscribe", "topic": T, "type": "pkg/msg/Name", "durability": "volatile"|"transient_local",
       "depth": N}                                   -> {"event": "subscribed", "topic": T}
                                                     then {"event": "message", "topic": T, "data": {...}} each
      {"op": "call", "service": S, "type": "pkg/srv/Name", "request": {...}, "timeout": seconds}
                                                     -> {"event": "response", "service": S, "data": {...}}
      {"op": "publish", "topic": T, "type": "pkg/msg/Name", "msg": {...}, "subscribers": N, "timeout": seconds}
        (waits until the topic has N subscribers)    -> {"event": "published", "topic": T}
      {"op": "count", "topic": T}                    -> {"event": "count", "topic": T, "publishers": N,
                                                         "subscribers": M}  (in the ROS graph, as seen now)
      {"op": "topics"}                               -> {"event": "topics", "op": "topics", "topics": [{"topic": T,
                                                         "types": [...], "publishers": [{"node", "namespace",
                                                         "reliability", "durability"}]}]}: every topic of the
                                                         graph published by another node than this peer
      {"op": "subscribers", "topic": T}              -> {"event": "subscribers", "topic": T, "subscribers":
                                                         [{"node", "namespace", "reliability", "durability",
                                                         "depth"}]}: the subscriptions of T of other nodes
      {"op": "exit"}
    A command that fails reports {"event": "error", "op": ..., "message": ...}. The peer ends on "exit", when
    stdin closes, or after --timeout seconds ({"event": "timeout"}).
"""

import argparse
import array
import importlib
import json
import math
import queue
import sys
import threading
import time

import rclpy
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy


def interface_class(type_name):
    """`pkg/msg/Name` or `pkg/srv/Name` -> the generated Python class."""
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
    if isinstance(value, bytes):  # a `byte` field is one byte; byte arrays are lists of those
        return value[0] if len(value) == 1 else list(value)
    if isinstance(value, float) and not math.isfinite(value):  # JSON has no infinities: "inf", "-inf", "nan"
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def from_plain(cls, data):
    """A message of class `cls` with the fields given in the dict `data` (nested dicts and lists of dicts too)."""
    msg = cls()
    fields = list(cls.get_fields_and_field_types())
    for name, value in data.items():
        if name not in fields:
            raise KeyError(f"{cls.__name__} has no field {name}")
        slot = cls.SLOT_TYPES[fields.index(name)]
        element = getattr(slot, "value_type", None)
        if isinstance(value, str) and getattr(slot, "typename", None) in ("double", "float"):
            value = float(value)  # "nan", "inf", "-inf": JSON has no such numbers
        elif isinstance(value, dict):
            value = from_plain(type(getattr(msg, name)), value)
        elif isinstance(value, list) and element is not None and hasattr(element, "namespaces"):
            module = importlib.import_module(".".join(element.namespaces))
            value = [from_plain(getattr(module, element.name), v) for v in value]
        setattr(msg, name, value)
    return msg


def qos(durability="volatile", depth=10):
    """`volatile`, `transient_local` (both reliable) or `best_effort` (the sensor data profile)."""
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=depth,
        reliability=ReliabilityPolicy.BEST_EFFORT if durability == "best_effort" else ReliabilityPolicy.RELIABLE,
        durability={
            "volatile": DurabilityPolicy.VOLATILE,
            "best_effort": DurabilityPolicy.VOLATILE,
            "transient_local": DurabilityPolicy.TRANSIENT_LOCAL,
        }[durability],
    )


def emit(obj):
    print(json.dumps(obj) + "\n", end="", flush=True)  # one write: lines from callback threads never interleave


def echo(args):
    node = rclpy.create_node("rclpy_peer_echo")
    received = []
    node.create_subscription(interface_class(args.type), args.topic, received.append, qos(args.durability, args.depth))
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


class Server:
    """The `serve` mode: commands from stdin, executed between spins of one node."""

    def __init__(self, node):
        self.node = node
        self.subscriptions = {}
        self.publishers = {}
        self.clients = {}

    def subscribe(self, cmd):
        topic = cmd["topic"]

        def on_message(msg, topic=topic):
            emit({"event": "message", "topic": topic, "data": to_plain(msg)})

        self.subscriptions[topic] = self.node.create_subscription(
            interface_class(cmd["type"]), topic, on_message,
            qos(cmd.get("durability", "volatile"), cmd.get("depth", 10)))
        emit({"event": "subscribed", "topic": topic})

    def call(self, cmd):
        service, deadline = cmd["service"], time.monotonic() + cmd.get("timeout", 10.0)
        srv = interface_class(cmd["type"])
        client = self.clients.get(service)
        if client is None:
            client = self.clients[service] = self.node.create_client(srv, service)
        while not client.service_is_ready():
            if time.monotonic() > deadline:
                raise TimeoutError(f"service {service} not available")
            rclpy.spin_once(self.node, timeout_sec=0.05)
        future = client.call_async(from_plain(srv.Request, cmd.get("request", {})))
        while not future.done():
            if time.monotonic() > deadline:
                raise TimeoutError(f"no response from {service}")
            rclpy.spin_once(self.node, timeout_sec=0.05)
        emit({"event": "response", "service": service, "data": to_plain(future.result())})

    def publish(self, cmd):
        topic, deadline = cmd["topic"], time.monotonic() + cmd.get("timeout", 10.0)
        cls = interface_class(cmd["type"])
        pub = self.publishers.get(topic)
        if pub is None:
            pub = self.publishers[topic] = self.node.create_publisher(
                cls, topic, qos(cmd.get("durability", "volatile"), cmd.get("depth", 10)))
        while pub.get_subscription_count() < cmd.get("subscribers", 0):
            if time.monotonic() > deadline:
                raise TimeoutError(f"no subscriber on {topic}")
            rclpy.spin_once(self.node, timeout_sec=0.05)
        pub.publish(from_plain(cls, cmd.get("msg", {})))
        emit({"event": "published", "topic": topic})


    def count(self, cmd):
        topic = cmd["topic"]
        emit({"event": "count", "topic": topic, "publishers": self.node.count_publishers(topic),
              "subscribers": self.node.count_subscribers(topic)})


    def topics(self, cmd):
        found = []
        for topic, types in self.node.get_topic_names_and_types():
            publishers = [
                {"node": p.node_name, "namespace": p.node_namespace,
                 "reliability": p.qos_profile.reliability.name.lower(),
                 "durability": p.qos_profile.durability.name.lower()}
                for p in self.node.get_publishers_info_by_topic(topic)
                if p.node_name != self.node.get_name()]
            if publishers:
                found.append({"topic": topic, "types": types, "publishers": publishers})
        emit({"event": "topics", "op": "topics", "topics": found})


    def subscribers(self, cmd):
        topic = cmd["topic"]
        found = [
            {"node": s.node_name, "namespace": s.node_namespace,
             "reliability": s.qos_profile.reliability.name.lower(),
             "durability": s.qos_profile.durability.name.lower(),
             "depth": s.qos_profile.depth}
            for s in self.node.get_subscriptions_info_by_topic(topic)
            if s.node_name != self.node.get_name()]
        emit({"event": "subscribers", "topic": topic, "subscribers": found})


def serve(args):
    node = rclpy.create_node("rclpy_peer")
    server = Server(node)
    commands = queue.Queue()

    def read_stdin():
        for line in sys.stdin:
            if line.strip():
                commands.put(line)
        commands.put(None)

    threading.Thread(target=read_stdin, daemon=True).start()
    emit({"event": "ready"})
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline:
        rclpy.spin_once(node, timeout_sec=0.02)
        try:
            line = commands.get_nowait()
        except queue.Empty:
            continue
        if line is None:
            return 0
        cmd = json.loads(line)
        op = cmd.get("op")
        if op == "exit":
            return 0
        try:
            {"subscribe": server.subscribe, "call": server.call, "publish": server.publish,
             "count": server.count, "topics": server.topics,
             "subscribers": server.subscribers}[op](cmd)
        except Exception as e:  # reported to the test, which decides
            emit({"event": "error", "op": op, "message": f"{type(e).__name__}: {e}"})
    emit({"event": "timeout"})
    return 2


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("echo", help="subscribe and print the messages")
    p.add_argument("--topic", required=True)
    p.add_argument("--type", required=True, help="pkg/msg/Name")
    p.add_argument("--durability", choices=["volatile", "transient_local", "best_effort"], default="volatile")
    p.add_argument("--depth", type=int, default=10)
    p.add_argument("--count", type=int, default=1)
    p.add_argument("--timeout", type=float, default=20.0)
    p = sub.add_parser("serve", help="execute JSON commands read on stdin")
    p.add_argument("--timeout", type=float, default=120.0)
    args = parser.parse_args()

    rclpy.init()
    try:
        return {"echo": echo, "serve": serve}[args.command](args)
    finally:
        rclpy.try_shutdown()


if __name__ == "__main__":
    sys.exit(main())
