//! Any text as a Dashel target: parsing never panics, and a parsed target's canonical form
//! parses back to the same target.
#![no_main]
use libfuzzer_sys::fuzz_target;
use msgs::target::Target;

fuzz_target!(|s: &str| {
    if let Ok(t) = s.parse::<Target>() {
        let again: Target = t.to_string().parse().expect("canonical form parses");
        assert_eq!(again, t);
    }
});
