//! The ROS 2 domains of test processes (tests/common/domain.rs): every copy of the domain code in one process finds
//! the same domain, and a process never gets a domain that a live test process holds, even when the pids would
//! choose it first; and the TCP ports of test servers (tests/common/ports.rs) are claimed the same way.
use crate::common;
use crate::rclpy_peer;
use std::fs::File;
use std::io::Write;
use std::process::{Command, Stdio};

/// Set in the child process that [`a_new_process_gets_the_one_domain_nobody_holds`] starts: the child runs
/// [`every_copy_in_a_process_finds_the_same_domain`], which then prints its domain.
const CHILD: &str = "THYMIO_TEST_DOMAIN_CHILD";

#[test]
fn every_copy_in_a_process_finds_the_same_domain() {
    let a = common::test_domain_id();
    let b = rclpy_peer::test_domain_id();
    assert_eq!(a, b, "tests/common and rclpy_peer chose different domains");
    assert!((100..200).contains(&a), "domain {a} outside 100..200");
    if std::env::var_os(CHILD).is_some() {
        // run as the child of a_new_process_gets_the_one_domain_nobody_holds: tell it the domain found
        println!("domain {a}");
    }
}

#[test]
fn a_new_process_gets_the_one_domain_nobody_holds() {
    let mine = common::test_domain_id();
    // Hold every other domain this process can lock, but one: a new test process must take that one, whatever
    // its pid (with 99 held, a choice from the pid alone is right once in a hundred).
    let dir = std::env::temp_dir();
    let mut held: Vec<File> = Vec::new();
    let mut free = None;
    for id in (100..200).rev().filter(|&id| id != mine) {
        let path = dir.join(format!("thymio-rt-test-domain-{id}.lock"));
        let mut f = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .unwrap();
        if f.try_lock().is_ok() {
            if free.is_none() {
                free = Some(id);
                drop(f);
                continue;
            }
            // as a live test process does: its pid in the file (an empty file makes the child wait for a pid that is
            // about to be written, 200 ms for each of the 98)
            f.set_len(0).unwrap();
            f.write_all(std::process::id().to_string().as_bytes())
                .unwrap();
            held.push(f);
        }
    }
    let free = free.expect("some domain is free");
    let exe = std::env::current_exe().unwrap();
    let out = Command::new("timeout")
        .arg("30")
        .arg(exe)
        .args([
            "--exact",
            "domain::every_copy_in_a_process_finds_the_same_domain",
            "--nocapture",
        ])
        .env(CHILD, "1")
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    assert!(out.status.success(), "the child failed: {:?}", out.status);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("domain "))
        .unwrap_or_else(|| panic!("the child printed no domain: {stdout}"));
    let theirs: u32 = line.trim().parse().unwrap();
    assert_ne!(theirs, mine, "the child got this process's domain");
    assert_eq!(theirs, free, "the child did not get the one free domain");
    drop(held);
}

/// The test ports (tests/common/ports.rs): distinct within a process, bindable, outside the kernel's ephemeral range
/// (where a socket bound to port 0 elsewhere could take them); another process never gets a port this one holds.
#[test]
fn test_ports_are_distinct_bindable_and_never_ephemeral() {
    let ports: Vec<u16> = (0..20).map(|_| common::free_port()).collect();
    let mut distinct = ports.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), ports.len(), "a port given twice: {ports:?}");
    for &p in &ports {
        assert!((20000..32000).contains(&p), "port {p} outside 20000..32000");
        std::net::TcpListener::bind(("127.0.0.1", p)).unwrap();
        // held by this process: its lock file cannot be taken by another
        let f = File::options()
            .read(true)
            .write(true)
            .open(std::env::temp_dir().join(format!("thymio-rt-test-port-{p}.lock")))
            .unwrap();
        assert!(f.try_lock().is_err(), "port {p}'s lock is not held");
    }
}
