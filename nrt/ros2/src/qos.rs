//! The QoS profiles the topics share: ROS-Thymio's depth, its reliable profile and the sensor topics' (a leaf
//! module: the Thymio endpoints and the sensor publishers both use it).

use r2r::QosProfile;

/// ROS-Thymio's depth of every topic but `led`.
pub(crate) const DEPTH: usize = 1;

/// The QoS of the sensor topics: ROS-Thymio's, or ROS 2's sensor-data profile (`sensor_data_qos`).
pub(crate) fn sensor_qos(sensor_data: bool) -> QosProfile {
    if sensor_data {
        QosProfile::sensor_data()
    } else {
        reliable(DEPTH)
    }
}

pub(crate) fn reliable(depth: usize) -> QosProfile {
    QosProfile::default().keep_last(depth).reliable()
}
