//! The documentation cannot point nowhere or overstate what a file holds (issue 43 item 1, issue 42 item 5): every
//! relative link of README.md and docs/*.md names a file or directory that exists, every `#anchor` names a heading
//! of the target page (GitHub's slug), and the compiler counts the docs give are the corpus's
//! (tests/compiler/expected.json). Included by tests/project/scripts_env.rs (no test binary of its own).

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

/// The repository's root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// GitHub's anchor of a heading's text: lower case, every character that is not a letter, a digit, `_`, `-` or a
/// space dropped (backticks, punctuation, emphasis), spaces turned into `-`; a link keeps its text only.
pub fn slug(heading: &str) -> String {
    let text = link_texts(heading);
    text.trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// `[text](target)` → `text`.
fn link_texts(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find("](").and_then(|close| {
            let target = &after[close + 2..];
            target.find(')').map(|end| (close, close + 2 + end + 1))
        }) {
            Some((close, next)) => {
                out.push_str(&after[..close]);
                rest = &after[next..];
            }
            None => {
                out.push('[');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The lines of `markdown` outside fenced code blocks, numbered from 1.
fn prose_lines(markdown: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut fenced = false;
    markdown.lines().enumerate().filter_map(move |(i, line)| {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            return None;
        }
        (!fenced).then_some((i + 1, line))
    })
}

/// The anchors of `markdown`'s headings, as GitHub makes them (a repeated slug gets `-1`, `-2`, …).
pub fn anchors(markdown: &str) -> Vec<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::new();
    for (_, line) in prose_lines(markdown) {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let text = line[hashes..].trim().trim_end_matches('#').trim_end();
        let s = slug(text);
        let n = seen.entry(s.clone()).or_insert(0);
        out.push(if *n == 0 { s } else { format!("{s}-{n}") });
        *n += 1;
    }
    out
}

/// `line` without its inline code spans (a link written in backticks is an example, not a link).
fn without_code(line: &str) -> String {
    line.split('`').step_by(2).collect::<Vec<_>>().join(" ")
}

/// The link targets of `markdown` (`[text](target)`, images too), with their line numbers; code is skipped.
pub fn links(markdown: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in prose_lines(markdown) {
        let line = without_code(line);
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            let target = &rest[at + 2..];
            let end = target
                .find(|c: char| c == ')' || c.is_whitespace())
                .unwrap_or(target.len());
            out.push((n, target[..end].to_owned()));
            rest = &target[end..];
        }
    }
    out
}

/// Whether `target` leaves the repository's files (`https:`, `mailto:`, …).
fn is_external(target: &str) -> bool {
    let scheme = target.split([':', '/', '#']).next().unwrap_or("");
    target.len() > scheme.len()
        && target[scheme.len()..].starts_with(':')
        && !scheme.is_empty()
        && scheme.chars().all(|c| c.is_ascii_alphabetic())
}

/// `dir/target` with `.` and `..` resolved lexically (the checked files are the repository's, no symbolic links).
fn join(dir: &Path, target: &str) -> PathBuf {
    let mut out = dir.to_path_buf();
    for c in Path::new(target).components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The broken links of the markdown file `file`, one line each (`file:line: target: why`). `exists` says whether a
/// path is a file or directory, `read` gives a markdown file's text (in-memory pages in the unit tests).
pub fn broken_links(
    file: &Path,
    exists: &dyn Fn(&Path) -> bool,
    read: &dyn Fn(&Path) -> Option<String>,
) -> Vec<String> {
    let Some(text) = read(file) else {
        return vec![format!("{}: cannot be read", file.display())];
    };
    let dir = file.parent().unwrap_or(Path::new(""));
    let mut bad = Vec::new();
    for (n, target) in links(&text) {
        if is_external(&target) {
            continue;
        }
        let (path, anchor) = match target.split_once('#') {
            Some((p, a)) => (p, Some(a)),
            None => (target.as_str(), None),
        };
        let dest = if path.is_empty() {
            file.to_path_buf()
        } else {
            join(dir, path)
        };
        let why = if !path.is_empty() && !exists(&dest) {
            Some(format!("{} does not exist", dest.display()))
        } else if let Some(anchor) = anchor.filter(|_| dest.extension().is_some_and(|e| e == "md"))
        {
            match read(&dest) {
                Some(page) if anchors(&page).iter().any(|a| a == anchor) => None,
                Some(_) => Some(format!(
                    "no heading of {} has the anchor #{anchor}",
                    dest.display()
                )),
                None => Some(format!("{} cannot be read", dest.display())),
            }
        } else {
            None
        };
        if let Some(why) = why {
            bad.push(format!("{}:{n}: {target}: {why}", file.display()));
        }
    }
    bad
}

/// README.md and every page of docs/.
fn documentation() -> Vec<PathBuf> {
    let mut files = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/ exists")
        .map(|e| e.expect("docs/ lists").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

#[test]
fn every_relative_link_and_anchor_of_the_readme_and_docs_resolves() {
    let files = documentation();
    assert!(files.len() > 5, "the docs are missing: {files:?}");
    let mut bad = Vec::new();
    let mut checked = 0;
    for file in &files {
        checked += links(&std::fs::read_to_string(file).unwrap()).len();
        bad.extend(broken_links(file, &|p| p.exists(), &|p| {
            std::fs::read_to_string(p).ok()
        }));
    }
    assert!(
        checked > 50,
        "only {checked} links found: the parser is broken"
    );
    assert!(bad.is_empty(), "broken links:\n{}", bad.join("\n"));
}

#[test]
fn slugs_are_githubs() {
    assert_eq!(
        slug("Flight recorder: record, replay, check"),
        "flight-recorder-record-replay-check"
    );
    assert_eq!(
        slug("Goal actions: `drive_distance`, `rotate_angle`"),
        "goal-actions-drive_distance-rotate_angle"
    );
    assert_eq!(
        slug("Odometry for Nav2 (diff_drive_controller's parameters)"),
        "odometry-for-nav2-diff_drive_controllers-parameters"
    );
    assert_eq!(
        slug("ROS 2 across hosts: which [hosts](x.md) reach"),
        "ros-2-across-hosts-which-hosts-reach"
    );
    assert_eq!(
        anchors("# A\n```\n# not a heading\n```\n## A\n#nope\n### B ##\n"),
        ["a", "a-1", "b"]
    );
}

#[test]
fn the_checker_finds_a_missing_file_a_missing_anchor_and_passes_good_links() {
    let pages: HashMap<PathBuf, &str> = [
        (
            "r/README.md",
            "# Top\nsee [b](docs/b.md#real-one), [c](docs/c.md), [d](docs/b.md#gone),\n\
             [e](#top), [f](#nowhere), [g](https://example.org/x#y), `[h](missing.md)`\n\
             ```\n[i](missing-too.md)\n```\n[j](dir/)\n",
        ),
        (
            "r/docs/b.md",
            "# B\n## Real one\nback to [the readme](../README.md#top)\n",
        ),
        ("r/dir", ""),
    ]
    .into_iter()
    .map(|(p, t)| (PathBuf::from(p), t))
    .collect();
    let exists = |p: &Path| pages.contains_key(p);
    let read = |p: &Path| pages.get(p).map(|t| t.to_string());
    let bad = broken_links(Path::new("r/README.md"), &exists, &read);
    assert_eq!(bad.len(), 3, "{bad:#?}");
    assert!(bad[0].starts_with("r/README.md:2: docs/c.md: ") && bad[0].ends_with("does not exist"));
    assert!(bad[1].contains("docs/b.md#gone: no heading of r/docs/b.md has the anchor #gone"));
    assert!(bad[2].starts_with("r/README.md:3: #nowhere: no heading"));
    assert!(broken_links(Path::new("r/docs/b.md"), &exists, &read).is_empty());
}

/// The conformance counts as the docs state them: the compiler corpus's "N programs (C compiling, … F failing)"
/// and the VM's "S scenarios" (tests/vm/scenarios.json).
#[test]
fn the_compiler_counts_in_the_docs_are_the_corpus_counts() {
    let expected: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("tests/compiler/expected.json")).unwrap(),
    )
    .unwrap();
    let programs = expected["programs"].as_object().expect("programs");
    let compiling = programs
        .values()
        .filter(|p| p.get("bytecode").is_some())
        .count();
    let failing = programs
        .values()
        .filter(|p| p.get("error").is_some())
        .count();
    let page = std::fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let claim = format!("{} programs ({compiling} compiling", programs.len());
    assert!(
        page.contains(&claim),
        "docs/architecture.md does not say {claim:?}"
    );
    assert!(
        page.contains(&format!("{failing} failing")),
        "docs/architecture.md does not say \"{failing} failing\""
    );
    let scenarios: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("tests/vm/scenarios.json")).unwrap(),
    )
    .unwrap();
    let claim = format!(
        "{} scenarios",
        scenarios.as_array().expect("scenarios").len()
    );
    assert!(
        page.contains(&claim),
        "docs/architecture.md does not say {claim:?}"
    );
}
