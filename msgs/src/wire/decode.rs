//! Decoding a message from its borrowed payload bytes, without allocation.

use super::kind;
use super::message::Message;
use super::views::{AsebaStr, ChangedBlocks, NativeParams, Words};
use super::MAX_PAYLOAD;

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
}
