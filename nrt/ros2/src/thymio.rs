//! The Thymio driver's ROS interface (ROS-Thymio's names and types, ros-aseba-interface.md
//! §3.3–3.4), one per robot driven by the RT thread, under the robot node's namespace:
//! odometry from the RT domain (`odom`, `/tf`, `joint_states`: published by the odometry
//! publisher thread, [`super::odom_pub`], with the publishers made here), sensors from the
//! events of the robot script (REP-117 ranges, laser scan, IMU, buttons, …), actuators
//! validated and sent as script events, `cmd_vel` to the RT set-point (taken on the hot node,
//! [`super::hot`]; the RT watchdog stops a robot left without commands), the robot model
//! (`robot_description`, `/tf_static`), `is_ready` and the emergency stop (`emergency_stop`: a SetBool service and
//! a latched Bool topic).

use super::drain;
use super::names::{check_namespace, NameError};
use super::odom_pub::{OdomRobot, OdomTargets, Ros2Out};
use super::report::Reporter;
use super::sensor_publishers::SensorPublishers;
use super::spinner::{NodeAccess, SharedNode, TaskId};
use super::thymio_conv::{self as conv, Frames};
use super::thymio_endpoints::{
    actuator_messages, cmd_vel_task, latched, latest_command, plain_command, reliable,
    stamped_command, topic, CmdVelTarget, Inputs, Outputs, DEPTH,
};
use handoff::{NodeId, RobotId};
use nrt_engine::engine::{Engine, EngineEvent};
use nrt_engine::thymio::events::RobotEvent;
use nrt_interface::actuators::{self, Alarm, RobotCommand};
use nrt_interface::cmd_vel::CmdVelGate;
use nrt_interface::driver_events::{self, DriverEvents};
use nrt_interface::frames as robot_frames;
use nrt_interface::geometry::{self, Stamp, Transform};
use nrt_interface::hop_times::HopHistogram;
use nrt_interface::odometry::{self, OdomSettings};
use nrt_interface::sensor_topics::{self, SensorMessage, SensorTopic};
use nrt_interface::tf::{self, StaticFrames};
use r2r::geometry_msgs::msg::{Twist, TwistStamped};
use r2r::std_msgs::msg::{Bool, String as RosString};
use r2r::tf2_msgs::msg::TFMessage;
use r2r::Publisher;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// The interface of one robot.
struct RobotInterface {
    node: NodeId,
    /// Its RT slot.
    robot: RobotId,
    /// Its `cmd_vel` subscription (on the hot node), drained on the hot node's thread.
    cmd_vel: TaskId,
    /// The odometry settings the odometry publisher has (to pass on live changes).
    settings: Option<OdomSettings>,
    /// Stamped `cmd_vel` ignored as older than `cmd_vel_timeout`.
    stale_cmd_vel: Arc<AtomicU64>,
    frames: Frames,
    out: Outputs,
    inp: Inputs,
    /// Its alarm.
    alarm: Alarm,
    /// Its `odom`, fully qualified (another driver publishing it is a rival: [`nrt_engine::rivals`]).
    odom_topic: String,
    /// Whether the odometry publisher thread publishes its `~/cmd_vel_out` (its
    /// `publish_limited_velocity`, followed live by [`ThymioInterface::poll_ros`]).
    limited_velocity: Arc<AtomicBool>,
    /// Whether its wheel transforms are the driver's (`publish_model`; else the user's robot_state_publisher's).
    wheel_tf: bool,
}

impl RobotInterface {
    /// What the odometry publisher thread needs of this robot.
    fn odom_robot(&self, settings: &OdomSettings, max_rate: f64) -> OdomRobot {
        OdomRobot {
            node: self.node,
            out: Ros2Out {
                odom: self.out.odom.clone(),
                joints: self.out.joints.clone(),
                cmd_vel_out: self.out.cmd_vel_out.clone(),
            },
            frames: self.frames.clone(),
            settings: settings.clone(),
            max_rate,
            limited_velocity: self.limited_velocity.clone(),
            wheel_tf: self.wheel_tf,
        }
    }
}

/// The Thymio driver interface of the bridge node.
pub struct ThymioInterface {
    reporter: Reporter,
    /// The hot node, which holds the `cmd_vel` subscriptions.
    hot: Arc<SharedNode>,
    /// Times `cmd_vel` taken → set-point stored.
    cmd_vel_timer: HopHistogram,
    /// The robots the odometry publisher thread publishes (with `/tf`).
    odom: OdomTargets,
    tf_static: Publisher<TFMessage>,
    static_frames: StaticFrames,
    robots: BTreeMap<NodeId, RobotInterface>,
}

/// Why a robot interface could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ThymioError {
    /// A namespace that cannot be a ROS name.
    #[error(transparent)]
    Name(#[from] NameError),
    /// rcl refused an entity.
    #[error("rcl: {0}")]
    Rcl(#[from] r2r::Error),
}

impl ThymioInterface {
    /// Whether anyone subscribes to a robot's sensor or event topic (`proximity/*`, `ground/*`, `buttons/*`, ...):
    /// the frames and proximity readings that feed them are then wanted at once.
    pub fn sensors_heard(&self) -> bool {
        self.robots
            .values()
            .any(|r| r.out.sensors.values().any(|p| p.subscribed()))
    }

    /// The shared publishers (`/tf`, `/tf_static`); `cmd_vel` subscriptions go on `hot` and
    /// their hop is timed in `cmd_vel_timer`.
    pub fn new(
        node: &mut r2r::Node,
        reporter: Reporter,
        hot: Arc<SharedNode>,
        cmd_vel_timer: HopHistogram,
    ) -> Result<ThymioInterface, r2r::Error> {
        Ok(ThymioInterface {
            reporter,
            hot,
            cmd_vel_timer,
            odom: OdomTargets::new(node.create_publisher("/tf", reliable(100))?),
            tf_static: node.create_publisher("/tf_static", latched())?,
            static_frames: StaticFrames::default(),
            robots: BTreeMap::new(),
        })
    }

    /// Every driven robot's `odom`, fully qualified.
    pub fn odom_topics(&self) -> Vec<String> {
        self.robots.values().map(|r| r.odom_topic.clone()).collect()
    }

    /// The robots whose odometry the publisher thread publishes (made and updated here).
    pub fn odom_targets(&self) -> OdomTargets {
        self.odom.clone()
    }

    /// Reacts to the engine as the layer routes it (`nrt_interface::driver_events`): new robots, proximity,
    /// script events (odometry is published by the odometry publisher thread, not here).
    pub fn on_engine_event(&mut self, node: &mut NodeAccess, engine: &Engine, event: &EngineEvent) {
        driver_events::on_engine_event(&mut WithNode { thymio: self, node }, engine, event);
    }

    fn add_robot(
        &mut self,
        access: &mut NodeAccess,
        engine: &Engine,
        id: NodeId,
        robot: RobotId,
    ) -> Result<(), ThymioError> {
        let node = access.get();
        // the robot's own parameters (its `thymio_driver` node's, see `driver_node`)
        let params = engine.robot_params(id);
        let ns = robot_frames::robot_namespace(engine, id);
        check_namespace(&ns)?;
        let ros_ns = node.namespace().unwrap_or_default();
        let frames = Frames::of_robot(engine, id, &ros_ns);
        let t = |leaf: &str| topic(&ns, leaf);
        let odom_topic = format!("{}/{}", ros_ns.trim_end_matches('/'), t("odom"));
        let out = Outputs::create(node, &t, params.sensor_data_qos)?;
        let gate = CmdVelGate::new(engine.live_params(), robot, id, params.cmd_vel_timeout);
        let stale_cmd_vel = gate.stale_count();
        let target = CmdVelTarget {
            gate,
            reporter: self.reporter.clone(),
            timer: self.cmd_vel_timer.clone(),
        };
        let cmd_vel = {
            let mut hot = self.hot.access();
            let hot = hot.get();
            if params.cmd_vel_stamped {
                let sub = hot.subscribe::<TwistStamped>(&t("cmd_vel"), reliable(DEPTH))?;
                cmd_vel_task(Box::new(sub), stamped_command, target)
            } else {
                // no stamp: never redelivered late (see latest_command)
                let sub = hot.subscribe::<Twist>(&t("cmd_vel"), latest_command())?;
                cmd_vel_task(Box::new(sub), plain_command, target)
            }
        };
        let inp = Inputs::create(node, &t)?;
        // without the driver's model, the wheels on /tf are the user's robot_state_publisher's
        let description = robot_frames::robot_description(engine, id, &frames);
        let wheel_tf = description.is_some();
        if let Some(urdf) = description {
            if let Err(e) = out.description.publish(&RosString { data: urdf }) {
                self.reporter
                    .warn(&format!("node {id}: cannot publish robot_description: {e}"));
            }
            let own = tf::static_transforms(geometry::now(), &frames);
            self.replace_static_frames(id, &frames.prefix, own);
        }
        let cmd_vel = self.hot.add_task(cmd_vel);
        let settings = OdomSettings::of(engine, id);
        let limited = odometry::publishes_limited_velocity(engine, id);
        let r = RobotInterface {
            node: id,
            robot,
            cmd_vel,
            settings,
            stale_cmd_vel,
            frames,
            out,
            inp,
            alarm: Alarm::default(),
            odom_topic,
            limited_velocity: Arc::new(AtomicBool::new(limited)),
            wheel_tf,
        };
        if let Some(settings) = &r.settings {
            self.odom
                .insert(robot, r.odom_robot(settings, params.odom_max_rate));
        }
        self.robots.insert(id, r);
        // Latched: a late subscriber learns whether the reflex holds the robot.
        self.publish_obstacle_stop(id, false);
        self.publish_cliff_stop(id, false);
        self.publish_emergency_stop(id, engine.emergency_stop_holds(id));
        self.publish_picked_up(id, engine.picked_up_holds(id));
        Ok(())
    }

    /// The frames (prefixed) of robot `id`, if it has an interface.
    pub fn frames(&self, id: NodeId) -> Option<&Frames> {
        self.robots.get(&id).map(|r| &r.frames)
    }

    /// How many stamped `cmd_vel` of robot `id` were ignored as older than `cmd_vel_timeout`
    /// (`None`: not a robot of this interface).
    pub fn stale_cmd_vel(&self, id: NodeId) -> Option<u64> {
        self.robots
            .get(&id)
            .map(|r| r.stale_cmd_vel.load(Ordering::Relaxed))
    }

    fn publish_obstacle_stop(&self, id: NodeId, engaged: bool) {
        let Some(r) = self.robots.get(&id) else {
            return;
        };
        if let Err(e) = r.out.obstacle_stop.publish(&Bool { data: engaged }) {
            self.reporter
                .warn(&format!("node {id}: cannot publish obstacle_stop: {e}"));
        }
    }

    fn publish_cliff_stop(&self, id: NodeId, engaged: bool) {
        let Some(r) = self.robots.get(&id) else {
            return;
        };
        if let Err(e) = r.out.cliff_stop.publish(&Bool { data: engaged }) {
            self.reporter
                .warn(&format!("node {id}: cannot publish cliff_stop: {e}"));
        }
    }

    fn publish_emergency_stop(&self, id: NodeId, engaged: bool) {
        let Some(r) = self.robots.get(&id) else {
            return;
        };
        if let Err(e) = r.out.emergency_stop.publish(&Bool { data: engaged }) {
            self.reporter
                .warn(&format!("node {id}: cannot publish emergency_stop: {e}"));
        }
    }

    fn publish_picked_up(&self, id: NodeId, engaged: bool) {
        let Some(r) = self.robots.get(&id) else {
            return;
        };
        if let Err(e) = r.out.picked_up.publish(&Bool { data: engaged }) {
            self.reporter
                .warn(&format!("node {id}: cannot publish picked_up: {e}"));
        }
    }

    fn publish_battery(&self, id: NodeId, s: &nrt_interface::battery::BatteryState) {
        let Some(r) = self.robots.get(&id) else {
            return;
        };
        let header = geometry::Header {
            stamp: geometry::now(),
            frame_id: r.frames.base.clone(),
        };
        let m = r2r::sensor_msgs::msg::BatteryState {
            header: conv::header(&header),
            voltage: s.voltage,
            temperature: f32::NAN,
            current: f32::NAN,
            charge: f32::NAN,
            capacity: f32::NAN,
            design_capacity: f32::NAN,
            percentage: s.percentage,
            power_supply_status: s.power_supply_status,
            power_supply_health: 0,
            power_supply_technology: s.power_supply_technology,
            present: s.present,
            ..Default::default()
        };
        if let Err(e) = r.out.battery.publish(&m) {
            self.reporter
                .warn(&format!("node {id}: cannot publish battery_state: {e}"));
        }
    }

    /// Destroys the interface of robot `id` (publishers at once; r2r destroys the
    /// subscriptions and the service whose streams are dropped when they next get a message)
    /// and takes its frames out of `/tf_static`.
    fn remove_robot(&mut self, node: &mut NodeAccess, id: NodeId) {
        let Some(r) = self.robots.remove(&id) else {
            return;
        };
        let RobotInterface {
            frames,
            out,
            inp,
            cmd_vel,
            robot,
            ..
        } = r;
        self.hot.remove_task(cmd_vel);
        // No publish on its publishers is in flight once this returns.
        self.odom.remove(robot);
        drop(inp);
        out.destroy(node.get());
        self.replace_static_frames(id, &frames.prefix, Vec::new());
        self.reporter
            .info(&format!("Thymio node {id}: driver interface removed"));
    }

    /// Puts `own` in place of the frames under `prefix` in the one `/tf_static` message that
    /// holds every robot's frames (latched topic, last message wins), and republishes it if it
    /// changed.
    fn replace_static_frames(&mut self, id: NodeId, prefix: &str, own: Vec<Transform>) {
        let Some(all) = self.static_frames.replace(prefix, own) else {
            return;
        };
        let msg = TFMessage {
            transforms: all.iter().map(conv::transform).collect(),
        };
        if let Err(e) = self.tf_static.publish(&msg) {
            self.reporter
                .warn(&format!("node {id}: cannot publish /tf_static: {e}"));
        }
    }

    /// Proximity readings (10 Hz) to the sensor topics that have a subscriber (the layer's catalogue).
    fn publish_proximity(&mut self, engine: &Engine, id: NodeId, s: &handoff::ProximitySample) {
        let (Some(r), Some(slot)) = (self.robots.get(&id), engine.robots().of_node(id)) else {
            return;
        };
        let stamp = geometry::stamp(s.t_ns);
        let sensors = &r.out.sensors;
        let mut result = Ok(());
        sensor_topics::proximity_messages(
            &s.values,
            &slot.calibration,
            engine.robot_params(id).ranges,
            stamp,
            &r.frames,
            |t| sensors.get(&t).is_some_and(|p| p.heard(t)),
            |t, m| publish_sensor(sensors, t, m, &mut result),
        );
        if let Err(e) = result {
            self.reporter
                .warn(&format!("node {id}: cannot publish proximity: {e}"));
        }
    }

    fn publish_robot_event(
        &mut self,
        engine: &Engine,
        id: NodeId,
        event: u16,
        decoded: RobotEvent,
        stamp: Stamp,
    ) {
        let Some(r) = self.robots.get(&id) else {
            return;
        };
        let params = engine.robot_params(id);
        let sensors = &r.out.sensors;
        let mut result = Ok(());
        sensor_topics::event_messages(
            decoded,
            params.ground.threshold,
            params.ranges,
            stamp,
            &r.frames,
            |t| sensors.get(&t).is_some_and(|p| p.heard(t)),
            |t, m| publish_sensor(sensors, t, m, &mut result),
        );
        if let Err(e) = result {
            self.reporter
                .warn(&format!("node {id}: cannot publish event {event}: {e}"));
        }
    }

    /// Serves the robots' subscriptions and services when `ros_work` (the spinner waited since:
    /// [`super::spinner::SharedNode::take_work`]), and passes odometry settings changed live on
    /// to the odometry publisher.
    pub fn poll_ros(&mut self, engine: &mut Engine, ros_work: bool) {
        let now = Instant::now();
        for r in self.robots.values_mut() {
            r.limited_velocity.store(
                odometry::publishes_limited_velocity(engine, r.node),
                Ordering::Relaxed,
            );
            let Some(settings) = OdomSettings::of(engine, r.node) else {
                continue;
            };
            if r.settings.as_ref() == Some(&settings) {
                continue;
            }
            if r.settings.replace(settings.clone()).is_some() {
                self.odom.set_settings(r.robot, &settings);
            } else {
                let max_rate = engine.robot_params(r.node).odom_max_rate;
                self.odom.insert(r.robot, r.odom_robot(&settings, max_rate));
            }
        }
        if !ros_work {
            return;
        }
        let ids: Vec<NodeId> = self.robots.keys().copied().collect();
        for id in ids {
            let Some(r) = self.robots.get_mut(&id) else {
                continue;
            };
            let messages = actuator_messages(&mut r.inp);
            for call in drain(&mut r.inp.is_ready).collect::<Vec<_>>() {
                if let Err(e) = call.respond(r2r::std_srvs::srv::Empty::Response {}) {
                    self.reporter
                        .warn(&format!("node {id}: cannot answer is_ready: {e}"));
                }
            }
            let node = r.node;
            for call in drain(&mut r.inp.emergency_stop).collect::<Vec<_>>() {
                let on = call.message.data;
                let (success, message) = match engine.set_emergency_stop(node, on) {
                    Ok(()) => (
                        true,
                        nrt_interface::actuators::emergency_stop_text(on).to_owned(),
                    ),
                    Err(e) => (false, format!("emergency stop not applied: {e}")),
                };
                let reply = r2r::std_srvs::srv::SetBool::Response { success, message };
                if let Err(e) = call.respond(reply) {
                    self.reporter
                        .warn(&format!("node {id}: cannot answer emergency_stop: {e}"));
                }
            }
            let mut events = Vec::new();
            for (topic, m) in messages {
                match m.command() {
                    RobotCommand::Events(Ok(evs)) => {
                        events.extend(evs.into_iter().map(|e| (topic, e)))
                    }
                    RobotCommand::Events(Err(e)) => {
                        self.reporter.error(&actuators::refused(node, topic, &e))
                    }
                    RobotCommand::Alarm(on) => r.alarm.set(on, now),
                    RobotCommand::EmergencyStop(on) => {
                        if let Err(e) = engine.set_emergency_stop(node, on) {
                            self.reporter
                                .error(&format!("node {node}: emergency stop: {e}"));
                        }
                    }
                }
            }
            match r.alarm.due(now) {
                Some(Ok(ev)) => events.push(("alarm", ev)),
                Some(Err(e)) => self.reporter.error(&actuators::refused(node, "alarm", &e)),
                None => {}
            }
            for (topic, ev) in events {
                if let Err(e) = engine.emit_script_event(node, ev.name, &ev.args) {
                    self.reporter
                        .error(&actuators::not_sent(node, topic, ev.name, e));
                }
            }
        }
    }
}

/// Publishes `m` on sensor topic `topic`, keeping the first error in `result`.
fn publish_sensor(
    sensors: &SensorPublishers,
    topic: SensorTopic,
    m: SensorMessage,
    result: &mut Result<(), r2r::Error>,
) {
    if let Some(p) = sensors.get(&topic) {
        let r = p.publish(m);
        if result.is_ok() {
            *result = r;
        }
    }
}

/// The driver interface with the node it makes its endpoints on, as the layer drives it.
struct WithNode<'a, 'n> {
    thymio: &'a mut ThymioInterface,
    node: &'a mut NodeAccess<'n>,
}

impl DriverEvents for WithNode<'_, '_> {
    fn has_robot(&self, id: NodeId) -> bool {
        self.thymio.robots.contains_key(&id)
    }

    fn add_robot(&mut self, engine: &Engine, id: NodeId, robot: RobotId) {
        match self.thymio.add_robot(self.node, engine, id, robot) {
            Ok(()) => self
                .thymio
                .reporter
                .info(&format!("Thymio node {id}: driver interface ready")),
            Err(e) => self
                .thymio
                .reporter
                .error(&format!("Thymio node {id}: no driver interface: {e}")),
        }
    }

    fn remove_robot(&mut self, id: NodeId) {
        self.thymio.remove_robot(self.node, id)
    }

    fn obstacle_stop(&mut self, id: NodeId, engaged: bool) {
        self.thymio.publish_obstacle_stop(id, engaged)
    }

    fn cliff_stop(&mut self, id: NodeId, engaged: bool) {
        self.thymio.publish_cliff_stop(id, engaged)
    }

    fn emergency_stop(&mut self, id: NodeId, engaged: bool) {
        self.thymio.publish_emergency_stop(id, engaged)
    }

    fn picked_up(&mut self, id: NodeId, engaged: bool) {
        self.thymio.publish_picked_up(id, engaged)
    }

    fn battery(
        &mut self,
        _engine: &Engine,
        id: NodeId,
        state: &nrt_interface::battery::BatteryState,
    ) {
        self.thymio.publish_battery(id, state)
    }

    fn proximity(&mut self, engine: &Engine, id: NodeId, sample: &handoff::ProximitySample) {
        self.thymio.publish_proximity(engine, id, sample)
    }

    fn robot_event(
        &mut self,
        engine: &Engine,
        id: NodeId,
        event: u16,
        decoded: RobotEvent,
        stamp: Stamp,
    ) {
        self.thymio
            .publish_robot_event(engine, id, event, decoded, stamp)
    }
}
