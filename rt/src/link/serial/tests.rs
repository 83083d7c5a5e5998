use super::*;
use crate::testutil::{pty_pair, read_available, until};
use serialport::UsbPortInfo;
use std::time::Duration;

fn usb(port: &str, vid: u16, pid: u16, product: Option<&str>) -> SerialPortInfo {
    SerialPortInfo {
        port_name: port.into(),
        port_type: SerialPortType::UsbPort(UsbPortInfo {
            vid,
            pid,
            serial_number: None,
            manufacturer: Some("Mobsya.org".into()),
            product: product.map(Into::into),
        }),
    }
}

#[test]
fn names_match_descriptions_and_known_usb_ids() {
    let thymio = usb("/dev/ttyACM0", 0x0617, 0x000A, Some("Thymio-II      "));
    assert!(port_matches(&thymio, "Thymio-II"));
    assert!(port_matches(&thymio, "Thymio-II (/dev/ttyACM0)"));
    assert!(port_matches(&thymio, "ttyACM0"));
    assert!(port_matches(&thymio, "Mobsya"));
    assert!(!port_matches(&thymio, "thymio")); // case-sensitive, as Dashel
                                               // No product string: the USB id still names it.
    let bare = usb("/dev/ttyACM1", 0x0617, 0x000C, None);
    assert!(port_matches(&bare, "Thymio-II Wireless"));
    assert!(port_matches(&bare, "Thymio"));
    let other = usb("/dev/ttyUSB0", 0x0403, 0x6001, Some("FT232R"));
    assert!(!port_matches(&other, "Thymio"));
    let plain = SerialPortInfo {
        port_name: "/dev/ttyS0".into(),
        port_type: SerialPortType::Unknown,
    };
    assert!(!port_matches(&plain, "Thymio") && port_matches(&plain, "ttyS0"));
}

#[test]
fn unknown_names_and_indices_are_errors() {
    assert!(matches!(
        find_port(&SerialSelector::Name("no such device \u{1F980}".into())),
        Err(SerialOpenError::NoSuchName(_))
    ));
    assert!(matches!(
        find_port(&SerialSelector::Port(10_000)),
        Err(SerialOpenError::NoSuchPort { index: 10_000, .. })
    ));
    assert!(SerialLink::open(&SerialSpec::device("/nonexistent/tty")).is_err());
}

#[test]
fn pseudo_terminals_are_told_apart_from_other_files() {
    let pty = pty_pair();
    assert!(is_pseudo_terminal(&pty.slave));
    let f = std::fs::File::open(&pty.path).unwrap();
    assert!(is_pseudo_terminal(&f));
    assert!(!is_pseudo_terminal(
        &std::fs::File::open("/dev/null").unwrap()
    ));
    assert!(!is_pseudo_terminal(
        &std::fs::File::open("Cargo.toml").unwrap()
    ));
}

#[test]
fn pty_round_trip_without_blocking_then_hangup() {
    let pty = pty_pair();
    let (master, slave_path) = (&pty.master, pty.path.clone());
    let mut link = SerialLink::open(&SerialSpec::device(&slave_path)).unwrap();
    drop(pty.slave);
    assert_eq!(link.kind(), LinkKind::Serial);
    assert_eq!(link.path(), slave_path.as_path());
    // a pseudo-terminal has no serial driver data: no low-latency flag, and no error
    assert!(!link.low_latency());
    let mut buf = [0u8; 64];
    assert_eq!(link.read(&mut buf), Ok(0)); // nothing yet: returns at once
    assert!(!readable(&link));

    nix::unistd::write(master, b"\x02\x00\x01\x00\x0c\x90\x09\x00").unwrap();
    until(Duration::from_secs(10), || readable(&link));
    let mut got = Vec::new();
    until(Duration::from_secs(10), || {
        let n = link.read(&mut buf).unwrap();
        got.extend_from_slice(&buf[..n]);
        got.len() >= 8
    });
    assert_eq!(got, b"\x02\x00\x01\x00\x0c\x90\x09\x00");

    assert_eq!(link.write(b"\x02\x00\x00\x00\x11\xa0\x05\x00"), Ok(8));
    let mut echo = Vec::new();
    until(Duration::from_secs(10), || {
        echo.extend(read_available(master));
        echo.len() >= 8
    });
    assert_eq!(echo, b"\x02\x00\x00\x00\x11\xa0\x05\x00");

    drop(pty.master);
    until(Duration::from_secs(10), || readable(&link)); // a hang-up wakes the reader
    let end = until(Duration::from_secs(10), || link.read(&mut buf).err());
    assert!(
        matches!(end, LinkError::Io { .. } | LinkError::Eof),
        "{end:?}"
    );
}

/// Whether the link's readiness fd is readable (or hung up) now.
fn readable(link: &SerialLink) -> bool {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    let mut fds = [PollFd::new(link.rt_fd().unwrap(), PollFlags::POLLIN)];
    poll(&mut fds, PollTimeout::ZERO).unwrap() > 0
}
