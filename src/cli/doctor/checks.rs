//! The checks' results and the verdicts on what was read: protocol version, battery voltage, the
//! wheels (the sensors' are [`super::sensors`]). Pure functions of the readings, so that each
//! verdict is tested without a robot.

use serde::Serialize;
use serde_json::{json, Value};

/// A check's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Fine.
    Ok,
    /// Not done (does not apply, or an earlier failure prevents it).
    Skip,
    /// Works, but look at it.
    Warn,
    /// Broken: the robot cannot be driven until it is fixed.
    Fail,
}

impl Status {
    /// Its label in the table.
    pub fn label(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Skip => "skip",
            Status::Warn => "warn",
            Status::Fail => "FAIL",
        }
    }
}

/// One check's result: what was found, and for a failure or warning the fix.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    /// Its name (`usb`, `port`, `holders`, `permission`, `connect`, `protocol`, `script`,
    /// `battery`, `proximity`, `ground`, `wheels`).
    pub check: &'static str,
    /// The node it is about, for the per-node checks.
    pub node: Option<u16>,
    /// The outcome.
    pub status: Status,
    /// What was found (for a failure: the cause).
    pub message: String,
    /// What to do about it.
    pub fix: Option<String>,
    /// The values read, for scripts.
    pub data: Value,
}

impl Check {
    /// A check with `status` and `message`, no fix, no data.
    pub fn new(check: &'static str, status: Status, message: impl Into<String>) -> Check {
        Check {
            check,
            node: None,
            status,
            message: message.into(),
            fix: None,
            data: Value::Null,
        }
    }

    /// With the fix.
    pub fn fix(mut self, fix: impl Into<String>) -> Check {
        self.fix = Some(fix.into());
        self
    }

    /// About node `id`.
    pub fn node(mut self, id: u16) -> Check {
        self.node = Some(id);
        self
    }

    /// With data.
    pub fn data(mut self, data: Value) -> Check {
        self.data = data;
        self
    }
}

/// The Thymio's battery voltage from `_vbat[0]`: the firmware's scale puts 3.3 V at 655
/// (aseba.md §4.2, "saves settings only if > 655 ≈ 3.3 V").
pub fn battery_volts(raw: i16) -> f64 {
    f64::from(raw) * 3.3 / 655.0
}

/// Below this the firmware stops saving settings: the battery is empty.
pub const BATTERY_EMPTY_V: f64 = 3.3;
/// Below this the battery is low (the Thymio's Li-Po is about 3.7 V nominal, 4.2 V full).
pub const BATTERY_LOW_V: f64 = 3.5;

/// The battery verdict of `_vbat` (`None`: the node has no `_vbat`, e.g. Aseba Playground).
pub fn battery(raw: Option<i16>) -> Check {
    let Some(raw) = raw else {
        return Check::new(
            "battery",
            Status::Skip,
            "the node has no _vbat (a simulator?)",
        );
    };
    let v = battery_volts(raw);
    let data = json!({"vbat": raw, "volts": (v * 100.0).round() / 100.0});
    let (status, what, fix) = if v < BATTERY_EMPTY_V {
        (
            Status::Fail,
            "empty",
            Some("charge the robot (USB cable, about 2 h for a full charge)"),
        )
    } else if v < BATTERY_LOW_V {
        (Status::Warn, "low", Some("charge the robot soon"))
    } else {
        (Status::Ok, "fine", None)
    };
    let c = Check::new("battery", status, format!("{v:.2} V ({what}; _vbat {raw})")).data(data);
    match fix {
        Some(f) => c.fix(f),
        None => c,
    }
}

/// The protocol verdict: thymio-rt speaks protocol `host` and bridges nodes speaking `min..=max`
/// (`max`: `highest_acceptable_protocol_version`).
pub fn protocol(version: u16, min: u16, max: u16, host: u16) -> Check {
    let data =
        json!({"protocol_version": version, "accepted": [min, max], "host_protocol_version": host});
    if (min..=max).contains(&version) {
        return Check::new(
            "protocol",
            Status::Ok,
            format!("protocol {version} (thymio-rt speaks {host}, accepts {min}..={max})"),
        )
        .data(data);
    }
    let fix = if version < min {
        "update the robot's firmware with Thymio Suite (firmware 13 and 14 speak protocol 9)"
            .to_owned()
    } else {
        format!("raise highest_acceptable_protocol_version (now {max}) in the configuration")
    };
    Check::new(
        "protocol",
        Status::Fail,
        format!("protocol {version}, outside the accepted {min}..={max}"),
    )
    .fix(fix)
    .data(data)
}

/// The wheel check's verdict: each wheel's measured speed while driven at `target` forward then
/// backward, and after the stop.
pub fn wheels(forward: [i16; 2], backward: [i16; 2], stopped: [i16; 2], target: i16) -> Check {
    let data =
        json!({"target": target, "forward": forward, "backward": backward, "stopped": stopped});
    let min = target / 3;
    let mut bad = Vec::new();
    for (i, side) in ["left", "right"].iter().enumerate() {
        if forward[i] < min || backward[i] > -min {
            bad.push(format!(
                "{side} wheel read {} forward and {} backward",
                forward[i], backward[i]
            ));
        }
        if stopped[i].abs() >= min {
            bad.push(format!(
                "{side} wheel still turns ({}) after the stop",
                stopped[i]
            ));
        }
    }
    if bad.is_empty() {
        return Check::new(
            "wheels",
            Status::Ok,
            format!("driven at ±{target}: read {forward:?} forward, {backward:?} backward, {stopped:?} stopped"),
        )
        .data(data);
    }
    Check::new("wheels", Status::Fail, format!("{} (driven at ±{target})", bad.join("; ")))
        .fix("lift the robot and check that both wheels turn freely; charge the battery; a wheel that never turns needs repair")
        .data(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn battery_levels() {
        assert!((battery_volts(655) - 3.3).abs() < 1e-9);
        assert_eq!(battery(Some(794)).status, Status::Ok); // 4.0 V
        assert_eq!(battery(Some(690)).status, Status::Warn); // 3.48 V
        let empty = battery(Some(600));
        assert_eq!(empty.status, Status::Fail);
        assert!(empty.fix.unwrap().contains("charge"));
        assert_eq!(battery(None).status, Status::Skip);
    }

    #[test]
    fn protocol_range() {
        assert_eq!(protocol(9, 4, 100, 9).status, Status::Ok);
        let old = protocol(3, 4, 100, 9);
        assert_eq!(old.status, Status::Fail);
        assert!(old.fix.unwrap().contains("firmware"));
        let new = protocol(9, 4, 5, 9);
        assert!(new
            .fix
            .unwrap()
            .contains("highest_acceptable_protocol_version"));
    }

    #[test]
    fn wheel_verdicts() {
        assert_eq!(
            wheels([95, 102], [-98, -100], [0, 2], 100).status,
            Status::Ok
        );
        let stuck = wheels([95, 0], [-98, 0], [0, 0], 100);
        assert_eq!(stuck.status, Status::Fail);
        assert!(
            stuck.message.contains("right wheel read 0"),
            "{}",
            stuck.message
        );
        let coasting = wheels([95, 100], [-98, -100], [0, -60], 100);
        assert!(coasting.message.contains("still turns"));
    }
}
