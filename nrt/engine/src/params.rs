//! The bridge parameters, named as asebaros names them (ros-aseba-interface.md §2.2), with one
//! naming scheme: dotted ROS 2 names (`script.reload_on_reconnect`, `nodes.<class>.prefix`),
//! loadable from YAML (nested maps) and from ROS parameters.

use crate::schema::{Invalid, Section};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Default TCP port of the Aseba switch (`ASEBA_DEFAULT_PORT`).
pub const DEFAULT_SWITCH_PORT: u16 = 33333;

/// Every parameter of the generic Aseba bridge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BridgeParams {
    /// Dashel targets tried in order (empty: the embedded simulated Thymio).
    pub targets: Vec<String>,
    /// Port of the Aseba switch (0 disables it).
    pub port: u16,
    /// Address the switch binds (127.0.0.1 unless explicitly changed).
    pub address: String,
    /// Echo Aseba messages back to the client that sent them.
    #[serde(rename = "loop")]
    pub loop_back: bool,
    /// On target loss, shut down instead of reconnecting.
    pub shutdown_on_unconnect: bool,
    /// On exit, send RESET to every bridged node.
    pub reset_on_closing: bool,
    /// After accepting a node, write its id into its `id_variable`.
    pub set_id_variable: bool,
    /// Highest protocol version accepted (values below 5 mean 5).
    pub highest_acceptable_protocol_version: u16,
    /// Prepend the target node id to ROS→Aseba events of the nodes no class decides it for (an older asebaros'
    /// top-level name; `nodes.<class>.include_id_in_events` wins).
    pub include_id_in_events: bool,
    /// Largest number of bridged nodes over every type (≤ 0: unbounded; an older asebaros' top-level name); a
    /// class's `nodes.<class>.maximal_number` bounds its type as well.
    pub maximal_number_of_nodes: i32,
    /// Node classes (`nodes.<class>.*`).
    pub nodes: BTreeMap<String, NodeClass>,
    /// Default script (`script.*`).
    pub script: ScriptParams,
    /// Limits of the Aseba switch toward its clients and the robot links (`switch.*`).
    pub switch: SwitchParams,
}

impl Default for BridgeParams {
    fn default() -> Self {
        Self {
            targets: Vec::new(),
            port: DEFAULT_SWITCH_PORT,
            address: "127.0.0.1".into(),
            loop_back: false,
            shutdown_on_unconnect: false,
            reset_on_closing: false,
            set_id_variable: false,
            highest_acceptable_protocol_version: 100,
            include_id_in_events: false,
            maximal_number_of_nodes: -1,
            nodes: BTreeMap::new(),
            script: ScriptParams::default(),
            switch: SwitchParams::default(),
        }
    }
}

impl BridgeParams {
    /// The effective highest accepted protocol version (asebaros resets values below 5 to 5).
    pub fn max_protocol_version(&self) -> u16 {
        self.highest_acceptable_protocol_version.max(5)
    }
}

/// One node class (`nodes.<class>`): which nodes it matches and how they are bridged.
/// Unset attributes fall back as asebaros resolves them (see [`crate::policy`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NodeClass {
    /// Aseba node type name to match (`thymio-II`); empty matches any type.
    pub name: String,
    /// Node id to match; -1 matches any id.
    #[serde(default = "any_id")]
    pub id: i32,
    /// Bridge (true) or ignore (false).
    pub accept: Option<bool>,
    /// Maximal number of bridged nodes of this type (≤ 0: unbounded).
    pub maximal_number: Option<i32>,
    /// Fixed ROS namespace.
    pub namespace: Option<String>,
    /// Namespace `{prefix}{id}` when no namespace is set.
    pub prefix: Option<String>,
    /// Variable holding the node id (Thymio: `_id`).
    pub id_variable: Option<String>,
    /// Prepend the target node id to ROS→Aseba event payloads.
    pub include_id_in_events: Option<bool>,
}

fn any_id() -> i32 {
    -1
}

/// `switch.*` parameters: what the Aseba switch takes from its clients and forwards.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SwitchParams {
    /// Largest payload (bytes) of a client's frame that is forwarded (1–516; 516 is the
    /// protocol's maximum and what the Thymio-II firmware takes). Larger frames are refused
    /// whole and counted for the client.
    pub max_payload: u16,
    /// Bytes queued toward one client (at least 522, one frame); frames for a client whose
    /// queue is full are dropped and counted for it.
    pub client_queue: u32,
    /// Bytes per second the switch's clients may send toward one TCP or in-process (simulated)
    /// robot link (at least 2000); the excess is dropped and counted per client. A serial
    /// link's budget is three quarters of its line rate (baud / 10 × 3/4: 8 640 B/s at
    /// 115200), the rest kept for the driver's own traffic, which does not count against it.
    pub tcp_budget: u32,
    /// Between targets (several links form one Aseba network), send every frame read on one link to every
    /// other link, as asebaros' hub does. Off: a link where no node is known gets everything; one whose nodes
    /// are all known gets the user events one of them may handle (one whose program we did not load, or our
    /// script with a handler for it) and the commands of hosts, not what nodes say to hosts.
    pub forward_unhandled_events: bool,
}

/// Default of `switch.tcp_budget` (B/s): ten times a 115200-baud serial link, far below what
/// a simulated Thymio or Aseba Playground takes.
pub const DEFAULT_TCP_BUDGET: u32 = 100_000;

impl Default for SwitchParams {
    fn default() -> Self {
        Self {
            max_payload: msgs::wire::MAX_PAYLOAD as u16,
            client_queue: 256 * 1024,
            tcp_budget: DEFAULT_TCP_BUDGET,
            forward_unhandled_events: false,
        }
    }
}

impl SwitchParams {
    /// Checks the ranges; the error names the key (relative to `switch`).
    pub fn validate(&self) -> Result<(), Invalid> {
        let max = msgs::wire::MAX_PAYLOAD;
        if !(1..=max as u16).contains(&self.max_payload) {
            return Err(Invalid::new(
                "max_payload",
                self.max_payload,
                format!("is outside 1-{max} (the Aseba protocol's largest payload)"),
            ));
        }
        if (self.client_queue as usize) < msgs::wire::MAX_FRAME {
            return Err(Invalid::new(
                "client_queue",
                self.client_queue,
                format!(
                    "bytes cannot hold one frame ({} bytes)",
                    msgs::wire::MAX_FRAME
                ),
            ));
        }
        if self.tcp_budget < 2000 {
            return Err(Invalid::new(
                "tcp_budget",
                self.tcp_budget,
                "B/s is below 2000 (a script upload would never pass)",
            ));
        }
        Ok(())
    }
}

/// The generic bridge's parameters sit at the top level (asebaros names); none applies live.
impl Section for BridgeParams {
    fn validate(&self) -> Result<(), Invalid> {
        self.switch.validate().map_err(|e| e.under("switch"))
    }
}

/// `script.*` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ScriptParams {
    /// Path of the default `.aesl` script, loaded on every accepted node.
    pub path: String,
    /// Constant overrides.
    pub constants: BTreeMap<String, i16>,
    /// Reload the script when a node comes back.
    pub reload_on_reconnect: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_roundtrip_and_defaults() {
        let yaml = r#"
targets: ["tcp:host=127.0.0.1;port=33333"]
port: 44444
loop: true
nodes:
  thymio: {name: thymio-II, prefix: thymio_, id_variable: _id, include_id_in_events: true}
  other: {accept: false}
script:
  path: /tmp/x.aesl
  constants: {MOTOR_PERIOD: 5}
"#;
        let p: BridgeParams = yaml_serde::from_str(yaml).unwrap();
        assert_eq!(p.port, 44444);
        assert!(p.loop_back);
        assert_eq!(p.nodes["thymio"].id, -1);
        assert_eq!(p.nodes["thymio"].prefix.as_deref(), Some("thymio_"));
        assert_eq!(p.nodes["other"].accept, Some(false));
        assert_eq!(p.script.constants["MOTOR_PERIOD"], 5);
        assert_eq!(p.address, "127.0.0.1");
        let back: BridgeParams = yaml_serde::from_str(&yaml_serde::to_string(&p).unwrap()).unwrap();
        assert_eq!(back, p);
    }

    #[test]
    fn unknown_key_is_an_error_naming_it() {
        let err = yaml_serde::from_str::<BridgeParams>("portt: 3")
            .unwrap_err()
            .to_string();
        assert!(err.contains("portt"), "{err}");
        let err = yaml_serde::from_str::<BridgeParams>("nodes: {a: {acept: true}}")
            .unwrap_err()
            .to_string();
        assert!(err.contains("acept"), "{err}");
        let err = yaml_serde::from_str::<BridgeParams>("port: many")
            .unwrap_err()
            .to_string();
        assert!(err.contains("port"), "{err}");
    }

    #[test]
    fn protocol_floor_is_five() {
        let p = BridgeParams {
            highest_acceptable_protocol_version: 3,
            ..Default::default()
        };
        assert_eq!(p.max_protocol_version(), 5);
    }
}
