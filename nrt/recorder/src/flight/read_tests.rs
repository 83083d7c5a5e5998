//! Reading recordings back: rotations by run id, cut files, what is not a regular file, bounded records.

use super::*;
use crate::flight::rt_channels::{InputMsg, ENCODING, INPUT_SCHEMA};
use crate::{RecordLimits, Recording, SchemaDef};
use handoff::{PassKind, RecInput};
use std::io::Write;

fn pass(now_ns: u64) -> RecInput {
    RecInput::Pass {
        kind: PassKind::Periodic,
        now_ns,
        wake: false,
        timer: true,
        signal: false,
    }
}

/// A recording at `path` of run `run` holding passes with sequence numbers `seqs`, a chunk written out every
/// `per_chunk` records; left unclosed (as a kill leaves it) when `close` is false.
fn recording(path: &Path, run: &str, seqs: &[u64], per_chunk: usize, close: bool) {
    let meta = BTreeMap::from([(RUN_ID.1.to_owned(), run.to_owned())]);
    let mut rec = Recording::create(path, RecordLimits::NONE, &[(RUN_ID.0, meta)]).unwrap();
    let schema = SchemaDef {
        name: INPUT_SCHEMA.into(),
        encoding: String::new(),
        data: Vec::new(),
    };
    let ch = rec.channel(INPUTS, &schema, ENCODING).unwrap();
    for (k, &seq) in seqs.iter().enumerate() {
        let mut data = Vec::new();
        let msg = InputMsg {
            seq,
            t_ns: k as u64,
            input: pass(k as u64 * 1_000_000),
        };
        ciborium::into_writer(&msg, &mut data).unwrap();
        rec.write(ch, k as u64, k as u64, &data).unwrap();
        if (k + 1) % per_chunk == 0 {
            rec.flush().unwrap();
        }
    }
    if close {
        rec.finish().unwrap();
    } else {
        rec.flush().unwrap();
        // the writer's buffer is on disk; no summary, no footer: as SIGKILL leaves the file
        std::mem::forget(rec);
    }
}

fn names(files: &[PathBuf]) -> Vec<String> {
    files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn a_rotation_is_read_from_the_file_given_on() {
    let dir = tempfile::tempdir().unwrap();
    for n in ["run.mcap", "run_001.mcap", "run_002.mcap", "run_004.mcap"] {
        std::fs::write(dir.path().join(n), b"").unwrap();
    }
    let of = |p: &str| names(&rotation(&dir.path().join(p)));
    assert_eq!(of("run.mcap"), ["run.mcap", "run_001.mcap", "run_002.mcap"]);
    assert_eq!(of("run_001.mcap"), ["run_001.mcap", "run_002.mcap"]);
    assert_eq!(of("run_004.mcap"), ["run_004.mcap"]);
}

#[test]
fn damaged_and_foreign_files_are_errors_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.mcap");
    std::fs::write(&junk, b"not an mcap file at all").unwrap();
    let e = load(&junk).unwrap_err().to_string();
    assert!(
        e.contains("junk.mcap") && e.contains("not a readable MCAP"),
        "{e}"
    );
    let missing = load(&dir.path().join("none.mcap")).unwrap_err().to_string();
    assert!(
        missing.contains("none.mcap") && missing.contains("cannot read"),
        "{missing}"
    );
    // an MCAP file without the RT thread's channels
    let empty = dir.path().join("empty.mcap");
    crate::Recording::create(&empty, crate::RecordLimits::NONE, &[])
        .unwrap()
        .finish()
        .unwrap();
    let e = load(&empty).unwrap_err().to_string();
    assert!(e.contains("no record of the RT thread"), "{e}");
}

#[test]
fn what_is_not_a_regular_file_is_refused_before_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.mcap");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    // a FIFO with no writer would block the open forever; /dev/zero never ends; a directory
    for (p, kind) in [
        (fifo.as_path(), "a FIFO"),
        (Path::new("/dev/zero"), "a device"),
        (dir.path(), "a directory"),
    ] {
        let e = load(p).unwrap_err();
        assert!(matches!(e, ReadError::NotAFile { .. }), "{e:?}");
        assert!(e.to_string().contains(kind), "{e}");
    }
    // a link to a device too
    let link = dir.path().join("zero.mcap");
    std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
    assert!(matches!(load(&link), Err(ReadError::NotAFile { .. })));
}

#[test]
fn a_neighbour_of_another_run_or_damaged_is_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("run.mcap");
    recording(&first, "A", &[0, 1, 2], 10, true);
    recording(&dir.path().join("run_001.mcap"), "A", &[3, 4], 10, true);
    // another run's file where the rotation's next would be: not read, said
    recording(&dir.path().join("run_002.mcap"), "B", &[5, 6, 7], 10, true);
    let l = load(&first).unwrap();
    assert_eq!(names(&l.files), ["run.mcap", "run_001.mcap"]);
    assert_eq!(l.records.len(), 5);
    assert_eq!(l.ignored.len(), 1, "{:?}", l.ignored);
    assert!(
        l.ignored[0].1.contains("run id B, not A"),
        "{:?}",
        l.ignored
    );
    // a damaged neighbour does not make a good recording unreadable
    std::fs::write(dir.path().join("run_002.mcap"), b"garbage").unwrap();
    let l = load(&first).unwrap();
    assert_eq!((l.files.len(), l.records.len()), (2, 5));
    assert!(l.ignored[0].1.contains("unreadable"), "{:?}", l.ignored);
}

#[test]
fn a_cut_recording_is_read_up_to_its_last_complete_chunk() {
    let dir = tempfile::tempdir().unwrap();
    let killed = dir.path().join("killed.mcap");
    recording(&killed, "K", &(0..100).collect::<Vec<_>>(), 10, false);
    let l = load(&killed).unwrap();
    let (file, cut) = l.cut.clone().expect("no summary: cut");
    assert_eq!(file, killed);
    assert_eq!((cut.chunks, cut.messages), (10, 100));
    assert_eq!(cut.at_byte, cut.size);
    // the last pass may lack its end: it is not replayed
    assert_eq!(l.records.len(), 99);
    assert!(
        cut.to_string()
            .contains("cut after 100 message(s) / chunk 10 at byte"),
        "{cut}"
    );
    // cut inside a chunk: the chunks before it
    let bytes = std::fs::read(&killed).unwrap();
    let short = dir.path().join("short.mcap");
    std::fs::write(&short, &bytes[..cut.at_byte as usize - 400]).unwrap();
    let l = load(&short).unwrap();
    let cut = l.cut.unwrap().1;
    assert_eq!((cut.chunks, cut.messages), (9, 90));
    assert!(cut.at_byte < cut.size);
    assert_eq!(l.records.len(), 89);
    // zeros past what was written (a power loss): cut where they start
    let mut zeros = bytes.clone();
    zeros.extend_from_slice(&[0; 4096]);
    let zeroed = dir.path().join("zeroed.mcap");
    std::fs::write(&zeroed, &zeros).unwrap();
    let cut = load(&zeroed).unwrap().cut.unwrap().1;
    assert_eq!((cut.chunks, cut.at_byte), (10, bytes.len() as u64));
    // a closed recording has no cut
    let closed = dir.path().join("closed.mcap");
    recording(&closed, "C", &[0, 1, 2], 2, true);
    assert!(load(&closed).unwrap().cut.is_none());
}

#[test]
fn missing_records_count_whatever_the_sequence_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("max.mcap");
    recording(&p, "M", &[0, u64::MAX], 10, true);
    let l = load(&p).unwrap();
    assert_eq!(l.missing, u64::MAX - 1);
    let p = dir.path().join("gap.mcap");
    recording(&p, "G", &[2, 3, 7], 10, true);
    assert_eq!(load(&p).unwrap().missing, 2 + 3);
}

/// A file of `magic`, a header, then one record `op` of `len` bytes (the file made sparse to hold it), then a
/// data end record.
fn with_big_record(path: &Path, op: u8, len: u64) {
    let mut f = std::fs::File::create(path).unwrap();
    f.write_all(mcap::MAGIC).unwrap();
    // header: profile "", library ""
    f.write_all(&[mcap::records::op::HEADER]).unwrap();
    f.write_all(&8u64.to_le_bytes()).unwrap();
    f.write_all(&[0; 8]).unwrap();
    f.write_all(&[op]).unwrap();
    f.write_all(&len.to_le_bytes()).unwrap();
    let at = 8 + 17 + 9 + len;
    f.set_len(at).unwrap();
    use std::io::Seek;
    f.seek(std::io::SeekFrom::Start(at)).unwrap();
    f.write_all(&[mcap::records::op::DATA_END]).unwrap();
    f.write_all(&4u64.to_le_bytes()).unwrap();
    f.write_all(&[0; 4]).unwrap();
}

#[test]
fn attachments_are_skipped_and_records_read_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    // a 1 GiB attachment (sparse on disk): skipped, not read
    let att = dir.path().join("att.mcap");
    with_big_record(&att, mcap::records::op::ATTACHMENT, 1 << 30);
    let s = scan::scan(&att, false, |_, _| Ok(())).unwrap();
    assert!(s.cut.is_none());
    // a record replay needs that is larger than its bound: refused, naming its size, not read
    let big = dir.path().join("big.mcap");
    with_big_record(&big, mcap::records::op::METADATA, 1 << 30);
    let e = load(&big).unwrap_err().to_string();
    assert!(
        e.contains("a record of 1073741824 bytes") && e.contains("big.mcap"),
        "{e}"
    );
}

#[test]
fn the_records_held_in_memory_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("long.mcap");
    recording(&p, "L", &(0..50).collect::<Vec<_>>(), 10, true);
    assert_eq!(load_within(&p, 1 << 20).unwrap().records.len(), 50);
    let e = load_within(&p, 2_000).unwrap_err();
    assert!(matches!(e, ReadError::TooLarge { max: 2_000, .. }), "{e:?}");
    assert!(
        e.to_string().contains("more than 2000 bytes in memory"),
        "{e}"
    );
}
