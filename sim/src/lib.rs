//! Aseba VM and the simulated Thymio-II, with its servers.

pub mod vm;
