"""Runs VM scenarios on an Aseba node through the official (Mobsya) client: each scenario's
program is compiled by the official compiler and loaded, run, then sent user events; after
loading and after each event the watched variables, the emitted events and the VM's error
messages are recorded. Prints one JSON document (a list, one entry per scenario).

  python vm_scenarios.py TARGET SCENARIOS.json
"""
import json
import sys
import time

from pyaseba.client import Client
from pyaseba.client._client_impl import msgs

SETTLE = 0.15


def main() -> int:
    target, path = sys.argv[1], sys.argv[2]
    scenarios = json.load(open(path))
    results = []
    seen_events: list = []
    seen_errors: list = []

    def on_event(ev) -> None:
        seen_events.append([ev.name, list(ev.data)])

    def on_message(msg, _conn) -> None:
        if isinstance(msg, msgs.ArrayAccessOutOfBounds):
            seen_errors.append(["out_of_bounds", msg.pc, msg.size, msg.index])
        elif isinstance(msg, msgs.DivisionByZero):
            seen_errors.append(["division_by_zero", msg.pc])
        elif isinstance(msg, msgs.EventExecutionKilled):
            seen_errors.append(["killed", msg.pc])
        elif isinstance(msg, msgs.NodeSpecificError):
            seen_errors.append(["node_error", msg.pc, msg.message])

    with Client(address="127.0.0.1", port=0, ping_period_ms=300) as c:
        c.connect(target)
        deadline = time.time() + 10
        while not any(c.node_ids.values()):
            if time.time() > deadline:
                print(json.dumps({"error": "no node"}))
                return 1
            c.wait_node(wait_ms=200)
        node = sorted({n for s in c.node_ids.values() for n in s})[0]
        c.query_description(node, wait_ms=3000)
        c.add_event_callback(on_event)
        c.add_message_callback(on_message)

        def read(name) -> list:
            # The client gives [] when no reply came in time (a loaded machine); no watched
            # variable is empty, so ask again.
            for _ in range(3):
                value = list(c.get_variable(node, name, wait_ms=3000))
                if value:
                    return value
            return value

        def snapshot(watch) -> dict:
            time.sleep(SETTLE)
            values = {name: read(name) for name in watch}
            snap = {"vars": values, "events": list(seen_events), "errors": list(seen_errors)}
            seen_events.clear()
            seen_errors.clear()
            return snap

        for sc in scenarios:
            entry = {"name": sc["name"], "snapshots": []}
            try:
                c.load_script(node, sc["source"], events=sc.get("events", {}))
            except RuntimeError as e:
                entry["compile_error"] = str(e)
                results.append(entry)
                continue
            time.sleep(SETTLE)
            seen_events.clear()
            seen_errors.clear()
            c.cmd_run(node)
            entry["snapshots"].append(snapshot(sc.get("watch", [])))
            for name, args in sc.get("steps", []):
                c.emit_event(node, name, args)
                entry["snapshots"].append(snapshot(sc.get("watch", [])))
            results.append(entry)
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
