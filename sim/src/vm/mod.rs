//! The Aseba virtual machine, instruction for instruction the official (Mobsya) `vm.c`
//! (aseba.md §3): event vector table, `when` edge bits written back into the bytecode,
//! execution flags, breakpoints, step limit, and the errors the official VM reports with the
//! messages it sends.
//!
//! Where the official VM would trash memory (its `ASEBA_ASSERT` paths: stack over/underflow,
//! out-of-range variable or bytecode access, unknown opcode…), this VM refuses the operation,
//! reports `NODE_SPECIFIC_ERROR(pc, "VM ASSERT !")` as the Thymio firmware does, and stops.
//!
//! Memory is allocated once at construction; stepping never allocates. Everything the VM
//! says goes through an [`Outbox`]; native functions are provided by a [`Target`].

pub mod changed;
mod deque;
mod exec;
pub mod math;
pub mod std_natives;

#[cfg(test)]
mod tests;

use msgs::opcodes::{
    Opcode, BRANCH_WAS_TRUE, FLAG_EVENT_ACTIVE, FLAG_EVENT_RUNNING, FLAG_STEP_BY_STEP,
    MAX_BREAKPOINTS,
};
use msgs::wire::Message;

/// Event id of the init code.
pub const INIT_EVENT: u16 = 0xFFFF;

/// Largest user event payload in words (`ASEBA_MAX_EVENT_ARG_SIZE`).
pub const MAX_EVENT_ARGS: usize = 258;

/// Where the VM's messages go (a node's transmit buffer).
pub trait Outbox {
    /// Sends one message from this node.
    fn send(&mut self, msg: &Message<'_>);
}

/// A target: native functions and the reset callback.
pub trait Target {
    /// Runs native `id`. The native pops its arguments with [`Vm::pop_arg`] and reads and
    /// writes memory with [`Vm::var`] / [`Vm::set_var`]; an `Err` is a refused access.
    fn native(&mut self, vm: &mut Vm, id: u16, out: &mut dyn Outbox) -> Result<(), Fault>;
    /// The target's reset callback (after SET_BYTECODE and RESET).
    fn reset(&mut self, vm: &mut Vm);
    /// Largest payload of an emitted event (the Thymio refuses more than 32 words).
    fn max_emit_words(&self) -> usize {
        MAX_EVENT_ARGS
    }
}

/// An access the official VM would perform without checking (an `ASEBA_ASSERT`), refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Fault {
    /// Stack overflow.
    #[error("stack overflow")]
    StackOverflow,
    /// Stack underflow.
    #[error("stack underflow")]
    StackUnderflow,
    /// Variable address outside memory.
    #[error("variable address {0} outside memory")]
    Variable(u32),
    /// Bytecode address outside memory.
    #[error("bytecode address {0} outside memory")]
    Bytecode(i32),
    /// Unknown opcode.
    #[error("unknown opcode in 0x{0:04X}")]
    Opcode(u16),
    /// Unknown operator.
    #[error("unknown operator {0}")]
    Operator(u16),
    /// Unknown native function.
    #[error("unknown native function {0}")]
    Native(u16),
    /// Emitted event too long.
    #[error("event of {0} words is too long")]
    EmitTooLong(usize),
}

/// Sizes of a VM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VmSizes {
    /// Bytecode words.
    pub bytecode: usize,
    /// Variable words.
    pub variables: usize,
    /// Stack words.
    pub stack: usize,
}

/// The VM state (`AsebaVMState`).
#[derive(Debug, Clone)]
pub struct Vm {
    node_id: u16,
    pub(crate) bytecode: Vec<u16>,
    pub(crate) variables: Vec<i16>,
    variables_old: Vec<i16>,
    pub(crate) stack: Vec<i16>,
    /// Index of the top of the stack; −1 when empty.
    pub(crate) sp: i32,
    pub(crate) pc: u16,
    pub(crate) flags: u16,
    breakpoints: [u16; MAX_BREAKPOINTS],
    breakpoint_count: usize,
}

impl Vm {
    /// A VM with zeroed memory and no program (`AsebaVMInit`).
    pub fn new(node_id: u16, sizes: VmSizes) -> Vm {
        Vm {
            node_id,
            bytecode: vec![0; sizes.bytecode.max(1)],
            variables: vec![0; sizes.variables],
            variables_old: vec![0; sizes.variables],
            stack: vec![0; sizes.stack],
            sp: -1,
            pc: 0,
            flags: 0,
            breakpoints: [0; MAX_BREAKPOINTS],
            breakpoint_count: 0,
        }
    }

    /// `AsebaVMInit`: no program, pc 0, flags 0, no breakpoints, memory zeroed (power-on).
    pub fn init(&mut self) {
        self.pc = 0;
        self.flags = 0;
        self.sp = -1;
        self.breakpoint_count = 0;
        self.bytecode[0] = 0;
        self.variables.fill(0);
        self.variables_old.fill(0);
    }

    /// Node id.
    pub fn node_id(&self) -> u16 {
        self.node_id
    }

    /// Changes the node id.
    pub fn set_node_id(&mut self, id: u16) {
        self.node_id = id;
    }

    /// Program counter.
    pub fn pc(&self) -> u16 {
        self.pc
    }

    /// Index of the top of the stack, −1 when empty.
    pub fn sp(&self) -> i32 {
        self.sp
    }

    /// Execution flags (`FLAG_*`).
    pub fn flags(&self) -> u16 {
        self.flags
    }

    /// Whether an event handler is active.
    pub fn event_active(&self) -> bool {
        self.flags & FLAG_EVENT_ACTIVE != 0
    }

    /// Whether the VM is in step-by-step mode (paused or stopped).
    pub fn step_by_step(&self) -> bool {
        self.flags & FLAG_STEP_BY_STEP != 0
    }

    /// Variable memory.
    pub fn variables(&self) -> &[i16] {
        &self.variables
    }

    /// Variable memory, writable.
    pub fn variables_mut(&mut self) -> &mut [i16] {
        &mut self.variables
    }

    /// Bytecode memory.
    pub fn bytecode(&self) -> &[u16] {
        &self.bytecode
    }

    /// Variable `addr`.
    pub fn var(&self, addr: u32) -> Result<i16, Fault> {
        self.variables
            .get(addr as usize)
            .copied()
            .ok_or(Fault::Variable(addr))
    }

    /// Writes variable `addr`.
    pub fn set_var(&mut self, addr: u32, value: i16) -> Result<(), Fault> {
        let slot = self
            .variables
            .get_mut(addr as usize)
            .ok_or(Fault::Variable(addr))?;
        *slot = value;
        Ok(())
    }

    /// Checks that `len` words from `addr` are in memory.
    pub fn check_range(&self, addr: u32, len: u32) -> Result<(), Fault> {
        if addr as u64 + len as u64 > self.variables.len() as u64 {
            return Err(Fault::Variable(addr.saturating_add(len)));
        }
        Ok(())
    }

    /// Pops a native argument (`AsebaNativePopArg`), as the unsigned word natives use.
    pub fn pop_arg(&mut self) -> Result<u16, Fault> {
        if self.sp < 0 {
            return Err(Fault::StackUnderflow);
        }
        let v = self.stack[self.sp as usize];
        self.sp -= 1;
        Ok(v as u16)
    }

    /// Stops execution as the official error paths do (`flags := STEP_BY_STEP`).
    pub fn stop_with_error(&mut self) {
        self.flags = FLAG_STEP_BY_STEP;
    }

    /// Writes bytecode words at `start` (SET_BYTECODE's write, without the reset).
    pub fn write_bytecode(
        &mut self,
        start: usize,
        words: impl ExactSizeIterator<Item = u16>,
    ) -> Result<(), Fault> {
        let len = words.len();
        if start + len > self.bytecode.len() {
            return Err(Fault::Bytecode((start + len) as i32));
        }
        for (slot, w) in self.bytecode[start..start + len].iter_mut().zip(words) {
            *slot = w;
        }
        Ok(())
    }

    /// Writes variables at `start` (SET_VARIABLES).
    pub fn write_variables(
        &mut self,
        start: usize,
        values: impl ExactSizeIterator<Item = i16>,
    ) -> Result<(), Fault> {
        let len = values.len();
        if start + len > self.variables.len() {
            return Err(Fault::Variable((start + len) as u32));
        }
        for (slot, v) in self.variables[start..start + len].iter_mut().zip(values) {
            *slot = v;
        }
        Ok(())
    }

    /// Address of the handler of `event`, 0 if none (`AsebaVMGetEventAddress`).
    pub fn event_address(&self, event: u16) -> u16 {
        let table = self.bytecode[0] as usize;
        let mut i = 1;
        while i < table {
            match (self.bytecode.get(i), self.bytecode.get(i + 1)) {
                (Some(&id), Some(&addr)) if id == event => return addr,
                (Some(_), Some(_)) => {}
                _ => return 0,
            }
            i += 2;
        }
        0
    }

    /// Sends EXECUTION_STATE_CHANGED.
    pub fn send_state(&self, out: &mut dyn Outbox) {
        out.send(&Message::ExecutionStateChanged {
            pc: self.pc,
            flags: self.flags,
        });
    }

    /// `AsebaVMSetupEvent`: starts the handler of `event` if there is one; returns its address.
    pub fn setup_event(&mut self, event: u16, out: &mut dyn Outbox) -> u16 {
        let address = self.event_address(event);
        if address != 0 {
            if self.event_active() {
                out.send(&Message::EventExecutionKilled { pc: self.pc });
            }
            self.pc = address;
            self.sp = -1;
            self.flags |= FLAG_EVENT_ACTIVE;
            if self.step_by_step() {
                self.send_state(out);
            }
        }
        address
    }

    /// Reports an assert-class fault as the Thymio does and stops.
    pub(crate) fn assert_fault(&mut self, fault: Fault, out: &mut dyn Outbox) {
        tracing::debug!(pc = self.pc, %fault, "VM assert");
        self.emit_node_specific_error("VM ASSERT !", out);
    }

    /// `AsebaVMEmitNodeSpecificError`: reports `message` and stops.
    pub fn emit_node_specific_error(&mut self, message: &str, out: &mut dyn Outbox) {
        self.flags = FLAG_STEP_BY_STEP;
        out.send(&Message::NodeSpecificError {
            pc: self.pc,
            message: msgs::wire::AsebaStr::from_str(message),
        });
    }

    /// `AsebaVMRun`: runs the active event until it ends, an error, a breakpoint, or
    /// `steps_limit` instructions (0 = unlimited; reaching it kills the event). Returns
    /// whether anything ran.
    pub fn run(&mut self, steps_limit: u16, target: &mut dyn Target, out: &mut dyn Outbox) -> bool {
        if !self.event_active() || self.step_by_step() {
            return false;
        }
        self.flags |= FLAG_EVENT_RUNNING;
        let mut limit = steps_limit;
        while self.event_active() && self.flags & FLAG_EVENT_RUNNING != 0 {
            if self.breakpoint_count > 0
                && self.breakpoints[..self.breakpoint_count].contains(&self.pc)
            {
                self.flags |= FLAG_STEP_BY_STEP;
                self.send_state(out);
                // the official VM leaves EVENT_RUNNING set here
                return true;
            }
            self.step(target, out);
            if steps_limit > 0 {
                limit -= 1;
                if limit == 0 {
                    self.flags &= !FLAG_EVENT_ACTIVE;
                    out.send(&Message::EventExecutionKilled { pc: self.pc });
                    break;
                }
            }
        }
        self.flags &= !FLAG_EVENT_RUNNING;
        true
    }

    /// Adds a breakpoint; false when the 16 slots are taken.
    pub fn set_breakpoint(&mut self, pc: u16) -> bool {
        if self.breakpoint_count < MAX_BREAKPOINTS {
            self.breakpoints[self.breakpoint_count] = pc;
            self.breakpoint_count += 1;
            true
        } else {
            false
        }
    }

    /// Removes the first breakpoint at `pc`.
    pub fn clear_breakpoint(&mut self, pc: u16) -> bool {
        let n = self.breakpoint_count;
        match self.breakpoints[..n].iter().position(|b| *b == pc) {
            Some(i) => {
                self.breakpoints.copy_within(i + 1..n, i);
                self.breakpoint_count -= 1;
                true
            }
            None => false,
        }
    }

    /// Removes every breakpoint.
    pub fn clear_breakpoints(&mut self) {
        self.breakpoint_count = 0;
    }

    /// The breakpoints.
    pub fn breakpoints(&self) -> &[u16] {
        &self.breakpoints[..self.breakpoint_count]
    }

    /// `AsebaVMResetWhenFlags`, with the official start of the scan (`bytecode[0] * 2 + 1`,
    /// past the table: the first instructions keep their bits).
    fn reset_when_flags(&mut self) {
        let mut pc = self.bytecode[0] as usize * 2 + 1;
        while pc < self.bytecode.len() {
            let w = self.bytecode[pc];
            if Opcode::of(w) == Some(Opcode::ConditionalBranch) {
                self.bytecode[pc] = w & !BRANCH_WAS_TRUE;
            }
            pc += Opcode::of(w).map_or(1, Opcode::words);
        }
    }

    /// RESET (also the end of SET_BYTECODE): step-by-step, `when` bits cleared, target reset,
    /// init event set up; EXECUTION_STATE_CHANGED.
    pub fn reset(&mut self, target: &mut dyn Target, out: &mut dyn Outbox) {
        self.flags = FLAG_STEP_BY_STEP;
        self.reset_when_flags();
        target.reset(self);
        if self.setup_event(INIT_EVENT, out) == 0 {
            self.send_state(out);
        }
    }

    /// RUN.
    pub fn cmd_run(&mut self, out: &mut dyn Outbox) {
        self.flags &= !FLAG_STEP_BY_STEP;
        self.send_state(out);
    }

    /// PAUSE.
    pub fn cmd_pause(&mut self, out: &mut dyn Outbox) {
        self.flags |= FLAG_STEP_BY_STEP;
        self.send_state(out);
    }

    /// STEP.
    pub fn cmd_step(&mut self, target: &mut dyn Target, out: &mut dyn Outbox) {
        if self.event_active() {
            self.step(target, out);
            self.send_state(out);
        }
    }

    /// STOP.
    pub fn cmd_stop(&mut self, out: &mut dyn Outbox) {
        self.flags = FLAG_STEP_BY_STEP;
        self.send_state(out);
    }

    /// Starts running as after a boot with a stored program (flags 0, init set up).
    pub fn boot(&mut self, target: &mut dyn Target, out: &mut dyn Outbox) {
        self.flags = 0;
        self.reset_when_flags();
        target.reset(self);
        self.setup_event(INIT_EVENT, out);
    }
}
