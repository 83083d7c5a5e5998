//! The flight recorder's NRT side in the no-allocation proofs: drains the recording rings and counts what the
//! RT thread recorded, so that a proof shows the recorder was on and saw every kind of input.

use handoff::{FrameDir, NrtRecording, PassKind, RecInput};

/// What was recorded, by kind.
#[derive(Debug, Default)]
pub struct RecordCounts {
    pub passes: [u64; 3],
    pub frames: [u64; 3],
    pub commands: u64,
    pub cmd_vel: u64,
    pub joint_commands: u64,
    pub owner_requests: u64,
    pub motion_limits: u64,
    pub held: u64,
    pub joint_state_hz: u64,
    pub links_attached: u64,
    /// What the controllers took from ROS: topics, service requests, parameters, goals, calibration runs.
    pub controllers: [u64; 5],
    /// Records taken, and the highest sequence number seen (every number below it was taken or dropped).
    pub taken: u64,
    pub last_seq: u64,
}

impl RecordCounts {
    /// Takes everything recorded so far.
    pub fn drain(&mut self, rec: &mut NrtRecording) {
        while let Some(e) = rec.nrt_pop_input() {
            self.taken += 1;
            self.last_seq = self.last_seq.max(e.seq);
            match e.input {
                RecInput::Pass { kind, .. } => {
                    self.passes[match kind {
                        PassKind::Periodic => 0,
                        PassKind::Io => 1,
                        PassKind::Free => 2,
                    }] += 1
                }
                RecInput::Command(_) => self.commands += 1,
                RecInput::CmdVel { .. } => self.cmd_vel += 1,
                RecInput::JointCommand { .. } => self.joint_commands += 1,
                RecInput::OwnerRequest { .. } => self.owner_requests += 1,
                RecInput::MotionLimits { .. } => self.motion_limits += 1,
                RecInput::Held { .. } => self.held += 1,
                RecInput::JointStateHz { .. } => self.joint_state_hz += 1,
                RecInput::LinkAttached { .. } => self.links_attached += 1,
                RecInput::Topic { .. } => self.controllers[0] += 1,
                RecInput::ServiceRequest { .. } => self.controllers[1] += 1,
                RecInput::Params { .. } => self.controllers[2] += 1,
                RecInput::Goal { .. } => self.controllers[3] += 1,
                RecInput::CalibrationRun { .. } => self.controllers[4] += 1,
                _ => {}
            }
        }
        while let Some(f) = rec.nrt_pop_frame() {
            self.taken += 1;
            self.last_seq = self.last_seq.max(f.seq);
            self.frames[match f.dir {
                FrameDir::In => 0,
                FrameDir::Out => 1,
                FrameDir::FromNrt => 2,
            }] += 1;
        }
    }

    /// Every kind the proofs feed was recorded, and every record was either taken or counted as dropped.
    pub fn check(&self, rec: &NrtRecording) {
        let (di, df) = rec.nrt_dropped();
        assert!(self.passes.iter().sum::<u64>() > 1000, "{self:?}");
        assert!(
            self.frames.iter().all(|n| *n > 0),
            "frames read, written and from NRT: {self:?}"
        );
        assert!(
            self.commands > 0 && self.cmd_vel > 0 && self.links_attached > 0,
            "{self:?}"
        );
        assert_eq!(
            self.taken + di + df,
            self.last_seq + 1,
            "records lost without being counted: {self:?}, dropped {di} inputs, {df} frames"
        );
    }
}
