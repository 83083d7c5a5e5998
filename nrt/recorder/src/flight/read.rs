//! Reading a flight recording back (`thymio-rt replay`): the RT thread's records of every file of a rotation, in
//! their order, the odometry it handed out and the metadata (the driver's version and configuration). A file that
//! is not MCAP, is cut short or holds a record that does not decode is an error naming the file and what is wrong.

use super::outputs::{RobotDescription, ROBOTS};
use super::rt_channels::{FrameMsg, InputMsg, OdometryMsg, FRAMES, INPUTS, ODOMETRY};
use handoff::{FrameDir, Record};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Why a recording cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file cannot be read.
    #[error("cannot read {path:?}: {source}")]
    Open {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Not an MCAP file, or a damaged or truncated one.
    #[error("{path:?} is not a readable MCAP file (damaged or cut short?): {source}")]
    Mcap {
        /// The file.
        path: PathBuf,
        /// The reader's error.
        source: mcap::McapError,
    },
    /// Chunks compressed by another tool (the recorder writes none; decompressing needs C libraries the driver
    /// does not link).
    #[error("{path:?} has chunks compressed with {compression}, which replay does not read: write an uncompressed copy first (e.g. the mcap CLI: mcap compress --compression none)")]
    Compressed {
        /// The file.
        path: PathBuf,
        /// The compression.
        compression: String,
    },
    /// A record of the RT thread that does not decode.
    #[error("{path:?}: a message on {topic} does not decode: {source}")]
    Decode {
        /// The file.
        path: PathBuf,
        /// Its channel.
        topic: String,
        /// The decoder's error.
        source: ciborium::de::Error<std::io::Error>,
    },
    /// No record of the RT thread in it.
    #[error("{path:?} holds no record of the RT thread (not a thymio-rt flight recording)")]
    NotARecording {
        /// The file.
        path: PathBuf,
    },
}

/// A recording read back.
#[derive(Debug, Default)]
pub struct Loaded {
    /// The files read, in order.
    pub files: Vec<PathBuf>,
    /// The RT thread's records, sorted by their sequence number.
    pub records: Vec<Record>,
    /// The odometry it handed out, in order.
    pub odometry: Vec<OdometryMsg>,
    /// The robots' outputs as the front ends made them (in order; a later one replaces an earlier one of its
    /// robot).
    pub robots: Vec<RobotDescription>,
    /// The metadata records (of the first file; every file of a rotation has the same), by name.
    pub metadata: BTreeMap<String, BTreeMap<String, String>>,
    /// Records the recording lacks: sequence numbers never seen below the highest one (dropped by a full ring, or
    /// in deleted files).
    pub missing: u64,
}

impl Loaded {
    /// The sequence number of the first record (0 for a recording from the start of its run).
    pub fn first_seq(&self) -> Option<u64> {
        self.records.first().map(Record::seq)
    }
}

/// The files of the rotation `path` belongs to, from `path` on: `run.mcap` then `run_001.mcap`, `run_002.mcap`…
/// while they exist; from `run_004.mcap` on when that is the path given.
pub fn rotation(path: &Path) -> Vec<PathBuf> {
    let (dir, name) = (path.parent().unwrap_or(Path::new("")), path.file_name());
    let name = name.and_then(|n| n.to_str()).unwrap_or_default();
    let (stem, ext) = match name.rsplit_once('.') {
        Some((s, e)) => (s, format!(".{e}")),
        None => (name, String::new()),
    };
    // `stem_NNN`: a rotated file; its base stem and index
    let (base, start) = match stem.rsplit_once('_') {
        Some((b, n)) if n.len() >= 3 && n.bytes().all(|c| c.is_ascii_digit()) => {
            (b, n.parse::<u32>().unwrap_or(0))
        }
        _ => (stem, 0),
    };
    let mut files = vec![path.to_path_buf()];
    for i in start + 1.. {
        let next = dir.join(format!("{base}_{i:03}{ext}"));
        if !next.exists() {
            break;
        }
        files.push(next);
    }
    files
}

/// Reads the rotation of `path` (see [`rotation`]).
pub fn load(path: &Path) -> Result<Loaded, ReadError> {
    let mut out = Loaded::default();
    for file in rotation(path) {
        read_file(&file, &mut out)?;
        out.files.push(file);
    }
    if out.records.is_empty() {
        return Err(ReadError::NotARecording {
            path: path.to_path_buf(),
        });
    }
    out.records.sort_by_key(Record::seq);
    out.records.dedup_by_key(|r| r.seq());
    let first = out.first_seq().unwrap_or(0);
    let last = out.records.last().map_or(0, Record::seq);
    out.missing = (last - first + 1).saturating_sub(out.records.len() as u64) + first;
    Ok(out)
}

fn read_file(path: &Path, out: &mut Loaded) -> Result<(), ReadError> {
    let bytes = std::fs::read(path).map_err(|source| ReadError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    let mcap_err = |source| match source {
        mcap::McapError::UnsupportedCompression(c) => ReadError::Compressed {
            path: path.to_path_buf(),
            compression: c,
        },
        source => ReadError::Mcap {
            path: path.to_path_buf(),
            source,
        },
    };
    if out.metadata.is_empty() {
        for r in mcap::read::LinearReader::new(&bytes).map_err(mcap_err)? {
            if let mcap::records::Record::Metadata(m) = r.map_err(mcap_err)? {
                out.metadata.insert(m.name, m.metadata);
            }
        }
    }
    for m in mcap::MessageStream::new(&bytes).map_err(mcap_err)? {
        let m = m.map_err(mcap_err)?;
        let topic = m.channel.topic.as_str();
        let decode = |source| ReadError::Decode {
            path: path.to_path_buf(),
            topic: topic.to_owned(),
            source,
        };
        if topic == INPUTS {
            let i: InputMsg = ciborium::from_reader(&m.data[..]).map_err(decode)?;
            out.records.push(Record::Input {
                seq: i.seq,
                input: i.input,
            });
        } else if topic == ROBOTS {
            out.robots
                .push(ciborium::from_reader(&m.data[..]).map_err(decode)?);
        } else if topic == ODOMETRY {
            out.odometry
                .push(ciborium::from_reader(&m.data[..]).map_err(decode)?);
        } else if let Some(d) = FRAMES.iter().position(|t| *t == topic) {
            let f: FrameMsg = ciborium::from_reader(&m.data[..]).map_err(decode)?;
            out.records.push(Record::Frame {
                seq: f.seq,
                dir: [FrameDir::In, FrameDir::Out, FrameDir::FromNrt][d],
                link: f.link,
                t_ns: f.t_ns,
                decoded_ns: f.decoded_ns,
                bytes: f.frame,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rotation_is_read_from_the_file_given_on() {
        let dir = tempfile::tempdir().unwrap();
        for n in ["run.mcap", "run_001.mcap", "run_002.mcap", "run_004.mcap"] {
            std::fs::write(dir.path().join(n), b"").unwrap();
        }
        let names = |p: &str| -> Vec<String> {
            rotation(&dir.path().join(p))
                .iter()
                .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
                .collect()
        };
        assert_eq!(
            names("run.mcap"),
            ["run.mcap", "run_001.mcap", "run_002.mcap"]
        );
        assert_eq!(names("run_001.mcap"), ["run_001.mcap", "run_002.mcap"]);
        assert_eq!(names("run_004.mcap"), ["run_004.mcap"]);
    }

    #[test]
    fn damaged_and_foreign_files_are_errors_naming_them() {
        let dir = tempfile::tempdir().unwrap();
        let junk = dir.path().join("junk.mcap");
        std::fs::write(&junk, b"not an mcap file at all").unwrap();
        let e = load(&junk).unwrap_err().to_string();
        assert!(
            e.contains("junk.mcap") && e.contains("not a readable MCAP"),
            "{e}"
        );
        let missing = load(&dir.path().join("none.mcap")).unwrap_err().to_string();
        assert!(
            missing.contains("none.mcap") && missing.contains("cannot read"),
            "{missing}"
        );
        // an MCAP file without the RT thread's channels
        let empty = dir.path().join("empty.mcap");
        crate::Recording::create(&empty, crate::RecordLimits::NONE, &[])
            .unwrap()
            .finish()
            .unwrap();
        let e = load(&empty).unwrap_err().to_string();
        assert!(e.contains("no record of the RT thread"), "{e}");
    }
}
