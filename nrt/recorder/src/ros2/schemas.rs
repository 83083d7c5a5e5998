//! The `ros2msg` schemas of what the driver publishes, in rosbag2's concatenated form: the type's definition, then
//! for every type it nests (once each) a line of 80 `=`, `MSG: pkg/Type` and that type's definition. The field
//! lists are those of ROS 2 Jazzy's interface definitions (comments and default values left out; `Range` has
//! `variance` since Jazzy).

/// A ROS 2 message type: its name (`pkg/msg/Type`, the MCAP schema name rosbag2 writes) and its concatenated
/// definition (the `ros2msg` schema).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ros2Type {
    /// `pkg/msg/Type`.
    pub name: &'static str,
    /// The definition with its nested types'.
    pub definition: &'static str,
}

/// The separator line before a nested type's definition (80 `=` then `MSG: `), as rosbag2 writes it.
macro_rules! msg {
    ($name:literal) => {
        concat!(
            "================================================================================\nMSG: ",
            $name,
            "\n"
        )
    };
}

macro_rules! time {
    () => {
        concat!(
            msg!("builtin_interfaces/Time"),
            "int32 sec\nuint32 nanosec\n"
        )
    };
}

macro_rules! header {
    () => {
        concat!(
            msg!("std_msgs/Header"),
            "builtin_interfaces/Time stamp\nstring frame_id\n",
            time!()
        )
    };
}

macro_rules! vector3 {
    () => {
        concat!(
            msg!("geometry_msgs/Vector3"),
            "float64 x\nfloat64 y\nfloat64 z\n"
        )
    };
}

macro_rules! quaternion {
    () => {
        concat!(
            msg!("geometry_msgs/Quaternion"),
            "float64 x\nfloat64 y\nfloat64 z\nfloat64 w\n"
        )
    };
}

macro_rules! twist {
    () => {
        concat!(
            msg!("geometry_msgs/Twist"),
            "Vector3 linear\nVector3 angular\n",
            vector3!()
        )
    };
}

/// `nav_msgs/msg/Odometry`.
pub const ODOMETRY: Ros2Type = Ros2Type {
    name: "nav_msgs/msg/Odometry",
    definition: concat!(
        "std_msgs/Header header\nstring child_frame_id\ngeometry_msgs/PoseWithCovariance pose\n",
        "geometry_msgs/TwistWithCovariance twist\n",
        header!(),
        msg!("geometry_msgs/PoseWithCovariance"),
        "Pose pose\nfloat64[36] covariance\n",
        msg!("geometry_msgs/Pose"),
        "Point position\nQuaternion orientation\n",
        msg!("geometry_msgs/Point"),
        "float64 x\nfloat64 y\nfloat64 z\n",
        quaternion!(),
        msg!("geometry_msgs/TwistWithCovariance"),
        "Twist twist\nfloat64[36] covariance\n",
        twist!(),
    ),
};

/// `tf2_msgs/msg/TFMessage`.
pub const TF_MESSAGE: Ros2Type = Ros2Type {
    name: "tf2_msgs/msg/TFMessage",
    definition: concat!(
        "geometry_msgs/TransformStamped[] transforms\n",
        msg!("geometry_msgs/TransformStamped"),
        "std_msgs/Header header\nstring child_frame_id\nTransform transform\n",
        header!(),
        msg!("geometry_msgs/Transform"),
        "Vector3 translation\nQuaternion rotation\n",
        vector3!(),
        quaternion!(),
    ),
};

/// `sensor_msgs/msg/JointState`.
pub const JOINT_STATE: Ros2Type = Ros2Type {
    name: "sensor_msgs/msg/JointState",
    definition: concat!(
        "std_msgs/Header header\nstring[] name\nfloat64[] position\nfloat64[] velocity\nfloat64[] effort\n",
        header!(),
    ),
};

/// `geometry_msgs/msg/TwistStamped`.
pub const TWIST_STAMPED: Ros2Type = Ros2Type {
    name: "geometry_msgs/msg/TwistStamped",
    definition: concat!("std_msgs/Header header\nTwist twist\n", header!(), twist!()),
};

/// `diagnostic_msgs/msg/DiagnosticArray`.
pub const DIAGNOSTIC_ARRAY: Ros2Type = Ros2Type {
    name: "diagnostic_msgs/msg/DiagnosticArray",
    definition: concat!(
        "std_msgs/Header header\nDiagnosticStatus[] status\n",
        header!(),
        msg!("diagnostic_msgs/DiagnosticStatus"),
        "byte OK=0\nbyte WARN=1\nbyte ERROR=2\nbyte STALE=3\nbyte level\nstring name\nstring message\n",
        "string hardware_id\nKeyValue[] values\n",
        msg!("diagnostic_msgs/KeyValue"),
        "string key\nstring value\n",
    ),
};

/// `sensor_msgs/msg/Range`.
pub const RANGE: Ros2Type = Ros2Type {
    name: "sensor_msgs/msg/Range",
    definition: concat!(
        "std_msgs/Header header\nuint8 ULTRASOUND=0\nuint8 INFRARED=1\nuint8 radiation_type\n",
        "float32 field_of_view\nfloat32 min_range\nfloat32 max_range\nfloat32 range\nfloat32 variance\n",
        header!(),
    ),
};

/// `sensor_msgs/msg/LaserScan`.
pub const LASER_SCAN: Ros2Type = Ros2Type {
    name: "sensor_msgs/msg/LaserScan",
    definition: concat!(
        "std_msgs/Header header\nfloat32 angle_min\nfloat32 angle_max\nfloat32 angle_increment\n",
        "float32 time_increment\nfloat32 scan_time\nfloat32 range_min\nfloat32 range_max\nfloat32[] ranges\n",
        "float32[] intensities\n",
        header!(),
    ),
};

/// `sensor_msgs/msg/Imu`.
pub const IMU: Ros2Type = Ros2Type {
    name: "sensor_msgs/msg/Imu",
    definition: concat!(
        "std_msgs/Header header\ngeometry_msgs/Quaternion orientation\nfloat64[9] orientation_covariance\n",
        "geometry_msgs/Vector3 angular_velocity\nfloat64[9] angular_velocity_covariance\n",
        "geometry_msgs/Vector3 linear_acceleration\nfloat64[9] linear_acceleration_covariance\n",
        header!(),
        quaternion!(),
        vector3!(),
    ),
};

/// `sensor_msgs/msg/Temperature`.
pub const TEMPERATURE: Ros2Type = Ros2Type {
    name: "sensor_msgs/msg/Temperature",
    definition: concat!(
        "std_msgs/Header header\nfloat64 temperature\nfloat64 variance\n",
        header!(),
    ),
};

/// `sensor_msgs/msg/Joy`.
pub const JOY: Ros2Type = Ros2Type {
    name: "sensor_msgs/msg/Joy",
    definition: concat!(
        "std_msgs/Header header\nfloat32[] axes\nint32[] buttons\n",
        header!(),
    ),
};

/// `std_msgs/msg/Empty` (no field: its definition is empty, as rosbag2 writes it).
pub const EMPTY: Ros2Type = Ros2Type {
    name: "std_msgs/msg/Empty",
    definition: "",
};

/// `std_msgs/msg/Float32`.
pub const FLOAT32: Ros2Type = Ros2Type {
    name: "std_msgs/msg/Float32",
    definition: "float32 data\n",
};

/// `std_msgs/msg/Int8`.
pub const INT8: Ros2Type = Ros2Type {
    name: "std_msgs/msg/Int8",
    definition: "int8 data\n",
};

/// `std_msgs/msg/Bool`.
pub const BOOL: Ros2Type = Ros2Type {
    name: "std_msgs/msg/Bool",
    definition: "bool data\n",
};

/// `thymio_msgs/msg/Comm` (the driver's own package).
pub const COMM: Ros2Type = Ros2Type {
    name: "thymio_msgs/msg/Comm",
    definition: "int16 value\nint16[7] payloads\nint16[7] intensities\n",
};

/// Every type above.
pub const ALL: [Ros2Type; 15] = [
    ODOMETRY,
    TF_MESSAGE,
    JOINT_STATE,
    TWIST_STAMPED,
    DIAGNOSTIC_ARRAY,
    RANGE,
    LASER_SCAN,
    IMU,
    TEMPERATURE,
    JOY,
    EMPTY,
    FLOAT32,
    INT8,
    BOOL,
    COMM,
];

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    /// `pkg/Type` → its field and constant lines, of a concatenated definition.
    fn sections(t: &Ros2Type) -> BTreeMap<String, Vec<String>> {
        let sep = "=".repeat(80);
        let mut out = BTreeMap::new();
        let (pkg, _) = t.name.split_once('/').unwrap();
        let top = format!("{pkg}/{}", t.name.rsplit('/').next().unwrap());
        let mut name = top;
        let mut lines = Vec::new();
        for line in t.definition.lines() {
            if line == sep {
                out.insert(std::mem::take(&mut name), std::mem::take(&mut lines));
            } else if let Some(n) = line.strip_prefix("MSG: ") {
                name = n.to_owned();
            } else {
                lines.push(line.to_owned());
            }
        }
        out.insert(name, lines);
        out
    }

    /// A `.msg` file's lines without comments, blank lines, extra spaces and default values.
    fn normalized(text: &str) -> Vec<String> {
        text.lines()
            .map(|l| {
                l.split('#')
                    .next()
                    .unwrap()
                    .split_whitespace()
                    .collect::<Vec<_>>()
            })
            .filter(|t| !t.is_empty())
            .map(|t| {
                if t.len() > 2 && !t[1].contains('=') {
                    t[..2].join(" ")
                } else {
                    t.join(" ")
                }
            })
            .collect()
    }

    #[test]
    fn rosbag2s_concatenated_form() {
        for t in ALL.into_iter().filter(|t| *t != EMPTY) {
            let s = sections(&t);
            // every nested type named by a field has its section, once
            for lines in s.values() {
                assert!(!lines.is_empty(), "{}", t.name);
            }
            assert_eq!(
                t.definition.matches("MSG: ").count() + 1,
                s.len(),
                "{}: a type twice",
                t.name
            );
            // a type with a header carries its section
            assert_eq!(
                s.contains_key("std_msgs/Header"),
                t.definition.starts_with("std_msgs/Header header\n")
                    || t.definition.contains("\nstd_msgs/Header header\n"),
                "{}",
                t.name
            );
            assert!(t.definition.ends_with('\n') && !t.definition.starts_with('='));
        }
        assert!(sections(&TF_MESSAGE).contains_key("std_msgs/Header"));
        assert_eq!(sections(&ODOMETRY).len(), 10);
    }

    /// The field lists are those of the installed interface definitions (the ROS 2 venv's share, when present).
    #[test]
    fn field_lists_match_the_interface_definitions() {
        let share = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.venv-ros/share");
        if !share.is_dir() {
            eprintln!(
                "skipped: no interface definitions at {} (scripts/setup-ros2.sh)",
                share.display()
            );
            return;
        }
        let mut compared = 0;
        for t in ALL {
            for (name, lines) in sections(&t) {
                let (pkg, ty) = name.split_once('/').unwrap();
                let file = share.join(pkg).join("msg").join(format!("{ty}.msg"));
                let Ok(text) = std::fs::read_to_string(&file) else {
                    panic!("{}: no {}", t.name, file.display());
                };
                assert_eq!(lines, normalized(&text), "{} in {}", name, t.name);
                compared += 1;
            }
        }
        assert!(compared >= ALL.len() + 5 * 2, "{compared}");
    }
}
