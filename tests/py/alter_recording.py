"""Copies a flight recording (MCAP) with one value changed, as an independent writer (the mcap project's): the
first odometry hand-off on /thymio_rt/rt/odometry gets the last bit of its first CBOR float flipped (still valid
CBOR, valid CRCs: only `replay --check` can tell). Usage: alter_recording.py IN.mcap OUT.mcap"""
import sys

from mcap.reader import make_reader
from mcap.writer import CompressionType, Writer

src, dst = sys.argv[1], sys.argv[2]
altered = False
with open(src, "rb") as f, open(dst, "wb") as out:
    reader = make_reader(f)
    summary = reader.get_summary()
    w = Writer(out, compression=CompressionType.NONE)
    w.start(profile="", library="alter_recording.py")
    for m in reader.iter_metadata():
        w.add_metadata(m.name, m.metadata)
    schema_ids, channel_ids = {}, {}
    for sid, s in summary.schemas.items():
        schema_ids[sid] = w.register_schema(s.name, s.encoding, s.data)
    for cid, c in summary.channels.items():
        channel_ids[cid] = w.register_channel(c.topic, c.message_encoding, schema_ids.get(c.schema_id, 0), c.metadata)
    for schema, channel, message in reader.iter_messages(log_time_order=False):
        data = bytearray(message.data)
        if not altered and channel.topic == "/thymio_rt/rt/odometry":
            i = data.find(b"\x64pose")
            j = data.find(b"\xfb", i)
            if i >= 0 and j >= 0:
                data[j + 8] ^= 1
                altered = True
        w.add_message(channel_ids[channel.id], message.log_time, bytes(data), message.publish_time, message.sequence)
    w.finish()
print("altered" if altered else "nothing to alter")
