"""Runs one group of behaviour scenarios through one transport (started by tests/behaviour.rs):

    run.py ros2|ros1 GROUP --ns NS --dir DIR [--timeout SECONDS]

ros2 runs with the project's ROS venv python (rclpy), ros1 with Debian's /usr/bin/python3 (rospy). Prints progress on
stderr and, last on stdout, one JSON object: {"transport", "group", "passed", "failure", "seconds"}; exits 0 when
the group passed, 1 when a behaviour differed (`failure` says which), 2 when the client itself broke.
"""

import argparse
import json
import os
import signal
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from client import ScenarioFailure  # noqa: E402
import scenarios_control  # noqa: E402
import scenarios_goals  # noqa: E402
import scenarios_io  # noqa: E402
import scenarios_lifecycle  # noqa: E402
import scenarios_plugin  # noqa: E402

GROUPS = {**scenarios_io.GROUPS, **scenarios_control.GROUPS, **scenarios_lifecycle.GROUPS,
          **scenarios_goals.GROUPS, **scenarios_plugin.GROUPS}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("transport", choices=["ros2", "ros1"])
    ap.add_argument("group", choices=sorted(GROUPS))
    ap.add_argument("--ns", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--timeout", type=float, default=60.0)
    args = ap.parse_args()

    def out_of_time(*_):
        raise ScenarioFailure(f"the group did not end within {args.timeout} s")

    signal.signal(signal.SIGALRM, out_of_time)
    signal.alarm(int(args.timeout))
    t0 = time.monotonic()
    result = {"transport": args.transport, "group": args.group, "passed": False, "failure": None}
    status = 2
    client = None
    try:
        if args.transport == "ros2":
            from ros2_client import Ros2Client as Transport
        else:
            from ros1_client import Ros1Client as Transport
        client = Transport(args.ns)
        GROUPS[args.group](client, {"dir": args.dir})
        if client.differences:
            raise ScenarioFailure("the group ran to its end")
        result["passed"], status = True, 0
    except ScenarioFailure as e:
        found = client.differences if client is not None else []
        items = found + ([] if found and str(e) == "the group ran to its end" else [str(e)])
        result["failure"], status = "\n - ".join([f"{len(items)} difference(s):"] + items), 1
        traceback.print_exc()
    except Exception as e:  # the client broke: not a behaviour of the driver
        result["failure"] = f"client error: {e!r}"
        traceback.print_exc()
    finally:
        signal.alarm(0)
        result["seconds"] = round(time.monotonic() - t0, 2)
        if client is not None:
            try:
                client.close()
            except Exception:
                traceback.print_exc()
    print(json.dumps(result), flush=True)
    sys.stderr.flush()
    # no interpreter teardown: the client libraries' C++ destructors have nothing left to do and may abort
    os._exit(status)


if __name__ == "__main__":
    main()
