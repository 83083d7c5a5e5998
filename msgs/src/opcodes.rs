//! Aseba bytecode: opcodes, operators, execution flags (aseba.md §3.3–3.4).

/// Opcode in bits 15–12 of an instruction word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Opcode {
    /// End of an event handler.
    Stop = 0x0,
    /// Push a sign-extended 12-bit immediate.
    SmallImmediate = 0x1,
    /// Push the next word.
    LargeImmediate = 0x2,
    /// Push `variables[a]`.
    Load = 0x3,
    /// `variables[a] = pop`.
    Store = 0x4,
    /// Bounds-checked indexed load (2 words: address, size).
    LoadIndirect = 0x5,
    /// Bounds-checked indexed store (2 words: address, size).
    StoreIndirect = 0x6,
    /// Unary operator on the top of the stack.
    UnaryArithmetic = 0x7,
    /// Binary operator on the two top values.
    BinaryArithmetic = 0x8,
    /// Relative jump by a signed 12-bit displacement.
    Jump = 0x9,
    /// Compare-and-branch (2 words), with `when` edge bits.
    ConditionalBranch = 0xA,
    /// Emit a user event (3 words: id, start, length).
    Emit = 0xB,
    /// Call a native function.
    NativeCall = 0xC,
    /// Call a subroutine at an absolute 12-bit address.
    SubCall = 0xD,
    /// Return from a subroutine.
    SubRet = 0xE,
}

impl Opcode {
    /// Decodes the opcode of an instruction word; `None` for the unknown opcode 0xF.
    pub const fn of(word: u16) -> Option<Opcode> {
        Some(match word >> 12 {
            0x0 => Opcode::Stop,
            0x1 => Opcode::SmallImmediate,
            0x2 => Opcode::LargeImmediate,
            0x3 => Opcode::Load,
            0x4 => Opcode::Store,
            0x5 => Opcode::LoadIndirect,
            0x6 => Opcode::StoreIndirect,
            0x7 => Opcode::UnaryArithmetic,
            0x8 => Opcode::BinaryArithmetic,
            0x9 => Opcode::Jump,
            0xA => Opcode::ConditionalBranch,
            0xB => Opcode::Emit,
            0xC => Opcode::NativeCall,
            0xD => Opcode::SubCall,
            0xE => Opcode::SubRet,
            _ => return None,
        })
    }

    /// Number of words the instruction occupies.
    pub const fn words(self) -> usize {
        match self {
            Opcode::LargeImmediate
            | Opcode::LoadIndirect
            | Opcode::StoreIndirect
            | Opcode::ConditionalBranch => 2,
            Opcode::Emit => 3,
            _ => 1,
        }
    }

    /// Builds an instruction word from this opcode and a 12-bit operand (truncated).
    pub const fn with(self, operand: u16) -> u16 {
        ((self as u16) << 12) | (operand & 0x0FFF)
    }
}

/// Binary operators (operand of BINARY_ARITHMETIC, low byte of CONDITIONAL_BRANCH).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum BinaryOp {
    /// `<<`
    ShiftLeft = 0,
    /// `>>` (arithmetic)
    ShiftRight = 1,
    /// `+`
    Add = 2,
    /// `-`
    Sub = 3,
    /// `*`
    Mult = 4,
    /// `/` (truncating)
    Div = 5,
    /// `%` (sign of dividend)
    Mod = 6,
    /// `|`
    BitOr = 7,
    /// `^`
    BitXor = 8,
    /// `&`
    BitAnd = 9,
    /// `==`
    Equal = 10,
    /// `!=`
    NotEqual = 11,
    /// `>`
    BiggerThan = 12,
    /// `>=`
    BiggerEqualThan = 13,
    /// `<`
    SmallerThan = 14,
    /// `<=`
    SmallerEqualThan = 15,
    /// logical `or`
    Or = 16,
    /// logical `and`
    And = 17,
}

impl BinaryOp {
    /// All operators, indexed by code.
    pub const ALL: [BinaryOp; 18] = [
        BinaryOp::ShiftLeft,
        BinaryOp::ShiftRight,
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mult,
        BinaryOp::Div,
        BinaryOp::Mod,
        BinaryOp::BitOr,
        BinaryOp::BitXor,
        BinaryOp::BitAnd,
        BinaryOp::Equal,
        BinaryOp::NotEqual,
        BinaryOp::BiggerThan,
        BinaryOp::BiggerEqualThan,
        BinaryOp::SmallerThan,
        BinaryOp::SmallerEqualThan,
        BinaryOp::Or,
        BinaryOp::And,
    ];

    /// Decodes an operator code.
    pub fn from_code(code: u16) -> Option<BinaryOp> {
        Self::ALL.get(code as usize).copied()
    }

    /// Source-level spelling.
    pub const fn symbol(self) -> &'static str {
        match self {
            BinaryOp::ShiftLeft => "<<",
            BinaryOp::ShiftRight => ">>",
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mult => "*",
            BinaryOp::Div => "/",
            BinaryOp::Mod => "%",
            BinaryOp::BitOr => "|",
            BinaryOp::BitXor => "^",
            BinaryOp::BitAnd => "&",
            BinaryOp::Equal => "==",
            BinaryOp::NotEqual => "!=",
            BinaryOp::BiggerThan => ">",
            BinaryOp::BiggerEqualThan => ">=",
            BinaryOp::SmallerThan => "<",
            BinaryOp::SmallerEqualThan => "<=",
            BinaryOp::Or => "or",
            BinaryOp::And => "and",
        }
    }
}

/// Unary operators (operand of UNARY_ARITHMETIC). `Not` is parse-only, never emitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum UnaryOp {
    /// `-x`
    Neg = 0,
    /// `abs x`
    Abs = 1,
    /// `~x`
    BitNot = 2,
    /// `not x` (never in bytecode)
    Not = 3,
}

impl UnaryOp {
    /// Decodes an operator code.
    pub fn from_code(code: u16) -> Option<UnaryOp> {
        Some(match code {
            0 => UnaryOp::Neg,
            1 => UnaryOp::Abs,
            2 => UnaryOp::BitNot,
            3 => UnaryOp::Not,
            _ => return None,
        })
    }
}

/// CONDITIONAL_BRANCH bit 8: the branch is a `when` (edge-triggered).
pub const BRANCH_IS_WHEN: u16 = 1 << 8;
/// CONDITIONAL_BRANCH bit 9: the condition was true at the last evaluation.
pub const BRANCH_WAS_TRUE: u16 = 1 << 9;

/// VM execution flag: an event handler is executing.
pub const FLAG_EVENT_ACTIVE: u16 = 0x1;
/// VM execution flag: paused / step-by-step.
pub const FLAG_STEP_BY_STEP: u16 = 0x2;
/// VM execution flag: inside the run loop.
pub const FLAG_EVENT_RUNNING: u16 = 0x4;

/// Maximum number of breakpoints of a VM.
pub const MAX_BREAKPOINTS: usize = 16;
