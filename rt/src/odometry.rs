//! Odometry from the robot script's `odometry` event (ros-aseba-interface.md §3.5): integrated
//! wheel speeds `X` (unit·s, 16-bit wrap), quadratic calibration `Δ = q0·d + q1·d·|d|`, arc
//! integration, twist over the on-robot time step, wheel joint angles and velocities.
//! Pure functions plus a small integrator; no allocation.

use handoff::{Pose2, Quadratic, RobotCalibration, Twist2};

/// Difference of two integrated wheel counters across the 16-bit wrap:
/// `d = now − prev`; `d > 2^15 ⇒ d −= 2^16`; `d < −2^15 ⇒ d += 2^16`.
pub fn wrap_delta(now: i16, prev: i16) -> i32 {
    let mut d = now as i32 - prev as i32;
    if d > 1 << 15 {
        d -= 1 << 16;
    }
    if d < -(1 << 15) {
        d += 1 << 16;
    }
    d
}

/// Wheel travel (m) of a counter difference `d` (unit·s): `q0·d + q1·d·|d|`.
pub fn calibrate(d: f64, q: Quadratic) -> f64 {
    q.q0 * d + q.q1 * d * d.abs()
}

/// Displacement in the robot frame for wheel travels `dl`, `dr` on an axis of length `axis`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ArcStep {
    /// Forward travel of the centre `Δs = (Δl + Δr)/2` (m).
    pub ds: f64,
    /// Heading change `Δθ = (Δr − Δl)/L` (rad).
    pub dtheta: f64,
    /// Displacement along the initial heading (m): `R·sinΔθ`, or `Δs` when `Δθ = 0`.
    pub dx: f64,
    /// Displacement to the left of the initial heading (m): `R·(1 − cosΔθ)`, or 0.
    pub dy: f64,
}

/// The arc of one step. `R·sinΔθ` and `R·(1 − cosΔθ)` with `R = Δs/Δθ` are evaluated as
/// `Δs·sinΔθ/Δθ` and `Δs·2sin²(Δθ/2)/Δθ` (series for tiny `Δθ`): the same values, without
/// overflow when `Δθ` is tiny.
pub fn arc_step(dl: f64, dr: f64, axis: f64) -> ArcStep {
    let ds = (dl + dr) / 2.0;
    let dtheta = (dr - dl) / axis;
    let (sinc, cosc) = if dtheta.abs() < 1e-6 {
        // sinΔθ/Δθ ≈ 1 − Δθ²/6, (1 − cosΔθ)/Δθ ≈ Δθ/2 − Δθ³/24.
        let t2 = dtheta * dtheta;
        (1.0 - t2 / 6.0, dtheta / 2.0 - dtheta * t2 / 24.0)
    } else {
        let h = (dtheta / 2.0).sin();
        (dtheta.sin() / dtheta, 2.0 * h * h / dtheta)
    };
    ArcStep {
        ds,
        dtheta,
        dx: ds * sinc,
        dy: ds * cosc,
    }
}

/// Applies a step to a pose: `x += dx·cosθ − dy·sinθ; y += dx·sinθ + dy·cosθ; θ += Δθ`.
pub fn apply(pose: Pose2, s: &ArcStep) -> Pose2 {
    let (sin, cos) = pose.theta.sin_cos();
    Pose2 {
        x: pose.x + s.dx * cos - s.dy * sin,
        y: pose.y + s.dx * sin + s.dy * cos,
        theta: pose.theta + s.dtheta,
    }
}

/// One `odometry` event as received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OdomInput {
    /// Integrated counters `[left, right]` (unit·s, wrapping).
    pub counts: [i16; 2],
    /// On-robot tick counter (third word), if the script sends it.
    pub ticks: Option<u16>,
    /// RT receive time (ns).
    pub t_ns: u64,
}

/// The result of one integration step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OdomOutput {
    /// Pose after the step.
    pub pose: Pose2,
    /// Twist over the step.
    pub twist: Twist2,
    /// Wheel joint angles (rad).
    pub wheel_pos: [f64; 2],
    /// Wheel joint velocities (rad/s).
    pub wheel_vel: [f64; 2],
    /// Time step (s).
    pub dt: f64,
}

/// Why an event produced no output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    /// First event after start, reset or link loss: it only initialises.
    Initialised,
    /// The time step was not positive (duplicate or reordered event): ignored, and its
    /// travel counts in the next step.
    NonPositiveDt,
}

/// Integrates odometry events of one robot.
#[derive(Debug, Clone, Copy, Default)]
pub struct Integrator {
    last: Option<OdomInput>,
    pose: Pose2,
    wheel_pos: [f64; 2],
}

impl Integrator {
    /// Current pose.
    pub fn pose(&self) -> Pose2 {
        self.pose
    }

    /// Sets the pose; the next event only initialises.
    pub fn reset(&mut self, pose: Pose2) {
        self.pose = pose;
        self.last = None;
    }

    /// Forgets the last event (link lost: counters may have restarted); keeps the pose.
    pub fn invalidate(&mut self) {
        self.last = None;
    }

    /// Integrates one event. `tick_hz` converts the tick difference to seconds; without ticks
    /// (on either event) the receive times are used, as ROS-Thymio does.
    pub fn step(
        &mut self,
        input: OdomInput,
        cal: &RobotCalibration,
        tick_hz: f64,
    ) -> Result<OdomOutput, Skip> {
        let Some(prev) = self.last else {
            self.last = Some(input);
            return Err(Skip::Initialised);
        };
        let dt = match (input.ticks, prev.ticks) {
            (Some(now), Some(before)) if tick_hz > 0.0 => now.wrapping_sub(before) as f64 / tick_hz,
            _ => (input.t_ns as f64 - prev.t_ns as f64) / 1e9,
        };
        if dt.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
            return Err(Skip::NonPositiveDt);
        }
        self.last = Some(input);
        let dl = calibrate(wrap_delta(input.counts[0], prev.counts[0]) as f64, cal.left);
        let dr = calibrate(
            wrap_delta(input.counts[1], prev.counts[1]) as f64,
            cal.right,
        );
        let s = arc_step(dl, dr, cal.axis_length);
        self.pose = apply(self.pose, &s);
        let r = cal.wheel_radius;
        self.wheel_pos[0] += dl / r;
        self.wheel_pos[1] += dr / r;
        Ok(OdomOutput {
            pose: self.pose,
            twist: Twist2 {
                linear: s.ds / dt,
                angular: s.dtheta / dt,
            },
            wheel_pos: self.wheel_pos,
            wheel_vel: [dl / r / dt, dr / r / dt],
            dt,
        })
    }
}

#[cfg(test)]
mod tests;
