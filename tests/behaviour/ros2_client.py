"""The behaviour suite's client API on ROS 2 (rclpy of the project's ROS venv, scripts/setup-ros2.sh).

One rclpy node spun by an executor thread; subscriptions are best effort (they match the driver's reliable and
sensor-data publishers alike) or, latched, reliable + transient local; parameters through the driver node's rcl
parameter services; actions through rclpy's ActionClient.
"""

import array
import importlib
import os
import sys
import threading
import time

import rclpy
from rclpy.action import ActionClient
from rclpy.executors import MultiThreadedExecutor
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

from client import Client, GoalHandle, Reply, ScenarioFailure, Subscription, wait_until

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ros"))
from rclpy_peer import from_plain  # noqa: E402  (tests/ros: the rclpy peer's message builder)

# rcl_interfaces/msg/Log levels
_LEVELS = {10: "debug", 20: "info", 30: "warn", 40: "error", 50: "fatal"}
# action_msgs/msg/GoalStatus
_STATUS = {4: "succeeded", 5: "canceled", 6: "aborted"}


def interface(type_name, kind):
    """`pkg/Name` of kind `msg`, `srv` or `action` -> the generated class."""
    package, name = type_name.split("/")
    return getattr(importlib.import_module(f"{package}.{kind}"), name)


def plain(value):
    """A ROS 2 message (or field) as plain Python values (floats kept as floats, infinities too)."""
    if hasattr(value, "get_fields_and_field_types"):
        return {f: plain(getattr(value, f)) for f in value.get_fields_and_field_types()}
    if isinstance(value, (list, tuple, array.array)):
        return [plain(v) for v in value]
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, bytes):
        return value[0] if len(value) == 1 else list(value)
    return value


def _qos(latched):
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=100,
        reliability=ReliabilityPolicy.RELIABLE if latched else ReliabilityPolicy.BEST_EFFORT,
        durability=DurabilityPolicy.TRANSIENT_LOCAL if latched else DurabilityPolicy.VOLATILE,
    )


def _parameter_value(value):
    """A Python value as an rcl_interfaces/msg/ParameterValue's fields."""
    if isinstance(value, bool):
        return {"type": 1, "bool_value": value}
    if isinstance(value, int):
        return {"type": 2, "integer_value": value}
    if isinstance(value, float):
        return {"type": 3, "double_value": value}
    if isinstance(value, list) and all(isinstance(v, float) for v in value):
        return {"type": 8, "double_array_value": value}
    return {"type": 4, "string_value": str(value)}


def _from_parameter_value(v):
    return {1: v.bool_value, 2: v.integer_value, 3: v.double_value, 4: v.string_value,
            8: list(v.double_array_value), 9: list(v.string_array_value)}.get(v.type)


class Ros2Client(Client):
    transport = "ros2"

    def __init__(self, ns):
        super().__init__(ns)
        rclpy.init()
        self.node = rclpy.create_node("behaviour_client")
        self._executor = MultiThreadedExecutor()
        self._executor.add_node(self.node)
        self._spinner = threading.Thread(target=self._executor.spin, daemon=True)
        self._spinner.start()
        self._publishers, self._clients, self._subs, self._actions = {}, {}, [], []
        logger = f"{self.ns}.asebaros" if self.ns else "asebaros"
        self.log = Subscription("/rosout")
        self._rosout = self.node.create_subscription(
            interface("rcl_interfaces/Log", "msg"), "/rosout",
            lambda m: m.name == logger and self.log.push({"level": _LEVELS.get(m.level, str(m.level)), "msg": m.msg}),
            _qos(True))

    def subscribe(self, topic, type_name, latched=False):
        sub = Subscription(topic)
        self._subs.append(self.node.create_subscription(
            interface(type_name, "msg"), topic, lambda m: sub.push(plain(m)), _qos(latched)))
        return sub

    def publish(self, topic, type_name, fields):
        pub = self._publishers.get(topic)
        if pub is None:
            cls = interface(type_name, "msg")
            pub = self._publishers[topic] = (self.node.create_publisher(cls, topic, 10), cls)
        pub[0].publish(from_plain(pub[1], fields))

    def subscribers(self, topic):
        pub = self._publishers.get(topic)
        return pub[0].get_subscription_count() if pub else 0

    def _wait_future(self, future, timeout, what):
        wait_until(future.done, timeout, what, step=0.01)
        return future.result()

    def call(self, service, type_name, fields, timeout=10.0):
        key = (service, type_name)
        if key not in self._clients:
            self._clients[key] = self.node.create_client(interface(type_name, "srv"), service)
        cli = self._clients[key]
        if not cli.wait_for_service(timeout_sec=timeout):
            raise ScenarioFailure(f"service {service}: not served within {timeout} s")
        request = from_plain(cli.srv_type.Request, fields)
        response = self._wait_future(cli.call_async(request), timeout, f"the answer of {service}")
        return Reply(True, plain(response))

    def services(self):
        return {name for name, _ in self.node.get_service_names_and_types()}

    def send_goal(self, action, type_name, fields, timeout=10.0):
        cls = interface(type_name, "action")
        client = ActionClient(self.node, cls, action)
        if not client.wait_for_server(timeout_sec=timeout):
            raise ScenarioFailure(f"action {action}: no server within {timeout} s")
        handle = GoalHandle()
        goal = from_plain(cls.Goal, fields)
        sent = client.send_goal_async(goal, feedback_callback=lambda m: handle.feedback.append(plain(m.feedback)))
        inner = self._wait_future(sent, timeout, f"the goal response of {action}")
        handle.accepted = bool(inner.accepted)

        def result(timeout=30.0):
            r = self._wait_future(inner.get_result_async(), timeout, f"the result of {action}")
            return _STATUS.get(r.status, str(r.status)), plain(r.result)

        def cancel(timeout=10.0):
            self._wait_future(inner.cancel_goal_async(), timeout, f"the cancel response of {action}")

        handle.result, handle.cancel = result, cancel
        self._actions.append(client)
        return handle

    def set_parameter(self, node, name, value, timeout=10.0):
        r = self.call(f"{node}/set_parameters", "rcl_interfaces/SetParameters",
                      {"parameters": [{"name": name, "value": _parameter_value(value)}]}, timeout)
        result = r.response["results"][0]
        return result["successful"], result["reason"], self.get_parameter(node, name, timeout)

    def get_parameter(self, node, name, timeout=10.0):
        key = (f"{node}/get_parameters", "rcl_interfaces/GetParameters")
        if key not in self._clients:
            self._clients[key] = self.node.create_client(interface(key[1], "srv"), key[0])
        cli = self._clients[key]
        if not cli.wait_for_service(timeout_sec=timeout):
            raise ScenarioFailure(f"service {key[0]}: not served within {timeout} s")
        req = cli.srv_type.Request(names=[name])
        # get_parameters is idempotent: asked again every 5 s, since a DDS service whose server has not matched
        # this client's response reader yet (wait_for_service only sees the request side) drops the answer
        deadline = time.monotonic() + timeout
        while True:
            future = cli.call_async(req)
            try:
                values = self._wait_future(future, min(5.0, max(0.1, deadline - time.monotonic())),
                                           f"the answer of {key[0]}").values
                return _from_parameter_value(values[0]) if values else None
            except ScenarioFailure:
                cli.remove_pending_request(future)
                if time.monotonic() >= deadline:
                    raise ScenarioFailure(f"the answer of {key[0]}: not within {timeout} s") from None

    def close(self):
        self._executor.shutdown(timeout_sec=2)
        self._spinner.join(timeout=2)
        for client in self._actions:
            client.destroy()
        self.node.destroy_node()
        rclpy.try_shutdown()
