//! The RT controllers' parameters of the ROS 2 bridge's ports as the layer reaches them
//! ([`nrt_interface::params::ControllerParams`]): the adapter alone, so that it moves with the controllers' ports
//! (to `nrt_interface::controllers`, where the same two methods exist) in one step.

use super::controllers::Controllers;
use msgs::handoff::{ParamDecl, RobotId};
use nrt_interface::params::ControllerParams;

/// The RT controllers' parameters through the layer's adapter (their ports are the ROS 2 bridge's).
impl ControllerParams for Controllers {
    fn params(&self, robot: RobotId) -> Vec<(String, f64, ParamDecl)> {
        Controllers::params(self, robot)
    }

    fn set_param(&mut self, robot: RobotId, name: &str, value: f64) -> Result<(), String> {
        Controllers::set_param(self, robot, name, value)
    }
}
