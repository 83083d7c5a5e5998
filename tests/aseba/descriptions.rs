//! The built-in descriptions against what real nodes send: Aseba Playground's Thymio-II must be
//! exactly `playground_thymio()`, and the standard natives of the official (Mobsya) VM of
//! pyaseba exactly ours.

use crate::common;

use common::*;
use msgs::description::{playground_thymio, thymio_ii_fw14, TargetDescription};

fn described(target: &str) -> Vec<TargetDescription> {
    let out = thymio_rt()
        .args(["nodes", "--target", target, "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|n| serde_json::from_value(n["description"].clone()).unwrap())
        .collect()
}

#[test]
fn playground_thymio_is_described_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let Some(mut pg) = playground(dir.path(), port, 1) else {
        return; // peer missing, run opted out: skip recorded
    };
    let got = std::panic::catch_unwind(|| described(&format!("tcp:host=127.0.0.1;port={port}")));
    pg.drain();
    let status = pg.child.try_wait().unwrap();
    let got = got.unwrap_or_else(|_| panic!("playground {status:?} said: {:?}", pg.seen));
    assert_eq!(got, vec![playground_thymio()]);
}

#[test]
fn standard_natives_match_the_official_vm() {
    let port = free_port();
    let Some(_n) = pyaseba_nodes(port, 1) else {
        return; // peer missing, run opted out: skip recorded
    };
    let got = described(&format!("tcp:host=127.0.0.1;port={port}"));
    assert_eq!(got[0].natives, thymio_ii_fw14().natives[4..34].to_vec());
}
