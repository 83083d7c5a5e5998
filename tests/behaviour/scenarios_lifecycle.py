"""Managed (lifecycle) driver nodes (docs/ros2.md "Managed (lifecycle) driver nodes"), with `managed: true`: the robot's
`thymio_driver` node starts unconfigured with its wheels held; only `configure` then `activate` (lifecycle_msgs'
services, called here as Nav2's lifecycle_manager calls them: plain service clients — rclpy's lifecycle module
serves lifecycle nodes, it has no client of a remote one) let cmd_vel drive it; deactivate stops it at once."""

import threading
import time

from client import check, check_eq
from scenarios_control import DIAGNOSTICS, diagnostics_value
from scenarios_io import ODOM, TWIST, speed_of, x_of

LC = "lifecycle_msgs"
GO = {"linear": {"x": 0.12}}


def _state(c):
    r = c.call(c.private("get_state"), f"{LC}/GetState", {})
    check(r.ok, f"get_state: {r}")
    s = r.response["current_state"]
    return s["id"], s["label"]


def _available(c):
    r = c.call(c.private("get_available_transitions"), f"{LC}/GetAvailableTransitions", {})
    check(r.ok, f"get_available_transitions: {r}")
    return [(d["transition"]["id"], d["transition"]["label"], d["goal_state"]["label"])
            for d in r.response["available_transitions"]]


def _change(c, events, tid=0, label="", expect=True, path=()):
    """change_state (by id or label); `path`: the (transition id, start, goal) labels of the events it must
    publish, in order."""
    events.forget()
    r = c.call(c.private("change_state"), f"{LC}/ChangeState", {"transition": {"id": tid, "label": label}})
    check(r.ok, f"change_state {tid} {label!r}: {r}")
    check_eq(r.response["success"], expect, f"change_state {tid} {label!r} succeeded")
    for k, (t, start, goal) in enumerate(path):
        e = events.wait(timeout=5, what=f"transition event {k + 1} of {label or tid}")
        got = (e["transition"]["id"], e["start_state"]["label"], e["goal_state"]["label"])
        check_eq(got, (t, start, goal), f"transition event {k + 1} of {label or tid}")
        check(e["timestamp"] > 0, f"transition event without a timestamp: {e}")


def _held(c, truth, odom, what, seconds=1.2):
    """cmd_vel streamed for `seconds` does not move the robot (ground truth) while its odometry flows."""
    before = x_of(truth.latest())
    odom.forget()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        c.publish(c.name("cmd_vel"), TWIST, GO)
        time.sleep(0.05)
    after = x_of(truth.latest())
    check(abs(after - before) < 0.003, f"cmd_vel moved the robot while {what}: x {before:.4f} -> {after:.4f}")
    odom.wait(timeout=2, what=f"odometry while {what}")


class _Streamer:
    """Publishes cmd_vel every 50 ms on a thread of its own until stopped (the watchdog never trips meanwhile)."""

    def __init__(self, c):
        self.c, self.stop = c, threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop.is_set():
            self.c.publish(self.c.name("cmd_vel"), TWIST, GO)
            time.sleep(0.05)

    def end(self):
        self.stop.set()
        self.thread.join(timeout=2)


def lifecycle(c, env):
    """Starts unconfigured (held, state published); an unavailable transition is refused; configure -> inactive
    (still held); activate -> cmd_vel drives; deactivate -> stops at once and holds however cmd_vel insists;
    cleanup -> unconfigured; shutdown -> finalized (nothing available). Every transition's events on
    ~/transition_event, get_available_transitions following the state, the state in /diagnostics."""
    truth = c.subscribe(c.name("sim/ground_truth"), ODOM)
    odom = c.subscribe(c.name("odom"), ODOM)
    events = c.subscribe(c.private("transition_event"), f"{LC}/TransitionEvent")
    diagnostics = c.subscribe("/diagnostics", DIAGNOSTICS)
    truth.wait(timeout=30, what="the first ground truth")
    c.wait_service(c.private("change_state"), 30)
    check_eq(_state(c), (1, "unconfigured"), "state at start")
    check_eq(_available(c), [(1, "configure", "configuring"), (5, "shutdown", "shuttingdown")],
             "transitions available when unconfigured")
    r = c.call(c.private("get_available_states"), f"{LC}/GetAvailableStates", {})
    check_eq([s["id"] for s in r.response["available_states"]], [1, 2, 3, 4, 10, 11, 12, 13, 14, 15],
             "get_available_states")
    r = c.call(c.private("get_transition_graph"), f"{LC}/GetAvailableTransitions", {})
    check_eq(len(r.response["available_transitions"]), 25, "transitions in get_transition_graph")
    _held(c, truth, odom, "unconfigured")
    # not available here: refused, nothing happens
    _change(c, events, tid=3, expect=False)
    _change(c, events, label="deactivate", expect=False)
    check(events.poll() is None, f"a refused transition published an event: {events.poll()}")
    check_eq(_state(c), (1, "unconfigured"), "state after the refused transitions")
    # configure (by id): inactive, still held, its state published
    _change(c, events, tid=1, path=[(1, "unconfigured", "configuring"), (10, "configuring", "inactive")])
    check_eq(_state(c), (2, "inactive"), "state after configure")
    check_eq([t[0] for t in _available(c)], [2, 3, 6], "transitions available when inactive")
    diagnostics.wait(lambda m: diagnostics_value(m, "Lifecycle state") == "inactive", 10,
                     "/diagnostics: Lifecycle state inactive")
    _held(c, truth, odom, "inactive")
    # activate (by label): cmd_vel drives
    _change(c, events, label="activate", path=[(3, "inactive", "activating"), (30, "activating", "active")])
    check_eq([t[0] for t in _available(c)], [4, 7], "transitions available when active")
    x0 = x_of(truth.latest())
    c.stream(c.name("cmd_vel"), TWIST, GO, lambda: truth.poll(lambda m: x_of(m) > x0 + 0.03), 10,
             "the robot driving when active")
    # deactivate while cmd_vel keeps coming: stopped at once, then held
    streamer = _Streamer(c)
    try:
        truth.wait(lambda m: speed_of(m) > 0.1, 3, "the robot at speed before deactivate")
        _change(c, events, label="deactivate",
                path=[(4, "active", "deactivating"), (40, "deactivating", "inactive")])
        truth.forget()
        truth.wait(lambda m: abs(speed_of(m)) < 0.005, 0.4, "the robot stopped at once by deactivate")
        stopped = x_of(truth.latest())
        time.sleep(1.0)  # cmd_vel goes on meanwhile: the hold must last
        later = x_of(truth.latest())
        check(abs(later - stopped) < 0.003, f"moved while inactive under cmd_vel: {stopped:.4f} -> {later:.4f}")
    finally:
        streamer.end()
    # cleanup, then shutdown by its label (the shutdown of the current state)
    _change(c, events, tid=2, path=[(2, "inactive", "cleaningup"), (20, "cleaningup", "unconfigured")])
    check_eq(_state(c), (1, "unconfigured"), "state after cleanup")
    _change(c, events, label="shutdown", path=[(5, "unconfigured", "shuttingdown"),
                                               (50, "shuttingdown", "finalized")])
    check_eq(_state(c), (4, "finalized"), "state after shutdown")
    check_eq(_available(c), [], "transitions available when finalized")
    _held(c, truth, odom, "finalized", seconds=0.8)


GROUPS = {"lifecycle": lifecycle}
