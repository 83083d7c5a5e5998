//! Writing an RT controller: a `Controller` that drives straight at a live `speed` parameter
//! until it has travelled `distance` metres (odometry), publishing how far it still has to go.
//! It is registered beside the shipped controllers; the RT loop then lets it own a robot's
//! wheels when NRT requests its owner id (ROS: `switch_controller` with its name) and serves its
//! endpoints under `~/controllers/drive_straight/`.
//!
//! Run: `cargo run -p rt --example rt_controller`.

use handoff::{
    ControllerInit, DeclareError, NrtEndpoint, OwnerId, ParamId, Pose2, RobotId, RosValue,
    RtParams, RtTopicPublisher, Twist2, WheelCommand,
};
use rt::controllers::{Controller, Registry, RobotView, SHIPPED};

/// Drives `distance` metres straight ahead from where it started owning the wheels.
struct DriveStraight {
    /// RT half of its parameters (refreshed in `serve`).
    params: RtParams,
    speed: ParamId,
    distance: ParamId,
    /// `~/controllers/drive_straight/remaining` (std_msgs/Float64).
    remaining: RtTopicPublisher<f64>,
    start: Option<Pose2>,
}

impl DriveStraight {
    /// NRT side, once per robot slot: declare the endpoints and parameters.
    fn new(init: &mut ControllerInit) -> Result<Self, DeclareError> {
        let speed = init.parameter("speed", 0.05, 0.0, 0.2, "forward speed (m/s)")?;
        let distance = init.parameter("distance", 0.3, 0.0, 5.0, "how far to go (m)")?;
        let remaining = init.publisher::<f64>("remaining", 16)?;
        Ok(DriveStraight {
            // After the last parameter: their RT half.
            params: init.rt_params(),
            speed,
            distance,
            remaining,
            start: None,
        })
    }
}

/// RT side: no allocation, no lock, no blocking call, no panic in any of these.
impl Controller for DriveStraight {
    fn start(&mut self, robot: &RobotView) {
        self.start = Some(robot.pose);
    }

    fn stop(&mut self, _robot: &RobotView) {
        self.start = None;
    }

    fn serve(&mut self, _robot: &RobotView, _owner: bool) {
        self.params.rt_refresh();
    }

    fn update(&mut self, robot: &RobotView) -> WheelCommand {
        let Some(s) = self.start else {
            return WheelCommand::Stop;
        };
        let done = (robot.pose.x - s.x).hypot(robot.pose.y - s.y);
        let left = (self.params.get(self.distance) - done).max(0.0);
        self.remaining.rt_publish(left); // a full queue drops (counted), never blocks
        if left == 0.0 {
            return WheelCommand::Stop;
        }
        WheelCommand::Twist(Twist2 {
            linear: self.params.get(self.speed),
            angular: 0.0,
        })
    }
}

fn main() {
    // Register it beside the shipped controllers: its owner id follows theirs.
    let mut registry = Registry::shipped();
    registry
        .register(
            "drive_straight",
            Box::new(|init| Ok(Box::new(DriveStraight::new(init)?))),
        )
        .expect("a free, valid name");
    // One instance per robot slot: RT halves for `rt::rtloop::spawn`, NRT halves for the ROS
    // front end (`NrtControl`, as `Runtime::take_control` hands them over).
    let (mut rt_controllers, mut nrt) = registry.instantiate(1).expect("valid declarations");
    let owner = nrt.names.id("drive_straight").expect("registered");
    assert_eq!(owner, OwnerId::controller(SHIPPED.len() as u8));
    let ports = nrt
        .ports
        .iter_mut()
        .find(|p| p.controller == "drive_straight")
        .expect("its ports");
    ports.params.nrt_set("distance", 0.1).expect("in range"); // a ROS parameter write

    // What the RT loop does with the owner of robot 0, cycle after cycle (here by hand).
    let c = &mut rt_controllers.robot(RobotId(0))[owner.controller_index().expect("a controller")];
    let mut view = RobotView {
        owner,
        ..RobotView::default()
    };
    c.serve(&view, true);
    c.start(&view);
    for _ in 0..3 {
        c.serve(&view, true);
        println!("{:?}", c.update(&view));
        view.pose.x += 0.05;
    }
    let NrtEndpoint::Publisher { nrt: remaining, .. } = &mut ports.endpoints[0] else {
        unreachable!("declared as a publisher")
    };
    remaining.nrt_drain(|v| {
        if let RosValue::Float64(m) = v {
            println!("remaining {m:.2} m");
        }
    });
}

/// `cargo test` runs the example (`test = true` in rt/Cargo.toml), so that it keeps up with the API
/// it shows.
#[cfg(test)]
mod tests {
    #[test]
    fn the_example_runs() {
        super::main();
    }
}
