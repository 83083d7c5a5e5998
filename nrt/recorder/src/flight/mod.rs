//! The flight recorder of `thymio-rt run --record FILE.mcap`: a thread that takes what the RT thread recorded
//! (its inputs and frames, [`rt_channels`]) and the odometry it handed out (made into the messages the front ends
//! publish, [`outputs`]) and writes them into a rotating MCAP [`Recording`]; a [`FrontEnd`] that tells it which
//! robots are driven (their topics, frames, covariances).
//!
//! A full disk or any write error stops the recording (said once, as an error), never the driver: the thread
//! goes on taking the rings' records so that the RT thread's drop counts stay meaningful, and [`FlightRecorder::
//! finish`] reports the error. The RT side never waits for the recorder: a full ring drops and counts.

mod front;
pub mod outputs;
pub mod read;
mod read_error;
pub mod rt_channels;
pub mod scan;

use crate::{RecordError, RecordLimits, RecordSummary, Recording};
pub use front::DIAGNOSTICS;
use front::{Published, RecorderFront};
use handoff::{NrtOdomOut, NrtRecording, RobotId};
use nrt_interface::front_end::FrontEnd;
use outputs::{Outputs, RobotDescription, RobotOutputs};
use rt_channels::RtChannels;
use std::collections::{BTreeMap, VecDeque};
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often the thread takes the rings (they hold about a second of a busy robot).
const DRAIN_PERIOD: Duration = Duration::from_millis(10);
/// How often the open chunk is written out.
const FLUSH_PERIOD: Duration = Duration::from_secs(1);
/// How long [`FlightRecorder::finish`] waits for the RT thread to end (its last records: the exit stops).
const FINISH_WAIT: Duration = Duration::from_secs(3);
/// How many odometry samples of robots the front end does not know yet are kept (see [`PendingOdometry`]).
const PENDING_MAX: usize = 256;
/// How long such a sample is kept (its robot never became ready: it is dropped, as the front ends drop it).
const PENDING_NS: u64 = 2_000_000_000;

/// What the thread and the front end share.
#[derive(Default)]
struct Shared {
    /// The driven robots' outputs (topics, frames, settings), by RT slot.
    robots: Mutex<BTreeMap<RobotId, RobotOutputs>>,
    /// Finish: take what is left once the RT thread ended, then close the file.
    finish: AtomicBool,
    /// The robots' outputs changed: the thread writes their descriptions.
    changed: AtomicBool,
    /// What the front end queued (sensors, flags, diagnostics), for the thread to write.
    published: Mutex<VecDeque<Published>>,
    /// Messages the front end dropped because the queue was full.
    published_dropped: AtomicU64,
}

impl Shared {
    fn robots(&self) -> std::sync::MutexGuard<'_, BTreeMap<RobotId, RobotOutputs>> {
        self.robots.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn published(&self) -> std::sync::MutexGuard<'_, VecDeque<Published>> {
        self.published
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// How a recording ended.
#[derive(Debug)]
pub struct FlightSummary {
    /// What the writer wrote (files, messages per topic, bytes).
    pub summary: Option<RecordSummary>,
    /// The error that stopped the recording, if one did.
    pub error: Option<RecordError>,
    /// Records the RT thread dropped because the rings were full: `(inputs, frames)`.
    pub dropped: (u64, u64),
    /// Published messages (sensors, flags, diagnostics) dropped because the recorder fell behind.
    pub dropped_published: u64,
}

/// The recording's account in `--report` (JSON).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FlightReport {
    /// The files kept.
    pub files: Vec<String>,
    /// Messages written per topic.
    pub messages: BTreeMap<String, u64>,
    /// Bytes written (deleted files included).
    pub bytes: u64,
    /// Inputs the RT thread dropped (its ring was full).
    pub dropped_inputs: u64,
    /// Frames the RT thread dropped.
    pub dropped_frames: u64,
    /// Published messages (sensors, flags, diagnostics) the recorder dropped (it fell behind).
    pub dropped_published: u64,
    /// What stopped the recording early, if anything.
    pub error: Option<String>,
    /// The file that error left without its summary (replay reads it up to its last complete chunk), if any.
    pub cut: Option<String>,
}

impl FlightSummary {
    /// The account for `--report`.
    pub fn report(&self) -> FlightReport {
        let s = self.summary.clone().unwrap_or_default();
        FlightReport {
            files: s.files.iter().map(|p| p.display().to_string()).collect(),
            messages: s.messages,
            bytes: s.bytes,
            dropped_inputs: self.dropped.0,
            dropped_frames: self.dropped.1,
            dropped_published: self.dropped_published,
            error: self.error.as_ref().map(|e| e.to_string()),
            cut: s.cut.as_ref().map(|p| p.display().to_string()),
        }
    }

    /// One line for the log.
    pub fn describe(&self) -> String {
        let mut s = match &self.summary {
            Some(r) => format!(
                "flight recorder: {} message(s), {} byte(s) in {}",
                r.messages.values().sum::<u64>(),
                r.bytes,
                r.files
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None => "flight recorder: nothing written".to_owned(),
        };
        if let Some(cut) = self.summary.as_ref().and_then(|r| r.cut.as_ref()) {
            s += &format!(
                " ({} left without its summary: replay reads it up to its last complete chunk; the messages counted \
                 are those of its complete chunks)",
                cut.display()
            );
        }
        if self.dropped != (0, 0) {
            s += &format!(
                "; the RT thread dropped {} input(s) and {} frame(s) (its rings were full)",
                self.dropped.0, self.dropped.1
            );
        }
        if self.dropped_published != 0 {
            s += &format!(
                "; {} published message(s) dropped (the recorder fell behind)",
                self.dropped_published
            );
        }
        if let Some(e) = &self.error {
            s += &format!("; stopped early: {e}");
        }
        s
    }
}

/// The recorder: its thread, and what its front end shares with it.
pub struct FlightRecorder {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<FlightSummary>>,
    /// [`FlightConfig::ros_namespace`], for the front end.
    ros_namespace: String,
    /// [`FlightConfig::diagnostics_prefix`], for the front end.
    diagnostics_prefix: String,
    /// The recording's first file.
    path: PathBuf,
}

impl std::fmt::Debug for FlightRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlightRecorder").finish_non_exhaustive()
    }
}

/// Where and how to record.
#[derive(Debug, Clone)]
pub struct FlightConfig {
    /// The first file.
    pub path: PathBuf,
    /// Rotation.
    pub limits: RecordLimits,
    /// Metadata written into every file (name, key-values): the driver's version, its configuration.
    pub metadata: Vec<(String, BTreeMap<String, String>)>,
    /// The ROS namespace of the front ends' nodes (`/`: none; `-r __ns:=/a`: `/a`): the outputs are recorded
    /// under the topics and frames the ROS 2 front end publishes them on there (see [`outputs::RobotOutputs`]).
    pub ros_namespace: String,
    /// The prefix of the recorded diagnostics' names: the ROS 2 bridge node's name (`asebaros`), as its
    /// `/diagnostics` names them.
    pub diagnostics_prefix: String,
}

/// A recording's first file, made before anything else of the run starts (a bad path, an existing recording or
/// an unwritable place stop the start before the RT thread or a link is started), for [`FlightRecorder::start`].
pub struct FlightFile {
    rec: Recording,
    channels: RtChannels,
    /// CLOCK_REALTIME − CLOCK_MONOTONIC (ns) at its creation: the stamps' clock.
    offset: i128,
    path: PathBuf,
    ros_namespace: String,
    diagnostics_prefix: String,
}

impl std::fmt::Debug for FlightFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlightFile")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl FlightFile {
    /// Creates the first file with its metadata and the RT thread's channels (an error here is a start error: the
    /// path is bad, exists, or cannot be written).
    /// Closes the file and deletes it: the run it was made for did not start (a recording that holds nothing would
    /// refuse the next start as an existing one).
    pub fn abandon(self) {
        let files: Vec<PathBuf> = self.rec.files().to_vec();
        let _ = self.rec.finish();
        for f in files {
            if f.is_file() {
                if let Err(e) = std::fs::remove_file(&f) {
                    tracing::warn!("cannot delete the unused recording {}: {e}", f.display());
                }
            }
        }
    }

    pub fn create(cfg: &FlightConfig) -> Result<FlightFile, RecordError> {
        let metadata: Vec<(&str, BTreeMap<String, String>)> = cfg
            .metadata
            .iter()
            .map(|(n, m)| (n.as_str(), m.clone()))
            .collect();
        let offset = rt_channels::realtime_offset_ns();
        let mut rec = Recording::create(&cfg.path, cfg.limits, &metadata)?;
        let channels = RtChannels::register(&mut rec, offset)?;
        Ok(FlightFile {
            rec,
            channels,
            offset,
            path: cfg.path.clone(),
            ros_namespace: cfg.ros_namespace.clone(),
            diagnostics_prefix: cfg.diagnostics_prefix.clone(),
        })
    }

    /// Its path (the first file of the rotation).
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl FlightRecorder {
    /// Starts the thread writing into `file` what comes from `recording` (the RT thread's records) and
    /// `odometry` (the recorder's own odometry ring, `None` if none was made).
    pub fn start(
        file: FlightFile,
        recording: NrtRecording,
        mut odometry: Option<NrtOdomOut>,
    ) -> Result<FlightRecorder, RecordError> {
        if let Some(o) = odometry.as_mut() {
            o.nrt_activate();
        }
        let FlightFile {
            rec,
            channels,
            offset,
            path,
            ros_namespace,
            diagnostics_prefix,
        } = file;
        let shared = Arc::new(Shared::default());
        let thread = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("thymio-rt-recorder".into())
                .spawn(move || {
                    run(
                        rec,
                        channels,
                        Outputs::new(offset),
                        recording,
                        odometry,
                        &shared,
                    )
                })
                .map_err(|source| RecordError::Io {
                    path: path.clone(),
                    what: "starting the recorder thread",
                    source,
                })?
        };
        Ok(FlightRecorder {
            shared,
            path,
            thread: Some(thread),
            ros_namespace,
            diagnostics_prefix,
        })
    }

    /// The front end that tells the recorder which robots are driven (put it in the run's list of front ends).
    pub fn front_end(&self) -> Box<dyn FrontEnd> {
        let now = Instant::now();
        Box::new(RecorderFront {
            shared: self.shared.clone(),
            next_settings: now,
            next_diagnostics: now,
            ros_namespace: self.ros_namespace.clone(),
            diagnostics_prefix: self.diagnostics_prefix.clone(),
        })
    }

    /// Finishes the recording: takes what the RT thread recorded until it ended (at most a few seconds: call
    /// this after stopping it), closes the file and says how it went.
    pub fn finish(mut self) -> FlightSummary {
        self.shared.finish.store(true, Ordering::Relaxed);
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(s)) => s,
            joined => {
                let what = match joined {
                    Some(Err(p)) => panic_text(&*p),
                    _ => "the recorder thread is gone".to_owned(),
                };
                let error = RecordError::Panicked {
                    path: self.path.clone(),
                    what,
                };
                tracing::error!("{error}");
                FlightSummary {
                    summary: None,
                    error: Some(error),
                    dropped: (0, 0),
                    dropped_published: 0,
                }
            }
        }
    }
}

impl Drop for FlightRecorder {
    fn drop(&mut self) {
        self.shared.finish.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The recorder thread (see the module documentation).
fn run(
    mut rec: Recording,
    mut channels: RtChannels,
    mut outputs: Outputs,
    mut recording: NrtRecording,
    mut odometry: Option<NrtOdomOut>,
    shared: &Shared,
) -> FlightSummary {
    let path = rec.files().first().cloned().unwrap_or_default();
    let mut error = Stop(None, None, path.clone());
    let mut pending = PendingOdometry::default();
    let mut finish_by: Option<Instant> = None;
    let mut next_flush = Instant::now() + FLUSH_PERIOD;
    loop {
        let ended = recording.nrt_peer_gone();
        while let Some(e) = recording.nrt_pop_input() {
            error.run(|| channels.input(&mut rec, &e));
        }
        while let Some(f) = recording.nrt_pop_frame() {
            error.run(|| channels.frame(&mut rec, &f));
        }
        // A copy of the robots' outputs, the lock released at once: the front end takes it on the NRT thread for
        // every sensor message, never behind this thread's writes.
        let robots = shared.robots().clone();
        if shared.changed.swap(false, Ordering::Relaxed) {
            let now = handoff::monotonic_ns();
            for (robot, r) in robots.iter() {
                error.run(|| outputs.describe(&mut rec, &RobotDescription::of(*robot, r), now));
            }
        }
        if let Some(o) = odometry.as_mut() {
            pending.write_known(&robots, |r, h| {
                error.run(|| outputs.odometry(&mut rec, r, h))
            });
            while let Some(h) = o.nrt_pop() {
                error.run(|| channels.odometry(&mut rec, &h));
                match robot_of(&robots, &h) {
                    Some(r) => error.run(|| outputs.odometry(&mut rec, r, &h)),
                    None => pending.keep(h),
                }
            }
            while o.nrt_pop_joint().is_some() {}
        }
        // taken whole under the lock, written after it
        let published = std::mem::take(&mut *shared.published());
        for p in &published {
            error.run(|| {
                outputs.message(&mut rec, &p.topic, &p.ros2_type(), p.log_ns, p.stamp, |b| {
                    p.encode(b)
                })
            });
        }
        if ended {
            break;
        }
        if Instant::now() >= next_flush {
            // what was recorded is on disk within this (a crash loses at most the last FLUSH_PERIOD)
            next_flush = Instant::now() + FLUSH_PERIOD;
            error.run(|| rec.flush());
        }
        if shared.finish.load(Ordering::Relaxed) {
            let by = *finish_by.get_or_insert_with(|| Instant::now() + FINISH_WAIT);
            if Instant::now() >= by {
                break;
            }
        }
        std::thread::sleep(DRAIN_PERIOD);
    }
    let Stop(mut error, panicked, _) = error;
    let dropped = recording.nrt_dropped();
    let summary = match panicked {
        Some(why) => Some(rec.abandon_after_panic(&why).0),
        None => match std::panic::catch_unwind(AssertUnwindSafe(|| rec.finish_with_account())) {
            Ok((s, Ok(()))) => Some(s),
            Ok((s, Err(e))) => {
                if error.is_none() {
                    tracing::error!("{e}: the flight recording could not be closed");
                    error = Some(e);
                }
                Some(s)
            }
            Err(p) => {
                let e = RecordError::Panicked {
                    path: path.to_path_buf(),
                    what: panic_text(&*p),
                };
                tracing::error!("{e}");
                error.get_or_insert(e);
                None
            }
        },
    };
    FlightSummary {
        summary,
        error,
        dropped,
        dropped_published: shared.published_dropped.load(Ordering::Relaxed),
    }
}

/// The outputs of the robot of sample `h`, if the front end knows it (the same node in that slot).
fn robot_of<'a>(
    robots: &'a BTreeMap<RobotId, RobotOutputs>,
    h: &handoff::OdomHandoff,
) -> Option<&'a RobotOutputs> {
    robots
        .get(&h.sample.robot)
        .filter(|r| r.node == h.sample.node)
}

/// Odometry samples the RT thread handed out before the front end learnt their robot (`RobotReady`): the ROS
/// front ends, told first, may publish them already, so they are written once the robot is known, in order;
/// bounded in number and age (a robot that never becomes ready: dropped, as every front end drops them).
#[derive(Default)]
struct PendingOdometry(VecDeque<handoff::OdomHandoff>);

impl PendingOdometry {
    /// Keeps `h` (the oldest dropped when full).
    fn keep(&mut self, h: handoff::OdomHandoff) {
        if self.0.len() == PENDING_MAX {
            self.0.pop_front();
        }
        self.0.push_back(h);
    }

    /// Writes the samples of the robots now known, in order; drops those too old.
    fn write_known(
        &mut self,
        robots: &BTreeMap<RobotId, RobotOutputs>,
        mut write: impl FnMut(&RobotOutputs, &handoff::OdomHandoff),
    ) {
        let oldest = handoff::monotonic_ns().saturating_sub(PENDING_NS);
        self.0.retain(|h| match robot_of(robots, h) {
            Some(r) => {
                write(r, h);
                false
            }
            None => h.handed_ns >= oldest,
        });
    }
}

/// The error that stopped the recording: once there is one, nothing more is written (the rings are still taken).
/// A panic inside a write (the `mcap` crate's) is caught here, at the recorder's boundary: it is that error, and
/// its text is kept (`.1`) so that the recording is abandoned, not closed by the writer that panicked.
struct Stop(Option<RecordError>, Option<String>, PathBuf);

impl Stop {
    fn run(&mut self, write: impl FnOnce() -> Result<(), RecordError>) {
        if self.0.is_some() {
            return;
        }
        let e = match std::panic::catch_unwind(AssertUnwindSafe(write)) {
            Ok(Ok(())) => return,
            Ok(Err(e)) => e,
            Err(p) => {
                let why = panic_text(&*p);
                self.1 = Some(why.clone());
                RecordError::Panicked {
                    path: self.2.clone(),
                    what: why,
                }
            }
        };
        // said once: later writes are not tried
        tracing::error!("{e}: the flight recorder stopped (the driver goes on)");
        self.0 = Some(e);
    }
}

/// A caught panic's message.
fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

/// The metadata the driver writes into every file: `thymio_rt` (version, the monotonic → wall clock offset at
/// the start, the run id that tells the files of this run's rotation from any other's: [`read::RUN_ID`]) and
/// `configuration` (the YAML in effect).
pub fn driver_metadata(
    version: &str,
    config_yaml: &str,
) -> Vec<(String, BTreeMap<String, String>)> {
    let driver = BTreeMap::from([
        ("version".to_owned(), version.to_owned()),
        (read::RUN_ID.1.to_owned(), run_id()),
        (
            "realtime_minus_monotonic_ns".to_owned(),
            rt_channels::realtime_offset_ns().to_string(),
        ),
    ]);
    let config = BTreeMap::from([("yaml".to_owned(), config_yaml.to_owned())]);
    vec![
        ("thymio_rt".to_owned(), driver),
        ("configuration".to_owned(), config),
    ]
}

/// A run id: the wall clock (ns), the process id and the monotonic clock (ns), in hex — unique per run on a host,
/// and two hosts' runs differ by their clocks.
fn run_id() -> String {
    let wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    format!(
        "{wall:x}-{:x}-{:x}",
        std::process::id(),
        handoff::monotonic_ns()
    )
}

/// `path` made absolute (the log says where the recording is, whatever the working directory).
pub fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_in_a_write_stops_the_recording_once_and_is_caught() {
        let mut stop = Stop(None, None, PathBuf::from("/r/run.mcap"));
        stop.run(|| panic!("chunk position"));
        let e = stop.0.as_ref().expect("the panic is the error").to_string();
        assert!(
            e.contains("\"/r/run.mcap\"")
                && e.contains("chunk position")
                && e.contains("the driver goes on"),
            "{e}"
        );
        assert_eq!(stop.1.as_deref(), Some("chunk position"));
        // nothing more is tried
        stop.run(|| unreachable!("a write after the recording stopped"));
    }
}
