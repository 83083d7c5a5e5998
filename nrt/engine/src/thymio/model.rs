//! The robot model: frames per REP 105 with a per-robot prefix, the static transforms of the
//! sensor frames, and a URDF written from the frame table (ros-aseba-interface.md §5).
//! The wheel links are not static: the driver publishes `base_link → <side>_wheel_link` on
//! `/tf` with the wheel angles, so no robot_state_publisher is needed.

use super::calibration::WHEEL_RADIUS;
use msgs::thymio::{GROUND_HEIGHT, GROUND_POSES, GROUND_YAWS, PROXIMITY_HEIGHT, PROXIMITY_POSES};

/// A fixed frame of the robot: name (without prefix), parent, translation, roll-pitch-yaw.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FixedFrame {
    /// Frame name, without the robot prefix.
    pub name: &'static str,
    /// Parent frame, without the robot prefix.
    pub parent: &'static str,
    /// Translation [m].
    pub xyz: [f64; 3],
    /// Roll, pitch, yaw [rad].
    pub rpy: [f64; 3],
}

const fn frame(name: &'static str, xyz: [f64; 3], rpy: [f64; 3]) -> FixedFrame {
    FixedFrame {
        name,
        parent: "base_link",
        xyz,
        rpy,
    }
}

/// The frame of horizontal proximity sensor `i` (the robot profile's pose, at its height).
const fn proximity_frame(name: &'static str, i: usize) -> FixedFrame {
    let [x, y, yaw] = PROXIMITY_POSES[i];
    frame(name, [x, y, PROXIMITY_HEIGHT], [0.0, 0.0, yaw])
}

/// The frame of ground sensor `i` (looking down: pitched by π/2).
const fn ground_frame(name: &'static str, i: usize) -> FixedFrame {
    let [x, y] = GROUND_POSES[i];
    let pitch = std::f64::consts::FRAC_PI_2;
    frame(name, [x, y, GROUND_HEIGHT], [0.0, pitch, GROUND_YAWS[i]])
}

/// The fixed sensor and body frames (children of `base_link`); the sensor frames' names are
/// `proximity_<name>_link` and `ground_<name>_link` of the profile's sensor names.
pub const FIXED_FRAMES: [FixedFrame; 11] = [
    frame("body_link", [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]),
    proximity_frame("proximity_left_link", 0),
    proximity_frame("proximity_center_left_link", 1),
    proximity_frame("proximity_center_link", 2),
    proximity_frame("proximity_center_right_link", 3),
    proximity_frame("proximity_right_link", 4),
    proximity_frame("proximity_rear_left_link", 5),
    proximity_frame("proximity_rear_right_link", 6),
    ground_frame("ground_left_link", 0),
    ground_frame("ground_right_link", 1),
    frame("laser_link", [0.0, 0.0, PROXIMITY_HEIGHT], [0.0, 0.0, 0.0]),
];

/// A frame name with the robot prefix (`"thymio_3/base_link"`, or `"base_link"` without one).
pub fn prefixed(prefix: &str, name: &str) -> String {
    let p = prefix.trim_matches('/');
    if p.is_empty() {
        name.to_owned()
    } else {
        format!("{p}/{name}")
    }
}

/// Quaternion `[x, y, z, w]` of roll-pitch-yaw angles.
pub fn quaternion(rpy: [f64; 3]) -> [f64; 4] {
    let (sr, cr) = (rpy[0] / 2.0).sin_cos();
    let (sp, cp) = (rpy[1] / 2.0).sin_cos();
    let (sy, cy) = (rpy[2] / 2.0).sin_cos();
    [
        sr * cp * cy - cr * sp * sy,
        cr * sp * cy + sr * cp * sy,
        cr * cp * sy - sr * sp * cy,
        cr * cp * cy + sr * sp * sy,
    ]
}

/// The frame prefix of a robot (ROS-Thymio's `tf_prefix`): an explicit (non-empty) `tf_prefix`
/// wins over the bridge node's ROS namespace `ros_namespace`; the robot's own namespace under the
/// node (`thymio_3` when several robots share one node) is appended, so two robots never share
/// a frame. No namespace and no `tf_prefix`: unprefixed frames.
pub fn frame_prefix(tf_prefix: &str, ros_namespace: &str, robot_namespace: &str) -> String {
    let base = match tf_prefix.trim_matches('/') {
        "" => ros_namespace.trim_matches('/'),
        p => p,
    };
    prefixed(base, robot_namespace.trim_matches('/'))
        .trim_matches('/')
        .to_owned()
}

/// Wheel link of `side` (`"left"`, `"right"`), without the robot prefix.
pub fn wheel_link(side: &str) -> String {
    format!("{side}_wheel_link")
}

/// Body: length × width × height [m] (Thymio-II: 110 × 112 × 53 mm) and its centre relative to
/// `base_link` (on the ground, between the wheels): from the rear sensors at x = −0.03 to the
/// front one at x = 0.08.
pub const BODY_SIZE: [f64; 3] = [0.11, 0.112, 0.053];
/// Centre of the body box in `base_link` [m].
pub const BODY_CENTER: [f64; 3] = [0.025, 0.0, 0.0315];
/// Width of a wheel [m] (the robot profile's).
pub use msgs::thymio::WHEEL_WIDTH;
/// Mass of the body and of one wheel [kg] (thymio_description).
pub const MASSES: [f64; 2] = [0.2, 0.024];
/// The body's visual mesh (`meshes/` of the repository, written by `scripts/gen-meshes.py`; installed in the
/// package's share directory, ROS 1's package at `launch/ros1` links it), in `body_link`.
pub const BODY_MESH: &str = "package://thymio_rt/meshes/thymio_body.stl";
/// A wheel's visual mesh (about y, centred), in its wheel link.
pub const WHEEL_MESH: &str = "package://thymio_rt/meshes/thymio_wheel.stl";

/// The URDF of a Thymio-II, every link and joint prefixed, with the given axis length and wheel
/// joint names (`left_wheel_joint`, `right_wheel_joint`, unprefixed), with thymio_description's
/// dimensions, masses and frames: the body and wheels seen as the meshes [`BODY_MESH`] and
/// [`WHEEL_MESH`], colliding as a box and cylinders of the same size.
pub fn urdf(prefix: &str, axis_length: f64, wheel_joints: [&str; 2]) -> String {
    let n = |s: &str| prefixed(prefix, s);
    let [bx, by, bz] = BODY_SIZE;
    let [cx, cy, cz] = BODY_CENTER;
    let body_box = format!(
        "<origin xyz=\"{cx} {cy} {cz}\"/><geometry><box size=\"{bx} {by} {bz}\"/></geometry>"
    );
    let mut out = String::new();
    out.push_str(&format!(
        "<?xml version=\"1.0\"?>\n<robot name=\"{}\">\n",
        n("thymio")
    ));
    // base_link on the ground between the wheels; the caster ball under the front
    out.push_str(&format!(
        "  <link name=\"{}\">\n    <collision>{body_box}</collision>\n    <collision><origin xyz=\"0.06 0 0.009\"/><geometry><sphere radius=\"0.009\"/></geometry></collision>\n  </link>\n",
        n("base_link")
    ));
    for f in FIXED_FRAMES {
        if f.name == "body_link" {
            // inertia of thymio_description: I = k · m
            let m = MASSES[0];
            out.push_str(&format!(
                "  <link name=\"{}\">\n    <visual><geometry><mesh filename=\"{BODY_MESH}\"/></geometry><material name=\"white\"><color rgba=\"1 1 1 1\"/></material></visual>\n    <inertial><origin xyz=\"0.0243 0 0.0315\"/><mass value=\"{m}\"/><inertia ixx=\"{}\" ixy=\"0\" ixz=\"{}\" iyy=\"{}\" iyz=\"0\" izz=\"{}\"/></inertial>\n  </link>\n",
                n(f.name),
                0.002199 * m,
                -0.000760 * m,
                0.002639 * m,
                0.002526 * m
            ));
        } else {
            out.push_str(&format!("  <link name=\"{}\"/>\n", n(f.name)));
        }
        out.push_str(&format!(
            "  <joint name=\"{}\" type=\"fixed\">\n    <parent link=\"{}\"/>\n    <child link=\"{}\"/>\n    <origin xyz=\"{} {} {}\" rpy=\"{} {} {}\"/>\n  </joint>\n",
            n(&f.name.replace("_link", "_joint")),
            n(f.parent),
            n(f.name),
            f.xyz[0], f.xyz[1], f.xyz[2], f.rpy[0], f.rpy[1], f.rpy[2]
        ));
    }
    let m = MASSES[1];
    let (r, w) = (WHEEL_RADIUS, WHEEL_WIDTH);
    // a cylinder along y: I_yy = m r²/2, I_xx = I_zz = m (3 r² + w²)/12
    let (i_axis, i_side) = (m * r * r / 2.0, m * (3.0 * r * r + w * w) / 12.0);
    for ((side, sign), joint) in [("left", 1.0), ("right", -1.0)]
        .into_iter()
        .zip(wheel_joints)
    {
        let link = n(&wheel_link(side));
        out.push_str(&format!(
            "  <link name=\"{link}\">\n    <visual><geometry><mesh filename=\"{WHEEL_MESH}\"/></geometry><material name=\"black\"><color rgba=\"0.1 0.1 0.1 1\"/></material></visual>\n    <collision><origin rpy=\"{h} 0 0\"/><geometry><cylinder radius=\"{r}\" length=\"{w}\"/></geometry></collision>\n    <inertial><mass value=\"{m}\"/><inertia ixx=\"{i_side}\" ixy=\"0\" ixz=\"0\" iyy=\"{i_axis}\" iyz=\"0\" izz=\"{i_side}\"/></inertial>\n  </link>\n",
            h = std::f64::consts::FRAC_PI_2
        ));
        out.push_str(&format!(
            "  <joint name=\"{}\" type=\"continuous\">\n    <parent link=\"{}\"/>\n    <child link=\"{link}\"/>\n    <origin xyz=\"0 {} {r}\"/>\n    <axis xyz=\"0 1 0\"/>\n    <limit effort=\"10\" velocity=\"7.757\"/>\n    <dynamics damping=\"0.1\"/>\n  </joint>\n",
            n(joint),
            n("base_link"),
            sign * axis_length / 2.0
        ));
    }
    out.push_str("</robot>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use msgs::thymio::AXIS_LENGTH;

    #[test]
    fn prefixes() {
        assert_eq!(prefixed("", "base_link"), "base_link");
        assert_eq!(prefixed("/thymio_3/", "odom"), "thymio_3/odom");
    }

    #[test]
    fn quaternion_of_yaw() {
        let q = quaternion([0.0, 0.0, std::f64::consts::PI]);
        assert!((q[2] - 1.0).abs() < 1e-12 && q[3].abs() < 1e-12);
        let q = quaternion([0.3, -0.2, 1.1]);
        let norm: f64 = q.iter().map(|c| c * c).sum();
        assert!((norm - 1.0).abs() < 1e-12);
    }

    #[test]
    fn urdf_has_every_frame_and_wheels_at_half_axis() {
        let u = urdf("t1", AXIS_LENGTH, ["left_wheel_joint", "right_wheel_joint"]);
        for f in FIXED_FRAMES {
            assert!(
                u.contains(&format!("<link name=\"t1/{}\"", f.name)),
                "{}",
                f.name
            );
        }
        assert!(u.contains(
            "<child link=\"t1/left_wheel_link\"/>\n    <origin xyz=\"0 0.04675 0.022\"/>"
        ));
        assert!(u.contains("<origin xyz=\"0 -0.04675 0.022\"/>"));
        assert_eq!(u.matches("<joint ").count(), FIXED_FRAMES.len() + 2);
        assert!(u.contains("<joint name=\"t1/left_wheel_joint\" type=\"continuous\">"));
        assert!(u.contains("<box size=\"0.11 0.112 0.053\"/>"));
        // seen as the meshes, colliding as the box and cylinders
        assert_eq!(u.matches(BODY_MESH).count(), 1);
        assert_eq!(u.matches(WHEEL_MESH).count(), 2);
        assert_eq!(u.matches("<collision><origin rpy").count(), 2);
        assert_eq!(
            u.matches("<collision><origin xyz=\"0.025 0 0.0315\"/><geometry><box")
                .count(),
            1
        );
    }

    #[test]
    fn the_meshes_are_in_the_package_on_ros_2_and_ros_1() {
        // package://thymio_rt/X: X of the repository (installed to share/thymio_rt/X by colcon), and of the ROS 1
        // package at launch/ros1 (a link to it)
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        for uri in [BODY_MESH, WHEEL_MESH] {
            let rel = uri.strip_prefix("package://thymio_rt/").unwrap();
            for dir in [root.clone(), root.join("launch/ros1")] {
                let meta = std::fs::metadata(dir.join(rel))
                    .unwrap_or_else(|e| panic!("{uri} in {dir:?}: {e}"));
                assert!(meta.len() > 84, "{uri}: not a binary STL");
            }
        }
    }

    #[test]
    fn wheel_joints_take_the_configured_names() {
        let u = urdf("", AXIS_LENGTH, ["wl", "wr"]);
        assert!(u.contains("<joint name=\"wl\" type=\"continuous\">"));
        assert!(u.contains("<joint name=\"wr\" type=\"continuous\">"));
    }

    #[test]
    fn prefix_defaults_to_the_namespace_and_tf_prefix_wins() {
        // the robot's full namespace: the node's ROS namespace and the robot's own under it
        assert_eq!(frame_prefix("", "/robot_a", ""), "robot_a");
        assert_eq!(frame_prefix("", "/fleet", "thymio_3"), "fleet/thymio_3");
        assert_eq!(frame_prefix("", "/", "thymio_3"), "thymio_3");
        // an explicit tf_prefix replaces the ROS namespace, robots under one node stay apart
        assert_eq!(frame_prefix("/mine/", "/robot_a", ""), "mine");
        assert_eq!(frame_prefix("mine", "/fleet", "thymio_3"), "mine/thymio_3");
        // no namespace, no tf_prefix: unprefixed
        assert_eq!(frame_prefix("", "/", ""), "");
        assert_eq!(frame_prefix("", "", ""), "");
    }
}
