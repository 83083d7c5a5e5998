use super::*;
use msgs::wire::{Message, Words};
use std::io::{Read, Write};
use std::time::{Duration, Instant};

fn connect(s: &Switch) -> TcpStream {
    let c = TcpStream::connect(s.local_addr().unwrap()).unwrap();
    c.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
    c
}

/// Polls the switch until `cond` holds (bounded: 5 s).
fn poll_until(
    s: &mut Switch,
    got: &mut Vec<(ClientId, Vec<u8>)>,
    cond: impl Fn(&Switch, &[(ClientId, Vec<u8>)]) -> bool,
) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !cond(s, got) {
        assert!(Instant::now() < deadline, "timed out");
        s.poll(|id, f| {
            got.push((id, f.raw().to_vec()));
            true
        });
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn read_exact_timeout(c: &mut TcpStream, n: usize) -> Vec<u8> {
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut buf = Vec::new();
    let mut tmp = [0u8; 1024];
    while buf.len() < n {
        assert!(Instant::now() < deadline, "timed out reading");
        match c.read(&mut tmp) {
            Ok(0) => panic!("closed"),
            Ok(k) => buf.extend_from_slice(&tmp[..k]),
            Err(_) => {}
        }
    }
    buf
}

#[test]
fn frames_flow_between_link_and_clients_and_garbage_is_dropped() {
    let mut s = Switch::bind("127.0.0.1", 0, false).unwrap();
    let mut a = connect(&s);
    let mut b = connect(&s);
    let mut got = Vec::new();
    poll_until(&mut s, &mut got, |s, _| s.stats().connected == 2);

    // link → every client
    let from_robot = Message::UserEvent {
        id: 2,
        args: Words::from_slice(&[1, 2]),
    }
    .to_frame(1)
    .unwrap();
    s.broadcast(&from_robot, None);
    assert_eq!(read_exact_timeout(&mut a, from_robot.len()), from_robot);
    assert_eq!(read_exact_timeout(&mut b, from_robot.len()), from_robot);

    // client a → link and client b, not back to a; garbage before it is dropped
    let cmd = Message::GetVariables {
        dest: 1,
        start: 0,
        length: 4,
    }
    .to_frame(0)
    .unwrap();
    a.write_all(&[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        .unwrap();
    a.write_all(&cmd).unwrap();
    a.write_all(&cmd).unwrap(); // the first valid frame after garbage needs the next header
    poll_until(&mut s, &mut got, |_, g| g.len() == 2);
    assert_eq!(got[0].1, cmd);
    assert_eq!(
        read_exact_timeout(&mut b, 2 * cmd.len()),
        [cmd.clone(), cmd.clone()].concat()
    );
    assert!(s.stats().frames_rejected >= 1);
    let mut tmp = [0u8; 64];
    assert!(a.read(&mut tmp).is_err(), "no echo without loop");
}

#[test]
fn loop_echoes_to_sender_and_disconnects_are_reaped() {
    let mut s = Switch::bind("127.0.0.1", 0, true).unwrap();
    let mut a = connect(&s);
    let mut got = Vec::new();
    poll_until(&mut s, &mut got, |s, _| s.stats().connected == 1);
    let ev = Message::UserEvent {
        id: 0,
        args: Words::empty(),
    }
    .to_frame(0)
    .unwrap();
    a.write_all(&ev).unwrap();
    poll_until(&mut s, &mut got, |_, g| g.len() == 1);
    assert_eq!(read_exact_timeout(&mut a, ev.len()), ev);
    drop(a);
    poll_until(&mut s, &mut got, |s, _| s.stats().connected == 0);
}

#[test]
fn bad_address_is_an_error() {
    let e = Switch::bind("not-an-ip", 0, false).unwrap_err();
    assert!(e.to_string().contains("not-an-ip"));
}

fn user_event(words: usize) -> Vec<u8> {
    msgs::wire::unchecked_frame(0, 3, &vec![0; 2 * words])
}

#[test]
fn oversize_frames_are_refused_whole_counted_per_client_and_the_stream_stays_in_step() {
    let limits = SwitchLimits {
        max_payload: 100,
        ..SwitchLimits::default()
    };
    let mut s = Switch::bind_with("127.0.0.1", 0, false, limits).unwrap();
    let mut a = connect(&s);
    let mut got = Vec::new();
    poll_until(&mut s, &mut got, |s, _| s.stats().connected == 1);
    let request = Message::GetVariables {
        dest: 1,
        start: 0,
        length: 4,
    }
    .to_frame(0)
    .unwrap();
    // above the protocol (259 words), above the configured limit (51 words), within it
    for f in [
        user_event(259),
        user_event(51),
        user_event(50),
        request.clone(),
    ] {
        a.write_all(&f).unwrap();
    }
    poll_until(&mut s, &mut got, |_, g| g.len() == 2);
    assert_eq!(got[0].1, user_event(50));
    assert_eq!(got[1].1, request, "the frame after a refused one is intact");
    let r = s.report();
    assert_eq!((r.totals.oversize, r.totals.frames_rejected), (2, 0));
    assert_eq!((r.clients[0].oversize, r.clients[0].frames_in), (2, 2));
    assert_eq!(r.max_payload, 100);
}

#[test]
fn a_client_that_does_not_read_loses_frames_counted_and_others_get_theirs() {
    let limits = SwitchLimits {
        client_queue: 4096,
        ..SwitchLimits::default()
    };
    let mut s = Switch::bind_with("127.0.0.1", 0, false, limits).unwrap();
    let slow = connect(&s);
    let mut fast = connect(&s);
    let mut got = Vec::new();
    poll_until(&mut s, &mut got, |s, _| s.stats().connected == 2);
    let frame = user_event(200);
    let mut read = 0usize;
    let mut buf = vec![0u8; 1 << 16];
    fast.set_read_timeout(Some(Duration::from_millis(1)))
        .unwrap();
    // far more than the slow client's socket buffers and queue hold
    for _ in 0..20_000 {
        s.broadcast(&frame, None);
        if let Ok(n) = fast.read(&mut buf) {
            read += n;
        }
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while read < 20_000 * frame.len() && Instant::now() < deadline {
        s.poll(|_, _| true);
        if let Ok(n) = fast.read(&mut buf) {
            read += n;
        }
    }
    let r = s.report();
    let by_id = |id| r.clients.iter().find(|c| c.id == id).unwrap();
    assert!(by_id(1).queue_drops > 0, "{r:?}");
    assert_eq!(
        r.totals.queue_drops,
        by_id(1).queue_drops + by_id(2).queue_drops
    );
    assert_eq!(
        read,
        20_000 * frame.len() - by_id(2).queue_drops as usize * frame.len()
    );
    drop(slow);
}

#[test]
fn frames_over_the_link_budget_are_counted_for_their_client_and_kept_after_it_left() {
    let mut s = Switch::bind("127.0.0.1", 0, false).unwrap();
    let mut a = connect(&s);
    let mut got = Vec::new();
    poll_until(&mut s, &mut got, |s, _| s.stats().connected == 1);
    let ev = user_event(1);
    for _ in 0..10 {
        a.write_all(&ev).unwrap();
    }
    let mut seen = 0;
    let deadline = Instant::now() + Duration::from_secs(5);
    while seen < 10 {
        assert!(Instant::now() < deadline);
        // the owner's budget lets every other frame through
        s.poll(|_, _| {
            seen += 1;
            seen % 2 == 0
        });
    }
    drop(a);
    poll_until(&mut s, &mut got, |s, _| s.stats().connected == 0);
    let r = s.report();
    assert_eq!(r.totals.over_budget, 5);
    assert_eq!(
        (r.clients[0].over_budget, r.clients[0].connected),
        (5, false)
    );
}
