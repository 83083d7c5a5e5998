"""The behaviour suite's client API on ROS 1 (Debian's rospy, actionlib and dynamic_reconfigure; /usr/bin/python3).

`ROS_MASTER_URI` and `ROS_IP` come from the environment. The Python classes of the packages Debian does not ship
(asebaros_msgs and thymio_msgs from nrt/ros1_client/msg, thymio_rt_msgs from its one definition in msgs/ros, its action
expanded into the actionlib messages) are generated with genpy into a temporary directory at start.
"""

import importlib
import os
import sys
import tempfile

from client import Client, GoalHandle, Reply, ScenarioFailure, Subscription, wait_until

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VENDORED = os.path.join(ROOT, "nrt", "ros1_client", "msg")
SOURCES = {
    "asebaros_msgs": os.path.join(VENDORED, "asebaros_msgs"),
    "thymio_msgs": os.path.join(VENDORED, "thymio_msgs"),
    "lifecycle_msgs": os.path.join(VENDORED, "lifecycle_msgs"),
    "thymio_rt_msgs": os.path.join(ROOT, "msgs", "ros", "thymio_rt_msgs"),
}
# rosgraph_msgs/Log levels
_LEVELS = {1: "debug", 2: "info", 4: "warn", 8: "error", 16: "fatal"}
# actionlib_msgs/GoalStatus
_STATUS = {2: "canceled", 3: "succeeded", 4: "aborted", 5: "rejected", 8: "canceled"}


def _expand_action(path, out_dir):
    """The actionlib messages of the action file `path` (Goal, Result, Feedback and their Action* envelopes,
    actionlib's convention), written to `out_dir`."""
    name = os.path.basename(path)[: -len(".action")]
    parts = [[]]
    for line in open(path).read().splitlines():
        if line.strip() == "---":
            parts.append([])
        else:
            parts[-1].append(line)
    goal, result, feedback = ("\n".join(p) + "\n" for p in parts)
    files = {
        "Goal": goal,
        "Result": result,
        "Feedback": feedback,
        "ActionGoal": f"Header header\nactionlib_msgs/GoalID goal_id\n{name}Goal goal\n",
        "ActionResult": f"Header header\nactionlib_msgs/GoalStatus status\n{name}Result result\n",
        "ActionFeedback": f"Header header\nactionlib_msgs/GoalStatus status\n{name}Feedback feedback\n",
        "Action": f"{name}ActionGoal action_goal\n{name}ActionResult action_result\n"
                  f"{name}ActionFeedback action_feedback\n",
    }
    written = []
    for suffix, text in files.items():
        f = os.path.join(out_dir, f"{name}{suffix}.msg")
        with open(f, "w") as fh:
            fh.write(text)
        written.append(f)
    return written


def generate(out):
    """Generates (genpy) the packages of SOURCES into `out` and puts it first on the import path."""
    from genpy import generate_initpy
    from genpy.generator import MsgGenerator, SrvGenerator

    search = {p: [os.path.join(VENDORED, p, "msg")] for p in os.listdir(VENDORED)}
    actions = {}
    for package, src in SOURCES.items():
        msg_dirs = [os.path.join(src, "msg")]
        if os.path.isdir(os.path.join(src, "action")):
            expanded = os.path.join(out, "_actions", package)
            os.makedirs(expanded)
            actions[package] = [f for a in sorted(os.listdir(os.path.join(src, "action")))
                                for f in _expand_action(os.path.join(src, "action", a), expanded)]
            msg_dirs.append(expanded)
        search[package] = msg_dirs
    for package, src in SOURCES.items():
        pkg = os.path.join(out, package)
        for kind, gen in (("msg", MsgGenerator()), ("srv", SrvGenerator())):
            d = os.path.join(src, kind)
            files = sorted(os.path.join(d, f) for f in os.listdir(d)) if os.path.isdir(d) else []
            if kind == "msg":
                files += actions.get(package, [])
            if not files:
                continue
            dst = os.path.join(pkg, kind)
            if gen.generate_messages(package, files, dst, search) != 0:
                raise RuntimeError(f"genpy failed on {package}/{kind}")
            generate_initpy.write_modules(dst)
        open(os.path.join(pkg, "__init__.py"), "w").close()
    sys.path.insert(0, out)


def message_class(type_name, kind="msg"):
    """`pkg/Name` -> the rospy class (Debian's packages or the generated ones)."""
    package, name = type_name.split("/")
    return getattr(importlib.import_module(f"{package}.{kind}"), name)


def plain(value):
    """A rospy message (or field) as plain Python values; times as `{"sec", "nanosec"}` as on ROS 2."""
    import genpy

    if isinstance(value, genpy.TVal):
        return {"sec": value.secs, "nanosec": value.nsecs}
    if hasattr(value, "__slots__") and hasattr(value, "_slot_types"):
        return {f: plain(getattr(value, f)) for f in value.__slots__}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, bytes):
        return list(value)
    return value


def build(cls, fields):
    """A message of class `cls` with the plain `fields` (nested dicts and lists of dicts too)."""
    msg = cls()
    for name, value in fields.items():
        if name not in cls.__slots__:
            raise KeyError(f"{cls._type} has no field {name}")
        slot = cls._slot_types[cls.__slots__.index(name)]
        if isinstance(value, dict):
            value = build(type(getattr(msg, name)), value)
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            value = [build(message_class(slot.split("[")[0]), v) for v in value]
        setattr(msg, name, value)
    return msg


class Ros1Client(Client):
    transport = "ros1"

    def __init__(self, ns):
        super().__init__(ns)
        generate(tempfile.mkdtemp(prefix="behaviour_msgs_"))
        import rospy

        self.rospy = rospy
        rospy.init_node("behaviour_client", anonymous=True, disable_signals=True)
        self._publishers, self._actions, self._subs, self._reconfigure = {}, {}, [], {}
        bridge = self.name("asebaros")
        self.log = Subscription("/rosout")

        def on_log(m):
            if m.name == bridge:
                self.log.push({"level": _LEVELS.get(m.level, str(m.level)), "msg": m.msg})

        self._subs.append(rospy.Subscriber("/rosout", message_class("rosgraph_msgs/Log"), on_log, queue_size=100))

    def subscribe(self, topic, type_name, latched=False):
        sub = Subscription(topic)
        self._subs.append(self.rospy.Subscriber(topic, message_class(type_name), lambda m: sub.push(plain(m)),
                                                queue_size=100))
        return sub

    def publish(self, topic, type_name, fields):
        pub = self._publishers.get(topic)
        if pub is None:
            cls = message_class(type_name)
            pub = self._publishers[topic] = (self.rospy.Publisher(topic, cls, queue_size=10), cls)
        pub[0].publish(build(pub[1], fields))

    def subscribers(self, topic):
        pub = self._publishers.get(topic)
        return pub[0].get_num_connections() if pub else 0

    def call(self, service, type_name, fields, timeout=10.0):
        cls = message_class(type_name, "srv")
        try:
            self.rospy.wait_for_service(service, timeout=timeout)
        except self.rospy.ROSException:
            raise ScenarioFailure(f"service {service}: not served within {timeout} s")
        try:
            response = self.rospy.ServiceProxy(service, cls)(build(cls._request_class, fields))
            return Reply(True, plain(response))
        except self.rospy.ServiceException as e:
            return Reply(False, error=str(e))

    def services(self):
        import rosgraph

        return {name for name, _ in rosgraph.Master("/behaviour_client").getSystemState()[2]}

    def send_goal(self, action, type_name, fields, timeout=10.0):
        import actionlib

        client = self._actions.get(action)
        if client is None:
            client = actionlib.SimpleActionClient(action, message_class(type_name + "Action"))
            if not client.wait_for_server(self.rospy.Duration(timeout)):
                raise ScenarioFailure(f"action {action}: no server within {timeout} s")
            self._actions[action] = client
        handle = GoalHandle()
        client.send_goal(build(message_class(type_name + "Goal"), fields),
                         feedback_cb=lambda f: handle.feedback.append(plain(f)))
        state = wait_until(lambda: client.get_state() != 0 and client.get_state(), timeout,
                           f"the acceptance or rejection of the goal to {action}")
        handle.accepted = state not in (5, 8)

        def result(timeout=30.0):
            if not client.wait_for_result(self.rospy.Duration(timeout)):
                raise ScenarioFailure(f"the result of {action}: none within {timeout} s")
            state = client.get_state()
            return _STATUS.get(state, str(state)), plain(client.get_result())

        handle.result, handle.cancel = result, lambda timeout=10.0: client.cancel_goal()
        return handle

    def _reconfigure_client(self, node, timeout):
        from dynamic_reconfigure.client import Client as ReconfigureClient

        if node not in self._reconfigure:
            try:
                self._reconfigure[node] = ReconfigureClient(node, timeout=timeout)
            except self.rospy.ROSException as e:
                raise ScenarioFailure(f"dynamic_reconfigure of {node}: {e}")
        return self._reconfigure[node]

    def set_parameter(self, node, name, value, timeout=10.0):
        config = self._reconfigure_client(node, timeout).update_configuration({name: value})
        in_effect = config[name]
        # dynamic_reconfigure answers the configuration in effect and has no field for a reason
        return in_effect == value, "", in_effect

    def get_parameter(self, node, name, timeout=10.0):
        return self._reconfigure_client(node, timeout).get_configuration(timeout)[name]

    def close(self):
        self.rospy.signal_shutdown("behaviour scenario done")
