//! Hostile ROS 1 peers against `thymio-rt run --ros1` (issue 23, items 4 and 5), with Debian's rosmaster and rospy
//! as the honest peers: an XML-RPC request nesting 5,000 arrays (a fault; the driver lives and serves ROS 1), an
//! oversized XML-RPC body (413 from its head alone), a TCPROS header announcing 0xFFFFFFF0 bytes (refused: the
//! driver's VmRSS stays put), an idle connection to the `odom` port (a new rospy subscriber still gets odom), and a
//! publisher the driver is told about that answers a 0xFFFFFFF0-byte header, then message (refused; rospy drives on).
//! Across hosts (network namespaces, tests/common/netns.rs): a driver with `ROS_IP=127.0.0.1` has no socket another
//! host reaches; with `ROS_IP` its LAN address, rospy on another host drives it.
#![cfg(feature = "ros1")]

use crate::common;
use crate::peers;

use common::netns::{Lan, Multicast};
use common::{free_port, Proc};
use peers::{driver, driver_command, need_ros1, rosmaster, rospy, PYTHON};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Whether the test cannot run: its ROS 1 peers are missing and the run opted out (tests/common/missing.rs:
/// otherwise a missing peer fails the test).
fn skip() -> bool {
    !need_ros1()
}

/// Sends `request` to 127.0.0.1:`port` and returns all that comes back before the peer closes ("" if nothing).
fn http(port: u16, request: &[u8]) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let _ = s.write_all(request);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// POSTs an XML-RPC body.
fn post(port: u16, body: &str) -> String {
    let head = format!(
        "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/xml\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    http(port, &[head.as_bytes(), body.as_bytes()].concat())
}

/// An XML-RPC call of `method` with `params` (already XML `<value>`s).
fn call(method: &str, params: &[String]) -> String {
    let params: String = params
        .iter()
        .map(|p| format!("<param>{p}</param>"))
        .collect();
    format!("<?xml version=\"1.0\"?><methodCall><methodName>{method}</methodName><params>{params}</params></methodCall>")
}

fn string(s: &str) -> String {
    format!("<value><string>{s}</string></value>")
}

/// The port of the first `http://host:PORT/` in `text`.
fn uri_port(text: &str) -> u16 {
    let at = text
        .find("http://")
        .unwrap_or_else(|| panic!("no URI in {text}"));
    let rest = &text[at + 7..];
    let end = rest.find(['/', '<']).unwrap_or(rest.len());
    rest[..end]
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {text}"))
}

/// The port of the driver's slave API, from the master on `master`.
fn driver_api(master: u16) -> u16 {
    let answer = post(
        master,
        &call("lookupNode", &[string("/hostile"), string("/asebaros")]),
    );
    uri_port(&answer)
}

/// The TCPROS port the driver's slave API (on `api`) gives for `topic`.
fn topic_port(api: u16, topic: &str) -> u16 {
    let protocols =
        "<value><array><data><value><array><data><value><string>TCPROS</string></value>\
                     </data></array></value></data></array></value>";
    let answer = post(
        api,
        &call(
            "requestTopic",
            &[string("/hostile"), string(topic), protocols.into()],
        ),
    );
    let after = &answer[answer.find("TCPROS").unwrap_or_else(|| panic!("{answer}"))..];
    let digits: String = after
        .split(['<', '>'])
        .filter(|t| t.chars().all(|c| c.is_ascii_digit()) && !t.is_empty())
        .take(1)
        .collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("no port in {answer}"))
}

/// `VmRSS` of process `pid` in kB.
fn vm_rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn nested_call(levels: usize) -> String {
    let mut s = String::from(
        "<?xml version=\"1.0\"?><methodCall><methodName>getPid</methodName><params><param>",
    );
    s.push_str(&"<value><array><data>".repeat(levels));
    s.push_str(&"</data></array></value>".repeat(levels));
    s.push_str("</param></params></methodCall>");
    s
}

/// A request nesting 5,000 arrays is a fault (the driver does not abort), a body of 200 MB is refused 413 from
/// its head, and ROS 1 is still served.
#[test]
fn ros1_hostile_xmlrpc_requests_are_refused_and_the_driver_survives() {
    if skip() {
        return;
    }
    let port = free_port();
    let _master = rosmaster(port);
    let mut drv = driver(port, &[]);
    let api = driver_api(port);
    let deep = nested_call(5_000);
    assert!(deep.len() > 150_000);
    let answer = post(api, &deep);
    assert!(
        answer.starts_with("HTTP/1.1 200") && answer.contains("<fault>"),
        "deep nesting: {answer:?}"
    );
    assert!(answer.contains("nested deeper than 64"), "{answer}");
    let big = http(
        api,
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml\r\nContent-Length: 209715200\r\n\r\n<?xml",
    );
    assert!(big.starts_with("HTTP/1.1 413"), "oversized body: {big:?}");
    assert!(drv.child.try_wait().unwrap().is_none(), "the driver died");
    let pid = post(api, &call("getPid", &[string("/hostile")]));
    assert!(pid.contains(&format!(">{}<", drv.child.id())), "{pid}");
    let v = rospy(port, &["odom", "10"], Duration::from_secs(30));
    assert_eq!(v["odom"], true, "ROS 1 no longer served: {v}");
    drv.drain();
}

/// The attacker of [`ros1_slow_and_idle_xmlrpc_connections_keep_no_caller_out`]: `slow` connections to
/// 127.0.0.1:`port` sending a request head one byte every 50 ms and `idle` ones sending nothing, each opened again
/// as soon as the driver drops it, until `stop`. Says on `ready` when all are open; returns how many were reopened.
fn slowloris(
    port: u16,
    slow: usize,
    idle: usize,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    ready: std::sync::mpsc::Sender<()>,
) -> usize {
    use std::sync::atomic::Ordering;
    // a refused connect (the listener's backlog full) is tried again at the next round
    let open = || {
        let s = TcpStream::connect(("127.0.0.1", port)).ok()?;
        s.set_nonblocking(true).ok()?;
        Some(s)
    };
    let head = b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
    let mut conns: Vec<(Option<TcpStream>, bool, usize)> =
        (0..slow + idle).map(|i| (open(), i < slow, 0)).collect();
    let _ = ready.send(());
    let mut reopened = 0;
    while !stop.load(Ordering::Relaxed) {
        for (conn, is_slow, sent) in conns.iter_mut() {
            let Some(s) = conn else {
                *conn = open();
                continue;
            };
            let mut b = [0u8; 64];
            let closed = match s.peek(&mut b) {
                Ok(0) => true,
                // an answer (a refusal) or an error: the driver is done with it
                Ok(_) => true,
                Err(e) => e.kind() != std::io::ErrorKind::WouldBlock,
            };
            let byte = [*head.get(*sent).unwrap_or(&b'a')];
            if closed || (*is_slow && s.write(&byte).is_err()) {
                *conn = open();
                *sent = 0;
                reopened += 1;
            } else if *is_slow {
                *sent += 1;
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    reopened
}

/// 64 connections trickling a request head byte by byte and 64 idle ones, each opened again as soon as the driver
/// drops it (all from 127.0.0.1, as every caller on loopback): `getPid` and `requestTopic` are still answered
/// within 1 s each, and a new rospy subscriber (whose `requestTopic` comes to this door) still gets odometry.
#[test]
fn ros1_slow_and_idle_xmlrpc_connections_keep_no_caller_out() {
    if skip() {
        return;
    }
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let port = free_port();
    let _master = rosmaster(port);
    let mut drv = driver(port, &[]);
    let api = driver_api(port);
    let stop = Arc::new(AtomicBool::new(false));
    let (ready, opened) = std::sync::mpsc::channel();
    let attacker = {
        let stop = stop.clone();
        std::thread::spawn(move || slowloris(api, 64, 64, stop, ready))
    };
    opened
        .recv_timeout(Duration::from_secs(10))
        .expect("the attacker's connections open");
    // let the slow ones get going (a bounded number of the attacker's rounds)
    std::thread::sleep(Duration::from_millis(300));
    let protocols =
        "<value><array><data><value><array><data><value><string>TCPROS</string></value>\
                     </data></array></value></data></array></value>";
    let mut worst = Duration::ZERO;
    for _ in 0..10 {
        let t0 = Instant::now();
        let pid = post(api, &call("getPid", &[string("/legit")]));
        let t1 = Instant::now();
        let topic = post(
            api,
            &call(
                "requestTopic",
                &[string("/legit"), string("/odom"), protocols.into()],
            ),
        );
        let t2 = Instant::now();
        worst = worst.max(t1 - t0).max(t2 - t1);
        assert!(
            pid.contains(&format!(">{}<", drv.child.id())) && topic.contains("TCPROS"),
            "a legitimate call under 128 slow and idle connections: getPid {pid:?}, requestTopic {topic:?}"
        );
        assert!(
            worst < Duration::from_secs(1),
            "a legitimate call answered in {worst:?}"
        );
    }
    let v = rospy(port, &["odom", "10"], Duration::from_secs(30));
    stop.store(true, Ordering::Relaxed);
    let reopened = attacker.join().unwrap();
    eprintln!("legitimate calls answered in at most {worst:?}; the attacker reopened {reopened} connections");
    assert_eq!(v["odom"], true, "a new rospy subscriber under attack: {v}");
    assert!(drv.child.try_wait().unwrap().is_none(), "the driver died");
    drv.drain();
}

/// Reads `/rosout` while calling `aseba/load_script` with a 4 MB path and `aseba/set_variable` with a 4 MB name
/// (both refused, both reported); prints the lengths of the `/rosout` lines that echo them.
const LONG_NAMES: &str = r#"
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
import rospy_peer
am = rospy_peer.asebaros_msgs()
import rospy
from rosgraph_msgs.msg import Log
rospy.init_node("long_names", anonymous=True, disable_signals=True)
lines = []
sub = rospy.Subscriber("/rosout", Log, lambda m: lines.append(m.msg) if "xxxxxxxx" in m.msg else None, queue_size=100)
rospy.wait_for_service("/aseba/load_script", timeout=10)
deadline = time.time() + 10
while sub.get_num_connections() == 0 and time.time() < deadline:
    time.sleep(0.05)
long = "x" * (4 << 20)
load = rospy.ServiceProxy("/aseba/load_script", am.srv.LoadScript)
put = rospy.ServiceProxy("/aseba/set_variable", am.srv.SetVariable)
errors = [rospy_peer.error_of(lambda: load(file_name="/tmp/" + long)), rospy_peer.error_of(lambda: put(long, [1]))]
deadline = time.time() + 10
while len(lines) < 2 and time.time() < deadline:
    time.sleep(0.05)
print(json.dumps({"rosout": [len(l) for l in lines], "tails": [l[-40:] for l in lines],
                  "errors": [None if e is None else len(e) for e in errors]}), flush=True)
"#;

/// A 4 MB path (`aseba/load_script`) and a 4 MB variable name (`aseba/set_variable`) are refused and reported,
/// cut to a bounded length with their size, on the console and on `/rosout`.
#[test]
fn ros1_untrusted_names_are_cut_in_the_log_and_rosout() {
    if skip() {
        return;
    }
    let port = free_port();
    let _master = rosmaster(port);
    let mut drv = driver(port, &[]);
    let mut c = Command::new("timeout");
    c.args(["60", PYTHON, "-c", LONG_NAMES])
        .arg(common::root().join("tests/ros1"))
        .env("ROS_MASTER_URI", peers::master_uri(port))
        .env("ROS_IP", "127.0.0.1")
        .env("ROS_HOME", tempfile::tempdir().unwrap().keep());
    let out = c.output().expect("run the rospy client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let v: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| {
            panic!(
                "rospy client: {e}\n{stdout}\n{}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    let rosout: Vec<u64> = v["rosout"]
        .as_array()
        .map(|a| a.iter().filter_map(|n| n.as_u64()).collect())
        .unwrap_or_default();
    assert!(
        rosout.len() >= 2 && rosout.iter().all(|&n| n < 4096),
        "/rosout lines echoing the 4 MB strings (lengths): {v}"
    );
    assert!(
        v["tails"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t.as_str().unwrap_or_default().contains("bytes)")),
        "a cut line says how long the string was: {v}"
    );
    drv.drain();
    let longest = drv.seen.iter().map(|l| l.len()).max().unwrap_or(0);
    let echoed = drv.seen.iter().filter(|l| l.contains("xxxxxxxx")).count();
    assert!(
        echoed >= 2 && longest < 4096,
        "the driver's log: {echoed} lines echo the strings, the longest has {longest} bytes"
    );
}

/// A connection to the `odom` port announcing a header of 0xFFFFFFF0 bytes is closed at once and costs no memory;
/// an idle connection to it blocks no one: a new rospy subscriber gets odometry while it stays open.
#[test]
fn ros1_hostile_tcpros_connections_neither_bloat_nor_block_the_driver() {
    if skip() {
        return;
    }
    let port = free_port();
    let _master = rosmaster(port);
    let drv = driver(port, &[]);
    let odom = topic_port(driver_api(port), "/odom");
    let pid = drv.child.id();
    let before = vm_rss_kb(pid);
    let mut big = TcpStream::connect(("127.0.0.1", odom)).unwrap();
    big.write_all(&0xFFFF_FFF0u32.to_le_bytes()).unwrap();
    let _ = big.write_all(&[b'x'; 4096]);
    let idle = TcpStream::connect(("127.0.0.1", odom)).unwrap();
    let start = Instant::now();
    let v = rospy(port, &["odom", "5"], Duration::from_secs(30));
    let after = vm_rss_kb(pid);
    // both facts in one message: on the old code both fail
    assert!(
        v["odom"] == true && after < before + 64 * 1024,
        "odom to a new subscriber beside an idle connection: {v}; VmRSS {before} → {after} kB"
    );
    eprintln!(
        "odom to a new rospy subscriber in {:?}; VmRSS {before} → {after} kB",
        start.elapsed()
    );
    // refused: the driver closes it (EOF or reset), long before now
    big.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let t0 = Instant::now();
    let mut sink = [0u8; 64];
    let closed = match big.read(&mut sink) {
        Ok(n) => n == 0,
        Err(e) => !matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
    };
    assert!(
        closed && t0.elapsed() < Duration::from_secs(1),
        "the connection was not refused"
    );
    drop(idle);
}

/// A fake publisher (Python): its slave API answers `requestTopic` with its TCPROS port, where the first
/// connection gets a header announcing 0xFFFFFFF0 bytes and the next ones a valid header, then a message
/// announcing 0xFFFFFFF0 bytes. Prints its URI, then `conn N` per connection.
const FAKE_PUBLISHER: &str = r#"
import socket, struct, sys, threading
from xmlrpc.server import SimpleXMLRPCServer
tcp = socket.socket()
tcp.bind(("127.0.0.1", 0))
tcp.listen()
port = tcp.getsockname()[1]
rpc = SimpleXMLRPCServer(("127.0.0.1", 0), logRequests=False)
rpc.register_function(lambda c, t, p: [1, "ready", ["TCPROS", "127.0.0.1", port]], "requestTopic")
threading.Thread(target=rpc.serve_forever, daemon=True).start()
print("http://127.0.0.1:%d/" % rpc.server_address[1], flush=True)
held = []
n = 0
while True:
    c, _ = tcp.accept()
    held.append(c)
    n += 1
    print("conn %d" % n, flush=True)
    huge = struct.pack("<I", 0xFFFFFFF0) + b"x" * 4096
    try:
        if n == 1:
            c.sendall(huge)
        else:
            fields = [b"callerid=/fake", b"md5sum=*", b"type=geometry_msgs/Twist", b"topic=/cmd_vel"]
            body = b"".join(struct.pack("<I", len(f)) + f for f in fields)
            c.sendall(struct.pack("<I", len(body)) + body + huge)
    except OSError:
        pass
"#;

/// A publisher that the driver is told about (`publisherUpdate`) and that answers a 0xFFFFFFF0-byte header, then
/// a 0xFFFFFFF0-byte message: the driver's subscription refuses both (VmRSS unchanged) and rospy still drives it.
#[test]
fn ros1_a_hostile_publisher_neither_bloats_nor_blocks_a_subscription() {
    if skip() {
        return;
    }
    let port = free_port();
    let _master = rosmaster(port);
    let drv = driver(port, &[]);
    let api = driver_api(port);
    let pid = drv.child.id();
    let before = vm_rss_kb(pid);
    let mut c = Command::new("timeout");
    c.args(["60", "python3", "-c", FAKE_PUBLISHER]);
    let mut fake = Proc::spawn("fake publisher", c);
    let uri = fake.wait_line(Duration::from_secs(10), |l| l.starts_with("http://"));
    let list = format!(
        "<value><array><data>{}</data></array></value>",
        string(&uri)
    );
    let answer = post(
        api,
        &call(
            "publisherUpdate",
            &[string("/fake"), string("/cmd_vel"), list],
        ),
    );
    assert!(
        answer.contains("<int>1</int>") || answer.contains("<i4>1</i4>"),
        "{answer}"
    );
    fake.wait_line(Duration::from_secs(10), |l| l == "conn 1");
    // the bad header, then (the driver tries again) the bad message: waited for without failing here, so that
    // the old code's failure shows its VmRSS below
    let deadline = Instant::now() + Duration::from_secs(5);
    let second = |f: &Proc| f.seen.iter().any(|l| l == "conn 2");
    while !second(&fake) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        fake.drain();
    }
    let both = second(&fake);
    let d = rospy(port, &["drive", "20"], Duration::from_secs(40));
    let after = vm_rss_kb(pid);
    assert!(
        d["odom_dx"].as_f64().unwrap_or(0.0) > 0.01 && after < before + 64 * 1024 && both,
        "rospy drive after a hostile publisher: {d}; VmRSS {before} → {after} kB; fake: {:?}",
        fake.seen
    );
}

/// `cmd` (built for this host) to be run on host `i` of `lan`, with the same arguments and environment.
fn on_host(lan: &Lan, i: usize, cmd: &Command) -> Command {
    let mut c = lan.command(i, cmd.get_program());
    c.args(cmd.get_args());
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => c.env(k, v),
            None => c.env_remove(k),
        };
    }
    c
}

/// The TCP sockets process `pid` listens on: `(address, port)` from its network namespace's table and its own
/// descriptors.
fn listening(pid: u32) -> Vec<(String, u16)> {
    let inodes: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| {
            d.filter_map(|e| {
                let link = std::fs::read_link(e.ok()?.path()).ok()?;
                let l = link.to_str()?;
                Some(l.strip_prefix("socket:[")?.strip_suffix(']')?.to_owned())
            })
            .collect()
        })
        .unwrap_or_default();
    let mut out = Vec::new();
    for table in ["tcp", "tcp6"] {
        let text = std::fs::read_to_string(format!("/proc/{pid}/net/{table}")).unwrap_or_default();
        for l in text.lines().skip(1) {
            let c: Vec<&str> = l.split_whitespace().collect();
            if c.len() < 10 || c[3] != "0A" || !inodes.iter().any(|i| i == c[9]) {
                continue;
            }
            let (addr, port) = c[1].split_once(':').unwrap();
            let port = u16::from_str_radix(port, 16).unwrap();
            let addr = if addr.len() == 8 {
                let n = u32::from_str_radix(addr, 16).unwrap();
                std::net::Ipv4Addr::from(n.to_le_bytes()).to_string()
            } else {
                format!("ipv6:{addr}")
            };
            out.push((addr, port));
        }
    }
    out
}

/// Waits (bounded) until process `pid` listens on `port`.
fn wait_listening_in(pid: u32, port: u16) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !listening(pid).iter().any(|(_, p)| *p == port) {
        assert!(Instant::now() < deadline, "nothing listens on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// rosmaster on host `i` (ROS_IP `ip`), port 11311 of that host.
fn lan_master(lan: &Lan, i: usize, ip: &str) -> Proc {
    let mut c = lan.command(i, PYTHON);
    c.args(["/usr/bin/rosmaster", "--core", "-p", "11311"])
        .env("ROS_IP", ip)
        .env("ROS_MASTER_URI", format!("http://{ip}:11311"))
        .env("ROS_HOME", tempfile::tempdir().unwrap().keep());
    let p = Proc::spawn("rosmaster", c);
    wait_listening_in(p.child.id(), 11311);
    p
}

/// The driver on host `i` with ROS_IP `ip` and the master at `master_ip`.
fn lan_driver(lan: &Lan, i: usize, ip: &str, master_ip: &str) -> Proc {
    let mut c = driver_command(0);
    c.arg("--no-ros")
        .env("ROS_MASTER_URI", format!("http://{master_ip}:11311"))
        .env("ROS_IP", ip);
    let mut p = Proc::spawn("thymio-rt --ros1", on_host(lan, i, &c));
    p.wait_line(Duration::from_secs(60), |l| {
        l.contains("ROS 1 interface up")
    });
    p
}

/// Whether host `i` opens a TCP connection to `addr`:`port` within 2 s.
fn reaches(lan: &Lan, i: usize, addr: &str, port: u16) -> bool {
    lan.command(i, "python3")
        .args([
            "-c",
            "import socket,sys\nsocket.create_connection((sys.argv[1],int(sys.argv[2])),timeout=2)",
            addr,
            &port.to_string(),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// [`skip`], or the machine cannot make test hosts (a recorded skip).
fn netns_skip() -> bool {
    skip() || !common::can_make_hosts()
}

/// `ROS_IP=127.0.0.1`: every socket of the driver listens on loopback, and from another host none is reached
/// (neither an XML-RPC `publisherUpdate` nor anything else can get in).
#[test]
fn ros1_a_loopback_driver_is_out_of_reach_of_other_hosts() {
    if netns_skip() {
        return;
    }
    let lan = Lan::new(2, Multicast::Off).expect("make the LAN");
    let _master = lan_master(&lan, 0, "127.0.0.1");
    let drv = lan_driver(&lan, 0, "127.0.0.1", "127.0.0.1");
    let sockets = listening(drv.child.id());
    assert!(sockets.len() >= 2, "{sockets:?}");
    for (addr, _) in &sockets {
        assert_eq!(
            addr, "127.0.0.1",
            "a socket on another address: {sockets:?}"
        );
    }
    let host0 = lan.host(0).addr.to_string();
    for (_, port) in &sockets {
        assert!(
            !reaches(&lan, 1, &host0, *port),
            "host 1 reached port {port}: {sockets:?}"
        );
    }
}

/// `ROS_IP` the driver's LAN address: its sockets listen there, and rospy on another host (the master on the
/// driver's host) drives the robot and receives its odometry.
#[test]
fn ros1_a_driver_on_its_lan_address_serves_rospy_on_another_host() {
    if netns_skip() {
        return;
    }
    let lan = Lan::new(2, Multicast::Off).expect("make the LAN");
    let host0 = lan.host(0).addr.to_string();
    let host1 = lan.host(1).addr.to_string();
    let _master = lan_master(&lan, 0, &host0);
    let drv = lan_driver(&lan, 0, &host0, &host0);
    let sockets = listening(drv.child.id());
    assert!(
        !sockets.is_empty() && sockets.iter().all(|(a, _)| *a == host0),
        "{sockets:?}"
    );
    let mut c = Command::new("timeout");
    c.args(["40", PYTHON])
        .arg(common::root().join("tests/ros1/rospy_peer.py"))
        .args(["drive", "20"])
        .env("ROS_MASTER_URI", format!("http://{host0}:11311"))
        .env("ROS_IP", &host1)
        .env("ROS_HOME", tempfile::tempdir().unwrap().keep());
    let out = on_host(&lan, 1, &c).output().expect("rospy on host 1");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let v: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| {
            panic!(
                "rospy on host 1: {e}\n{stdout}\n{}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    assert!(
        v["odom_count"].as_u64().unwrap_or(0) > 0,
        "no odom on host 1: {v}"
    );
    assert!(
        v["odom_dx"].as_f64().unwrap_or(0.0) > 0.01,
        "host 1's cmd_vel did not drive the robot: {v}"
    );
}
