//! The node side of the Aseba protocol (aseba.md §2): what a node answers to each message,
//! around a [`Vm`] and a [`Target`], as the official `AsebaVMDebugMessage` and
//! `AsebaProcessIncomingEvents` do, plus the v6–v9 messages of the Thymio firmware.

use crate::vm::{changed, Outbox, Target, Vm, VmSizes};
use msgs::description::TargetDescription;
use msgs::wire::{AsebaStr, ChangedBlocks, Message, Words};

/// Protocol behaviour of a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeConfig {
    /// Node id.
    pub id: u16,
    /// Protocol version announced (9 like FW14; 5 lets the community tools connect).
    pub protocol: u16,
    /// Largest VARIABLES reply in words (47 on the Thymio; 0 = one reply). Non-zero also
    /// means the node is built with limited messages (CHANGED_VARIABLES cut at 90 bytes).
    pub variables_chunk: usize,
    /// Friendly name (DEVICE_INFO NAME).
    pub name: String,
    /// UUID (DEVICE_INFO UUID).
    pub uuid: [u8; 16],
}

/// A node: description, VM, device information.
#[derive(Debug)]
pub struct Node {
    /// What the node describes about itself.
    pub description: TargetDescription,
    /// The VM.
    pub vm: Vm,
    /// Protocol behaviour.
    pub config: NodeConfig,
    /// Bytecode saved by WRITE_BYTECODE (loaded at the next boot).
    pub flash: Option<Vec<u16>>,
    /// RF settings (network id, node id, channel).
    pub rf: [u16; 3],
    scratch: Vec<u8>,
}

/// Whether a message asks the node to do something beyond answering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeRequest {
    /// Nothing more.
    None,
    /// REBOOT: the host wants a reboot (into the bootloader on a real robot).
    Reboot,
}

impl Node {
    /// A node with the sizes of `description` and no program.
    pub fn new(description: TargetDescription, config: NodeConfig) -> Node {
        let sizes = VmSizes {
            bytecode: description.bytecode_size as usize,
            variables: description.variables_size as usize,
            stack: description.stack_size as usize,
        };
        Node {
            vm: Vm::new(config.id, sizes),
            description,
            config,
            flash: None,
            rf: [0; 3],
            scratch: Vec::with_capacity(msgs::wire::MAX_PAYLOAD),
        }
    }

    /// Sends the description: header and items (`fragment` −2), header only (−1), or item
    /// `k` over variables, events, natives.
    pub fn send_description(&self, fragment: i32, out: &mut dyn Outbox) {
        let d = &self.description;
        if fragment < 0 {
            out.send(&d.header_message(self.config.protocol));
            if fragment == -1 {
                return;
            }
        }
        let total = d.frame_count() - 1;
        let items = if fragment < 0 {
            0..total
        } else {
            let k = (fragment as usize).min(total);
            k..(k + 1).min(total)
        };
        for msg in items.filter_map(|k| d.item_message(k)) {
            out.send(&msg);
        }
    }

    fn send_variables(&mut self, start: u16, length: u16, out: &mut dyn Outbox) {
        let (start, end) = (start as usize, start as usize + length as usize);
        if end > self.vm.variables().len() {
            self.vm_assert(out);
            return;
        }
        let vars = self.vm.variables();
        let chunk = if self.config.variables_chunk == 0 {
            msgs::wire::MAX_PAYLOAD_WORDS - 1
        } else {
            self.config.variables_chunk
        };
        let mut at = start;
        loop {
            let n = (end - at).min(chunk);
            out.send(&Message::Variables {
                start: at as u16,
                values: Words::from_slice(&vars[at..at + n]),
            });
            at += n;
            if at >= end {
                break;
            }
        }
    }

    /// A refused out-of-range request: reported and the VM stopped, as the Thymio's assert.
    fn vm_assert(&mut self, out: &mut dyn Outbox) {
        self.vm.emit_node_specific_error("VM ASSERT !", out);
    }

    /// CHANGED_VARIABLES as the official node sends them (packets cut at 90 bytes on a
    /// node with limited messages, like the Thymio). Never allocates.
    fn send_changed_variables(&mut self, out: &mut dyn Outbox) {
        let max = if self.config.variables_chunk == 0 {
            changed::FULL_PACKET
        } else {
            changed::LIMITED_PACKET
        };
        let Node { vm, scratch, .. } = self;
        vm.changed_variables_packets(max, scratch, |payload| {
            if let Some(blocks) = ChangedBlocks::from_bytes(payload) {
                out.send(&Message::ChangedVariables { blocks });
            }
        });
    }

    /// Handles one incoming message from `source` (`AsebaProcessIncomingEvents`).
    pub fn handle(
        &mut self,
        source: u16,
        msg: &Message<'_>,
        target: &mut dyn Target,
        out: &mut dyn Outbox,
    ) -> NodeRequest {
        let id = self.config.id;
        match msg {
            Message::UserEvent { id: event, args } => {
                if !(self.vm.step_by_step() && self.vm.event_active()) {
                    let args_size = self
                        .description
                        .variables
                        .get(2)
                        .map_or(0, |v| v.size as usize);
                    let vars = self.vm.variables_mut();
                    if vars.len() > 1 {
                        vars[1] = source as i16;
                    }
                    for (i, a) in args.iter().take(args_size).enumerate() {
                        if let Some(slot) = vars.get_mut(2 + i) {
                            *slot = a;
                        }
                    }
                    self.vm.setup_event(*event, out);
                }
                return NodeRequest::None;
            }
            Message::GetDescription { version } => {
                if *version <= 4 {
                    self.send_description(-2, out);
                }
                return NodeRequest::None;
            }
            Message::ListNodes { .. } => {
                out.send(&Message::NodePresent {
                    version: self.config.protocol,
                });
                return NodeRequest::None;
            }
            _ => {}
        }
        if msg.dest() != Some(id) {
            return NodeRequest::None;
        }
        let v6 = self.config.protocol >= 6;
        match msg {
            Message::SetBytecode { start, words, .. } => {
                let written = self
                    .vm
                    .write_bytecode(*start as usize, words.iter().map(|w| w as u16));
                if written.is_err() {
                    self.vm_assert(out);
                    return NodeRequest::None;
                }
                self.vm.reset(target, out);
            }
            Message::Reset { .. } => self.vm.reset(target, out),
            Message::Run { .. } => self.vm.cmd_run(out),
            Message::Pause { .. } => self.vm.cmd_pause(out),
            Message::Step { .. } => self.vm.cmd_step(target, out),
            Message::Stop { .. } => self.vm.cmd_stop(out),
            Message::GetExecutionState { .. } => self.vm.send_state(out),
            Message::BreakpointSet { pc, .. } => {
                if *pc as usize >= self.vm.bytecode().len() {
                    // the official assert; the Thymio's returns and stores it anyway (harmless:
                    // it never matches a pc)
                    self.vm_assert(out);
                }
                let ok = self.vm.set_breakpoint(*pc);
                out.send(&Message::BreakpointSetResult {
                    pc: *pc,
                    success: ok as u16,
                });
            }
            Message::BreakpointClear { pc, .. } => {
                self.vm.clear_breakpoint(*pc);
            }
            Message::BreakpointClearAll { .. } => self.vm.clear_breakpoints(),
            Message::GetVariables { start, length, .. } => {
                self.send_variables(*start, *length, out)
            }
            Message::SetVariables { start, values, .. }
                if self
                    .vm
                    .write_variables(*start as usize, values.iter())
                    .is_err() =>
            {
                self.vm_assert(out)
            }
            Message::WriteBytecode { .. } => {
                self.flash = Some(self.vm.bytecode().to_vec());
                out.send(&Message::NodeSpecificError {
                    pc: self.vm.pc(),
                    message: AsebaStr::from_str("Flashing OK"),
                });
            }
            Message::Reboot { .. } => return NodeRequest::Reboot,
            Message::SuspendToRam { .. } => {
                out.send(&Message::NodeSpecificError {
                    pc: self.vm.pc(),
                    message: AsebaStr::from_str("Sleep mode not supported"),
                });
            }
            Message::GetNodeDescription { .. } => self.send_description(-2, out),
            Message::GetNodeDescriptionFragment { fragment, .. } if self.config.protocol >= 8 => {
                self.send_description(*fragment as i32, out)
            }
            Message::GetChangedVariables { .. } if self.config.protocol >= 7 => {
                self.send_changed_variables(out)
            }
            Message::GetDeviceInfo { info, .. } if v6 => self.send_device_info(*info, out),
            Message::SetDeviceInfo { info, data, .. } if v6 => self.set_device_info(*info, data),
            _ => {}
        }
        NodeRequest::None
    }

    fn send_device_info(&self, info: u16, out: &mut dyn Outbox) {
        let mut rf = [0u8; 6];
        for (i, w) in [self.rf[0], self.rf[1], 0xFFFF].iter().enumerate() {
            rf[2 * i..2 * i + 2].copy_from_slice(&w.to_le_bytes());
        }
        let name = self.config.name.as_bytes();
        let data: &[u8] = match info {
            1 => &self.config.uuid,
            2 => &name[..name.len().min(55)],
            3 => &rf,
            _ => return,
        };
        out.send(&Message::DeviceInfo {
            info: info as u8,
            data,
        });
    }

    fn set_device_info(&mut self, info: u16, data: &[u8]) {
        match info {
            1 if data.len() == 16 => self.config.uuid.copy_from_slice(data),
            1 if data.is_empty() => self.config.uuid = [0; 16],
            2 => {
                self.config.name = String::from_utf8_lossy(&data[..data.len().min(55)]).into_owned()
            }
            3 if data.len() >= 4 => {
                self.rf[0] = u16::from_le_bytes([data[0], data[1]]);
                self.rf[1] = u16::from_le_bytes([data[2], data[3]]);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests;
