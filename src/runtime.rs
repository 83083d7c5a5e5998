//! Assembly of the domains: the RT thread (links, odometry, velocity mapping), the connector
//! thread (blocking link opening), the embedded simulator when no target is given, and the NRT
//! engine (network manager, switch, scripts). The command-line tools and `run` drive it.

use crate::config::Config;
use handoff::{channels, ChannelConfig, ExitReason, OdomSample, RtStats};
use handoff::{latest, publisher, NrtLatest, NrtPublisher};
use msgs::target::Target;
use nrt_engine::engine::{
    ControllerPort, ControllerReport, Engine, EngineConfig, EngineError, EngineEvent,
};
use nrt_engine::thymio::params::DriverParams;
use rt::controllers::{
    CliffStop, CliffStopParams, ObstacleStop, ObstacleStopParams, PickupStop, PickupStopParams,
    ReflexEvent,
};
use rt::link::{SerialSelector, SerialSpec};
use rt::nrt_connector::{
    spawn_connector, ConnectSpec, ConnectorConfig, ConnectorHandle, ConnectorStats,
};
use rt::rtloop::{RtConfig, RtExit, RtHandle};
use rt::sched::RtSetup;
use std::time::{Duration, Instant};

/// Errors while starting or stopping the runtime.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// A target this build cannot open.
    #[error("target \"{0}\" is not supported (use tcp:, ser: or sim)")]
    UnsupportedTarget(String),
    /// The engine could not start.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// A thread could not start.
    #[error("cannot start the {what} thread: {error}")]
    Thread {
        /// Which.
        what: &'static str,
        /// Cause.
        error: std::io::Error,
    },
    /// The embedded simulator could not start.
    #[error("embedded simulator: {0}")]
    Sim(String),
    /// A controller of the registry refused its declarations.
    #[error("RT controllers: {0}")]
    Controllers(#[from] handoff::DeclareError),
    /// The initial owner could not be requested.
    #[error("control.default_owner: {0}")]
    Owner(String),
    /// `control.controllers` or `control.default_owner` do not fit the controller registry.
    #[error("configuration key {0}")]
    Control(#[from] nrt_engine::schema::Invalid),
}

/// What the runtime leaves when it stops.
#[derive(Debug)]
pub struct Stopped {
    /// Why the RT thread stopped (`None` if it could not be joined).
    pub reason: Option<ExitReason>,
    /// Final RT statistics.
    pub stats: Option<RtStats>,
    /// Last odometry of every robot.
    pub odometry: Vec<OdomSample>,
    /// Connector counters.
    pub connector: ConnectorStats,
    /// The exit stop of every robot driven at the end (zero speed confirmed or not).
    pub stops: Vec<rt::rtloop::StopOutcome>,
    /// Counters of the Aseba switch (totals and per client), if it ran.
    pub switch: Option<nrt_engine::switch::SwitchReport>,
    /// The RT controllers' names, in registry order (the rows of `stats.controllers`).
    pub controller_names: Vec<&'static str>,
}

/// The running system.
pub struct Runtime {
    /// The NRT engine; drive it with [`Runtime::poll`].
    pub engine: Engine,
    rt: Option<RtHandle>,
    connector: Option<ConnectorHandle>,
    sim: Option<crate::embedded::EmbeddedSim>,
    /// The NRT halves of the RT controllers, until a front end takes them.
    control: Option<handoff::NrtControl>,
    /// The RT controllers' names, in registry order.
    controller_names: Vec<&'static str>,
    /// The flight recorder's NRT half (`record.file` set), until the recorder takes it.
    recording: Option<handoff::NrtRecording>,
    started: Instant,
}

/// The NRT ends of the RT obstacle-stop reflex: its engage/release edges, and its parameters
/// (from `obstacle_stop.*`, changed live through the engine). The engine owns it and pumps it
/// on every poll.
struct Reflex {
    events: NrtPublisher<ReflexEvent>,
    params: NrtLatest<ObstacleStopParams>,
    current: ObstacleStopParams,
}

impl ControllerPort for Reflex {
    /// Hands `obstacle_stop.*` to the reflex when it changed, and reports its edges.
    fn pump(&mut self, driver: &DriverParams, report: &mut dyn FnMut(ControllerReport)) {
        let wanted = reflex_params(&driver.obstacle_stop);
        if wanted != self.current {
            self.params.nrt_store(wanted);
            self.current = wanted;
        }
        self.events.nrt_drain(|e| {
            report(ControllerReport::ObstacleStop {
                robot: e.robot,
                engaged: e.engaged,
            })
        });
    }
}

/// The NRT ends of the RT cliff reflex (`cliff_stop.*`), as [`Reflex`] for the obstacle stop.
struct Cliff {
    events: NrtPublisher<ReflexEvent>,
    params: NrtLatest<CliffStopParams>,
    current: CliffStopParams,
}

impl ControllerPort for Cliff {
    /// Hands `cliff_stop.*` to the reflex when it changed, and reports its edges.
    fn pump(&mut self, driver: &DriverParams, report: &mut dyn FnMut(ControllerReport)) {
        let wanted = cliff_params(&driver.cliff_stop);
        if wanted != self.current {
            self.params.nrt_store(wanted);
            self.current = wanted;
        }
        self.events.nrt_drain(|e| {
            report(ControllerReport::CliffStop {
                robot: e.robot,
                engaged: e.engaged,
            })
        });
    }
}

/// The NRT ends of the RT pick-up reflex (`pickup_stop.*`), as [`Reflex`] for the obstacle stop.
struct Pickup {
    events: NrtPublisher<ReflexEvent>,
    params: NrtLatest<PickupStopParams>,
    current: PickupStopParams,
}

impl ControllerPort for Pickup {
    /// Hands `pickup_stop.*` to the reflex when it changed, and reports its edges.
    fn pump(&mut self, driver: &DriverParams, report: &mut dyn FnMut(ControllerReport)) {
        let wanted = pickup_params(&driver.pickup_stop);
        if wanted != self.current {
            self.params.nrt_store(wanted);
            self.current = wanted;
        }
        self.events.nrt_drain(|e| {
            report(ControllerReport::PickedUp {
                robot: e.robot,
                engaged: e.engaged,
            })
        });
    }
}

/// The RT form of `pickup_stop.*` (the rule's thresholds are the reflex's own).
fn pickup_params(c: &nrt_engine::thymio::params::PickupStopConfig) -> PickupStopParams {
    PickupStopParams {
        enabled: c.enabled,
        ..PickupStopParams::default()
    }
}

/// The RT filters every owner's command goes through, with their start parameters from `config`: the obstacle
/// stop then the cliff stop (both only ever remove forward motion), then the pick-up stop (every wheel); their NRT ends (live parameters, edges) for the
/// engine to pump. They always run in the RT cycle (disabled unless configured) so that they can be turned on live.
/// A replay builds the same.
pub fn rt_filters(config: &Config) -> (Vec<Box<dyn rt::controllers::Filter>>, FilterPorts) {
    let current = reflex_params(&config.driver.obstacle_stop);
    let (events_rt, events) = publisher(64);
    let (params_rt, params) = latest(current);
    let reflex: Box<dyn rt::controllers::Filter> = Box::new(
        ObstacleStop::new(current)
            .with_live_params(params_rt)
            .with_events(events_rt),
    );
    let reflex_port = Reflex {
        events,
        params,
        current,
    };
    let current = cliff_params(&config.driver.cliff_stop);
    let (events_rt, events) = publisher(64);
    let (params_rt, params) = latest(current);
    let cliff: Box<dyn rt::controllers::Filter> = Box::new(
        CliffStop::new(current)
            .with_live_params(params_rt)
            .with_events(events_rt),
    );
    let cliff_port = Cliff {
        events,
        params,
        current,
    };
    let current = pickup_params(&config.driver.pickup_stop);
    let (events_rt, events) = publisher(64);
    let (params_rt, params) = latest(current);
    let pickup: Box<dyn rt::controllers::Filter> = Box::new(
        PickupStop::new(current)
            .with_live_params(params_rt)
            .with_events(events_rt),
    );
    let pickup_port = Pickup {
        events,
        params,
        current,
    };
    (
        vec![reflex, cliff, pickup],
        FilterPorts {
            reflex: reflex_port,
            cliff: cliff_port,
            pickup: pickup_port,
        },
    )
}

/// The NRT ends of the filters of [`rt_filters`].
pub struct FilterPorts {
    reflex: Reflex,
    cliff: Cliff,
    pickup: Pickup,
}

impl FilterPorts {
    /// A replay's way to put back the reflexes' recorded parameters (`RecInput::ReflexParams`).
    pub fn into_replay_setter(self) -> rt::replay::ReflexSetter {
        let FilterPorts {
            mut reflex,
            mut cliff,
            mut pickup,
        } = self;
        Box::new(move |which, enabled, threshold, samples, max_age_ns| {
            match which {
                0 => reflex.params.nrt_store(ObstacleStopParams {
                    enabled,
                    threshold,
                    max_age_ns,
                }),
                1 => cliff.params.nrt_store(CliffStopParams {
                    enabled,
                    threshold,
                    max_age_ns,
                }),
                2 => pickup.params.nrt_store(PickupStopParams {
                    enabled,
                    z_min: threshold,
                    samples,
                    max_age_ns,
                }),
                _ => return Err(format!("no reflex {which}")),
            }
            Ok(())
        })
    }
}

/// The RT form of `cliff_stop.*`.
fn cliff_params(c: &nrt_engine::thymio::params::CliffStopConfig) -> CliffStopParams {
    CliffStopParams {
        enabled: c.enabled,
        threshold: c.threshold,
        max_age_ns: (c.max_age * 1e9) as u64,
    }
}

/// The RT form of `obstacle_stop.*`.
fn reflex_params(c: &nrt_engine::thymio::params::ObstacleStopConfig) -> ObstacleStopParams {
    ObstacleStopParams {
        enabled: c.enabled,
        threshold: c.threshold,
        max_age_ns: (c.max_age * 1e9) as u64,
    }
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("engine", &self.engine)
            .finish_non_exhaustive()
    }
}

/// The RT thread's configuration from the `rt` section.
pub fn rt_config(config: &Config) -> RtConfig {
    let cpu = match config.rt.cpu {
        c if c >= 0 => Some(c as usize),
        _ => rt::sched::default_rt_cpu(),
    };
    // Warm-up (page faults before it do not count) lasts about a second whatever the period.
    let warmup_cycles = 1_000_000u64
        .checked_div(config.rt.period_us)
        .unwrap_or(1000)
        .clamp(10, 1000);
    RtConfig {
        period: Duration::from_micros(config.rt.period_us),
        warmup_cycles,
        setup: RtSetup {
            cpu,
            priority: (config.rt.priority > 0).then_some(config.rt.priority),
            lock_memory: config.rt.lock_memory,
            ..RtSetup::default()
        },
        wake_nrt: config.rt.wake_nrt,
        speed_refresh: Duration::from_millis(config.rt.speed_refresh_ms),
        controller_budget: Duration::from_micros(config.control.controller_budget_us),
        controller_overruns: config.control.controller_overruns,
        ..RtConfig::default()
    }
}

/// Where the front ends' odometry publishers run: on the RT thread's CPU at
/// `rt.publisher_priority`, when the RT thread itself is SCHED_FIFO (a SCHED_FIFO publisher
/// beside a SCHED_OTHER RT thread would take the CPU from it); otherwise as any NRT thread.
pub fn companion_placement(config: &Config, rt: &RtConfig) -> handoff::CompanionPlacement {
    match rt.setup.priority {
        Some(_) if config.rt.publisher_priority > 0 => handoff::CompanionPlacement {
            cpu: rt.setup.cpu.and_then(|c| u16::try_from(c).ok()),
            priority: config.rt.publisher_priority,
        },
        _ => handoff::CompanionPlacement::default(),
    }
}

/// How to reach a target: through the connector, or the embedded simulator.
fn connect_spec(t: &Target) -> Result<Option<ConnectSpec>, RuntimeError> {
    Ok(match t {
        Target::Tcp { host, port } => Some(ConnectSpec::Tcp {
            host: host.clone(),
            port: *port,
        }),
        Target::Serial(s) => {
            let selector = match &s.selector {
                msgs::target::SerialSelector::Device(d) => SerialSelector::Device(d.into()),
                msgs::target::SerialSelector::Name(n) => SerialSelector::Name(n.clone()),
                // Dashel counts ports from 1
                msgs::target::SerialSelector::Port(p) => {
                    SerialSelector::Port(p.saturating_sub(1) as usize)
                }
            };
            Some(ConnectSpec::Serial(SerialSpec {
                selector,
                baud: s.baud,
                dtr: s.dtr,
            }))
        }
        Target::Sim { .. } => None,
        other => return Err(RuntimeError::UnsupportedTarget(other.to_string())),
    })
}

impl Runtime {
    /// Starts everything for `config` (its `targets`; none = the embedded simulator).
    pub fn start(config: &Config) -> Result<Runtime, RuntimeError> {
        Self::start_with(config, 1)
    }

    /// As [`Runtime::start`], with `odometry_consumers` odometry rings for publisher threads (one per ROS front
    /// end that runs: ROS 2 and ROS 1 side by side take one each).
    pub fn start_with(config: &Config, odometry_consumers: usize) -> Result<Runtime, RuntimeError> {
        Self::start_loaded(
            config,
            odometry_consumers,
            rt::controllers::Registry::shipped(),
        )
    }

    /// As [`Runtime::start_with`], with the RT controllers of `registry` (the shipped ones and a user's): those
    /// `control.controllers` lists (all when absent), with its start parameter values, are loaded on every robot
    /// slot; the others cannot own the wheels.
    pub fn start_loaded(
        config: &Config,
        odometry_consumers: usize,
        mut registry: rt::controllers::Registry,
    ) -> Result<Runtime, RuntimeError> {
        // before any thread: a configuration that does not fit the registry starts nothing
        let loaded = config.control.load(&mut registry)?;
        let mut specs = Vec::new();
        let mut sim_robots = 0u16;
        for text in &config.bridge.targets {
            let target: Target = text.parse().map_err(|e: msgs::target::TargetError| {
                RuntimeError::UnsupportedTarget(e.to_string())
            })?;
            match connect_spec(&target)? {
                Some(spec) => specs.push(spec),
                None => {
                    if let Target::Sim { robots } = target {
                        sim_robots = sim_robots.max(robots.max(1));
                    }
                }
            }
        }
        if config.bridge.targets.is_empty() {
            sim_robots = config.sim.robots.max(1);
        }
        // the flight recorder takes an odometry ring of its own (what the front ends publish, made as they make it)
        let recording = config.record.on();
        // a front end publishes odometry with a thread per group of robots (robots known at start), bounded by the
        // CPUs its publishers may use: one when they share the RT thread's (rt.publisher_priority, the default)
        let cpus = match companion_placement(config, &rt_config(config)).cpu {
            Some(_) => 1,
            None => std::thread::available_parallelism().map_or(1, |n| n.get()),
        };
        let robots = specs.len() + usize::from(sim_robots);
        let (rt_ends, mut nrt_ends) = channels(&ChannelConfig {
            odometry_out_consumers: odometry_consumers.max(1) + usize::from(recording),
            odometry_out_groups: nrt_interface::odom_thread::publisher_groups(robots, cpus),
            record: recording.then(handoff::RecordRings::default),
            ..ChannelConfig::default()
        });
        let recording = nrt_ends.nrt_take_recording();
        let (rt_port, port) = rt::link_port::link_port();
        let mut pipes = Vec::new();
        let sim = if sim_robots > 0 {
            let mut handle =
                crate::embedded::start_sim(config, sim_robots).map_err(RuntimeError::Sim)?;
            pipes.extend(handle.link());
            Some(handle)
        } else {
            None
        };
        let mut engine_config = EngineConfig {
            bridge: config.bridge.clone(),
            driver: config.driver.clone(),
        };
        if sim.is_some() && config.bridge.targets.is_empty() {
            engine_config.driver.simulation = true;
        }
        // The RT controllers: one instance of each loaded one per robot slot; their RT halves
        // go to the RT thread, their NRT halves (with the configured start values of their
        // parameters, read at their first cycle) to the front end (`take_control`).
        let slots = nrt_ends.nrt_params().robots();
        let controller_names = registry.names();
        let (controllers, mut control) = registry.instantiate(slots)?;
        loaded.apply(&mut control)?;
        let owner = control
            .names
            .id(&config.control.default_owner)
            .ok_or_else(|| {
                RuntimeError::Owner(format!("unknown owner {}", config.control.default_owner))
            })?;
        if owner != handoff::OwnerId::ROS {
            // Applied by the RT thread when each slot starts being driven.
            for r in 0..slots {
                nrt_ends
                    .nrt_params()
                    .nrt_request_owner(handoff::RobotId(r as u8), owner)
                    .map_err(|e| RuntimeError::Owner(e.to_string()))?;
            }
        }
        let mut engine = Engine::new(engine_config, nrt_ends)?;
        engine.set_rt_rings(config.rt.wake_nrt);
        let (filters, ports) = rt_filters(config);
        engine.attach_controller(Box::new(ports.reflex));
        engine.attach_controller(Box::new(ports.cliff));
        engine.attach_controller(Box::new(ports.pickup));
        let rt_cfg = rt_config(config);
        engine.set_companion_placement(companion_placement(config, &rt_cfg));
        let rt = rt::rtloop::spawn(rt_cfg, rt_ends, rt_port, controllers, filters)
            .map_err(|error| RuntimeError::Thread { what: "RT", error })?;
        let connector =
            spawn_connector(ConnectorConfig::default(), specs, pipes, port).map_err(|error| {
                RuntimeError::Thread {
                    what: "connector",
                    error,
                }
            })?;
        Ok(Runtime {
            engine,
            rt: Some(rt),
            connector: Some(connector),
            sim,
            control: Some(control),
            controller_names,
            recording,
            started: Instant::now(),
        })
    }

    /// The NRT halves of the RT controllers (owner names, every controller's ROS endpoints and
    /// parameters on every robot slot), for the front end that serves them; `None` once taken.
    pub fn take_control(&mut self) -> Option<handoff::NrtControl> {
        self.control.take()
    }

    /// The flight recorder's NRT half (when `record.file` is set), for the recorder; `None` once taken.
    pub fn take_recording(&mut self) -> Option<handoff::NrtRecording> {
        self.recording.take()
    }

    /// Polls the engine once and returns its events.
    pub fn poll(&mut self) -> Vec<EngineEvent> {
        self.engine.poll(Instant::now());
        std::iter::from_fn(|| self.engine.next_event()).collect()
    }

    /// Polls (about every millisecond) until `f` returns `Some`, the RT thread stops, or
    /// `timeout` passes.
    pub fn poll_until<T>(
        &mut self,
        timeout: Duration,
        mut f: impl FnMut(&mut Engine, &[EngineEvent]) -> Option<T>,
    ) -> Option<T> {
        let deadline = Instant::now() + timeout;
        loop {
            let events = self.poll();
            if let Some(v) = f(&mut self.engine, &events) {
                return Some(v);
            }
            if Instant::now() >= deadline || self.engine.rt_exited() {
                return None;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Time since start.
    pub fn uptime(&self) -> Duration {
        self.started.elapsed()
    }

    /// The embedded simulator, if running.
    pub fn sim(&self) -> Option<&crate::embedded::EmbeddedSim> {
        self.sim.as_ref()
    }

    /// Stops every robot (zero speed written by the RT thread), then every thread.
    pub fn stop(mut self) -> Stopped {
        self.engine.shutdown();
        let deadline = Instant::now() + Duration::from_secs(3);
        // keep the rings moving while the RT thread writes its stop frames
        while !self.engine.rt_exited() && Instant::now() < deadline {
            self.engine.poll(Instant::now());
            while self.engine.next_event().is_some() {}
            std::thread::sleep(Duration::from_millis(1));
        }
        let exit: Option<RtExit> = self.rt.take().and_then(|h| {
            h.stop();
            h.join().ok()
        });
        let connector = self.connector.take().map(|c| c.join()).unwrap_or_default();
        let switch = self.engine.switch().map(|s| s.report());
        if let Some(sim) = self.sim.take() {
            sim.stop();
        }
        match exit {
            Some(mut e) => {
                // links the RT thread could not give back (the connector's are closed by it)
                rt::nrt_connector::nrt_close_links(
                    e.links.drain(..).map(|r| r.link).collect(),
                    rt::nrt_connector::ConnectorConfig::default().close_timeout,
                );
                // the controllers' NRT end of life (XBotCore's close), off the RT thread
                let closed = e.controllers.close_all();
                tracing::debug!("{closed} RT controller instance(s) closed");
                Stopped {
                    reason: Some(e.reason),
                    stats: Some(e.stats),
                    odometry: e.odometry,
                    connector,
                    stops: e.stops,
                    switch,
                    controller_names: self.controller_names,
                }
            }
            None => Stopped {
                reason: None,
                stats: None,
                odometry: Vec::new(),
                connector,
                stops: Vec::new(),
                switch,
                controller_names: self.controller_names,
            },
        }
    }
}
