#!/usr/bin/python3
"""A rospy client of thymio-rt's ROS 1 front end (Debian's rospy, run with the system /usr/bin/python3).

    rospy_peer.py SCENARIO [ARGS...]

Prints one JSON object on its last line. ROS_MASTER_URI and ROS_IP come from the environment. The asebaros_msgs
Python classes are generated from nrt/ros1_client/msg with genpy (Debian's python3-genpy) into a temporary directory.

Scenarios:
  graph               what the master knows of /asebaros (node URI, its publications, subscriptions, services)
  drive SECONDS [NS]  cmd_vel forward until odom moved (and /tf odom -> base_link seen), within SECONDS
                      (the robot's topics in namespace NS: /NS/cmd_vel, /NS/odom, frames NS/...)
  params NAME=VALUE.. sets parameters (VALUE a Python literal) on the parameter server
  odom SECONDS        one odom message within SECONDS
  vars                get/set_variable through service proxies, and bad requests
  latency N           N cmd_vel -> odometry round trips (µs), for the benchmark
  thymio SECONDS      the rest of ROS-Thymio's interface: LEDs (Led, body ColorRGBA), comm/tx and an anonymous
                      event ROS -> Aseba seen in the robot's variables, then one of the wrong size; a refused Led; imu, temperature, the latched
                      robot_description, obstacle_stop and /tf_static, and /diagnostics received
  persistent N        N get_variable calls over one persistent connection, an error on it, then one more call
  load_script FILE BROKEN
                      aseba/load_script of FILE (constant GAIN=3, events ping/pong), an anonymous ping answered
                      on /aseba/events/pong; a missing file and BROKEN are service errors
  load_script_nowhere FILE
                      aseba/load_script of FILE, which has code for no node present: the call's error (null if none)
"""
import json
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MSG_DIR = os.path.join(ROOT, "nrt", "ros1_client", "msg")


def package_dir(package):
    """A package of nrt/ros1_client/msg, or thymio-rt's own of msgs/ros (thymio_rt_msgs, defined once for both ROS)."""
    vendored = os.path.join(MSG_DIR, package)
    return vendored if os.path.isdir(vendored) else os.path.join(ROOT, "msgs", "ros", package)


def generated(package):
    """Generates (genpy) and imports the Python classes of a package of nrt/ros1_client/msg (or thymio_rt_msgs)."""
    from genpy.generator import MsgGenerator, SrvGenerator
    from genpy import generate_initpy
    import importlib

    out = tempfile.mkdtemp(prefix=package + "_py_")
    pkg = os.path.join(out, package)
    search = {p: [os.path.join(MSG_DIR, p, "msg")] for p in os.listdir(MSG_DIR)}
    search[package] = [os.path.join(package_dir(package), "msg")]
    for kind, gen in (("msg", MsgGenerator()), ("srv", SrvGenerator())):
        src = os.path.join(package_dir(package), kind)
        if not os.path.isdir(src):
            continue
        files = sorted(os.path.join(src, f) for f in os.listdir(src))
        dst = os.path.join(pkg, kind)
        if gen.generate_messages(package, files, dst, search) != 0:
            raise RuntimeError("genpy failed on " + src)
        generate_initpy.write_modules(dst)
    with open(os.path.join(pkg, "__init__.py"), "w"):
        pass
    sys.path.insert(0, out)
    module = importlib.import_module(package)
    for kind in ("msg", "srv"):
        if os.path.isdir(os.path.join(pkg, kind)):
            importlib.import_module(package + "." + kind)
    return module


def asebaros_msgs():
    """The asebaros_msgs classes."""
    return generated("asebaros_msgs")


def error_of(call):
    """None if the service call succeeds, else the error message the caller sees."""
    import rospy
    try:
        call()
        return None
    except rospy.ServiceException as e:
        return str(e)


def done(result):
    print(json.dumps(result) + "\n", end="", flush=True)  # one write: lines from callback threads never interleave
    sys.exit(0)


def graph(node="/asebaros"):
    import rosgraph
    master = rosgraph.Master("/rospy_peer")
    uri = master.lookupNode(node)
    pubs, subs, srvs = master.getSystemState()
    mine = lambda entries: sorted(n for n, nodes in entries if node in nodes)
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


def thymio(seconds):
    am = asebaros_msgs()
    tm = generated("thymio_msgs")
    import rospy
    from std_msgs.msg import Bool, ColorRGBA, Int16, String
    from sensor_msgs.msg import Imu, Temperature
    from tf2_msgs.msg import TFMessage
    from diagnostic_msgs.msg import DiagnosticArray

    rospy.init_node("rospy_peer", anonymous=True, disable_signals=True)
    got = {}

    def keep(name):
        return lambda m: got.setdefault(name, m)

    for topic, ty in (("/imu", Imu), ("/temperature", Temperature), ("/robot_description", String),
                      ("/obstacle_stop", Bool), ("/tf_static", TFMessage), ("/diagnostics", DiagnosticArray)):
        rospy.Subscriber(topic, ty, keep(topic), queue_size=10)
    top = rospy.Publisher("/led/body/top", ColorRGBA, queue_size=1)
    led = rospy.Publisher("/led", tm.msg.Led, queue_size=6)
    comm = rospy.Publisher("/comm/tx", Int16, queue_size=1)
    anonymous = rospy.Publisher("/aseba/anonymous_events", am.msg.AnonymousEvent, queue_size=10)
    rospy.wait_for_service("/aseba/get_variable", timeout=10)
    get = rospy.ServiceProxy("/aseba/get_variable", am.srv.GetVariable)
    describe = rospy.ServiceProxy("/aseba/get_description", am.srv.GetDescription)
    deadline = time.time() + seconds

    def until(variable, want, publish):
        """Publishes until the robot's variable reads `want` (the robot applies events in its main loop)."""
        value = None
        while time.time() < deadline:
            publish()
            value = list(get(variable).data)
            if value == want:
                break
            time.sleep(0.1)
        return value

    out = {}
    out["leds_top"] = until("leds.top", [32, 0, 16], lambda: top.publish(ColorRGBA(1.0, 0.0, 0.5, 1.0)))
    out["leds_circle"] = until("leds.circle", [32, 16, 0, 0, 0, 0, 0, 32],
                               lambda: led.publish(tm.msg.Led(id=0, values=[1, 0.5, 0, 0, 0, 0, 0, 1])))
    out["comm_tx"] = until("prox.comm.tx", [321], lambda: comm.publish(Int16(321)))
    led.publish(tm.msg.Led(id=9, values=[1.0]))  # no such group: refused by the driver, which says so
    events = list(describe().description.events)
    set_led_top = events.index("set_led_top")
    out["leds_top_anonymous"] = until(
        "leds.top", [0, 32, 0],
        lambda: anonymous.publish(am.msg.AnonymousEvent(source=0, type=set_led_top, data=[0, 32, 0])))
    # the wrong size (set_led_top takes 3 values): refused by the driver, which says so
    anonymous.publish(am.msg.AnonymousEvent(source=0, type=set_led_top, data=[1]))
    while time.time() < deadline and len(got) < 6:
        time.sleep(0.05)
    imu, temp = got.get("/imu"), got.get("/temperature")
    desc, stop, static = got.get("/robot_description"), got.get("/obstacle_stop"), got.get("/tf_static")
    out.update({
        "imu_az": imu.linear_acceleration.z if imu else None,
        "imu_frame": imu.header.frame_id if imu else None,
        "temperature": temp.temperature if temp else None,
        "description": desc.data[:200] if desc else None,
        "obstacle_stop": stop.data if stop else None,
        "tf_static": sorted(t.child_frame_id for t in static.transforms) if static else None,
        "diagnostics": {st.name: [st.level, st.message] for st in got["/diagnostics"].status}
        if "/diagnostics" in got else None,
    })
    done(out)


def load_script(path, broken):
    am = asebaros_msgs()
    import rospy

    rospy.init_node("rospy_peer", anonymous=True, disable_signals=True)
    rospy.wait_for_service("/aseba/load_script", timeout=10)
    load = rospy.ServiceProxy("/aseba/load_script", am.srv.LoadScript)

    out = {"loaded": error_of(lambda: load(file_name=path, constants=[am.msg.Constant("GAIN", 3)]))}
    pongs = []
    rospy.Subscriber("/aseba/events/pong", am.msg.Event, pongs.append, queue_size=10)
    anonymous = rospy.Publisher("/aseba/anonymous_events", am.msg.AnonymousEvent, queue_size=10)
    deadline = time.time() + 30
    while time.time() < deadline and not pongs:
        anonymous.publish(am.msg.AnonymousEvent(source=0, type=0, data=[7]))  # ping is event 0
        time.sleep(0.2)
    out["pong"] = list(pongs[0].data) if pongs else None
    out["missing"] = error_of(lambda: load(file_name=path + ".missing"))
    out["broken"] = error_of(lambda: load(file_name=broken))
    done(out)


def load_script_nowhere(path):
    """aseba/load_script of a file with code for no node present: whether the call fails, and with what."""
    am = asebaros_msgs()
    import rospy

    rospy.init_node("rospy_peer", anonymous=True, disable_signals=True)
    rospy.wait_for_service("/aseba/load_script", timeout=10)
    load = rospy.ServiceProxy("/aseba/load_script", am.srv.LoadScript)
    done({"error": error_of(lambda: load(file_name=path))})


def persistent(n):
    am = asebaros_msgs()
    import rospy

    rospy.init_node("rospy_peer", anonymous=True, disable_signals=True)
    rospy.wait_for_service("/aseba/get_variable", timeout=10)
    get = rospy.ServiceProxy("/aseba/get_variable", am.srv.GetVariable, persistent=True)
    ids = [list(get("_id").data) for _ in range(n)]
    err = error_of(lambda: get("no.such.variable"))
    after = list(get("_id").data)
    get.close()
    done({"ids": ids, "error": err, "after_error": after})


if __name__ == "__main__":
    scenario, args = sys.argv[1], sys.argv[2:]
    if scenario == "graph":
        graph(*args)
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
    elif scenario == "thymio":
        thymio(float(args[0]))
    elif scenario == "persistent":
        persistent(int(args[0]))
    elif scenario == "load_script":
        load_script(args[0], args[1])
    elif scenario == "load_script_nowhere":
        load_script_nowhere(args[0])
    else:
        sys.exit("unknown scenario " + scenario)
