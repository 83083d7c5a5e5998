#!/usr/bin/python3
"""A rospy client of thymio-rt's ROS 1 motion limits and cmd_vel watchdog (Debian's rospy and
dynamic_reconfigure, run with the system /usr/bin/python3), for the robot in the root namespace on the
embedded simulator (issue 42, "stops that cannot be slowed").

    motion_peer.py SECONDS

Through /thymio_driver's dynamic_reconfigure server: reads the range of linear.x.max_deceleration, sets
values below it (0 and 1e-9 for max_deceleration, 5e-324 for max_acceleration: each answer is the value in
effect), then 0.05 m/s² (the minimum). Then drives at 0.15 m/s with a cmd_vel stream until the simulator's true
speed (/sim/ground_truth) is there, publishes ONE zero twist and goes silent, recording the true speed until the
robot stands (4 s at most).

Prints one JSON object on its last line: {"range": [min, max], "refused": {"NAME=VALUE": value in effect},
"accepted": value, "at_speed": bool, "samples": [[seconds after the zero twist (header stamp), true speed]]}.
NaN (a limit off) is null.
"""
import sys
import threading
import time

from rospy_peer import done


def nan_null(v):
    return None if isinstance(v, float) and v != v else v


def main(seconds):
    import rospy
    from dynamic_reconfigure.client import Client
    from geometry_msgs.msg import Twist
    from nav_msgs.msg import Odometry

    deadline = time.time() + seconds
    rospy.init_node("motion_peer", anonymous=True, disable_signals=True)
    client = Client("/thymio_driver", timeout=20)
    descriptions = {d["name"]: d for d in client.get_parameter_descriptions(timeout=20) or []}
    d = descriptions.get("linear.x.max_deceleration")
    out = {"range": [d["min"], d["max"]] if d else None, "refused": {}}
    for name, value in [("linear.x.max_deceleration", 0.0), ("linear.x.max_deceleration", 1e-9),
                        ("linear.x.max_acceleration", 5e-324)]:
        answer = client.update_configuration({name: value})
        out["refused"]["%s=%r" % (name, value)] = nan_null(answer.get(name))
    answer = client.update_configuration({"linear.x.max_deceleration": 0.05})
    out["accepted"] = nan_null(answer.get("linear.x.max_deceleration"))

    samples = []
    lock = threading.Lock()

    def on_truth(m):
        with lock:
            samples.append((m.header.stamp.to_sec(), m.twist.twist.linear.x))

    rospy.Subscriber("/sim/ground_truth", Odometry, on_truth, queue_size=100)
    pub = rospy.Publisher("/cmd_vel", Twist, queue_size=1)
    while pub.get_num_connections() == 0 and time.time() < deadline:
        time.sleep(0.02)
    cmd = Twist()
    cmd.linear.x = 0.15
    start = time.time()
    at_speed = False
    # the stream keeps the watchdog fed until the robot is at 0.15 m/s (for at least 1 s)
    while time.time() < deadline:
        pub.publish(cmd)
        with lock:
            v = samples[-1][1] if samples else 0.0
        if time.time() - start > 1.0 and v > 0.135:
            at_speed = True
            break
        time.sleep(0.1)
    out["at_speed"] = at_speed
    t_zero = time.time()
    pub.publish(Twist())
    # silence: nobody commands the robot any more; watched until it stands (a true speed under 5 mm/s), 4 s at most
    end = t_zero + 4.0
    while time.time() < end:
        with lock:
            if any(t >= t_zero and abs(v) < 0.005 for t, v in samples):
                break
        time.sleep(0.05)
    with lock:
        out["samples"] = [[t - t_zero, v] for t, v in samples if t >= t_zero - 0.2]
    done(out)


if __name__ == "__main__":
    main(float(sys.argv[1]))
