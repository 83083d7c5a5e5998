//! thymio-rt wiring: command line, configuration and assembly of the RT and NRT domains.

pub mod cli;
pub mod config;
pub mod embedded;
pub mod privileges;
pub mod runtime;
pub mod thread_caps;
