//! Frames and events between the engine and the RT thread's rings and the Aseba switch: RT events in, frames
//! from the links to the network manager and the switch's clients, the switch's budget per link, frames out.

use super::{vm_halt, Engine, EngineEvent, LinkInfo};
use crate::network::{Dest, Via};
use crate::switch::LinkBudget;
use handoff::{LinkKind, LinkTarget, NodeId, RtEvent};
use msgs::wire::Frame;
use std::time::Instant;

/// Frames kept while the ring to RT is full, before dropping (and counting).
const MAX_BACKLOG: usize = 4096;

impl Engine {
    pub(super) fn drain_rt_events(&mut self, now: Instant) {
        while let Some(ev) = self.ends.nrt_pop_event() {
            match ev {
                // The owner in effect: the ROS front ends read it from the engine's events.
                RtEvent::Owner {
                    robot,
                    owner,
                    dropped,
                } => self.events.push_back(EngineEvent::Owner {
                    robot,
                    owner,
                    dropped,
                }),
                RtEvent::Started(s) => {
                    for w in s.warnings() {
                        tracing::warn!("{w}");
                    }
                    self.rt_setup = Some(s);
                    self.events.push_back(EngineEvent::RtStarted(s));
                }
                RtEvent::LinkUp { link, target, kind } => {
                    let budget = self.link_budget(target, kind, now);
                    self.links.insert(link, LinkInfo { target, budget });
                    self.forwarding.links_changed();
                    self.net.on_link_up(Via::Link(link), now);
                    self.events
                        .push_back(EngineEvent::LinkUp { link, target, kind });
                }
                RtEvent::LinkDown {
                    link,
                    target,
                    reason,
                } => {
                    tracing::warn!("link {link} (target {target}) down: {reason:?}");
                    self.links.remove(&link);
                    self.forwarding.links_changed();
                    self.net.on_link_down(Via::Link(link), now);
                    self.events
                        .push_back(EngineEvent::LinkDown { link, target });
                }
                RtEvent::Proximity(sample) => {
                    if let Some(node) = self.robots.node_of(sample.robot) {
                        self.events
                            .push_back(EngineEvent::Proximity { node, sample });
                    }
                }
                RtEvent::RobotStale { robot } => {
                    if let Some(node) = self.robots.node_of(robot) {
                        self.events.push_back(EngineEvent::RobotStale { node });
                    }
                }
                RtEvent::WatchdogStop { robot } => {
                    if let Some(node) = self.robots.node_of(robot) {
                        self.events.push_back(EngineEvent::WatchdogStop { node });
                    }
                }
                RtEvent::ControllerStopped { robot, stop } => {
                    if let Some(node) = self.robots.node_of(robot) {
                        self.events
                            .push_back(EngineEvent::ControllerStopped { node, robot, stop });
                    }
                }
                RtEvent::Stats => {
                    if let Some(s) = self.ends.nrt_take_stats() {
                        self.last_stats = Some(s);
                        self.events.push_back(EngineEvent::Stats(Box::new(s)));
                    }
                }
                RtEvent::Exiting { reason } => {
                    self.rt_exited = true;
                    self.events.push_back(EngineEvent::RtExited(reason));
                }
            }
        }
    }

    pub(super) fn drain_frames(&mut self, now: Instant) {
        let multi_link = self.links.len() > 1;
        let forward_all = self.params.switch.forward_unhandled_events;
        let Engine {
            ends,
            net,
            switch,
            backlog,
            links,
            robots,
            foreign,
            forwarding,
            ..
        } = self;
        ends.nrt_drain_frames(|rf| {
            let Ok((frame, _)) = Frame::parse(rf.bytes) else {
                return;
            };
            net.on_frame(Via::Link(rf.link), &frame, rf.t_ns, now);
            foreign.check(robots, net, &frame, now);
            if let Some(s) = switch.as_mut() {
                s.broadcast(rf.bytes, None);
            }
            if multi_link {
                // Several targets form one Aseba network, as in asebaros' hub (`forwarding.rs`).
                let kind = frame.kind;
                forwarding.each_target(
                    net,
                    links.keys().copied(),
                    rf.link,
                    kind,
                    forward_all,
                    |l| backlog.push_back((LinkTarget::One(l), rf.bytes.to_vec())),
                );
            }
        });
    }

    /// The switch's forwarding budget toward a new link: 3/4 of a serial link's line rate,
    /// else `switch.tcp_budget`.
    pub(super) fn link_budget(&self, target: u16, kind: LinkKind, now: Instant) -> LinkBudget {
        let baud = self
            .params
            .targets
            .get(target as usize)
            .and_then(|t| t.parse::<msgs::target::Target>().ok())
            .and_then(|t| match t {
                msgs::target::Target::Serial(s) => Some(s.baud),
                _ => None,
            });
        match (kind, baud) {
            (LinkKind::Serial, Some(baud)) => LinkBudget::serial(baud, now),
            (LinkKind::Serial, None) => LinkBudget::serial(115_200, now),
            _ => LinkBudget::new(self.params.switch.tcp_budget, now),
        }
    }

    /// Frames from the switch's clients go to every robot link within its budget (the rest
    /// is counted for the client by the switch) and, if a link took them, are seen by the
    /// network manager.
    pub(super) fn poll_switch(&mut self, now: Instant) {
        let Engine {
            switch,
            net,
            links,
            backlog,
            ..
        } = self;
        let Some(switch) = switch.as_mut() else {
            return;
        };
        let mut halts: Vec<NodeId> = Vec::new();
        switch.poll(|_, frame| {
            if let Some(dest) = vm_halt::halt_request(frame) {
                halts.push(dest);
            }
            let (mut taken, mut refused) = (0, 0);
            for (l, info) in links.iter_mut() {
                if info.budget.take(frame.raw().len(), now) {
                    backlog.push_back((LinkTarget::One(*l), frame.raw().to_vec()));
                    taken += 1;
                } else {
                    refused += 1;
                }
            }
            // a frame no link took never reached the Aseba network: the ROS side does not see
            // it either (a flood costs the driver no more than the budget lets through)
            if taken > 0 || refused == 0 {
                net.on_frame(Via::Switch, frame, 0, now);
            }
            refused == 0
        });
        for dest in halts {
            self.watch_client_halt(dest);
        }
    }

    pub(super) fn flush_outgoing(&mut self) {
        while let Some(out) = self.net.pop_outgoing() {
            match out.dest {
                Dest::Link(Via::Switch) => {
                    if let Some(s) = self.switch.as_mut() {
                        s.broadcast(&out.frame, None);
                    }
                }
                Dest::Link(Via::Link(l)) => self.backlog.push_back((LinkTarget::One(l), out.frame)),
                Dest::All => {
                    if let Some(s) = self.switch.as_mut() {
                        s.broadcast(&out.frame, None);
                    }
                    self.backlog.push_back((LinkTarget::All, out.frame));
                }
            }
        }
        while let Some((to, frame)) = self.backlog.front() {
            match self.ends.nrt_push_frame(*to, frame) {
                Ok(()) => {
                    self.backlog.pop_front();
                }
                Err(handoff::SendError::Full) => break,
                Err(e) => {
                    tracing::error!("dropping an invalid frame for the link: {e}");
                    self.backlog.pop_front();
                }
            }
        }
        while self.backlog.len() > MAX_BACKLOG {
            self.backlog.pop_front();
            self.stats.frames_dropped_to_rt += 1;
        }
    }
}
