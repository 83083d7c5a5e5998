//! Any byte stream in any chunking: the reassembler never panics, accounts for every byte,
//! and every frame it yields parses on its own.
#![no_main]
use libfuzzer_sys::fuzz_target;
use msgs::reassembler::Reassembler;
use msgs::wire::Frame;

fuzz_target!(|data: &[u8]| {
    let Some((&chunk, stream)) = data.split_first() else { return };
    let chunk = usize::from(chunk).max(1);
    let mut r = Reassembler::new();
    let mut delivered = 0usize;
    for c in stream.chunks(chunk) {
        let mut input = c;
        while let Some(res) = r.push(&mut input) {
            if let Ok(f) = res {
                let (again, n) = Frame::parse(f.raw()).expect("yielded frames are valid");
                assert_eq!(n, f.raw().len());
                assert_eq!(again, f);
                delivered += n;
            }
        }
    }
    assert_eq!(delivered + r.stats().bytes_discarded as usize + r.buffered(), stream.len());
});
