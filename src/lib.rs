//! thymio-rt wiring: command line, configuration and assembly of the RT and NRT domains; and the driver as a
//! library ([`run`]) for crates that bring RT controllers of their own (docs/control.md "Writing an RT controller").

pub mod cli;
pub mod config;
mod driver;
pub mod embedded;
pub mod privileges;
pub mod runtime;
pub mod thread_caps;

pub use driver::run;
/// What a controller author needs, so that a user crate depends on thymio_rt only: the RT side
/// (`rt::controllers::{Controller, Registry, RobotView}`, `rt::alloc::CountingAlloc`) and the RT/NRT handoff
/// (`handoff::{ControllerInit, DeclareError, ParamId, RtParams, WheelCommand, Twist2, …}`).
pub use handoff;
pub use rt;
/// The JSON values the messages of a controller's own endpoints are built from (`handoff::MsgValue`).
pub use serde_json;
