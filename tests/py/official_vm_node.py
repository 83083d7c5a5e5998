"""An Aseba node running the official (Mobsya) VM of pyaseba, with no behaviour of its own:
the standard natives and the default variables only. Serves on 127.0.0.1:PORT; prints
"READY <port>"; stops after --duration seconds or when stdin closes.

  python official_vm_node.py --port PORT [--duration S]
"""
import argparse
import sys
import threading

from pyaseba.network import Network, Node


class VmNode(Node):
    events = {}
    variables = {}
    functions = {}

    def __init__(self, node_id: int) -> None:
        super().__init__(node_id, name="official-vm")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--duration", type=float, default=120.0)
    a = p.parse_args()
    network = Network(address="127.0.0.1", port=a.port, advertised_name="")
    network.add_node(VmNode(1))
    network.start(time_step=0.01, duration=a.duration)
    print(f"READY {a.port}", flush=True)
    done = threading.Event()

    def watch_stdin() -> None:
        sys.stdin.read()
        done.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    done.wait(a.duration)
    network.stop()


if __name__ == "__main__":
    main()
