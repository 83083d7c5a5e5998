//! The motor calibration action on ROS 2, `/<ns>/calibrate_motors` (`thymio_rt_msgs/action/CalibrateMotors`,
//! r2r's action server on the bridge node), one per driven Thymio that has the controller: the front end's one
//! action-server shape ([`ActionServers`]) over the layer's calibration ([`nrt_interface::calibration`], where the
//! checks, the run, the result and their texts are); this says how its messages map ([`RosAction`]). ROS 2's goal response carries no reason: a rejected goal's reason is on `/rosout` (warning
//! `calibrate_motors (node N): goal rejected: …`).

use super::action_server::{ActionServers, RosAction};
use nrt_interface::calibration::{CalKind, CalResult, Feedback, Goal, ACTION};
use r2r::thymio_rt_msgs::action::CalibrateMotors;

/// Every driven robot's `calibrate_motors` action server.
pub type CalibrationActions = ActionServers<CalibrateMotors::Action>;

impl RosAction for CalibrateMotors::Action {
    type Kind = CalKind;
    const NAME: &'static str = ACTION;
    const PROBE: bool = false;

    fn goal(g: &CalibrateMotors::Goal) -> Goal {
        Goal {
            motor_speeds: g.motor_speeds.clone(),
            motors: g.motors.clone(),
            samples: g.samples,
            timeout: g.timeout,
            dry_run: g.dry_run,
        }
    }

    fn feedback_msg(f: &Feedback) -> CalibrateMotors::Feedback {
        CalibrateMotors::Feedback {
            phase: f.phase.to_owned(),
            motor: f.motor.to_owned(),
            motor_speed: f.motor_speed,
            measured_speed: f.measured_speed,
            samples: f.samples,
            progress: f.progress,
        }
    }

    fn result_msg(r: CalResult) -> CalibrateMotors::Result {
        CalibrateMotors::Result {
            success: r.success,
            message: r.message,
            left_q0: r.left_q0,
            left_q1: r.left_q1,
            right_q0: r.right_q0,
            right_q1: r.right_q1,
            left_deadband: r.left_deadband,
            right_deadband: r.right_deadband,
            calibration_file: r.calibration_file,
        }
    }
}
