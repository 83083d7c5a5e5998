//! `thymio-rt replay FILE.mcap`: runs the RT core (decode, odometry, mapping, watchdog, owners, controllers,
//! filters, limits) again on what a flight recording (`run --record`) says the RT thread took, at the recorded
//! clock, with no robot; `--check` compares what it writes with what the recorded run wrote — every frame queued to
//! a link and every odometry sample handed out, bit for bit — and says where the first difference is. A controller
//! changed since the recording (a crate of one's own RT controllers runs this with its registry) can be replayed
//! against the run to see what it would have commanded.

use super::{print_out, CliError, CliResult};
use crate::config::Config;
use crate::runtime::{rt_config, rt_filters};
use handoff::{ChannelConfig, OdomHandoff, RecInput, Record};
use nrt_recorder::flight::read::{load, Loaded};
use nrt_recorder::flight::rt_channels::OdometryMsg;
use rt::replay::{exit_index, first_frame_difference, recorded_frames, Replayer};
use std::path::PathBuf;

/// Arguments of `thymio-rt replay`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The recording (its first file; the next files of a rotation, FILE_001.mcap …, are read after it).
    #[arg(value_name = "FILE.mcap")]
    file: PathBuf,
    /// Compare the replay's outputs with the recorded ones (exit status 1 at the first difference).
    #[arg(long)]
    check: bool,
    /// Publish the replayed odometry on ROS 2 — each robot's odom, /tf and joint_states, on the recorded run's
    /// topics and frames (node /thymio_rt_replay) — at the recorded pace.
    #[arg(long)]
    ros: bool,
    /// With --ros: this many times the recorded pace, 0.01 to 100 (0: as fast as possible).
    #[arg(long, value_name = "FACTOR", default_value_t = 1.0, requires = "ros")]
    rate: f64,
    /// With --ros: wait up to this many seconds for a subscriber of a robot's odom before publishing (0: start
    /// at once).
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0, requires = "ros")]
    wait_subscriber: f64,
}

/// The `--rate` factors accepted (besides 0): a slower pace would wait days between samples, a faster one is
/// "as fast as possible" (0).
const RATES: std::ops::RangeInclusive<f64> = 0.01..=100.0;
/// The longest sleep of `--ros` pacing: a stop signal is looked at this often, whatever the rate.
#[cfg(feature = "ros2")]
const PACE_SLICE: std::time::Duration = std::time::Duration::from_millis(50);

/// Exit status of a replay that differs from the recording.
const DIFFERS: u8 = 1;
/// Exit status of a recording that cannot be replayed (unreadable, damaged, not from its run's start).
const UNREADABLE: u8 = 2;

fn unreadable(message: impl std::fmt::Display) -> CliError {
    CliError {
        message: message.to_string(),
        code: UNREADABLE,
    }
}

/// Entry point of `thymio-rt replay` with the RT controllers of `registry` (the recorded run's, or changed ones).
pub fn main(args: Args, mut registry: rt::controllers::Registry) -> CliResult {
    if !(args.rate == 0.0 || RATES.contains(&args.rate)) {
        return Err(CliError::new(format!(
            "--rate {}: a factor from {} to {} (0: as fast as possible)",
            args.rate,
            RATES.start(),
            RATES.end()
        )));
    }
    if !(args.wait_subscriber.is_finite() && (0.0..=3600.0).contains(&args.wait_subscriber)) {
        return Err(CliError::new(format!(
            "--wait-subscriber {}: seconds, 0..3600",
            args.wait_subscriber
        )));
    }
    if args.ros && !cfg!(feature = "ros2") {
        return Err(CliError::new(
            "--ros: this build has no ROS 2 (build with --features ros2)",
        ));
    }
    let rec = load(&args.file).map_err(unreadable)?;
    for (file, why) in &rec.ignored {
        tracing::warn!("{}: not read: {why}", file.display());
    }
    if let Some((file, cut)) = &rec.cut {
        tracing::warn!(
            "{}: {cut}; replayed up to there ({} record(s) of whole passes)",
            file.display(),
            rec.records.len()
        );
    }
    if let Some(first) = rec.first_seq().filter(|s| *s > 0) {
        return Err(unreadable(format!(
            "{}: the recording starts at record {first}, not at its run's start (its first files were deleted: \
             record.keep_files); a replay needs the run from its start",
            args.file.display()
        )));
    }
    let yaml = rec
        .metadata
        .get("configuration")
        .and_then(|m| m.get("yaml"))
        .ok_or_else(|| {
            unreadable(format!(
                "{}: no configuration in its metadata",
                args.file.display()
            ))
        })?;
    // bounded before the YAML parser, which takes seconds to refuse deeply nested text
    msgs::yaml_guard::check(yaml, msgs::yaml_guard::YamlLimits::CONFIG).map_err(|e| {
        unreadable(format!(
            "{}: its configuration (metadata): {e}",
            args.file.display()
        ))
    })?;
    let config = Config::from_yaml(yaml)
        .map_err(|e| unreadable(format!("{}: its configuration: {e}", args.file.display())))?;
    let loaded = config.control.load(&mut registry).map_err(CliError::new)?;
    let slots = ChannelConfig::default().robots;
    let (controllers, mut control) = registry.instantiate(slots).map_err(CliError::new)?;
    loaded.apply(&mut control).map_err(CliError::new)?;
    let (filters, ports) = rt_filters(&config);
    let mut replayer = Replayer::new(rt_config(&config), slots, controllers, filters)
        .with_control(control)
        .with_reflex_params(ports.into_replay_setter());
    let out = replayer.run(&rec.records);

    let exit = exit_index(&rec.records);
    let recorded = recorded_frames(&rec.records);
    let exit_ns = rec.records[exit..].iter().find_map(|r| match r {
        Record::Input {
            input: RecInput::Exit { now_ns },
            ..
        } => Some(*now_ns),
        _ => None,
    });
    let mut recorded_odometry: Vec<&OdometryMsg> = rec
        .odometry
        .iter()
        .filter(|o| exit_ns.is_none_or(|e| o.handed_ns < e))
        .collect();
    let mut replayed_odometry = &out.odometry[..];
    if rec.cut.is_some() {
        // cut: the odometry channel and the records end at different places; compared where both are
        let n = recorded_odometry.len().min(replayed_odometry.len());
        recorded_odometry.truncate(n);
        replayed_odometry = &replayed_odometry[..n];
    }
    print_out(&summary(&args, &rec, &out, recorded.len()))?;
    for why in &out.refused {
        tracing::warn!("an input could not be put back: {why}");
    }
    if let Some(seq) = out.unrecorded {
        tracing::warn!(
            "record {seq}: an RT controller took a value of a message type of its own, which the recording does \
             not hold: the replay is exact up to there only"
        );
    }
    #[cfg(feature = "ros2")]
    if args.ros {
        publish(&args, &rec, &out.odometry)?;
    }
    if !args.check {
        return Ok(());
    }
    if let Some(d) = first_frame_difference(&recorded, &out.frames) {
        return Err(CliError {
            message: format!("the replay differs from the recording: {d}"),
            code: DIFFERS,
        });
    }
    if let Some(d) = first_odometry_difference(&recorded_odometry, replayed_odometry) {
        return Err(CliError {
            message: format!("the replay differs from the recording: {d}"),
            code: DIFFERS,
        });
    }
    let upto = match &rec.cut {
        Some((file, cut)) => format!(" up to the cut ({}: {cut})", file.display()),
        None => String::new(),
    };
    print_out(&format!(
        "check: identical{upto} — {} frame(s) written and {} odometry sample(s), bit for bit",
        recorded.len(),
        recorded_odometry.len()
    ))
}

fn summary(args: &Args, rec: &Loaded, out: &rt::replay::ReplayOutput, recorded: usize) -> String {
    // from the first pass's clock to the last's
    let mut passes = rec.records.iter().filter_map(|r| match r {
        Record::Input {
            input: RecInput::Pass { now_ns, .. },
            ..
        } => Some(*now_ns),
        _ => None,
    });
    let first = passes.next();
    let span = match (first, passes.next_back().or(first)) {
        (Some(a), Some(b)) => b.saturating_sub(a) as f64 / 1e9,
        _ => 0.0,
    };
    let mut s = format!(
        "replayed {} ({} file(s)): {} pass(es) over {span:.3} s of the recorded run, {} frame(s) read; wrote {} \
         frame(s) (recorded: {recorded}) and handed out {} odometry sample(s) (recorded: {})",
        args.file.display(),
        rec.files.len(),
        out.passes,
        out.frames_in,
        out.frames.len(),
        out.odometry.len(),
        rec.odometry.len(),
    );
    if rec.missing > 0 {
        s += &format!(
            "; {} record(s) missing (dropped while recording: the replay may differ from then on)",
            rec.missing
        );
    }
    s
}

/// The first odometry sample that differs (every field but the hand-off's clock reading, floats by their bits).
fn first_odometry_difference(
    recorded: &[&OdometryMsg],
    replayed: &[OdomHandoff],
) -> Option<String> {
    let key = |s: &handoff::OdomSample, c: &handoff::Twist2| {
        let f = |x: f64| x.to_bits();
        (
            (
                s.robot,
                s.node,
                s.link,
                s.seq,
                s.wire_ns,
                s.t_ns,
                s.robot_ticks,
            ),
            [
                s.dt,
                s.pose.x,
                s.pose.y,
                s.pose.theta,
                s.twist.linear,
                s.twist.angular,
            ]
            .map(f),
            [
                s.wheel_pos[0],
                s.wheel_pos[1],
                s.wheel_vel[0],
                s.wheel_vel[1],
                c.linear,
                c.angular,
            ]
            .map(f),
        )
    };
    for (i, (a, b)) in recorded.iter().zip(replayed).enumerate() {
        if key(&a.sample, &a.commanded) != key(&b.sample, &b.commanded) {
            return Some(format!(
                "odometry sample {i} (robot {}, t {} ns): recorded {:?} commanded {:?}, replayed {:?} commanded {:?}",
                a.sample.robot.0, a.sample.t_ns, a.sample, a.commanded, b.sample, b.commanded
            ));
        }
    }
    (recorded.len() != replayed.len()).then(|| {
        format!(
            "the recorded run handed out {} odometry sample(s), the replay {}",
            recorded.len(),
            replayed.len()
        )
    })
}

/// `--ros`: the replayed odometry on ROS 2, paced as recorded (see [`nrt_ros2::replay_pub`]).
#[cfg(feature = "ros2")]
fn publish(args: &Args, rec: &Loaded, odometry: &[OdomHandoff]) -> CliResult {
    use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
    let _dds = super::run::dds_boundary()?;
    let mut ros = nrt_ros2::replay_pub::ReplayPublisher::new()
        .map_err(|e| CliError::new(format!("--ros: {e}")))?;
    // after ROS's own (rcl takes SIGINT and would keep it from ending the pacing): Ctrl-C stops the replay
    rt::signals::install_stop_handlers()
        .map_err(|e| CliError::new(format!("--ros: cannot install the stop handlers: {e}")))?;
    // each robot as the recording last described it
    for d in &rec.robots {
        let (frames, settings) = d.frames_and_settings();
        ros.describe(d.robot, &d.odom_topic, &d.joints_topic, frames, settings)
            .map_err(|e| CliError::new(format!("--ros: {}: {e}", d.odom_topic)))?;
    }
    if rec.robots.is_empty() {
        tracing::warn!("--ros: the recording describes no robot's outputs: nothing to publish");
        return Ok(());
    }
    let wait = Duration::from_secs_f64(args.wait_subscriber);
    let until = Instant::now() + wait;
    if !wait.is_zero() {
        tracing::info!("--ros: waiting up to {wait:?} for a subscriber of a robot's odom");
    }
    // a subscriber of a robot's odom is there: then a little longer for the others it has (a viewer subscribes
    // to /tf and joint_states too), within the same bound
    while !ros.heard(false) && Instant::now() < until && !rt::signals::stop_signalled() {
        ros.spin_once(Duration::from_millis(20));
    }
    let others = (Instant::now() + Duration::from_secs(2)).min(until);
    while ros.heard(false)
        && !ros.heard(true)
        && Instant::now() < others
        && !rt::signals::stop_signalled()
    {
        ros.spin_once(Duration::from_millis(20));
    }
    let (Some(first), start) = (odometry.first(), Instant::now()) else {
        return Ok(());
    };
    tracing::info!(
        "--ros: publishing {} odometry sample(s) {} (Ctrl-C stops)",
        odometry.len(),
        if args.rate > 0.0 {
            format!("at {}x the recorded pace", args.rate)
        } else {
            "as fast as possible".to_owned()
        }
    );
    let mut published = 0u64;
    for h in odometry {
        if rt::signals::stop_signalled() {
            break;
        }
        if args.rate > 0.0 {
            // bounded: the rate is in RATES, a recording's span is at most u64 ns (584 years)
            let offset = h.sample.t_ns.saturating_sub(first.sample.t_ns) as f64 / 1e9 / args.rate;
            let due = Duration::try_from_secs_f64(offset)
                .ok()
                .and_then(|d| start.checked_add(d));
            // in slices that look at the stop signal: Ctrl-C is honoured at any rate
            while due.is_none_or(|d| Instant::now() < d) && !rt::signals::stop_signalled() {
                let left = due.map_or(PACE_SLICE, |d| d.saturating_duration_since(Instant::now()));
                ros.spin_once(left.min(PACE_SLICE));
            }
            if rt::signals::stop_signalled() {
                break;
            }
        }
        let stamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        if ros
            .publish(h.sample.robot.0, &h.sample, stamp)
            .map_err(|e| CliError::new(format!("--ros: {e}")))?
        {
            published += 1;
        }
    }
    let stopped = rt::signals::stop_signalled();
    // the last samples leave through DDS's own threads: a moment for them before the node goes (a listener under
    // load missed the last joint_states)
    let linger = Instant::now() + Duration::from_millis(300);
    while !stopped && Instant::now() < linger {
        ros.spin_once(Duration::from_millis(20));
    }
    rt::signals::mark_orderly_stop_done();
    print_out(&format!(
        "published {published} odometry sample(s) on ROS 2 (odom, /tf, joint_states; node /{}){}",
        nrt_ros2::replay_pub::NODE_NAME,
        if stopped { "; stopped by a signal" } else { "" }
    ))
}
