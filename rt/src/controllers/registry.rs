//! Controllers by name: a [`Registry`] of factories, instantiated once per robot slot before the
//! RT thread starts. Each instance declares its ROS-from-RT endpoints and parameters through a
//! [`ControllerInit`]; the RT halves stay in the instance, the NRT halves go to the front ends
//! ([`NrtControl`]), which serve them under `~/controllers/<name>/…` of the robot.

use super::Controller;
use handoff::{
    ControllerInit, DeclareError, NrtControl, OwnerNames, ParamDecl, RobotId, MAX_CONTROLLERS,
    MAX_ROBOTS,
};

/// The names of [`Registry::shipped`]'s controllers, in owner-id order.
pub const SHIPPED: [&str; 6] = [
    super::line_follower::NAME,
    super::go_to_pose::NAME,
    super::calibration::NAME,
    <super::DriveDistance as super::Motion>::NAME,
    <super::RotateAngle as super::Motion>::NAME,
    <super::NavigateToPosition as super::Motion>::NAME,
];

/// Makes one controller instance for the robot of `init`, declaring its endpoints there.
pub type ControllerFactory =
    Box<dyn Fn(&mut ControllerInit) -> Result<Box<dyn Controller>, DeclareError> + Send>;

/// Why a registration was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// The name is taken (or is `ros` / `joint`).
    #[error("controller name `{0}` is taken")]
    Taken(&'static str),
    /// Not `[a-z][a-z0-9_]*`.
    #[error("controller name `{0}` is not valid ([a-z][a-z0-9_]*)")]
    BadName(&'static str),
    /// More than [`MAX_CONTROLLERS`].
    #[error("more than {MAX_CONTROLLERS} controllers")]
    Full,
}

/// Controller factories by name, in registration order (the order of their owner ids).
#[derive(Default)]
pub struct Registry {
    entries: Vec<(&'static str, ControllerFactory)>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.entries.iter().map(|e| e.0))
            .finish()
    }
}

/// One robot slot's controller instances, in registry order.
type RobotControllers = Box<[Box<dyn Controller>]>;

/// Every robot slot's controller instances, in registry order (moved into the RT loop).
pub struct RtControllers {
    /// `per_robot[robot][controller]`.
    per_robot: Box<[RobotControllers]>,
}

impl std::fmt::Debug for RtControllers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RtControllers")
            .field("robots", &self.per_robot.len())
            .finish_non_exhaustive()
    }
}

impl RtControllers {
    /// No controllers (only `ros` and `joint` can own the wheels).
    pub fn none() -> Self {
        RtControllers {
            per_robot: Box::new([]),
        }
    }

    /// Robot `robot`'s instances (empty if it has none).
    pub fn robot(&mut self, robot: RobotId) -> &mut [Box<dyn Controller>] {
        match self.per_robot.get_mut(robot.index()) {
            Some(c) => c,
            None => &mut [],
        }
    }

    /// Controllers per robot.
    pub fn len(&self) -> usize {
        self.per_robot.first().map_or(0, |c| c.len())
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Calls [`Controller::close`] on every instance (NRT side, once the RT thread ended; see
    /// [`crate::rtloop::RtExit::controllers`]); returns how many.
    pub fn close_all(&mut self) -> usize {
        let mut n = 0;
        for c in self.per_robot.iter_mut().flat_map(|r| r.iter_mut()) {
            c.close();
            n += 1;
        }
        n
    }
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Registry::default()
    }

    /// The controllers thymio-rt ships, in this order (their owner ids): [`SHIPPED`].
    pub fn shipped() -> Self {
        let mut r = Registry::new();
        // The names are valid and distinct: these cannot fail.
        let _ = r.register(
            super::line_follower::NAME,
            Box::new(|init| Ok(Box::new(super::LineFollower::new(init)?))),
        );
        let _ = r.register(
            super::go_to_pose::NAME,
            Box::new(|init| Ok(Box::new(super::GoToPose::new(init)?))),
        );
        let _ = r.register(
            super::calibration::NAME,
            Box::new(super::CalibrateMotors::factory),
        );
        r.register_goal::<super::DriveDistance>();
        r.register_goal::<super::RotateAngle>();
        r.register_goal::<super::NavigateToPosition>();
        r
    }

    /// Registers the goal controller of motion `M` under `M::NAME` (shipped names: cannot fail).
    fn register_goal<M: super::Motion + std::fmt::Debug>(&mut self) {
        let _ = self.register(M::NAME, Box::new(super::GoalController::<M>::factory));
    }

    /// Adds `factory` under `name` (its owner name and `~/controllers/<name>/`).
    pub fn register(
        &mut self,
        name: &'static str,
        factory: ControllerFactory,
    ) -> Result<(), RegistryError> {
        let mut c = name.chars();
        let valid = c.next().is_some_and(|f| f.is_ascii_lowercase())
            && c.all(|x| x.is_ascii_lowercase() || x.is_ascii_digit() || x == '_');
        if !valid {
            return Err(RegistryError::BadName(name));
        }
        if matches!(name, "ros" | "joint") || self.entries.iter().any(|e| e.0 == name) {
            return Err(RegistryError::Taken(name));
        }
        if self.entries.len() >= MAX_CONTROLLERS {
            return Err(RegistryError::Full);
        }
        self.entries.push((name, factory));
        Ok(())
    }

    /// The names, in owner-id order.
    pub fn names(&self) -> Vec<&'static str> {
        self.entries.iter().map(|e| e.0).collect()
    }

    /// Whether a controller is registered under `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.entries.iter().any(|e| e.0 == name)
    }

    /// The parameters controller `name` declares (`None`: not registered), learnt from a throw-away
    /// instance for robot slot 0 (NRT side, before the RT thread starts).
    pub fn param_decls(&self, name: &str) -> Option<Result<Vec<ParamDecl>, DeclareError>> {
        let (name, factory) = self.entries.iter().find(|e| e.0 == name)?;
        let mut init = ControllerInit::new(RobotId(0), name);
        Some(factory(&mut init).map(|_| init.finish_ports().params.decls().to_vec()))
    }

    /// Keeps the controllers for which `keep` is true, in registration order: those are the ones
    /// [`Registry::instantiate`] loads, and their owner ids follow from this order.
    pub fn retain(&mut self, mut keep: impl FnMut(&str) -> bool) {
        self.entries.retain(|e| keep(e.0));
    }

    /// One instance of every controller for each of `robots` slots (NRT side, before the RT
    /// thread starts): the RT instances and the NRT ports.
    pub fn instantiate(&self, robots: usize) -> Result<(RtControllers, NrtControl), DeclareError> {
        let robots = robots.min(MAX_ROBOTS);
        let mut per_robot = Vec::with_capacity(robots);
        let mut ports = Vec::with_capacity(robots * self.entries.len());
        for r in 0..robots {
            let mut mine = Vec::with_capacity(self.entries.len());
            for (name, factory) in &self.entries {
                let mut init = ControllerInit::new(RobotId(r as u8), name);
                mine.push(factory(&mut init)?);
                ports.push(init.finish_ports());
            }
            per_robot.push(mine.into_boxed_slice());
        }
        Ok((
            RtControllers {
                per_robot: per_robot.into_boxed_slice(),
            },
            NrtControl {
                names: OwnerNames::new(self.names()),
                ports,
            },
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use handoff::OwnerId;

    #[test]
    fn the_shipped_registry_names_its_controllers_and_declares_their_ports() {
        let r = Registry::shipped();
        assert_eq!(r.names(), SHIPPED);
        let (mut rt, nrt) = r.instantiate(2).unwrap();
        assert_eq!(rt.len(), 6);
        assert_eq!(rt.robot(RobotId(1)).len(), 6);
        assert!(rt.robot(RobotId(2)).is_empty());
        assert_eq!(nrt.names.id("go_to_pose"), Some(OwnerId::controller(1)));
        assert_eq!(nrt.ports.len(), 12);
        // the calibration action's private port
        let cal = &nrt.ports[2];
        assert_eq!(cal.controller, "calibrate_motors");
        let private = cal
            .private
            .as_ref()
            .map(|p| p.0.is::<handoff::NrtCalibrationPort>());
        assert_eq!(private, Some(true));
        let gtp = &nrt.ports[1];
        let names: Vec<_> = gtp.endpoints.iter().map(|e| e.name()).collect();
        assert_eq!(names, ["goal", "goal_pose", "set_goal", "reached"]);
        assert_eq!(gtp.params.get("max_linear"), Some(0.1));
        let decls = r.param_decls("go_to_pose").unwrap().unwrap();
        assert!(decls
            .iter()
            .any(|d| d.name == "max_linear" && d.default == 0.1));
        assert!(r.param_decls("nope").is_none());
        let mut kept = Registry::shipped();
        kept.retain(|n| n == "navigate_to_position" || n == "line_follower");
        let (_, nrt) = kept.instantiate(1).unwrap();
        // owner ids follow the registration order of the loaded ones only
        assert_eq!(
            nrt.names.id("navigate_to_position"),
            Some(OwnerId::controller(1))
        );
        assert_eq!(nrt.names.id("go_to_pose"), None);
        assert_eq!(nrt.ports.len(), 2);
        let mut bad = Registry::new();
        assert_eq!(
            bad.register(
                "joint",
                Box::new(|i| Ok(Box::new(crate::controllers::GoToPose::new(i)?)))
            ),
            Err(RegistryError::Taken("joint"))
        );
    }
}
