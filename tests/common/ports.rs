//! TCP ports for the servers a test starts on a port it chooses (rosmaster, relays, simulated robots, switches):
//! distinct from every other live test process's, and outside the kernel's ephemeral range, so that no socket bound
//! to port 0 anywhere on the machine (a driver's TCPROS or XML-RPC server on a LAN address, a client's own end) can
//! take one between the choice and its use. A port given by `bind(127.0.0.1:0)` and released could be handed out
//! again at once: a rosmaster then failed to bind its port while another test's driver listened on it, and the test
//! talked to nobody.
//!
//! A process claims a port in [`FIRST`]..[`FIRST`] + [`COUNT`] by holding an exclusive lock on
//! `$TMPDIR/thymio-rt-test-port-<port>.lock` for as long as it lives (the kernel drops it however the process ends),
//! and only if the port can be bound right now on 127.0.0.1 and on every address.

use std::fs::{File, OpenOptions};
use std::net::TcpListener;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

/// First port tests use (below Linux's default ephemeral range, 32768–60999, and above the well-known and most
/// registered services' ports).
const FIRST: u32 = 20000;
/// How many ports tests use.
const COUNT: u32 = 12000;

/// A TCP port free on 127.0.0.1 and on every address right now, claimed by this process for as long as it lives.
pub fn free_port() -> u16 {
    static HELD: Mutex<Vec<File>> = Mutex::new(Vec::new());
    static NEXT: AtomicU32 = AtomicU32::new(0);
    // processes start apart (by pid), and each walks on from its last port
    let base = std::process::id().wrapping_mul(97);
    let cursor = NEXT.load(Ordering::Relaxed);
    let dir = std::env::temp_dir();
    for i in 0..COUNT {
        let port = (FIRST + base.wrapping_add(cursor).wrapping_add(i) % COUNT) as u16;
        let Ok(file) = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(dir.join(format!("thymio-rt-test-port-{port}.lock")))
        else {
            continue;
        };
        if file.try_lock().is_err() {
            continue; // another test process's (or this one's: a lock is per open file)
        }
        let bindable = TcpListener::bind(("127.0.0.1", port)).is_ok()
            && TcpListener::bind(("0.0.0.0", port)).is_ok();
        if bindable {
            NEXT.store(cursor.wrapping_add(i + 1), Ordering::Relaxed);
            HELD.lock().unwrap_or_else(|e| e.into_inner()).push(file);
            return port;
        }
    }
    panic!("no free TCP port for a test in {FIRST}..{}", FIRST + COUNT);
}
