//! The symbol tables and the temporary-memory allocator of the official compiler (temporaries
//! grow down from the end of variable memory and are freed at each top-level statement), and
//! name look-up with the official "did you mean" hints. Shared by the parser and the passes after it.

use super::errors::{err, CResult, CompileError, Pos};
use super::tree::Node;
use msgs::description::TargetDescription;
use std::collections::{BTreeMap, BTreeSet};

/// Symbol tables and allocator state, shared by the passes after parsing.
pub struct Symbols<'t> {
    pub target: &'t TargetDescription,
    pub events: Vec<(String, i32)>,
    pub constants: BTreeMap<String, i32>,
    pub variables: BTreeMap<String, (u32, u32)>,
    pub functions: BTreeMap<String, u16>,
    pub global_events: BTreeMap<String, u16>,
    pub all_events: BTreeMap<String, u16>,
    pub implemented: BTreeSet<u16>,
    /// Subroutines: name and declaration line.
    pub subroutines: Vec<(String, u32)>,
    pub sub_by_name: BTreeMap<String, u16>,
    /// First free word for variables (`freeVariableIndex`).
    pub free_var: u32,
    /// Words of temporaries at the end of memory (`endVariableIndex`).
    pub end_var: u32,
}

impl<'t> Symbols<'t> {
    /// `buildMaps()`.
    pub fn new(
        target: &'t TargetDescription,
        events: Vec<(String, i32)>,
        constants: &[(String, i32)],
    ) -> Self {
        let mut variables = BTreeMap::new();
        let mut free = 0u32;
        for v in &target.variables {
            variables.insert(v.name.clone(), (free, v.size as u32));
            free += v.size as u32;
        }
        let functions = target
            .natives
            .iter()
            .enumerate()
            .map(|(i, f)| (f.name.clone(), i as u16))
            .collect();
        let mut global_events = BTreeMap::new();
        for (i, (n, _)) in events.iter().enumerate() {
            global_events.insert(n.clone(), i as u16);
        }
        let mut all_events = global_events.clone();
        for (i, e) in target.local_events.iter().enumerate() {
            all_events.insert(e.name.clone(), 0xFFFE - i as u16);
        }
        Symbols {
            target,
            events,
            constants: constants.iter().cloned().collect(),
            variables,
            functions,
            global_events,
            all_events,
            implemented: BTreeSet::new(),
            subroutines: Vec::new(),
            sub_by_name: BTreeMap::new(),
            free_var: free,
            end_var: 0,
        }
    }

    /// `allocateTemporaryMemory`.
    pub fn alloc_temp(&mut self, pos: Pos, size: u32) -> CResult<u32> {
        let end = (self.target.variables_size as u32).wrapping_sub(self.end_var);
        let addr = end.wrapping_sub(size);
        self.end_var = self.end_var.wrapping_add(size);
        if self.free_var as u64 + self.end_var as u64 > self.target.variables_size as u64 {
            return Err(err!(
                pos,
                "Not enough free space to allocate this tempory variable"
            ));
        }
        Ok(addr)
    }

    /// `allocateTemporaryVariable`: `temp = rvalue` with a fresh temporary of its size.
    pub fn temp_assignment(&mut self, pos: Pos, rvalue: Node) -> CResult<Node> {
        let size = rvalue.vector_size()?;
        let addr = self.alloc_temp(pos, size)?;
        let lhs = Node::Memory {
            pos,
            addr,
            size,
            name: "temp".into(),
            index: None,
            write: false,
        };
        Ok(Node::Assign {
            pos,
            lhs: Box::new(lhs),
            rhs: Box::new(rvalue),
        })
    }

    /// Name of an event id, for messages.
    pub fn event_name(&self, id: u16) -> String {
        if let Some((n, _)) = self.events.get(id as usize) {
            return n.clone();
        }
        let local = 0xFFFEi32 - id as i32;
        if local >= 0 && (local as usize) < self.target.local_events.len() {
            return self.target.local_events[local as usize].name.clone();
        }
        "unknown".into()
    }
}

/// Levenshtein distance on characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for ca in a.chars() {
        let mut cur = vec![prev[0] + 1; b.len() + 1];
        for j in 1..=b.len() {
            cur[j] = (prev[j] + 1)
                .min(cur[j - 1] + 1)
                .min(prev[j - 1] + usize::from(ca != b[j - 1]));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// `findInTable`: the value, or "not defined" with the closest name within distance 2.
pub fn find<V: Clone>(
    map: &BTreeMap<String, V>,
    name: &str,
    pos: Pos,
    not_found: impl Fn(&str) -> String,
    guess: impl Fn(&str, &str) -> String,
) -> CResult<V> {
    if let Some(v) = map.get(name) {
        return Ok(v.clone());
    }
    let mut best: Option<(usize, &String)> = None;
    for k in map.keys() {
        let d = edit_distance(name, k);
        if d < 3 && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, k));
        }
    }
    Err(match best {
        Some((_, b)) => CompileError::at(pos, guess(name, b)),
        None => CompileError::at(pos, not_found(name)),
    })
}
