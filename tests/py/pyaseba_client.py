"""An official (Mobsya) Aseba client, for tests: connects to TARGET, waits for a node, reads a
variable and prints a JSON line {"nodes": {...}, "value": [...]}. Exits non-zero on failure."""
import json
import sys

from pyaseba.client import Client


def main() -> int:
    target, variable = sys.argv[1], sys.argv[2]
    with Client(address="127.0.0.1", port=0) as c:
        c.connect(target)
        c.wait_node(wait_ms=5000)
        ids = c.node_ids
        nodes = sorted({n for s in ids.values() for n in s})
        if not nodes:
            print(json.dumps({"error": "no node"}))
            return 1
        value = c.get_variable(nodes[0], variable, wait_ms=3000)
        names = {}
        for conn, d in c.descriptions.items():
            for nid, desc in d.items():
                names[str(nid)] = desc.name
        print(json.dumps({"nodes": names, "value": list(value)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
