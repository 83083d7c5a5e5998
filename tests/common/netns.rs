//! Test hosts on one machine: network namespaces joined by a virtual Ethernet segment, made by the test itself and
//! removed when it ends (nothing leaves them: the segment is a bridge inside a namespace of its own, with no route
//! to the machine's interfaces).
//!
//! ```text
//!   host 0 (netns) eth0 10.231.0.1 ─┐
//!   host 1 (netns) eth0 10.231.0.2 ─┼─ bridge (netns of its own)
//!   host 2 (netns) eth0 10.231.0.3 ─┘
//! ```
//!
//! A process runs on a host through [`Lan::command`] (`ip netns exec`). Each host also has its loopback up, so a
//! program bound to 127.0.0.1 on one host is unreachable from the others, as on real machines.
//! [`Lan::set_link`] takes a host's cable out and puts it back (the network as a fault).
#![allow(dead_code)]

use std::net::Ipv4Addr;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

/// One host of a [`Lan`].
#[derive(Debug, Clone)]
pub struct Host {
    /// Its network namespace.
    pub ns: String,
    /// The address of its `eth0` on the segment (a /24).
    pub addr: Ipv4Addr,
}

/// Several hosts on one Ethernet segment. Dropping it deletes every namespace it made.
#[derive(Debug)]
pub struct Lan {
    hosts: Vec<Host>,
    bridge_ns: String,
}

/// Multicast on the segment: DDS's default discovery needs it; many Wi-Fi networks do not forward it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Multicast {
    /// Multicast is forwarded between hosts (a wired LAN).
    On,
    /// No multicast leaves a host (its interface has no MULTICAST flag and no multicast route).
    Off,
}

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("ip {}: {e}", args.join(" ")))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

fn in_ns(ns: &str, args: &[&str]) -> Result<(), String> {
    let mut a = vec!["netns", "exec", ns, "ip"];
    a.extend_from_slice(args);
    ip(&a)
}

/// Why this machine cannot make test hosts (`None`: it can). A machine that forbids network namespaces (no
/// CAP_SYS_ADMIN / CAP_NET_ADMIN, no `ip`) is the one reason the multi-host tests may skip, and only outside CI:
/// in CI the skip is recorded and fails the test (`missing::machine_cannot`).
pub fn unavailable() -> Option<String> {
    static SEQ: AtomicU32 = AtomicU32::new(0);
    let probe = format!(
        "trt{}p{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    );
    match ip(&["netns", "add", &probe]) {
        Ok(()) => {
            let _ = ip(&["netns", "del", &probe]);
            None
        }
        Err(e) => Some(format!(
            "network namespaces unavailable on this machine: {e}"
        )),
    }
}

impl Lan {
    /// Makes `n` hosts (`10.231.0.1`, `.2`, …) on one segment. Errors say which `ip` command failed.
    pub fn new(n: usize, multicast: Multicast) -> Result<Lan, String> {
        static SEQ: AtomicU32 = AtomicU32::new(0);
        let tag = format!(
            "trt{}l{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        let bridge_ns = format!("{tag}-sw");
        let mut lan = Lan {
            hosts: Vec::new(),
            bridge_ns: bridge_ns.clone(),
        };
        ip(&["netns", "add", &bridge_ns])?;
        in_ns(&bridge_ns, &["link", "add", "br0", "type", "bridge"])?;
        // No IGMP snooping: DDS's multicast reaches every port without a querier on the segment.
        in_ns(
            &bridge_ns,
            &[
                "link",
                "set",
                "br0",
                "type",
                "bridge",
                "mcast_snooping",
                "0",
            ],
        )?;
        in_ns(&bridge_ns, &["link", "set", "br0", "up"])?;
        for i in 0..n {
            let ns = format!("{tag}-h{i}");
            ip(&["netns", "add", &ns])?;
            // Pushed before it is complete so that Drop removes it whatever fails next.
            let addr = Ipv4Addr::new(10, 231, 0, (i + 1) as u8);
            lan.hosts.push(Host {
                ns: ns.clone(),
                addr,
            });
            let port = format!("p{i}");
            ip(&[
                "link", "add", "eth0", "netns", &ns, "type", "veth", "peer", "name", &port,
                "netns", &bridge_ns,
            ])?;
            in_ns(&bridge_ns, &["link", "set", &port, "master", "br0"])?;
            in_ns(&bridge_ns, &["link", "set", &port, "up"])?;
            in_ns(&ns, &["link", "set", "lo", "up"])?;
            in_ns(&ns, &["addr", "add", &format!("{addr}/24"), "dev", "eth0"])?;
            if multicast == Multicast::Off {
                in_ns(&ns, &["link", "set", "eth0", "multicast", "off"])?;
            }
            in_ns(&ns, &["link", "set", "eth0", "up"])?;
            if multicast == Multicast::On {
                in_ns(&ns, &["route", "add", "224.0.0.0/4", "dev", "eth0"])?;
            }
        }
        Ok(lan)
    }

    /// Host `i`.
    pub fn host(&self, i: usize) -> &Host {
        &self.hosts[i]
    }

    /// `program` to be run on host `i` (its arguments and environment are the caller's to add).
    pub fn command(&self, i: usize, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.hosts[i].ns]).arg(program);
        c
    }

    /// Takes host `i`'s cable out (`false`) or puts it back (`true`): its `eth0` goes down or up.
    pub fn set_link(&self, i: usize, up: bool) -> Result<(), String> {
        let state = if up { "up" } else { "down" };
        in_ns(&self.hosts[i].ns, &["link", "set", "eth0", state])?;
        if up && self.has_multicast_route(i) {
            // A link that went down lost its routes: the multicast one comes back with it.
            let _ = in_ns(
                &self.hosts[i].ns,
                &["route", "replace", "224.0.0.0/4", "dev", "eth0"],
            );
        }
        Ok(())
    }

    fn has_multicast_route(&self, i: usize) -> bool {
        Command::new("ip")
            .args([
                "netns",
                "exec",
                &self.hosts[i].ns,
                "ip",
                "link",
                "show",
                "eth0",
            ])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).contains("MULTICAST"))
            .unwrap_or(false)
    }
}

impl Drop for Lan {
    fn drop(&mut self) {
        for h in &self.hosts {
            let _ = ip(&["netns", "del", &h.ns]);
        }
        let _ = ip(&["netns", "del", &self.bridge_ns]);
    }
}
