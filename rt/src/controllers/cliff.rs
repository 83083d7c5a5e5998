//! The cliff reflex: forward motion stops when a front ground sensor sees no floor (a table's
//! edge), in the RT cycle beside the obstacle stop, however slow ROS is. Over a drop the ground
//! sensors read only ambient light (`prox.ground.delta` near 0), below even black tape; a reading
//! below the threshold from either sensor holds the robot. Turning in place and backing away stay
//! allowed: a twist loses its linear part when it is forward, wheel speeds or raw targets lose
//! their common forward part and keep their difference (the turn).

use super::reflex::{hold_translation, ReflexEvent, ReflexState};
use super::{Filter, Reflex, RobotView};
use handoff::{Intake, RecInput, RobotId, RtIntake, RtLatest, RtPublisher, WheelCommand};

/// Tunables (changeable at run time through an [`RtLatest`] cell).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CliffStopParams {
    /// Off switch.
    pub enabled: bool,
    /// `prox.ground.delta` below which a sensor sees no floor (0 void … ≈1000 white paper).
    pub threshold: i16,
    /// Readings older than this are ignored (ns).
    pub max_age_ns: u64,
}

/// Taken from its live cell, recorded as [`RecInput::ReflexParams`] of reflex 1 (the cliff stop): a replay
/// puts them back.
impl Intake for CliffStopParams {
    type Value = Self;
    type Key = ();
    fn rec_input((): (), p: Self, _: (RobotId, u8)) -> RecInput {
        RecInput::ReflexParams {
            reflex: 1,
            enabled: p.enabled,
            threshold: p.threshold,
            samples: 0,
            max_age_ns: p.max_age_ns,
        }
    }
}

impl Default for CliffStopParams {
    fn default() -> Self {
        CliffStopParams {
            enabled: true,
            threshold: 30,
            max_age_ns: 500_000_000,
        }
    }
}

/// Cliff-stop reflex (engage/release edges as [`ReflexEvent`]s).
#[derive(Debug)]
pub struct CliffStop {
    params: CliffStopParams,
    live: Option<RtIntake<CliffStopParams>>,
    state: ReflexState,
}

impl CliffStop {
    /// With fixed parameters.
    pub fn new(params: CliffStopParams) -> Self {
        CliffStop {
            params,
            live: None,
            state: ReflexState::default(),
        }
    }

    /// Takes its parameters from an NRT-fed latest-value cell (a ROS parameter).
    pub fn with_live_params(mut self, live: RtLatest<CliffStopParams>) -> Self {
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

impl Filter for CliffStop {
    fn reflex(&self) -> Option<Reflex> {
        Some(Reflex::Cliff)
    }

    fn update(&mut self, robot: &RobotView, cmd: &mut WheelCommand) {
        if let Some(live) = &mut self.live {
            self.params = live.rt_read().0;
        }
        let p = self.params;
        let fresh = robot
            .ground_t_ns
            .is_some_and(|t| robot.now_ns.saturating_sub(t) <= p.max_age_ns);
        let no_floor = p.enabled && fresh && robot.ground.iter().any(|&g| g < p.threshold);
        let held = no_floor && hold_translation(cmd, |forward| forward > 0.0);
        self.state.record(robot, held);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use handoff::{latest, publisher, RobotId, Twist2};
    use msgs::thymio::GROUND_COUNT;

    fn twist(linear: f64, angular: f64) -> WheelCommand {
        WheelCommand::Twist(Twist2 { linear, angular })
    }

    fn view(ground: [i16; GROUND_COUNT], t: Option<u64>, now: u64) -> RobotView {
        RobotView {
            robot: RobotId(2),
            now_ns: now,
            ground,
            ground_t_ns: t,
            link_up: true,
            ..RobotView::default()
        }
    }

    #[test]
    fn stops_forward_motion_over_the_void_but_not_on_a_black_line() {
        let (pub_rt, mut pub_nrt) = publisher(8);
        let mut c = CliffStop::new(CliffStopParams::default()).with_events(pub_rt);
        // black tape under both sensors (the simulator's ≈ 60): driving on
        let mut cmd = twist(0.1, 0.2);
        c.update(&view([58, 61], Some(100), 200), &mut cmd);
        assert_eq!(cmd, twist(0.1, 0.2));
        assert!(!c.engaged(RobotId(2)));
        // the left sensor past the edge: no more forward, the turn stays
        let edge = view([3, 900], Some(100), 200);
        c.update(&edge, &mut cmd);
        assert_eq!(cmd, twist(0.0, 0.2));
        assert!(c.engaged(RobotId(2)));
        // backing away is allowed, and releases
        let mut back = twist(-0.05, 0.0);
        c.update(&edge, &mut back);
        assert_eq!(back, twist(-0.05, 0.0));
        assert!(!c.engaged(RobotId(2)));
        let edges: Vec<bool> = std::iter::from_fn(|| pub_nrt.nrt_pop())
            .map(|e| e.engaged)
            .collect();
        assert_eq!(edges, [true, false]);
    }

    #[test]
    fn wheel_speeds_and_targets_keep_only_their_turn() {
        let mut c = CliffStop::new(CliffStopParams::default());
        let edge = view([0, 0], Some(100), 200);
        let mut w = WheelCommand::WheelSpeeds([0.0, 0.25]);
        c.update(&edge, &mut w);
        assert_eq!(w, WheelCommand::WheelSpeeds([-0.125, 0.125]));
        let mut t = WheelCommand::Targets([300, 100]);
        c.update(&edge, &mut t);
        assert_eq!(t, WheelCommand::Targets([100, -100]));
        for cmd in [
            WheelCommand::Targets([-200, -100]),
            WheelCommand::WheelSpeeds([0.1, -0.1]),
            WheelCommand::Stop,
        ] {
            let mut x = cmd;
            c.update(&edge, &mut x);
            assert_eq!(x, cmd);
        }
    }

    #[test]
    fn ignores_stale_or_missing_readings_and_follows_live_params() {
        let (sub_rt, mut sub_nrt) = latest(CliffStopParams::default());
        let mut c = CliffStop::new(CliffStopParams::default()).with_live_params(sub_rt);
        let fwd = twist(0.1, 0.0);
        let mut cmd = fwd;
        c.update(&view([0, 0], None, 1_000_000_000), &mut cmd);
        assert_eq!(cmd, fwd, "no reading yet");
        c.update(&view([0, 0], Some(0), 1_000_000_000), &mut cmd);
        assert_eq!(cmd, fwd, "a stale reading");
        sub_nrt.nrt_store(CliffStopParams {
            enabled: false,
            ..Default::default()
        });
        c.update(&view([0, 0], Some(999_000_000), 1_000_000_000), &mut cmd);
        assert_eq!(cmd, fwd, "disabled");
        sub_nrt.nrt_store(CliffStopParams {
            enabled: true,
            threshold: 100,
            max_age_ns: 10,
        });
        c.update(&view([80, 900], Some(999_999_995), 1_000_000_000), &mut cmd);
        assert_eq!(
            cmd,
            twist(0.0, 0.0),
            "a higher threshold takes black for the void"
        );
    }
}
