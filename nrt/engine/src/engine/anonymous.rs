//! The size check of anonymous events (`aseba/anonymous_events`, ROS → Aseba), against the
//! scripts thymio-rt loaded, as named events are checked (`Engine::emit_script_event`). Both
//! ROS front ends send them through [`Engine::emit_anonymous`], which checks first, and report a
//! refusal (the ROS 2 node's log, ROS 1's error log).
//!
//! The rule: an event id that a loaded script declares must have that script's size (every
//! such script: a node that would receive a wrong-size event is named); an id no loaded script
//! declares is refused when every node on the network runs a script thymio-rt loaded (no node
//! can have declared it); with a node whose script thymio-rt does not know (loaded by Studio
//! through the switch, or none), such an event passes unchecked: nothing says it is wrong.

use super::{Engine, EngineError};

impl Engine {
    /// Checks anonymous event `event` with `args` against the loaded scripts (see the module).
    pub(super) fn check_anonymous(&self, event: u16, args: &[i16]) -> Result<(), EngineError> {
        let (mut any_node, mut unknown_script, mut found) = (false, false, false);
        let mut declared = 0;
        for n in self.net.nodes() {
            any_node = true;
            let Some(script) = n.script.as_ref() else {
                unknown_script = true;
                continue;
            };
            declared = declared.max(script.events.len());
            let Some((name, size)) = script.events.get(usize::from(event)) else {
                continue;
            };
            found = true;
            if usize::from(*size) != args.len() {
                return Err(EngineError::AnonymousEventSize {
                    event,
                    name: name.clone(),
                    node: n.id,
                    expected: usize::from(*size),
                    got: args.len(),
                });
            }
        }
        if found || unknown_script || !any_node {
            return Ok(());
        }
        Err(EngineError::AnonymousEventUnknown { event, declared })
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{described_node, engine, up, written};
    use super::*;
    use crate::network::LoadedScript;
    use handoff::NodeId;
    use std::time::Instant;

    #[test]
    fn anonymous_events_are_size_checked_against_the_loaded_scripts() {
        let (mut e, mut rt) = engine(0);
        up(&mut e, &mut rt);
        described_node(&mut e, &mut rt);
        written(&mut rt);
        // no script known: nothing to check against, it goes out
        e.emit_anonymous(0, &[1, 2, 3]).unwrap();
        assert_eq!(written(&mut rt).len(), 1);
        let script = LoadedScript {
            events: vec![("ping".into(), 2), ("pong".into(), 0)],
            bytecode: vec![1],
            ..Default::default()
        };
        e.network_mut().load_script(NodeId(3), script).unwrap();
        e.poll(Instant::now());
        written(&mut rt);
        // the wrong size of event 0 (issue 23: it went through) and an undeclared id
        let err = e.emit_anonymous(0, &[1]).unwrap_err();
        assert_eq!(
            err,
            EngineError::AnonymousEventSize {
                event: 0,
                name: "ping".into(),
                node: NodeId(3),
                expected: 2,
                got: 1
            }
        );
        assert!(err.to_string().contains("size 2"), "{err}");
        assert_eq!(
            e.emit_anonymous(7, &[]),
            Err(EngineError::AnonymousEventUnknown {
                event: 7,
                declared: 2
            })
        );
        assert!(written(&mut rt).is_empty(), "a refused event was sent");
        // the declared sizes go out
        e.emit_anonymous(0, &[1, 2]).unwrap();
        e.emit_anonymous(1, &[]).unwrap();
        assert_eq!(written(&mut rt).len(), 2);
    }
}
