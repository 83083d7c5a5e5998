#!/usr/bin/python3
"""A rospy client of thymio-rt's ROS 1 front end (Debian's rospy, run with the system /usr/bin/python3).

    rospy_peer.py SCENARIO [ARGS...]

Prints one JSON object on its last line. ROS_MASTER_URI and ROS_IP come from the environment. The asebaros_msgs
Python classes are generated from nrt/ros1/msg with genpy (Debian's python3-genpy) into a temporary directory.

Scenarios:
  graph               what the master knows of /asebaros (node URI, its publications, subscriptions, services)
  drive SECONDS [NS]  cmd_vel forward until odom moved (and /tf odom -> base_link seen), within SECONDS
                      (the robot's topics in namespace NS: /NS/cmd_vel, /NS/odom, frames NS/...)
  params NAME=VALUE.. sets parameters (VALUE a Python literal) on the parameter server
  odom SECONDS        one odom message within SECONDS
  vars                get/set_variable through service proxies, and bad requests
  latency N           N cmd_vel -> odometry round trips (µs), for the benchmark
"""
import json
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MSG_DIR = os.path.join(ROOT, "nrt", "ros1", "msg")


def asebaros_msgs():
    """Generates and imports the asebaros_msgs classes."""
    from genpy.generator import MsgGenerator, SrvGenerator
    from genpy import generate_initpy

    out = tempfile.mkdtemp(prefix="asebaros_msgs_py_")
    pkg = os.path.join(out, "asebaros_msgs")
    search = {"asebaros_msgs": [os.path.join(MSG_DIR, "asebaros_msgs", "msg")],
              "std_msgs": [os.path.join(MSG_DIR, "std_msgs", "msg")]}
    for kind, gen in (("msg", MsgGenerator()), ("srv", SrvGenerator())):
        src = os.path.join(MSG_DIR, "asebaros_msgs", kind)
        files = sorted(os.path.join(src, f) for f in os.listdir(src))
        dst = os.path.join(pkg, kind)
        if gen.generate_messages("asebaros_msgs", files, dst, search) != 0:
            raise RuntimeError("genpy failed on " + src)
        generate_initpy.write_modules(dst)
    with open(os.path.join(pkg, "__init__.py"), "w"):
        pass
    sys.path.insert(0, out)
    import asebaros_msgs.msg
    import asebaros_msgs.srv
    return asebaros_msgs


def done(result):
    print(json.dumps(result), flush=True)
    sys.exit(0)


def graph():
    import rosgraph
    master = rosgraph.Master("/rospy_peer")
    uri = master.lookupNode("/asebaros")
    pubs, subs, srvs = master.getSystemState()
    mine = lambda entries: sorted(n for n, nodes in entries if "/asebaros" in nodes)
    done({"uri": uri, "publishes": mine(pubs), "subscribes": mine(subs), "services": mine(srvs)})


def params(assignments):
    import ast
    import rosgraph
    master = rosgraph.Master("/rospy_peer")
    for a in assignments:
        name, value = a.split("=", 1)
        master.setParam(name, ast.literal_eval(value))
    done({"set": len(assignments)})


def drive(seconds, ns=""):
    import rospy
    from geometry_msgs.msg import Twist
    from nav_msgs.msg import Odometry
    from tf2_msgs.msg import TFMessage

    rospy.init_node("rospy_peer", anonymous=True, disable_signals=True)
    state = {"odom": None, "tf": None, "count": 0, "x0": None}

    def on_odom(m):
        if state["x0"] is None:
            state["x0"] = m.pose.pose.position.x
        state["odom"] = m
        state["count"] += 1

    def on_tf(m):
        for t in m.transforms:
            if t.child_frame_id.endswith("left_wheel_link") and t.header.frame_id.startswith(ns):
                state["left_wheel_y"] = t.transform.translation.y
            if t.child_frame_id == (ns + "/base_link" if ns else "base_link"):
                state["tf"] = t

    prefix = "/" + ns if ns else ""
    rospy.Subscriber(prefix + "/odom", Odometry, on_odom, queue_size=10)
    rospy.Subscriber("/tf", TFMessage, on_tf, queue_size=10)
    pub = rospy.Publisher(prefix + "/cmd_vel", Twist, queue_size=1)
    deadline = time.time() + seconds
    cmd = Twist()
    cmd.linear.x = 0.05
    while time.time() < deadline:
        pub.publish(cmd)
        o, t, x0 = state["odom"], state["tf"], state["x0"]
        if o is not None and t is not None and o.pose.pose.position.x - x0 > 0.01 \
                and t.transform.translation.x - x0 > 0.01:
            break
        time.sleep(0.05)
    pub.publish(Twist())
    o, t = state["odom"], state["tf"]
    done({
        "odom_count": state["count"],
        "odom_dx": o.pose.pose.position.x - state["x0"] if o else None,
        "odom_vx": o.twist.twist.linear.x if o else None,
        "odom_frame": o.header.frame_id if o else None,
        "tf_dx": t.transform.translation.x - state["x0"] if t and o else None,
        "tf_parent": t.header.frame_id if t else None,
        "left_wheel_y": state.get("left_wheel_y"),
    })


def odom(seconds):
    import rospy
    from nav_msgs.msg import Odometry

    rospy.init_node("rospy_peer", anonymous=True, disable_signals=True)
    try:
        m = rospy.wait_for_message("/odom", Odometry, timeout=seconds)
        done({"odom": True, "frame": m.header.frame_id})
    except rospy.ROSException as e:
        done({"odom": False, "error": str(e)})


def vars_():
    am = asebaros_msgs()
    import rospy

    rospy.init_node("rospy_peer", anonymous=True, disable_signals=True)
    rospy.wait_for_service("/aseba/get_variable", timeout=10)
    get = rospy.ServiceProxy("/aseba/get_variable", am.srv.GetVariable)
    put = rospy.ServiceProxy("/aseba/set_variable", am.srv.SetVariable)
    nodes = rospy.ServiceProxy("/aseba/get_nodes", am.srv.GetNodeList)

    def error_of(call):
        try:
            call()
            return None
        except rospy.ServiceException as e:
            return str(e)

    out = {"nodes": [(n.id, n.name) for n in nodes(False).nodes]}
    out["id"] = list(get("_id").data)
    put("leds.top", [32, 0, 16])
    deadline = time.time() + 5
    while time.time() < deadline:
        out["leds_top"] = list(get("leds.top").data)
        if out["leds_top"] == [32, 0, 16]:
            break
        time.sleep(0.05)
    out["unknown_get"] = error_of(lambda: get("no.such.variable"))
    out["unknown_set"] = error_of(lambda: put("no.such.variable", [1]))
    out["wrong_size"] = error_of(lambda: put("leds.top", [1, 2, 3, 4, 5, 6, 7, 8, 9]))
    done(out)


def latency(n):
    import rospy
    import threading
    from geometry_msgs.msg import Twist
    from nav_msgs.msg import Odometry

    rospy.init_node("rospy_peer", anonymous=True, disable_signals=True)
    moving = threading.Event()
    stopped = threading.Event()

    def on_odom(m):
        v = m.twist.twist.linear.x
        if abs(v) > 0.005:
            moving.set()
        elif abs(v) < 1e-4:
            stopped.set()

    rospy.Subscriber("/odom", Odometry, on_odom, queue_size=100, tcp_nodelay=True)
    pub = rospy.Publisher("/cmd_vel", Twist, queue_size=1, tcp_nodelay=True)
    rospy.wait_for_message("/odom", Odometry, timeout=10)
    while pub.get_num_connections() == 0:
        time.sleep(0.01)
    samples = []
    go, halt = Twist(), Twist()
    go.linear.x = 0.1
    for _ in range(n):
        stopped.clear()
        pub.publish(halt)
        stopped.wait(5)
        moving.clear()
        t0 = time.monotonic()
        pub.publish(go)
        if moving.wait(5):
            samples.append((time.monotonic() - t0) * 1e6)
    pub.publish(halt)
    done({"samples_us": samples})


if __name__ == "__main__":
    scenario, args = sys.argv[1], sys.argv[2:]
    if scenario == "graph":
        graph()
    elif scenario == "drive":
        drive(float(args[0]), *args[1:])
    elif scenario == "params":
        params(args)
    elif scenario == "odom":
        odom(float(args[0]))
    elif scenario == "vars":
        vars_()
    elif scenario == "latency":
        latency(int(args[0]))
    else:
        sys.exit("unknown scenario " + scenario)
