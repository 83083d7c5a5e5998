"""Baseline of the latency benchmark: the ROS-Thymio way, in Python.

An rclpy node maps `cmd_vel` to the robot script's `set_speed` event and the script's `odometry`
events to `nav_msgs/Odometry` + `/tf`, with the formulas of ROS-Thymio's BaseDriver
(ros-aseba-interface.md §3.5), talking to the robot over Aseba TCP with thymiodirect (the Python
Aseba client that installs beside rclpy). It is made as fast as that design allows, so that the
comparison is fair: received frames wake the asyncio loop at once (thymiodirect would wait for
its next timer), TCP_NODELAY is set, variable polling is off. Messages are read whole (thymiodirect's
reader takes a short TCP read for a whole message and then fails to decode it). The original stack is slower still:
asebaros adds a ROS hop between the robot and this driver. Like ROS-Thymio's driver it does not load the robot's
script: the benchmark loads the driver script (config/aseba/thymio_ros_playground.aesl on Aseba Playground) first.

  python ros_thymio_baseline.py --port PORT [--namespace NS] [--duration S]

Prints "READY" once the robot is described and the ROS interface is up.
"""
import argparse
import asyncio
import math
import socket
import struct
import sys
import threading
import time

import rclpy
from geometry_msgs.msg import TransformStamped, Twist
from nav_msgs.msg import Odometry
from rclpy.node import Node
from rclpy.qos import QoSProfile
from tf2_msgs.msg import TFMessage
from thymiodirect import connection as tdc
from thymiodirect.message import Message

SET_SPEED, ODOMETRY = 1, 2  # event ids of config/aseba/thymio_ros.aesl
Q0, Q1, AXIS = 0.000332, 0.0, 0.0935  # simulation calibration, as thymio-rt's embedded robot


def read_exact(io, n: int) -> bytes:
    """n bytes from a stream socket (recv may return fewer; thymiodirect assumes it does not)."""
    buf = b""
    while len(buf) < n:
        chunk = io.read(n - len(buf))
        if not chunk:
            raise OSError("the robot closed the connection")
        buf += chunk
    return buf


def whole_read_message(self) -> Message:
    """thymiodirect's message reader, reading whole headers and payloads over TCP."""
    length, source, msg_id = struct.unpack("<HHH", read_exact(self.io, 6))
    return Message(msg_id, source, read_exact(self.io, length))


def fast_input_run(self) -> None:
    """thymiodirect's reader thread, waking the asyncio loop for every message."""
    while self.running:
        try:
            msg = self.read_message()
            msg.decode()
            if self.loop and self.handle_msg:
                asyncio.run_coroutine_threadsafe(self.handle_msg(msg), self.loop)
        except TimeoutError:
            pass
        except OSError:
            return


tdc.InputThread.run = fast_input_run
tdc.InputThread.read_message = whole_read_message


def si_to_aseba(v: float) -> int:
    if Q1 == 0:
        return round(v / Q0)
    return round(0.5 * math.copysign(1, v) * (-Q0 + math.sqrt(Q0 * Q0 + 4 * Q1 * abs(v))) / Q1)


class Baseline(Node):
    def __init__(self, conn: tdc.Connection, node_id: int, namespace: str) -> None:
        super().__init__("thymio_driver_baseline", namespace=namespace)
        self.conn, self.node_id = conn, node_id
        self.odom_pub = self.create_publisher(Odometry, "odom", 10)
        self.tf_pub = self.create_publisher(TFMessage, "/tf", 10)
        self.create_subscription(Twist, "cmd_vel", self.on_cmd_vel, QoSProfile(depth=10))
        self.last = None  # (stamp, left, right)
        self.x = self.y = self.th = 0.0

    def on_cmd_vel(self, msg: Twist) -> None:
        v, w = msg.linear.x, msg.angular.z
        left, right = si_to_aseba(v - w * AXIS / 2), si_to_aseba(v + w * AXIS / 2)
        m = max(abs(left), abs(right))
        if m > 500:
            left, right = int(500 * left / m), int(500 * right / m)
        payload = struct.pack("<hh", left, right)
        self.conn.send(Message(SET_SPEED, 0, payload))

    def on_odometry(self, args) -> None:
        stamp = self.get_clock().now()
        left, right = args[0], args[1]
        if self.last is None:
            self.last = (stamp, left, right)
            return
        t0, l0, r0 = self.last
        self.last = (stamp, left, right)
        dt = (stamp - t0).nanoseconds / 1e9
        if dt <= 0:
            return

        def delta(a, b):
            d = a - b
            if d > 32768:
                d -= 65536
            elif d < -32768:
                d += 65536
            return d

        dl, dr = delta(left, l0), delta(right, r0)
        sl, sr = Q0 * dl + Q1 * dl * abs(dl), Q0 * dr + Q1 * dr * abs(dr)
        dth, ds = (sr - sl) / AXIS, (sl + sr) / 2
        if dth != 0:
            r = ds / dth
            dx, dy = r * math.sin(dth), r * (1 - math.cos(dth))
        else:
            dx, dy = ds, 0.0
        self.x += dx * math.cos(self.th) - dy * math.sin(self.th)
        self.y += dx * math.sin(self.th) + dy * math.cos(self.th)
        self.th += dth
        odom = Odometry()
        odom.header.stamp = stamp.to_msg()
        odom.header.frame_id = "odom"
        odom.child_frame_id = "base_link"
        odom.pose.pose.position.x, odom.pose.pose.position.y = self.x, self.y
        odom.pose.pose.orientation.z, odom.pose.pose.orientation.w = math.sin(self.th / 2), math.cos(self.th / 2)
        odom.twist.twist.linear.x, odom.twist.twist.angular.z = ds / dt, dth / dt
        self.odom_pub.publish(odom)
        t = TransformStamped()
        t.header = odom.header
        t.child_frame_id = "base_link"
        t.transform.translation.x, t.transform.translation.y = self.x, self.y
        t.transform.rotation = odom.pose.pose.orientation
        self.tf_pub.publish(TFMessage(transforms=[t]))


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--duration", type=float, default=60.0)
    p.add_argument("--namespace", default="")
    a = p.parse_args()
    loop = asyncio.new_event_loop()
    conn = tdc.Connection.tcp(host="127.0.0.1", port=a.port, loop=loop, refreshing_rate=None)
    conn.io.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    threading.Thread(target=loop.run_forever, daemon=True).start()
    conn.auto_handshake = True
    conn.handshake()
    deadline = time.time() + 10
    while not conn.remote_node_set and time.time() < deadline:
        time.sleep(0.01)
    if not conn.remote_node_set:
        print("no robot", flush=True)
        return 1
    node_id = next(iter(conn.remote_node_set))
    rclpy.init()
    node = Baseline(conn, node_id, a.namespace)

    async def on_user_event(source, event_id, args):
        if event_id == ODOMETRY:
            node.on_odometry(args)

    conn.on_user_event = on_user_event
    print("READY", flush=True)
    end = time.time() + a.duration
    while rclpy.ok() and time.time() < end:
        rclpy.spin_once(node, timeout_sec=0.1)
    node.destroy_node()
    rclpy.shutdown()
    conn.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
