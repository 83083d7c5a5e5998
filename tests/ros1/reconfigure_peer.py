#!/usr/bin/python3
"""A dynamic_reconfigure client (Debian's dynamic_reconfigure.client.Client, rospy; run with /usr/bin/python3) of
thymio-rt's ROS 1 front end.

    reconfigure_peer.py NODE SECONDS NAME=VALUE...

Connects to NODE's dynamic_reconfigure server, reads its parameter descriptions and configuration, then sets each
NAME to VALUE (a Python literal) in turn, recording the configuration the server answered and the next one received
on parameter_updates. Prints one JSON object on its last line: {"descriptions": {name: {type, min, max, default,
description}}, "initial": {...}, "sets": [{"name", "value", "answer", "update"}]}.
"""
import ast
import json
import sys
import threading
import time

import rospy
from dynamic_reconfigure.client import Client



def _no_nan(value):
    """`value` with NaN floats (a motion limit off) as null: JSON has no NaN."""
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, dict):
        return {k: _no_nan(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_no_nan(v) for v in value]
    return value

def plain(config):
    return {k: v for k, v in config.items() if k != "groups"}


def main():
    node, seconds, changes = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
    rospy.init_node("reconfigure_peer", anonymous=True, disable_signals=True)
    updates = []
    cv = threading.Condition()

    def on_update(config):
        with cv:
            updates.append(plain(config))
            cv.notify_all()

    client = Client(node, timeout=seconds, config_callback=on_update)
    descriptions = client.get_parameter_descriptions(timeout=seconds) or []
    initial = client.get_configuration(timeout=seconds)
    out = {
        "descriptions": {
            d["name"]: {k: d[k] for k in ("type", "min", "max", "default", "description")}
            for d in descriptions
        },
        "initial": plain(initial) if initial else None,
        "sets": [],
    }
    for change in changes:
        name, text = change.split("=", 1)
        value = ast.literal_eval(text)
        with cv:
            seen = len(updates)
        answer = plain(client.update_configuration({name: value}))
        deadline = time.time() + seconds
        update = None
        with cv:
            while time.time() < deadline:
                fresh = [u for u in updates[seen:] if u.get(name) == answer.get(name)]
                if fresh:
                    update = fresh[-1]
                    break
                # a refused value changes nothing: the last update is the configuration in effect
                if updates and answer.get(name) != value and updates[-1].get(name) == answer.get(name):
                    update = updates[-1]
                    break
                cv.wait(deadline - time.time())
        out["sets"].append({"name": name, "value": value, "answer": answer, "update": update})
    print(json.dumps(_no_nan(out)))
    sys.stdout.flush()
    rospy.signal_shutdown("done")


if __name__ == "__main__":
    main()
