"""Reads a flight recording of thymio-rt (tests/recorder/recorder.rs) with the `mcap` and `mcap-ros2-support`
packages, an independent reader, and prints one JSON object on stdout:

  python tests/ros/read_recording.py FILE.mcap [FILE_001.mcap ...] --odom /NS/odom

{"channels": [{"topic", "message_encoding", "schema_name", "schema_encoding"}],   (of every file, deduplicated)
 "counts": {topic: n},                         (messages read, every file)
 "odom": [{"sec", "nanosec", "frame", "child", "pose", "twist", "pose_bits", "twist_bits"}],  (decoded, ROS 2 CDR)
 "inputs": {variant: n},                       (the RT inputs' CBOR records by variant, with a small decoder here)
 "decoded": {topic: n},                        (ROS 2 CDR messages mcap_ros2 decoded, every topic)
 "diagnostic_names": [name],                   (the status names seen on /diagnostics)
 "laser": {"ranges": n, "frame": id}}          (the first proximity/laser scan, if any)

The odometry's floats are given with their IEEE-754 bits as tests/ros/recorder_client.py gives them. Exits 2 if
a module is missing, 1 on a bad file.
"""

import argparse
import json
import struct
import sys

try:
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory
except ImportError as e:  # the Rust test says what to install
    print(f"missing module: {e}", file=sys.stderr)
    sys.exit(2)


def bits(values):
    return [struct.unpack("<Q", struct.pack("<d", v))[0] for v in values]


class Cbor:
    """The part of CBOR (RFC 8949) the recorder writes: integers, byte and text strings, arrays, maps, floats, simple
    values; definite lengths only (ciborium writes no indefinite ones)."""

    def __init__(self, data):
        self.data, self.at = data, 0

    def take(self, n):
        if self.at + n > len(self.data):
            raise ValueError("truncated CBOR item")
        b = self.data[self.at:self.at + n]
        self.at += n
        return b

    def argument(self, info):
        if info < 24:
            return info
        if info in (24, 25, 26, 27):
            n = 1 << (info - 24)
            return int.from_bytes(self.take(n), "big")
        raise ValueError(f"unsupported CBOR additional information {info}")

    def item(self):
        initial = self.take(1)[0]
        major, info = initial >> 5, initial & 31
        if major == 7:
            if info == 25:
                return struct.unpack(">e", self.take(2))[0]
            if info == 26:
                return struct.unpack(">f", self.take(4))[0]
            if info == 27:
                return struct.unpack(">d", self.take(8))[0]
            return {20: False, 21: True, 22: None, 23: None}.get(info)
        n = self.argument(info)
        if major == 0:
            return n
        if major == 1:
            return -1 - n
        if major == 2:
            return bytes(self.take(n))
        if major == 3:
            return self.take(n).decode()
        if major == 4:
            return [self.item() for _ in range(n)]
        if major == 5:
            return {self.item(): self.item() for _ in range(n)}
        if major == 6:  # a tag: its content
            return self.item()
        raise ValueError(f"unsupported CBOR major type {major}")

    def whole(self):
        value = self.item()
        if self.at != len(self.data):
            raise ValueError(f"{len(self.data) - self.at} byte(s) after the CBOR item")
        return value


def variant(record):
    """The variant name of an input record `{seq, t_ns, input}` (an externally tagged enum)."""
    inp = record["input"]
    if isinstance(inp, str):
        return inp
    (name,) = inp.keys()
    return name


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--odom", required=True)
    args = ap.parse_args()
    channels, counts, odom, inputs, decoded, diagnostic_names, laser = {}, {}, [], {}, {}, set(), None
    for path in args.files:
        with open(path, "rb") as f:
            reader = make_reader(f, decoder_factories=[DecoderFactory()])
            summary = reader.get_summary()
            if summary is None:
                raise SystemExit(f"{path}: no summary (the file was not closed)")
            for ch in summary.channels.values():
                schema = summary.schemas.get(ch.schema_id)
                channels[ch.topic] = {
                    "topic": ch.topic,
                    "message_encoding": ch.message_encoding,
                    "schema_name": None if schema is None else schema.name,
                    "schema_encoding": None if schema is None else schema.encoding,
                }
            for schema, channel, message in reader.iter_messages():
                counts[channel.topic] = counts.get(channel.topic, 0) + 1
                if channel.topic == "/thymio_rt/rt/inputs":
                    name = variant(Cbor(message.data).whole())
                    inputs[name] = inputs.get(name, 0) + 1
        with open(path, "rb") as f:
            # every ROS 2 message decodes with its schema (a bad one raises: exit 1)
            reader = make_reader(f, decoder_factories=[DecoderFactory()])
            cdr = [c["topic"] for c in channels.values() if c["message_encoding"] == "cdr"]
            for _, channel, _, m in reader.iter_decoded_messages(topics=cdr):
                decoded[channel.topic] = decoded.get(channel.topic, 0) + 1
                if channel.topic == "/diagnostics":
                    diagnostic_names.update(s.name for s in m.status)
                elif channel.topic.endswith("/proximity/laser") and laser is None:
                    laser = {"ranges": len(m.ranges), "frame": m.header.frame_id}
        with open(path, "rb") as f:
            reader = make_reader(f, decoder_factories=[DecoderFactory()])
            for _, _, _, m in reader.iter_decoded_messages(topics=[args.odom]):
                p, q = m.pose.pose.position, m.pose.pose.orientation
                lin, ang = m.twist.twist.linear, m.twist.twist.angular
                pose = [p.x, p.y, p.z, q.x, q.y, q.z, q.w]
                twist = [lin.x, lin.y, lin.z, ang.x, ang.y, ang.z]
                odom.append({"sec": m.header.stamp.sec, "nanosec": m.header.stamp.nanosec,
                             "frame": m.header.frame_id, "child": m.child_frame_id, "pose": pose, "twist": twist,
                             "pose_bits": bits(pose), "twist_bits": bits(twist)})
    print(json.dumps({"channels": list(channels.values()), "counts": counts, "odom": odom, "inputs": inputs,
                      "decoded": decoded, "diagnostic_names": sorted(diagnostic_names), "laser": laser}))


if __name__ == "__main__":
    main()
