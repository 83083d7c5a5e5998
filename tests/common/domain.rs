//! The ROS 2 domain of a test process, distinct from every other test process running at the same time on this
//! machine (the test runner may run many at once: `cargo nextest` runs each test in a process of its own).
//!
//! A process claims a domain in 100..=199 by holding an exclusive lock on
//! `$TMPDIR/thymio-rt-test-domain-<id>.lock` for as long as it lives (the kernel drops the lock when the process
//! ends, however it ends), starting from its pid so that processes seldom try the same one first. The lock file
//! holds the claimer's pid: this file is included by more than one module of a test binary (tests/common and
//! tests/ros/rclpy_peer.rs), and each copy must find the same domain.
#![allow(dead_code)] // each including crate uses a part

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// First domain a test may use (away from the default 0 and from what users pick).
const FIRST: u32 = 100;
/// How many domains tests use.
const COUNT: u32 = 100;

/// This test process's ROS 2 domain: the same at every call, distinct from every other live test process's.
pub fn test_domain_id() -> u32 {
    static CLAIMED: OnceLock<(u32, Option<File>)> = OnceLock::new();
    CLAIMED.get_or_init(claim).0
}

/// Claims a free domain (or finds the one another copy of this module in this process claimed).
fn claim() -> (u32, Option<File>) {
    let pid = std::process::id();
    let dir = std::env::temp_dir();
    for i in 0..COUNT {
        let id = FIRST + (pid + i) % COUNT;
        let path = dir.join(format!("thymio-rt-test-domain-{id}.lock"));
        let Ok(mut file) = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
        else {
            continue;
        };
        if file.try_lock().is_ok() {
            let mine = file.set_len(0).is_ok()
                && file.seek(SeekFrom::Start(0)).is_ok()
                && file.write_all(pid.to_string().as_bytes()).is_ok();
            if mine {
                return (id, Some(file));
            }
            continue;
        }
        if holder(&mut file) == Some(pid) {
            return (id, None);
        }
    }
    panic!(
        "no free ROS 2 test domain in {FIRST}..{}: {COUNT} test processes hold one",
        FIRST + COUNT
    );
}

/// The pid written in a held lock file, waiting a little for a holder that has just locked it to write it.
fn holder(file: &mut File) -> Option<u32> {
    let deadline = Instant::now() + Duration::from_millis(200);
    loop {
        let mut text = String::new();
        if file.seek(SeekFrom::Start(0)).is_ok() && file.read_to_string(&mut text).is_ok() {
            if let Ok(pid) = text.trim().parse() {
                return Some(pid);
            }
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}
