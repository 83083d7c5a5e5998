//! Tokenizer of the Aseba language, with the positions the official compiler reports (its
//! column counting, quirks included: a tab counts 4 inside comments, and the line after a
//! `#` comment starts at column 1).

use super::errors::{err, CResult, Pos};

/// Token kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Tok {
    End,
    When,
    Emit,
    HiddenEmit,
    For,
    In,
    Step,
    While,
    Do,
    If,
    Then,
    Else,
    Elseif,
    EndKw,
    Var,
    Const,
    Call,
    Sub,
    Callsub,
    Onevent,
    Abs,
    Return,
    Ident,
    Int,
    ParOpen,
    ParClose,
    BracketOpen,
    BracketClose,
    Colon,
    Comma,
    Assign,
    Or,
    And,
    Not,
    Equal,
    NotEqual,
    Bigger,
    BiggerEqual,
    Smaller,
    SmallerEqual,
    Add,
    Neg,
    Mult,
    Div,
    Mod,
    ShiftLeft,
    ShiftRight,
    BitOr,
    BitXor,
    BitAnd,
    BitNot,
    AddEqual,
    NegEqual,
    MultEqual,
    DivEqual,
    ModEqual,
    ShiftLeftEqual,
    ShiftRightEqual,
    BitOrEqual,
    BitXorEqual,
    BitAndEqual,
    PlusPlus,
    MinusMinus,
}

impl Tok {
    /// The name the official error messages use.
    pub fn name(self) -> &'static str {
        use Tok::*;
        match self {
            End => "end of stream",
            When => "when keyword",
            Emit => "emit keyword",
            HiddenEmit => "_emit keyword",
            For => "for keyword",
            In => "in keyword",
            Step => "step keyword",
            While => "while keyword",
            Do => "do keyword",
            If => "if keyword",
            Then => "then keyword",
            Else => "else keyword",
            Elseif => "elseif keyword",
            EndKw => "end keyword",
            Var => "var keyword",
            Const => "const keyword",
            Call => "call keyword",
            Sub => "sub keyword",
            Callsub => "callsub keyword",
            Onevent => "onevent keyword",
            Abs => "abs keyword",
            Return => "return keyword",
            Ident => "string",
            Int => "integer",
            ParOpen => "( (open parenthesis)",
            ParClose => ") (close parenthesis)",
            BracketOpen => "[ (open bracket)",
            BracketClose => "] (close bracket)",
            Colon => ": (colon)",
            Comma => ", (comma)",
            Assign => "= (assignation)",
            Or => "or",
            And => "and",
            Not => "not",
            BitOr => "binary or",
            BitXor => "binary xor",
            BitAnd => "binary and",
            BitNot => "binary not",
            BitOrEqual => "binary or equal",
            BitXorEqual => "binary xor equal",
            BitAndEqual => "binary and equal",
            Equal => "== (equal to)",
            NotEqual => "!= (not equal to)",
            Bigger => "> (bigger than)",
            BiggerEqual => ">= (bigger or equal than)",
            Smaller => "< (smaller than)",
            SmallerEqual => "<= (smaller or equal than)",
            ShiftLeft => "<< (shift left)",
            ShiftRight => ">> (shift right)",
            ShiftLeftEqual => "<<= (shift left equal)",
            ShiftRightEqual => ">>= (shift right equal)",
            Add => "+ (plus)",
            Neg => "- (minus)",
            AddEqual => "+= (plus equal)",
            NegEqual => "-= (minus equal)",
            PlusPlus => "++ (plus plus)",
            MinusMinus => "-- (minus minus)",
            Mult => "* (time)",
            Div => "/ (divide)",
            Mod => "modulo",
            MultEqual => "*= (time equal)",
            DivEqual => "/= (divide equal)",
            ModEqual => "modulo equal",
        }
    }
}

/// A token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// Kind.
    pub tok: Tok,
    /// Identifier text or literal text.
    pub text: String,
    /// Integer value of a literal.
    pub value: i32,
    /// Position.
    pub pos: Pos,
}

impl Token {
    fn new(tok: Tok, pos: Pos) -> Token {
        Token {
            tok,
            text: String::new(),
            value: 0,
            pos,
        }
    }

    /// `"<row>:<col> <name>[ : value]"` as the official compiler prints tokens in messages.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "{:>4}:{:<4} {}",
            self.pos.row + 1,
            self.pos.col as i32,
            self.tok.name()
        );
        match self.tok {
            Tok::Int => s.push_str(&format!(" : {}", self.value)),
            Tok::Ident => s.push_str(&format!(" : {}", self.text)),
            _ => {}
        }
        s
    }
}

const TAB: i64 = 4;

struct Cursor<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    row: u32,
    /// The official compiler's column counter (may be -1 between lines).
    col: i64,
}

impl Cursor<'_> {
    fn get(&mut self) -> Option<char> {
        self.chars.next()
    }
    fn peek(&mut self) -> Option<char> {
        self.chars.peek().copied()
    }
    fn pos(&self) -> Pos {
        Pos::at(self.row, self.col as u32)
    }
}

fn is_alnum(c: char) -> bool {
    c.is_alphanumeric()
}

/// Splits `source` into tokens (ending with `Tok::End`).
pub fn tokenize(source: &str) -> CResult<Vec<Token>> {
    let mut out = Vec::new();
    let mut s = Cursor {
        chars: source.chars().peekable(),
        row: 0,
        col: -1,
    };
    let two = |s: &mut Cursor<'_>, out: &mut Vec<Token>, next: char, yes: Tok, pos: Pos| -> bool {
        if s.peek() == Some(next) {
            out.push(Token::new(yes, pos));
            s.get();
            s.col += 1;
            true
        } else {
            false
        }
    };
    while let Some(c) = s.get() {
        s.col += 1;
        let pos = s.pos();
        match c {
            ' ' | '\t' => {}
            '\n' => {
                s.row += 1;
                s.col = -1;
            }
            '\r' => s.col = -1,
            '(' => out.push(Token::new(Tok::ParOpen, pos)),
            ')' => out.push(Token::new(Tok::ParClose, pos)),
            '[' => out.push(Token::new(Tok::BracketOpen, pos)),
            ']' => out.push(Token::new(Tok::BracketClose, pos)),
            ':' => out.push(Token::new(Tok::Colon, pos)),
            ',' => out.push(Token::new(Tok::Comma, pos)),
            '#' => {
                if s.peek() == Some('*') {
                    let begin = pos;
                    let mut step = 2;
                    let mut c = c;
                    while step > 0 || c != '*' || s.peek() != Some('#') {
                        if step > 0 {
                            step -= 1;
                        }
                        if c == '\t' {
                            s.col += TAB;
                        } else if c == '\n' {
                            s.row += 1;
                            s.col = 0;
                        } else {
                            s.col += 1;
                        }
                        match s.get() {
                            Some(n) => c = n,
                            None => return Err(err!(begin, "Unbalanced comment block")),
                        }
                    }
                    s.get();
                    s.col += 1;
                } else {
                    let mut c = Some(c);
                    while let Some(ch) = c {
                        if ch == '\n' || ch == '\r' {
                            break;
                        }
                        if ch == '\t' {
                            s.col += TAB;
                        } else {
                            s.col += 1;
                        }
                        c = s.get();
                    }
                    match c {
                        Some('\n') => {
                            s.row += 1;
                            s.col = 0;
                        }
                        Some('\r') => s.col = 0,
                        _ => {}
                    }
                }
            }
            '+' => {
                if !two(&mut s, &mut out, '=', Tok::AddEqual, pos)
                    && !two(&mut s, &mut out, '+', Tok::PlusPlus, pos)
                {
                    out.push(Token::new(Tok::Add, pos));
                }
            }
            '-' => {
                if !two(&mut s, &mut out, '=', Tok::NegEqual, pos)
                    && !two(&mut s, &mut out, '-', Tok::MinusMinus, pos)
                {
                    out.push(Token::new(Tok::Neg, pos));
                }
            }
            '*' => {
                if !two(&mut s, &mut out, '=', Tok::MultEqual, pos) {
                    out.push(Token::new(Tok::Mult, pos));
                }
            }
            '/' => {
                if !two(&mut s, &mut out, '=', Tok::DivEqual, pos) {
                    out.push(Token::new(Tok::Div, pos));
                }
            }
            '%' => {
                if !two(&mut s, &mut out, '=', Tok::ModEqual, pos) {
                    out.push(Token::new(Tok::Mod, pos));
                }
            }
            '|' => {
                if !two(&mut s, &mut out, '=', Tok::BitOrEqual, pos) {
                    out.push(Token::new(Tok::BitOr, pos));
                }
            }
            '^' => {
                if !two(&mut s, &mut out, '=', Tok::BitXorEqual, pos) {
                    out.push(Token::new(Tok::BitXor, pos));
                }
            }
            '&' => {
                if !two(&mut s, &mut out, '=', Tok::BitAndEqual, pos) {
                    out.push(Token::new(Tok::BitAnd, pos));
                }
            }
            '~' => out.push(Token::new(Tok::BitNot, pos)),
            '!' => {
                if !two(&mut s, &mut out, '=', Tok::NotEqual, pos) {
                    return Err(err!(pos, "Syntax error"));
                }
            }
            '=' => {
                if !two(&mut s, &mut out, '=', Tok::Equal, pos) {
                    out.push(Token::new(Tok::Assign, pos));
                }
            }
            '<' => {
                if s.peek() == Some('<') {
                    s.get();
                    s.col += 1;
                    // the official lexer has moved its position to the second character
                    let pos = s.pos();
                    if !two(&mut s, &mut out, '=', Tok::ShiftLeftEqual, pos) {
                        out.push(Token::new(Tok::ShiftLeft, pos));
                    }
                } else if !two(&mut s, &mut out, '=', Tok::SmallerEqual, pos) {
                    out.push(Token::new(Tok::Smaller, pos));
                }
            }
            '>' => {
                if s.peek() == Some('>') {
                    s.get();
                    s.col += 1;
                    // the official lexer has moved its position to the second character
                    let pos = s.pos();
                    if !two(&mut s, &mut out, '=', Tok::ShiftRightEqual, pos) {
                        out.push(Token::new(Tok::ShiftRight, pos));
                    }
                } else if !two(&mut s, &mut out, '=', Tok::BiggerEqual, pos) {
                    out.push(Token::new(Tok::Bigger, pos));
                }
            }
            c => {
                if !is_alnum(c) && c != '_' {
                    return Err(err!(
                        pos,
                        "Identifiers must begin with _ or an alphanumeric character, found unicode character 0x{:x} instead",
                        c as u32
                    ));
                }
                let mut text = String::from(c);
                let mut advance = 0i64;
                while let Some(n) = s.peek() {
                    if is_alnum(n) || n == '_' || n == '.' {
                        text.push(n);
                        s.get();
                        advance += 1;
                    } else {
                        break;
                    }
                }
                out.push(word(text, pos)?);
                s.col += advance;
            }
        }
    }
    out.push(Token::new(Tok::End, s.pos()));
    Ok(out)
}

fn word(text: String, pos: Pos) -> CResult<Token> {
    let first = text.chars().next().unwrap_or('_');
    if first.is_ascii_digit() {
        let b: Vec<char> = text.chars().collect();
        let (digits, radix, unsigned) = if b.len() > 1 && b[0] == '0' && !b[1].is_ascii_digit() {
            if b[1] == 'x' {
                if !b[2..].iter().all(|c| c.is_ascii_hexdigit()) {
                    return Err(err!(pos, "Error in hexadecimal number"));
                }
                (&text[2..], 16, true)
            } else if b[1] == 'b' {
                if !b[2..].iter().all(|c| *c == '0' || *c == '1') {
                    return Err(err!(pos, "Error in binary number"));
                }
                (&text[2..], 2, true)
            } else {
                return Err(err!(pos, "Error in number, invalid base"));
            }
        } else {
            if !b[1..].iter().all(|c| c.is_ascii_digit()) {
                return Err(err!(pos, "Error in number"));
            }
            (text.as_str(), 10, false)
        };
        // wcstol: no digits → 0; saturates at LONG_MAX
        let mut v: i64 = 0;
        for ch in digits.chars() {
            v = v
                .saturating_mul(radix)
                .saturating_add(ch.to_digit(radix as u32).unwrap_or(0) as i64);
        }
        if v >= 65536 {
            return Err(err!(pos, "Integer value {v} out of [-32768;32767] range"));
        }
        if unsigned && v > 32767 {
            v -= 65536;
        }
        return Ok(Token {
            tok: Tok::Int,
            text,
            value: v as i32,
            pos,
        });
    }
    let tok = match text.as_str() {
        "when" => Tok::When,
        "emit" => Tok::Emit,
        "_emit" => Tok::HiddenEmit,
        "for" => Tok::For,
        "in" => Tok::In,
        "step" => Tok::Step,
        "while" => Tok::While,
        "do" => Tok::Do,
        "if" => Tok::If,
        "then" => Tok::Then,
        "else" => Tok::Else,
        "elseif" => Tok::Elseif,
        "end" => Tok::EndKw,
        "var" => Tok::Var,
        "const" => Tok::Const,
        "call" => Tok::Call,
        "sub" => Tok::Sub,
        "callsub" => Tok::Callsub,
        "onevent" => Tok::Onevent,
        "abs" => Tok::Abs,
        "return" => Tok::Return,
        "or" => Tok::Or,
        "and" => Tok::And,
        "not" => Tok::Not,
        _ => {
            return Ok(Token {
                tok: Tok::Ident,
                text,
                value: 0,
                pos,
            })
        }
    };
    Ok(Token::new(tok, pos))
}

/// Whether a word is a keyword of the language.
///
/// ```
/// assert!(nrt_compiler::is_keyword("onevent"));
/// assert!(!nrt_compiler::is_keyword("motor"));
/// ```
pub fn is_keyword(s: &str) -> bool {
    matches!(word(s.to_owned(), Pos::default()).map(|t| t.tok), Ok(t) if t != Tok::Ident && t != Tok::Int)
}
