//! The writer against the `mcap` crate's reader (the independent Python reader: `tests/python_reader.rs`), a real
//! full device (`/dev/full`) and real unwritable places.

use super::*;
use std::io::ErrorKind;

fn raw(name: &str) -> SchemaDef {
    SchemaDef {
        name: name.into(),
        encoding: String::new(),
        data: Vec::new(),
    }
}

fn json_schema() -> SchemaDef {
    SchemaDef {
        name: "t/Json".into(),
        encoding: "jsonschema".into(),
        data: br#"{"type":"object"}"#.to_vec(),
    }
}

/// One file as the `mcap` crate reads it: its summary must be there (the file was closed).
struct Read {
    summary: mcap::Summary,
    /// (topic, sequence, log time, publish time, data)
    messages: Vec<(String, u32, u64, u64, Vec<u8>)>,
    metadata: Vec<Metadata>,
}

fn read(path: &Path) -> Read {
    let bytes = std::fs::read(path).unwrap();
    let summary = mcap::Summary::read(&bytes)
        .unwrap()
        .unwrap_or_else(|| panic!("{}: no summary", path.display()));
    let messages = mcap::MessageStream::new(&bytes)
        .unwrap()
        .map(|m| {
            let m = m.unwrap();
            (
                m.channel.topic.clone(),
                m.sequence,
                m.log_time,
                m.publish_time,
                m.data.to_vec(),
            )
        })
        .collect();
    let metadata = summary
        .metadata_indexes
        .iter()
        .map(|i| mcap::read::metadata(&bytes, i).unwrap())
        .collect();
    Read {
        summary,
        messages,
        metadata,
    }
}

fn meta() -> Vec<(&'static str, BTreeMap<String, String>)> {
    vec![(
        "thymio-rt",
        BTreeMap::from([("version".to_owned(), "1".to_owned())]),
    )]
}

#[test]
fn one_file_holds_channels_schemas_metadata_and_messages() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("one.mcap");
    let mut rec = Recording::create(&path, RecordLimits::NONE, &meta()).unwrap();
    let a = rec.channel("/a", &json_schema(), "json").unwrap();
    let b = rec
        .channel("/b", &raw("t/Raw"), "thymio-rt/rt-record-v1")
        .unwrap();
    let c = rec.channel("/c", &SchemaDef::default(), "x").unwrap();
    rec.write(a, 10, 5, b"{}").unwrap();
    rec.write(b, 20, 6, &[1, 2, 3]).unwrap();
    rec.write(a, 30, 7, b"{\"x\":1}").unwrap();
    rec.write(c, 40, 8, &[]).unwrap();
    assert_eq!(rec.files(), std::slice::from_ref(&path));
    let s = rec.finish().unwrap();
    assert_eq!(s.files, std::slice::from_ref(&path));
    assert!(s.deleted.is_empty());
    assert_eq!(
        s.messages,
        BTreeMap::from([("/a".into(), 2), ("/b".into(), 1), ("/c".into(), 1)])
    );
    assert_eq!(s.bytes, std::fs::metadata(&path).unwrap().len());

    let r = read(&path);
    assert_eq!(
        r.messages,
        [
            ("/a".into(), 0, 10, 5, b"{}".to_vec()),
            ("/b".into(), 0, 20, 6, vec![1, 2, 3]),
            ("/a".into(), 1, 30, 7, b"{\"x\":1}".to_vec()),
            ("/c".into(), 0, 40, 8, vec![]),
        ]
    );
    let mut channels: Vec<_> = r.summary.channels.values().collect();
    channels.sort_by_key(|c| c.topic.clone());
    let shown: Vec<_> = channels
        .iter()
        .map(|c| {
            let s = c
                .schema
                .as_ref()
                .map(|s| (s.name.clone(), s.encoding.clone(), s.data.to_vec()));
            (c.topic.as_str(), c.message_encoding.as_str(), s)
        })
        .collect();
    assert_eq!(
        shown,
        [
            (
                "/a",
                "json",
                Some((
                    "t/Json".into(),
                    "jsonschema".into(),
                    br#"{"type":"object"}"#.to_vec()
                ))
            ),
            (
                "/b",
                "thymio-rt/rt-record-v1",
                Some(("t/Raw".into(), String::new(), vec![]))
            ),
            ("/c", "x", None),
        ]
    );
    assert_eq!(
        r.metadata,
        [Metadata {
            name: "thymio-rt".into(),
            metadata: meta()[0].1.clone()
        }]
    );
}

/// Writes `n` messages of `len` bytes on two channels, 10 ms of log time apart.
fn fill(rec: &mut Recording, n: u64, len: usize) {
    let a = rec.channel("/a", &raw("t/A"), "bin").unwrap();
    let b = rec.channel("/b", &json_schema(), "json").unwrap();
    for i in 0..n {
        let ch = if i % 3 == 0 { b } else { a };
        let data = vec![i as u8; len];
        rec.write(ch, 1_000_000_000 + i * 10_000_000, i, &data)
            .unwrap();
    }
}

/// Every file closed and readable on its own with every channel and the metadata; the messages, in order, those
/// written.
fn check_files(files: &[PathBuf], first_index: u64, n: u64) -> Vec<Read> {
    let reads: Vec<Read> = files.iter().map(|f| read(f)).collect();
    let mut i = first_index;
    for (f, r) in files.iter().zip(&reads) {
        let mut topics: Vec<_> = r
            .summary
            .channels
            .values()
            .map(|c| c.topic.clone())
            .collect();
        topics.sort();
        assert_eq!(topics, ["/a", "/b"], "{}", f.display());
        assert_eq!(r.summary.schemas.len(), 2, "{}", f.display());
        assert_eq!(r.metadata.len(), 1, "{}", f.display());
        assert!(!r.messages.is_empty(), "{}", f.display());
        let stats = r.summary.stats.as_ref().unwrap();
        assert_eq!(stats.message_count, r.messages.len() as u64);
        for m in &r.messages {
            assert_eq!(m.3, i, "{}", f.display());
            i += 1;
        }
    }
    assert_eq!(i, n);
    reads
}

#[test]
fn rotates_before_a_file_would_exceed_max_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("size.mcap");
    let limits = RecordLimits {
        max_bytes: 16 * 1024,
        ..RecordLimits::NONE
    };
    let mut rec = Recording::create(&path, limits, &meta()).unwrap();
    fill(&mut rec, 2000, 50);
    let s = rec.finish().unwrap();
    assert!(s.files.len() >= 5, "{:?}", s.files);
    for (i, f) in s.files.iter().enumerate() {
        let want = if i == 0 {
            "size.mcap".to_owned()
        } else {
            format!("size_{i:03}.mcap")
        };
        assert_eq!(f, &dir.path().join(want));
        let len = std::fs::metadata(f).unwrap().len();
        assert!(len <= limits.max_bytes, "{}: {len} bytes", f.display());
        // and not far below: the bound is close
        if i + 1 < s.files.len() {
            assert!(
                len > limits.max_bytes * 3 / 4,
                "{}: {len} bytes",
                f.display()
            );
        }
    }
    check_files(&s.files, 0, 2000);
    assert_eq!(s.messages.values().sum::<u64>(), 2000);
    let on_disk: u64 = s
        .files
        .iter()
        .map(|f| std::fs::metadata(f).unwrap().len())
        .sum();
    assert_eq!(s.bytes, on_disk);
}

#[test]
fn a_message_larger_than_max_bytes_gets_a_file_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let limits = RecordLimits {
        max_bytes: 1000,
        ..RecordLimits::NONE
    };
    let mut rec = Recording::create(&dir.path().join("big.mcap"), limits, &[]).unwrap();
    let a = rec.channel("/a", &raw("t/A"), "bin").unwrap();
    for i in 0..3 {
        rec.write(a, i, i, &[7; 2000]).unwrap();
    }
    let s = rec.finish().unwrap();
    assert_eq!(s.files.len(), 3);
    for f in &s.files {
        assert_eq!(read(f).messages.len(), 1);
    }
}

#[test]
fn rotates_when_the_first_message_is_max_duration_old() {
    let dir = tempfile::tempdir().unwrap();
    let limits = RecordLimits {
        max_duration: Duration::from_secs(1),
        ..RecordLimits::NONE
    };
    let mut rec = Recording::create(&dir.path().join("t.mcap"), limits, &meta()).unwrap();
    // 10 ms apart from 1 s: 4.5 s of messages
    fill(&mut rec, 450, 10);
    let s = rec.finish().unwrap();
    assert_eq!(s.files.len(), 5, "{:?}", s.files);
    let reads = check_files(&s.files, 0, 450);
    for (k, r) in reads.iter().enumerate() {
        let first = r.messages.first().unwrap().2;
        let last = r.messages.last().unwrap().2;
        assert_eq!(first, 1_000_000_000 * (k as u64 + 1), "file {k}");
        assert!(last - first < 1_000_000_000, "file {k}");
    }
}

#[test]
fn keeps_the_last_keep_files() {
    let dir = tempfile::tempdir().unwrap();
    let limits = RecordLimits {
        max_duration: Duration::from_secs(1),
        keep_files: 2,
        ..RecordLimits::NONE
    };
    let mut rec = Recording::create(&dir.path().join("k.mcap"), limits, &meta()).unwrap();
    fill(&mut rec, 450, 10);
    let kept = [dir.path().join("k_003.mcap"), dir.path().join("k_004.mcap")];
    assert_eq!(rec.files(), kept);
    let s = rec.finish().unwrap();
    assert_eq!(s.files, kept);
    let deleted: Vec<_> = ["k.mcap", "k_001.mcap", "k_002.mcap"]
        .iter()
        .map(|n| dir.path().join(n))
        .collect();
    assert_eq!(s.deleted, deleted);
    for d in &deleted {
        assert!(!d.exists(), "{}", d.display());
    }
    // the last two seconds and a half
    check_files(&s.files, 300, 450);
    assert_eq!(s.messages.values().sum::<u64>(), 450);
}

#[test]
fn a_full_disk_stops_the_recording_with_the_error_and_the_path() {
    let mut rec = Recording::create(Path::new("/dev/full"), RecordLimits::NONE, &meta()).unwrap();
    let a = rec.channel("/a", &raw("t/A"), "bin").unwrap();
    let first = (0..100_000u64)
        .find_map(|i| rec.write(a, i * 1_000_000, i, &[0; 1024]).err())
        .expect("/dev/full refuses writes");
    let RecordError::Io {
        ref path,
        source: ref io,
        ..
    } = first
    else {
        panic!("{first:?}")
    };
    assert_eq!(path, Path::new("/dev/full"));
    assert_eq!(io.kind(), ErrorKind::StorageFull, "{first}");
    let shown = first.to_string();
    assert!(
        shown.contains("\"/dev/full\"") && shown.contains("No space left on device"),
        "{shown}"
    );
    // stopped: every later call says why, without writing
    for _ in 0..3 {
        let e = rec.write(a, 0, 0, &[1]).unwrap_err();
        assert!(matches!(e, RecordError::Stopped { .. }), "{e:?}");
        assert!(e.to_string().contains("No space left on device"), "{e}");
    }
    assert!(matches!(
        rec.channel("/b", &raw("t/B"), "bin"),
        Err(RecordError::Stopped { .. })
    ));
    assert_eq!(rec.stopped_by().map(|e| e.to_string()), Some(shown.clone()));
    let end = rec.finish().unwrap_err();
    assert!(
        matches!(end, RecordError::Stopped { .. }) && end.to_string().contains(&shown),
        "{end}"
    );
}

#[test]
fn unwritable_places_fail_at_create_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no/such/dir/r.mcap");
    let e = Recording::create(&missing, RecordLimits::NONE, &[])
        .err()
        .unwrap();
    assert!(
        matches!(&e, RecordError::Create { path, source } if path == &missing && source.kind() == ErrorKind::NotFound),
        "{e:?}"
    );
    assert!(e.to_string().contains("no/such/dir/r.mcap"), "{e}");

    let file = dir.path().join("plain");
    std::fs::write(&file, b"").unwrap();
    let e = Recording::create(&file.join("r.mcap"), RecordLimits::NONE, &[])
        .err()
        .unwrap();
    assert!(
        matches!(&e, RecordError::Create { source, .. } if source.kind() == ErrorKind::NotADirectory),
        "{e:?}"
    );

    // sysfs refuses new files even to root
    if Path::new("/sys/kernel").is_dir() {
        let e = Recording::create(Path::new("/sys/r.mcap"), RecordLimits::NONE, &[])
            .err()
            .unwrap();
        assert!(
            matches!(&e, RecordError::Create { source, .. } if source.kind() == ErrorKind::PermissionDenied),
            "{e:?}"
        );
        assert!(e.to_string().contains("/sys/r.mcap"), "{e}");
    }
    let e = Recording::create(Path::new("/"), RecordLimits::NONE, &[])
        .err()
        .unwrap();
    assert!(matches!(e, RecordError::BadPath { .. }), "{e:?}");
}

#[test]
fn never_overwrites_a_recording() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.mcap");
    Recording::create(&path, RecordLimits::NONE, &[])
        .unwrap()
        .finish()
        .unwrap();
    let before = std::fs::read(&path).unwrap();
    let e = Recording::create(&path, RecordLimits::NONE, &[])
        .err()
        .unwrap();
    assert!(
        matches!(&e, RecordError::Exists { existing, .. } if existing == &path),
        "{e:?}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn bad_channels_and_keys_are_refused_and_the_recording_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let mut rec = Recording::create(&dir.path().join("c.mcap"), RecordLimits::NONE, &[]).unwrap();
    let mut other = Recording::create(&dir.path().join("o.mcap"), RecordLimits::NONE, &[]).unwrap();
    let a = rec.channel("/a", &raw("t/A"), "bin").unwrap();
    let cases: [(&str, SchemaDef, &str, &str); 4] = [
        ("", raw("t/A"), "bin", "empty topic"),
        ("/b", raw("t/A"), "", "empty message encoding"),
        (
            "/b",
            SchemaDef {
                data: vec![1],
                ..raw("t/A")
            },
            "bin",
            "has data but no encoding",
        ),
        ("/a", raw("t/A"), "bin", "registered already"),
    ];
    for (topic, schema, enc, want) in cases {
        let e = rec.channel(topic, &schema, enc).unwrap_err();
        assert!(
            matches!(e, RecordError::BadChannel { .. }) && e.to_string().contains(want),
            "{e}"
        );
    }
    other.channel("/x", &raw("t/X"), "bin").unwrap();
    let foreign = other.channel("/y", &raw("t/Y"), "bin").unwrap();
    let e = rec.write(foreign, 0, 0, &[]).unwrap_err();
    assert!(matches!(e, RecordError::UnknownChannel(_)), "{e:?}");
    rec.write(a, 1, 1, &[1]).unwrap();
    assert_eq!(rec.finish().unwrap().messages["/a"], 1);
    other.finish().unwrap();
}

#[test]
fn a_rotation_that_cannot_create_its_file_stops_the_recording() {
    let top = tempfile::tempdir().unwrap();
    let dir = top.path().join("gone");
    std::fs::create_dir(&dir).unwrap();
    let limits = RecordLimits {
        max_duration: Duration::from_secs(1),
        ..RecordLimits::NONE
    };
    let mut rec = Recording::create(&dir.join("r.mcap"), limits, &[]).unwrap();
    let a = rec.channel("/a", &raw("t/A"), "bin").unwrap();
    rec.write(a, 0, 0, &[1]).unwrap();
    // the directory goes away under the recording: the next file cannot be created
    std::fs::remove_dir_all(&dir).unwrap();
    let e = rec.write(a, 1_000_000_000, 1, &[2]).unwrap_err();
    let want = dir.join("r_001.mcap");
    assert!(
        matches!(&e, RecordError::Create { path, source } if path == &want && source.kind() == ErrorKind::NotFound),
        "{e:?}"
    );
    assert!(matches!(
        rec.write(a, 1_000_000_001, 2, &[3]),
        Err(RecordError::Stopped { .. })
    ));
    assert!(matches!(rec.finish(), Err(RecordError::Stopped { .. })));
}

#[test]
fn a_recording_moves_to_another_thread() {
    fn send<T: Send>() {}
    send::<Recording>();
    send::<RecordError>();
}

#[test]
fn the_size_bound_holds_for_many_channels_and_sizes() {
    let dir = tempfile::tempdir().unwrap();
    for (run, max_bytes) in [3_000u64, 5_000, 9_001, 40_000].into_iter().enumerate() {
        let limits = RecordLimits {
            max_bytes,
            ..RecordLimits::NONE
        };
        let path = dir.path().join(format!("m{run}.mcap"));
        let two = [meta()[0].clone(), ("other", BTreeMap::new())];
        let mut rec = Recording::create(&path, limits, &two).unwrap();
        let keys: Vec<_> = (0..7)
            .map(|c| {
                rec.channel(&format!("/topic/{c}"), &json_schema(), "json")
                    .unwrap()
            })
            .collect();
        let mut x = 12345u64;
        for i in 0..1500u64 {
            // a cheap deterministic spread of sizes and channels
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = (x >> 33) as usize % 300;
            rec.write(keys[(x >> 20) as usize % 7], i * 1000, i, &vec![1; len])
                .unwrap();
        }
        let s = rec.finish().unwrap();
        assert!(s.files.len() > 2, "{max_bytes}: {:?}", s.files);
        let mut total = 0;
        for f in &s.files {
            let len = std::fs::metadata(f).unwrap().len();
            assert!(len <= max_bytes, "{}: {len} > {max_bytes}", f.display());
            let r = read(f);
            assert_eq!(r.metadata.len(), 2);
            assert_eq!(r.summary.channels.len(), 7);
            total += r.messages.len();
        }
        assert_eq!(total, 1500);
    }
}

#[test]
fn flush_puts_the_messages_on_disk_before_the_file_is_closed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.mcap");
    let mut rec = Recording::create(&path, RecordLimits::NONE, &[]).unwrap();
    let a = rec.channel("/a", &raw("t/A"), "bin").unwrap();
    rec.write(a, 1, 1, &[1]).unwrap();
    rec.write(a, 2, 2, &[2]).unwrap();
    let on_disk = |path: &Path| {
        let bytes = std::fs::read(path).unwrap();
        // no summary yet: read on until the end of what is there
        mcap::MessageStream::new(&bytes)
            .unwrap()
            .map_while(Result::ok)
            .map(|m| m.data.to_vec())
            .collect::<Vec<_>>()
    };
    assert!(on_disk(&path).is_empty(), "buffered until a chunk closes");
    rec.flush().unwrap();
    assert_eq!(on_disk(&path), [[1], [2]]);
    rec.write(a, 3, 3, &[3]).unwrap();
    rec.finish().unwrap();
    assert_eq!(read(&path).messages.len(), 3);
    // a flush that fails stops the recording
    let mut full = Recording::create(Path::new("/dev/full"), RecordLimits::NONE, &[]).unwrap();
    let a = full.channel("/a", &raw("t/A"), "bin").unwrap();
    full.write(a, 1, 1, &[1]).unwrap();
    let e = full.flush().unwrap_err();
    assert!(
        matches!(&e, RecordError::Io { source, .. } if source.kind() == ErrorKind::StorageFull),
        "{e:?}"
    );
    assert!(matches!(
        full.write(a, 2, 2, &[2]),
        Err(RecordError::Stopped { .. })
    ));
}

#[test]
fn a_device_whose_position_is_always_0_is_written_to() {
    // `run --record` to a link to /dev/null (allowed, as a link to /dev/full is): lseek there always gives 0,
    // which made the seeking chunk writer's check of its position panic at the first chunk and abort the driver
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("null.mcap");
    std::os::unix::fs::symlink("/dev/null", &link).unwrap();
    let mut rec = Recording::create(&link, RecordLimits::NONE, &meta()).unwrap();
    let a = rec.channel("/a", &raw("t/A"), "bin").unwrap();
    for i in 0..5u64 {
        // each message older than CHUNK_MAX_AGE after the last: a chunk each, and flushed
        rec.write(a, i * 2_000_000_000, i, &[7; 300]).unwrap();
        rec.flush().unwrap();
    }
    let s = rec.finish().unwrap();
    assert_eq!(s.messages["/a"], 5);
    assert_eq!(s.cut, None);
}

#[test]
fn a_failed_recording_accounts_for_what_reached_the_disk() {
    // /dev/full takes nothing: nothing is counted as written, and the file is named as left without a summary
    let mut rec = Recording::create(Path::new("/dev/full"), RecordLimits::NONE, &[]).unwrap();
    let a = rec.channel("/a", &raw("t/A"), "bin").unwrap();
    rec.write(a, 1, 1, &[1]).unwrap();
    assert!(rec.flush().is_err());
    let (s, r) = rec.finish_with_account();
    assert!(matches!(r, Err(RecordError::Stopped { .. })), "{r:?}");
    assert_eq!(s.messages["/a"], 0);
    assert_eq!(s.cut.as_deref(), Some(Path::new("/dev/full")));
    assert_eq!(s.files, [PathBuf::from("/dev/full")]);
}
