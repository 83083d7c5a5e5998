//! How the interface's names are made. Names are relative to the front end's node namespace; a robot's are under
//! its namespace (`nodes.<class>.namespace`, "" for none).

/// `leaf` under the relative namespace `ns` ("" for none): `topic("thymio_0", "odom")` is `thymio_0/odom`.
///
/// ```
/// assert_eq!(nrt_interface::names::topic("", "odom"), "odom");
/// assert_eq!(nrt_interface::names::topic("thymio_0", "odom"), "thymio_0/odom");
/// ```
pub fn topic(ns: &str, leaf: &str) -> String {
    if ns.is_empty() {
        leaf.to_owned()
    } else {
        format!("{ns}/{leaf}")
    }
}
