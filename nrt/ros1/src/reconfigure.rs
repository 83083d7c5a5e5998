//! The live parameters of `asebaros` and of each driven robot's `thymio_driver` the ROS 1 way: a
//! `dynamic_reconfigure` server per node (`<node>/set_parameters`, `dynamic_reconfigure/Reconfigure`; latched
//! `<node>/parameter_descriptions` and `<node>/parameter_updates`), over the layer's tables
//! ([`nrt_interface::params`]). One group (`Default`); each live parameter that dynamic_reconfigure can carry (bool,
//! int, double, string: not lists) with its description, and min/max from its range (`dflt` is its value when the
//! server started). Start-only parameters are not offered (they are ROS 2's read-only ones).
//!
//! dynamic_reconfigure has no error field: a refused value is answered with the configuration in effect (the value
//! unchanged) and why is said on the Reporter (`/rosout`), with the text ROS 2 gives in its `SetParametersResult`.

use super::Ros1Error;
use handoff::NodeId;
use nrt_engine::engine::{Engine, EngineEvent};
use nrt_engine::schema;
use nrt_engine::thymio::params::DriverParams;
use nrt_interface::params::{self, ControllerParams, Param, Value};
use nrt_interface::report::Reporter;
use nrt_ros1_client::graph::{global, Graph};
use nrt_ros1_client::net::{Publisher, ServiceServer};
use nrt_ros1_client::reconfigure::{self as rc, same};
use nrt_ros1_client::ros1_msgs::dynamic_reconfigure as dr;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::time::{Duration, Instant};

/// Longest wait of a `set_parameters` call for the NRT loop.
pub const SERVICE_TIMEOUT: Duration = Duration::from_secs(2);
/// How often the values in effect are compared with those last published (a set through ROS 2 or another node;
/// a set through `set_parameters` is published at once). Each comparison rebuilds the nodes' tables (~0.2 ms a
/// robot): at 200 ms they were a third of the NRT loop's CPU while driving.
const CHECK_PERIOD: Duration = Duration::from_secs(1);

/// Whose parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Target {
    /// `asebaros`.
    Bridge,
    /// A driven robot's `thymio_driver`.
    Robot(NodeId),
}

/// A `set_parameters` call, for the NRT loop.
pub struct SetCall {
    target: Target,
    config: dr::Config,
    reply: SyncSender<dr::Config>,
}

/// One node's server.
struct Server {
    /// The node's global name (`/ns/asebaros`, `/ns/thymio_0/thymio_driver`).
    node: String,
    _descriptions: Publisher<dr::ConfigDescription>,
    updates: Publisher<dr::Config>,
    _service: ServiceServer,
    /// What was last published on `parameter_updates`.
    last: Option<dr::Config>,
}

/// The dynamic_reconfigure servers of the bridge and of the driven robots.
pub struct Reconfigure {
    graph: Graph,
    base: String,
    calls: Receiver<SetCall>,
    calls_tx: Sender<SetCall>,
    built: Receiver<(Target, Server)>,
    built_tx: Sender<(Target, Server)>,
    building: BTreeSet<Target>,
    servers: BTreeMap<Target, Server>,
    last_check: Option<Instant>,
}

impl Reconfigure {
    /// No server yet; the nodes are under namespace `base`.
    pub fn new(graph: &Graph, base: &str) -> Reconfigure {
        let (calls_tx, calls) = channel();
        let (built_tx, built) = channel();
        Reconfigure {
            graph: graph.clone(),
            base: base.to_owned(),
            calls,
            calls_tx,
            built,
            built_tx,
            building: BTreeSet::new(),
            servers: BTreeMap::new(),
            last_check: None,
        }
    }

    /// Has the registrar thread make the bridge's server (node `node_name`).
    pub fn add_bridge(&mut self, engine: &Engine, node_name: &str) {
        let node = global(&[&self.base, node_name]);
        let table = table(engine, Target::Bridge, None);
        self.build(Target::Bridge, node, &table);
    }

    /// Makes a newly driven robot's server, removes it with the robot.
    pub fn on_engine_event(
        &mut self,
        engine: &Engine,
        controllers: Option<&dyn ControllerParams>,
        event: &EngineEvent,
    ) {
        match event {
            EngineEvent::RobotReady { node, .. } if engine.driver_params().enabled => {
                let target = Target::Robot(*node);
                if self.servers.contains_key(&target) {
                    return;
                }
                let ns = nrt_interface::frames::robot_namespace(engine, *node);
                let name = global(&[&self.base, &ns, "thymio_driver"]);
                let table = table(engine, target, controllers);
                self.build(target, name, &table);
            }
            EngineEvent::RobotRemoved { node, .. } => {
                if let Some(s) = self.servers.remove(&Target::Robot(*node)) {
                    self.forget(&s.node);
                }
            }
            _ => {}
        }
    }

    fn build(&mut self, target: Target, node: String, table: &[Param]) {
        if !self.building.insert(target) {
            return;
        }
        let description = description(table);
        let first = config(table);
        let (calls, tx) = (self.calls_tx.clone(), self.built_tx.clone());
        self.graph.submit(move |g| {
            match server(g, target, node.clone(), calls, &description, &first) {
                Ok(s) => {
                    let _ = tx.send((target, s));
                    g.bell.ring();
                }
                Err(e) => tracing::error!("ROS 1: {node}: no dynamic_reconfigure server: {e}"),
            }
        });
    }

    fn forget(&self, node: &str) {
        for leaf in [
            "set_parameters",
            "parameter_descriptions",
            "parameter_updates",
        ] {
            self.graph.forget(&global(&[node, leaf]));
        }
    }

    /// Takes the servers made into use, serves the `set_parameters` calls (never waits; a refusal and an applied
    /// bridge value are said on `reporter`) and publishes `parameter_updates` when the values in effect changed.
    pub fn serve<'c>(
        &mut self,
        engine: &mut Engine,
        mut controllers: Option<&mut (dyn ControllerParams + 'c)>,
        reporter: &Reporter,
        now: Instant,
    ) {
        while let Ok((target, s)) = self.built.try_recv() {
            self.building.remove(&target);
            let current = match target {
                Target::Bridge => true,
                Target::Robot(id) => engine.robots().of_node(id).is_some(),
            };
            if current {
                self.servers.insert(target, s);
            } else {
                self.forget(&s.node);
            }
        }
        let mut changed = false;
        while let Ok(call) = self.calls.try_recv() {
            let wanted = wanted(&call.config);
            let Some(node) = self.servers.get(&call.target).map(|s| s.node.clone()) else {
                continue;
            };
            for (name, value) in wanted {
                let c = controllers.as_deref();
                let r =
                    params::check(&table(engine, call.target, c), &name, &value).and_then(|()| {
                        match call.target {
                            Target::Bridge => params::set_bridge(engine, &name, &value)
                                .map(|line| reporter.info(&line)),
                            Target::Robot(id) => params::set_driver(
                                engine,
                                controllers.as_deref_mut(),
                                id,
                                &name,
                                &value,
                            ),
                        }
                    });
                if let Err(why) = r {
                    reporter.warn(&format!("{node}: {name} refused, unchanged: {why}"));
                }
            }
            let _ =
                call.reply
                    .try_send(config(&table(engine, call.target, controllers.as_deref())));
            changed = true;
        }
        if changed
            || self
                .last_check
                .is_none_or(|t| now.duration_since(t) >= CHECK_PERIOD)
        {
            self.last_check = Some(now);
            self.publish_updates(engine, controllers.as_deref());
        }
    }

    /// Publishes `parameter_updates` of each node whose values in effect differ from those last published.
    fn publish_updates(&mut self, engine: &Engine, controllers: Option<&dyn ControllerParams>) {
        for (target, s) in self.servers.iter_mut() {
            let now = config(&table(engine, *target, controllers));
            if s.last.as_ref().is_some_and(|last| same(last, &now)) {
                continue;
            }
            if let Err(e) = self.graph.publish(&s.updates, &now) {
                tracing::warn!("ROS 1: {}: cannot publish parameter_updates: {e}", s.node);
            }
            s.last = Some(now);
        }
    }
}

/// The table of `target`'s node: asebaros' driver parameters (its start-only configuration is not offered), or the
/// robot's.
fn table(
    engine: &Engine,
    target: Target,
    controllers: Option<&dyn ControllerParams>,
) -> Vec<Param> {
    match target {
        Target::Bridge => {
            params::bridge_table(engine, &Default::default(), schema::is_live::<DriverParams>)
        }
        Target::Robot(id) => params::driver_table(engine, id, &[], controllers),
    }
}

/// Makes one node's server (on the registrar thread).
fn server(
    g: &Graph,
    target: Target,
    node: String,
    calls: Sender<SetCall>,
    description: &dr::ConfigDescription,
    first: &dr::Config,
) -> Result<Server, Ros1Error> {
    let bell = g.bell.clone();
    let service = g.serve::<dr::Reconfigure>(
        &global(&[&node, "set_parameters"]),
        move |req: dr::ReconfigureRequest| {
            let (reply, answer) = sync_channel(1);
            calls
                .send(SetCall {
                    target,
                    config: req.config,
                    reply,
                })
                .map_err(|_| anyhow::anyhow!("the driver is stopping"))?;
            bell.ring();
            let config = answer.recv_timeout(SERVICE_TIMEOUT).map_err(|_| {
                anyhow::anyhow!("no answer within {} s", SERVICE_TIMEOUT.as_secs_f64())
            })?;
            Ok(dr::ReconfigureResponse { config })
        },
    )?;
    let descriptions = g.advertise(&global(&[&node, "parameter_descriptions"]), 1, true)?;
    let updates = g.advertise(&global(&[&node, "parameter_updates"]), 1, true)?;
    g.publish(&descriptions, description)?;
    g.publish(&updates, first)?;
    Ok(Server {
        node,
        _descriptions: descriptions,
        updates,
        _service: service,
        last: Some(first.clone()),
    })
}

/// Whether dynamic_reconfigure offers `p`: live, of a type it carries.
fn offered(p: &Param) -> bool {
    !p.read_only
        && matches!(
            p.value,
            Value::Bool(_) | Value::Integer(_) | Value::Double(_) | Value::String(_)
        )
}

/// The offered parameters of `table` in dynamic_reconfigure's terms: min/max from their ranges (the type's limits
/// without one; integers clamped to 32 bits).
fn parameters(table: &[Param]) -> Vec<rc::Parameter> {
    let int = |v: i64| rc::Value::Int(v.clamp(i32::MIN.into(), i32::MAX.into()) as i32);
    table
        .iter()
        .filter(|p| offered(p))
        .map(|p| {
            let (value, min, max) = match &p.value {
                Value::Bool(b) => (
                    rc::Value::Bool(*b),
                    rc::Value::Bool(false),
                    rc::Value::Bool(true),
                ),
                Value::Integer(v) => {
                    let (lo, hi) = p.int_range.unwrap_or((i32::MIN.into(), i32::MAX.into()));
                    (int(*v), int(lo), int(hi))
                }
                Value::Double(v) => {
                    let (lo, hi) = p.range.unwrap_or((f64::MIN, f64::MAX));
                    (
                        rc::Value::Double(*v),
                        rc::Value::Double(lo),
                        rc::Value::Double(hi),
                    )
                }
                other => {
                    let text = match other {
                        Value::String(s) => s.clone(),
                        _ => String::new(),
                    };
                    (
                        rc::Value::Str(text),
                        rc::Value::Str(String::new()),
                        rc::Value::Str(String::new()),
                    )
                }
            };
            rc::Parameter {
                name: p.name.clone(),
                description: p.description.clone(),
                value,
                min,
                max,
            }
        })
        .collect()
}

/// The values of the offered parameters of `table`, as a `Config` (with the one group).
pub fn config(table: &[Param]) -> dr::Config {
    rc::config(&parameters(table))
}

/// The `ConfigDescription` of `table`: one group of the offered parameters, min/max from their ranges (the type's
/// limits without one), `dflt` the values now.
pub fn description(table: &[Param]) -> dr::ConfigDescription {
    rc::description(&parameters(table))
}

/// The values a `Config` asks for, by name, as the layer's values.
pub fn wanted(c: &dr::Config) -> Vec<(String, Value)> {
    rc::wanted(c)
        .into_iter()
        .map(|(name, v)| {
            let v = match v {
                rc::Value::Bool(b) => Value::Bool(b),
                rc::Value::Int(i) => Value::Integer(i.into()),
                rc::Value::Double(d) => Value::Double(d),
                rc::Value::Str(s) => Value::String(s),
            };
            (name, v)
        })
        .collect()
}

#[cfg(test)]
#[path = "reconfigure_tests.rs"]
mod tests;
