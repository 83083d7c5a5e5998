use super::*;
use proptest::prelude::*;

const SMALL: YamlLimits = YamlLimits {
    max_bytes: 1 << 20,
    max_depth: 8,
    max_anchors_aliases: 4,
};

fn deep(line: usize) -> Result<(), YamlGuardError> {
    Err(YamlGuardError::TooDeep {
        line,
        max: SMALL.max_depth,
    })
}

#[test]
fn the_project_configurations_pass() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    for f in [
        "config/thymio-rt.yaml",
        "config/arena/table.yaml",
        "config/arena/calibration.yaml",
        "config/arena/line.yaml",
        "config/arena/default.yaml",
        "config/arena/obstacles.yaml",
        "examples/my_controller/my_controller.yaml",
        "bench/latency/scale.yaml",
        "bench/latency/loader.yaml",
    ] {
        let text = std::fs::read_to_string(format!("{root}/{f}")).unwrap();
        assert_eq!(check(&text, YamlLimits::CONFIG), Ok(()), "{f}");
    }
}

#[test]
fn a_ros_parameter_file_passes() {
    let text = "/**:\n  ros__parameters:\n    use_sim_time: false\n\
                /ns/thymio_2/thymio_driver:\n  ros__parameters:\n    motor:\n      left: {parameters: [1.0, 0.0]}\n\
                      right:\n        parameters:\n          - 1.0\n          - 0.0\n";
    assert_eq!(check(text, SMALL), Ok(()));
}

#[test]
fn flow_nesting_is_bounded() {
    assert_eq!(check(&"[".repeat(8), SMALL), Ok(()));
    assert_eq!(check(&"[".repeat(9), SMALL), deep(1));
    assert_eq!(
        check("a: 1\nb: {c: [{d: [[[[[[1]]]]]]}]}\n", SMALL),
        deep(2)
    );
    // over several lines
    assert_eq!(check("a: [\n [\n  [[[[[[\n", SMALL), deep(3));
}

#[test]
fn block_nesting_is_bounded() {
    let mut text = String::new();
    for i in 0..9 {
        text += &format!("{}k{i}:\n", " ".repeat(i));
    }
    assert_eq!(check(&text, SMALL), deep(9));
    assert_eq!(check("- - - - - - - - - x\n", SMALL), deep(1));
    assert_eq!(check("- - - - - - - - x\n", SMALL), Ok(()));
    // block and flow add up
    assert_eq!(check("a:\n  b:\n    c: [[[[[[x]]]]]]\n", SMALL), deep(3));
    // levels close again
    let ok = "a:\n  b:\n    c:\n      d: 1\ne:\n  f:\n    g:\n      h: [[[[1]]]]\n";
    assert_eq!(check(ok, SMALL), Ok(()));
}

#[test]
fn quotes_comments_and_block_scalars_are_not_nesting() {
    let text = "a: \"[[[[[[[[[[ \\\" [[[[\"\nb: '[[[[[[[[[[ '' [[[['\n\
                c: x # [[[[[[[[[[[[\n# {{{{{{{{{{{{{{{{\n\
                d: |\n  [[[[[[[[[[[[[[\n      {{{{{{{{{{\n\n  - - - - - - - - - -\n\
                e: plain [[[[[[[[[[[[ it's\n\
                f: \"multi\n  [[[[[[[[[[[[ line\"\n";
    assert_eq!(check(text, SMALL), Ok(()));
}

#[test]
fn a_quote_inside_a_plain_scalar_does_not_hide_what_follows() {
    // `b '` is a plain scalar: the parser sees the nesting on the next lines
    assert_eq!(check("x: b '\ny: [[[[[[[[[\n", SMALL), deep(2));
    assert_eq!(check("x: b\n  'c\ny: [[[[[[[[[\n", SMALL), deep(3));
    assert_eq!(check("x: [a\n  'b]\ny: [[[[[[[[[\n", SMALL), deep(3));
    // a block scalar ends at a line no more indented than its parent collection
    assert_eq!(check("- k: |\n   text\n [[[[[[[[[\n", SMALL), deep(3));
}

#[test]
fn anchors_and_aliases_are_bounded() {
    assert_eq!(check("a: &x 1\nb: *x\nc: [*x, *x]\n", SMALL), Ok(()));
    assert_eq!(
        check("a: &x 1\nb: *x\nc: [*x, *x]\nd: *x\n", SMALL),
        Err(YamlGuardError::TooManyAliases { line: 4, max: 4 })
    );
    // not at a node's start: part of a plain scalar
    assert_eq!(check("a: 2*3*4*5*6 & b&c\n", SMALL), Ok(()));
}

#[test]
fn size_is_bounded() {
    let limits = YamlLimits {
        max_bytes: 10,
        ..SMALL
    };
    assert_eq!(check("a: 1234567", limits), Ok(()));
    assert_eq!(
        check("a: 12345678", limits),
        Err(YamlGuardError::TooLarge { bytes: 11, max: 10 })
    );
}

#[test]
fn a_hostile_400_kb_text_is_refused_with_the_limit() {
    let text = "[".repeat(400_000);
    let e = check(&text, YamlLimits::CONFIG).unwrap_err();
    assert_eq!(e, YamlGuardError::TooDeep { line: 1, max: 64 });
    assert_eq!(
        e.to_string(),
        "YAML nested deeper than the limit of 64 levels at line 1"
    );
    let mut text = String::new();
    for i in 0..700 {
        text += &format!("{}k:\n", " ".repeat(i));
    }
    assert!(matches!(
        check(&text, YamlLimits::CONFIG),
        Err(YamlGuardError::TooDeep { line: 65, .. })
    ));
}

/// A nested value, written as YAML in flow or block style.
#[derive(Debug, Clone)]
enum Node {
    Leaf(String),
    Seq(Vec<Node>),
    Map(Vec<(String, Node)>),
}

impl Node {
    fn depth(&self) -> usize {
        match self {
            Node::Leaf(_) => 0,
            Node::Seq(v) => 1 + v.iter().map(Node::depth).max().unwrap_or(0),
            Node::Map(v) => 1 + v.iter().map(|(_, n)| n.depth()).max().unwrap_or(0),
        }
    }

    fn flow(&self) -> String {
        match self {
            Node::Leaf(s) => s.clone(),
            Node::Seq(v) => format!(
                "[{}]",
                v.iter().map(Node::flow).collect::<Vec<_>>().join(", ")
            ),
            Node::Map(v) => format!(
                "{{{}}}",
                v.iter()
                    .map(|(k, n)| format!("{k}: {}", n.flow()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    /// Block style at `indent`, as the value of a key or a sequence entry.
    fn block(&self, indent: usize, out: &mut String) {
        let pad = " ".repeat(indent);
        match self {
            Node::Leaf(s) => *out += &format!(" {s}\n"),
            Node::Seq(v) if v.is_empty() => *out += " []\n",
            Node::Map(v) if v.is_empty() => *out += " {}\n",
            Node::Seq(v) => {
                *out += "\n";
                for n in v {
                    *out += &format!("{pad}-");
                    n.block(indent + 2, out);
                }
            }
            Node::Map(v) => {
                *out += "\n";
                for (k, n) in v {
                    *out += &format!("{pad}{k}:");
                    n.block(indent + 2, out);
                }
            }
        }
    }
}

fn node() -> impl Strategy<Value = Node> {
    let leaf = prop_oneof![
        "[a-z][a-z0-9 ]{0,6}[a-z]".prop_map(Node::Leaf),
        "'[a-z\\[\\]{}#:, ]{0,8}'".prop_map(Node::Leaf),
        "\"[a-z\\[\\]{}#:, ']{0,8}\"".prop_map(Node::Leaf),
    ];
    leaf.prop_recursive(12, 64, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Node::Seq),
            prop::collection::vec(("[a-z]{1,4}", inner), 1..3).prop_map(Node::Map),
        ]
    })
}

proptest! {
    /// The guard's depth is the structure's, in flow and block style alike: what is within the
    /// limit passes, what is deeper is refused.
    #[test]
    fn the_guard_measures_the_structure_depth(n in node()) {
        let limits = YamlLimits { max_depth: 6, ..SMALL };
        let d = n.depth();
        let flow = format!("top: {}\n", n.flow());
        let mut block = String::from("top:");
        n.block(2, &mut block);
        for text in [flow, block] {
            let got = check(&text, limits);
            // the root mapping is one level
            if d < limits.max_depth {
                prop_assert_eq!(got, Ok(()), "{}", text);
            } else {
                prop_assert!(matches!(got, Err(YamlGuardError::TooDeep { .. })), "{}", text);
            }
        }
    }

    /// Whatever the text, the guard answers (no panic).
    #[test]
    fn the_guard_never_panics(text in "[-\\[\\]{}'\"#|>&*!:, \\n\\ta-c]{0,200}") {
        let _ = check(&text, SMALL);
    }
}
