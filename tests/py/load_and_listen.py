"""Official (Mobsya) client against an Aseba node: compiles SOURCE with the official compiler,
loads it (Client.load_script), runs it and waits for the event EVENT; prints one JSON line
{"node": id, "name": node name, "event": [args]}. Exits non-zero on failure.

  python load_and_listen.py TARGET SOURCE_FILE EVENT SIZE
"""
import json
import sys
import time

from pyaseba.client import Client


def main() -> int:
    target, source_file, event, size = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    source = open(source_file).read()
    with Client(address="127.0.0.1", port=0, ping_period_ms=300) as c:
        c.connect(target)
        deadline = time.time() + 10
        while not any(c.node_ids.values()):
            if time.time() > deadline:
                print(json.dumps({"error": "no node"}))
                return 1
            c.wait_node(wait_ms=200)
        node = sorted({n for s in c.node_ids.values() for n in s})[0]
        desc = c.query_description(node, wait_ms=3000)
        c.load_script(node, source, events={event: size})
        c.cmd_run(node)
        ev = c.get_event(node, event, wait_ms=5000)
        if ev is None:
            print(json.dumps({"error": "no event"}))
            return 1
        print(json.dumps({"node": node, "name": desc.name if desc else None, "event": list(ev.data)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
