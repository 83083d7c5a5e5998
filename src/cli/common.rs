//! What the network tools (`nodes`, `vars`, `emit`) share: a runtime on one target with
//! neither switch nor driver, waiting for nodes to be described.

use super::CliError;
use crate::config::Config;
use crate::runtime::Runtime;
use handoff::NodeId;
use nrt_engine::engine::EngineEvent;
use nrt_engine::network::NetworkEvent;
use std::time::Duration;

/// Options of the network tools.
#[derive(Debug, Clone, clap::Args)]
pub struct TargetArgs {
    /// Target (Dashel syntax): tcp:host=H;port=P, ser:device=/dev/ttyACM0, ser:name=Thymio-II, sim.
    #[arg(long, short = 't', value_name = "TARGET")]
    pub target: String,
    /// How long to wait for the network [s].
    #[arg(long, default_value_t = 5.0, value_name = "SECONDS")]
    pub timeout: f64,
}

impl TargetArgs {
    /// The wait bound.
    pub fn timeout(&self) -> Result<Duration, CliError> {
        Duration::try_from_secs_f64(self.timeout)
            .ok()
            .filter(|d| !d.is_zero())
            .ok_or_else(|| CliError::new(format!("invalid --timeout {}", self.timeout)))
    }
}

/// Starts a runtime on the target, for a tool: no switch, no script, no robot driving, and
/// an unprivileged RT thread.
pub fn tool_runtime(args: &TargetArgs) -> Result<Runtime, CliError> {
    args.target
        .parse::<msgs::target::Target>()
        .map_err(|e| CliError::new(e.to_string()))?;
    let mut config = Config::default();
    config.bridge.targets = vec![args.target.clone()];
    config.bridge.port = 0;
    config.driver.enabled = false;
    config.rt.priority = 0;
    config.rt.lock_memory = false;
    Runtime::start(&config).map_err(CliError::new)
}

/// Waits until the network has been quiet: every node that answered is described, and at
/// least one ping period passed since the last discovery. Errors if no link connects or no
/// node answers within the timeout.
pub fn wait_for_nodes(rt: &mut Runtime, target: &str, timeout: Duration) -> Result<(), CliError> {
    let mut last_change = std::time::Instant::now();
    let mut connected = false;
    let settle = Duration::from_millis(1200);
    let done = rt.poll_until(timeout, |engine, events| {
        for e in events {
            match e {
                EngineEvent::LinkUp { .. } => {
                    connected = true;
                    last_change = std::time::Instant::now();
                }
                EngineEvent::Network(NetworkEvent::NodeDiscovered { .. })
                | EngineEvent::Network(NetworkEvent::NodeAccepted { .. })
                | EngineEvent::Network(NetworkEvent::NodeIgnored { .. }) => {
                    last_change = std::time::Instant::now()
                }
                _ => {}
            }
        }
        let net = engine.network();
        let any = net.nodes().next().is_some();
        let all_described = net.nodes().all(|n| n.description.is_some());
        (any && all_described && last_change.elapsed() >= settle).then_some(())
    });
    match done {
        Some(()) => Ok(()),
        None if !connected => Err(CliError::new(format!(
            "cannot connect to {target} within {:.1} s",
            timeout.as_secs_f64()
        ))),
        None => Err(CliError::new(format!(
            "no Aseba node answered on {target} within {:.1} s",
            timeout.as_secs_f64()
        ))),
    }
}

/// Reads variable `name` of `node`, asking again when a request times out (a busy link or
/// robot) until `timeout` is spent.
pub fn read_variable(
    rt: &mut Runtime,
    node: NodeId,
    name: &str,
    timeout: Duration,
) -> Result<Vec<i16>, CliError> {
    let deadline = std::time::Instant::now() + timeout;
    loop {
        let req = rt
            .engine
            .network_mut()
            .get_variable(node, name, std::time::Instant::now())
            .map_err(CliError::new)?;
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let got = rt.poll_until(left, |_, events| {
            events.iter().find_map(|e| match e {
                EngineEvent::Network(NetworkEvent::Variables { request: r, result })
                    if *r == req =>
                {
                    Some(result.clone())
                }
                _ => None,
            })
        });
        match got {
            Some(Ok(v)) => return Ok(v),
            Some(Err(nrt_engine::network::NetError::Timeout { .. }))
                if std::time::Instant::now() < deadline =>
            {
                tracing::debug!("no answer to a read of {name}: asking again");
            }
            Some(Err(e)) => return Err(CliError::new(e)),
            None => return Err(CliError::new("no answer from the node")),
        }
    }
}
