//! The lines a ROS user reads: why a request was refused, a link lost, a script failed. Each goes once to the console
//! (through `tracing`) and to every front end's `/rosout` ([`LogSink`]), so that ROS 1 and ROS 2 users read the same
//! lines (the asebaros services have no error field: `/rosout` is how a client learns why).

use std::borrow::Cow;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::SystemTime;

/// Characters of an untrusted string (a peer's caller id, topic, path, header) kept by [`clip`].
pub const CLIP_CHARS: usize = 200;
/// Characters of a reported line kept by [`Reporter::report`] (a backstop: the strings in it are [`clip`]ped).
pub const LINE_CHARS: usize = 2000;

/// `s` cut to [`CLIP_CHARS`] characters, then `…(N bytes)` (N its whole length) when longer: what a log line or
/// `/rosout` may echo of a string a peer sent.
pub fn clip(s: &str) -> Cow<'_, str> {
    clip_to(s, CLIP_CHARS)
}

/// `s` cut to `chars` characters, then `…(N bytes)` when longer.
pub fn clip_to(s: &str, chars: usize) -> Cow<'_, str> {
    match s.char_indices().nth(chars) {
        None => Cow::Borrowed(s),
        Some((at, _)) => Cow::Owned(format!("{}…({} bytes)", &s[..at], s.len())),
    }
}

/// Severity of a line (the levels of `rcl_interfaces/msg/Log` and `rosgraph_msgs/Log`, mapped by each front end).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Details.
    Debug,
    /// What happened.
    Info,
    /// Something refused or degraded.
    Warn,
    /// Something that does not work.
    Error,
}

/// A front end's `/rosout`: publishes one line (never waits; a failed publish is not reported again).
pub trait LogSink: Send + Sync {
    /// Publishes `text` of `severity`, logged by `logger` (the node's logger name) at `stamp`.
    fn log(&self, severity: Severity, logger: &str, text: &str, stamp: SystemTime);
}

/// Reports on behalf of the driver (cheap to clone; every clone reaches the sinks added to any of them).
#[derive(Clone)]
pub struct Reporter {
    logger: Arc<str>,
    sinks: Arc<Mutex<Vec<Arc<dyn LogSink>>>>,
}

impl Reporter {
    /// A reporter for the logger `logger` (the bridge node's logger name), with no `/rosout` yet.
    pub fn new(logger: &str) -> Reporter {
        Reporter {
            logger: logger.into(),
            sinks: Arc::default(),
        }
    }

    fn sinks(&self) -> MutexGuard<'_, Vec<Arc<dyn LogSink>>> {
        // a sink that panicked left the list whole
        self.sinks.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a front end's `/rosout`.
    pub fn add_sink(&self, sink: Arc<dyn LogSink>) {
        self.sinks().push(sink);
    }

    /// The logger name.
    pub fn logger(&self) -> &str {
        &self.logger
    }

    /// Logs `text` with `severity` on the console and on every `/rosout` (cut to [`LINE_CHARS`] characters).
    pub fn report(&self, severity: Severity, text: &str) {
        let text = &*clip_to(text, LINE_CHARS);
        match severity {
            Severity::Debug => tracing::debug!("{}: {text}", self.logger),
            Severity::Info => tracing::info!("{}: {text}", self.logger),
            Severity::Warn => tracing::warn!("{}: {text}", self.logger),
            Severity::Error => tracing::error!("{}: {text}", self.logger),
        }
        let stamp = SystemTime::now();
        let sinks: Vec<_> = self.sinks().clone();
        for s in sinks {
            s.log(severity, &self.logger, text, stamp);
        }
    }

    /// [`Self::report`] at error level.
    pub fn error(&self, text: &str) {
        self.report(Severity::Error, text);
    }

    /// [`Self::report`] at warning level.
    pub fn warn(&self, text: &str) {
        self.report(Severity::Warn, text);
    }

    /// [`Self::report`] at info level.
    pub fn info(&self, text: &str) {
        self.report(Severity::Info, text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Lines(Mutex<Vec<(Severity, String, String)>>);

    impl LogSink for Lines {
        fn log(&self, severity: Severity, logger: &str, text: &str, _: SystemTime) {
            self.0
                .lock()
                .unwrap()
                .push((severity, logger.into(), text.into()));
        }
    }

    #[test]
    fn every_sink_gets_every_line_from_every_clone() {
        let r = Reporter::new("asebaros");
        let (a, b) = (Arc::new(Lines::default()), Arc::new(Lines::default()));
        r.add_sink(a.clone());
        let clone = r.clone();
        clone.add_sink(b.clone());
        clone.warn("lost target 0");
        r.error("no script");
        for s in [&a, &b] {
            let lines = s.0.lock().unwrap();
            assert_eq!(lines.len(), 2);
            assert_eq!(
                lines[0],
                (Severity::Warn, "asebaros".into(), "lost target 0".into())
            );
            assert_eq!(lines[1].0, Severity::Error);
        }
    }

    #[test]
    fn untrusted_strings_and_lines_are_cut_with_their_length() {
        assert_eq!(clip("/cmd_vel"), "/cmd_vel");
        let long = "é".repeat(4 << 20);
        let c = clip(&long);
        assert!(c.starts_with(&"é".repeat(CLIP_CHARS)), "{}", &c[..50]);
        assert!(
            c.ends_with(&format!("…({} bytes)", 8 << 20)),
            "{}",
            &c[c.len() - 40..]
        );
        assert!(c.chars().count() < CLIP_CHARS + 30);
        assert_eq!(clip_to("abcd", 4), "abcd");
        assert_eq!(clip_to("abcde", 4), "abcd…(5 bytes)");
        let r = Reporter::new("asebaros");
        let sink = Arc::new(Lines::default());
        r.add_sink(sink.clone());
        r.error(&format!("cannot read {}", "x".repeat(4 << 20)));
        let lines = sink.0.lock().unwrap();
        assert!(lines[0].2.chars().count() < LINE_CHARS + 30);
        assert!(lines[0]
            .2
            .ends_with(&format!("…({} bytes)", 12 + (4 << 20))));
    }
}
