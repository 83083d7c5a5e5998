//! Faults of the link, with real peers (issue 8): a TCP peer that restarts, a serial device
//! (pseudo-terminal) that vanishes and comes back, garbage injected into the stream.

use crate::common;

use common::*;
use handoff::NodeId;
use nrt_engine::engine::EngineEvent;
use nrt_engine::network::NetworkEvent;
use std::time::{Duration, Instant};
use thymio_rt::runtime::Runtime;

fn wait_accepted(rt: &mut Runtime, id: NodeId) {
    rt.poll_until(Duration::from_secs(10), |e, _| {
        e.network()
            .node(id)
            .filter(|n| n.is_bridged() && n.connected)
            .map(|_| ())
    })
    .expect("node accepted");
}

/// Reads `counter` of node 1 (retrying for a while after faults).
fn read_counter(rt: &mut Runtime, within: Duration) -> i16 {
    let deadline = Instant::now() + within;
    loop {
        let req = rt
            .engine
            .network_mut()
            .get_variable(NodeId(1), "counter", Instant::now());
        if let Ok(req) = req {
            let got = rt.poll_until(Duration::from_secs(2), |_, events| {
                events.iter().find_map(|e| match e {
                    EngineEvent::Network(NetworkEvent::Variables { request, result })
                        if *request == req =>
                    {
                        Some(result.clone())
                    }
                    _ => None,
                })
            });
            if let Some(Ok(v)) = got {
                return v[0];
            }
        } else {
            rt.poll();
        }
        assert!(
            Instant::now() < deadline,
            "counter not readable in time; node {:?}; rt {:?}",
            rt.engine
                .network()
                .node(NodeId(1))
                .map(|n| (n.connected, n.last_seen.elapsed())),
            rt.engine.rt_stats().map(|s| s.links)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The node answers with live values: `counter` (incremented every 0.1 s by the node) read again grows within
/// `within` — a dead link, stale or replayed replies fail.
fn counter_advances(rt: &mut Runtime, within: Duration) {
    let deadline = Instant::now() + within;
    let first = read_counter(rt, within);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let now = read_counter(rt, left.max(Duration::from_millis(500)));
        if now > first {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "counter stuck at {first} (now {now}) for {within:?}: no live replies"
        );
        rt.poll();
    }
}

#[test]
fn tcp_peer_restart_reconnects_and_rediscovers() {
    let port = free_port();
    let Some(peer) = pyaseba_nodes(port, 1) else {
        return; // peer missing, run opted out: skip recorded
    };
    let mut rt = Runtime::start(&observer_config(tcp_target(port))).unwrap();
    wait_accepted(&mut rt, NodeId(1));
    drop(peer);
    wait_event(&mut rt, Duration::from_secs(5), |e| {
        matches!(e, EngineEvent::LinkDown { .. })
    });
    assert!(!rt.engine.network().node(NodeId(1)).unwrap().connected);
    // the peer comes back on the same port
    let _peer = pyaseba_nodes(port, 1).unwrap();
    let back = Instant::now();
    let up = wait_event(&mut rt, Duration::from_secs(5), |e| {
        matches!(e, EngineEvent::LinkUp { .. })
    });
    assert!(
        up.duration_since(back) <= Duration::from_millis(1500),
        "reconnected after {:?}",
        up.duration_since(back)
    );
    wait_accepted(&mut rt, NodeId(1));
    counter_advances(&mut rt, Duration::from_secs(8));
    let stopped = rt.stop();
    assert_eq!(stopped.connector.reconnects, 1);
}

#[test]
fn serial_device_vanishes_and_comes_back() {
    let port = free_port();
    let Some(_peer) = pyaseba_nodes(port, 1) else {
        return; // peer missing, run opted out: skip recorded
    };
    let dir = tempfile::tempdir().unwrap();
    let dev = dir.path().join("ttyThymio");
    let Some(bridge) = serial_bridge(&dev, port) else {
        return; // peer missing, run opted out: skip recorded
    };
    let mut rt = Runtime::start(&observer_config(format!("ser:device={}", dev.display()))).unwrap();
    wait_accepted(&mut rt, NodeId(1));
    counter_advances(&mut rt, Duration::from_secs(6));
    drop(bridge); // the device vanishes: EIO / hang-up on the pty
    wait_event(&mut rt, Duration::from_secs(5), |e| {
        matches!(e, EngineEvent::LinkDown { .. })
    });
    let _bridge = serial_bridge(&dev, port).unwrap();
    let back = Instant::now();
    let up = wait_event(&mut rt, Duration::from_secs(5), |e| {
        matches!(e, EngineEvent::LinkUp { .. })
    });
    assert!(
        up.duration_since(back) <= Duration::from_millis(1500),
        "reconnected after {:?}",
        up.duration_since(back)
    );
    wait_accepted(&mut rt, NodeId(1));
    counter_advances(&mut rt, Duration::from_secs(8));
    let stopped = rt.stop();
    assert_eq!(stopped.connector.reconnects, 1);
}

#[test]
fn garbage_in_the_stream_is_counted_and_frames_keep_flowing() {
    let port = free_port();
    let Some(_peer) = pyaseba_nodes(port, 1) else {
        return; // peer missing, run opted out: skip recorded
    };
    let relay = Relay::start(port);
    let mut rt = Runtime::start(&observer_config(format!(
        "tcp:host=127.0.0.1;port={}",
        relay.port
    )))
    .unwrap();
    wait_accepted(&mut rt, NodeId(1));
    let first = read_counter(&mut rt, Duration::from_secs(3));
    let mut last = first;
    for round in 0..10 {
        relay.inject_garbage(40 + 37 * round);
        let c = read_counter(&mut rt, Duration::from_secs(8));
        assert!(
            c >= last,
            "round {round}: counter went back from {last} to {c}"
        );
        last = c;
    }
    assert!(
        last > first,
        "the node's counter never moved: replies are stale"
    );
    let stats = rt.stop().stats.unwrap();
    assert!(stats.links.bytes_discarded > 0, "{:?}", stats.links);
    assert!(stats.links.frames_rejected > 0, "{:?}", stats.links);
}

/// A node that reboots mid-run (its program lost) is detected and gets its script back: the
/// embedded simulated Thymio reboots like the real one (fresh VM, nothing in flash).
#[test]
fn node_reboot_is_detected_and_the_script_reloaded() {
    let c = script_config("thymio_ros.aesl", 0);
    let mut rt = Runtime::start(&c).expect("runtime on the embedded simulator");
    // odometry comes on the RT thread's odometry ring (a publisher thread's in the driver)
    let mut odometry = rt.engine.take_odometry_out().expect("an odometry ring");
    wait_event(&mut rt, Duration::from_secs(10), |e| {
        matches!(e, EngineEvent::ScriptLoaded { node: NodeId(1) })
    });
    // let the load settle (the engine ignores idle states right after a load)
    let settle = Instant::now() + Duration::from_millis(2500);
    while Instant::now() < settle {
        rt.poll();
        std::thread::sleep(Duration::from_millis(5));
    }
    rt.engine
        .network_mut()
        .command(NodeId(1), nrt_engine::network::Command::Reboot)
        .expect("reboot command");
    let t0 = Instant::now();
    let reloaded = wait_event(&mut rt, Duration::from_secs(10), |e| {
        matches!(e, EngineEvent::ScriptLoaded { node: NodeId(1) })
    });
    assert!(
        reloaded.duration_since(t0) < Duration::from_secs(5),
        "reload took {:?}",
        reloaded.duration_since(t0)
    );
    assert_eq!(rt.engine.stats().script_reloads, 1);
    // the program runs again: odometry flows (samples from before the reboot left aside)
    while odometry.nrt_pop().is_some() {}
    rt.poll_until(Duration::from_secs(5), |_, _| {
        std::iter::from_fn(|| odometry.nrt_pop())
            .any(|h| h.sample.node == NodeId(1))
            .then_some(())
    })
    .expect("odometry after the reload");
    rt.stop();
}
