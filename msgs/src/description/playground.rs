//! Built-in description of the simulated Thymio-II of Aseba Playground (aseba.md §4.7).
use super::TargetDescription;

/// The Aseba Playground Thymio-II description (30 variables, 17 local events, 52 natives).
pub fn playground_thymio() -> TargetDescription {
    TargetDescription::new("thymio-II", 5, 1534, 32, 586)
}
