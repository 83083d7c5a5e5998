//! Typed Aseba messages: decoding from borrowed payload bytes and encoding into frames, both
//! without allocation.

use super::kind;
use super::views::{AsebaStr, ChangedBlocks, NativeParams, Words};
use super::{HEADER_LEN, MAX_PAYLOAD};

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

/// Why a payload could not be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The message type is not part of the protocol.
    #[error("unknown message type 0x{0:04X}")]
    UnknownType(u16),
    /// The payload ends before the message is complete.
    #[error("{} payload truncated ({len} bytes)", kind::name(*kind))]
    Truncated {
        /// Message type.
        kind: u16,
        /// Payload length.
        len: usize,
    },
    /// The payload has bytes the message does not use.
    #[error("{} payload has {extra} unexpected trailing bytes", kind::name(*kind))]
    TrailingBytes {
        /// Message type.
        kind: u16,
        /// Unused bytes.
        extra: usize,
    },
    /// A word array has an odd number of bytes.
    #[error("{} payload has an odd length ({len} bytes)", kind::name(*kind))]
    OddLength {
        /// Message type.
        kind: u16,
        /// Payload length.
        len: usize,
    },
    /// The payload is longer than the protocol allows.
    #[error("payload of {0} bytes exceeds {MAX_PAYLOAD}")]
    Oversize(usize),
}

/// Why a message could not be encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    /// The payload would exceed 516 bytes.
    #[error("payload of {0} bytes exceeds {MAX_PAYLOAD}")]
    TooLarge(usize),
    /// A string is longer than 255 bytes.
    #[error("string of {0} bytes exceeds 255")]
    StringTooLong(usize),
    /// A user event id is not below 0x8000.
    #[error("user event id 0x{0:04X} is not below 0x8000")]
    BadEventId(u16),
    /// The output buffer is too small.
    #[error("output buffer of {have} bytes, {need} needed")]
    BufferTooSmall {
        /// Bytes needed.
        need: usize,
        /// Bytes available.
        have: usize,
    },
}

struct Reader<'a> {
    kind: u16,
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn truncated(&self) -> DecodeError {
        DecodeError::Truncated {
            kind: self.kind,
            len: self.bytes.len(),
        }
    }
    fn u8(&mut self) -> Result<u8, DecodeError> {
        let v = *self.bytes.get(self.pos).ok_or_else(|| self.truncated())?;
        self.pos += 1;
        Ok(v)
    }
    fn u16(&mut self) -> Result<u16, DecodeError> {
        let b = self
            .bytes
            .get(self.pos..self.pos + 2)
            .ok_or_else(|| self.truncated())?;
        self.pos += 2;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn bytes(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let b = self
            .bytes
            .get(self.pos..self.pos + n)
            .ok_or_else(|| self.truncated())?;
        self.pos += n;
        Ok(b)
    }
    fn string(&mut self) -> Result<AsebaStr<'a>, DecodeError> {
        let n = self.u8()? as usize;
        Ok(AsebaStr::from_bytes(self.bytes(n)?))
    }
    fn rest(&mut self) -> &'a [u8] {
        let r = &self.bytes[self.pos..];
        self.pos = self.bytes.len();
        r
    }
    fn words(&mut self) -> Result<Words<'a>, DecodeError> {
        let r = self.rest();
        if !r.len().is_multiple_of(2) {
            return Err(DecodeError::OddLength {
                kind: self.kind,
                len: self.bytes.len(),
            });
        }
        Ok(Words::from_le_bytes(r))
    }
    fn finish<T>(&self, v: T) -> Result<T, DecodeError> {
        match self.bytes.len() - self.pos {
            0 => Ok(v),
            extra => Err(DecodeError::TrailingBytes {
                kind: self.kind,
                extra,
            }),
        }
    }
}

impl<'a> Message<'a> {
    /// Decodes the payload of a message of type `kind`. Never allocates; rejects payloads that
    /// the message does not consume exactly.
    pub fn decode(kind: u16, payload: &'a [u8]) -> Result<Message<'a>, DecodeError> {
        use Message as M;
        if payload.len() > MAX_PAYLOAD {
            return Err(DecodeError::Oversize(payload.len()));
        }
        let mut r = Reader {
            kind,
            bytes: payload,
            pos: 0,
        };
        if kind::is_user_event(kind) {
            let args = r.words()?;
            return Ok(M::UserEvent { id: kind, args });
        }
        let m = match kind {
            kind::BOOTLOADER_RESET => M::BootloaderReset { dest: r.u16()? },
            kind::BOOTLOADER_READ_PAGE => M::BootloaderReadPage {
                dest: r.u16()?,
                page: r.u16()?,
            },
            kind::BOOTLOADER_WRITE_PAGE => M::BootloaderWritePage {
                dest: r.u16()?,
                page: r.u16()?,
            },
            kind::BOOTLOADER_PAGE_DATA_WRITE => {
                let dest = r.u16()?;
                let b = r.bytes(4)?;
                M::BootloaderPageDataWrite {
                    dest,
                    data: [b[0], b[1], b[2], b[3]],
                }
            }
            kind::BOOTLOADER_DESCRIPTION => M::BootloaderDescription {
                page_size: r.u16()?,
                pages_start: r.u16()?,
                pages_count: r.u16()?,
            },
            kind::BOOTLOADER_PAGE_DATA_READ => {
                let b = r.bytes(4)?;
                M::BootloaderPageDataRead {
                    data: [b[0], b[1], b[2], b[3]],
                }
            }
            kind::BOOTLOADER_ACK => {
                let error_code = r.u16()?;
                let error_address = if error_code == 2 {
                    Some(r.u16()?)
                } else {
                    None
                };
                M::BootloaderAck {
                    error_code,
                    error_address,
                }
            }
            kind::DESCRIPTION => M::Description {
                name: r.string()?,
                protocol_version: r.u16()?,
                bytecode_size: r.u16()?,
                stack_size: r.u16()?,
                variables_size: r.u16()?,
                named_variables: r.u16()?,
                local_events: r.u16()?,
                native_functions: r.u16()?,
            },
            kind::NAMED_VARIABLE_DESCRIPTION => M::NamedVariableDescription {
                size: r.u16()?,
                name: r.string()?,
            },
            kind::LOCAL_EVENT_DESCRIPTION => M::LocalEventDescription {
                name: r.string()?,
                description: r.string()?,
            },
            kind::NATIVE_FUNCTION_DESCRIPTION => {
                let name = r.string()?;
                let description = r.string()?;
                let count = r.u16()?;
                let (params, used) =
                    NativeParams::parse(count, &payload[r.pos..]).ok_or_else(|| r.truncated())?;
                r.pos += used;
                M::NativeFunctionDescription {
                    name,
                    description,
                    params,
                }
            }
            kind::DISCONNECTED => M::Disconnected,
            kind::VARIABLES => M::Variables {
                start: r.u16()?,
                values: r.words()?,
            },
            kind::ARRAY_ACCESS_OUT_OF_BOUNDS => {
                let pc = r.u16()?;
                let size_index = if payload.len() == 2 {
                    None
                } else {
                    Some((r.u16()?, r.u16()?))
                };
                M::ArrayAccessOutOfBounds { pc, size_index }
            }
            kind::DIVISION_BY_ZERO => M::DivisionByZero { pc: r.u16()? },
            kind::EVENT_EXECUTION_KILLED => M::EventExecutionKilled { pc: r.u16()? },
            kind::NODE_SPECIFIC_ERROR => M::NodeSpecificError {
                pc: r.u16()?,
                message: r.string()?,
            },
            kind::EXECUTION_STATE_CHANGED => M::ExecutionStateChanged {
                pc: r.u16()?,
                flags: r.u16()?,
            },
            kind::BREAKPOINT_SET_RESULT => M::BreakpointSetResult {
                pc: r.u16()?,
                success: r.u16()?,
            },
            kind::NODE_PRESENT => M::NodePresent { version: r.u16()? },
            kind::DEVICE_INFO => {
                let info = r.u8()?;
                let n = r.u8()? as usize;
                M::DeviceInfo {
                    info,
                    data: r.bytes(n)?,
                }
            }
            kind::CHANGED_VARIABLES => {
                let rest = r.rest();
                let blocks = ChangedBlocks::from_bytes(rest).ok_or(DecodeError::Truncated {
                    kind,
                    len: payload.len(),
                })?;
                M::ChangedVariables { blocks }
            }
            kind::GET_DESCRIPTION => M::GetDescription { version: r.u16()? },
            kind::SET_BYTECODE => M::SetBytecode {
                dest: r.u16()?,
                start: r.u16()?,
                words: r.words()?,
            },
            kind::RESET => M::Reset { dest: r.u16()? },
            kind::RUN => M::Run { dest: r.u16()? },
            kind::PAUSE => M::Pause { dest: r.u16()? },
            kind::STEP => M::Step { dest: r.u16()? },
            kind::STOP => M::Stop { dest: r.u16()? },
            kind::GET_EXECUTION_STATE => M::GetExecutionState { dest: r.u16()? },
            kind::BREAKPOINT_SET => M::BreakpointSet {
                dest: r.u16()?,
                pc: r.u16()?,
            },
            kind::BREAKPOINT_CLEAR => M::BreakpointClear {
                dest: r.u16()?,
                pc: r.u16()?,
            },
            kind::BREAKPOINT_CLEAR_ALL => M::BreakpointClearAll { dest: r.u16()? },
            kind::GET_VARIABLES => M::GetVariables {
                dest: r.u16()?,
                start: r.u16()?,
                length: r.u16()?,
            },
            kind::SET_VARIABLES => M::SetVariables {
                dest: r.u16()?,
                start: r.u16()?,
                values: r.words()?,
            },
            kind::WRITE_BYTECODE => M::WriteBytecode { dest: r.u16()? },
            kind::REBOOT => M::Reboot { dest: r.u16()? },
            kind::SUSPEND_TO_RAM => M::SuspendToRam { dest: r.u16()? },
            kind::GET_NODE_DESCRIPTION => M::GetNodeDescription {
                dest: r.u16()?,
                version: r.u16()?,
            },
            kind::LIST_NODES => M::ListNodes { version: r.u16()? },
            kind::GET_DEVICE_INFO => M::GetDeviceInfo {
                dest: r.u16()?,
                info: r.u16()?,
            },
            kind::SET_DEVICE_INFO => {
                let dest = r.u16()?;
                let info = r.u16()?;
                let n = r.u16()? as usize;
                M::SetDeviceInfo {
                    dest,
                    info,
                    data: r.bytes(n)?,
                }
            }
            kind::GET_CHANGED_VARIABLES => M::GetChangedVariables { dest: r.u16()? },
            kind::GET_NODE_DESCRIPTION_FRAGMENT => M::GetNodeDescriptionFragment {
                dest: r.u16()?,
                version: r.u16()?,
                fragment: r.u16()? as i16,
            },
            other => return Err(DecodeError::UnknownType(other)),
        };
        r.finish(m)
    }

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

    /// Encodes the whole frame (header + payload) into `out`; returns its length.
    pub fn encode(&self, source: u16, out: &mut [u8]) -> Result<usize, EncodeError> {
        if let Message::UserEvent { id, .. } = self {
            if !kind::is_user_event(*id) {
                return Err(EncodeError::BadEventId(*id));
            }
        }
        let plen = self.payload_len()?;
        if plen > MAX_PAYLOAD {
            return Err(EncodeError::TooLarge(plen));
        }
        let need = HEADER_LEN + plen;
        if out.len() < need {
            return Err(EncodeError::BufferTooSmall {
                need,
                have: out.len(),
            });
        }
        let header = super::Header {
            len: plen,
            source,
            kind: self.kind(),
        };
        out[..HEADER_LEN].copy_from_slice(&header.to_bytes());
        let mut w = Writer {
            out: &mut out[HEADER_LEN..need],
            pos: 0,
        };
        self.write_payload(&mut w);
        debug_assert_eq!(w.pos, plen);
        Ok(need)
    }

    /// Encodes the whole frame into a new vector (NRT convenience).
    pub fn to_frame(&self, source: u16) -> Result<Vec<u8>, EncodeError> {
        let mut buf = [0u8; super::MAX_FRAME];
        let n = self.encode(source, &mut buf)?;
        Ok(buf[..n].to_vec())
    }

    fn payload_len(&self) -> Result<usize, EncodeError> {
        use Message as M;
        let s = |s: &AsebaStr<'_>| -> Result<usize, EncodeError> {
            if s.len() > 255 {
                Err(EncodeError::StringTooLong(s.len()))
            } else {
                Ok(1 + s.len())
            }
        };
        Ok(match self {
            M::UserEvent { args, .. } => args.byte_len(),
            M::BootloaderReset { .. } => 2,
            M::BootloaderReadPage { .. } | M::BootloaderWritePage { .. } => 4,
            M::BootloaderPageDataWrite { .. } => 6,
            M::BootloaderDescription { .. } => 6,
            M::BootloaderPageDataRead { .. } => 4,
            M::BootloaderAck { error_address, .. } => 2 + 2 * usize::from(error_address.is_some()),
            M::Description { name, .. } => s(name)? + 14,
            M::NamedVariableDescription { name, .. } => 2 + s(name)?,
            M::LocalEventDescription { name, description } => s(name)? + s(description)?,
            M::NativeFunctionDescription {
                name,
                description,
                params,
            } => {
                for (_, n) in params.iter() {
                    s(&n)?;
                }
                s(name)? + s(description)? + 2 + params.byte_len()
            }
            M::Disconnected => 0,
            M::Variables { values, .. } => 2 + values.byte_len(),
            M::ArrayAccessOutOfBounds { size_index, .. } => {
                2 + 4 * usize::from(size_index.is_some())
            }
            M::DivisionByZero { .. } | M::EventExecutionKilled { .. } => 2,
            M::NodeSpecificError { message, .. } => 2 + s(message)?,
            M::ExecutionStateChanged { .. } | M::BreakpointSetResult { .. } => 4,
            M::NodePresent { .. } | M::GetDescription { .. } | M::ListNodes { .. } => 2,
            M::DeviceInfo { data, .. } => {
                if data.len() > 255 {
                    return Err(EncodeError::StringTooLong(data.len()));
                }
                2 + data.len()
            }
            M::ChangedVariables { blocks } => blocks.as_bytes().len(),
            M::SetBytecode { words, .. } => 4 + words.byte_len(),
            M::Reset { .. }
            | M::Run { .. }
            | M::Pause { .. }
            | M::Step { .. }
            | M::Stop { .. }
            | M::GetExecutionState { .. }
            | M::BreakpointClearAll { .. }
            | M::WriteBytecode { .. }
            | M::Reboot { .. }
            | M::SuspendToRam { .. }
            | M::GetChangedVariables { .. } => 2,
            M::BreakpointSet { .. }
            | M::BreakpointClear { .. }
            | M::GetNodeDescription { .. }
            | M::GetDeviceInfo { .. } => 4,
            M::GetVariables { .. } | M::GetNodeDescriptionFragment { .. } => 6,
            M::SetVariables { values, .. } => 4 + values.byte_len(),
            M::SetDeviceInfo { data, .. } => 6 + data.len(),
        })
    }

    fn write_payload(&self, w: &mut Writer<'_>) {
        use Message as M;
        match self {
            M::UserEvent { args, .. } => w.words(args),
            M::BootloaderReset { dest } => w.u16(*dest),
            M::BootloaderReadPage { dest, page } | M::BootloaderWritePage { dest, page } => {
                w.u16s(&[*dest, *page])
            }
            M::BootloaderPageDataWrite { dest, data } => {
                w.u16(*dest);
                w.bytes(data);
            }
            M::BootloaderDescription {
                page_size,
                pages_start,
                pages_count,
            } => w.u16s(&[*page_size, *pages_start, *pages_count]),
            M::BootloaderPageDataRead { data } => w.bytes(data),
            M::BootloaderAck {
                error_code,
                error_address,
            } => {
                w.u16(*error_code);
                if let Some(a) = error_address {
                    w.u16(*a);
                }
            }
            M::Description {
                name,
                protocol_version,
                bytecode_size,
                stack_size,
                variables_size,
                named_variables,
                local_events,
                native_functions,
            } => {
                w.string(name);
                w.u16s(&[
                    *protocol_version,
                    *bytecode_size,
                    *stack_size,
                    *variables_size,
                    *named_variables,
                    *local_events,
                    *native_functions,
                ]);
            }
            M::NamedVariableDescription { size, name } => {
                w.u16(*size);
                w.string(name);
            }
            M::LocalEventDescription { name, description } => {
                w.string(name);
                w.string(description);
            }
            M::NativeFunctionDescription {
                name,
                description,
                params,
            } => {
                w.string(name);
                w.string(description);
                w.u16(params.len() as u16);
                for (size, pname) in params.iter() {
                    w.u16(size as u16);
                    w.string(&pname);
                }
            }
            M::Disconnected => {}
            M::Variables { start, values } => {
                w.u16(*start);
                w.words(values);
            }
            M::ArrayAccessOutOfBounds { pc, size_index } => {
                w.u16(*pc);
                if let Some((size, index)) = size_index {
                    w.u16s(&[*size, *index]);
                }
            }
            M::DivisionByZero { pc } | M::EventExecutionKilled { pc } => w.u16(*pc),
            M::NodeSpecificError { pc, message } => {
                w.u16(*pc);
                w.string(message);
            }
            M::ExecutionStateChanged { pc, flags } => w.u16s(&[*pc, *flags]),
            M::BreakpointSetResult { pc, success } => w.u16s(&[*pc, *success]),
            M::NodePresent { version }
            | M::GetDescription { version }
            | M::ListNodes { version } => w.u16(*version),
            M::DeviceInfo { info, data } => {
                w.bytes(&[*info, data.len() as u8]);
                w.bytes(data);
            }
            M::ChangedVariables { blocks } => w.bytes(blocks.as_bytes()),
            M::SetBytecode { dest, start, words } => {
                w.u16s(&[*dest, *start]);
                w.words(words);
            }
            M::Reset { dest }
            | M::Run { dest }
            | M::Pause { dest }
            | M::Step { dest }
            | M::Stop { dest }
            | M::GetExecutionState { dest }
            | M::BreakpointClearAll { dest }
            | M::WriteBytecode { dest }
            | M::Reboot { dest }
            | M::SuspendToRam { dest }
            | M::GetChangedVariables { dest } => w.u16(*dest),
            M::BreakpointSet { dest, pc } | M::BreakpointClear { dest, pc } => {
                w.u16s(&[*dest, *pc])
            }
            M::GetVariables {
                dest,
                start,
                length,
            } => w.u16s(&[*dest, *start, *length]),
            M::SetVariables {
                dest,
                start,
                values,
            } => {
                w.u16s(&[*dest, *start]);
                w.words(values);
            }
            M::GetNodeDescription { dest, version } => w.u16s(&[*dest, *version]),
            M::GetDeviceInfo { dest, info } => w.u16s(&[*dest, *info]),
            M::SetDeviceInfo { dest, info, data } => {
                w.u16s(&[*dest, *info, data.len() as u16]);
                w.bytes(data);
            }
            M::GetNodeDescriptionFragment {
                dest,
                version,
                fragment,
            } => w.u16s(&[*dest, *version, *fragment as u16]),
        }
    }
}

struct Writer<'o> {
    out: &'o mut [u8],
    pos: usize,
}

impl Writer<'_> {
    fn bytes(&mut self, b: &[u8]) {
        self.out[self.pos..self.pos + b.len()].copy_from_slice(b);
        self.pos += b.len();
    }
    fn u16(&mut self, v: u16) {
        self.bytes(&v.to_le_bytes());
    }
    fn u16s(&mut self, vs: &[u16]) {
        for v in vs {
            self.u16(*v);
        }
    }
    fn string(&mut self, s: &AsebaStr<'_>) {
        self.bytes(&[s.len() as u8]);
        self.bytes(s.as_bytes());
    }
    fn words(&mut self, w: &Words<'_>) {
        let n = w.byte_len();
        w.write_le(&mut self.out[self.pos..self.pos + n]);
        self.pos += n;
    }
}
