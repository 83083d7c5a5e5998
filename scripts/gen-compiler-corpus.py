#!/usr/bin/env python3
"""Regenerates tests/compiler/expected.json: the official (Mobsya) compiler's output for every
program of the conformance corpus, for the Aseba Playground Thymio target.

Each program (tests/compiler/corpus/*.aseba, plus the robot's driver scripts) is compiled and
uploaded by pyaseba's Client.load_script to a headless asebaplayground Thymio through a relay
that records the SET_BYTECODE frames; a compilation error is recorded with its position.

Run with the pyaseba venv: .venv-aseba/bin/python scripts/gen-compiler-corpus.py
"""
import json
import os
import re
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from pyaseba.client import Client

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "compiler" / "corpus"
OUT = ROOT / "tests" / "compiler" / "expected.json"
AESL = [ROOT / "config" / "aseba" / "thymio_ros_playground.aesl",
        ROOT / "config" / "aseba" / "thymio_ros_multi_playground.aesl"]
# global events and constants of the plain corpus programs
EVENTS = {"big": 10, "pair": 2, "ping": 0, "trio": 3}
CONSTANTS = {"SPEED": 200, "LIMIT": 10, "NEG": -5}
SET_BYTECODE, LIST_NODES, NODE_PRESENT = 0xA001, 0xA011, 0x900C


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Relay:
    """Forwards a TCP stream to the Playground and records the bytecode uploads."""

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self.words: dict[int, tuple[int, ...]] = {}
        self.last = 0.0
        self.lock = threading.Lock()
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(4)
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def settled(self, first: float, quiet: float) -> bool:
        """Waits for a first SET_BYTECODE, then for `quiet` seconds without one (Client.load_script
        uploads without a RUN)."""
        end = time.time() + first
        while time.time() < end and not self.words:
            time.sleep(0.01)
        if not self.words:
            return False
        while time.time() - self.last < quiet:
            time.sleep(0.05)
        return True

    def reset(self) -> None:
        with self.lock:
            self.words.clear()

    def image(self) -> list[int]:
        with self.lock:
            out: list[int] = []
            for start in sorted(self.words):
                out.extend(self.words[start])
            return out

    def _serve(self) -> None:
        while True:
            client, _ = self.listener.accept()
            up = socket.create_connection(("127.0.0.1", self.upstream))
            threading.Thread(target=self._pump, args=(client, up, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(up, client, False), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, record: bool) -> None:
        buf = b""
        while True:
            try:
                data = src.recv(65536)
            except OSError:
                return
            if not data:
                return
            dst.sendall(data)
            if not record:
                continue
            buf += data
            while len(buf) >= 6:
                n, _src, kind = struct.unpack("<HHH", buf[:6])
                if len(buf) < 6 + n:
                    break
                payload, buf = buf[6:6 + n], buf[6 + n:]
                if kind == SET_BYTECODE and n >= 4:
                    _dest, start = struct.unpack("<HH", payload[:4])
                    words = struct.unpack(f"<{(n - 4) // 2}H", payload[4:4 + (n - 4) // 2 * 2])
                    with self.lock:
                        self.words[start] = words
                        self.last = time.time()


def start_playground(tmp: Path, port: int) -> subprocess.Popen:
    scene = tmp / "scene.playground"
    scene.write_text(
        '<!DOCTYPE aseba-playground>\n<aseba-playground>\n<color name="wall" r="0.9" g="0.9" b="0.9"/>\n'
        '<world w="200" h="200" color="wall"/>\n'
        f'<robot type="thymio2" x="100" y="100" port="{port}" name="t0"/>\n</aseba-playground>\n')
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_RUNTIME_DIR=str(tmp), HOME=str(tmp),
               LANG="en_US.UTF-8")
    proc = subprocess.Popen(["asebaplayground", str(scene)], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.time() + 30
    while time.time() < deadline:
        if listening(port):
            return proc
        time.sleep(0.1)
    proc.kill()
    sys.exit("asebaplayground did not listen")


def listening(port: int) -> bool:
    """Whether something listens on `port`, without connecting (the Playground is fragile)."""
    needle = f":{port:04X} "
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            cols = line.split()
            if len(cols) > 3 and (cols[1] + " ").endswith(needle) and cols[3] == "0A":
                return True
    return False


def node_answers(port: int) -> bool:
    """Whether a node answers LIST_NODES on `port`."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(struct.pack("<HHHH", 2, 0, LIST_NODES, 5))
            buf = b""
            end = time.time() + 1
            while time.time() < end:
                s.settimeout(max(0.01, end - time.time()))
                data = s.recv(4096)
                if not data:
                    return False
                buf += data
                while len(buf) >= 6:
                    n, _src, kind = struct.unpack("<HHH", buf[:6])
                    if kind == NODE_PRESENT:
                        return True
                    buf = buf[6 + n:]
    except OSError:
        return False
    return False


def programs() -> list[tuple[str, str, dict, dict]]:
    out = []
    for path in sorted(CORPUS.glob("*.aseba")):
        out.append((path.stem, path.read_text(), EVENTS, CONSTANTS))
    for path in AESL:
        root = ET.parse(path).getroot()
        events = {e.get("name"): int(e.get("size", "0")) for e in root.iter("event")}
        constants = {c.get("name"): int(c.get("value")) for c in root.iter("constant")}
        node = next(n for n in root.iter("node") if n.get("name") == "thymio-II")
        code = (node.text or "") + "".join((c.tail or "") for c in node)
        out.append((path.stem, code, events, constants))
    return out


ERROR = re.compile(r"Error(?: at Line: (\d+) Col: (\d+))? : (.*)", re.S)


def connect(port: int) -> Client:
    """A client that sees the Playground's node (the Playground sometimes ignores the first
    clients after it starts listening: retry with a fresh client)."""
    for _attempt in range(6):
        c = Client(address="127.0.0.1", port=0, ping_period_ms=300)
        c.__enter__()
        c.connect(f"tcp:127.0.0.1;{port}")
        deadline = time.time() + 5
        while time.time() < deadline:
            c.wait_node(wait_ms=200)
            if any(c.node_ids.values()):
                return c
        c.__exit__(None, None, None)
    sys.exit("no node on the Playground")


def main() -> int:
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        pg_port, switch_port = free_port(), free_port()
        pg = start_playground(Path(tmp), pg_port)
        # the Playground segfaults when clients come and go: an asebaswitch takes them
        switch = subprocess.Popen(["asebaswitch", "-p", str(switch_port), f"tcp:127.0.0.1;{pg_port}"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 20
        while not node_answers(switch_port):
            if time.time() > deadline:
                sys.exit("no node through asebaswitch")
            time.sleep(0.1)
        relay = Relay(switch_port)
        try:
            with connect(relay.port) as c:
                node = sorted({n for s in c.node_ids.values() for n in s})[0]
                for name, code, events, constants in programs():
                    relay.reset()
                    entry: dict = {"source": name, "events": sorted(events.items()),
                                   "constants": sorted(constants.items())}
                    try:
                        c.load_script(node, code, events=events, constants=constants)
                        if not relay.settled(first=5.0, quiet=0.5):
                            sys.exit(f"{name}: no bytecode seen after the upload")
                        entry["bytecode"] = relay.image()
                    except RuntimeError as e:
                        m = ERROR.search(str(e))
                        if not m:
                            sys.exit(f"{name}: unexpected failure {e!r}")
                        entry["error"] = {"line": int(m[1] or 0), "col": int(m[2] or 0), "message": m[3].strip()}
                    results[name] = entry
                    verdict = "error" if "error" in entry else f"{len(entry['bytecode'])} words"
                    print(f"{name}: {verdict}", flush=True)
        finally:
            for p in (switch, pg):
                p.kill()
                p.wait()
    OUT.write_text(json.dumps({"target": "playground", "compiler": "Mobsya (pyaseba Client.load_script)",
                               "programs": results}, indent=1) + "\n")
    print(f"wrote {OUT} ({len(results)} programs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
