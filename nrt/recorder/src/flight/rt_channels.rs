//! The RT thread's records as MCAP messages: its inputs on `/thymio_rt/rt/inputs`, the frames it read, wrote and
//! took from NRT on `/aseba/frames/in`, `/aseba/frames/out`, `/aseba/frames/from_nrt`, the odometry it handed out
//! on `/thymio_rt/rt/odometry` — each a CBOR map (MCAP's
//! well-known `cbor` encoding, self-describing: Foxglove shows its fields, any CBOR library reads it; every number
//! is kept exactly, NaN included, which JSON could not).
//!
//! An input is `{seq, t_ns, input}` (`input`: the [`RecInput`] variant as `{Variant: {fields}}`, `t_ns`: the
//! CLOCK_MONOTONIC time of the pass it was taken in); a frame is `{seq, link, t_ns, decoded_ns, frame}` (`frame`:
//! the Aseba frame's bytes, header included). `seq` orders the records of all four channels as the RT thread made
//! them. The log time is the wall clock of `t_ns` (CLOCK_REALTIME, as rosbag2's).

use crate::{ChannelKey, RecordError, Recording, SchemaDef};
use handoff::{FrameDir, OdomHandoff, OdomSample, RecEntry, RecFrame, RecInput, Twist2};
use serde::{Deserialize, Serialize};

/// The topic of the RT thread's inputs.
pub const INPUTS: &str = "/thymio_rt/rt/inputs";
/// The topic of the odometry the RT thread handed out (its output, exact: what a replay compares).
pub const ODOMETRY: &str = "/thymio_rt/rt/odometry";
/// The odometry's schema name.
pub const ODOMETRY_SCHEMA: &str = "thymio_rt/RtOdometry";
/// The topics of the frames, by direction (in, out, from NRT).
pub const FRAMES: [&str; 3] = [
    "/aseba/frames/in",
    "/aseba/frames/out",
    "/aseba/frames/from_nrt",
];
/// The message encoding of these channels.
pub const ENCODING: &str = "cbor";
/// The schema names (no schema data: CBOR describes itself).
pub const INPUT_SCHEMA: &str = "thymio_rt/RtInput";
/// The frames' schema name.
pub const FRAME_SCHEMA: &str = "thymio_rt/AsebaFrame";

/// An input as recorded.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct InputMsg {
    /// The RT thread's record order.
    pub seq: u64,
    /// The pass's CLOCK_MONOTONIC time (ns).
    pub t_ns: u64,
    /// What it took.
    pub input: RecInput,
}

/// An odometry hand-off as recorded: the sample, the twist commanded then, and when it was handed out.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct OdometryMsg {
    /// The sample.
    pub sample: OdomSample,
    /// The owner's command after the filters and limits.
    pub commanded: Twist2,
    /// When the RT thread handed it out (CLOCK_MONOTONIC ns; a clock reading, not compared by a replay).
    pub handed_ns: u64,
}

/// A frame as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrameMsg {
    /// The RT thread's record order.
    pub seq: u64,
    /// Link slot (0xFF: every link).
    pub link: u8,
    /// When it was read (the wake-up) or queued (the pass), CLOCK_MONOTONIC ns.
    pub t_ns: u64,
    /// When it was decoded (frames read), otherwise `t_ns`.
    pub decoded_ns: u64,
    /// Header and payload.
    #[serde(with = "serde_bytes_vec")]
    pub frame: Vec<u8>,
}

/// CBOR byte strings for the frame (a sequence of integers otherwise).
mod serde_bytes_vec {
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(v)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Vec<u8>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("bytes")
            }
            fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Vec<u8>, E> {
                Ok(v.to_vec())
            }
            fn visit_byte_buf<E: serde::de::Error>(self, v: Vec<u8>) -> Result<Vec<u8>, E> {
                Ok(v)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Vec<u8>, A::Error> {
                let mut out = Vec::new();
                while let Some(b) = a.next_element()? {
                    out.push(b);
                }
                Ok(out)
            }
        }
        d.deserialize_bytes(V)
    }
}

/// The four channels of one recording, and the clock that turns RT times into log times.
#[derive(Debug)]
pub struct RtChannels {
    inputs: ChannelKey,
    frames: [ChannelKey; 3],
    odometry: ChannelKey,
    /// CLOCK_REALTIME − CLOCK_MONOTONIC (ns), measured once at the start.
    realtime_offset: i128,
    /// The time of the last pass seen: an input's time.
    pass_ns: u64,
    buf: Vec<u8>,
}

/// CLOCK_REALTIME − CLOCK_MONOTONIC now (ns).
pub fn realtime_offset_ns() -> i128 {
    let mono = handoff::monotonic_ns() as i128;
    let real = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128);
    real - mono
}

impl RtChannels {
    /// Registers the channels in `rec`, with the clock offset `realtime_offset` ([`realtime_offset_ns`]).
    pub fn register(rec: &mut Recording, realtime_offset: i128) -> Result<RtChannels, RecordError> {
        let schema = |name: &str| SchemaDef {
            name: name.to_owned(),
            encoding: String::new(),
            data: Vec::new(),
        };
        let inputs = rec.channel(INPUTS, &schema(INPUT_SCHEMA), ENCODING)?;
        let mut frames = [inputs; 3];
        for (k, topic) in frames.iter_mut().zip(FRAMES) {
            *k = rec.channel(topic, &schema(FRAME_SCHEMA), ENCODING)?;
        }
        let odometry = rec.channel(ODOMETRY, &schema(ODOMETRY_SCHEMA), ENCODING)?;
        Ok(RtChannels {
            inputs,
            frames,
            odometry,
            realtime_offset,
            pass_ns: 0,
            buf: Vec::with_capacity(1024),
        })
    }

    /// The wall-clock time (ns since the epoch) of a CLOCK_MONOTONIC time.
    pub fn log_time(&self, t_ns: u64) -> u64 {
        (t_ns as i128 + self.realtime_offset).clamp(0, u64::MAX as i128) as u64
    }

    /// Writes one input.
    pub fn input(&mut self, rec: &mut Recording, e: &RecEntry) -> Result<(), RecordError> {
        if let RecInput::Pass { now_ns, .. } = e.input {
            self.pass_ns = now_ns;
        }
        let msg = InputMsg {
            seq: e.seq,
            t_ns: self.pass_ns,
            input: e.input,
        };
        self.buf.clear();
        // CBOR into a Vec cannot fail for these types (no maps with non-string keys, no I/O errors)
        let _ = ciborium::into_writer(&msg, &mut self.buf);
        let t = self.log_time(self.pass_ns);
        rec.write(self.inputs, t, t, &self.buf)
    }

    /// Writes one odometry hand-off.
    pub fn odometry(&mut self, rec: &mut Recording, h: &OdomHandoff) -> Result<(), RecordError> {
        let msg = OdometryMsg {
            sample: h.sample,
            commanded: h.commanded,
            handed_ns: h.handed_ns,
        };
        self.buf.clear();
        let _ = ciborium::into_writer(&msg, &mut self.buf);
        let t = self.log_time(h.handed_ns);
        rec.write(self.odometry, t, self.log_time(h.sample.t_ns), &self.buf)
    }

    /// Writes one frame.
    pub fn frame(&mut self, rec: &mut Recording, f: &RecFrame<'_>) -> Result<(), RecordError> {
        let msg = FrameMsg {
            seq: f.seq,
            link: f.link,
            t_ns: f.t_ns,
            decoded_ns: f.decoded_ns,
            frame: f.bytes.to_vec(),
        };
        self.buf.clear();
        let _ = ciborium::into_writer(&msg, &mut self.buf);
        let k = self.frames[match f.dir {
            FrameDir::In => 0,
            FrameDir::Out => 1,
            FrameDir::FromNrt => 2,
        }];
        let t = self.log_time(f.t_ns);
        rec.write(k, t, t, &self.buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use handoff::{MotionLimits, RobotId};

    #[test]
    fn cbor_keeps_every_value_bit_for_bit() {
        // NaN limits (off), odd floats: what a replay needs back exactly
        let mut limits = MotionLimits::default();
        limits.linear.max_velocity = 0.1 + 0.2;
        let msg = InputMsg {
            seq: 7,
            t_ns: 123,
            input: RecInput::MotionLimits {
                robot: RobotId(1),
                limits,
            },
        };
        let mut buf = Vec::new();
        ciborium::into_writer(&msg, &mut buf).unwrap();
        let back: InputMsg = ciborium::from_reader(&buf[..]).unwrap();
        let (RecInput::MotionLimits { limits: a, .. }, RecInput::MotionLimits { limits: b, .. }) =
            (msg.input, back.input)
        else {
            panic!("{back:?}");
        };
        assert_eq!(
            a.linear.max_velocity.to_bits(),
            b.linear.max_velocity.to_bits()
        );
        assert!(b.angular.max_velocity.is_nan());
        let f = FrameMsg {
            seq: 1,
            link: 0,
            t_ns: 5,
            decoded_ns: 6,
            frame: vec![2, 0, 1, 0, 0, 0, 7, 0],
        };
        buf.clear();
        ciborium::into_writer(&f, &mut buf).unwrap();
        // a byte string (0x48: 8 bytes), not an array of integers
        assert!(
            buf.windows(9).any(|w| w == [0x48, 2, 0, 1, 0, 0, 0, 7, 0]),
            "{buf:x?}"
        );
        assert_eq!(ciborium::from_reader::<FrameMsg, _>(&buf[..]).unwrap(), f);
    }

    #[test]
    fn a_reflex_parameters_record_without_samples_still_reads() {
        // as recorded before the pick-up stop's parameters were (no `samples` field)
        #[derive(Serialize)]
        enum Old {
            ReflexParams {
                reflex: u8,
                enabled: bool,
                threshold: i16,
                max_age_ns: u64,
            },
        }
        #[derive(Serialize)]
        struct OldMsg {
            seq: u64,
            t_ns: u64,
            input: Old,
        }
        let old = OldMsg {
            seq: 3,
            t_ns: 9,
            input: Old::ReflexParams {
                reflex: 1,
                enabled: true,
                threshold: 40,
                max_age_ns: 500,
            },
        };
        let mut buf = Vec::new();
        ciborium::into_writer(&old, &mut buf).unwrap();
        let back: InputMsg = ciborium::from_reader(&buf[..]).unwrap();
        assert_eq!(
            back.input,
            RecInput::ReflexParams {
                reflex: 1,
                enabled: true,
                threshold: 40,
                samples: 0,
                max_age_ns: 500,
            }
        );
        // and the pick-up stop's round trip keeps its samples
        let msg = InputMsg {
            seq: 4,
            t_ns: 10,
            input: RecInput::ReflexParams {
                reflex: 2,
                enabled: true,
                threshold: 15,
                samples: 3,
                max_age_ns: 1_000_000_000,
            },
        };
        buf.clear();
        ciborium::into_writer(&msg, &mut buf).unwrap();
        assert_eq!(ciborium::from_reader::<InputMsg, _>(&buf[..]).unwrap(), msg);
    }
}
