//! Raw motor commands of the generic interface while the driver drives the robot.
//!
//! The asebaros interface lets a client send the driver script's `set_speed` event
//! (`aseba/events/set_speed`, `aseba/anonymous_events`) or write `motor.left.target` /
//! `motor.right.target` (`aseba/set_variable`). Passed on as they come, they skip the cmd_vel
//! watchdog and the ±500 cap of the RT thread: 32767 reached the wheels and the robot kept it
//! forever. While the RT thread drives a node (its script has the driver events), these commands
//! become that robot's set-point instead: the wheel targets are turned into the twist that maps
//! back to them through the robot's own calibration (the quadratic model is inverted exactly,
//! to the unit) and handed to the RT thread as a cmd_vel would be. The RT thread then applies the
//! same cap (curvature kept), the same watchdog (`cmd_vel_timeout`: the robot stops when they
//! stop coming) and the same obstacle-stop reflex. A write of one wheel's target keeps the
//! other wheel at its last raw target if that is younger than the watchdog, else at 0. Nodes
//! the driver does not drive get the event or the write unchanged, as before.

use super::{Engine, EngineError, EngineEvent};
use crate::network::NetError;
use handoff::{NodeId, Quadratic, RobotCalibration, Twist2};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// The variables written through the set-point while the node is driven, by wheel.
pub const MOTOR_TARGETS: [&str; 2] = ["motor.left.target", "motor.right.target"];

/// The driver script's speed event.
pub(super) const SET_SPEED: &str = "set_speed";

/// Last raw targets per node, and the nodes already warned about the cap.
#[derive(Debug, Default)]
pub(super) struct RawMotor {
    last: BTreeMap<NodeId, ([i16; 2], Instant)>,
    warned_cap: BTreeSet<NodeId>,
}

/// Wheel speed (m/s) of `m` motor units: the calibration's forward model `q0·m + q1·m·|m|`.
/// A concave model (`q1 < 0`) turns back beyond its vertex: `m` is held at the vertex there,
/// the fastest the model allows (the RT thread's inverse returns the vertex for it).
fn units_to_si(m: f64, q: Quadratic) -> f64 {
    let m = if q.q1 < 0.0 {
        let vertex = q.q0 / (-2.0 * q.q1);
        m.clamp(-vertex, vertex)
    } else {
        m
    };
    q.q0 * m + q.q1 * m * m.abs()
}

/// The RT thread's cap, in motor units: if `max(|l|,|r|) > cap`, both become
/// `trunc(cap/max·m)` (the larger exactly `±trunc(cap)`), which keeps their ratio. Applied before
/// [`wheels_to_twist`], so that the twist stays within the calibration's model (a concave model
/// turns back beyond its vertex, far above any cap); the RT thread caps again, to no effect.
pub fn cap_pair(m: [i16; 2], cap: f64) -> [i16; 2] {
    let cap = cap.clamp(0.0, f64::from(i16::MAX));
    let m = m.map(f64::from);
    let max = m[0].abs().max(m[1].abs());
    if max <= cap {
        return m.map(|x| x as i16);
    }
    m.map(|x| {
        if x.abs() == max {
            (cap * x.signum()).trunc() as i16
        } else {
            (cap / max * x).trunc() as i16
        }
    })
}

/// The report of [`EngineEvent::RawMotorCapped`].
pub fn capped_message(node: NodeId, wheels: [i16; 2], cap: f64) -> String {
    format!(
        "node {node}: raw motor targets {wheels:?} beyond the driver's limit ±{cap}: capped \
         (the driver drives this robot: set_speed and motor.*.target go through the cmd_vel cap \
         and watchdog; further ones are capped silently)"
    )
}

/// The twist whose mapping through `cal` gives the wheel targets `m` (before the cap).
pub fn wheels_to_twist(m: [i16; 2], cal: &RobotCalibration) -> Twist2 {
    let l = units_to_si(f64::from(m[0]), cal.left);
    let r = units_to_si(f64::from(m[1]), cal.right);
    Twist2 {
        linear: (l + r) / 2.0,
        angular: (r - l) / cal.axis_length,
    }
}

impl Engine {
    /// Makes `wheels` node `node`'s set-point, if the RT thread drives it; `Ok(false)` if not.
    fn raw_set_point(&mut self, node: NodeId, wheels: [i16; 2]) -> Result<bool, EngineError> {
        let Some(slot) = self.robots.of_node(node) else {
            return Ok(false);
        };
        let robot = slot.robot;
        let cal = self
            .ends
            .nrt_params()
            .nrt_calibration(robot)
            .unwrap_or_else(|| slot.calibration.to_rt());
        let cap = cal.max_units;
        if wheels.iter().any(|w| f64::from(*w).abs() > cap) && self.raw.warned_cap.insert(node) {
            tracing::warn!("{}", capped_message(node, wheels, cap));
            self.events
                .push_back(EngineEvent::RawMotorCapped { node, wheels, cap });
        }
        self.ends
            .nrt_set_cmd_vel(robot, wheels_to_twist(cap_pair(wheels, cap), &cal))
            .map_err(|source| EngineError::param("set_speed", source))?;
        self.raw.last.insert(node, (wheels, Instant::now()));
        Ok(true)
    }

    /// `set_speed` for node `node` (its arguments without the node id): the robot's set-point
    /// if it is driven (`Ok(true)`), else `Ok(false)` (to be sent as an event).
    pub(super) fn raw_set_speed(
        &mut self,
        node: NodeId,
        args: &[i16],
    ) -> Result<bool, EngineError> {
        if self.robots.of_node(node).is_none() {
            return Ok(false);
        }
        let [l, r] = args else {
            return Err(EngineError::EventSize {
                name: SET_SPEED.to_owned(),
                expected: 2,
                got: args.len(),
            });
        };
        self.raw_set_point(node, [*l, *r])
    }

    /// Writes a variable of node `node` by name (size checked). While the RT thread drives the
    /// node, `motor.left.target` and `motor.right.target` become its set-point (see the module
    /// documentation); anything else is written as it comes.
    pub fn set_variable(
        &mut self,
        node: NodeId,
        name: &str,
        values: &[i16],
    ) -> Result<(), EngineError> {
        if let Some(wheel) = MOTOR_TARGETS.iter().position(|t| *t == name) {
            if self.robots.of_node(node).is_some() {
                let [v] = values else {
                    return Err(NetError::WrongSize {
                        name: name.to_owned(),
                        expected: 1,
                        got: values.len(),
                    }
                    .into());
                };
                let fresh = Duration::from_secs_f64(self.ends.nrt_params().nrt_watchdog().min(1e9));
                let mut wheels = match self.raw.last.get(&node) {
                    Some((w, t)) if fresh.is_zero() || t.elapsed() < fresh => *w,
                    _ => [0, 0],
                };
                wheels[wheel] = *v;
                self.raw_set_point(node, wheels)?;
                return Ok(());
            }
        }
        self.net.set_variable(node, name, values)?;
        self.flush_outgoing();
        Ok(())
    }

    /// Broadcasts an anonymous user event (`aseba/anonymous_events`). If `event` is the
    /// `set_speed` of driven robots' scripts, it becomes the set-point of the robots it
    /// addresses (the one named by its first argument with `include_id_in_events`, else every
    /// such robot) and is not broadcast.
    pub fn emit_anonymous(&mut self, event: u16, args: &[i16]) -> Result<(), EngineError> {
        self.check_anonymous(event, args)?;
        let mut targets = Vec::new();
        for slot in self.robots.iter() {
            let Some(n) = self.net.node(slot.node) else {
                continue;
            };
            let is_set_speed = n.script.as_ref().is_some_and(|s| {
                s.events
                    .get(usize::from(event))
                    .is_some_and(|(e, _)| e == SET_SPEED)
            });
            if !is_set_speed {
                continue;
            }
            let with_id = self.with_id(slot.node);
            match (with_id, args.split_first()) {
                (true, Some((id, rest))) if *id as u16 == slot.node.0 => {
                    targets.push((slot.node, rest.to_vec()))
                }
                (true, _) => {}
                (false, _) => targets.push((slot.node, args.to_vec())),
            }
        }
        let routed = !targets.is_empty();
        for (node, rest) in targets {
            self.raw_set_speed(node, &rest)?;
        }
        if !routed {
            self.net.emit(event, args)?;
            self.flush_outgoing();
        }
        Ok(())
    }

    /// Forgets the raw state of a node that is no longer driven.
    pub(super) fn raw_forget(&mut self, node: NodeId) {
        self.raw.last.remove(&node);
        self.raw.warned_cap.remove(&node);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use handoff::RobotCalibration;
    use msgs::thymio::{NOMINAL_Q0, SIMULATION_Q0};

    fn map(t: Twist2, cal: &RobotCalibration) -> [i16; 2] {
        // the RT thread's mapping, re-stated: wheel speeds, inverse model, round, cap
        let half = t.angular * cal.axis_length / 2.0;
        let v = [t.linear - half, t.linear + half];
        let inv = |v: f64, q: Quadratic| {
            let disc = q.q0 * q.q0 + 4.0 * q.q1 * v.abs();
            if q.q1 == 0.0 {
                v / q.q0
            } else if disc < 0.0 {
                v.signum() * q.q0 / (-2.0 * q.q1)
            } else {
                0.5 * v.signum() * (-q.q0 + disc.max(0.0).sqrt()) / q.q1
            }
        };
        let m = [inv(v[0], cal.left), inv(v[1], cal.right)].map(f64::round_ties_even);
        let max = m[0].abs().max(m[1].abs());
        if max > cal.max_units {
            m.map(|x| (cal.max_units / max * x).trunc() as i16)
        } else {
            m.map(|x| x as i16)
        }
    }

    #[test]
    fn wheel_targets_come_back_to_the_unit() {
        for q1 in [0.0, 1e-8, -1e-8] {
            let cal = RobotCalibration {
                left: Quadratic {
                    q0: SIMULATION_Q0,
                    q1,
                },
                right: Quadratic { q0: NOMINAL_Q0, q1 },
                ..RobotCalibration::default()
            };
            for m in [
                [0, 0],
                [1, -1],
                [200, 100],
                [-500, 500],
                [499, -3],
                [37, 37],
            ] {
                assert_eq!(map(wheels_to_twist(m, &cal), &cal), m, "q1 {q1} m {m:?}");
            }
            let capped = |m| map(wheels_to_twist(cap_pair(m, 500.0), &cal), &cal);
            assert_eq!(capped([32767, 32767]), [500, 500]);
            assert_eq!(capped([-32768, 0]), [-500, 0]);
            assert_eq!(capped([1000, -500]), [500, -250]);
        }
    }
}
