//! Any bytes as a frame and as every message type: decoding never panics, and whatever
//! decodes re-encodes to the same bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use msgs::wire::{Frame, Message, HEADER_LEN};

fuzz_target!(|data: &[u8]| {
    if let Ok((frame, n)) = Frame::parse(data) {
        assert!(n <= data.len());
        if let Ok(m) = frame.message() {
            let bytes = m.to_frame(frame.source).expect("a decoded message encodes");
            assert_eq!(bytes, frame.raw());
        }
    }
    if data.len() >= 2 {
        let kind = u16::from_le_bytes([data[0], data[1]]);
        if let Ok(m) = Message::decode(kind, &data[2..]) {
            let bytes = m.to_frame(0).expect("a decoded message encodes");
            assert_eq!(&bytes[HEADER_LEN..], &data[2..]);
        }
    }
});
