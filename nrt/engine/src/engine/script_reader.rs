//! Reads script files on a worker thread of its own, so that the NRT loop never waits for a
//! path (`aseba/load_script`): the loop submits a path and picks the text up on a later
//! iteration; the worker rings the loop's doorbell when a read is done.
//!
//! Every path goes through [`read_script_file`] (regular files only, size-bounded, opened
//! without blocking), so the worker itself only waits for a slow file system. Should it hang
//! there, at most [`MAX_QUEUED`] further reads wait behind it and then submissions are refused
//! ([`ReaderError::Busy`]): nothing ever blocks the loop.

use super::script_file::{read_script_file, ScriptFileError};
use crossbeam::channel::{self, Receiver, Sender, TryRecvError, TrySendError};
use handoff::Doorbell;

/// Reads submitted and not yet picked up, beyond which [`ScriptReader::submit`] refuses.
pub const MAX_QUEUED: usize = 8;

/// Identifies a submitted read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ReadTicket(u64);

/// A finished read.
#[derive(Debug)]
pub struct ReadDone {
    /// The ticket [`ScriptReader::submit`] gave.
    pub ticket: ReadTicket,
    /// The path.
    pub path: String,
    /// The text, or why not.
    pub result: Result<String, ScriptFileError>,
}

/// Why a read could not be submitted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReaderError {
    /// [`MAX_QUEUED`] reads are waiting (a file system that does not answer?).
    #[error("{MAX_QUEUED} script reads are already waiting (a file system that does not answer?)")]
    Busy,
    /// The worker thread is gone.
    #[error("the script reader thread is gone")]
    Gone,
}

/// The NRT loop's end of the reader (see the module documentation).
#[derive(Debug)]
pub struct ScriptReader {
    jobs: Sender<(ReadTicket, String)>,
    done: Receiver<ReadDone>,
    next: u64,
    /// Submitted and not yet picked up.
    in_flight: usize,
}

impl ScriptReader {
    /// Starts the worker thread; it rings `doorbell` after each read. The thread ends when the
    /// reader is dropped (after the read it is in, if any; it is never joined, so dropping
    /// never waits for a file system).
    pub fn start(doorbell: Doorbell) -> std::io::Result<ScriptReader> {
        let (jobs, job_rx) = channel::bounded::<(ReadTicket, String)>(MAX_QUEUED);
        let (done_tx, done) = channel::bounded::<ReadDone>(MAX_QUEUED);
        std::thread::Builder::new()
            .name("script-reader".into())
            .stack_size(256 * 1024)
            .spawn(move || {
                for (ticket, path) in job_rx {
                    let result = read_script_file(&path);
                    let d = ReadDone {
                        ticket,
                        path,
                        result,
                    };
                    if done_tx.send(d).is_err() {
                        break;
                    }
                    doorbell.ring();
                }
            })?;
        Ok(ScriptReader {
            jobs,
            done,
            next: 0,
            in_flight: 0,
        })
    }

    /// Queues a read of `path`; never blocks.
    pub fn submit(&mut self, path: &str) -> Result<ReadTicket, ReaderError> {
        let ticket = ReadTicket(self.next);
        if self.in_flight >= MAX_QUEUED {
            return Err(ReaderError::Busy);
        }
        match self.jobs.try_send((ticket, path.to_owned())) {
            Ok(()) => {
                self.next += 1;
                self.in_flight += 1;
                Ok(ticket)
            }
            Err(TrySendError::Full(_)) => Err(ReaderError::Busy),
            Err(TrySendError::Disconnected(_)) => Err(ReaderError::Gone),
        }
    }

    /// A finished read, if any; never blocks.
    pub fn try_done(&mut self) -> Option<ReadDone> {
        match self.done.try_recv() {
            Ok(d) => {
                self.in_flight -= 1;
                Some(d)
            }
            Err(TryRecvError::Empty | TryRecvError::Disconnected) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn wait_done(r: &mut ScriptReader, bell: &Doorbell) -> ReadDone {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(d) = r.try_done() {
                return d;
            }
            assert!(Instant::now() < deadline, "no read finished in time");
            bell.wait(Duration::from_millis(100));
        }
    }

    #[test]
    fn reads_off_thread_and_rings() {
        let bell = Doorbell::new();
        let mut r = ScriptReader::start(bell.clone()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.aesl");
        std::fs::write(&p, "<network/>").unwrap();
        let t1 = r.submit(p.to_str().unwrap()).unwrap();
        let t2 = r.submit("/dev/zero").unwrap();
        let d1 = wait_done(&mut r, &bell);
        assert_eq!((d1.ticket, d1.result), (t1, Ok("<network/>".to_owned())));
        let d2 = wait_done(&mut r, &bell);
        assert_eq!(d2.ticket, t2);
        assert_eq!(d2.path, "/dev/zero");
        assert_eq!(
            d2.result,
            Err(ScriptFileError::NotRegular("character device"))
        );
    }

    #[test]
    fn refuses_beyond_the_queue_bound() {
        let bell = Doorbell::new();
        let mut r = ScriptReader::start(bell.clone()).unwrap();
        // nobody picks the results up: at most MAX_QUEUED are in flight
        let mut accepted = 0;
        for _ in 0..(3 * MAX_QUEUED) {
            if r.submit("/nonexistent/x.aesl").is_ok() {
                accepted += 1;
            }
        }
        assert_eq!(accepted, MAX_QUEUED);
        assert_eq!(r.submit("/nonexistent/x.aesl"), Err(ReaderError::Busy));
        for _ in 0..accepted {
            assert_eq!(
                wait_done(&mut r, &bell).result,
                Err(ScriptFileError::NotFound)
            );
        }
        assert!(r.submit("/nonexistent/x.aesl").is_ok());
    }
}
