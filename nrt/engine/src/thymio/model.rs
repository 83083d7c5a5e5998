//! The robot model: frames per REP 105 with a per-robot prefix, the static transforms of the
//! sensor frames, and a URDF written from the frame table (ros-aseba-interface.md §5).

use super::calibration::WHEEL_RADIUS;

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

/// The fixed sensor and body frames (children of `base_link`).
pub const FIXED_FRAMES: [FixedFrame; 11] = [
    frame("body_link", [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]),
    frame(
        "proximity_left_link",
        [0.063, 0.0493, 0.035],
        [0.0, 0.0, 0.66323],
    ),
    frame(
        "proximity_center_left_link",
        [0.0756, 0.0261, 0.035],
        [0.0, 0.0, 0.33161],
    ),
    frame("proximity_center_link", [0.08, 0.0, 0.035], [0.0, 0.0, 0.0]),
    frame(
        "proximity_center_right_link",
        [0.0756, -0.0261, 0.035],
        [0.0, 0.0, -0.33161],
    ),
    frame(
        "proximity_right_link",
        [0.063, -0.0493, 0.035],
        [0.0, 0.0, -0.66323],
    ),
    frame(
        "proximity_rear_left_link",
        [-0.03, 0.0305, 0.035],
        [0.0, 0.0, std::f64::consts::PI],
    ),
    frame(
        "proximity_rear_right_link",
        [-0.03, -0.0305, 0.035],
        [0.0, 0.0, std::f64::consts::PI],
    ),
    frame(
        "ground_left_link",
        [0.07157, 0.01155, 0.009],
        [0.0, std::f64::consts::FRAC_PI_2, 0.24311],
    ),
    frame(
        "ground_right_link",
        [0.07157, -0.01155, 0.009],
        [0.0, std::f64::consts::FRAC_PI_2, -0.24311],
    ),
    frame("laser_link", [0.0, 0.0, 0.035], [0.0, 0.0, 0.0]),
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

/// The URDF of a Thymio-II, every link prefixed, with the given axis length.
pub fn urdf(prefix: &str, axis_length: f64) -> String {
    let n = |s: &str| prefixed(prefix, s);
    let mut out = String::new();
    out.push_str(&format!(
        "<?xml version=\"1.0\"?>\n<robot name=\"{}\">\n",
        n("thymio")
    ));
    out.push_str(&format!(
        "  <link name=\"{}\">\n    <visual><origin xyz=\"0.025 0 0.03\"/><geometry><box size=\"0.11 0.112 0.053\"/></geometry></visual>\n    <collision><origin xyz=\"0.025 0 0.03\"/><geometry><box size=\"0.11 0.112 0.053\"/></geometry></collision>\n  </link>\n",
        n("base_link")
    ));
    for f in FIXED_FRAMES {
        out.push_str(&format!("  <link name=\"{}\"/>\n", n(f.name)));
        out.push_str(&format!(
            "  <joint name=\"{}\" type=\"fixed\">\n    <parent link=\"{}\"/>\n    <child link=\"{}\"/>\n    <origin xyz=\"{} {} {}\" rpy=\"{} {} {}\"/>\n  </joint>\n",
            n(&f.name.replace("_link", "_joint")),
            n(f.parent),
            n(f.name),
            f.xyz[0], f.xyz[1], f.xyz[2], f.rpy[0], f.rpy[1], f.rpy[2]
        ));
    }
    for (side, sign) in [("left", 1.0), ("right", -1.0)] {
        let link = n(&format!("{side}_wheel_link"));
        out.push_str(&format!(
            "  <link name=\"{link}\">\n    <visual><origin rpy=\"1.5708 0 0\"/><geometry><cylinder radius=\"{WHEEL_RADIUS}\" length=\"0.015\"/></geometry></visual>\n  </link>\n"
        ));
        out.push_str(&format!(
            "  <joint name=\"{}\" type=\"continuous\">\n    <parent link=\"{}\"/>\n    <child link=\"{link}\"/>\n    <origin xyz=\"0 {} {WHEEL_RADIUS}\"/>\n    <axis xyz=\"0 1 0\"/>\n    <limit effort=\"10\" velocity=\"7.757\"/>\n  </joint>\n",
            n(&format!("{side}_wheel_joint")),
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
        let u = urdf("t1", 0.0935);
        for f in FIXED_FRAMES {
            assert!(
                u.contains(&format!("<link name=\"t1/{}\"/>", f.name)),
                "{}",
                f.name
            );
        }
        assert!(u.contains(
            "<child link=\"t1/left_wheel_link\"/>\n    <origin xyz=\"0 0.04675 0.022\"/>"
        ));
        assert!(u.contains("<origin xyz=\"0 -0.04675 0.022\"/>"));
        assert_eq!(u.matches("<joint ").count(), FIXED_FRAMES.len() + 2);
    }
}
