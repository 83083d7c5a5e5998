"""Serves Aseba nodes running the official (Mobsya) VM over TCP on 127.0.0.1, with pyaseba.

  python pyaseba_node.py --port PORT [--nodes N] [--duration S]

Each node (ids 1..N, type name "pyaseba-test") has the standard natives, the variables
`counter` (incremented every tick), `value` and `values[4]`, and emits the local event `tick`
every 0.1 s. Prints "READY <port>" once listening; stops after --duration seconds or when its
standard input closes.
"""
import argparse
import sys
import threading

from pyaseba.network import Network, Node


class TestNode(Node):
    events = {"tick": "emitted at each step after incrementing counter"}
    variables = {"counter": 1, "value": 1, "values": 4}
    functions = {}

    def __init__(self, node_id: int) -> None:
        super().__init__(node_id, name="pyaseba-test")

    def init(self) -> None:
        self.set("counter", [0])
        self.set("value", [0])

    def tick(self, time_step: float) -> None:
        c = self.get("counter")
        self.set("counter", [(c[0] if c else 0) + 1])
        self.emit("tick")

    def reset(self) -> None:
        self.set("counter", [0])


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--nodes", type=int, default=1)
    p.add_argument("--duration", type=float, default=60.0)
    a = p.parse_args()
    network = Network(address="127.0.0.1", port=a.port, advertised_name="")
    for i in range(a.nodes):
        network.add_node(TestNode(i + 1))
    network.start(time_step=0.1, duration=a.duration)
    print(f"READY {network.port}", flush=True)
    done = threading.Event()

    def watch_stdin() -> None:
        sys.stdin.read()
        done.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    done.wait(a.duration)
    network.stop()


if __name__ == "__main__":
    main()
