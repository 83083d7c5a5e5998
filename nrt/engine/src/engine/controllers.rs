//! The NRT ends of the controllers that run in the RT cycle (e.g. the obstacle-stop reflex), owned by the engine:
//! every [`Engine::poll`](super::Engine::poll) pumps them, so whatever loop drives the engine (the command line's,
//! the ROS 2 bridge's) drives them too and no loop pumps them by hand.
//!
//! The engine knows no RT type: the code that builds a controller's RT half and its NRT ends (the runtime, which
//! sees both domains) wraps the NRT ends in a [`ControllerPort`] and attaches it with
//! [`Engine::attach_controller`](super::Engine::attach_controller).

use crate::thymio::params::DriverParams;
use handoff::RobotId;

/// What a controller reports to the engine (which turns it into [`EngineEvent`](super::EngineEvent)s).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ControllerReport {
    /// The obstacle-stop reflex engaged (`true`) or released (`false`) RT robot `robot`.
    ObstacleStop {
        /// RT robot slot.
        robot: RobotId,
        /// Engaged or released.
        engaged: bool,
    },
    /// The cliff reflex engaged (`true`) or released (`false`) RT robot `robot`.
    CliffStop {
        /// RT robot slot.
        robot: RobotId,
        /// Engaged or released.
        engaged: bool,
    },
    /// The pick-up reflex engaged (`true`: the robot left the floor) or released RT robot `robot`.
    PickedUp {
        /// RT robot slot.
        robot: RobotId,
        /// Engaged or released.
        engaged: bool,
    },
}

/// The NRT end of one RT controller. Called on the engine's thread; must not block.
pub trait ControllerPort: Send {
    /// Hands the controller what it needs of the current driver parameters (when they changed since the last
    /// call), then passes on what it reported since, in order.
    fn pump(&mut self, driver: &DriverParams, report: &mut dyn FnMut(ControllerReport));
}

/// The attached ports.
#[derive(Default)]
pub(super) struct Controllers {
    ports: Vec<Box<dyn ControllerPort>>,
    /// Reports of one pump, kept to reuse its allocation.
    reports: Vec<ControllerReport>,
}

impl Controllers {
    pub(super) fn attach(&mut self, port: Box<dyn ControllerPort>) {
        self.ports.push(port);
    }

    /// Pumps every port; returns their reports (valid until the next call).
    pub(super) fn pump(&mut self, driver: &DriverParams) -> &[ControllerReport] {
        self.reports.clear();
        let reports = &mut self.reports;
        for port in &mut self.ports {
            port.pump(driver, &mut |r| reports.push(r));
        }
        &self.reports
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A port that reports what it was given: checks the order and that the parameters are passed.
    struct Echo(RobotId);

    impl ControllerPort for Echo {
        fn pump(&mut self, driver: &DriverParams, report: &mut dyn FnMut(ControllerReport)) {
            report(ControllerReport::ObstacleStop {
                robot: self.0,
                engaged: driver.obstacle_stop.enabled,
            });
        }
    }

    #[test]
    fn every_port_is_pumped_in_order_with_the_parameters() {
        let mut c = Controllers::default();
        assert!(c.pump(&DriverParams::default()).is_empty());
        c.attach(Box::new(Echo(RobotId(1))));
        c.attach(Box::new(Echo(RobotId(2))));
        let mut p = DriverParams::default();
        p.obstacle_stop.enabled = true;
        let robots: Vec<_> = c.pump(&p).to_vec();
        assert_eq!(
            robots,
            [1, 2].map(|r| ControllerReport::ObstacleStop {
                robot: RobotId(r),
                engaged: true
            })
        );
    }
}
