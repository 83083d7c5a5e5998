"""A goal's client in a process of its own, for the scenario that kills it (scenarios_goals.goal_client_gone):

    goal_client.py ros2|ros1 NS ACTION TYPE GOAL_JSON

Sends GOAL_JSON to ACTION (a name under NS) with the transport's client (rclpy's ActionClient or actionlib's
SimpleActionClient, which listen to the action's status and feedback), prints one line `accepted` or `rejected`
on stdout, then waits for its end (the scenario SIGKILLs it first). Exits 2 if the client broke.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main():
    transport, ns, action, type_name, goal = sys.argv[1:6]
    import json

    if transport == "ros2":
        from ros2_client import Ros2Client as Transport
    else:
        from ros1_client import Ros1Client as Transport
    client = Transport(ns)
    h = client.send_goal(client.name(action), type_name, json.loads(goal), timeout=30)
    print("accepted" if h.accepted else "rejected", flush=True)
    # the scenario kills this process while the goal runs; bounded in case it does not
    time.sleep(120)
    os._exit(0)


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # noqa: BLE001
        print(f"client error: {e!r}", file=sys.stderr, flush=True)
        os._exit(2)
