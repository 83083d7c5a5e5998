//! A line follower on the two ground sensors (`prox.ground.delta`: high on a bright floor, low
//! on a dark line), closed-loop in the RT cycle: a PD law on the difference of the sensors'
//! darkness steers, the robot cruises at a constant speed.
//!
//! The Thymio samples its ground sensors at 10 Hz (the `prox` event): the law runs on each new
//! reading (the derivative over the time between readings), so the cruise speed must leave
//! several readings per line width (the default, 5 cm/s, moves 5 mm per reading).
//!
//! When both sensors see the floor the line is lost: the robot turns in place toward the side
//! it last saw the line on (`search_turn`), for at most `lost_timeout`; then it stops, says so
//! on `line_lost` and waits until a sensor sees the line again.
//!
//! ROS (under `~/controllers/line_follower/`): publisher `line_lost` (`std_msgs/Bool`, on
//! change); parameters below, applied live.

use super::{Controller, RobotView};
use handoff::{
    ControllerInit, DeclareError, ParamId, RtParams, RtTopicPublisher, Twist2, WheelCommand,
};

/// Registry name (and owner name).
pub const NAME: &str = "line_follower";

/// The line follower of one robot.
#[derive(Debug)]
pub struct LineFollower {
    params: RtParams,
    p: Params,
    line_lost: RtTopicPublisher<bool>,
    /// Receive time of the reading last used.
    last_reading: Option<u64>,
    /// RT time at which that reading was first seen (for the derivative).
    last_seen_ns: u64,
    /// Error of the previous reading.
    last_error: f64,
    /// Side the line was last seen on: +1 left, −1 right.
    side: f64,
    /// RT time the line was last seen (`None`: not since start).
    line_ns: Option<u64>,
    /// Steering in effect (rad/s), held between readings.
    angular: f64,
    /// Forward speed in effect (m/s).
    linear: f64,
    /// `line_lost` as last published.
    lost: Option<bool>,
}

#[derive(Debug, Clone, Copy)]
struct Params {
    cruise: ParamId,
    kp: ParamId,
    kd: ParamId,
    dark: ParamId,
    bright: ParamId,
    lost_timeout: ParamId,
    search_turn: ParamId,
}

impl LineFollower {
    /// Declares its endpoints and parameters for the robot of `init`.
    pub fn new(init: &mut ControllerInit) -> Result<Self, DeclareError> {
        let p = Params {
            cruise: init.parameter(
                "cruise_speed",
                0.05,
                0.0,
                0.2,
                "forward speed on the line (m/s); readings come at 10 Hz",
            )?,
            kp: init.parameter(
                "kp",
                1.2,
                0.0,
                10.0,
                "steering per unit of darkness difference (rad/s)",
            )?,
            kd: init.parameter(
                "kd",
                0.05,
                0.0,
                2.0,
                "steering per unit/s of the difference's change (rad)",
            )?,
            dark: init.parameter(
                "dark",
                200.0,
                0.0,
                1023.0,
                "ground reading at or below which a sensor is fully on the line",
            )?,
            bright: init.parameter(
                "bright",
                700.0,
                1.0,
                1023.0,
                "ground reading at or above which a sensor is fully on the floor",
            )?,
            lost_timeout: init.parameter(
                "lost_timeout",
                3.0,
                0.0,
                60.0,
                "search this long (s) after losing the line, then stop",
            )?,
            search_turn: init.parameter(
                "search_turn",
                0.6,
                0.0,
                3.0,
                "turn rate while searching for the line (rad/s)",
            )?,
        };
        let line_lost = init.publisher::<bool>("line_lost", 8)?;
        Ok(LineFollower {
            params: init.rt_params(),
            p,
            line_lost,
            last_reading: None,
            last_seen_ns: 0,
            last_error: 0.0,
            side: 1.0,
            line_ns: None,
            angular: 0.0,
            linear: 0.0,
            lost: None,
        })
    }

    /// How dark a reading is: 0 on the floor … 1 on the line.
    fn darkness(&self, g: i16) -> f64 {
        let dark = self.params.get(self.p.dark);
        let bright = self.params.get(self.p.bright).max(dark + 1.0);
        ((bright - g as f64) / (bright - dark)).clamp(0.0, 1.0)
    }

    fn publish_lost(&mut self, lost: bool) {
        if self.lost != Some(lost) {
            self.lost = Some(lost);
            self.line_lost.rt_publish(lost);
        }
    }

    /// Takes a new ground reading, if any, and updates the steering.
    fn on_reading(&mut self, robot: &RobotView) {
        let Some(t) = robot.ground_t_ns else {
            return;
        };
        if self.last_reading == Some(t) {
            return;
        }
        let first = self.last_reading.is_none();
        self.last_reading = Some(t);
        let [l, r] = robot.ground.map(|g| self.darkness(g));
        let now = robot.now_ns;
        let dt = now.saturating_sub(self.last_seen_ns) as f64 * 1e-9;
        self.last_seen_ns = now;
        if l.max(r) < 0.5 {
            // Both on the floor: lost (searching toward the side last seen).
            self.linear = 0.0;
            self.angular = self.side * self.params.get(self.p.search_turn);
            return;
        }
        self.line_ns = Some(now);
        // Line to the left → left sensor darker → positive error → turn left.
        let e = l - r;
        if e.abs() > 0.1 {
            self.side = e.signum();
        }
        let de = if first || dt <= 0.0 || self.lost == Some(true) {
            0.0
        } else {
            (e - self.last_error) / dt.max(0.02)
        };
        self.last_error = e;
        self.angular = self.params.get(self.p.kp) * e + self.params.get(self.p.kd) * de;
        self.linear = self.params.get(self.p.cruise);
    }
}

impl Controller for LineFollower {
    fn start(&mut self, robot: &RobotView) {
        self.last_reading = None;
        self.last_error = 0.0;
        self.angular = 0.0;
        self.linear = 0.0;
        self.line_ns = Some(robot.now_ns);
        self.lost = None;
        self.publish_lost(false);
    }

    fn stop(&mut self, _robot: &RobotView) {
        self.linear = 0.0;
        self.angular = 0.0;
    }

    fn serve(&mut self, _robot: &RobotView, _owner: bool) {
        self.params.rt_refresh();
    }

    fn update(&mut self, robot: &RobotView) -> WheelCommand {
        self.on_reading(robot);
        let timeout = (self.params.get(self.p.lost_timeout) * 1e9) as u64;
        let lost = self
            .line_ns
            .is_none_or(|t| robot.now_ns.saturating_sub(t) > timeout);
        self.publish_lost(lost);
        if lost {
            return WheelCommand::Stop;
        }
        WheelCommand::Twist(Twist2 {
            linear: self.linear,
            angular: self.angular,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use handoff::{NodeId, NrtEndpoint, OwnerId, Pose2, RobotCalibration, RobotId, RosValue};
    use msgs::thymio::{GROUND_COUNT, PROXIMITY_COUNT};

    fn view(ground: [i16; GROUND_COUNT], t: u64, now: u64) -> RobotView {
        RobotView {
            robot: RobotId(0),
            node: NodeId(1),
            now_ns: now,
            pose: Pose2::default(),
            twist: Twist2::default(),
            odom_t_ns: None,
            wheel_pos: [0.0; 2],
            wheel_vel: [0.0; 2],
            proximity: [0; PROXIMITY_COUNT],
            proximity_t_ns: None,
            ground,
            ground_t_ns: Some(t),
            acc: [0; 3],
            acc_t_ns: None,
            link_up: true,
            stale: false,
            set_point: Twist2::default(),
            owner: OwnerId::controller(0),
            calibration: RobotCalibration::default(),
            reflexes: Default::default(),
        }
    }

    fn twist(c: WheelCommand) -> Twist2 {
        match c {
            WheelCommand::Twist(t) => t,
            WheelCommand::Stop => Twist2::default(),
            other => panic!("{other:?}"),
        }
    }

    const MS: u64 = 1_000_000;

    #[test]
    fn steers_toward_the_line_and_searches_then_stops_when_it_is_lost() {
        let mut init = ControllerInit::new(RobotId(0), NAME);
        let mut c = LineFollower::new(&mut init).unwrap();
        let mut ports = init.finish_ports();
        c.start(&view([60, 60], 1, 0));
        // Both on the line: straight at cruise speed.
        let t = twist(c.update(&view([60, 60], 1, MS)));
        assert_eq!((t.linear, t.angular), (0.05, 0.0));
        // The line to the left (right sensor on the floor): turn left.
        let t = twist(c.update(&view([60, 950], 2, 100 * MS)));
        assert!(t.angular > 1.0 && t.linear == 0.05, "{t:?}");
        // Held between readings.
        assert_eq!(twist(c.update(&view([60, 950], 2, 150 * MS))), t);
        // To the right: turn right.
        let t = twist(c.update(&view([950, 60], 3, 200 * MS)));
        assert!(t.angular < -1.0, "{t:?}");
        // Both on the floor: turn in place toward the right (seen last), then stop after 3 s.
        let t = twist(c.update(&view([950, 950], 4, 300 * MS)));
        assert_eq!((t.linear, t.angular), (0.0, -0.6));
        assert_eq!(
            c.update(&view([950, 950], 5, 3300 * MS)),
            WheelCommand::Stop
        );
        // Found again: it goes on.
        let t = twist(c.update(&view([60, 60], 6, 3400 * MS)));
        assert_eq!(t.linear, 0.05);
        let NrtEndpoint::Publisher { nrt, .. } = &mut ports.endpoints[0] else {
            panic!("line_lost is a publisher")
        };
        let mut lost = Vec::new();
        nrt.nrt_drain(|v| lost.push(v));
        assert_eq!(
            lost,
            [false, true, false].map(RosValue::Bool),
            "line_lost on change"
        );
    }

    #[test]
    fn gains_are_live_parameters() {
        let mut init = ControllerInit::new(RobotId(0), NAME);
        let mut c = LineFollower::new(&mut init).unwrap();
        let mut ports = init.finish_ports();
        ports.params.nrt_set("kp", 0.0).unwrap();
        ports.params.nrt_set("kd", 0.0).unwrap();
        ports.params.nrt_set("cruise_speed", 0.1).unwrap();
        let v = view([60, 950], 2, 100 * MS);
        c.serve(&v, true);
        c.start(&v);
        let t = twist(c.update(&v));
        assert_eq!((t.linear, t.angular), (0.1, 0.0));
    }
}
