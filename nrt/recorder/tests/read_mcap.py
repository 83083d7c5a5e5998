"""Reads MCAP files with the `mcap` and `mcap-ros2-support` packages (an independent reader of thymio-rt's
recordings) and prints what it found as one JSON object on stdout:

{"files": [{"path", "channels": [{"topic", "message_encoding", "schema": {"name", "encoding", "data"} | null}],
            "metadata": [{"name", "metadata"}], "counts": {topic: n},
            "messages": [{"topic", "sequence", "log_time", "publish_time", "decoded" | "raw_hex"}]}]}

ROS 2 messages (encoding cdr, schema ros2msg) are decoded by mcap_ros2's DecoderFactory; others are given as hex.
Non-finite floats are given as the strings "inf", "-inf", "nan". Exits 2 if a module is missing, 1 on a bad file.
"""

import json
import math
import sys

try:
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory
except ImportError as e:  # the Rust test says what to install
    print(f"missing module: {e}", file=sys.stderr)
    sys.exit(2)


def plain(value):
    """A decoded ROS 2 message as plain JSON values."""
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, (bool, int, str)) or value is None:
        return value
    if isinstance(value, (bytes, bytearray)):
        return list(value)
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    slots = getattr(type(value), "__slots__", None)
    if slots:
        return {name: plain(getattr(value, name)) for name in slots}
    return {name: plain(v) for name, v in vars(value).items()}


def read(path):
    factory = DecoderFactory()
    with open(path, "rb") as f:
        reader = make_reader(f, decoder_factories=[factory])
        summary = reader.get_summary()
        if summary is None:
            raise RuntimeError(f"{path}: no summary (the file was not closed)")
        channels = []
        for ch in sorted(summary.channels.values(), key=lambda c: c.id):
            schema = summary.schemas.get(ch.schema_id)
            channels.append({
                "topic": ch.topic,
                "message_encoding": ch.message_encoding,
                "schema": None if schema is None else {
                    "name": schema.name,
                    "encoding": schema.encoding,
                    "data": schema.data.decode(),
                },
            })
        metadata = [{"name": m.name, "metadata": dict(m.metadata)} for m in reader.iter_metadata()]
        counts = {}
        messages = []
        for schema, channel, message in reader.iter_messages(log_time_order=False):
            counts[channel.topic] = counts.get(channel.topic, 0) + 1
            entry = {
                "topic": channel.topic,
                "sequence": message.sequence,
                "log_time": message.log_time,
                "publish_time": message.publish_time,
            }
            decoder = factory.decoder_for(channel.message_encoding, schema)
            if decoder is None:
                entry["raw_hex"] = message.data.hex()
            else:
                entry["decoded"] = plain(decoder(message.data))
            messages.append(entry)
        stats = summary.statistics
        if stats is not None and stats.message_count != len(messages):
            raise RuntimeError(f"{path}: statistics say {stats.message_count} messages, read {len(messages)}")
        return {"path": path, "channels": channels, "metadata": metadata, "counts": counts,
                "messages": messages}


def main():
    try:
        out = {"files": [read(p) for p in sys.argv[1:]]}
    except Exception as e:  # a bad file: say which and why
        print(f"read_mcap: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
    json.dump(out, sys.stdout)


main()
