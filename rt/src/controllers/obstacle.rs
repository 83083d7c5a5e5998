//! The shipped controller: an obstacle-stop reflex on the proximity sensors, running in the RT
//! cycle so that it works however slow ROS is. Forward motion stops when a front sensor sees
//! something close, backward motion when a rear one does; turning in place stays allowed. It
//! filters every owner's command: a twist loses its linear part, wheel speeds or raw targets
//! lose their common (forward) part and keep their difference (the turn).

use super::reflex::{hold_translation, ReflexEvent, ReflexState};
use super::{Filter, Reflex, RobotView};
use handoff::{Intake, RecInput, RobotId, RtIntake, RtLatest, RtPublisher, WheelCommand};

/// Tunables (changeable at run time through an [`RtLatest`] cell).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ObstacleStopParams {
    /// Off switch.
    pub enabled: bool,
    /// Raw reading at or above which a sensor blocks (0 far … ≈4500 touching; 2000 ≈ 9.6 cm
    /// with the default distance model).
    pub threshold: i16,
    /// Readings older than this are ignored (ns).
    pub max_age_ns: u64,
}

/// Taken from its live cell, recorded as [`RecInput::ReflexParams`] of reflex 0 (the obstacle stop): a replay
/// puts them back.
impl Intake for ObstacleStopParams {
    type Value = Self;
    type Key = ();
    fn rec_input((): (), p: Self, _: (RobotId, u8)) -> RecInput {
        RecInput::ReflexParams {
            reflex: 0,
            enabled: p.enabled,
            threshold: p.threshold,
            samples: 0,
            max_age_ns: p.max_age_ns,
        }
    }
}

impl Default for ObstacleStopParams {
    fn default() -> Self {
        ObstacleStopParams {
            enabled: true,
            threshold: 2000,
            max_age_ns: 500_000_000,
        }
    }
}

/// Obstacle-stop reflex.
#[derive(Debug)]
pub struct ObstacleStop {
    params: ObstacleStopParams,
    live: Option<RtIntake<ObstacleStopParams>>,
    state: ReflexState,
}

impl ObstacleStop {
    /// With fixed parameters.
    pub fn new(params: ObstacleStopParams) -> Self {
        ObstacleStop {
            params,
            live: None,
            state: ReflexState::default(),
        }
    }

    /// Takes its parameters from an NRT-fed latest-value cell (e.g. a ROS parameter or topic).
    pub fn with_live_params(mut self, live: RtLatest<ObstacleStopParams>) -> Self {
        self.live = Some(RtIntake::new(live, ()));
        self
    }

    /// Reports engage/release edges to NRT.
    pub fn with_events(mut self, events: RtPublisher<ReflexEvent>) -> Self {
        self.state.set_events(events);
        self
    }

    /// Whether the reflex currently holds `robot`.
    pub fn engaged(&self, robot: RobotId) -> bool {
        self.state.engaged(robot)
    }
}

impl Filter for ObstacleStop {
    fn reflex(&self) -> Option<Reflex> {
        Some(Reflex::Obstacle)
    }

    fn update(&mut self, robot: &RobotView, cmd: &mut WheelCommand) {
        if let Some(live) = &mut self.live {
            self.params = live.rt_read().0;
        }
        let p = self.params;
        let fresh = robot
            .proximity_t_ns
            .is_some_and(|t| robot.now_ns.saturating_sub(t) <= p.max_age_ns);
        let mut held = false;
        if p.enabled && fresh {
            let prox = &robot.proximity;
            let front = prox[..5].iter().any(|&r| r >= p.threshold);
            let rear = prox[5..].iter().any(|&r| r >= p.threshold);
            held = hold_translation(cmd, |forward| {
                (front && forward > 0.0) || (rear && forward < 0.0)
            });
        }
        self.state.record(robot, held);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use handoff::{latest, publisher};
    use handoff::{NodeId, Pose2, Twist2};
    use msgs::thymio::{GROUND_COUNT, PROXIMITY_COUNT};

    fn twist(linear: f64, angular: f64) -> WheelCommand {
        WheelCommand::Twist(Twist2 { linear, angular })
    }

    fn view(prox: [i16; PROXIMITY_COUNT], t: Option<u64>, now: u64) -> RobotView {
        RobotView {
            robot: RobotId(3),
            node: NodeId(1),
            now_ns: now,
            pose: Pose2::default(),
            twist: Twist2::default(),
            odom_t_ns: None,
            proximity: prox,
            proximity_t_ns: t,
            link_up: true,
            stale: false,
            set_point: Twist2::default(),
            wheel_pos: [0.0; 2],
            wheel_vel: [0.0; 2],
            ground: [0; GROUND_COUNT],
            ground_t_ns: None,
            acc: [0; 3],
            acc_t_ns: None,
            owner: handoff::OwnerId::ROS,
            calibration: handoff::RobotCalibration::default(),
            reflexes: Default::default(),
        }
    }

    #[test]
    fn blocks_only_the_direction_of_the_obstacle() {
        let (pub_rt, mut pub_nrt) = publisher(8);
        let mut c = ObstacleStop::new(ObstacleStopParams::default()).with_events(pub_rt);
        let wall = view([0, 0, 3000, 0, 0, 0, 0], Some(100), 200);
        let mut cmd = twist(0.1, 0.5);
        c.update(&wall, &mut cmd);
        assert_eq!(cmd, twist(0.0, 0.5));
        assert!(c.engaged(RobotId(3)));
        let mut back = twist(-0.1, 0.0);
        c.update(&wall, &mut back);
        assert_eq!(back, twist(-0.1, 0.0));
        assert!(!c.engaged(RobotId(3)));
        let behind = view([0, 0, 0, 0, 0, 0, 2500], Some(100), 200);
        let mut rev = twist(-0.05, 0.0);
        c.update(&behind, &mut rev);
        assert_eq!(rev, twist(0.0, 0.0));
        let edges: Vec<bool> = std::iter::from_fn(|| pub_nrt.nrt_pop())
            .map(|e| e.engaged)
            .collect();
        assert_eq!(edges, [true, false, true]);
    }

    #[test]
    fn ignores_stale_or_missing_readings_and_follows_live_params() {
        let (sub_rt, mut sub_nrt) = latest(ObstacleStopParams::default());
        let mut c = ObstacleStop::new(ObstacleStopParams::default()).with_live_params(sub_rt);
        let fwd = twist(0.1, 0.0);
        let mut cmd = fwd;
        c.update(
            &view([4000; PROXIMITY_COUNT], None, 1_000_000_000),
            &mut cmd,
        );
        assert_eq!(cmd, fwd);
        c.update(
            &view([4000; PROXIMITY_COUNT], Some(0), 1_000_000_000),
            &mut cmd,
        );
        assert_eq!(cmd, fwd);
        sub_nrt.nrt_store(ObstacleStopParams {
            threshold: 5000,
            ..Default::default()
        });
        c.update(
            &view([4000; PROXIMITY_COUNT], Some(999_000_000), 1_000_000_000),
            &mut cmd,
        );
        assert_eq!(cmd, fwd);
        sub_nrt.nrt_store(ObstacleStopParams {
            enabled: true,
            threshold: 100,
            max_age_ns: 10,
        });
        c.update(
            &view([200; PROXIMITY_COUNT], Some(999_999_995), 1_000_000_000),
            &mut cmd,
        );
        assert_eq!(cmd, twist(0.0, 0.0));
    }

    #[test]
    fn wheel_speeds_and_targets_keep_only_their_turn() {
        let mut c = ObstacleStop::new(ObstacleStopParams::default());
        let wall = view([0, 0, 3000, 0, 0, 0, 0], Some(100), 200);
        let behind = view([0, 0, 0, 0, 0, 0, 2500], Some(100), 200);
        // Forward with a left turn toward a front obstacle: only the turn is left.
        let mut w = WheelCommand::WheelSpeeds([0.0, 0.25]);
        c.update(&wall, &mut w);
        assert_eq!(w, WheelCommand::WheelSpeeds([-0.125, 0.125]));
        let mut t = WheelCommand::Targets([300, 100]);
        c.update(&wall, &mut t);
        assert_eq!(t, WheelCommand::Targets([100, -100]));
        // Backward toward the front obstacle, turning in place: untouched.
        for cmd in [
            WheelCommand::Targets([-200, -100]),
            WheelCommand::WheelSpeeds([0.1, -0.1]),
            WheelCommand::Stop,
        ] {
            let mut x = cmd;
            c.update(&wall, &mut x);
            assert_eq!(x, cmd);
        }
        let mut r = WheelCommand::Targets([-200, -100]);
        c.update(&behind, &mut r);
        assert_eq!(r, WheelCommand::Targets([-50, 50]));
    }
}
