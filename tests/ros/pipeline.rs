//! Test support of the root package's ROS tests: the whole driver in this process — RT loop (unprivileged),
//! connector thread, NRT engine and the ROS 2 bridge on its own thread — connected to TCP Aseba peers.
#![allow(dead_code)]

use msgs::rtmsg::{channels, ChannelConfig};
use nrt::engine::{Engine, EngineConfig};
use nrt::params::BridgeParams;
use nrt::ros::{RosNode, RosOptions};
use nrt::thymio::params::DriverParams;
use rt::handoff::link_port;
use rt::nrt_connector::{spawn_connector, ConnectSpec, ConnectorConfig};
use rt::rtloop::{self, RtConfig};
use rt::sched::RtSetup;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;

/// Puts this process on its own DDS domain (before any r2r context exists), confined to loopback.
pub fn ros_environment(domain_id: u32) {
    static SET: OnceLock<()> = OnceLock::new();
    SET.get_or_init(|| {
        std::env::set_var("ROS_DOMAIN_ID", domain_id.to_string());
        std::env::set_var("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST");
    });
}

/// A running driver; stopped (bounded) when dropped.
pub struct Pipeline {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Result<(), String>>>,
}

impl Pipeline {
    /// Starts the driver on the TCP Aseba peers `ports` (127.0.0.1) with the bridge parameters `bridge` (its
    /// `targets` are set from `ports`) and the ROS options `options`.
    pub fn start(ports: &[u16], mut bridge: BridgeParams, options: RosOptions) -> Pipeline {
        bridge.targets = ports
            .iter()
            .map(|p| format!("tcp:host=127.0.0.1;port={p}"))
            .collect();
        let specs: Vec<ConnectSpec> = ports
            .iter()
            .map(|p| ConnectSpec::Tcp {
                host: "127.0.0.1".into(),
                port: *p,
            })
            .collect();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("nrt-ros".into())
            .spawn(move || run(specs, bridge, options, &flag))
            .expect("spawn the NRT thread");
        Pipeline {
            stop,
            thread: Some(thread),
        }
    }

    /// Stops the driver and reports how its NRT thread ended.
    pub fn stop(mut self) -> Result<(), String> {
        self.halt()
    }

    fn halt(&mut self) -> Result<(), String> {
        self.stop.store(true, Ordering::Relaxed);
        match self.thread.take() {
            Some(t) => t.join().map_err(|_| "the NRT thread panicked".to_owned())?,
            None => Ok(()),
        }
    }
}

impl Drop for Pipeline {
    fn drop(&mut self) {
        let _ = self.halt();
    }
}

fn run(
    specs: Vec<ConnectSpec>,
    bridge: BridgeParams,
    options: RosOptions,
    stop: &AtomicBool,
) -> Result<(), String> {
    let (rt_ends, nrt_ends) = channels(&ChannelConfig::default());
    let (port, rt_port) = link_port();
    let rt_cfg = RtConfig {
        setup: RtSetup::unprivileged(),
        honor_signals: false,
        ..RtConfig::default()
    };
    let rt = rtloop::spawn(rt_cfg, rt_ends, rt_port, Vec::new()).map_err(|e| e.to_string())?;
    let connector = spawn_connector(ConnectorConfig::default(), specs, Vec::new(), port)
        .map_err(|e| e.to_string())?;
    let effective = match serde_yaml::to_value(&bridge).map_err(|e| e.to_string())? {
        serde_yaml::Value::Mapping(m) => m,
        _ => return Err("the bridge parameters are not a map".into()),
    };
    let mut engine = Engine::new(
        EngineConfig {
            bridge,
            driver: DriverParams::default(),
        },
        nrt_ends,
    )
    .map_err(|e| e.to_string())?;
    let ros = RosNode::new(options).map_err(|e| e.to_string())?;
    let mut bridge = ros.start(&effective).map_err(|e| e.to_string())?;
    bridge.run(&mut engine, stop);
    let clean = engine.rt_exited();
    rt.stop();
    rt.join().map_err(|_| "the RT thread panicked".to_owned())?;
    if !clean {
        return Err("the RT thread did not end on the engine's shutdown command".into());
    }
    connector.join();
    Ok(())
}
