//! Typed Aseba messages: the message enum, its type and destination. Decoding (`decode`) and
//! encoding (`encode`) are beside it, both without allocation.

use super::kind;
use super::views::{AsebaStr, ChangedBlocks, NativeParams, Words};

/// One Aseba message (aseba.md §2.2). Field names follow the reference table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)] // fields are named as in the protocol table
pub enum Message<'a> {
    /// A user (global) event: type `id` < 0x8000, i16 arguments.
    UserEvent {
        id: u16,
        args: Words<'a>,
    },
    BootloaderReset {
        dest: u16,
    },
    BootloaderReadPage {
        dest: u16,
        page: u16,
    },
    BootloaderWritePage {
        dest: u16,
        page: u16,
    },
    BootloaderPageDataWrite {
        dest: u16,
        data: [u8; 4],
    },
    BootloaderDescription {
        page_size: u16,
        pages_start: u16,
        pages_count: u16,
    },
    BootloaderPageDataRead {
        data: [u8; 4],
    },
    /// `error_address` is present only with error code 2.
    BootloaderAck {
        error_code: u16,
        error_address: Option<u16>,
    },
    /// First message of a description (note: stack size before variables size).
    Description {
        name: AsebaStr<'a>,
        protocol_version: u16,
        bytecode_size: u16,
        stack_size: u16,
        variables_size: u16,
        named_variables: u16,
        local_events: u16,
        native_functions: u16,
    },
    NamedVariableDescription {
        size: u16,
        name: AsebaStr<'a>,
    },
    LocalEventDescription {
        name: AsebaStr<'a>,
        description: AsebaStr<'a>,
    },
    NativeFunctionDescription {
        name: AsebaStr<'a>,
        description: AsebaStr<'a>,
        params: NativeParams<'a>,
    },
    Disconnected,
    Variables {
        start: u16,
        values: Words<'a>,
    },
    /// `size_index` is `None` in the short form sent by the deque natives (pc only).
    ArrayAccessOutOfBounds {
        pc: u16,
        size_index: Option<(u16, u16)>,
    },
    DivisionByZero {
        pc: u16,
    },
    EventExecutionKilled {
        pc: u16,
    },
    NodeSpecificError {
        pc: u16,
        message: AsebaStr<'a>,
    },
    ExecutionStateChanged {
        pc: u16,
        flags: u16,
    },
    BreakpointSetResult {
        pc: u16,
        success: u16,
    },
    NodePresent {
        version: u16,
    },
    /// Protocol 6: `info` code (1 UUID, 2 NAME, 3 RF settings) and its bytes.
    DeviceInfo {
        info: u8,
        data: &'a [u8],
    },
    /// Protocol 7.
    ChangedVariables {
        blocks: ChangedBlocks<'a>,
    },
    GetDescription {
        version: u16,
    },
    SetBytecode {
        dest: u16,
        start: u16,
        words: Words<'a>,
    },
    Reset {
        dest: u16,
    },
    Run {
        dest: u16,
    },
    Pause {
        dest: u16,
    },
    Step {
        dest: u16,
    },
    Stop {
        dest: u16,
    },
    GetExecutionState {
        dest: u16,
    },
    BreakpointSet {
        dest: u16,
        pc: u16,
    },
    BreakpointClear {
        dest: u16,
        pc: u16,
    },
    BreakpointClearAll {
        dest: u16,
    },
    GetVariables {
        dest: u16,
        start: u16,
        length: u16,
    },
    SetVariables {
        dest: u16,
        start: u16,
        values: Words<'a>,
    },
    WriteBytecode {
        dest: u16,
    },
    Reboot {
        dest: u16,
    },
    SuspendToRam {
        dest: u16,
    },
    GetNodeDescription {
        dest: u16,
        version: u16,
    },
    ListNodes {
        version: u16,
    },
    GetDeviceInfo {
        dest: u16,
        info: u16,
    },
    SetDeviceInfo {
        dest: u16,
        info: u16,
        data: &'a [u8],
    },
    GetChangedVariables {
        dest: u16,
    },
    /// `fragment`: −2 everything, −1 header only, k ≥ 0 item k.
    GetNodeDescriptionFragment {
        dest: u16,
        version: u16,
        fragment: i16,
    },
}

impl Message<'_> {
    /// The message type.
    pub fn kind(&self) -> u16 {
        use Message as M;
        match self {
            M::UserEvent { id, .. } => *id,
            M::BootloaderReset { .. } => kind::BOOTLOADER_RESET,
            M::BootloaderReadPage { .. } => kind::BOOTLOADER_READ_PAGE,
            M::BootloaderWritePage { .. } => kind::BOOTLOADER_WRITE_PAGE,
            M::BootloaderPageDataWrite { .. } => kind::BOOTLOADER_PAGE_DATA_WRITE,
            M::BootloaderDescription { .. } => kind::BOOTLOADER_DESCRIPTION,
            M::BootloaderPageDataRead { .. } => kind::BOOTLOADER_PAGE_DATA_READ,
            M::BootloaderAck { .. } => kind::BOOTLOADER_ACK,
            M::Description { .. } => kind::DESCRIPTION,
            M::NamedVariableDescription { .. } => kind::NAMED_VARIABLE_DESCRIPTION,
            M::LocalEventDescription { .. } => kind::LOCAL_EVENT_DESCRIPTION,
            M::NativeFunctionDescription { .. } => kind::NATIVE_FUNCTION_DESCRIPTION,
            M::Disconnected => kind::DISCONNECTED,
            M::Variables { .. } => kind::VARIABLES,
            M::ArrayAccessOutOfBounds { .. } => kind::ARRAY_ACCESS_OUT_OF_BOUNDS,
            M::DivisionByZero { .. } => kind::DIVISION_BY_ZERO,
            M::EventExecutionKilled { .. } => kind::EVENT_EXECUTION_KILLED,
            M::NodeSpecificError { .. } => kind::NODE_SPECIFIC_ERROR,
            M::ExecutionStateChanged { .. } => kind::EXECUTION_STATE_CHANGED,
            M::BreakpointSetResult { .. } => kind::BREAKPOINT_SET_RESULT,
            M::NodePresent { .. } => kind::NODE_PRESENT,
            M::DeviceInfo { .. } => kind::DEVICE_INFO,
            M::ChangedVariables { .. } => kind::CHANGED_VARIABLES,
            M::GetDescription { .. } => kind::GET_DESCRIPTION,
            M::SetBytecode { .. } => kind::SET_BYTECODE,
            M::Reset { .. } => kind::RESET,
            M::Run { .. } => kind::RUN,
            M::Pause { .. } => kind::PAUSE,
            M::Step { .. } => kind::STEP,
            M::Stop { .. } => kind::STOP,
            M::GetExecutionState { .. } => kind::GET_EXECUTION_STATE,
            M::BreakpointSet { .. } => kind::BREAKPOINT_SET,
            M::BreakpointClear { .. } => kind::BREAKPOINT_CLEAR,
            M::BreakpointClearAll { .. } => kind::BREAKPOINT_CLEAR_ALL,
            M::GetVariables { .. } => kind::GET_VARIABLES,
            M::SetVariables { .. } => kind::SET_VARIABLES,
            M::WriteBytecode { .. } => kind::WRITE_BYTECODE,
            M::Reboot { .. } => kind::REBOOT,
            M::SuspendToRam { .. } => kind::SUSPEND_TO_RAM,
            M::GetNodeDescription { .. } => kind::GET_NODE_DESCRIPTION,
            M::ListNodes { .. } => kind::LIST_NODES,
            M::GetDeviceInfo { .. } => kind::GET_DEVICE_INFO,
            M::SetDeviceInfo { .. } => kind::SET_DEVICE_INFO,
            M::GetChangedVariables { .. } => kind::GET_CHANGED_VARIABLES,
            M::GetNodeDescriptionFragment { .. } => kind::GET_NODE_DESCRIPTION_FRAGMENT,
        }
    }

    /// Destination node id of a host→node command, if the message has one.
    pub fn dest(&self) -> Option<u16> {
        use Message as M;
        match *self {
            M::BootloaderReset { dest }
            | M::BootloaderReadPage { dest, .. }
            | M::BootloaderWritePage { dest, .. }
            | M::BootloaderPageDataWrite { dest, .. }
            | M::SetBytecode { dest, .. }
            | M::Reset { dest }
            | M::Run { dest }
            | M::Pause { dest }
            | M::Step { dest }
            | M::Stop { dest }
            | M::GetExecutionState { dest }
            | M::BreakpointSet { dest, .. }
            | M::BreakpointClear { dest, .. }
            | M::BreakpointClearAll { dest }
            | M::GetVariables { dest, .. }
            | M::SetVariables { dest, .. }
            | M::WriteBytecode { dest }
            | M::Reboot { dest }
            | M::SuspendToRam { dest }
            | M::GetNodeDescription { dest, .. }
            | M::GetDeviceInfo { dest, .. }
            | M::SetDeviceInfo { dest, .. }
            | M::GetChangedVariables { dest }
            | M::GetNodeDescriptionFragment { dest, .. } => Some(dest),
            _ => None,
        }
    }
}
