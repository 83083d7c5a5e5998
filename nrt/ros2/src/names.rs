//! ROS names of the generic Aseba bridge, relative to the bridge node's namespace as asebaros makes them:
//! `aseba/nodes`, `aseba/get_nodes`, `aseba/load_script`, `aseba/anonymous_events`, and per bridged node
//! `<ns>/aseba/{description,get_description,get_variable,set_variable}` and `<ns>/aseba/events/<event>`.
//!
//! Aseba identifiers may hold characters a ROS name cannot (`.` in `button.center`, a leading digit): such a name
//! is refused with [`NameError`] rather than silently rewritten, so that a topic name always is the event name.

/// `aseba/nodes` (NodeList, transient_local).
pub const NODES: &str = "aseba/nodes";
/// `aseba/get_nodes` (GetNodeList).
pub const GET_NODES: &str = "aseba/get_nodes";
/// `aseba/load_script` (LoadScript).
pub const LOAD_SCRIPT: &str = "aseba/load_script";
/// `aseba/anonymous_events` (AnonymousEvent, both directions).
pub const ANONYMOUS_EVENTS: &str = "aseba/anonymous_events";
/// `/diagnostics` (absolute, as diagnostic_updater publishes it).
pub const DIAGNOSTICS: &str = "/diagnostics";

/// A name that cannot be part of a ROS topic or service name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "\"{0}\" cannot be part of a ROS name (letters, digits and single underscores only, not starting with a digit)"
)]
pub struct NameError(pub String);

/// Whether `token` can be one `/`-separated token of a ROS name: `[A-Za-z_][A-Za-z0-9_]*` without `__`.
pub fn is_valid_token(token: &str) -> bool {
    let mut chars = token.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    (first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !token.contains("__")
}

/// Checks a relative namespace (`""`, `thymio`, `robots/thymio_1`).
pub fn check_namespace(namespace: &str) -> Result<(), NameError> {
    if namespace.is_empty() || namespace.split('/').all(is_valid_token) {
        Ok(())
    } else {
        Err(NameError(namespace.to_owned()))
    }
}

/// `<ns>/aseba/<leaf>` relative to the bridge node (`aseba/<leaf>` without a namespace).
pub fn node_scoped(namespace: &str, leaf: &str) -> Result<String, NameError> {
    check_namespace(namespace)?;
    Ok(if namespace.is_empty() {
        format!("aseba/{leaf}")
    } else {
        format!("{namespace}/aseba/{leaf}")
    })
}

/// `<ns>/aseba/events/<event>`.
pub fn event_topic(namespace: &str, event: &str) -> Result<String, NameError> {
    if !is_valid_token(event) {
        return Err(NameError(event.to_owned()));
    }
    node_scoped(namespace, &format!("events/{event}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_follow_the_ros_rules() {
        for ok in ["a", "set_speed", "_x", "thymio_12", "A1"] {
            assert!(is_valid_token(ok), "{ok}");
        }
        for bad in ["", "1a", "button.center", "a__b", "a-b", "a/b", "é", " a"] {
            assert!(!is_valid_token(bad), "{bad}");
        }
    }

    #[test]
    fn scoped_names() {
        assert_eq!(node_scoped("", "description").unwrap(), "aseba/description");
        assert_eq!(
            node_scoped("thymio_3", "get_variable").unwrap(),
            "thymio_3/aseba/get_variable"
        );
        assert_eq!(
            node_scoped("lab/red", "set_variable").unwrap(),
            "lab/red/aseba/set_variable"
        );
        assert_eq!(
            event_topic("red", "set_speed").unwrap(),
            "red/aseba/events/set_speed"
        );
        assert_eq!(event_topic("", "ping").unwrap(), "aseba/events/ping");
    }

    #[test]
    fn bad_names_are_refused_with_the_culprit() {
        assert_eq!(
            event_topic("", "button.center").unwrap_err(),
            NameError("button.center".into())
        );
        assert_eq!(
            node_scoped("2fast", "description").unwrap_err(),
            NameError("2fast".into())
        );
        assert_eq!(
            event_topic("a//b", "x").unwrap_err(),
            NameError("a//b".into())
        );
        assert!(event_topic("ok", "")
            .unwrap_err()
            .to_string()
            .contains("cannot be part of a ROS name"));
    }
}
