#!/usr/bin/python3
"""The ROS 1 end of the latency benchmark (Debian's rospy, another process than the driver): the same client as
e2e_client.py (rclpy) on ROS 1: publishes `cmd_vel` at a fixed rate and receives `odom`.

  /usr/bin/python3 e2e_client_ros1.py --out FILE --duration S [--rate HZ] [--timeout S]

ROS_MASTER_URI and ROS_IP come from the environment. Prints READY once the driver's `cmd_vel` subscription is
connected and a first `odom` came, then runs for S seconds and writes FILE: {"cmd_vel": [[t_ns, linear_x], ...],
"odom": [[t_ns, x, y, yaw], ...]}, t_ns = time.monotonic_ns() just before each publish and in each odom callback
(rospy runs it on the subscription's own thread). Both connections ask for TCP_NODELAY. The speed alternates as in
e2e_client.py.
"""
import argparse
import json
import math
import sys
import threading
import time

import rospy
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--duration", type=float, required=True)
    p.add_argument("--rate", type=float, default=20.0)
    p.add_argument("--timeout", type=float, default=60.0, help="longest wait for the driver's endpoints")
    a = p.parse_args()
    rospy.init_node("latency_client", anonymous=True, disable_signals=True)
    odom_rows, cmd_rows = [], []
    first = threading.Event()

    def on_odom(msg: Odometry) -> None:
        t = time.monotonic_ns()
        q = msg.pose.pose.orientation
        odom_rows.append((t, msg.pose.pose.position.x, msg.pose.pose.position.y, 2 * math.atan2(q.z, q.w)))
        first.set()

    rospy.Subscriber("/odom", Odometry, on_odom, queue_size=1000, tcp_nodelay=True)
    pub = rospy.Publisher("/cmd_vel", Twist, queue_size=10, tcp_nodelay=True)
    deadline = time.monotonic() + a.timeout
    while (pub.get_num_connections() == 0 or not first.is_set()) and time.monotonic() < deadline:
        time.sleep(0.05)
    if pub.get_num_connections() == 0 or not first.is_set():
        print("the driver's cmd_vel subscription or odom publisher did not appear", flush=True)
        return 1
    print("READY", flush=True)
    period = 1.0 / a.rate
    end = time.monotonic() + a.duration
    k = 0
    next_t = time.monotonic()
    while time.monotonic() < end:
        msg = Twist()
        msg.linear.x = (1 if k % 2 == 0 else -1) * (0.03 + 0.01 * (k % 5))
        k += 1
        cmd_rows.append((time.monotonic_ns(), msg.linear.x))
        pub.publish(msg)
        next_t += period
        time.sleep(max(0.0, next_t - time.monotonic()))
    # let the last cmd_vel reach the wire before the stop, which a driver may coalesce it with
    time.sleep(0.2)
    pub.publish(Twist())  # stop the robot
    with open(a.out, "w") as f:
        json.dump({"cmd_vel": cmd_rows, "odom": list(odom_rows)}, f)
    print(f"DONE {len(cmd_rows)} cmd_vel, {len(odom_rows)} odom", flush=True)
    rospy.signal_shutdown("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
