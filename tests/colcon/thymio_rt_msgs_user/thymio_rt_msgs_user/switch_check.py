"""Calls the driver's switch_controller (thymio_rt_msgs/srv/SwitchController) with the type this package found.

Usage: switch_controller_check [TIMEOUT_S]. Finds the service by its type, gives the wheels to "joint", then asks for
an owner that does not exist, and prints one JSON line: where the thymio_rt_msgs module and its C libraries came
from (`module`, `libs`), the service's name and both answers. Exit 0 when both calls were answered, 2 on a timeout.
"""
import json
import sys
import time

import rclpy
import thymio_rt_msgs
from thymio_rt_msgs.srv import SwitchController

SERVICE_TYPE = "thymio_rt_msgs/srv/SwitchController"


def loaded_libraries(word):
    """The shared libraries mapped into this process whose path contains `word`."""
    with open("/proc/self/maps") as maps:
        return sorted({line.split()[-1] for line in maps if word in line and line.rstrip().endswith(".so")})


def find_service(node, deadline):
    """The name of the first service of type SERVICE_TYPE, waiting for discovery until `deadline`."""
    while time.monotonic() < deadline:
        for name, types in node.get_service_names_and_types():
            if SERVICE_TYPE in types:
                return name
        rclpy.spin_once(node, timeout_sec=0.1)
    return None


def call(node, client, owner, deadline):
    """The answer to switch_controller(owner), or None at `deadline`."""
    future = client.call_async(SwitchController.Request(owner=owner))
    while not future.done():
        if time.monotonic() > deadline:
            return None
        rclpy.spin_once(node, timeout_sec=0.05)
    answer = future.result()
    return {"success": answer.success, "message": answer.message}


def main():
    deadline = time.monotonic() + (float(sys.argv[1]) if len(sys.argv) > 1 else 30.0)
    rclpy.init()
    node = rclpy.create_node("thymio_rt_msgs_user")
    out = {"module": thymio_rt_msgs.__file__}
    try:
        name = find_service(node, deadline)
        out["service"] = name
        if name is None:
            out["error"] = f"no service of type {SERVICE_TYPE}"
            return 2
        client = node.create_client(SwitchController, name)
        while not client.wait_for_service(timeout_sec=0.1):
            if time.monotonic() > deadline:
                out["error"] = f"{name} not ready"
                return 2
        for key, owner in (("joint", "joint"), ("unknown", "no_such_owner")):
            out[key] = call(node, client, owner, deadline)
            if out[key] is None:
                out["error"] = f"no answer to switch_controller({owner!r})"
                return 2
        return 0
    finally:
        out["libs"] = loaded_libraries("thymio_rt_msgs")
        print(json.dumps(out), flush=True)
        node.destroy_node()
        rclpy.shutdown()


if __name__ == "__main__":
    sys.exit(main())
