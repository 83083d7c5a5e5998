#!/usr/bin/python3
"""A rospy client of thymio-rt's ROS 1 joint space, stamped cmd_vel, ground truth and hop times (Debian's rospy,
run with the system /usr/bin/python3).

    rospy_joints.py SCENARIO SECONDS [ARGS...]

Prints one JSON object on its last line. ROS_MASTER_URI and ROS_IP come from the environment. The thymio_rt_msgs
Python classes are generated from msgs/ros/thymio_rt_msgs with genpy (Debian's python3-genpy). Every scenario ends
within SECONDS. The robot's names are in the root namespace (the embedded simulator's robot).

Scenarios:
  joint_states   joint_states received while subscribed: their count, names and owner
  joint_drive [noswitch]
                 switch_controller to "joint" (not with noswitch: the test switched through ROS 2), joint commands
                 (right 4, left 2 rad/s, named in that order) until the ground truth moved forward: the switch's
                 answer, the true x before and after, the last joint state's owner and velocity references
  bad_joint      a joint command naming caster_joint, sent until /diagnostics counts it: the count
  stamped        TwistStamped cmd_vel stamped now until odom moved forward, then ones stamped 10 s ago until
                 /diagnostics counts them: the distance and the count
  ground_truth   one sim/ground_truth message: frames and pose
  hops           the /diagnostics status "<node>: Hops": its level and keys
"""
import json
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OWN = os.path.join(ROOT, "msgs", "ros", "thymio_rt_msgs")
VENDORED = os.path.join(ROOT, "nrt", "ros1_client", "msg")


def thymio_rt_msgs():
    """Generates (genpy) and imports the thymio_rt_msgs classes."""
    from genpy.generator import MsgGenerator, SrvGenerator
    from genpy import generate_initpy
    import importlib

    out = tempfile.mkdtemp(prefix="thymio_rt_msgs_py_")
    pkg = os.path.join(out, "thymio_rt_msgs")
    search = {"thymio_rt_msgs": [os.path.join(OWN, "msg")]}
    for dep in ("std_msgs", "geometry_msgs"):
        search[dep] = [os.path.join(VENDORED, dep, "msg")]
    for kind, gen in (("msg", MsgGenerator()), ("srv", SrvGenerator())):
        src = os.path.join(OWN, kind)
        files = sorted(os.path.join(src, f) for f in os.listdir(src))
        dst = os.path.join(pkg, kind)
        if gen.generate_messages("thymio_rt_msgs", files, dst, search) != 0:
            raise RuntimeError("genpy failed on " + src)
        generate_initpy.write_modules(dst)
    with open(os.path.join(pkg, "__init__.py"), "w"):
        pass
    sys.path.insert(0, out)
    module = importlib.import_module("thymio_rt_msgs")
    importlib.import_module("thymio_rt_msgs.msg")
    importlib.import_module("thymio_rt_msgs.srv")
    return module


def done(result):
    print(json.dumps(result) + "\n", end="", flush=True)  # one write: lines from callback threads never interleave
    sys.exit(0)


def init():
    import rospy
    rospy.init_node("rospy_joints", anonymous=True, disable_signals=True)


class Latest:
    """The latest message of a topic, and how many came."""

    def __init__(self, topic, ty):
        import rospy
        self.msg, self.count = None, 0
        rospy.Subscriber(topic, ty, self.on, queue_size=10)

    def on(self, m):
        self.msg = m
        self.count += 1

    def fresh(self, deadline):
        """A message newer than the ones seen so far (None at the deadline)."""
        n = self.count
        while time.time() < deadline and self.count == n:
            time.sleep(0.01)
        return self.msg if self.count > n else None


def diag_value(array, key):
    for st in array.status:
        for kv in st.values:
            if kv.key == key:
                return kv.value
    return None


def until_counted(deadline, key, send):
    """Calls send() until /diagnostics shows `key` above 0; its value."""
    from diagnostic_msgs.msg import DiagnosticArray
    diag = Latest("/diagnostics", DiagnosticArray)
    value = None
    while time.time() < deadline:
        send()
        m = diag.fresh(min(deadline, time.time() + 1.5))
        if m is not None:
            value = diag_value(m, key)
            if value not in (None, "0"):
                break
    return value


def joint_states(deadline):
    rt = thymio_rt_msgs()
    init()
    js = Latest("/thymio_driver/joint_states", rt.msg.JointState)
    m = None
    while time.time() < deadline and js.count < 5:
        m = js.fresh(deadline) or m
    done({"count": js.count, "name": list(m.name) if m else None, "owner": m.owner if m else None,
          "position": list(m.position) if m else None})


def switch_to_joint(deadline, rt, out):
    """Calls /switch_controller with owner joint; its answer in out["switch"]."""
    import rospy
    try:
        rospy.wait_for_service("/switch_controller", timeout=max(1, deadline - time.time()))
        switch = rospy.ServiceProxy("/switch_controller", rt.srv.SwitchController)
        r = switch("joint")
        out["switch"] = [r.success, r.message]
    except Exception as e:  # no switch: say so, the test fails naming it
        out["switch"] = [False, str(e)]


def joint_drive(deadline, noswitch=None):
    rt = thymio_rt_msgs()
    import rospy
    from nav_msgs.msg import Odometry
    from sensor_msgs.msg import JointState
    init()
    truth = Latest("/sim/ground_truth", Odometry)
    js = Latest("/thymio_driver/joint_states", rt.msg.JointState)
    out = {}
    if noswitch == "noswitch":
        out["switch"] = [True, "switched by the test"]
    else:
        switch_to_joint(deadline, rt, out)
    if not out["switch"][0]:
        done(out)
    first = truth.fresh(deadline)
    out["x0"] = first.pose.pose.position.x if first else None
    pub = rospy.Publisher("/thymio_driver/joint_command", JointState, queue_size=1)
    cmd = JointState(name=["right_wheel_joint", "left_wheel_joint"], velocity=[4.0, 2.0])
    x1 = out["x0"]
    while time.time() < deadline and out["x0"] is not None and x1 - out["x0"] < 0.05:
        pub.publish(cmd)
        time.sleep(0.1)
        if truth.msg is not None:
            x1 = truth.msg.pose.pose.position.x
    out["x1"] = x1
    m = js.fresh(deadline)
    out["owner"] = m.owner if m else None
    out["velocity_reference"] = list(m.velocity_reference) if m else None
    done(out)


def bad_joint(deadline):
    import rospy
    from sensor_msgs.msg import JointState
    init()
    pub = rospy.Publisher("/thymio_driver/joint_command", JointState, queue_size=1)
    bad = JointState(name=["caster_joint"], velocity=[1.0])
    done({"bad": until_counted(deadline, "Bad joint commands dropped", lambda: pub.publish(bad))})


def stamped(deadline):
    import rospy
    from geometry_msgs.msg import TwistStamped
    from nav_msgs.msg import Odometry
    init()
    odom = Latest("/odom", Odometry)
    pub = rospy.Publisher("/cmd_vel", TwistStamped, queue_size=1)
    first = odom.fresh(deadline)
    x0 = first.pose.pose.position.x if first else None
    x1 = x0
    cmd = TwistStamped()
    cmd.twist.linear.x = 0.05
    while time.time() < deadline and x0 is not None and x1 - x0 < 0.01:
        cmd.header.stamp = rospy.Time.now()
        pub.publish(cmd)
        time.sleep(0.05)
        x1 = odom.msg.pose.pose.position.x
    stop = TwistStamped()
    stop.header.stamp = rospy.Time.now()
    pub.publish(stop)

    def old():
        cmd.header.stamp = rospy.Time.now() - rospy.Duration(10)
        pub.publish(cmd)
    stale = until_counted(deadline, "Stale cmd_vel ignored", old)
    done({"dx": None if x0 is None else x1 - x0, "stale": stale})


def ground_truth(deadline):
    import rospy
    from nav_msgs.msg import Odometry
    init()
    try:
        m = rospy.wait_for_message("/sim/ground_truth", Odometry, timeout=max(1, deadline - time.time()))
    except rospy.ROSException as e:
        done({"error": str(e)})
    p = m.pose.pose
    done({"frame": m.header.frame_id, "child": m.child_frame_id, "x": p.position.x, "y": p.position.y,
          "qz": p.orientation.z, "qw": p.orientation.w})


def hops(deadline):
    """The driver's Hops status once its odometry publish hop is timed (odometry is published, and timed,
    only while someone listens: this scenario subscribes to /odom), or the last one seen at the deadline."""
    from diagnostic_msgs.msg import DiagnosticArray
    from nav_msgs.msg import Odometry
    init()
    diag = Latest("/diagnostics", DiagnosticArray)
    Latest("/odom", Odometry)
    seen = {"name": None}
    while time.time() < deadline:
        m = diag.fresh(deadline)
        for st in (m.status if m else []):
            if st.name.endswith(": Hops"):
                seen = {"name": st.name, "level": st.level, "keys": [kv.key for kv in st.values],
                        "values": {kv.key: kv.value for kv in st.values}}
                if any(k.startswith("Odometry: publish") and v != "no samples" for k, v in seen["values"].items()):
                    done(seen)
    done(seen)


if __name__ == "__main__":
    scenario, seconds = sys.argv[1], float(sys.argv[2])
    deadline = time.time() + seconds
    scenarios = {"joint_states": joint_states, "joint_drive": joint_drive, "bad_joint": bad_joint,
                 "stamped": stamped, "ground_truth": ground_truth, "hops": hops}
    if scenario not in scenarios:
        sys.exit("unknown scenario " + scenario)
    scenarios[scenario](deadline, *sys.argv[3:])
