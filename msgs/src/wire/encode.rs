//! Encoding a message into a frame (header + payload), without allocation.

use super::kind;
use super::message::Message;
use super::views::{AsebaStr, Words};
use super::{HEADER_LEN, MAX_PAYLOAD};

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

impl Message<'_> {
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
