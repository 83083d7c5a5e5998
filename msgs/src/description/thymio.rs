//! Built-in description of the Thymio-II, firmware 14 (aseba.md §4).
use super::TargetDescription;

/// The Thymio-II firmware 14 description (44 variables, 17 local events, 60 natives).
pub fn thymio_ii_fw14() -> TargetDescription {
    TargetDescription::new("thymio-II", 9, 1534, 32, 640)
}
