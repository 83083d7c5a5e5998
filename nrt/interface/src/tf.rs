//! `/tf_static`: the fixed sensor and body frames of every robot whose model is published, in ONE latched message
//! (a latched topic keeps the last message only, so each robot's frames are merged into it), with the bookkeeping
//! of robots coming and going.

use crate::frames::Frames;
use crate::geometry::{Header, Stamp, Transform};
use nrt_engine::thymio::model;

/// The static transforms of a robot's sensor and body frames (children of its `base_link`).
pub fn static_transforms(stamp: Stamp, f: &Frames) -> Vec<Transform> {
    model::FIXED_FRAMES
        .iter()
        .map(|fr| Transform {
            header: Header::new(stamp, f.link(fr.parent)),
            child_frame_id: f.link(fr.name),
            translation: fr.xyz,
            rotation: model::quaternion(fr.rpy),
        })
        .collect()
}

/// The one `/tf_static` message of a front end: every robot's frames.
#[derive(Debug, Clone, Default)]
pub struct StaticFrames {
    transforms: Vec<Transform>,
}

impl StaticFrames {
    /// Puts `own` in place of the frames under `prefix` (none are taken out for an empty prefix); the whole
    /// message when it changed (to publish), `None` when it did not.
    pub fn replace(&mut self, prefix: &str, own: Vec<Transform>) -> Option<&[Transform]> {
        let before = self.transforms.len();
        if !prefix.is_empty() {
            let mine = format!("{prefix}/");
            self.transforms
                .retain(|t| !t.child_frame_id.starts_with(&mine));
        }
        if own.is_empty() && self.transforms.len() == before {
            return None;
        }
        self.transforms.extend(own);
        Some(&self.transforms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(prefix: &str) -> Frames {
        Frames::new(prefix, "odom", "base_link", ["l", "r"])
    }

    #[test]
    fn sensor_frames_hang_under_the_prefixed_base() {
        let t = static_transforms(Stamp::from_secs(3), &frames("t1"));
        assert_eq!(t.len(), model::FIXED_FRAMES.len());
        assert!(t.iter().all(|t| t.header.frame_id == "t1/base_link"));
        assert!(t.iter().any(|t| t.child_frame_id == "t1/laser_link"));
        assert!(t.iter().all(|t| t.header.stamp == Stamp::from_secs(3)));
    }

    #[test]
    fn one_message_holds_every_robot_and_a_robot_leaving_takes_its_frames() {
        let mut s = StaticFrames::default();
        let n = model::FIXED_FRAMES.len();
        let a = static_transforms(Stamp::ZERO, &frames("a"));
        assert_eq!(s.replace("a", a.clone()).map(<[_]>::len), Some(n));
        let b = static_transforms(Stamp::ZERO, &frames("b"));
        assert_eq!(s.replace("b", b).map(<[_]>::len), Some(2 * n));
        // again: replaced, not doubled
        assert_eq!(s.replace("a", a).map(<[_]>::len), Some(2 * n));
        let left = s.replace("a", Vec::new()).unwrap();
        assert_eq!(left.len(), n);
        assert!(left.iter().all(|t| t.child_frame_id.starts_with("b/")));
        // nothing of `a` left: nothing to publish
        assert!(s.replace("a", Vec::new()).is_none());
        // no prefix: nothing taken out
        let bare = static_transforms(Stamp::ZERO, &frames(""));
        assert_eq!(s.replace("", bare).map(<[_]>::len), Some(2 * n));
        assert!(s.replace("", Vec::new()).is_none());
    }
}
