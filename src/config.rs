//! The configuration of `thymio-rt run`: one naming scheme for the YAML file and the ROS
//! parameters. Top-level keys are the asebaros parameter names (`targets`, `port`, `nodes`,
//! `script`, …) and the ROS-Thymio ones (`axis_length`, `motor`, `proximity`, …) — nested
//! maps in YAML, dotted names as ROS parameters (`nodes.thymio.prefix`) — plus the sections
//! `rt` (real-time thread), `sim` (embedded simulator) and `control` (communication switch). Unknown keys are errors that name
//! the key.

use msgs::yaml_guard::{self, YamlGuardError, YamlLimits};
use nrt_engine::engine::{is_builtin, BUILTIN_PREFIX};
use nrt_engine::params::BridgeParams;
use nrt_engine::schema::{self, aliases, Invalid, SchemaError, Section};
use nrt_engine::thymio::params::DriverParams;
use serde::{Deserialize, Serialize};
use std::path::Path;
use yaml_serde::{Mapping, Value};

mod control;
mod record;
pub use control::{
    ControlParams, ControllerParams, LoadedControllers, CONTROLLER_BUDGET_US, CONTROLLER_OVERRUNS,
    MAX_CONTROLLER_BUDGET_US, MAX_CONTROLLER_OVERRUNS,
};
pub use record::RecordParams;

/// The section `rt`.
const RT: &str = "rt";
/// The section `sim`.
const SIM: &str = "sim";
/// The section `control`.
const CONTROL: &str = "control";
/// The section `ros1`.
const ROS1: &str = "ros1";
/// The section `record`.
const RECORD: &str = "record";

/// The real-time thread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RtSection {
    /// Period [µs] of the loop's periodic duties (cmd_vel watchdog, speed refresh, statistics,
    /// link hand-over): their resolution, not a hop's latency (I/O and set-points wake the loop
    /// at once). The default, 10 000 (100 Hz), is a tenth of the finest of them (the 100 ms
    /// speed refresh).
    pub period_us: u64,
    /// CPU to pin the thread to (-1: the last CPU the process may run on).
    pub cpu: i32,
    /// SCHED_FIFO priority (1–99; 0 keeps SCHED_OTHER).
    pub priority: u8,
    /// SCHED_FIFO priority of the front ends' odometry publisher threads, which then run on the
    /// RT thread's CPU: rung by the RT thread, a publisher runs the moment it waits again rather
    /// than after another CPU wakes up (docs/realtime.md). Below `priority`; 0: SCHED_OTHER on
    /// any CPU. Ignored when `priority` is 0.
    pub publisher_priority: u8,
    /// `mlockall(MCL_CURRENT | MCL_FUTURE)`.
    pub lock_memory: bool,
    /// Longest time [µs] the NRT side waits while something must be polled: an Aseba switch
    /// client is connected (its socket), frames wait for room in the RT ring, or `wake_nrt` is
    /// off. Otherwise the RT thread and the ROS spinner ring its doorbell when they have
    /// something and it waits up to the resolution of the engine's timers (50 ms).
    pub nrt_poll_us: u64,
    /// The RT thread rings the NRT side's doorbell (one non-blocking eventfd write per cycle
    /// that produced something). `false`: it never wakes anyone and NRT polls every
    /// `nrt_poll_us`, for deployments that allow no system call but the loop's own.
    pub wake_nrt: bool,
    /// Period [ms] at which the RT thread re-sends a robot's wheel targets while it moves and
    /// until a zero speed is confirmed: it feeds the driver script's on-robot watchdog
    /// (`script.constants.SPEED_TIMEOUT`, which must be longer).
    pub speed_refresh_ms: u64,
}

impl Default for RtSection {
    fn default() -> Self {
        Self {
            period_us: 10_000,
            cpu: -1,
            priority: 50,
            publisher_priority: 1,
            lock_memory: true,
            nrt_poll_us: 1000,
            wake_nrt: true,
            speed_refresh_ms: 100,
        }
    }
}

/// `rt.*`, read at start.
impl Section for RtSection {
    fn validate(&self) -> Result<(), Invalid> {
        if self.nrt_poll_us == 0 {
            return Err(Invalid::new(
                "nrt_poll_us",
                0,
                "µs: must be at least 1 µs (0 would spin)",
            ));
        }
        if self.priority > 99 {
            return Err(Invalid::new("priority", self.priority, "is above 99"));
        }
        if self.priority > 0 && self.publisher_priority >= self.priority {
            return Err(Invalid::new(
                "publisher_priority",
                self.publisher_priority,
                format!(
                    "must be below the RT thread's priority ({}): the publishers share its CPU",
                    self.priority
                ),
            ));
        }
        if self.speed_refresh_ms == 0 {
            return Err(Invalid::new(
                "speed_refresh_ms",
                0,
                "ms is below 1 (it feeds the on-robot watchdog)",
            ));
        }
        Ok(())
    }
}

/// The embedded simulator (target `sim`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SimParams {
    /// Number of simulated robots (node ids 1..=robots).
    pub robots: u16,
    /// Random seed.
    pub seed: u64,
    /// Arena file ("" = the default arena).
    pub arena: String,
    /// How the simulated wheels differ from ideal ones (what motor calibration finds).
    pub wheels: SimWheels,
}

impl Default for SimParams {
    fn default() -> Self {
        Self {
            robots: 1,
            seed: 1,
            arena: String::new(),
            wheels: SimWheels::default(),
        }
    }
}

/// `sim.wheels`: per simulated robot and wheel, a speed gain (true surface speed per nominal
/// one, unseen by the robot's own speed reading: a wheel radius or gear difference) and a
/// deadband (targets of at most that many units do not turn the wheel). Ideal by default: the
/// driver's simulation calibration (ROS-Thymio's) is exact for the simulated robot and runs stay
/// comparable; set a spread (e.g. 0.03) or explicit values to give calibration something to
/// find.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SimWheels {
    /// Each wheel's gain is drawn from the seed, uniformly in [1 − s, 1 + s] (0: gain 1).
    pub gain_spread: f64,
    /// Each wheel's deadband is drawn from the seed, uniformly in [0, max] units (0: none).
    pub deadband_max: u16,
    /// Explicit gains [left, right] for every robot (empty: drawn).
    pub gain: Vec<f64>,
    /// Explicit deadbands [left, right] (units) for every robot (empty: drawn).
    pub deadband: Vec<u16>,
}

impl Default for SimWheels {
    fn default() -> Self {
        Self {
            gain_spread: 0.0,
            deadband_max: 0,
            gain: Vec::new(),
            deadband: Vec::new(),
        }
    }
}

impl SimWheels {
    /// The simulator's form (checked).
    pub fn spec(&self) -> Result<sim::thymio::WheelSpec, Invalid> {
        let pair = |key: &str, n: usize| -> Result<(), Invalid> {
            match n {
                0 | 2 => Ok(()),
                _ => Err(Invalid::new(
                    &format!("wheels.{key}"),
                    format!("({n} values)"),
                    "needs two values [left, right], or none",
                )),
            }
        };
        pair("gain", self.gain.len())?;
        pair("deadband", self.deadband.len())?;
        let spec = sim::thymio::WheelSpec {
            gain_spread: self.gain_spread,
            deadband_max: self.deadband_max,
            gain: (self.gain.len() == 2).then(|| [self.gain[0], self.gain[1]]),
            deadband: (self.deadband.len() == 2).then(|| [self.deadband[0], self.deadband[1]]),
        };
        spec.validate().map_err(|e| {
            let key = match e {
                sim::thymio::WheelSpecError::Spread(_) => "wheels.gain_spread",
                sim::thymio::WheelSpecError::Gain(_) => "wheels.gain",
                sim::thymio::WheelSpecError::Deadband(_) if self.deadband.len() == 2 => {
                    "wheels.deadband"
                }
                sim::thymio::WheelSpecError::Deadband(_) => "wheels.deadband_max",
            };
            let value = match e {
                sim::thymio::WheelSpecError::Spread(v) | sim::thymio::WheelSpecError::Gain(v) => {
                    v.to_string()
                }
                sim::thymio::WheelSpecError::Deadband(d) => d.to_string(),
            };
            Invalid::new(key, value, e.to_string())
        })?;
        Ok(spec)
    }
}

/// `sim.*`, read at start.
impl Section for SimParams {
    fn validate(&self) -> Result<(), Invalid> {
        if self.robots > msgs::target::MAX_SIM_ROBOTS {
            return Err(Invalid::new(
                "robots",
                self.robots,
                format!(
                    "is out of range: at most {} simulated robots (the most one driver drives)",
                    msgs::target::MAX_SIM_ROBOTS
                ),
            ));
        }
        self.wheels.spec().map(|_| ())
    }
}

// the simulator's robots are the ones a driver drives
const _: () = assert!(msgs::target::MAX_SIM_ROBOTS as usize == handoff::MAX_ROBOTS);

/// The `ros1` section: the ROS 1 front end (feature `ros1`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Ros1Params {
    /// Serve ROS 1 too (as `thymio-rt run --ros1`): the master from `ROS_MASTER_URI`, the node's address from
    /// `ROS_HOSTNAME` / `ROS_IP`. Read at start.
    pub enabled: bool,
}

impl Section for Ros1Params {}

/// The whole configuration.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Config {
    /// Generic Aseba bridge (asebaros names).
    pub bridge: BridgeParams,
    /// Thymio driver (ROS-Thymio names).
    pub driver: DriverParams,
    /// Real-time thread.
    pub rt: RtSection,
    /// Embedded simulator.
    pub sim: SimParams,
    /// Communication switch and RT controllers.
    pub control: ControlParams,
    /// The ROS 1 front end.
    pub ros1: Ros1Params,
    /// The flight recorder.
    pub record: RecordParams,
}

/// A configuration error: names the key or the file, and keeps its cause.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file cannot be read.
    #[error("cannot read configuration {path}: {source}")]
    Read {
        /// File.
        path: String,
        /// Cause.
        source: std::io::Error,
    },
    /// Not YAML.
    #[error("configuration {file}{}{source}", if file.is_empty() { "" } else { ": " })]
    Syntax {
        /// File ("" for text).
        file: String,
        /// Cause.
        #[source]
        source: yaml_serde::Error,
    },
    /// Too large or too deeply nested to be given to the YAML parser.
    #[error("configuration {file}{}{source}", if file.is_empty() { "" } else { ": " })]
    Bounds {
        /// File ("" for text).
        file: String,
        /// The limit exceeded.
        #[source]
        source: YamlGuardError,
    },
    /// YAML, but not a map at the top.
    #[error("configuration {file}{}must be a map of parameters", if file.is_empty() { "" } else { ": " })]
    NotAMap {
        /// File ("" for text).
        file: String,
    },
    /// A key that is not a string.
    #[error("configuration key {0:?} is not a string")]
    KeyType(Value),
    /// An unknown key, a bad value, a value out of range: the schema's error.
    #[error(transparent)]
    Schema(#[from] SchemaError),
    /// A target string that does not parse.
    #[error("configuration key `targets`: {source}")]
    Target {
        /// The target.
        target: String,
        /// Cause.
        #[source]
        source: msgs::target::TargetError,
    },
}

impl From<Invalid> for ConfigError {
    fn from(e: Invalid) -> Self {
        ConfigError::Schema(e.into())
    }
}

/// The shipped configuration (`config/thymio-rt.yaml`), built into the binary: what `thymio-rt
/// run` uses without `--config` (see [`Config::builtin`]).
pub const SHIPPED_YAML: &str = include_str!("../config/thymio-rt.yaml");

impl Config {
    /// The built-in configuration: the shipped `config/thymio-rt.yaml` as it was at build time,
    /// with its relative paths naming the files of `config/` built into the binary
    /// (`aseba/thymio_ros.aesl` is `builtin:aseba/thymio_ros.aesl`): the full Thymio driver, from
    /// any directory, with no file around.
    pub fn builtin() -> Result<Config, ConfigError> {
        let mut c = Self::parse_yaml(SHIPPED_YAML, "(built in)")?;
        c.resolve_paths(|p| format!("{BUILTIN_PREFIX}{p}"));
        Ok(c)
    }

    /// Reads a YAML file. Its relative paths are relative to the file's directory; `builtin:`
    /// paths name the scripts built into the binary. Keys it leaves out take the schema's
    /// defaults (asebaros' and ROS-Thymio's), not the shipped file's.
    pub fn from_file(path: &Path) -> Result<Config, ConfigError> {
        let text = yaml_guard::read_to_string(path, YamlLimits::CONFIG).map_err(|source| {
            ConfigError::Read {
                path: path.display().to_string(),
                source,
            }
        })?;
        let mut c = Self::parse_yaml(&text, &path.display().to_string())?;
        let dir = path.parent().unwrap_or(Path::new("."));
        c.resolve_paths(|p| dir.join(p).display().to_string());
        Ok(c)
    }

    /// Replaces each relative path (script, calibration file, arena) by `resolve` of it.
    fn resolve_paths(&mut self, resolve: impl Fn(&str) -> String) {
        for p in [
            &mut self.bridge.script.path,
            &mut self.driver.calibration_file,
            &mut self.sim.arena,
            &mut self.record.file,
        ] {
            if !p.is_empty() && !is_builtin(p) && Path::new(p.as_str()).is_relative() {
                *p = resolve(p);
            }
        }
    }

    /// Parses YAML text (an empty document is the default configuration).
    pub fn from_yaml(text: &str) -> Result<Config, ConfigError> {
        Self::parse_yaml(text, "")
    }

    fn parse_yaml(text: &str, file: &str) -> Result<Config, ConfigError> {
        if text.trim().is_empty() {
            return Ok(Config::default());
        }
        yaml_guard::check(text, YamlLimits::CONFIG).map_err(|source| ConfigError::Bounds {
            file: file.to_owned(),
            source,
        })?;
        let value: Value = yaml_serde::from_str(text).map_err(|source| ConfigError::Syntax {
            file: file.to_owned(),
            source,
        })?;
        match value {
            Value::Mapping(m) => Self::from_mapping(m),
            Value::Null => Ok(Config::default()),
            _ => Err(ConfigError::NotAMap {
                file: file.to_owned(),
            }),
        }
    }

    /// Builds the configuration from dotted parameter names (`nodes.thymio.prefix`), as ROS
    /// parameters name them; later entries override earlier ones.
    pub fn from_dotted(params: &[(String, Value)]) -> Result<Config, ConfigError> {
        Config::default().with_overrides(params)
    }

    /// The configuration as nested maps, with the same keys as the YAML file: the tree the
    /// ROS parameters are the leaves of (see [`Self::parameters`]).
    pub fn to_mapping(&self) -> Mapping {
        let mut out = Mapping::new();
        // the sections are maps of serializable values: this cannot fail
        for part in [schema::tree(&self.bridge), schema::tree(&self.driver)] {
            out.extend(part.unwrap_or_default());
        }
        for (name, part) in [
            (RT, schema::tree(&self.rt)),
            (SIM, schema::tree(&self.sim)),
            (CONTROL, schema::tree(&self.control)),
            (ROS1, schema::tree(&self.ros1)),
            (RECORD, schema::tree(&self.record)),
        ] {
            out.insert(name.into(), Value::Mapping(part.unwrap_or_default()));
        }
        out
    }

    /// Every parameter of this configuration: its dotted name (the ROS parameter's), its value,
    /// and whether it applies at run time.
    pub fn parameters(&self) -> Vec<Parameter> {
        let tree = self.to_mapping();
        schema::leaves(&tree)
            .into_iter()
            .map(|(name, value)| Parameter {
                live: Self::is_live(&name),
                value: value.clone(),
                name,
            })
            .collect()
    }

    /// Whether the dotted parameter `name` applies at run time (the others are read at start).
    pub fn is_live(name: &str) -> bool {
        let (first, rest) = name.split_once('.').unwrap_or((name, ""));
        match first {
            RT => schema::is_live::<RtSection>(rest),
            SIM => schema::is_live::<SimParams>(rest),
            CONTROL => schema::is_live::<ControlParams>(rest),
            ROS1 => schema::is_live::<Ros1Params>(rest),
            RECORD => schema::is_live::<RecordParams>(rest),
            _ if is_key_of::<BridgeParams>(first) => schema::is_live::<BridgeParams>(name),
            _ => schema::is_live::<DriverParams>(name),
        }
    }

    /// This configuration with dotted-name overrides (ROS parameters) applied. asebaros' and
    /// ROS-Thymio's names are read as ours, or ignored when they mean nothing here, saying so
    /// ([`aliases`]).
    pub fn with_overrides(&self, overrides: &[(String, Value)]) -> Result<Config, ConfigError> {
        let (overrides, notes) = aliases::canonical_entries(overrides);
        notes.iter().for_each(aliases::Note::log);
        let mut m = self.to_mapping();
        for (name, value) in overrides {
            schema::insert(&mut m, &name, value)?;
        }
        Self::from_mapping(m)
    }

    /// Reads the sections from the nested maps: the top-level keys of the bridge and driver
    /// sections are their fields' (from the schema), `rt` and `sim` are sections of their own;
    /// asebaros' and ROS-Thymio's names are read as ours first ([`aliases`]).
    fn from_mapping(m: Mapping) -> Result<Config, ConfigError> {
        let (m, notes) = aliases::canonical_tree(m);
        notes.iter().for_each(aliases::Note::log);
        let (mut bridge, mut driver) = (Mapping::new(), Mapping::new());
        let (mut rt, mut sim) = (Value::Null, Value::Null);
        let (mut control, mut ros1, mut record) = (Value::Null, Value::Null, Value::Null);
        let (bridge_keys, driver_keys) = (
            schema::keys::<BridgeParams>(),
            schema::keys::<DriverParams>(),
        );
        for (k, v) in m {
            let Some(key) = k.as_str() else {
                return Err(ConfigError::KeyType(k));
            };
            match key {
                RT => rt = v,
                SIM => sim = v,
                CONTROL => control = v,
                ROS1 => ros1 = v,
                RECORD => record = v,
                _ if bridge_keys.iter().any(|b| b == key) => {
                    bridge.insert(k, v);
                }
                _ if driver_keys.iter().any(|d| d == key) => {
                    driver.insert(k, v);
                }
                _ => return Err(SchemaError::UnknownKey(key.to_owned()).into()),
            }
        }
        let config = Config {
            bridge: schema::parse("", Value::Mapping(bridge))?,
            driver: schema::parse("", Value::Mapping(driver))?,
            rt: schema::parse(RT, rt)?,
            sim: schema::parse(SIM, sim)?,
            control: schema::parse(CONTROL, control)?,
            ros1: schema::parse(ROS1, ros1)?,
            record: schema::parse(RECORD, record)?,
        };
        for t in &config.bridge.targets {
            t.parse::<msgs::target::Target>()
                .map_err(|source| ConfigError::Target {
                    target: t.clone(),
                    source,
                })?;
        }
        config.check_speed_refresh()?;
        Ok(config)
    }

    /// With the on-robot watchdog on (`script.constants.SPEED_TIMEOUT` > 0),
    /// `rt.speed_refresh_ms` must be shorter than it: otherwise the robot would stop itself
    /// between two refreshes.
    fn check_speed_refresh(&self) -> Result<(), Invalid> {
        let refresh = self.rt.speed_refresh_ms;
        let key = "script.constants.SPEED_TIMEOUT";
        match self.bridge.script.constants.get("SPEED_TIMEOUT") {
            Some(&t) if t < 0 => Err(Invalid::new(
                key,
                t,
                "ms is negative (0 turns the on-robot watchdog off)",
            )),
            Some(&t) if t > 0 && refresh >= t as u64 => Err(Invalid::new(
                "rt.speed_refresh_ms",
                refresh,
                format!(
                    "must be shorter than {key} ({t} ms), or the robot stops itself between two refreshes"
                ),
            )),
            _ => Ok(()),
        }
    }
}

/// One parameter of the configuration (see [`Config::parameters`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Parameter {
    /// Dotted name: the ROS parameter's, the YAML keys joined by dots.
    pub name: String,
    /// Value.
    pub value: Value,
    /// Applied at run time (else read at start).
    pub live: bool,
}

fn is_key_of<T: Section>(key: &str) -> bool {
    schema::keys::<T>().iter().any(|k| k == key)
}

#[cfg(test)]
mod alias_tests;
#[cfg(test)]
mod control_tests;
#[cfg(test)]
mod tests;
