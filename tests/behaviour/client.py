"""The transport-neutral client API of the behaviour suite (tests/behaviour/README in DEVELOPERS.md).

The scenarios (tests/behaviour/scenarios_*.py) talk to the driver through a `Client` only; `ros2_client.Ros2Client`
(rclpy) and `ros1_client.Ros1Client` (rospy, actionlib, dynamic_reconfigure) implement it. Types are named the ROS 1
way, `package/Name` (`geometry_msgs/Twist`, `thymio_rt_msgs/SwitchController`); messages are plain Python values
(dicts of fields, lists, numbers, strings; stamps as `{"sec", "nanosec"}` on both transports).
"""

import threading
import time


class ScenarioFailure(AssertionError):
    """A behaviour of the driver that is not the expected one (the scenario's failure message says which)."""


def check(condition, message):
    """Fails the scenario with `message` unless `condition` holds."""
    if not condition:
        raise ScenarioFailure(message)


def check_eq(got, expected, what):
    """Fails the scenario unless `got == expected`, naming `what` and both values."""
    if got != expected:
        raise ScenarioFailure(f"{what}: expected {expected!r}, got {got!r}")


def wait_until(predicate, timeout, what, step=0.05):
    """Waits (bounded) until `predicate()` is true; its last value. Fails naming `what` at the timeout."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise ScenarioFailure(f"{what}: not within {timeout} s")
        time.sleep(step)


class Reply:
    """What a service call gave: `ok` with the response's fields, or not `ok` with the error the caller saw (ROS 1
    only: a ROS 2 service has no error channel)."""

    def __init__(self, ok, response=None, error=None):
        self.ok, self.response, self.error = ok, response, error

    def __repr__(self):
        return f"Reply(ok={self.ok}, response={self.response!r}, error={self.error!r})"


class Subscription:
    """The messages received on one topic, oldest first (filled by the transport's threads)."""

    def __init__(self, topic):
        self.topic = topic
        self._messages = []
        self._last = None
        self.received = 0
        self._cond = threading.Condition()

    def push(self, message):
        """Called by the transport for each message received."""
        with self._cond:
            self._messages.append(message)
            self.received += 1
            self._cond.notify_all()

    def wait(self, predicate=lambda m: True, timeout=10.0, what=None):
        """The first message received (and not consumed) that satisfies `predicate`, consumed with the messages
        before it; fails at the timeout naming `what` and the last message seen."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                found = self._take(predicate)
                if found is not None:
                    return found
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ScenarioFailure(f"{what or 'a message'} on {self.topic}: none within {timeout} s "
                                          f"(last seen: {self._last!r})")
                self._cond.wait(left)

    def poll(self, predicate=lambda m: True):
        """Like `wait` without waiting: the message, or None."""
        with self._cond:
            return self._take(predicate)

    def _take(self, predicate):
        for i, m in enumerate(self._messages):
            if predicate(m):
                del self._messages[: i + 1]
                return m
        if self._messages:
            self._last = self._messages[-1]
        self._messages.clear()
        return None

    def latest(self, timeout=10.0):
        """The newest message, waiting for a fresh one (everything received before is dropped)."""
        self.forget()
        return self.wait(timeout=timeout, what="a fresh message")

    def forget(self):
        """Drops what was received so far."""
        with self._cond:
            self._messages.clear()


LEVELS = ("debug", "info", "warn", "error", "fatal")


class GoalHandle:
    """A goal sent to an action server: `accepted`, then `feedback` (plain messages, in order), `result()` and
    `cancel()`. Statuses are named the same on both transports: `succeeded`, `canceled`, `aborted`."""

    accepted = False

    def __init__(self):
        self.feedback = []


class Client:
    """The API every scenario uses. `ns` is the robot's namespace (its topics are `/<ns>/...`, its driver node
    `/<ns>/thymio_driver`, the bridge node `/<ns>/asebaros`)."""

    transport = "?"

    def __init__(self, ns):
        self.ns = ns.strip("/")
        self.log = None  # the Subscription of the driver's /rosout lines, made by the transport at start
        self.differences = []  # what `soft` and `expect_log` found wrong; the group fails with all of them

    def name(self, leaf):
        """`/<ns>/<leaf>`."""
        return f"/{self.ns}/{leaf}" if self.ns else f"/{leaf}"

    def private(self, leaf=""):
        """`~<leaf>` of the robot's driver node: `/<ns>/thymio_driver/<leaf>`."""
        return self.name("thymio_driver" + ("/" + leaf if leaf else ""))

    def frame(self, leaf):
        """A TF frame of the robot (prefixed by its namespace, as ROS-Thymio's `tf_prefix`)."""
        return f"{self.ns}/{leaf}" if self.ns else leaf

    # --- implemented by each transport ---
    def subscribe(self, topic, type_name, latched=False):
        """A `Subscription` of `topic` (`latched`: a late subscriber gets the last message)."""
        raise NotImplementedError

    def publish(self, topic, type_name, fields):
        """Publishes one message with `fields` on `topic` (the publisher is made once and kept)."""
        raise NotImplementedError

    def subscribers(self, topic):
        """How many subscribers our publisher of `topic` has now."""
        raise NotImplementedError

    def call(self, service, type_name, fields, timeout=10.0):
        """Calls `service` (waiting up to `timeout` for it to exist); a `Reply`."""
        raise NotImplementedError

    def services(self):
        """The names of every service in the ROS graph now."""
        raise NotImplementedError

    def send_goal(self, action, type_name, fields, timeout=10.0):
        """Sends a goal to the action server `action` (waiting for the server and for the goal's acceptance or
        rejection); a `GoalHandle`."""
        raise NotImplementedError

    def set_parameter(self, node, name, value, timeout=10.0):
        """Sets parameter `name` of `node` live: `(applied, reason, value_in_effect)`."""
        raise NotImplementedError

    def get_parameter(self, node, name, timeout=10.0):
        """The value in effect of parameter `name` of `node`."""
        raise NotImplementedError

    def close(self):
        """Ends the transport's node."""

    # --- shared ---
    def wait_service(self, service, timeout):
        """Waits until `service` is in the ROS graph."""
        wait_until(lambda: service in self.services(), timeout, f"service {service}", step=0.2)

    def soft(self, condition, message):
        """Records `message` as a difference unless `condition` holds, and goes on (the group fails at its end
        with every difference found); `condition`."""
        if not condition:
            self.differences.append(message)
        return condition

    def expect_log(self, level, needle, timeout=10.0):
        """The text of the first line of the driver on /rosout at `level` (`warn`, `error`, ...) containing
        `needle` (received since the client started, not consumed yet); a missing line is a difference (`soft`),
        and once one was missing while /rosout brought nothing at all, the next ones are waited for 1 s only."""
        if self.log.received == 0 and any("on /rosout" in d for d in self.differences):
            timeout = 1.0
        try:
            return self.log.wait(lambda m: m["level"] == level and needle in m["msg"], timeout,
                                 f"a line at level {level} containing {needle!r} from the driver")["msg"]
        except ScenarioFailure as e:
            self.differences.append(str(e))
            return None

    def stream(self, topic, type_name, fields, until, timeout, what, period=0.05):
        """Publishes `fields` on `topic` every `period` until `until()` is true (within `timeout`); its value."""
        deadline = time.monotonic() + timeout
        while True:
            self.publish(topic, type_name, fields)
            value = until()
            if value:
                return value
            if time.monotonic() >= deadline:
                raise ScenarioFailure(f"{what}: not within {timeout} s of publishing on {topic}")
            time.sleep(period)
