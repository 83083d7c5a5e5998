//! The configuration of `thymio-rt run`: one naming scheme for the YAML file and the ROS
//! parameters. Top-level keys are the asebaros parameter names (`targets`, `port`, `nodes`,
//! `script`, …) and the ROS-Thymio ones (`axis_length`, `motor`, `proximity`, …) — nested
//! maps in YAML, dotted names as ROS parameters (`nodes.thymio.prefix`) — plus the sections
//! `rt` (real-time thread) and `sim` (embedded simulator). Unknown keys are errors that name
//! the key.

use nrt_engine::params::BridgeParams;
use nrt_engine::thymio::params::DriverParams;
use serde::{Deserialize, Serialize};
use serde_yaml::{Mapping, Value};
use std::path::Path;

/// Top-level keys that belong to the generic bridge (asebaros).
const BRIDGE_KEYS: &[&str] = &[
    "targets",
    "port",
    "address",
    "loop",
    "shutdown_on_unconnect",
    "reset_on_closing",
    "set_id_variable",
    "highest_acceptable_protocol_version",
    "nodes",
    "script",
    "switch",
];
/// Top-level keys that belong to the Thymio driver (ROS-Thymio).
const DRIVER_KEYS: &[&str] = &[
    "enabled",
    "axis_length",
    "odom_frame",
    "robot_frame",
    "tf_prefix",
    "odom_max_rate",
    "left_wheel_joint",
    "right_wheel_joint",
    "ground",
    "calibration_file",
    "simulation",
    "cmd_vel_timeout",
    "lost_robot_timeout",
    "motor",
    "proximity",
    "publish_model",
    "obstacle_stop",
    "restart_stopped_vm",
];

/// The real-time thread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RtParams {
    /// Loop period [µs] (1000 = 1 kHz).
    pub period_us: u64,
    /// CPU to pin the thread to (-1: the last CPU).
    pub cpu: i32,
    /// SCHED_FIFO priority (1–99; 0 keeps SCHED_OTHER).
    pub priority: u8,
    /// `mlockall(MCL_CURRENT | MCL_FUTURE)`.
    pub lock_memory: bool,
    /// Longest time [µs] the NRT side waits when nothing wakes it (the RT thread and the ROS
    /// spinner ring its doorbell when they have something): the period of its timers and of
    /// the Aseba switch's clients (smaller = more CPU).
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

impl Default for RtParams {
    fn default() -> Self {
        Self {
            period_us: 1000,
            cpu: -1,
            priority: 50,
            lock_memory: true,
            nrt_poll_us: 1000,
            wake_nrt: true,
            speed_refresh_ms: 100,
        }
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
}

impl Default for SimParams {
    fn default() -> Self {
        Self {
            robots: 1,
            seed: 1,
            arena: String::new(),
        }
    }
}

/// The whole configuration.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Config {
    /// Generic Aseba bridge (asebaros names).
    pub bridge: BridgeParams,
    /// Thymio driver (ROS-Thymio names).
    pub driver: DriverParams,
    /// Real-time thread.
    pub rt: RtParams,
    /// Embedded simulator.
    pub sim: SimParams,
}

/// A configuration error: names the key or the file.
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
    /// Not YAML, or not a map at the top.
    #[error("configuration {0}")]
    Syntax(String),
    /// A key no part of thymio-rt knows.
    #[error("unknown configuration key `{0}`")]
    UnknownKey(String),
    /// A known key with a bad value.
    #[error("configuration: {0}")]
    Value(String),
    /// A target string that does not parse.
    #[error("configuration key `targets`: {0}")]
    Target(String),
}

impl Config {
    /// Reads a YAML file.
    pub fn from_file(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.display().to_string(),
            source,
        })?;
        let mut c = Self::from_yaml(&text).map_err(|e| match e {
            ConfigError::Syntax(m) => ConfigError::Syntax(format!("{}: {m}", path.display())),
            other => other,
        })?;
        // Paths in a file are relative to the file.
        let dir = path.parent().unwrap_or(Path::new("."));
        for p in [
            &mut c.bridge.script.path,
            &mut c.driver.calibration_file,
            &mut c.sim.arena,
        ] {
            if !p.is_empty() && Path::new(p.as_str()).is_relative() {
                *p = dir.join(p.as_str()).display().to_string();
            }
        }
        Ok(c)
    }

    /// Parses YAML text (an empty document is the default configuration).
    pub fn from_yaml(text: &str) -> Result<Config, ConfigError> {
        if text.trim().is_empty() {
            return Ok(Config::default());
        }
        let value: Value =
            serde_yaml::from_str(text).map_err(|e| ConfigError::Syntax(e.to_string()))?;
        match value {
            Value::Mapping(m) => Self::from_mapping(m),
            Value::Null => Ok(Config::default()),
            _ => Err(ConfigError::Syntax("must be a map of parameters".into())),
        }
    }

    /// Builds the configuration from dotted parameter names (`nodes.thymio.prefix`), as ROS
    /// parameters name them; later entries override earlier ones.
    pub fn from_dotted(params: &[(String, Value)]) -> Result<Config, ConfigError> {
        let mut root = Mapping::new();
        for (name, value) in params {
            insert_dotted(&mut root, name, value.clone())?;
        }
        Self::from_mapping(root)
    }

    /// The configuration as nested maps, with the same keys as the YAML file.
    pub fn to_mapping(&self) -> Mapping {
        let mut out = Mapping::new();
        for part in [
            serde_yaml::to_value(&self.bridge),
            serde_yaml::to_value(&self.driver),
        ] {
            if let Ok(Value::Mapping(m)) = part {
                out.extend(m);
            }
        }
        if let Ok(v) = serde_yaml::to_value(&self.rt) {
            out.insert("rt".into(), v);
        }
        if let Ok(v) = serde_yaml::to_value(&self.sim) {
            out.insert("sim".into(), v);
        }
        out
    }

    /// This configuration with dotted-name overrides (ROS parameters) applied.
    pub fn with_overrides(&self, overrides: &[(String, Value)]) -> Result<Config, ConfigError> {
        let mut m = self.to_mapping();
        for (name, value) in overrides {
            insert_dotted(&mut m, name, value.clone())?;
        }
        Self::from_mapping(m)
    }

    fn from_mapping(m: Mapping) -> Result<Config, ConfigError> {
        let (mut bridge, mut driver) = (Mapping::new(), Mapping::new());
        let (mut rt, mut sim) = (Value::Null, Value::Null);
        for (k, v) in m {
            let key = k
                .as_str()
                .ok_or_else(|| ConfigError::Syntax(format!("key {k:?} is not a string")))?;
            match key {
                "rt" => rt = v,
                "sim" => sim = v,
                _ if BRIDGE_KEYS.contains(&key) => {
                    bridge.insert(k, v);
                }
                _ if DRIVER_KEYS.contains(&key) => {
                    driver.insert(k, v);
                }
                _ => return Err(ConfigError::UnknownKey(key.to_owned())),
            }
        }
        let config = Config {
            bridge: section("", Value::Mapping(bridge))?,
            driver: section("", Value::Mapping(driver))?,
            rt: if rt.is_null() {
                RtParams::default()
            } else {
                section("rt.", rt)?
            },
            sim: if sim.is_null() {
                SimParams::default()
            } else {
                section("sim.", sim)?
            },
        };
        for t in &config.bridge.targets {
            t.parse::<msgs::target::Target>()
                .map_err(|e| ConfigError::Target(e.to_string()))?;
        }
        config
            .driver
            .obstacle_stop
            .validate()
            .map_err(ConfigError::Value)?;
        config.check_speed_refresh()?;
        config
            .bridge
            .switch
            .validate()
            .map_err(ConfigError::Value)?;
        if config.rt.nrt_poll_us == 0 {
            return Err(ConfigError::Value(
                "rt.nrt_poll_us: must be at least 1 µs (0 would spin)".into(),
            ));
        }
        Ok(config)
    }
}

impl Config {
    /// `rt.speed_refresh_ms` must be positive and, with the on-robot watchdog on
    /// (`script.constants.SPEED_TIMEOUT` > 0), shorter than it: otherwise the robot would stop
    /// itself between two refreshes.
    fn check_speed_refresh(&self) -> Result<(), ConfigError> {
        let refresh = self.rt.speed_refresh_ms;
        if refresh == 0 {
            return Err(ConfigError::Value(
                "rt.speed_refresh_ms: must be at least 1 ms (it feeds the on-robot watchdog)"
                    .into(),
            ));
        }
        match self.bridge.script.constants.get("SPEED_TIMEOUT") {
            Some(&t) if t < 0 => Err(ConfigError::Value(format!(
                "script.constants.SPEED_TIMEOUT: {t} ms is negative (0 turns the on-robot watchdog off)"
            ))),
            Some(&t) if t > 0 && refresh >= t as u64 => Err(ConfigError::Value(format!(
                "rt.speed_refresh_ms ({refresh}) must be shorter than script.constants.SPEED_TIMEOUT ({t} ms), \
                 or the robot stops itself between two refreshes"
            ))),
            _ => Ok(()),
        }
    }
}

/// Deserializes one part of the configuration; an error names the key it comes from
/// (`port`, `rt.period_us`), found by deserializing the keys one at a time.
fn section<T: serde::de::DeserializeOwned>(prefix: &str, value: Value) -> Result<T, ConfigError> {
    let whole = serde_yaml::from_value::<T>(value.clone());
    let err = match whole {
        Ok(v) => return Ok(v),
        Err(e) => e,
    };
    if let Value::Mapping(m) = &value {
        for (k, v) in m {
            let mut one = Mapping::new();
            one.insert(k.clone(), v.clone());
            if let Err(e) = serde_yaml::from_value::<T>(Value::Mapping(one)) {
                let key = k.as_str().unwrap_or("?");
                return Err(ConfigError::Value(format!("key `{prefix}{key}`: {e}")));
            }
        }
    }
    Err(ConfigError::Value(format!(
        "{}{err}",
        if prefix.is_empty() {
            String::new()
        } else {
            format!("{prefix}: ")
        }
    )))
}

fn insert_dotted(root: &mut Mapping, name: &str, value: Value) -> Result<(), ConfigError> {
    let mut parts = name.split('.').peekable();
    let mut map = root;
    while let Some(part) = parts.next() {
        if part.is_empty() {
            return Err(ConfigError::UnknownKey(name.to_owned()));
        }
        let key = Value::String(part.to_owned());
        if parts.peek().is_none() {
            map.insert(key, value);
            return Ok(());
        }
        let entry = map
            .entry(key)
            .or_insert_with(|| Value::Mapping(Mapping::new()));
        if !entry.is_mapping() {
            *entry = Value::Mapping(Mapping::new());
        }
        map = entry.as_mapping_mut().expect("just made a mapping");
    }
    Ok(())
}

#[cfg(test)]
mod tests;
