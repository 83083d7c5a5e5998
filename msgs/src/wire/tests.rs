use super::*;
use crate::description::NativeParam;
use proptest::prelude::*;

fn hex(s: &str) -> Vec<u8> {
    s.split_whitespace()
        .map(|b| u8::from_str_radix(b, 16).unwrap())
        .collect()
}

fn frame_of(m: &Message<'_>, source: u16) -> Vec<u8> {
    m.to_frame(source).unwrap()
}

#[test]
fn reference_byte_examples() {
    // aseba.md §1.8
    assert_eq!(
        frame_of(&Message::ListNodes { version: 5 }, 0),
        hex("02 00 00 00 11 A0 05 00")
    );
    assert_eq!(
        frame_of(&Message::NodePresent { version: 9 }, 1),
        hex("02 00 01 00 0C 90 09 00")
    );
    assert_eq!(
        frame_of(
            &Message::GetNodeDescription {
                dest: 1,
                version: 5
            },
            0
        ),
        hex("04 00 00 00 10 A0 01 00 05 00")
    );
    let desc = Message::Description {
        name: AsebaStr::from_str("thymio-II"),
        protocol_version: 9,
        bytecode_size: 1534,
        stack_size: 32,
        variables_size: 640,
        named_variables: 44,
        local_events: 17,
        native_functions: 60,
    };
    let bytes = hex(
        "18 00 01 00 00 90 09 74 68 79 6D 69 6F 2D 49 49 09 00 FE 05 20 00 80 02 2C 00 11 00 3C 00",
    );
    assert_eq!(frame_of(&desc, 1), bytes);
    let (f, n) = Frame::parse(&bytes).unwrap();
    assert_eq!(n, bytes.len());
    assert_eq!(f.message().unwrap(), desc);
    assert_eq!(
        frame_of(&Message::Run { dest: 1 }, 0),
        hex("02 00 00 00 03 A0 01 00")
    );
    assert_eq!(
        frame_of(
            &Message::UserEvent {
                id: 1,
                args: Words::from_slice(&[7, -1])
            },
            0
        ),
        hex("04 00 00 00 01 00 07 00 FF FF")
    );
    assert_eq!(
        frame_of(
            &Message::SetVariables {
                dest: 1,
                start: 86,
                values: Words::from_slice(&[100, 100])
            },
            0
        ),
        hex("08 00 00 00 0C A0 01 00 56 00 64 00 64 00")
    );
}

#[test]
fn decode_rejects_bad_layouts() {
    assert_eq!(
        Message::decode(kind::RUN, &[1]),
        Err(DecodeError::Truncated {
            kind: kind::RUN,
            len: 1
        })
    );
    assert_eq!(
        Message::decode(kind::RUN, &[1, 0, 0]),
        Err(DecodeError::TrailingBytes {
            kind: kind::RUN,
            extra: 1
        })
    );
    assert_eq!(
        Message::decode(5, &[1, 0, 0]),
        Err(DecodeError::OddLength { kind: 5, len: 3 })
    );
    assert_eq!(
        Message::decode(0x9FFF, &[]),
        Err(DecodeError::UnknownType(0x9FFF))
    );
    // string length running past the payload
    assert!(Message::decode(kind::NAMED_VARIABLE_DESCRIPTION, &[1, 0, 5, b'a']).is_err());
    // native with 2 params but only one present
    assert!(Message::decode(
        kind::NATIVE_FUNCTION_DESCRIPTION,
        &[1, b'f', 0, 2, 0, 1, 0, 1, b'x']
    )
    .is_err());
    // changed-variables block announcing more values than present
    assert!(Message::decode(kind::CHANGED_VARIABLES, &[0, 0, 2, 0, 1, 0]).is_err());
    assert!(Message::decode(kind::VARIABLES, &[0; 600]).is_err());
}

#[test]
fn encode_rejects_oversize_and_long_strings() {
    let words = [0i16; 259];
    let m = Message::UserEvent {
        id: 3,
        args: Words::from_slice(&words),
    };
    assert_eq!(m.to_frame(0), Err(EncodeError::TooLarge(518)));
    let ok = Message::UserEvent {
        id: 3,
        args: Words::from_slice(&words[..258]),
    };
    assert_eq!(ok.to_frame(0).unwrap().len(), MAX_FRAME);
    let long = "x".repeat(256);
    let m = Message::NodeSpecificError {
        pc: 0,
        message: AsebaStr::from_str(&long),
    };
    assert_eq!(m.to_frame(0), Err(EncodeError::StringTooLong(256)));
    let m = Message::UserEvent {
        id: 0x8000,
        args: Words::empty(),
    };
    assert_eq!(m.to_frame(0), Err(EncodeError::BadEventId(0x8000)));
    let mut small = [0u8; 7];
    assert_eq!(
        Message::Run { dest: 1 }.encode(0, &mut small),
        Err(EncodeError::BufferTooSmall { need: 8, have: 7 })
    );
}

#[test]
fn check_header_classifies() {
    assert_eq!(
        check_header(&hex("FF 7F 00 00 00 00")),
        Err(FrameError::Oversize(0x7FFF))
    );
    assert_eq!(
        check_header(&hex("03 00 00 00 05 00")),
        Err(FrameError::OddUserEvent { kind: 5, len: 3 })
    );
    assert_eq!(
        check_header(&hex("00 00 00 00 00 B0")),
        Err(FrameError::InvalidType(0xB000))
    );
    assert!(check_header(&hex("00 00 00 00 FF 9F")).is_ok()); // unknown but in range
}

#[test]
fn native_params_and_changed_blocks_views() {
    let params = [
        NativeParam {
            name: "dest".into(),
            size: -1,
        },
        NativeParam {
            name: "src".into(),
            size: -1,
        },
    ];
    let m = Message::NativeFunctionDescription {
        name: AsebaStr::from_str("math.copy"),
        description: AsebaStr::from_str("copies"),
        params: NativeParams::from_params(&params),
    };
    let f = m.to_frame(1).unwrap();
    let (frame, _) = Frame::parse(&f).unwrap();
    let decoded = frame.message().unwrap();
    assert_eq!(decoded, m);
    if let Message::NativeFunctionDescription { params, .. } = decoded {
        let v: Vec<(i16, String)> = params.iter().map(|(s, n)| (s, n.to_string())).collect();
        assert_eq!(v, vec![(-1, "dest".to_string()), (-1, "src".to_string())]);
    }
    let mut buf = Vec::new();
    ChangedBlocks::push_block(&mut buf, 10, &[1, 2]);
    ChangedBlocks::push_block(&mut buf, 20, &[]);
    ChangedBlocks::push_block(&mut buf, 30, &[-3]);
    let blocks = ChangedBlocks::from_bytes(&buf).unwrap();
    let v: Vec<(u16, Vec<i16>)> = blocks.iter().map(|(s, w)| (s, w.to_vec())).collect();
    assert_eq!(v, vec![(10, vec![1, 2]), (30, vec![-3])]);
}

/// Owned description of a message, so proptest can generate borrowed messages from it.
#[derive(Debug, Clone)]
enum Spec {
    Words(u16, Vec<i16>),
    Strings(u16, String, String),
    Native(String, String, Vec<(i16, String)>),
    Fixed(u16, Vec<u8>),
    DeviceInfo(u8, Vec<u8>),
    SetDeviceInfo(u16, u16, Vec<u8>),
    Changed(Vec<(u16, Vec<i16>)>),
}

fn name() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9._ -]{0,40}"
}

fn spec() -> impl Strategy<Value = Spec> {
    let fixed_kinds: Vec<u16> = (0x8000..=0x8006)
        .chain(0x9004..=0x900C)
        .chain(0xA000..=0xA015)
        .filter(|k| {
            ![
                kind::SET_BYTECODE,
                kind::SET_VARIABLES,
                kind::NODE_SPECIFIC_ERROR,
                kind::SET_DEVICE_INFO,
            ]
            .contains(k)
        })
        .collect();
    prop_oneof![
        (0u16..0x8000, prop::collection::vec(any::<i16>(), 0..258))
            .prop_map(|(k, w)| Spec::Words(k, w)),
        (
            prop::sample::select(vec![
                kind::VARIABLES,
                kind::SET_BYTECODE,
                kind::SET_VARIABLES
            ]),
            prop::collection::vec(any::<i16>(), 2..250)
        )
            .prop_map(|(k, w)| Spec::Words(k, w)),
        (
            prop::sample::select(vec![
                kind::DESCRIPTION,
                kind::NAMED_VARIABLE_DESCRIPTION,
                kind::LOCAL_EVENT_DESCRIPTION,
                kind::NODE_SPECIFIC_ERROR
            ]),
            name(),
            name()
        )
            .prop_map(|(k, a, b)| Spec::Strings(k, a, b)),
        (
            name(),
            name(),
            prop::collection::vec((any::<i16>(), name()), 0..6)
        )
            .prop_map(|(a, b, p)| Spec::Native(a, b, p)),
        (
            prop::sample::select(fixed_kinds),
            prop::collection::vec(any::<u8>(), 0..8)
        )
            .prop_map(|(k, b)| Spec::Fixed(k, b)),
        (any::<u8>(), prop::collection::vec(any::<u8>(), 0..60))
            .prop_map(|(i, d)| Spec::DeviceInfo(i, d)),
        (
            any::<u16>(),
            any::<u16>(),
            prop::collection::vec(any::<u8>(), 0..60)
        )
            .prop_map(|(d, i, b)| Spec::SetDeviceInfo(d, i, b)),
        prop::collection::vec(
            (any::<u16>(), prop::collection::vec(any::<i16>(), 1..10)),
            0..8
        )
        .prop_map(Spec::Changed),
    ]
}

/// Encodes the spec's message and checks decode∘encode = id; returns false if the spec does
/// not describe a valid message (e.g. random bytes for a fixed layout).
fn roundtrip(spec: &Spec, source: u16) -> bool {
    let params: Vec<NativeParam>;
    let changed: Vec<u8>;
    let m = match spec {
        Spec::Words(k, w) => {
            if kind::is_user_event(*k) {
                Message::UserEvent {
                    id: *k,
                    args: Words::from_slice(w),
                }
            } else {
                let (a, b) = (w[0] as u16, w[1] as u16);
                let rest = Words::from_slice(&w[2..]);
                match *k {
                    kind::VARIABLES => Message::Variables {
                        start: a,
                        values: rest,
                    },
                    kind::SET_BYTECODE => Message::SetBytecode {
                        dest: a,
                        start: b,
                        words: rest,
                    },
                    _ => Message::SetVariables {
                        dest: a,
                        start: b,
                        values: rest,
                    },
                }
            }
        }
        Spec::Strings(k, a, b) => match *k {
            kind::DESCRIPTION => Message::Description {
                name: AsebaStr::from_str(a),
                protocol_version: b.len() as u16,
                bytecode_size: 1,
                stack_size: 2,
                variables_size: 3,
                named_variables: 4,
                local_events: 5,
                native_functions: 6,
            },
            kind::NAMED_VARIABLE_DESCRIPTION => Message::NamedVariableDescription {
                size: a.len() as u16,
                name: AsebaStr::from_str(b),
            },
            kind::LOCAL_EVENT_DESCRIPTION => Message::LocalEventDescription {
                name: AsebaStr::from_str(a),
                description: AsebaStr::from_str(b),
            },
            _ => Message::NodeSpecificError {
                pc: 7,
                message: AsebaStr::from_str(b),
            },
        },
        Spec::Native(a, b, p) => {
            params = p
                .iter()
                .map(|(s, n)| NativeParam {
                    name: n.clone(),
                    size: *s,
                })
                .collect();
            Message::NativeFunctionDescription {
                name: AsebaStr::from_str(a),
                description: AsebaStr::from_str(b),
                params: NativeParams::from_params(&params),
            }
        }
        Spec::Fixed(k, bytes) => match Message::decode(*k, bytes) {
            Ok(m) => m,
            Err(_) => return false,
        },
        Spec::DeviceInfo(i, d) => Message::DeviceInfo { info: *i, data: d },
        Spec::SetDeviceInfo(dest, i, d) => Message::SetDeviceInfo {
            dest: *dest,
            info: *i,
            data: d,
        },
        Spec::Changed(blocks) => {
            let mut buf = Vec::new();
            for (s, v) in blocks {
                ChangedBlocks::push_block(&mut buf, *s, v);
            }
            changed = buf;
            match ChangedBlocks::from_bytes(&changed) {
                Some(b) => Message::ChangedVariables { blocks: b },
                None => return false,
            }
        }
    };
    let Ok(bytes) = m.to_frame(source) else {
        return false;
    };
    let (frame, n) = Frame::parse(&bytes).expect("encoded frame parses");
    assert_eq!(n, bytes.len());
    assert_eq!(frame.source, source);
    assert_eq!(frame.kind, m.kind());
    assert_eq!(frame.raw(), &bytes[..]);
    assert_eq!(frame.message().unwrap(), m);
    true
}

proptest! {
    #[test]
    fn encode_then_decode_is_identity(spec in spec(), source in any::<u16>()) {
        roundtrip(&spec, source);
    }

    #[test]
    fn decode_then_encode_is_identity(k in prop::sample::select((0x8000u16..=0x8006).chain(0x9000..=0x900E).chain(0xA000..=0xA015).chain([0u16, 1, 0x7FFF]).collect::<Vec<_>>()),
                                     payload in prop::collection::vec(any::<u8>(), 0..64)) {
        if let Ok(m) = Message::decode(k, &payload) {
            let bytes = m.to_frame(3).unwrap();
            prop_assert_eq!(&bytes[HEADER_LEN..], &payload[..]);
        }
    }

    #[test]
    fn parse_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        let _ = Frame::parse(&bytes);
    }
}

#[test]
fn header_bytes_round_trip_unchecked() {
    // an oversize user event: written as is (tests of peers' framing), read back as is
    let h = Header {
        len: 600,
        source: 7,
        kind: 3,
    };
    assert_eq!(h.to_bytes(), [0x58, 0x02, 7, 0, 3, 0]);
    assert_eq!(read_header(&h.to_bytes()), Some(h));
    let f = unchecked_frame(7, 3, &[1, 2, 3]);
    assert_eq!(f, [3, 0, 7, 0, 3, 0, 1, 2, 3]);
    assert!(
        check_header(&f).is_err(),
        "an odd user event is written as asked"
    );
}
