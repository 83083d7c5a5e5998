//! A driven robot's frames and model: its frame prefix (its namespace or `tf_prefix`), the prefixed names of
//! `odom`, `base_link`, the wheel joints and links, and the URDF of `robot_description` written from its
//! calibrated axis.

use handoff::NodeId;
use nrt_engine::engine::Engine;
use nrt_engine::thymio::model::{self, prefixed};

/// Frames of one robot (prefixed by its namespace or `tf_prefix`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frames {
    /// The prefix.
    pub prefix: String,
    /// `odom`, prefixed.
    pub odom: String,
    /// `base_link`, prefixed.
    pub base: String,
    /// Wheel joints (left, right), prefixed.
    pub joints: [String; 2],
    /// Wheel links (left, right), prefixed.
    pub wheels: [String; 2],
}

impl Frames {
    /// The frames of a robot with `prefix`.
    pub fn new(prefix: &str, odom: &str, base: &str, joints: [&str; 2]) -> Frames {
        Frames {
            prefix: prefix.trim_matches('/').to_owned(),
            odom: prefixed(prefix, odom),
            base: prefixed(prefix, base),
            joints: joints.map(|j| prefixed(prefix, j)),
            wheels: ["left", "right"].map(|side| prefixed(prefix, &model::wheel_link(side))),
        }
    }

    /// The frames of the robot of node `id` whose front end's node is in `ros_namespace`: the robot's full
    /// namespace (the node's, then the robot's own) unless its `tf_prefix` is set, so that two drivers in two
    /// namespaces never share a frame; the frame names are its driver parameters'.
    pub fn of_robot(engine: &Engine, id: NodeId, ros_namespace: &str) -> Frames {
        let params = engine.robot_params(id);
        let prefix = model::frame_prefix(
            &params.tf_prefix,
            ros_namespace,
            &robot_namespace(engine, id),
        );
        Frames::new(
            &prefix,
            &params.odom_frame,
            &params.robot_frame,
            [&params.left_wheel_joint, &params.right_wheel_joint],
        )
    }

    /// A link of the robot model, prefixed.
    pub fn link(&self, name: &str) -> String {
        prefixed(&self.prefix, name)
    }
}

/// The namespace of node `id` (its topics are under it), without slashes at its ends; "" for none.
pub fn robot_namespace(engine: &Engine, id: NodeId) -> String {
    engine
        .network()
        .node(id)
        .map(|n| n.namespace().trim_matches('/').to_owned())
        .unwrap_or_default()
}

/// The URDF of `robot_description` of the robot of node `id` (`None` unless its `publish_model` is set): its
/// links prefixed as `frames`, its wheels apart by its calibrated axis (the configured `axis_length` before a
/// calibration).
pub fn robot_description(engine: &Engine, id: NodeId, frames: &Frames) -> Option<String> {
    let params = engine.robot_params(id);
    if !params.publish_model {
        return None;
    }
    let axis = engine
        .robots()
        .of_node(id)
        .map_or(params.axis_length, |s| s.calibration.axis_length);
    Some(model::urdf(
        &frames.prefix,
        axis,
        [&params.left_wheel_joint, &params.right_wheel_joint],
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_prefixed_once_without_slashes() {
        let f = Frames::new(
            "/t1/",
            "odom",
            "base_link",
            ["left_wheel_joint", "right_wheel_joint"],
        );
        assert_eq!(f.prefix, "t1");
        assert_eq!(f.odom, "t1/odom");
        assert_eq!(f.base, "t1/base_link");
        assert_eq!(f.joints[1], "t1/right_wheel_joint");
        assert_eq!(f.wheels, ["t1/left_wheel_link", "t1/right_wheel_link"]);
        assert_eq!(f.link("laser_link"), "t1/laser_link");
        let bare = Frames::new("", "odom", "base_link", ["l", "r"]);
        assert_eq!((bare.odom.as_str(), bare.link("x").as_str()), ("odom", "x"));
    }
}
