"""Listens to what `thymio-rt replay --ros` publishes and compares it with the recording, read by the mcap project's
reader: prints one JSON line {"event": "ready"} once subscribed, then {"event": "done", ...} with the odom messages
received, those recorded on the same topic, whether their positions and orientations are equal in order, and the
/tf and joint_states counts. Usage: replay_listener.py ODOM_TOPIC JOINTS_TOPIC COUNT TIMEOUT_S RECORDING.mcap"""
import json
import sys
import time

import rclpy
from rclpy.qos import QoSProfile, ReliabilityPolicy
from nav_msgs.msg import Odometry
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory

odom_topic, joints_topic, count, timeout, path = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
rclpy.init()
node = rclpy.create_node("replay_listener")
qos = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
got, tf, joints = [], [0], [0]
node.create_subscription(Odometry, odom_topic, lambda m: got.append(m), qos)
node.create_subscription(TFMessage, "/tf", lambda m: tf.__setitem__(0, tf[0] + 1), qos)
node.create_subscription(JointState, joints_topic, lambda m: joints.__setitem__(0, joints[0] + 1), qos)
print(json.dumps({"event": "ready"}), flush=True)
end = time.monotonic() + timeout
while len(got) < count and time.monotonic() < end:
    rclpy.spin_once(node, timeout_sec=0.05)
# the last /tf and joint_states of the last odom
for _ in range(20):
    rclpy.spin_once(node, timeout_sec=0.01)

recorded = []
with open(path, "rb") as f:
    reader = make_reader(f, decoder_factories=[DecoderFactory()])
    for schema, channel, message, msg in reader.iter_decoded_messages(topics=[odom_topic]):
        recorded.append(msg)


def pose(m):
    p, q = m.pose.pose.position, m.pose.pose.orientation
    t = m.twist.twist
    return [p.x, p.y, q.z, q.w, t.linear.x, t.angular.z]


equal = len(got) == len(recorded) and all(pose(a) == pose(b) for a, b in zip(got, recorded))
first_diff = next((i for i, (a, b) in enumerate(zip(got, recorded)) if pose(a) != pose(b)), None)
print(json.dumps({"event": "done", "received": len(got), "recorded": len(recorded), "equal": equal,
                  "first_difference": first_diff, "tf": tf[0], "joint_states": joints[0],
                  "frame": got[0].header.frame_id if got else None,
                  "child": got[0].child_frame_id if got else None}), flush=True)
node.destroy_node()
rclpy.shutdown()
