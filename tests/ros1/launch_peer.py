#!/usr/bin/python3
"""The ROS 1 tools' side of the launch tests (tests/ros1/launch.rs): Debian's rospy, tf2_ros and rosbag, run with
the system /usr/bin/python3.

    launch_peer.py SCENARIO [ARGS...]

Prints one JSON object on its last line. ROS_MASTER_URI and ROS_IP come from the environment.

Scenarios:
  model NS CMD_VEL RSP SECONDS
      within SECONDS: the parameter NS/robot_description is set; cmd_vel forward on the topic CMD_VEL; a tf2_ros
      listener resolves NS/odom -> NS/base_link -> both wheels (NS/left_wheel_link, NS/right_wheel_link) and the
      robot moved forward in odom; who published each wheel's transform on /tf (the node RSP, robot_state_publisher,
      expected among them). Stops the robot at the end.
  bag FILE
      the number of messages of each topic of the bag FILE (rosbag's Python API)
"""
import json
import sys
import time


def done(result):
    print(json.dumps(result), flush=True)
    sys.exit(0)


def model(ns, cmd_vel, rsp, seconds):
    import rosgraph
    import rospy
    import tf2_ros
    from geometry_msgs.msg import Twist
    from tf2_msgs.msg import TFMessage

    rospy.init_node("launch_peer", anonymous=True, disable_signals=True)
    prefix = ns.strip("/")
    frame = lambda leaf: f"{prefix}/{leaf}" if prefix else leaf
    odom, base = frame("odom"), frame("base_link")
    wheels = [frame("left_wheel_link"), frame("right_wheel_link")]
    publishers = {w: set() for w in wheels}

    def on_tf(m):
        caller = m._connection_header.get("callerid", "?")
        for t in m.transforms:
            if t.child_frame_id in publishers:
                publishers[t.child_frame_id].add(caller)

    buffer = tf2_ros.Buffer()
    tf2_ros.TransformListener(buffer)
    rospy.Subscriber("/tf", TFMessage, on_tf, queue_size=100)
    pub = rospy.Publisher(cmd_vel, Twist, queue_size=1)
    master = rosgraph.Master("/launch_peer")
    deadline = time.monotonic() + float(seconds)
    result = {"description": None, "rsp_uri": None, "chain": None, "base_x": None}
    forward = Twist()
    forward.linear.x = 0.05
    while time.monotonic() < deadline:
        if result["description"] is None and rospy.has_param(ns.rstrip("/") + "/robot_description"):
            result["description"] = len(rospy.get_param(ns.rstrip("/") + "/robot_description"))
        if result["rsp_uri"] is None:
            try:
                result["rsp_uri"] = master.lookupNode(rsp)
            except rosgraph.MasterError:
                pass
        pub.publish(forward)
        try:
            chain = {}
            for side, w in zip(["left", "right"], wheels):
                t = buffer.lookup_transform(odom, w, rospy.Time(0)).transform.translation
                chain[side] = [t.x, t.y, t.z]
            # through base_link: the wheel as seen from the base
            for w in wheels:
                buffer.lookup_transform(base, w, rospy.Time(0))
            result["chain"] = chain
            result["base_x"] = buffer.lookup_transform(odom, base, rospy.Time(0)).transform.translation.x
        except (tf2_ros.LookupException, tf2_ros.ConnectivityException, tf2_ros.ExtrapolationException):
            pass
        if (
            result["description"]
            and result["chain"]
            and (result["base_x"] or 0.0) > 0.01
            and all(rsp in p for p in publishers.values())
        ):
            break
        time.sleep(0.1)
    pub.publish(Twist())
    result["wheel_publishers"] = {w: sorted(p) for w, p in publishers.items()}
    done(result)


def bag(path):
    import rosbag

    counts = {}
    with rosbag.Bag(path) as b:
        for topic, _, _ in b.read_messages():
            counts[topic] = counts.get(topic, 0) + 1
    done({"counts": counts})


if __name__ == "__main__":
    scenario, args = sys.argv[1], sys.argv[2:]
    if scenario == "model":
        model(*args)
    elif scenario == "bag":
        bag(*args)
    else:
        sys.exit(f"unknown scenario {scenario}")
