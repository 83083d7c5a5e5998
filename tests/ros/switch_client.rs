//! A plain TCP client of the bridge's Aseba switch, for the ROS bridge tests (included with `#[path]`): the user
//! events it sees, frames it sends.

use msgs::reassembler::Reassembler;
use msgs::wire::Message;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Frames seen by a plain TCP client of the bridge's Aseba switch.
pub struct SwitchClient {
    stream: TcpStream,
    reassembler: Reassembler,
    /// (source, type, payload words) of every user event seen.
    pub events: Vec<(u16, u16, Vec<i16>)>,
}

impl SwitchClient {
    /// Connects to the switch on `port`, retrying until `deadline`.
    pub fn connect(port: u16, deadline: Instant) -> SwitchClient {
        let stream = loop {
            match TcpStream::connect(("127.0.0.1", port)) {
                Ok(s) => break s,
                Err(e) => assert!(Instant::now() < deadline, "switch on {port}: {e}"),
            }
            std::thread::yield_now();
        };
        stream
            .set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        SwitchClient {
            stream,
            reassembler: Reassembler::new(),
            events: Vec::new(),
        }
    }

    /// Reads what arrived within 50 ms.
    pub fn read(&mut self) {
        let mut buf = [0u8; 4096];
        let n = match self.stream.read(&mut buf) {
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return
            }
            Err(e) => panic!("switch client: {e}"),
        };
        let mut input = &buf[..n];
        while let Some(frame) = self.reassembler.push(&mut input) {
            let Ok(frame) = frame else { continue };
            if let Ok(Message::UserEvent { id, args }) = frame.message() {
                self.events.push((frame.source, id, args.to_vec()));
            }
        }
    }

    /// Sends `m` from `source`.
    pub fn send(&mut self, source: u16, m: &Message<'_>) {
        self.stream.write_all(&m.to_frame(source).unwrap()).unwrap();
    }
}
