//! TCP_NODELAY on our publishers' connections, which roslibrust 0.26 never sets (it ignores the subscriber's
//! `tcp_nodelay=1`): with Nagle on, a message written while the previous one waits for the subscriber's delayed
//! acknowledgement is held up to 40 ms (the benchmark's ROS 1 `odom` p99 was 48 ms, its p50 0.4 ms).
//!
//! From the master watcher thread, every [`super::watch::PERIOD`]: the TCPROS port of each topic we publish (our
//! own slave API's `requestTopic`), the established connections on those ports (`/proc/net/tcp{,6}`), their
//! sockets among this process's descriptors (`/proc/self/fd`), and `setsockopt(TCP_NODELAY)` on each new one. Only
//! sockets of our publishers are touched; a descriptor closed meanwhile makes the call fail, nothing else.

use super::graph::{Registration, Registry};
use super::master::Client;
use serde_xmlrpc::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Sets TCP_NODELAY on the connections of our publishers (see the module documentation).
pub struct NoDelay {
    own: Client,
    /// TCPROS port of each topic we publish.
    ports: BTreeMap<String, u16>,
    /// Socket inodes already set.
    done: BTreeSet<u64>,
}

impl NoDelay {
    /// For the node whose slave API is `own`.
    pub fn new(own: Client) -> NoDelay {
        NoDelay {
            own,
            ports: BTreeMap::new(),
            done: BTreeSet::new(),
        }
    }

    /// One sweep; returns how many sockets were set.
    pub fn sweep(&mut self, registry: &Registry) -> usize {
        for r in registry.snapshot() {
            if let Registration::Publisher { topic, .. } = r {
                if !self.ports.contains_key(&topic) {
                    if let Some(port) = self.port_of(&topic) {
                        self.ports.insert(topic, port);
                    }
                }
            }
        }
        let ports: BTreeSet<u16> = self.ports.values().copied().collect();
        let inodes: BTreeSet<u64> = ["/proc/net/tcp", "/proc/net/tcp6"]
            .iter()
            .flat_map(|f| established(&std::fs::read_to_string(f).unwrap_or_default(), &ports))
            .filter(|i| !self.done.contains(i))
            .collect();
        if inodes.is_empty() {
            return 0;
        }
        let mut set = 0;
        for (fd, inode) in socket_fds() {
            if inodes.contains(&inode) && set_nodelay(fd) {
                self.done.insert(inode);
                set += 1;
            }
        }
        set
    }

    fn port_of(&self, topic: &str) -> Option<u16> {
        let protocols = Value::Array(vec![Value::Array(vec![Value::String("TCPROS".into())])]);
        match self
            .own
            .call("requestTopic", vec![Value::String(topic.into()), protocols])
            .ok()?
        {
            Value::Array(p) => match p.get(2) {
                Some(Value::Int(port)) => u16::try_from(*port).ok(),
                _ => None,
            },
            _ => None,
        }
    }
}

/// Inodes of the established connections whose local port is in `ports`, from a `/proc/net/tcp` table.
fn established(table: &str, ports: &BTreeSet<u16>) -> Vec<u64> {
    table
        .lines()
        .skip(1)
        .filter_map(|l| {
            let c: Vec<&str> = l.split_whitespace().collect();
            let port = u16::from_str_radix(c.get(1)?.rsplit(':').next()?, 16).ok()?;
            (c.get(3) == Some(&"01") && ports.contains(&port)).then(|| c.get(9)?.parse().ok())?
        })
        .collect()
}

/// This process's socket descriptors and their inodes.
fn socket_fds() -> Vec<(i32, u64)> {
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let e = e.ok()?;
        let fd: i32 = e.file_name().to_str()?.parse().ok()?;
        let link = std::fs::read_link(e.path()).ok()?;
        let inode = link
            .to_str()?
            .strip_prefix("socket:[")?
            .strip_suffix(']')?
            .parse()
            .ok()?;
        Some((fd, inode))
    })
    .collect()
}

fn set_nodelay(fd: i32) -> bool {
    let on: libc::c_int = 1;
    // SAFETY: setsockopt reads `size_of::<c_int>()` bytes from a live local; the kernel checks the descriptor (a
    // closed one fails with EBADF, a non-TCP one with ENOTSOCK/EOPNOTSUPP) and touches nothing else.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_NODELAY,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    r == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn established_connections_of_our_ports_are_found() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1
   1: 0100007F:1F90 0100007F:D2F0 01 00000000:00000000 00:00000000 00000000     0        0 222 1
   2: 0100007F:1F91 0100007F:D2F1 01 00000000:00000000 00:00000000 00000000     0        0 333 1";
        let ports: BTreeSet<u16> = [0x1F90].into();
        assert_eq!(established(table, &ports), vec![222]);
    }

    #[test]
    fn a_connected_socket_of_ours_gets_nodelay() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let c = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        let (s, _) = l.accept().unwrap();
        assert!(!s.nodelay().unwrap());
        let ports: BTreeSet<u16> = [port].into();
        let inodes: Vec<u64> = ["/proc/net/tcp", "/proc/net/tcp6"]
            .iter()
            .flat_map(|f| established(&std::fs::read_to_string(f).unwrap(), &ports))
            .collect();
        assert_eq!(inodes.len(), 1);
        for (fd, inode) in socket_fds() {
            if inodes.contains(&inode) {
                assert!(set_nodelay(fd));
            }
        }
        assert!(s.nodelay().unwrap());
        assert!(
            !c.nodelay().unwrap(),
            "the client side (another local port) is left alone"
        );
    }
}
