use super::*;
use proptest::prelude::*;

fn p(s: &str) -> Target {
    s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn e(s: &str) -> String {
    s.parse::<Target>().unwrap_err().to_string()
}

#[test]
fn tcp_forms() {
    let t = Target::Tcp {
        host: "127.0.0.1".into(),
        port: 33333,
    };
    assert_eq!(p("tcp:host=127.0.0.1;port=33333"), t);
    assert_eq!(p("tcp:127.0.0.1;33333"), t);
    assert_eq!(p("tcp:127.0.0.1;port=33333"), t);
    assert_eq!(
        p("tcp:localhost;33333"),
        Target::Tcp {
            host: "localhost".into(),
            port: 33333
        }
    );
    assert_eq!(
        p("tcp:host=a;port=1;remapLocal=2;remapTarget=1"),
        Target::Tcp {
            host: "a".into(),
            port: 1
        }
    );
}

#[test]
fn tcpin_serial_and_others() {
    assert_eq!(
        p("tcpin:33333"),
        Target::TcpIn {
            port: 33333,
            address: "0.0.0.0".into()
        }
    );
    assert_eq!(
        p("tcpin:port=1;address=127.0.0.1"),
        Target::TcpIn {
            port: 1,
            address: "127.0.0.1".into()
        }
    );
    assert_eq!(
        p("tcpin:"),
        Target::TcpIn {
            port: 5000,
            address: "0.0.0.0".into()
        }
    );
    let dev = p("ser:device=/dev/ttyACM0");
    let Target::Serial(s) = dev else { panic!() };
    assert_eq!(s.selector, SerialSelector::Device("/dev/ttyACM0".into()));
    assert_eq!(
        (s.baud, s.stop_bits, s.parity, s.flow, s.bits, s.dtr),
        (115200, 1, Parity::None, FlowControl::None, 8, true)
    );
    let Target::Serial(s) = p("ser:name=Thymio-II") else {
        panic!()
    };
    assert_eq!(s.selector, SerialSelector::Name("Thymio-II".into()));
    let Target::Serial(s) = p("ser:port=1;baud=115200;dtr=false") else {
        panic!()
    };
    assert_eq!((s.selector, s.dtr), (SerialSelector::Port(1), false));
    let Target::Serial(s) = p("ser:2;9600;2;even;hard;7;false") else {
        panic!()
    };
    assert_eq!(
        (
            s.selector,
            s.baud,
            s.stop_bits,
            s.parity,
            s.flow,
            s.bits,
            s.dtr
        ),
        (
            SerialSelector::Port(2),
            9600,
            2,
            Parity::Even,
            FlowControl::Hard,
            7,
            false
        )
    );
    assert_eq!(
        p("udp:4000"),
        Target::Udp {
            port: 4000,
            address: "0.0.0.0".into()
        }
    );
    assert_eq!(
        p("file:name=/tmp/x;mode=write"),
        Target::File {
            name: "/tmp/x".into(),
            write: true
        }
    );
    assert_eq!(p("stdin:"), Target::Stdin);
    assert_eq!(p("stdout"), Target::Stdout);
    assert_eq!(p("sim"), Target::Sim { robots: 1 });
    assert_eq!(p("sim:robots=3"), Target::Sim { robots: 3 });
    assert_eq!(p("sim:2"), Target::Sim { robots: 2 });
}

#[test]
fn fuzz_regressions() {
    // fuzz/artifacts/dashel_target/crash-260bcdb2: a control character at the end of a value
    let t = p("udp:3;\r;1");
    assert_eq!(
        t,
        Target::Udp {
            port: 3,
            address: "\r".into()
        }
    );
    assert_eq!(t.to_string().parse::<Target>().unwrap(), t);
    // the fuzzer's input bytes, as the lossy UTF-8 text the parser sees
    let raw: &[u8] = b"udp:3;\r;;1;;\xcc\xd5\x00p333\xff\xff\xff\xff\xdf\xff\xff\x063371";
    let text = String::from_utf8_lossy(raw);
    if let Ok(t) = text.parse::<Target>() {
        assert_eq!(t.to_string().parse::<Target>().unwrap(), t);
    }
}

#[test]
fn errors_name_parameter_and_text() {
    assert_eq!(
        e("tcp:host=a;port=99999"),
        "invalid port \"99999\" in \"tcp:host=a;port=99999\""
    );
    assert_eq!(e("tcp:host=a"), "missing port in \"tcp:host=a\"");
    assert_eq!(e("tcp:port=3"), "missing host in \"tcp:port=3\"");
    assert_eq!(
        e("tcp:host=;port=3"),
        "invalid host \"\" in \"tcp:host=;port=3\""
    );
    assert_eq!(e("tpc:host=a;port=1"), "unknown protocol \"tpc\" in \"tpc:host=a;port=1\" (tcp, tcpin, ser, udp, file, stdin, stdout, sim)");
    assert_eq!(
        e("tcp:host=a;port=1;speed=3"),
        "unknown parameter \"speed\" in \"tcp:host=a;port=1;speed=3\""
    );
    assert_eq!(
        e("tcp:host=a;33333"),
        "value \"33333\" without a key after an explicit parameter in \"tcp:host=a;33333\""
    );
    assert_eq!(
        e("tcp:a;1;2;3;4"),
        "too many values in \"tcp:a;1;2;3;4\" (unexpected \"4\")"
    );
    assert_eq!(
        e("ser:parity=mark"),
        "invalid parity \"mark\" in \"ser:parity=mark\""
    );
    assert_eq!(
        e("ser:dtr=maybe"),
        "invalid dtr \"maybe\" in \"ser:dtr=maybe\""
    );
    assert_eq!(e("ser:port=0"), "invalid port \"0\" in \"ser:port=0\"");
    assert_eq!(e("ser:bits=9"), "invalid bits \"9\" in \"ser:bits=9\"");
    assert_eq!(
        e("sim:robots=0"),
        "robots \"0\" in \"sim:robots=0\" is out of range: robots must be 1 to 64"
    );
    // a number too large for its type was "invalid robots", without the range
    assert_eq!(
        e("sim:robots=100000"),
        "robots \"100000\" in \"sim:robots=100000\" is out of range: robots must be 1 to 64"
    );
    assert_eq!(
        e("sim:robots=65"),
        "robots \"65\" in \"sim:robots=65\" is out of range: robots must be 1 to 64"
    );
    assert_eq!(p("sim:robots=64"), Target::Sim { robots: 64 });
    assert_eq!(
        e("sim:robots=x"),
        "invalid robots \"x\" in \"sim:robots=x\""
    );
    assert_eq!(
        e("tcp:host=a;port=1;remapLocal=x"),
        "invalid remapLocal \"x\" in \"tcp:host=a;port=1;remapLocal=x\""
    );
    assert!(e("").contains("unknown protocol"));
    assert_eq!(e("file:mode=read"), "missing name in \"file:mode=read\"");
}

fn target() -> impl Strategy<Value = Target> {
    let host = "[a-z][a-z0-9.-]{0,20}";
    let path = "/[a-zA-Z0-9_/.-]{1,30}";
    let selector = prop_oneof![
        path.prop_map(SerialSelector::Device),
        "[A-Za-z0-9 _-]{1,20}".prop_map(SerialSelector::Name),
        (1u32..100).prop_map(SerialSelector::Port),
    ];
    prop_oneof![
        (host, any::<u16>()).prop_map(|(host, port)| Target::Tcp { host, port }),
        (any::<u16>(), "[0-9.]{7,15}").prop_map(|(port, address)| Target::TcpIn { port, address }),
        (any::<u16>(), "[0-9.]{7,15}").prop_map(|(port, address)| Target::Udp { port, address }),
        (
            selector,
            1u32..4_000_000,
            1u8..=2,
            0..3,
            any::<bool>(),
            5u8..=8,
            any::<bool>()
        )
            .prop_map(|(selector, baud, stop_bits, par, hard, bits, dtr)| {
                Target::Serial(SerialTarget {
                    selector,
                    baud,
                    stop_bits,
                    parity: [Parity::None, Parity::Even, Parity::Odd][par as usize],
                    flow: if hard {
                        FlowControl::Hard
                    } else {
                        FlowControl::None
                    },
                    bits,
                    dtr,
                })
            }),
        (path, any::<bool>()).prop_map(|(name, write)| Target::File { name, write }),
        Just(Target::Stdin),
        Just(Target::Stdout),
        (1u16..=MAX_SIM_ROBOTS).prop_map(|robots| Target::Sim { robots }),
    ]
}

proptest! {
    #[test]
    fn display_then_parse_is_identity(t in target()) {
        prop_assert_eq!(t.to_string().parse::<Target>().unwrap(), t);
    }

    #[test]
    fn never_panics(s in ".{0,80}") {
        let _ = s.parse::<Target>();
    }

    #[test]
    fn never_panics_on_plausible_strings(s in "(tcp|tcpin|ser|udp|file|sim|x):[a-z=;0-9/.]{0,40}") {
        let _ = s.parse::<Target>();
    }
}
