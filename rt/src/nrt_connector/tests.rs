use super::*;
use crate::link_port::{link_port, LinkOffer, LinkReturn, RtLinkPort};
use crate::testutil::{pty_pair, until};
use handoff::LinkDownReason;
use std::io::{Read, Write};
use std::net::TcpListener;

fn fast() -> ConnectorConfig {
    ConnectorConfig {
        retry_interval: Duration::from_millis(50),
        serial_settle: Duration::from_millis(1),
        tcp_timeout: Duration::from_secs(2),
        poll_interval: Duration::from_millis(1),
        close_timeout: Duration::from_secs(10),
    }
}

fn next_offer(rt: &mut RtLinkPort) -> LinkOffer {
    until(Duration::from_secs(20), || rt.rt_take_offer())
}

#[test]
fn connects_hands_over_and_reconnects_after_a_loss() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port_no = listener.local_addr().unwrap().port();
    let (mut rt, port) = link_port();
    let (pipe, _sim) = PipeLink::pair(16);
    let spec = ConnectSpec::Tcp {
        host: "127.0.0.1".into(),
        port: port_no,
    };
    let h = spawn_connector(fast(), vec![spec], vec![pipe], port).unwrap();
    let mut offers = vec![next_offer(&mut rt), next_offer(&mut rt)];
    offers.sort_by_key(|o| o.target);
    assert_eq!(offers[1].target, 1); // the pipe comes after the targets
    let mut tcp = offers.remove(0);
    assert_eq!(tcp.target, 0);
    let (mut server, _) = listener.accept().unwrap();
    assert_eq!(tcp.link.write(b"ping"), Ok(4));
    let mut b = [0u8; 4];
    server.read_exact(&mut b).unwrap();
    assert_eq!(&b, b"ping");

    // The RT thread gives it back (lost): the connector drops it and connects again.
    assert!(rt
        .rt_give_back(LinkReturn {
            target: 0,
            link: tcp.link,
            reason: LinkDownReason::Eof,
        })
        .is_ok());
    let again = next_offer(&mut rt);
    assert_eq!(again.target, 0);
    let (mut server2, _) = listener.accept().unwrap();
    // The first stream was dropped by the connector: the server sees end of stream.
    server
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    assert_eq!(server.read(&mut b).unwrap(), 0);
    server2.write_all(b"x").unwrap();
    let stats = h.join();
    assert_eq!(
        (stats.connects, stats.reconnects, stats.returned),
        (3, 1, 1)
    );
}

#[test]
fn failed_targets_are_retried_until_they_answer() {
    let port_no = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (mut rt, port) = link_port();
    let spec = ConnectSpec::Tcp {
        host: "127.0.0.1".into(),
        port: port_no,
    };
    let h = spawn_connector(fast(), vec![spec], Vec::new(), port).unwrap();
    until(Duration::from_secs(20), || h.stats().failures >= 2);
    let listener = TcpListener::bind(("127.0.0.1", port_no)).unwrap();
    let offer = next_offer(&mut rt);
    assert_eq!(offer.target, 0);
    listener.accept().unwrap();
    let stats = h.join();
    assert!(stats.failures >= 2 && stats.connects == 1 && stats.reconnects == 0);
}

#[test]
fn serial_targets_open_through_a_pty() {
    let pty = pty_pair();
    let (mut rt, port) = link_port();
    let h = spawn_connector(
        fast(),
        vec![ConnectSpec::Serial(SerialSpec::device(&pty.path))],
        Vec::new(),
        port,
    )
    .unwrap();
    let mut offer = next_offer(&mut rt);
    drop(pty.slave);
    assert_eq!(offer.link.kind(), handoff::LinkKind::Serial);
    nix::unistd::write(&pty.master, b"abc").unwrap();
    let mut buf = [0u8; 8];
    let n = until(Duration::from_secs(10), || {
        let n = offer.link.read(&mut buf).unwrap();
        (n > 0).then_some(n)
    });
    assert_eq!(&buf[..n], b"abc");
    h.join();
}

#[test]
fn stops_when_the_rt_side_is_gone() {
    let (rt, port) = link_port();
    let spec = ConnectSpec::Tcp {
        host: "127.0.0.1".into(),
        port: 9, // discard: refused on loopback
    };
    let h = spawn_connector(fast(), vec![spec], Vec::new(), port).unwrap();
    drop(rt);
    until(Duration::from_secs(20), || h.thread.is_finished());
    assert_eq!(h.join().connects, 0);
}

/// The connector blocks while every target is connected: a link given back, and a stop, wake it
/// at once (it used to look every `poll_interval`, here far longer than the test may last).
#[test]
fn a_connected_connector_sleeps_until_a_link_comes_back_or_it_is_stopped() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let spec = ConnectSpec::Tcp {
        host: "127.0.0.1".into(),
        port: listener.local_addr().unwrap().port(),
    };
    let cfg = ConnectorConfig {
        poll_interval: Duration::from_secs(3600),
        ..fast()
    };
    let (mut rt, port) = link_port();
    let h = spawn_connector(cfg, vec![spec], Vec::new(), port).unwrap();
    let offer = next_offer(&mut rt);
    assert!(rt
        .rt_give_back(LinkReturn {
            target: offer.target,
            link: offer.link,
            reason: LinkDownReason::Eof,
        })
        .is_ok());
    until(Duration::from_secs(20), || {
        (h.stats().returned == 1).then_some(())
    });
    let again = next_offer(&mut rt);
    assert_eq!(again.target, 0);
    let t0 = std::time::Instant::now();
    let stats = h.join();
    assert!(
        t0.elapsed() < Duration::from_secs(20),
        "stop took {:?}",
        t0.elapsed()
    );
    assert_eq!((stats.connects, stats.returned), (2, 1));
    drop(again);
}

#[test]
fn a_link_given_back_at_rt_shutdown_is_not_reopened() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port_no = listener.local_addr().unwrap().port();
    let (mut rt, port) = link_port();
    let spec = ConnectSpec::Tcp {
        host: "127.0.0.1".into(),
        port: port_no,
    };
    let h = spawn_connector(fast(), vec![spec], vec![], port).unwrap();
    let offer = next_offer(&mut rt);
    let _server = listener.accept().unwrap();
    // The RT thread stops: it gives its links back (Shutdown) but keeps its port a while.
    assert!(rt
        .rt_give_back(LinkReturn {
            target: 0,
            link: offer.link,
            reason: LinkDownReason::Shutdown,
        })
        .is_ok());
    // The connector ends by itself instead of connecting again.
    until(Duration::from_secs(20), || h.is_finished().then_some(()));
    let stats = h.join();
    assert_eq!(
        (stats.connects, stats.reconnects, stats.returned),
        (1, 0, 1)
    );
    drop(rt);
}

#[test]
fn links_given_back_at_the_stop_are_closed_in_order_not_reset() {
    // A peer that streams (a robot's events) to a driver that stops: closed with unread bytes, the
    // socket would send RST, and the peer's next write would get EPIPE (SIGPIPE kills Playground).
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let spec = ConnectSpec::Tcp {
        host: "127.0.0.1".into(),
        port: listener.local_addr().unwrap().port(),
    };
    let (mut rt, port) = link_port();
    let h = spawn_connector(fast(), vec![spec], vec![], port).unwrap();
    let offer = next_offer(&mut rt);
    let (mut peer, _) = listener.accept().unwrap();
    peer.write_all(&[7u8; 2000]).unwrap(); // never read by the RT side
    assert!(rt
        .rt_give_back(LinkReturn {
            target: 0,
            link: offer.link,
            reason: LinkDownReason::Shutdown,
        })
        .is_ok());
    peer.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut buf = [0u8; 16];
    assert_eq!(
        peer.read(&mut buf).map_err(|e| e.kind()),
        Ok(0),
        "the driver's end of the stream, not a reset"
    );
    // the peer still writes after it (Playground's next event) and is not refused
    peer.write_all(&[8u8; 2000]).unwrap();
    drop(peer);
    until(Duration::from_secs(20), || h.is_finished().then_some(()));
    drop(rt);
}
