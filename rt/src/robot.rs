//! Per-robot RT state: script events in (odometry, proximity, ground), set-point and watchdog,
//! wheel targets out as ONE frame. No allocation.

use crate::controllers::RobotView;
use crate::mapping::map_command;
use crate::motion_limits::{rt_limit_command, RtLimiter};
use crate::odometry::{Integrator, OdomInput};
use handoff::{
    LinkId, NodeId, OdomSample, OwnerId, Pose2, ProximitySample, RobotCalibration, RobotConfig,
    RobotId, RtLiveParams, SpeedOutput, Twist2, WheelCommand,
};
use msgs::thymio::{GROUND_COUNT, PROXIMITY_COUNT};
use msgs::wire::{Message, Words, MAX_FRAME};

/// What a set-point poll decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmdUpdate {
    /// Nothing new.
    None,
    /// A new set-point arrived.
    New,
    /// The watchdog expired: the set-point is now zero.
    WatchdogStop,
}

/// One robot slot of the RT thread.
#[derive(Debug, Clone)]
pub struct Robot {
    id: RobotId,
    config: Option<RobotConfig>,
    odom: Integrator,
    seq: u32,
    last_odom: Option<OdomSample>,
    learned_link: Option<LinkId>,
    cal: RobotCalibration,
    set_point: Twist2,
    last_cmd_ns: u64,
    /// When NRT received the newest set-point not yet written (0: none), for the cmd → wire hop.
    cmd_stamp: u64,
    tripped: bool,
    pending: bool,
    last_sent: Option<[i16; 2]>,
    last_send_ns: u64,
    proximity: [i16; PROXIMITY_COUNT],
    proximity_t: Option<u64>,
    /// Link of a proximity event not yet handed to NRT ([`Robot::take_proximity`]).
    proximity_unsent: Option<LinkId>,
    ground: [i16; GROUND_COUNT],
    ground_t: Option<u64>,
    acc: [i16; 3],
    acc_t: Option<u64>,
    stale: bool,
    /// A zero speed was written and the robot's targets were not yet read back as zero.
    zero_unconfirmed: bool,
    /// Zero-speed refreshes still due for a robot whose targets cannot be read back.
    zero_refreshes: u8,
    /// The motion limits' state (`crate::motion_limits`).
    limiter: RtLimiter,
    /// When the limiter last ran (RT ns; `None`: never).
    limited_ns: Option<u64>,
    /// The twist commanded after the motion limits (zero while stopped).
    commanded: Twist2,
}

/// Longest `dt` the motion limits are given (s): a longer gap since the previous cycle (a
/// stalled loop) counts as this much, so that a pause never lets a command jump past its
/// acceleration limits. The robot's first cycle has `dt` 0 (its state stays at rest).
pub const MAX_LIMIT_DT_S: f64 = 0.1;

/// Zero-speed refreshes sent to a robot whose motor targets cannot be read back (no
/// `motor_targets` address): the stop is repeated this many times instead of confirmed.
pub const BLIND_ZERO_REFRESHES: u8 = 3;

impl Robot {
    /// An unconfigured slot.
    pub fn new(id: RobotId) -> Self {
        Robot {
            id,
            config: None,
            odom: Integrator::default(),
            seq: 0,
            last_odom: None,
            learned_link: None,
            cal: RobotCalibration::default(),
            set_point: Twist2::default(),
            last_cmd_ns: 0,
            cmd_stamp: 0,
            tripped: false,
            pending: false,
            last_sent: None,
            last_send_ns: 0,
            proximity: [0; PROXIMITY_COUNT],
            proximity_t: None,
            proximity_unsent: None,
            ground: [0; GROUND_COUNT],
            ground_t: None,
            acc: [0; 3],
            acc_t: None,
            stale: false,
            zero_unconfirmed: false,
            zero_refreshes: 0,
            limiter: RtLimiter::new(),
            limited_ns: None,
            commanded: Twist2::default(),
        }
    }

    /// The configuration, if the slot is in use.
    pub fn config(&self) -> Option<&RobotConfig> {
        self.config.as_ref()
    }

    /// (Re)configures the slot; the pose is kept, odometry re-initialises on the next event.
    pub fn configure(&mut self, config: RobotConfig) {
        if self.config.map(|c| (c.node, c.link)) != Some((config.node, config.link)) {
            self.learned_link = None;
        }
        self.config = Some(config);
        self.odom.invalidate();
    }

    /// Frees the slot (the caller sends the stop frame first).
    pub fn clear(&mut self) {
        // The set-point already read stays read: a reconfigured slot does not take it as new.
        *self = Robot::new(self.id);
    }

    /// Sets the pose; odometry restarts from it.
    pub fn reset_odometry(&mut self, pose: Pose2) {
        self.odom.reset(pose);
        self.seq = 0;
    }

    /// The last odometry sample.
    pub fn last_odometry(&self) -> Option<OdomSample> {
        self.last_odom
    }

    /// The link the robot is on: configured, else last heard.
    pub fn link(&self) -> Option<LinkId> {
        self.config.and_then(|c| c.link).or(self.learned_link)
    }

    /// The robot's link went down: odometry must re-initialise; returns true if it mattered.
    pub fn link_lost(&mut self, link: LinkId) -> bool {
        if self.config.is_none() || self.link() != Some(link) {
            return false;
        }
        self.learned_link = None;
        self.odom.invalidate();
        self.stale = true;
        // The robot's script stops it by itself (on-robot watchdog); when a route comes back,
        // zero speed goes out first (with the direct write of the targets), until a new
        // set-point arrives.
        self.set_point = Twist2::default();
        self.pending = true;
        // The robot's own watchdog stopped it: the limits start again from rest.
        self.stop_limiter();
        true
    }

    /// Handles a VARIABLES answer: a read-back of this robot's motor targets showing zero
    /// confirms the last stop. Returns true if it confirmed one.
    pub fn on_variables(
        &mut self,
        link: LinkId,
        source: u16,
        start: u16,
        values: Words<'_>,
    ) -> bool {
        let Some(cfg) = self.config else {
            return false;
        };
        if NodeId(source) != cfg.node
            || cfg.link.is_some_and(|l| l != link)
            || cfg.motor_targets != Some(start)
            || values.len() < 2
        {
            return false;
        }
        let zero = values.get(0) == Some(0) && values.get(1) == Some(0);
        if zero && self.zero_unconfirmed && self.last_sent == Some([0, 0]) {
            self.zero_unconfirmed = false;
            return true;
        }
        false
    }

    /// Whether the last stop is confirmed: `Some(true)` read back as zero, `Some(false)` not
    /// (yet), `None` the targets cannot be read (no address) or no stop was written.
    pub fn stop_confirmed(&self) -> Option<bool> {
        let cfg = self.config?;
        cfg.motor_targets?;
        (self.last_sent == Some([0, 0])).then_some(!self.zero_unconfirmed)
    }

    /// Encodes SET_VARIABLES of `targets` at the node's `motor.left.target` (both wheels in one
    /// frame; works even when the node's VM is stopped); `None` without the address.
    pub fn direct_targets_frame(
        &self,
        source: u16,
        targets: [i16; 2],
        out: &mut [u8; MAX_FRAME],
    ) -> Option<usize> {
        let cfg = self.config?;
        Message::SetVariables {
            dest: cfg.node.0,
            start: cfg.motor_targets?,
            values: Words::from_slice(&targets),
        }
        .encode(source, out)
        .ok()
    }

    /// Encodes GET_VARIABLES of the node's two motor targets; `None` without the address.
    pub fn readback_frame(&self, source: u16, out: &mut [u8; MAX_FRAME]) -> Option<usize> {
        let cfg = self.config?;
        Message::GetVariables {
            dest: cfg.node.0,
            start: cfg.motor_targets?,
            length: 2,
        }
        .encode(source, out)
        .ok()
    }

    /// Handles a user event whose bytes were found readable at `wire_ns` and decoded at `t_ns`;
    /// returns an odometry sample if it was this robot's odometry.
    #[allow(clippy::too_many_arguments)]
    pub fn on_user_event(
        &mut self,
        link: LinkId,
        wire_ns: u64,
        t_ns: u64,
        source: u16,
        id: u16,
        args: Words<'_>,
        params: &mut RtLiveParams,
    ) -> Option<OdomSample> {
        let cfg = self.config?;
        if NodeId(source) != cfg.node || cfg.link.is_some_and(|l| l != link) {
            return None;
        }
        self.learned_link = Some(link);
        if cfg.proximity_event == Some(id) && args.len() >= PROXIMITY_COUNT {
            args.copy_to(&mut self.proximity);
            self.proximity_t = Some(t_ns);
            // NRT gets the reading only when the event has the script's size (one word per sensor).
            self.proximity_unsent = (args.len() == PROXIMITY_COUNT).then_some(link);
            return None;
        }
        if cfg.ground_event == Some(id) && args.len() >= GROUND_COUNT {
            args.copy_to(&mut self.ground);
            self.ground_t = Some(t_ns);
            return None;
        }
        if cfg.acc_event == Some(id) && args.len() >= 3 {
            args.copy_to(&mut self.acc);
            self.acc_t = Some(t_ns);
            return None;
        }
        if cfg.odometry_event != Some(id) || args.len() < 2 {
            return None;
        }
        if let Some(c) = params.rt_calibration(self.id) {
            self.cal = c; // keep the last consistent one while NRT is writing
        }
        let input = OdomInput {
            counts: [args.get(0)?, args.get(1)?],
            ticks: args.get(2).map(|t| t as u16),
            t_ns,
        };
        let out = self.odom.step(input, &self.cal, cfg.tick_hz).ok()?;
        self.stale = false;
        let sample = OdomSample {
            robot: self.id,
            node: cfg.node,
            link,
            seq: self.seq,
            wire_ns,
            t_ns,
            robot_ticks: input.ticks,
            dt: out.dt,
            pose: out.pose,
            twist: out.twist,
            wheel_pos: out.wheel_pos,
            wheel_vel: out.wheel_vel,
        };
        self.seq = self.seq.wrapping_add(1);
        self.last_odom = Some(sample);
        Some(sample)
    }

    /// The proximity reading of the last `proximity` event, once, for NRT (which then has no
    /// event to decode).
    pub fn take_proximity(&mut self) -> Option<ProximitySample> {
        let link = self.proximity_unsent.take()?;
        Some(ProximitySample {
            robot: self.id,
            node: self.config?.node,
            link,
            t_ns: self.proximity_t?,
            values: self.proximity,
        })
    }

    /// Reads the set-point from the live parameters and applies the watchdog (`watchdog_ns`
    /// 0 = off). Only configured robots consume set-points. The watchdog arms while the wheels
    /// are commanded to move ([`Robot::moving`]): a non-zero set-point, or a zero one the
    /// motion limits are still decelerating to; at its deadline it stops them at once.
    pub fn poll_set_point(
        &mut self,
        params: &mut RtLiveParams,
        now_ns: u64,
        watchdog_ns: u64,
    ) -> CmdUpdate {
        if self.config.is_none() {
            return CmdUpdate::None;
        }
        if let Some((twist, stamp, true)) = params.rt_cmd_vel_stamped(self.id) {
            self.set_point = twist;
            self.cmd_stamp = stamp;
            self.last_cmd_ns = now_ns;
            self.tripped = false;
            self.pending = true;
            return CmdUpdate::New;
        }
        if watchdog_ns > 0
            && self.moving()
            && !self.tripped
            && now_ns.saturating_sub(self.last_cmd_ns) > watchdog_ns
        {
            self.set_point = Twist2::default();
            self.tripped = true;
            self.pending = true;
            self.stop_limiter();
            return CmdUpdate::WatchdogStop;
        }
        CmdUpdate::None
    }

    /// Whether the wheels are commanded to move: a non-zero set-point, or a non-zero twist
    /// still commanded after the motion limits ([`Robot::commanded`], the last cycle's: e.g. a
    /// zero set-point still being decelerated to). What the watchdogs arm on, whatever the owner.
    pub fn moving(&self) -> bool {
        let nonzero = |t: Twist2| t.linear != 0.0 || t.angular != 0.0;
        nonzero(self.set_point) || nonzero(self.commanded)
    }

    /// Whether the robot needs nothing of the periodic cycle: no motion commanded (after the
    /// motion limits too), nothing pending to write, its last targets zero (or none) with the
    /// stop confirmed, and no zero refresh due. A settled robot's watchdog is disarmed and it is
    /// not refreshed, so the RT loop may sleep past its period (`rtloop::RtLoop::quiet_until`).
    pub fn settled(&self) -> bool {
        !self.moving()
            && !self.pending
            && self.last_sent.is_none_or(|s| s == [0, 0])
            && !self.zero_unconfirmed
            && self.zero_refreshes == 0
    }

    /// When a robot cruising (moving at a steady command: its set-point written, the motion limits
    /// at it, nothing to confirm) next needs the periodic cycle: its cmd_vel watchdog's deadline
    /// (`watchdog_ns` after its last set-point; 0: off) or its next speed refresh (`refresh_ns`
    /// after its last write; 0: never), whichever comes first (`u64::MAX`: neither). `None` while it
    /// needs every period: not cruising (a set-point not yet written, a ramp, a stop in progress).
    pub fn cruise_due(&self, watchdog_ns: u64, refresh_ns: u64) -> Option<u64> {
        let moving_written = self.last_sent.is_some_and(|s| s != [0, 0]);
        if !(self.moving() && moving_written)
            || self.pending
            || self.tripped
            || self.zero_unconfirmed
            || self.zero_refreshes > 0
            || self.commanded != self.set_point
            || !self.limiter.rt_steady_at(self.set_point)
        {
            return None;
        }
        let watchdog = match watchdog_ns {
            0 => u64::MAX,
            w => self.last_cmd_ns.saturating_add(w).saturating_add(1),
        };
        let refresh = match refresh_ns {
            0 => u64::MAX,
            r => self.last_send_ns.saturating_add(r),
        };
        Some(watchdog.min(refresh))
    }

    /// Discards the set-point (zero, watchdog disarmed): the wheels changed owner, and a
    /// `cmd_vel` from before must not come back when `ros` owns them again.
    pub fn clear_set_point(&mut self) {
        self.set_point = Twist2::default();
        self.tripped = false;
        self.cmd_stamp = 0;
    }

    /// Whether the cmd_vel watchdog stopped the current set-point.
    pub fn watchdog_tripped(&self) -> bool {
        self.tripped
    }

    /// Whether the state is stale (link lost since the last odometry event).
    pub fn stale(&self) -> bool {
        self.stale
    }

    /// The targets last queued (`None` before the first).
    pub fn last_sent(&self) -> Option<[i16; 2]> {
        self.last_sent
    }

    /// The calibration in effect.
    pub fn calibration(&self) -> &RobotCalibration {
        &self.cal
    }

    /// Takes the newest calibration and limits from the live parameters.
    pub fn refresh_calibration(&mut self, params: &mut RtLiveParams) {
        if let Some(c) = params.rt_calibration(self.id) {
            self.cal = c;
        }
    }

    /// What controllers see, with `owner` in effect.
    pub fn view(&self, now_ns: u64, link_up: bool, owner: OwnerId) -> RobotView {
        RobotView {
            robot: self.id,
            node: self.config.map_or(NodeId(0), |c| c.node),
            now_ns,
            pose: self.odom.pose(),
            twist: self.last_odom.map(|o| o.twist).unwrap_or_default(),
            odom_t_ns: self.last_odom.map(|o| o.t_ns),
            proximity: self.proximity,
            proximity_t_ns: self.proximity_t,
            link_up,
            stale: self.stale,
            set_point: self.set_point,
            wheel_pos: self.last_odom.map(|o| o.wheel_pos).unwrap_or_default(),
            wheel_vel: self.last_odom.map(|o| o.wheel_vel).unwrap_or_default(),
            ground: self.ground,
            ground_t_ns: self.ground_t,
            acc: self.acc,
            acc_t_ns: self.acc_t,
            owner,
            calibration: self.cal,
            reflexes: Default::default(),
        }
    }

    /// The set-point after the watchdog.
    pub fn set_point(&self) -> Twist2 {
        self.set_point
    }

    /// The owner's command after the filters (`filtered`; `owned` before them) through the
    /// robot's motion limits from the live parameters, with the time since the previous call
    /// (at most [`MAX_LIMIT_DT_S`]) as `dt` (see [`rt_limit_command`]: stops and a filter's
    /// changes are never slowed). Keeps the twist commanded ([`Robot::commanded`]).
    pub fn limit(
        &mut self,
        params: &mut RtLiveParams,
        owned: WheelCommand,
        filtered: WheelCommand,
        now_ns: u64,
    ) -> WheelCommand {
        let limits = params.rt_motion_limits(self.id).unwrap_or_default();
        // The first run has no interval: dt 0 keeps the state (at rest).
        let dt = self.limited_ns.map_or(0.0, |t| {
            (now_ns.saturating_sub(t) as f64 * 1e-9).min(MAX_LIMIT_DT_S)
        });
        self.limited_ns = Some(now_ns);
        let (cmd, twist) =
            rt_limit_command(&mut self.limiter, owned, filtered, dt, &limits, &self.cal);
        self.commanded = twist;
        cmd
    }

    /// Sets the motion limits' state to rest at once: a stop that must not be slowed
    /// (watchdog, exit, owner change, link loss).
    pub fn stop_limiter(&mut self) {
        self.limiter.rt_reset(Twist2::default());
        self.commanded = Twist2::default();
    }

    /// The twist commanded after the filters and the motion limits, before the wheel mapping
    /// (zero while stopped): what `~/cmd_vel_out` publishes, handed out with each odometry
    /// sample ([`handoff::OdomHandoff::commanded`]).
    pub fn commanded(&self) -> Twist2 {
        self.commanded
    }

    /// Wheel targets for `cmd` with the current calibration and limits.
    pub fn targets(&mut self, params: &mut RtLiveParams, cmd: WheelCommand) -> [i16; 2] {
        self.refresh_calibration(params);
        map_command(cmd, &self.cal)
    }

    /// Whether `targets` must be written now: a new set-point, a change, or a refresh; changes
    /// are rate-limited to `min_interval_ns` except stops.
    pub fn should_send(
        &self,
        targets: [i16; 2],
        now_ns: u64,
        min_interval_ns: u64,
        refresh_ns: u64,
    ) -> bool {
        self.send_due(targets, now_ns, min_interval_ns, refresh_ns)
            .is_some_and(|t| t <= now_ns)
    }

    /// When `targets` may be written (see [`Robot::should_send`]): `now_ns` if now, a later time
    /// if the rate limit holds a change back until then, `None` if there is nothing to write.
    pub fn send_due(
        &self,
        targets: [i16; 2],
        now_ns: u64,
        min_interval_ns: u64,
        refresh_ns: u64,
    ) -> Option<u64> {
        if !matches!(self.config, Some(c) if c.speed != SpeedOutput::None) {
            return None;
        }
        let since = now_ns.saturating_sub(self.last_send_ns);
        // Before the first write, any motion is a change (an owner other than `ros` has no
        // new set-point to mark it pending).
        let changed = self.last_sent.map_or(targets != [0, 0], |s| s != targets);
        // Refresh while moving (it feeds the on-robot watchdog) and while a stop is not yet
        // confirmed.
        let unsettled = self.last_sent.is_some_and(|s| s != [0, 0])
            || self.zero_unconfirmed
            || self.zero_refreshes > 0;
        let refresh = refresh_ns > 0 && since >= refresh_ns && unsettled;
        if !(self.pending || changed || refresh) {
            return None;
        }
        if targets == [0, 0] || self.last_sent.is_none() || since >= min_interval_ns {
            Some(now_ns)
        } else {
            Some(now_ns + (min_interval_ns - since))
        }
    }

    /// The stamp of the newest set-point not yet written, once (when its frame is queued).
    pub fn take_cmd_stamp(&mut self) -> Option<u64> {
        let s = std::mem::take(&mut self.cmd_stamp);
        (s > 0).then_some(s)
    }

    /// Marks a stop to write now (exit and removal paths): the next zero written counts as a
    /// new stop, confirmed afresh.
    pub fn request_stop(&mut self) {
        self.pending = true;
        self.stop_limiter();
    }

    /// Records that `targets` were queued.
    pub fn sent(&mut self, targets: [i16; 2], now_ns: u64) {
        let has_readback = self.config.is_some_and(|c| c.motor_targets.is_some());
        if targets == [0, 0] {
            // a new stop (not a refresh) must be confirmed afresh
            let new_stop = self.last_sent != Some([0, 0]) || self.pending;
            if has_readback {
                self.zero_unconfirmed |= new_stop;
            } else if new_stop {
                self.zero_refreshes = BLIND_ZERO_REFRESHES;
            } else {
                self.zero_refreshes = self.zero_refreshes.saturating_sub(1);
            }
        } else {
            self.zero_unconfirmed = false;
            self.zero_refreshes = 0;
        }
        self.last_sent = Some(targets);
        self.last_send_ns = now_ns;
        self.pending = false;
    }

    /// Encodes the frame writing `targets` (both wheels in one frame) into `out`; returns its
    /// length, or `None` without a speed output.
    pub fn speed_frame(
        &self,
        source: u16,
        targets: [i16; 2],
        out: &mut [u8; MAX_FRAME],
    ) -> Option<usize> {
        let cfg = self.config?;
        let with_node = [cfg.node.0 as i16, targets[0], targets[1]];
        let msg = match cfg.speed {
            SpeedOutput::Event { id, node_prefix } => Message::UserEvent {
                id,
                args: Words::from_slice(if node_prefix { &with_node } else { &targets }),
            },
            SpeedOutput::Variables { address } => Message::SetVariables {
                dest: cfg.node.0,
                start: address,
                values: Words::from_slice(&targets),
            },
            SpeedOutput::None => return None,
        };
        msg.encode(source, out).ok()
    }
}

#[cfg(test)]
mod tests;
