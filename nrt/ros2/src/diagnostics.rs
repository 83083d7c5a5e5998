//! `/diagnostics` of the ROS 2 bridge: the statuses of [`nrt_engine::diagnostics`] (shared with the ROS 1 front
//! end), plus this bridge's own (the per-robot ROS counters, the hop times), as `diagnostic_msgs`.

pub use nrt_engine::diagnostics::{
    array_with, kv, DiagnosticStatus, KeyValue, ERROR, OK, STALE_CMD_VEL, WARN,
};
use r2r::builtin_interfaces::msg::Time;
use r2r::diagnostic_msgs::msg as dm;
use r2r::std_msgs::msg::Header;

/// The array of `status`, stamped.
pub fn to_ros(status: Vec<DiagnosticStatus>, stamp: Time) -> dm::DiagnosticArray {
    dm::DiagnosticArray {
        header: Header {
            stamp,
            frame_id: String::new(),
        },
        status: status
            .into_iter()
            .map(|s| dm::DiagnosticStatus {
                level: s.level,
                name: s.name,
                message: s.message,
                hardware_id: s.hardware_id,
                values: s
                    .values
                    .into_iter()
                    .map(|v| dm::KeyValue {
                        key: v.key,
                        value: v.value,
                    })
                    .collect(),
            })
            .collect(),
    }
}
