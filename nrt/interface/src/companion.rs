//! Puts an NRT thread that the RT thread wakes on its hot path (a front end's odometry
//! publisher) where the configuration says ([`CompanionPlacement`]): pinned to the RT thread's
//! CPU, at a SCHED_FIFO priority below the RT thread's. The RT thread never waits for it (it has
//! the higher priority and hands samples over through a wait-free ring); the publisher, rung on
//! the CPU the RT thread just ran on, runs the moment the RT thread waits again, instead of
//! waiting for another CPU to leave its idle state or for the SCHED_OTHER threads there.
//!
//! [`spawn`] starts such a thread and returns once the thread placed itself, with what it
//! obtained: every step that failed is kept with its cause and the thread runs on where it is
//! (as the RT thread degrades without privileges).

use crate::report::Reporter;
use handoff::thread_setup::{pin_current_thread, set_fifo};
use handoff::CompanionPlacement;
use std::io;
use std::sync::mpsc;
use std::thread::JoinHandle;

/// A step of a placement that failed.
#[derive(Debug, thiserror::Error)]
pub enum PlacementError {
    /// The thread could not be pinned.
    #[error("cannot pin to CPU {cpu}: {source}")]
    Affinity {
        /// The CPU asked for.
        cpu: u16,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// SCHED_FIFO was refused (e.g. without `CAP_SYS_NICE` or `RLIMIT_RTPRIO`).
    #[error("SCHED_FIFO {priority} refused: {source}")]
    Fifo {
        /// The priority asked for.
        priority: u8,
        /// Why.
        #[source]
        source: io::Error,
    },
}

/// What a thread obtained of its placement.
#[derive(Debug)]
pub struct Placed {
    /// What was asked.
    pub asked: CompanionPlacement,
    /// The steps that failed (none: all of it).
    pub errors: Vec<PlacementError>,
}

impl Placed {
    /// One line for the log: what was asked and what was not obtained.
    pub fn describe(&self) -> String {
        let mut s = self.asked.describe();
        for e in &self.errors {
            s.push_str("; ");
            s.push_str(&e.to_string());
        }
        s
    }

    /// Says where thread `what` runs: info when it got all of it, a warning naming what it did not get.
    pub fn report(&self, reporter: &Reporter, what: &str) {
        let line = format!("{what}: {}", self.describe());
        if self.errors.is_empty() {
            reporter.info(&line);
        } else {
            reporter.warn(&line);
        }
    }
}

/// Applies `p` to the calling thread: the CPU first (a SCHED_FIFO thread never migrates over a
/// busy CPU), then the priority. Never fails: what failed is in the result.
pub fn nrt_place_current_thread(p: &CompanionPlacement) -> Placed {
    let mut errors = Vec::new();
    if let Some(cpu) = p.cpu {
        if let Err(source) = pin_current_thread(usize::from(cpu)).map_err(io::Error::from) {
            errors.push(PlacementError::Affinity { cpu, source });
        }
    }
    if p.priority > 0 {
        if let Err(source) = set_fifo(p.priority).map_err(io::Error::from) {
            errors.push(PlacementError::Fifo {
                priority: p.priority,
                source,
            });
        }
    }
    Placed { asked: *p, errors }
}

/// Starts a thread named `name` that places itself at `p` and then runs `f`; returns once it
/// placed itself, with what it obtained.
///
/// ```
/// use handoff::CompanionPlacement;
/// let (t, placed) = nrt_interface::companion::spawn(
///     "doc-companion",
///     CompanionPlacement::default(),
///     || 2 + 2,
/// )
/// .unwrap();
/// assert!(placed.errors.is_empty());
/// assert_eq!(t.join().unwrap(), 4);
/// ```
pub fn spawn<T: Send + 'static>(
    name: &str,
    p: CompanionPlacement,
    f: impl FnOnce() -> T + Send + 'static,
) -> io::Result<(JoinHandle<T>, Placed)> {
    let (tx, rx) = mpsc::sync_channel(1);
    let thread = std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            let _ = tx.send(nrt_place_current_thread(&p));
            f()
        })?;
    let placed = rx
        .recv()
        .map_err(|_| io::Error::other(format!("thread {name} ended before it placed itself")))?;
    Ok((thread, placed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use handoff::thread_setup::{allowed_cpus, current_policy};

    #[test]
    fn a_thread_lands_on_its_cpu_with_the_priority_it_could_get() {
        let cpu = *allowed_cpus().last().unwrap() as u16;
        let asked = CompanionPlacement {
            cpu: Some(cpu),
            priority: 1,
        };
        let (t, placed) = spawn("test-companion", asked, move || {
            // SAFETY: no arguments; returns the CPU the caller runs on.
            (
                unsafe { libc::sched_getcpu() },
                allowed_cpus(),
                current_policy(),
            )
        })
        .unwrap();
        let (on, allowed, (pol, prio)) = t.join().unwrap();
        assert_eq!(placed.asked, asked);
        assert_eq!(allowed, vec![usize::from(cpu)], "pinned to its CPU alone");
        assert_eq!(on, i32::from(cpu));
        match placed.errors.as_slice() {
            // granted (root, or RLIMIT_RTPRIO): it runs SCHED_FIFO 1
            [] => assert_eq!((pol, prio), (libc::SCHED_FIFO, 1)),
            // refused: said, and the thread runs on as it was
            [PlacementError::Fifo { priority: 1, .. }] => {
                assert_eq!(pol, libc::SCHED_OTHER);
                assert!(placed.describe().contains("SCHED_FIFO 1 refused"));
            }
            other => panic!("unexpected: {other:?}"),
        }
    }

    #[test]
    fn a_cpu_that_does_not_exist_is_said_and_nothing_else_changes() {
        let before = allowed_cpus();
        let (t, placed) = spawn(
            "test-companion",
            CompanionPlacement {
                cpu: Some(u16::MAX),
                priority: 0,
            },
            allowed_cpus,
        )
        .unwrap();
        assert_eq!(t.join().unwrap(), before);
        assert!(matches!(
            placed.errors.as_slice(),
            [PlacementError::Affinity { cpu: u16::MAX, .. }]
        ));
        assert!(placed
            .describe()
            .starts_with("CPU 65535, SCHED_OTHER; cannot pin"));
    }
}
