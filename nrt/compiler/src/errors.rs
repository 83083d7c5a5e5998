//! Compilation errors: a position (1-based line and column, as the official compiler reports
//! them) and a message with the official wording.

use std::fmt;

/// A position in the source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pos {
    /// 0-based row.
    pub row: u32,
    /// 0-based column (the official compiler's count, tabs included).
    pub col: u32,
    /// Whether the position is known.
    pub valid: bool,
}

impl Pos {
    /// A known position.
    pub const fn at(row: u32, col: u32) -> Pos {
        Pos {
            row,
            col,
            valid: true,
        }
    }
}

/// A compilation error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileError {
    /// 1-based line (0 when the error has no position, e.g. "script too big").
    pub line: u32,
    /// 1-based column (0 when the error has no position).
    pub col: u32,
    /// The message, worded as the official compiler words it.
    pub message: String,
}

impl CompileError {
    /// An error at `pos`.
    pub fn at(pos: Pos, message: impl Into<String>) -> CompileError {
        if pos.valid {
            CompileError {
                line: pos.row + 1,
                col: pos.col.wrapping_add(1),
                message: message.into(),
            }
        } else {
            CompileError {
                line: 0,
                col: 0,
                message: message.into(),
            }
        }
    }
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}: {}", self.line, self.col, self.message)
        } else {
            write!(f, "{}", self.message)
        }
    }
}

impl std::error::Error for CompileError {}

/// Result of a compilation step.
pub type CResult<T> = Result<T, CompileError>;

/// Builds a `CompileError` at `pos` with a formatted message.
macro_rules! err {
    ($pos:expr, $($arg:tt)*) => {
        $crate::errors::CompileError::at($pos, format!($($arg)*))
    };
}
pub(crate) use err;
