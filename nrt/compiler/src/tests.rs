//! Unit tests on the reference examples (aseba.md §3.11, real output of the official compiler)
//! and on error paths. The conformance corpus against the official compilers is in
//! `tests/aseba/compiler_corpus.rs`.

use super::*;
use msgs::description::thymio_ii_fw14;

fn events() -> Vec<EventDef> {
    vec![
        EventDef {
            name: "ping".into(),
            size: 0,
        },
        EventDef {
            name: "pair".into(),
            size: 2,
        },
    ]
}

fn compile_thymio(src: &str) -> Result<Program, CompileError> {
    compile(src, &thymio_ii_fw14(), &events(), &[("SPEED".into(), 200)])
}

fn hex(s: &str) -> Vec<u16> {
    s.split_whitespace()
        .map(|w| u16::from_str_radix(w, 16).unwrap())
        .collect()
}

const EXAMPLE1: &str = "var i = 0
var a[3] = [1, 2, 3]
timer.period[0] = 100
call leds.top(32, 0, 0)
onevent button.center
\twhen button.center == 1 do
\t\tmotor.left.target = SPEED
\t\tmotor.right.target = -SPEED
\t\temit pair [i, 5000]
\tend
onevent timer0
\ti = (i + 1) % 3
\ta[i] = a[i] * 2 / 3
\tif prox.horizontal[2] > 2000 then
\t\temit ping
\telse
\t\tcallsub stop
\tend
\twhile i < 10 do
\t\ti++
\tend
onevent pair
\ti = event.args[1]
sub stop
\tmotor.left.target = 0
\tmotor.right.target = 0
";

#[test]
fn reference_example_1() {
    let p = compile_thymio(EXAMPLE1).unwrap();
    let expected = hex("0009 0001 0009 FFEF 000C FFFC 002F FFFF 0040
         3003 4080 0000
         3080 1001 8002 1003 8006 4080
         3080 5081 0003 1001 8000 1003 8005 3080 6081 0003
         303B 17D0 A00C 0006
         B000 0000 0000 9002
         D055
         3080 100A A00E 0007 3080 1001 8002 4080 9FF8
         0000
         302C 1001 A10A 000E
         10C8 4056 1F38 4057
         3080 427E 2000 1388 427F B001 027E 0002 0000
         1000 4080 1001 4081 1002 4082 1003 4083 1064 407C
         1000 427D 127D 1000 427E 127E 1020 427F 127F C028
         0000
         1000 4056 1000 4057 E000");
    assert_eq!(p.bytecode, expected);
    let names: Vec<(&str, u16, u16)> = p
        .variables
        .iter()
        .map(|v| (v.name.as_str(), v.address, v.size))
        .collect();
    assert_eq!(names, vec![("i", 128, 1), ("a", 129, 3)]);
}

#[test]
fn reference_example_2_native_abi() {
    let decl = "var v[4]\nvar w[4]\nvar r\nvar k = 1\n";
    let body = |stmt: &str| {
        let p = compile_thymio(&format!("{decl}{stmt}\n")).unwrap();
        // init: k = 1 (1001 4089), then the statement, then STOP
        let code = &p.bytecode[3..p.bytecode.len() - 1];
        assert_eq!(&code[..2], &[0x1001, 0x4089]);
        code[2..].to_vec()
    };
    assert_eq!(body("call math.copy(v, w)"), hex("1004 1084 1080 C004"));
    assert_eq!(
        body("call math.dot(r, v, w, 2)"),
        hex("1004 1002 427F 127F 1084 1080 1088 C00E")
    );
    assert_eq!(
        body("call math.fill(v[k], 7)"),
        hex("1001 1007 427E 127E 3089 427F 327F 327F 5080 0004 427F 1080 8002 C005")
    );
    assert_eq!(
        body("r = abs(-r) ^ ~k"),
        hex("3088 7000 7001 3089 7002 8008 4088")
    );
}

#[test]
fn empty_program_is_an_empty_table() {
    assert_eq!(compile_thymio("").unwrap().bytecode, vec![1]);
    assert_eq!(compile_thymio("# nothing\n").unwrap().bytecode, vec![1]);
}

fn error_of(src: &str) -> CompileError {
    compile_thymio(src).expect_err("must fail")
}

#[test]
fn errors_have_positions_and_official_wording() {
    let e = error_of("var a\nxyz = 1\n");
    assert_eq!((e.line, e.col), (2, 1));
    assert_eq!(e.message, "xyz is not a defined variable");
    assert_eq!(
        error_of("var abc\nabd = 1\n").message,
        "abd is not a defined variable, do you mean abc?"
    );
    assert_eq!(error_of("var a\na = 1 / 0\n").message, "Division by zero");
    assert!(error_of("var a[3]\na[3] = 1\n")
        .message
        .starts_with("Access of array a out of bounds"));
    assert_eq!(
        error_of("emit pair [1]\n").message,
        "Event pair needs an array of size 2, but one of size 1 is passed"
    );
    assert_eq!(
        error_of("while 1 == 1 do\nend\n").message,
        "Infinite loops not allowed"
    );
    assert_eq!(
        error_of("callsub nowhere\n").message,
        "Subroutine nowhere does not exists"
    );
    assert_eq!(
        error_of("var a\nif a then\na = 1\nend\n").message,
        "Expecting bool type, found integer type instead"
    );
    assert_eq!(
        error_of("emit button.center\n").message,
        "button.center is a local event that you cannot emit"
    );
}

#[test]
fn recursion_overflows_the_stack() {
    let e = error_of("sub a\ncallsub a\n");
    assert!(
        e.message.starts_with("Execution stack will overflow"),
        "{e}"
    );
}

#[test]
fn too_big_scripts_are_refused() {
    let mut src = String::from("var a\n");
    for _ in 0..800 {
        src.push_str("a = 1\n");
    }
    assert_eq!(
        error_of(&src).message,
        "Script too big for target bytecode size"
    );
}

#[test]
fn never_panics_on_odd_inputs() {
    for src in [
        "var",
        "var a[",
        "var a[0]",
        "var a[] = ",
        "onevent",
        "if",
        "if 1 then",
        "for i in 1:",
        "call",
        "call math.copy(",
        "]]]",
        "((((",
        "var a = -32769",
        "var a = 32768",
        "var a\na = a[1:0]",
        "sub\nsub",
        "emit",
        "_emit pair [1,2,3]",
        "var a[2]\na = [1]",
        "when",
        "return return",
        "var a\nfor a in 3:1 do\nend",
        "\u{0}\u{1}",
        "#* unterminated",
        "var a\na = --a",
        "var a\na = abs -32768",
        "var a\na = 1 << 40",
    ] {
        let _ = compile_thymio(src);
    }
}
