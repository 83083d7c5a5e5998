//! Reading a flight recording back (`thymio-rt replay`): the RT thread's records of every file of a rotation, in
//! their order, the odometry it handed out and the metadata (the driver's version and configuration). Files are
//! streamed ([`scan`]: memory bounded whatever they hold) and must be regular files. A file cut short (no summary:
//! SIGKILL, power loss, a full disk) is read up to its last complete chunk and the cut is said ([`Loaded::cut`]);
//! a file that is not MCAP or holds a record that does not decode is an error naming the file and what is wrong.
//! The files of a rotation are those beside the first that carry the same run id ([`RUN_ID`]), not any file that
//! has a matching name.

use super::outputs::{RobotDescription, ROBOTS};
use super::rt_channels::{FrameMsg, InputMsg, OdometryMsg, FRAMES, INPUTS, ODOMETRY};
use super::scan::{self, Cut};
use handoff::{FrameDir, Record};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use super::read_error::ReadError;

/// The most memory the records read back take (their bytes and a bound of each record's own size): a replay
/// holds them all; about 20 million records, hours of a busy robot.
pub const MEMORY_MAX: u64 = 2 << 30;
/// What one record takes in memory besides its frame bytes (bound).
const RECORD_COST: u64 = 96;

/// The metadata record and key of a recording's run id (the same in every file of its rotation).
pub const RUN_ID: (&str, &str) = ("thymio_rt", "run_id");

/// A recording read back.
#[derive(Debug, Default)]
pub struct Loaded {
    /// The files read, in order.
    pub files: Vec<PathBuf>,
    /// The RT thread's records, sorted by their sequence number (a cut recording: those up to the last pass
    /// that is whole in it, see [`Loaded::cut`]).
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
    /// The file cut short (the last read: a rotation ends there) and where.
    pub cut: Option<(PathBuf, Cut)>,
    /// Files named as the rotation's next ones that are not of its run (another run id, none, or unreadable), with
    /// why: not read.
    pub ignored: Vec<(PathBuf, String)>,
}

impl Loaded {
    /// The sequence number of the first record (0 for a recording from the start of its run).
    pub fn first_seq(&self) -> Option<u64> {
        self.records.first().map(Record::seq)
    }

    /// The recording's run id, if it has one (recordings of older drivers have none).
    pub fn run_id(&self) -> Option<&str> {
        self.metadata
            .get(RUN_ID.0)
            .and_then(|m| m.get(RUN_ID.1))
            .map(String::as_str)
    }
}

/// The files named as the rotation `path` belongs to, from `path` on: `run.mcap` then `run_001.mcap`,
/// `run_002.mcap`… while they exist; from `run_004.mcap` on when that is the path given. Whether they are of the
/// same run is [`load`]'s to tell (by their run id).
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
    for i in start.saturating_add(1)..u32::MAX {
        let next = dir.join(format!("{base}_{i:03}{ext}"));
        if std::fs::symlink_metadata(&next).is_err() {
            break;
        }
        files.push(next);
    }
    files
}

/// Reads the rotation of `path` (see [`rotation`]): the files of its run, up to a file cut short.
pub fn load(path: &Path) -> Result<Loaded, ReadError> {
    load_within(path, MEMORY_MAX)
}

/// [`load`] holding at most `memory` bytes of records ([`MEMORY_MAX`] for `load`).
pub fn load_within(path: &Path, memory: u64) -> Result<Loaded, ReadError> {
    let mut out = Loaded::default();
    let mut budget = memory;
    let mut names = rotation(path).into_iter();
    let first = names.next().unwrap_or_else(|| path.to_path_buf());
    let scanned = read_file(&first, &mut out, &mut budget)?;
    out.metadata = scanned.metadata;
    out.files.push(first.clone());
    if let Some(c) = scanned.cut {
        out.cut = Some((first, c));
    }
    let run = out.run_id().map(str::to_owned);
    for file in names {
        if out.cut.is_some() {
            out.ignored.push((file, "after a file cut short".into()));
            continue;
        }
        let theirs = match scan::scan(&file, true, |_, _| Ok(())) {
            Ok(s) => s
                .metadata
                .get(RUN_ID.0)
                .and_then(|m| m.get(RUN_ID.1))
                .cloned(),
            Err(e) => {
                out.ignored.push((file, format!("unreadable: {e}")));
                break;
            }
        };
        if run.is_some() && theirs != run {
            let why = match theirs {
                Some(id) => format!("run id {id}, not {}", run.as_deref().unwrap_or_default()),
                None => "no run id".to_owned(),
            };
            out.ignored.push((file, format!("not of this run ({why})")));
            break;
        }
        let scanned = read_file(&file, &mut out, &mut budget)?;
        out.files.push(file.clone());
        if let Some(c) = scanned.cut {
            out.cut = Some((file, c));
        }
    }
    if out.records.is_empty() {
        return Err(ReadError::NotARecording {
            path: path.to_path_buf(),
        });
    }
    out.records.sort_by_key(Record::seq);
    out.records.dedup_by_key(|r| r.seq());
    if out.cut.is_some() {
        keep_whole_passes(&mut out.records);
    }
    out.missing = missing(&out.records);
    Ok(out)
}

/// The records a recording lacks below its highest: `first` (records before the first kept: deleted files) plus
/// the gaps; exact for any sequence numbers (u64::MAX included), saturated at u64::MAX.
pub fn missing(sorted: &[Record]) -> u64 {
    let (Some(first), Some(last)) = (sorted.first(), sorted.last()) else {
        return 0;
    };
    let span = u128::from(last.seq()) - u128::from(first.seq()) + 1;
    let gaps = span.saturating_sub(sorted.len() as u128) + u128::from(first.seq());
    u64::try_from(gaps).unwrap_or(u64::MAX)
}

/// A cut recording's records reduced to what is whole: the RT thread's inputs and frames go through two rings the
/// recorder takes in turn, so a cut may keep a pass's inputs and lose its frames (or the reverse); what is kept
/// ends at the lower of the two channels' last records, then before the last pass that starts there (it may lack
/// its end).
fn keep_whole_passes(records: &mut Vec<Record>) {
    let last = |frames: bool| {
        records
            .iter()
            .rev()
            .find(|r| matches!(r, Record::Frame { .. }) == frames)
            .map(Record::seq)
    };
    let upto = match (last(false), last(true)) {
        (Some(i), Some(f)) => i.min(f),
        (Some(i), None) => i,
        (None, _) => 0,
    };
    records.retain(|r| r.seq() <= upto);
    let last_pass = records.iter().rposition(|r| {
        matches!(
            r,
            Record::Input {
                input: handoff::RecInput::Pass { .. },
                ..
            }
        )
    });
    if let Some(p) = last_pass {
        records.truncate(p);
    }
}

/// Reads `path`'s messages into `out`; its metadata and cut.
fn read_file(path: &Path, out: &mut Loaded, budget: &mut u64) -> Result<scan::Scanned, ReadError> {
    let max = *budget;
    scan::scan(path, false, |topic, data| {
        // what is kept costs at most its bytes and a record's own size
        *budget = budget
            .checked_sub(RECORD_COST + data.len() as u64)
            .ok_or_else(|| ReadError::TooLarge {
                path: path.to_path_buf(),
                max,
            })?;
        let decode = |source| ReadError::Decode {
            path: path.to_path_buf(),
            topic: topic.to_owned(),
            source,
        };
        if topic == INPUTS {
            let i: InputMsg = ciborium::from_reader(data).map_err(decode)?;
            out.records.push(Record::Input {
                seq: i.seq,
                input: i.input,
            });
        } else if topic == ROBOTS {
            out.robots
                .push(ciborium::from_reader(data).map_err(decode)?);
        } else if topic == ODOMETRY {
            out.odometry
                .push(ciborium::from_reader(data).map_err(decode)?);
        } else if let Some(d) = FRAMES.iter().position(|t| *t == topic) {
            let f: FrameMsg = ciborium::from_reader(data).map_err(decode)?;
            out.records.push(Record::Frame {
                seq: f.seq,
                dir: [FrameDir::In, FrameDir::Out, FrameDir::FromNrt][d],
                link: f.link,
                t_ns: f.t_ns,
                decoded_ns: f.decoded_ns,
                bytes: f.frame,
            });
        }
        Ok(())
    })
}

#[cfg(test)]
#[path = "read_tests.rs"]
mod tests;
