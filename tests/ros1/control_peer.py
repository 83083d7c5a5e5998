#!/usr/bin/python3
"""A rospy client of thymio-rt's ROS 1 control interface (Debian's rospy, run with the system /usr/bin/python3):
the communication switch and the RT controllers' endpoints of the robot in the root namespace.

    control_peer.py control SECONDS

Prints one JSON object on its last line: the switch's answers (an unknown owner, calibrate_motors, go_to_pose,
ros), what a late subscriber of the latched controller_owner reads after each accepted switch, go_to_pose's
set_goal answers (a finite goal, a NaN one), whether its `reached` topic said false then true for a goal by
service and for one by topic, and the odometry pose once the topic's goal was reached. thymio_rt_msgs' classes
are generated with genpy (tests/ros1/rospy_peer.py).
"""
import json
import math
import sys
import time

from rospy_peer import done, generated

BASE = "/thymio_driver/controllers/go_to_pose/"


def wait(condition, deadline, what):
    while not condition():
        if time.time() > deadline:
            done({"error": "timed out waiting for " + what})
        time.sleep(0.02)


def control(seconds):
    rt = generated("thymio_rt_msgs")
    import rospy
    from geometry_msgs.msg import Pose2D
    from nav_msgs.msg import Odometry
    from std_msgs.msg import Bool, String

    deadline = time.time() + seconds
    rospy.init_node("control_peer", anonymous=True, disable_signals=True)
    rospy.wait_for_service("/switch_controller", timeout=seconds)
    switch = rospy.ServiceProxy("/switch_controller", rt.srv.SwitchController)

    def sw(owner):
        r = switch(owner)
        return [r.success, r.message]

    def owner_now():
        """What a new (late) subscriber of the latched controller_owner reads first."""
        return rospy.wait_for_message("/controller_owner", String, timeout=10).data

    out = {"unknown": sw("wheels_please"), "calibrate": sw("calibrate_motors"), "go_to_pose": sw("go_to_pose")}
    out["owner_after_go_to_pose"] = owner_now()

    reached = []
    sub = rospy.Subscriber(BASE + "reached", Bool, lambda m: reached.append(m.data), queue_size=100)
    wait(lambda: sub.get_num_connections() > 0, deadline, "the reached topic's connection")
    rospy.wait_for_service(BASE + "set_goal", timeout=10)
    set_goal = rospy.ServiceProxy(BASE + "set_goal", rt.srv.SetPose2D)
    r = set_goal(Pose2D(math.nan, 0.0, 0.0))
    out["set_goal_nan"] = [r.success, r.message]
    r = set_goal(Pose2D(0.1, 0.0, 0.0))
    out["set_goal"] = [r.success, r.message]
    wait(lambda: True in reached, deadline, "reached after set_goal")
    out["reached_by_service"] = list(reached)

    # a goal by topic: 10 cm to the left of the first one
    del reached[:]
    goal = rospy.Publisher(BASE + "goal", Pose2D, queue_size=1)
    wait(lambda: goal.get_num_connections() > 0, deadline, "the goal topic's connection")
    while False not in reached:
        goal.publish(Pose2D(0.1, 0.1, 0.0))
        wait(lambda: False in reached or time.time() > deadline - 1, deadline, "reached false")
    wait(lambda: True in reached[reached.index(False):], deadline, "reached after the goal topic")
    out["reached_by_topic"] = list(reached)
    odom = rospy.wait_for_message("/odom", Odometry, timeout=10)
    out["odom_xy"] = [odom.pose.pose.position.x, odom.pose.pose.position.y]

    out["ros"] = sw("ros")
    out["owner_after_ros"] = owner_now()
    done(out)


if __name__ == "__main__":
    scenario, args = sys.argv[1], sys.argv[2:]
    if scenario == "control":
        control(float(args[0]))
    else:
        sys.exit("unknown scenario " + scenario)
