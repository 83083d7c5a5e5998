//! Arbitrary text as an .aesl file and as Aseba source: parsing and compiling never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use msgs::description::thymio_ii_fw14;
use nrt_compiler::{compile, parse_aesl, EventDef};

fuzz_target!(|text: &str| {
    let _ = parse_aesl(text);
    let events = [EventDef { name: "ping".into(), size: 0 }, EventDef { name: "pair".into(), size: 2 }];
    let _ = compile(text, &thymio_ii_fw14(), &events, &[("SPEED".into(), 200)]);
});
