//! The multi-host test bench itself (tests/common/netns.rs): hosts on one segment reach each other's addresses,
//! not each other's loopback, and a host whose cable is out reaches nobody.

mod common;

use common::netns::{unavailable, Lan, Multicast};
use std::process::Stdio;
use std::time::Duration;

/// A one-shot TCP server on `bind` in host `i`, answering "hello": returns the process.
fn serve(lan: &Lan, i: usize, bind: &str) -> common::Proc {
    let mut c = lan.command(i, "python3");
    c.args([
        "-c",
        "import socket,sys\ns=socket.socket()\ns.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n\
         s.bind((sys.argv[1],4242))\ns.listen()\nprint('listening',flush=True)\ns.settimeout(20)\n\
         c,_=s.accept()\nc.sendall(b'hello')\nc.close()",
        bind,
    ]);
    let mut p = common::Proc::spawn("server", c);
    p.wait_line(Duration::from_secs(10), |l| l == "listening");
    p
}

/// Whether host `i` reads "hello" from `addr`:4242 within 2 s.
fn reaches(lan: &Lan, i: usize, addr: &str) -> bool {
    let out = lan
        .command(i, "python3")
        .args([
            "-c",
            "import socket,sys\ns=socket.create_connection((sys.argv[1],4242),timeout=2)\n\
             print(s.recv(5).decode())",
            addr,
        ])
        .stdin(Stdio::null())
        .output()
        .expect("python3");
    String::from_utf8_lossy(&out.stdout).trim() == "hello"
}

#[test]
fn hosts_reach_each_other_but_not_each_others_loopback() {
    if let Some(why) = unavailable() {
        skip!("{why}");
    }
    let lan = Lan::new(2, Multicast::On).expect("make the LAN");
    let a = lan.host(0).addr.to_string();
    let _server = serve(&lan, 0, &a);
    assert!(reaches(&lan, 1, &a), "host 1 cannot reach host 0 at {a}");

    let _local = serve(&lan, 0, "127.0.0.1");
    assert!(
        !reaches(&lan, 1, "127.0.0.1"),
        "host 1's loopback reached host 0's"
    );
}

#[test]
fn a_host_without_its_cable_reaches_nobody() {
    if let Some(why) = unavailable() {
        skip!("{why}");
    }
    let lan = Lan::new(2, Multicast::Off).expect("make the LAN");
    let a = lan.host(0).addr.to_string();
    lan.set_link(1, false).unwrap();
    let _server = serve(&lan, 0, &a);
    assert!(
        !reaches(&lan, 1, &a),
        "host 1 reached host 0 with its link down"
    );
    lan.set_link(1, true).unwrap();
    assert!(
        reaches(&lan, 1, &a),
        "host 1 did not reach host 0 once its link was back"
    );
}
