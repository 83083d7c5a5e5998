//! The NRT side of a replay: drives an [`RtLoop`] on the calling thread through the passes of a recording (see
//! [`crate::rtloop::replay`]) and collects what it wrote, to compare with what the recorded run wrote.
//!
//! For each recorded pass it puts back what the pass took from NRT — commands and frames on the rings, live
//! values in the cells (with their recorded receive times), offered links (links that write nowhere: the loop's
//! outputs are taken from its own flight recorder) — then runs the pass with its recorded frames and clock.
//!
//! ```
//! use rt::replay::Replayer;
//! use handoff::Record;
//! use rt::controllers::RtControllers;
//! use rt::rtloop::RtConfig;
//! use handoff::{PassKind, RecInput};
//!
//! let pass = RecInput::Pass { kind: PassKind::Periodic, now_ns: 1_000_000, wake: false, timer: true, signal: false };
//! let mut r = Replayer::new(RtConfig::default(), 1, RtControllers::none(), Vec::new());
//! let out = r.run(&[Record::Input { seq: 0, input: pass }]);
//! assert_eq!((out.passes, out.frames.len()), (1, 0));
//! ```

use crate::controllers::{Filter, RtControllers};
use crate::link::{Link, LinkError};
use crate::link_port::{link_port, NrtLinkPort};
use crate::rtloop::replay::{FrameFeed, ReplayFrame, ReplayPass};
use crate::rtloop::{RtConfig, RtLoop};
use handoff::{
    channels, ChannelConfig, FrameDir, LinkKind, LinkTarget, MsgCtx, NrtCalibrationPort,
    NrtControl, NrtControllerPorts, NrtEndpoint, NrtEnds, NrtGoalPort, NrtMessagePort, NrtOdomOut,
    NrtRecording, OdomHandoff, RecInput, Record, RecordRings, RobotId,
};
use std::time::Duration;

/// A frame the loop queued to a link (`link`: its slot, 0xFF for every link).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutFrame {
    /// Record order in its run.
    pub seq: u64,
    /// The pass's time.
    pub t_ns: u64,
    /// Link slot, 0xFF: every link.
    pub link: u8,
    /// Header and payload.
    pub bytes: Vec<u8>,
}

/// What a replay produced.
#[derive(Debug, Default)]
pub struct ReplayOutput {
    /// Passes replayed.
    pub passes: u64,
    /// Frames read (replayed).
    pub frames_in: u64,
    /// The frames the loop queued, in order.
    pub frames: Vec<OutFrame>,
    /// The odometry it handed out, in order.
    pub odometry: Vec<OdomHandoff>,
    /// Inputs that could not be put back (a value the live parameters refuse), with why: none in a recording
    /// of this driver.
    pub refused: Vec<String>,
    /// The first record of a value the recording does not hold (a controller's endpoint of its own message
    /// type): the replay is exact up to there only.
    pub unrecorded: Option<u64>,
}

/// A link that takes every byte and reads none (the replay's loop writes to it; its outputs are recorded).
#[derive(Debug)]
struct NullLink;

impl Link for NullLink {
    fn read(&mut self, _: &mut [u8]) -> Result<usize, LinkError> {
        Ok(0)
    }
    fn write(&mut self, buf: &[u8]) -> Result<usize, LinkError> {
        Ok(buf.len())
    }
    fn kind(&self) -> LinkKind {
        LinkKind::Other
    }
}

/// Drives a loop through recorded passes (see the module documentation).
pub struct Replayer {
    rt: RtLoop,
    nrt: NrtEnds,
    port: NrtLinkPort,
    recording: NrtRecording,
    odometry: NrtOdomOut,
    begun: bool,
    refused: Vec<String>,
    /// The controllers' NRT halves (their endpoints, parameters, goal and calibration ports), to put back what
    /// they took ([`Replayer::with_control`]).
    control: Option<NrtControl>,
    /// The first record of a value the recording could not hold (a controller's own message type).
    unrecorded: Option<u64>,
    /// Puts back a reflex's parameters ([`Replayer::with_reflex_params`]).
    reflexes: Option<ReflexSetter>,
}

/// Puts back a reflex's recorded parameters: `(reflex, enabled, threshold, samples, max_age_ns)` (see
/// [`RecInput::ReflexParams`]); an error (a reflex it does not know) is listed in [`ReplayOutput::refused`].
pub type ReflexSetter = Box<dyn FnMut(u8, bool, i16, u8, u64) -> Result<(), String> + Send>;

impl std::fmt::Debug for Replayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Replayer").finish_non_exhaustive()
    }
}

impl Drop for Replayer {
    fn drop(&mut self) {
        // the loop's recorder was installed on this thread by the replay
        if self.begun {
            drop(handoff::rt_uninstall());
        }
    }
}

impl Replayer {
    /// A loop configured as the recorded one (`cfg`, `robots` slots, the same controllers and filters with their
    /// start parameters). Its budget decisions are the recording's (`controller_budget` is ignored).
    pub fn new(
        cfg: RtConfig,
        robots: usize,
        controllers: RtControllers,
        filters: Vec<Box<dyn Filter>>,
    ) -> Replayer {
        let (rt_ends, mut nrt) = channels(&ChannelConfig {
            robots,
            record: Some(RecordRings::default()),
            ..ChannelConfig::default()
        });
        let recording = nrt
            .nrt_take_recording()
            .expect("record rings were asked for");
        let mut odometry = nrt.nrt_take_odometry_out().expect("one odometry ring");
        odometry.nrt_activate();
        let (rt_port, port) = link_port();
        let cfg = RtConfig {
            honor_signals: false,
            wake_nrt: false,
            controller_budget: Duration::ZERO,
            max_cycles: None,
            ..cfg
        };
        Replayer {
            rt: RtLoop::new(cfg, rt_ends, rt_port, controllers, filters),
            nrt,
            port,
            recording,
            odometry,
            begun: false,
            refused: Vec::new(),
            control: None,
            unrecorded: None,
            reflexes: None,
        }
    }

    /// How to put back the reflexes' parameters (into the NRT halves of the filters given to
    /// [`Replayer::new`]); without it they are refused (listed in [`ReplayOutput::refused`]).
    pub fn with_reflex_params(mut self, set: ReflexSetter) -> Replayer {
        self.reflexes = Some(set);
        self
    }

    /// The NRT halves of the controllers given to [`Replayer::new`] (from the same `instantiate`), through which
    /// what the controllers took from ROS (topics, service requests, parameters, goals, calibration runs) is put
    /// back; without them those inputs are refused (listed in [`ReplayOutput::refused`]).
    pub fn with_control(mut self, control: NrtControl) -> Replayer {
        self.control = Some(control);
        self
    }

    /// Replays `records` (sorted by `seq`; what comes after the last pass — the exit sequence — is not replayed).
    pub fn run(&mut self, records: &[Record]) -> ReplayOutput {
        let mut out = ReplayOutput::default();
        // the exit sequence is not replayed: the records end at its marker
        let records = &records[..exit_index(records)];
        let starts: Vec<usize> = records
            .iter()
            .enumerate()
            .filter(|(_, r)| {
                matches!(
                    r,
                    Record::Input {
                        input: RecInput::Pass { .. },
                        ..
                    }
                )
            })
            .map(|(i, _)| i)
            .collect();
        for (k, &start) in starts.iter().enumerate() {
            let end = starts.get(k + 1).copied().unwrap_or(records.len());
            let Record::Input {
                input:
                    RecInput::Pass {
                        kind,
                        now_ns,
                        wake,
                        timer,
                        signal,
                    },
                ..
            } = records[start]
            else {
                continue;
            };
            if !self.begun {
                self.rt.replay_begin(now_ns);
                self.begun = true;
            }
            let group = &records[start + 1..end];
            let mut pass = ReplayPass {
                kind,
                now_ns,
                wake,
                timer,
                signal,
                budget_stops: 0,
            };
            // before the pass: the links it took (at its start) and the budget decisions taken in it
            for r in group {
                match r {
                    Record::Input {
                        input: RecInput::LinkAttached { target, .. },
                        seq,
                    } if self.port.nrt_offer(*target, Box::new(NullLink)).is_err() => {
                        out.refused
                            .push(format!("record {seq}: the link port is full"));
                    }
                    Record::Input {
                        input: RecInput::BudgetStop { robot, .. },
                        ..
                    } => pass.budget_stops |= 1 << robot.index().min(63),
                    _ => {}
                }
            }
            // in it, in the recorded order: frames read, and NRT's inputs put back where they were taken
            let Replayer {
                rt,
                nrt,
                refused,
                control,
                unrecorded,
                reflexes,
                ..
            } = self;
            rt.replay_pass(&pass, |feed| {
                for r in group {
                    match r {
                        Record::Frame {
                            dir: FrameDir::In,
                            link,
                            t_ns,
                            decoded_ns,
                            bytes,
                            ..
                        } => {
                            out.frames_in += 1;
                            feed.frame(&ReplayFrame {
                                link: handoff::LinkId(*link),
                                wire_ns: *t_ns,
                                decoded_ns: *decoded_ns,
                                bytes,
                            });
                        }
                        Record::Input {
                            input: RecInput::Unrecorded { .. },
                            seq,
                        } => {
                            unrecorded.get_or_insert(*seq);
                        }
                        Record::Input {
                            input:
                                RecInput::ReflexParams {
                                    reflex,
                                    enabled,
                                    threshold,
                                    samples,
                                    max_age_ns,
                                },
                            seq,
                        } => {
                            let set = reflexes.as_mut().ok_or_else(|| {
                                "no way to set the reflexes' parameters was given".to_owned()
                            });
                            if let Err(why) = set.and_then(|set| {
                                set(*reflex, *enabled, *threshold, *samples, *max_age_ns)
                            }) {
                                refused.push(format!("record {seq}: {why}"));
                            }
                        }
                        _ => {
                            if let Err(why) = put_back(nrt, control.as_mut(), feed, r) {
                                refused.push(format!("record {}: {why}", r.seq()));
                            }
                        }
                    }
                }
            });
            // after it: the links that died writing at its end
            for r in group {
                if let Record::Input {
                    input:
                        RecInput::LinkLost {
                            link,
                            writing: true,
                        },
                    ..
                } = r
                {
                    self.rt.replay_link_lost(*link);
                }
            }
            out.passes += 1;
            self.collect(&mut out);
            out.refused.append(&mut self.refused);
            out.unrecorded = out.unrecorded.or(self.unrecorded);
        }
        out
    }

    /// Takes what the pass wrote (its queued frames, its odometry) and drops what NRT does not need here.
    fn collect(&mut self, out: &mut ReplayOutput) {
        while self.recording.nrt_pop_input().is_some() {}
        while let Some(f) = self.recording.nrt_pop_frame() {
            if f.dir == FrameDir::Out {
                out.frames.push(OutFrame {
                    seq: f.seq,
                    t_ns: f.t_ns,
                    link: f.link,
                    bytes: f.bytes.to_vec(),
                });
            }
        }
        while let Some(h) = self.odometry.nrt_pop() {
            out.odometry.push(h);
        }
        while self.odometry.nrt_pop_joint().is_some() {}
        self.nrt.nrt_drain_frames(|_| {});
        while self.nrt.nrt_pop_event().is_some() {}
        let _ = self.nrt.nrt_take_stats();
        while self.port.nrt_take_returned().is_some() {}
        // what the controllers answered and published (a full queue would change nothing but its drop count)
        for p in self.control.iter_mut().flat_map(|c| c.ports.iter_mut()) {
            let ctx = MsgCtx::new(handoff::NodeId(0), p.robot);
            for e in p.endpoints.iter_mut() {
                match e {
                    NrtEndpoint::Publisher { nrt, .. } => {
                        nrt.nrt_drain(|_| {});
                    }
                    NrtEndpoint::Service { nrt, .. } => while nrt.nrt_poll_response().is_some() {},
                    NrtEndpoint::Subscriber { .. } => {}
                    NrtEndpoint::Message { port, .. } => match port {
                        NrtMessagePort::Publisher(d) => {
                            d.nrt_drain(&ctx, &mut |_| {});
                        }
                        NrtMessagePort::Service(c) => while c.nrt_poll_response(&ctx).is_some() {},
                        NrtMessagePort::Subscriber(_) => {}
                    },
                }
            }
            if let Some(x) = p.private.as_mut() {
                if let Some(g) = x.0.downcast_mut::<NrtGoalPort>() {
                    while g.nrt_next_report().is_some() {}
                } else if let Some(c) = x.0.downcast_mut::<NrtCalibrationPort>() {
                    while c.nrt_next_report().is_some() {}
                }
            }
        }
    }
}

/// Puts back what the recorded pass took from NRT at this point (commands and frames on the rings, live values
/// in the cells, a lost link marked dead).
fn put_back(
    nrt: &mut NrtEnds,
    control: Option<&mut NrtControl>,
    feed: &mut FrameFeed<'_>,
    r: &Record,
) -> Result<(), String> {
    let params = nrt.nrt_params().clone();
    let e = |e: handoff::ParamError| e.to_string();
    match r {
        Record::Frame {
            dir: FrameDir::FromNrt,
            link,
            bytes,
            ..
        } => nrt
            .nrt_push_frame(LinkTarget::from_byte(*link), bytes)
            .map_err(|e| e.to_string()),
        Record::Frame { .. } => Ok(()),
        Record::Input { input, .. } => match *input {
            RecInput::Command(c) => nrt.nrt_push_command(c).map_err(|e| e.to_string()),
            RecInput::CmdVel {
                robot,
                twist,
                received_ns,
            } => params
                .nrt_set_cmd_vel_at(robot, twist, received_ns)
                .map_err(e),
            RecInput::JointCommand {
                robot,
                command,
                received_ns,
            } => params
                .nrt_set_joint_command_at(robot, command, received_ns)
                .map_err(e),
            RecInput::OwnerRequest { robot, owner } => {
                params.nrt_request_owner(robot, owner).map_err(e)
            }
            RecInput::Calibration { robot, calibration } => {
                params.nrt_set_calibration(robot, calibration).map_err(e)
            }
            RecInput::MotionLimits { robot, limits } => {
                params.nrt_set_motion_limits(robot, limits).map_err(e)
            }
            RecInput::Held { robot, held } => params.nrt_set_held(robot, held).map_err(e),
            RecInput::JointStateHz { robot, hz } => {
                params.nrt_set_joint_state_hz(robot, hz).map_err(e)
            }
            RecInput::Watchdog { seconds } => params.nrt_set_watchdog(seconds).map_err(e),
            RecInput::LinkLost {
                link,
                writing: false,
            } => {
                feed.link_lost(link);
                Ok(())
            }
            RecInput::Topic {
                robot,
                controller,
                endpoint,
                value,
            } => match port(control, robot, controller)?
                .endpoints
                .get_mut(endpoint as usize)
            {
                Some(NrtEndpoint::Subscriber { nrt, .. }) => {
                    nrt.nrt_store(value);
                    Ok(())
                }
                // a message subscriber of a plain type (go_to_pose's goal_pose)
                Some(NrtEndpoint::Message {
                    port: NrtMessagePort::Subscriber(store),
                    ..
                }) => store.nrt_store_recorded(value),
                _ => Err(format!(
                    "controller {controller} of robot {} has no subscriber {endpoint}",
                    robot.0
                )),
            },
            RecInput::ServiceRequest {
                robot,
                controller,
                endpoint,
                request,
            } => match port(control, robot, controller)?
                .endpoints
                .get_mut(endpoint as usize)
            {
                Some(NrtEndpoint::Service { nrt, .. }) => {
                    nrt.nrt_call(request).map(|_| ()).map_err(|e| e.to_string())
                }
                _ => Err(format!(
                    "controller {controller} of robot {} has no service {endpoint}",
                    robot.0
                )),
            },
            RecInput::Params {
                robot,
                controller,
                values,
            } => {
                port(control, robot, controller)?
                    .params
                    .nrt_store_all(values);
                Ok(())
            }
            RecInput::Goal {
                robot,
                controller,
                command,
            } => private::<NrtGoalPort>(port(control, robot, controller)?)?
                .nrt_send(command)
                .map_err(|e| e.to_string()),
            RecInput::CalibrationRun {
                robot,
                controller,
                command,
            } => private::<NrtCalibrationPort>(port(control, robot, controller)?)?
                .nrt_send(command)
                .map_err(|e| e.to_string()),
            // put back before the pass, or not inputs
            RecInput::Unrecorded { .. }
            | RecInput::ReflexParams { .. }
            | RecInput::LinkAttached { .. }
            | RecInput::LinkLost { writing: true, .. }
            | RecInput::BudgetStop { .. }
            | RecInput::Pass { .. }
            | RecInput::Exit { .. } => Ok(()),
        },
    }
}

/// The ports of controller `controller` (registry index) of `robot`.
fn port(
    control: Option<&mut NrtControl>,
    robot: RobotId,
    controller: u8,
) -> Result<&mut NrtControllerPorts, String> {
    let control = control.ok_or("no controller ports were given to the replay")?;
    control
        .ports
        .iter_mut()
        .filter(|p| p.robot == robot)
        .nth(controller as usize)
        .ok_or_else(|| format!("robot {} has no controller {controller}", robot.0))
}

/// A controller's private port of type `T` (a goal port, the calibration port).
fn private<T: 'static>(p: &mut NrtControllerPorts) -> Result<&mut T, String> {
    let name = p.controller;
    p.private
        .as_mut()
        .and_then(|x| x.0.downcast_mut::<T>())
        .ok_or_else(|| format!("controller {name} has no such private port"))
}

/// The frames a recorded run queued to its links before its exit sequence, in order: what a replay's
/// [`ReplayOutput::frames`] is compared with ([`first_frame_difference`]).
pub fn recorded_frames(records: &[Record]) -> Vec<OutFrame> {
    records[..exit_index(records)]
        .iter()
        .filter_map(|r| match r {
            Record::Frame {
                seq,
                dir: FrameDir::Out,
                link,
                t_ns,
                bytes,
                ..
            } => Some(OutFrame {
                seq: *seq,
                t_ns: *t_ns,
                link: *link,
                bytes: bytes.clone(),
            }),
            _ => None,
        })
        .collect()
}

/// Where the exit sequence of a recording begins (its [`RecInput::Exit`] marker; the end if none).
pub fn exit_index(records: &[Record]) -> usize {
    records
        .iter()
        .position(|r| {
            matches!(
                r,
                Record::Input {
                    input: RecInput::Exit { .. },
                    ..
                }
            )
        })
        .unwrap_or(records.len())
}

/// The first difference between two runs' queued frames (`None`: identical), as a sentence.
pub fn first_frame_difference(recorded: &[OutFrame], replayed: &[OutFrame]) -> Option<String> {
    for (i, (a, b)) in recorded.iter().zip(replayed).enumerate() {
        if a.link != b.link || a.bytes != b.bytes || a.t_ns != b.t_ns {
            return Some(format!(
                "frame {i} written (recorded record {}, at {} ns): recorded link {} {:02x?}, replayed link {} {:02x?} at {} ns",
                a.seq, a.t_ns, a.link, a.bytes, b.link, b.bytes, b.t_ns
            ));
        }
    }
    match recorded.len().cmp(&replayed.len()) {
        std::cmp::Ordering::Equal => None,
        std::cmp::Ordering::Greater => Some(format!(
            "the replay wrote {} frame(s), the recorded run {}: the first missing is recorded record {} at {} ns",
            replayed.len(),
            recorded.len(),
            recorded[replayed.len()].seq,
            recorded[replayed.len()].t_ns
        )),
        std::cmp::Ordering::Less => Some(format!(
            "the replay wrote {} frame(s), the recorded run {}: the first extra at {} ns",
            replayed.len(),
            recorded.len(),
            replayed[recorded.len()].t_ns
        )),
    }
}
