//! Unit tests of [`super`]: the ranges hold the defaults and refuse absurd values.

use super::*;
use crate::thymio::calibration::{Calibration, AXIS_LENGTH as AXIS};

#[test]
fn the_defaults_are_inside_and_absurd_values_outside() {
    assert!(AXIS_LENGTH.contains(AXIS));
    for bad in [1e9, 1e-9, 5e-324, 0.0, -0.0935, f64::NAN, f64::INFINITY] {
        let e = AXIS_LENGTH.check("axis_length", bad).unwrap_err();
        assert_eq!(e.key, "axis_length");
        assert!(e.rule.contains("[0.05, 0.15] m"), "{e}");
    }
    for c in [Calibration::real(), Calibration::simulation()] {
        for m in [c.left, c.right] {
            assert!(MOTOR_Q0.contains(m.parameters[0]));
            assert!(MOTOR_Q1.contains(m.parameters[1]));
            assert!(MOTOR_DEADBAND.contains(m.deadband));
        }
        let [r_max, x0, k] = c.proximity[0].parameters;
        assert!(PROXIMITY_R_MAX.contains(r_max) && PROXIMITY_X0.contains(x0));
        assert!(PROXIMITY_C.contains(k));
    }
    let d = crate::thymio::params::DriverParams::default();
    assert!(ODOM_MAX_RATE.contains(d.odom_max_rate));
    assert!(CMD_VEL_TIMEOUT.contains(d.cmd_vel_timeout));
    assert!(LOST_ROBOT_TIMEOUT.contains(d.lost_robot_timeout));
    assert!(JOINT_STATE_RATE.contains(d.joint_state_rate));
    assert!(OBSTACLE_MAX_AGE.contains(d.obstacle_stop.max_age));
}

#[test]
fn descriptors_know_the_scalar_ranges() {
    assert_eq!(of_driver_param("axis_length"), Some(AXIS_LENGTH));
    assert_eq!(of_driver_param("motor.left.deadband"), Some(MOTOR_DEADBAND));
    assert_eq!(of_driver_param("motor.left.parameters"), None);
    assert_eq!(of_driver_param("odom_frame"), None);
    assert_eq!(
        of_driver_param("linear.x.max_deceleration"),
        Some(LINEAR_RATE)
    );
    assert_eq!(
        of_driver_param("angular.z.max_acceleration_reverse"),
        Some(ANGULAR_RATE)
    );
    assert_eq!(of_driver_param("angular.z.max_jerk"), Some(ANGULAR_JERK));
    assert_eq!(of_driver_param("linear.x.max_velocity"), None);
    assert_eq!(int_of_driver_param("ground.threshold"), Some((0, 1023)));
    let e = check_int("ground.threshold", 5000, GROUND_THRESHOLD, "10-bit").unwrap_err();
    assert_eq!(
        e.to_string(),
        "ground.threshold: 5000 is outside the allowed range [0, 1023] (10-bit)"
    );
}
