//! Another driver on our names: two drivers started with the same defaults on one ROS network (one robot each, no
//! namespace) both serve `/cmd_vel`, so a command meant for one robot moves both. Each front end looks at its graph
//! every [`CHECK_PERIOD`] (ROS 2: the publishers of each robot's `odom`; ROS 1: the master's publishers of it) and
//! hands what it saw to a [`RivalWatch`], which says when a conflict starts and ends (to be logged loudly, on the
//! console and on `/rosout`) and gives the `/diagnostics` status (ERROR while a conflict lasts).
//!
//! ```
//! use nrt_engine::rivals::{RivalWatch, Change};
//!
//! let mut w = RivalWatch::default();
//! // our own publisher of /odom and one of another node's
//! let c = w.observe("/odom", 1, &["/asebaros".into(), "/asebaros".into()]);
//! assert!(matches!(c, Some(Change::Started { .. })));
//! assert_eq!(w.status("asebaros").level, nrt_engine::diagnostics::ERROR);
//! assert!(matches!(w.observe("/odom", 1, &["/asebaros".into()]), Some(Change::Ended { .. })));
//! ```

use crate::diagnostics::{kv, DiagnosticStatus, ERROR, OK};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// How often a front end looks at its graph for rivals (the issue asks for "within seconds").
pub const CHECK_PERIOD: Duration = Duration::from_secs(2);

/// What changed for one topic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Someone else publishes `topic` too.
    Started {
        /// The topic (fully qualified).
        topic: String,
        /// Every publisher's node, ours included (a rival started with our defaults has our node's name).
        publishers: Vec<String>,
    },
    /// We are again the only publisher of `topic`.
    Ended {
        /// The topic.
        topic: String,
    },
    /// Another node registered our node's name (ROS 1: the master now sends our name's callers to `uri`).
    NameTaken {
        /// Our node's name.
        name: String,
        /// Where the master says that name is served now.
        uri: String,
    },
    /// The master knows our node's name at our address again.
    NameBack {
        /// Our node's name.
        name: String,
    },
}

impl Change {
    /// The line to log (an error when a conflict starts, an info when it ends).
    pub fn message(&self) -> String {
        match self {
            Change::Started { topic, publishers } => format!(
                "another driver publishes {topic}: {} publishers (nodes {}), of which this driver owns one; \
                 a command on the same names moves both robots. Give each driver its own namespace \
                 (--ros-args -r __ns:=/robot1, or nodes.<name>.namespace in the configuration; ROS 1: \
                 ROS_NAMESPACE) or a ROS_DOMAIN_ID of its own",
                publishers.len(),
                publishers.join(", ")
            ),
            Change::Ended { topic } => format!("this driver is again the only publisher of {topic}"),
            Change::NameTaken { name, uri } => format!(
                "another node registered this driver's name {name} (now at {uri}): the master no longer routes \
                 its topics and services here. Give each driver its own name or namespace (ROS_NAMESPACE, \
                 ros1.node_name)"
            ),
            Change::NameBack { name } => format!("the master knows {name} at this driver again"),
        }
    }
}

/// The conflicts in force, per topic.
#[derive(Debug, Default)]
pub struct RivalWatch {
    last: Option<Instant>,
    conflicts: BTreeMap<String, Vec<String>>,
    /// Our name and who holds it instead, while another node does.
    name_taken: Option<(String, String)>,
}

impl RivalWatch {
    /// Whether the graph should be looked at now (every [`CHECK_PERIOD`]); records `now` when it is.
    pub fn due(&mut self, now: Instant) -> bool {
        let due = self
            .last
            .is_none_or(|t| now.duration_since(t) >= CHECK_PERIOD);
        if due {
            self.last = Some(now);
        }
        due
    }

    /// Records the publishers (node names) seen on `topic`, `ours` of which are this driver's; returns the change
    /// to report, if any.
    pub fn observe(&mut self, topic: &str, ours: usize, publishers: &[String]) -> Option<Change> {
        if publishers.len() > ours {
            let mut names = publishers.to_vec();
            names.sort();
            let changed = self.conflicts.get(topic) != Some(&names);
            self.conflicts.insert(topic.to_owned(), names.clone());
            changed.then(|| Change::Started {
                topic: topic.to_owned(),
                publishers: names,
            })
        } else {
            self.conflicts.remove(topic).map(|_| Change::Ended {
                topic: topic.to_owned(),
            })
        }
    }

    /// Records who the master says holds our node's name `name`: `None` or our own address is us.
    pub fn observe_name(&mut self, name: &str, other_uri: Option<&str>) -> Option<Change> {
        match other_uri {
            Some(uri) => {
                let now = Some((name.to_owned(), uri.to_owned()));
                let changed = self.name_taken != now;
                self.name_taken = now;
                changed.then(|| Change::NameTaken {
                    name: name.to_owned(),
                    uri: uri.to_owned(),
                })
            }
            None => self
                .name_taken
                .take()
                .map(|(name, _)| Change::NameBack { name }),
        }
    }

    /// Forgets every topic but `kept` (the others' robots are gone).
    pub fn keep_only(&mut self, kept: &[String]) {
        self.conflicts.retain(|t, _| kept.contains(t));
    }

    /// Whether a conflict is in force.
    pub fn any(&self) -> bool {
        !self.conflicts.is_empty() || self.name_taken.is_some()
    }

    /// The `/diagnostics` status `<prefix>: Name conflicts`: ERROR while another driver publishes one of our topics.
    pub fn status(&self, prefix: &str) -> DiagnosticStatus {
        let (level, message) = if let Some((name, uri)) = &self.name_taken {
            (
                ERROR,
                format!("another node registered this driver's name {name} (at {uri})"),
            )
        } else if self.conflicts.is_empty() {
            (OK, "no other driver on this driver's names".to_owned())
        } else {
            (
                ERROR,
                format!(
                    "another driver publishes {}: give each driver its own namespace or ROS_DOMAIN_ID",
                    self.conflicts
                        .keys()
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
        };
        DiagnosticStatus {
            level,
            name: format!("{prefix}: Name conflicts"),
            message,
            hardware_id: String::new(),
            values: self
                .conflicts
                .iter()
                .map(|(t, p)| kv(t, p.join(", ")))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_conflict_is_reported_once_when_it_starts_and_once_when_it_ends() {
        let mut w = RivalWatch::default();
        assert_eq!(w.observe("/odom", 1, &names(&["/asebaros"])), None);
        assert_eq!(w.status("asebaros").level, OK);
        let started = w.observe("/odom", 1, &names(&["/asebaros", "/other"]));
        assert_eq!(
            started,
            Some(Change::Started {
                topic: "/odom".into(),
                publishers: names(&["/asebaros", "/other"])
            })
        );
        assert!(started.unwrap().message().contains("/other"));
        // the same rival again: nothing new to say
        assert_eq!(
            w.observe("/odom", 1, &names(&["/other", "/asebaros"])),
            None
        );
        let s = w.status("asebaros");
        assert_eq!(
            (s.level, s.name.as_str()),
            (ERROR, "asebaros: Name conflicts")
        );
        assert_eq!(s.values[0].value, "/asebaros, /other");
        // a third publisher is news
        assert!(w
            .observe("/odom", 1, &names(&["/asebaros", "/other", "/third"]))
            .is_some());
        assert_eq!(
            w.observe("/odom", 1, &names(&["/asebaros"])),
            Some(Change::Ended {
                topic: "/odom".into()
            })
        );
        assert!(!w.any());
    }

    #[test]
    fn our_own_publishers_are_no_rivals() {
        let mut w = RivalWatch::default();
        // two front ends of ours on one graph would each count as ours
        assert_eq!(w.observe("/odom", 2, &names(&["/a", "/a"])), None);
        assert!(!w.any());
    }

    #[test]
    fn checks_are_spaced_by_the_period() {
        let mut w = RivalWatch::default();
        let t0 = Instant::now();
        assert!(w.due(t0));
        assert!(!w.due(t0 + CHECK_PERIOD / 2));
        assert!(w.due(t0 + CHECK_PERIOD));
    }

    #[test]
    fn a_taken_name_is_reported_until_the_master_knows_us_again() {
        let mut w = RivalWatch::default();
        assert_eq!(w.observe_name("/asebaros", None), None);
        let taken = w.observe_name("/asebaros", Some("http://10.0.0.2:4000/"));
        assert!(taken.unwrap().message().contains("http://10.0.0.2:4000/"));
        assert_eq!(
            w.observe_name("/asebaros", Some("http://10.0.0.2:4000/")),
            None
        );
        assert_eq!(w.status("asebaros").level, ERROR);
        assert_eq!(
            w.observe_name("/asebaros", None),
            Some(Change::NameBack {
                name: "/asebaros".into()
            })
        );
        assert_eq!(w.status("asebaros").level, OK);
    }

    #[test]
    fn a_forgotten_topic_leaves_no_conflict() {
        let mut w = RivalWatch::default();
        w.observe("/r1/odom", 1, &names(&["/a", "/b"]));
        w.keep_only(&names(&["/r2/odom"]));
        assert!(!w.any());
    }
}
