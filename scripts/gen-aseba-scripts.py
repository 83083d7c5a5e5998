#!/usr/bin/env python3
"""Expands config/aseba/thymio_ros.aesl.in into the four robot scripts of thymio-rt.

  thymio_ros.aesl                 one robot, Thymio-II firmware 14 (real robot and the embedded simulator)
  thymio_ros_multi.aesl           several robots on one Aseba network: every incoming event starts with the
                                  target node id, and each robot only acts on its own (include_id_in_events)
  thymio_ros_playground.aesl      one robot in Aseba Playground (reduced Thymio API)
  thymio_ros_multi_playground.aesl

Run it after editing the template; the outputs are committed (tests check they are up to date).
"""
import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve().parent.parent / "config" / "aseba"

# Global events: (name, size for one robot, incoming?). Order = Aseba event ids (as ROS-Thymio).
EVENTS = [
    ("shutdown", 0, True),
    ("set_speed", 2, True),
    ("odometry", 3, False),
    ("buttons", 5, False),
    ("button_backward", 1, False),
    ("button_left", 1, False),
    ("button_center", 1, False),
    ("button_forward", 1, False),
    ("button_right", 1, False),
    ("proximity", 7, False),
    ("ground_ambient", 2, False),
    ("ground_reflected", 2, False),
    ("ground", 2, False),
    ("accelerometer", 3, False),
    ("tap", 0, False),
    ("temperature", 1, False),
    ("sound", 1, False),
    ("set_sound_threshold", 1, True),
    ("remote", 2, False),
    ("comm", 15, False),
    ("set_comm_payload", 1, True),
    ("enable_comm", 1, True),
    ("set_led_top", 3, True),
    ("set_led_bottom_right", 3, True),
    ("set_led_bottom_left", 3, True),
    ("set_led", 9, True),
    ("set_led_gesture", 14, True),
    ("play_system_sound", 1, True),
    ("play_sound", 2, True),
]

# Script constants and their defaults (ROS-Thymio main.launch values).
CONSTANTS = [
    ("MOTOR_PERIOD", 5),
    ("MOTOR_DEADBAND", 10),
    ("ACC_PERIOD", 2),
    ("BUTTONS_PERIOD", 5),
    ("EMIT_MOTOR", 1),
    ("EMIT_BUTTONS", 0),
    ("EMIT_ACC", 1),
    ("EMIT_GROUND_RAW", 0),
    ("EMIT_PROXIMITY", 1),
    ("ENABLE_PROX_COMM", 1),
    ("SPEED_TIMEOUT", 300),
]

COMM_FW = """\tfor i in 0:6 do
\t\tcomm_buf[1 + i] = prox.comm.rx._payloads[i]
\t\tcomm_buf[8 + i] = prox.comm.rx._intensities[i]
\tend"""
COMM_PLAYGROUND = """\t# Playground has no per-sensor payloads or intensities
\tfor i in 1:14 do
\t\tcomm_buf[i] = 0
\tend"""


def expand(template: str, multi: bool, playground: bool) -> str:
    offset = 1 if multi else 0
    lines = []
    src = template.splitlines()
    for n, line in enumerate(src):
        if line.startswith("{IN}"):
            body = line[len("{IN}"):]
            body = re.sub(r"\{A(\d+)\}", lambda m: f"event.args[{int(m.group(1)) + offset}]", body)
            lines.append(("\t" + body) if multi else body)
            continue
        if line == "{END}":
            if multi:
                lines.append("\tend")
            continue
        if line == "{SHUTDOWN}":
            if not playground:
                lines.append(("\t" if multi else "") + "\tcall _poweroff()")
            continue
        if line == "{PROX_COMM_ENABLE}":
            lines.append("call prox.comm.enable(ENABLE_PROX_COMM)")
            continue
        if line == "{COMM_DETAILS}":
            lines.append(COMM_PLAYGROUND if playground else COMM_FW)
            continue
        lines.append(line)
        if multi and line.startswith("onevent ") and n + 1 < len(src) and src[n + 1].startswith("{IN}"):
            lines.append("\tif event.args[0] == _id then")
    code = "\n".join(lines).strip("\n") + "\n"
    left = re.search(r"\{(A\d+|IN|END|SHUTDOWN|PROX_COMM_ENABLE|COMM_DETAILS)\}", code)
    if left:
        sys.exit(f"unexpanded placeholder {left.group(0)} in the template")
    return code


def aesl(code: str, multi: bool) -> str:
    out = ["<!DOCTYPE aesl-source>", "<network>", "", "<!--list of global events-->"]
    for name, size, incoming in EVENTS:
        out.append(f'<event size="{size + (1 if multi and incoming else 0)}" name="{name}"/>')
    out += ["", "<!--list of constants-->"]
    for name, value in CONSTANTS:
        out.append(f'<constant value="{value}" name="{name}"/>')
    out += ["", "<!--node thymio-II-->", '<node nodeId="1" name="thymio-II"><![CDATA[', code.rstrip("\n"), "]]></node>", "", "</network>", ""]
    return "\n".join(out)


def main() -> None:
    template = (HERE / "thymio_ros.aesl.in").read_text()
    for multi in (False, True):
        for playground in (False, True):
            name = "thymio_ros" + ("_multi" if multi else "") + ("_playground" if playground else "") + ".aesl"
            (HERE / name).write_text(aesl(expand(template, multi, playground), multi))
            print(f"wrote config/aseba/{name}")


if __name__ == "__main__":
    main()
