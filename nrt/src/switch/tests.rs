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
        s.poll(|id, f| got.push((id, f.raw().to_vec())));
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
