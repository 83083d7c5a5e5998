//! One run wiring over any list of front ends: the NRT loop owns the engine and one [`Interface`] (the layer's
//! state: held calls, controllers' ports, goals), and each iteration hands them to every [`FrontEnd`] in turn. With
//! ROS 1 and ROS 2 both on, both serve everything: a switch requested on ROS 1 is confirmed on both `controller_owner`
//! topics, a controller's output is published on both.
//!
//! One iteration ([`step`]): wait for the engine's doorbell (rung by the RT thread and the front ends' I/O threads),
//! let every front end [`FrontEnd::serve`] what its clients asked (into the layer or the engine), poll the engine,
//! hand each engine event to the layer, then to every front end, let the layer [`Interface::serve`] its timers and
//! RT outputs, let every front end [`FrontEnd::publish`], and tell the RT thread whether anyone wants its frames at
//! once ([`Engine::want_frames`]).
//!
//! An iteration reacts to at most one robot's arrival ([`EngineEvent::RobotReady`]): making a robot's endpoints
//! costs a front end tens to hundreds of milliseconds (ROS 2: every endpoint announced to every participant, more with
//! each robot), and a classroom's robots all arrive together — reacting to 16 in one iteration held the loop (the
//! engine unpolled, the RT thread's event ring overflowing, the ROS 2 node taken from its spinner) for 9 s. The
//! events after such an arrival stay in the engine, in order, for the next iteration, which then does not wait.

use crate::calibration::Calibration;
use crate::controllers::Controllers;
use crate::goal_actions::GoalActions;
use crate::ground_truth::{GroundTruthSink, GroundTruthSource, GroundTruthThread};
use crate::joints::JointRates;
use crate::lifecycle::Lifecycles;
use crate::owner_switch::Switch;
use crate::report::Reporter;
use handoff::{NrtControl, RosHops};
use nrt_engine::engine::{Engine, EngineEvent};
use std::time::{Duration, Instant};

/// The layer's state, one per process, shared by every front end (see the module documentation).
pub struct Interface {
    /// The lines for ROS users (console and every front end's `/rosout`).
    pub reporter: Reporter,
    /// The `calibrate_motors` goals of every front end.
    pub calibration: Calibration,
    /// The goal actions' goals (`drive_distance`, `rotate_angle`, `navigate_to_position`) of every front end.
    pub goal_actions: GoalActions,
    /// The joint states' rate asked of the RT thread (from every front end's subscribers).
    pub joints: JointRates,
    /// The simulator's ground-truth thread, when the process runs one ([`Interface::start_ground_truth`]).
    ground_truth: Option<GroundTruthThread>,
    /// The robots' communication switches (`switch_controller`, `controller_owner`).
    pub switch: Switch,
    /// The RT controllers' ports: endpoints and parameters.
    pub controllers: Controllers,
    /// The managed robots' lifecycles (`managed: true`).
    pub lifecycle: Lifecycles,
    /// One iteration's engine events ([`step`]), kept to reuse its capacity.
    events: Vec<EngineEvent>,
}

impl Interface {
    /// The layer with nothing served yet.
    pub fn new(reporter: Reporter) -> Interface {
        Interface {
            calibration: Calibration::new(reporter.clone()),
            goal_actions: GoalActions::new(reporter.clone()),
            reporter,
            joints: JointRates::default(),
            ground_truth: None,
            switch: Switch::default(),
            controllers: Controllers::default(),
            lifecycle: Lifecycles::default(),
            events: Vec::new(),
        }
    }

    /// Publishes the simulator's true poses from `source` on every front end's `sinks` (`sim/ground_truth`, see
    /// [`crate::ground_truth`]).
    pub fn start_ground_truth(
        &mut self,
        source: Box<dyn GroundTruthSource>,
        sinks: Vec<std::sync::Arc<dyn GroundTruthSink>>,
    ) -> std::io::Result<()> {
        self.ground_truth = Some(GroundTruthThread::start(
            source,
            sinks,
            self.reporter.clone(),
        )?);
        Ok(())
    }

    /// Serves the RT controllers of `control` (their names in the switch, their endpoints and parameters) from now
    /// on; call it before the robots are driven (`Runtime::take_control`, after the calibration action took its
    /// private ports).
    pub fn serve_control(&mut self, control: NrtControl, engine: &Engine) {
        self.switch.set_names(control.names.clone());
        self.controllers = Controllers::new(control, engine.rt_bell());
    }

    /// Reacts to one engine event (before the front ends do): robots coming and going, owner reports, scripts
    /// that failed to load (reported once, for every front end).
    pub fn on_engine_event(&mut self, engine: &mut Engine, event: &EngineEvent) {
        self.calibration.on_engine_event(event);
        let managed = engine.driver_params().managed && engine.driver_params().enabled;
        self.lifecycle
            .on_engine_event(managed, engine, event, &self.reporter);
        self.goal_actions.on_engine_event(event);
        match event {
            EngineEvent::RobotReady { node, robot } => self.joints.add(*node, *robot),
            EngineEvent::RobotRemoved { node, .. } => {
                self.joints.remove(*node, &engine.live_params())
            }
            EngineEvent::ScriptFailed { node, error } => {
                self.reporter
                    .error(&crate::aseba::script_failed(*node, error));
            }
            EngineEvent::ControllerStopped { node, stop, .. } => self.reporter.warn(
                &crate::controller_budget::stopped_line(&self.switch, *node, stop),
            ),
            _ => {}
        }
        self.switch.on_engine_event(event);
        self.controllers.on_engine_event(event);
    }

    /// Serves the layer's timers (held calls that timed out) and takes what the RT side produced for the front
    /// ends to publish in this iteration.
    pub fn serve(&mut self, engine: &mut Engine, now: Instant) {
        self.calibration.serve(engine, now);
        self.goal_actions.serve(engine, now);
        if self.joints.due(now) {
            let lines = self.joints.apply(now, &engine.live_params(), |id| {
                engine.robot_params(id).joint_state_rate
            });
            for l in lines {
                self.reporter.warn(&l);
            }
        }
        self.switch.serve(now);
        self.controllers.serve(now);
    }

    /// Whether the layer wants the RT thread's frames and bursts at once (see [`Engine::want_frames`]): a goal or
    /// a calibration runs, a call to an RT controller waits for its answer.
    pub fn wants_frames(&self) -> bool {
        self.goal_actions.any_active()
            || self.calibration.any_active()
            || self.controllers.awaits_answers()
    }

    /// Answers what waited for the front ends to publish, and forgets what was published in this iteration.
    pub fn end_step(&mut self) {
        self.switch.end_step();
        self.controllers.end_step();
        self.lifecycle.end_step();
    }
}

/// A ROS front end: a transport over the layer.
pub trait FrontEnd {
    /// Its name in reports (`ROS 2`, `ROS 1`).
    fn name(&self) -> &'static str;
    /// Serves what its clients asked since the last iteration (never waits): into the layer or the engine.
    fn serve(&mut self, engine: &mut Engine, iface: &mut Interface, now: Instant);
    /// Reacts to one engine event (after the layer did): makes and removes a robot's endpoints (and its own
    /// parameters in the engine), publishes events.
    fn on_engine_event(&mut self, engine: &mut Engine, iface: &mut Interface, event: &EngineEvent);
    /// Reacts to the events of one iteration in order (after the layer did); a front end whose reactions share a
    /// costly resource (ROS 2: the node, shared with its spinner thread) takes it once for all of them.
    fn on_engine_events(
        &mut self,
        engine: &mut Engine,
        iface: &mut Interface,
        events: &[EngineEvent],
    ) {
        for event in events {
            self.on_engine_event(engine, iface, event);
        }
    }
    /// Publishes what the layer and the engine have for it in this iteration (and its periodic topics when due).
    fn publish(&mut self, engine: &Engine, iface: &Interface, now: Instant);
    /// Its `sim/ground_truth` publishers, if it publishes the simulator's ground truth (asked once, before the
    /// robots are driven; see [`Interface::start_ground_truth`]).
    fn ground_truth_sink(&mut self) -> Option<std::sync::Arc<dyn GroundTruthSink>> {
        None
    }
    /// Whether it wants the frames the RT thread reads as soon as they come (a subscriber to a topic they feed:
    /// the Aseba events, the sensor topics); when no front end, the layer or the engine does, they wait for the
    /// loop's next wake-up of its own ([`Engine::want_frames`]). Called at every iteration: keep it cheap (a
    /// front end may count its subscribers now and then). A front end that cannot tell wants them.
    fn wants_frames(&mut self, _now: Instant) -> bool {
        true
    }
    /// Whether it still serves its clients (its I/O threads run); when one stops, the loop ends.
    fn alive(&self) -> bool;
    /// The hops it timed, for `--report`.
    fn hop_times(&self) -> Option<RosHops> {
        None
    }
    /// What it says of its run when the driver stops (counters), if anything.
    fn summary(&self) -> Option<String> {
        None
    }
}

/// A front end's answer to [`FrontEnd::wants_frames`], counted again at most every [`WantsFrames::PERIOD`] (counting
/// subscribers costs a call per topic; a subscriber that just came waits at most that long for events at once, and
/// meanwhile gets them at the loop's next wake-up).
#[derive(Debug, Default)]
pub struct WantsFrames {
    last: Option<(Instant, bool)>,
}

impl WantsFrames {
    /// How long an answer is kept.
    pub const PERIOD: Duration = Duration::from_millis(500);

    /// The answer kept, or `count()`'s if it is older than [`Self::PERIOD`].
    ///
    /// ```
    /// use nrt_interface::front_end::WantsFrames;
    /// use std::time::Instant;
    ///
    /// let mut w = WantsFrames::default();
    /// let t = Instant::now();
    /// assert!(w.get(t, || true));
    /// assert!(w.get(t, || false), "kept for a while");
    /// assert!(!w.get(t + WantsFrames::PERIOD, || false));
    /// ```
    pub fn get(&mut self, now: Instant, count: impl FnOnce() -> bool) -> bool {
        match self.last {
            Some((t, wanted)) if now.saturating_duration_since(t) < Self::PERIOD => wanted,
            _ => {
                let wanted = count();
                self.last = Some((now, wanted));
                wanted
            }
        }
    }
}

/// One iteration over `front_ends`: waits at most as long as the engine allows (`spin_period` when it needs
/// polling), then serves, polls, reacts and publishes (see the module documentation).
pub fn step(
    engine: &mut Engine,
    iface: &mut Interface,
    front_ends: &mut [Box<dyn FrontEnd>],
    spin_period: Duration,
) {
    if !engine.has_events() {
        engine.doorbell().wait(engine.longest_wait(spin_period));
    }
    let now = Instant::now();
    for f in front_ends.iter_mut() {
        f.serve(engine, iface, now);
    }
    engine.poll(now);
    // the buffer is the layer's, reused from one iteration to the next (taken out while the layer is lent)
    let mut events = std::mem::take(&mut iface.events);
    events.clear();
    take_events(|| engine.next_event(), &mut events);
    for event in &events {
        iface.on_engine_event(engine, event);
    }
    for f in front_ends.iter_mut() {
        f.on_engine_events(engine, iface, &events);
    }
    iface.events = events;
    iface.serve(engine, now);
    for f in front_ends.iter_mut() {
        f.publish(engine, iface, now);
    }
    iface.end_step();
    let mut wanted = iface.wants_frames();
    for f in front_ends.iter_mut() {
        wanted |= f.wants_frames(now);
    }
    engine.want_frames(wanted);
}

/// Takes one iteration's events from `next` into `out`: all of them, or up to and with the first robot's arrival
/// (see the module documentation).
fn take_events(mut next: impl FnMut() -> Option<EngineEvent>, out: &mut Vec<EngineEvent>) {
    while let Some(event) = next() {
        let arrival = matches!(event, EngineEvent::RobotReady { .. });
        out.push(event);
        if arrival {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use handoff::{LinkId, NodeId, RobotId};
    use std::collections::VecDeque;

    fn ready(n: u16) -> EngineEvent {
        EngineEvent::RobotReady {
            node: NodeId(n),
            robot: RobotId(n as u8),
        }
    }

    #[test]
    fn an_iteration_takes_at_most_one_robots_arrival_and_leaves_the_rest_in_order() {
        let up = EngineEvent::LinkUp {
            link: LinkId(0),
            target: 0,
            kind: handoff::LinkKind::Tcp,
        };
        let loaded = EngineEvent::ScriptLoaded { node: NodeId(2) };
        let mut queue: VecDeque<EngineEvent> =
            [up.clone(), ready(1), loaded.clone(), ready(2), ready(3)].into();
        let mut iterations = Vec::new();
        while !queue.is_empty() {
            let mut out = Vec::new();
            take_events(|| queue.pop_front(), &mut out);
            iterations.push(out);
        }
        assert_eq!(
            iterations,
            vec![vec![up, ready(1)], vec![loaded, ready(2)], vec![ready(3)]]
        );
        // without an arrival, everything at once
        let mut queue: VecDeque<EngineEvent> = (0..5)
            .map(|n| EngineEvent::ScriptLoaded { node: NodeId(n) })
            .collect();
        let mut out = Vec::new();
        take_events(|| queue.pop_front(), &mut out);
        assert_eq!((out.len(), queue.len()), (5, 0));
    }
}
