//! The flight recorder's NRT half (issue 28): a rotating MCAP writer ([`Recording`]) and the ROS 2 CDR encoders
//! ([`cdr`], [`ros2`]) of what the driver publishes, so that rosbag2, Foxglove and the `mcap` Python reader open
//! the recordings.
//!
//! The driver hands it the RT thread's inputs (channels of encoding `thymio-rt/rt-record-v1`, raw bytes) and its
//! outputs (ROS 2 messages, encoding `cdr`, with their `ros2msg` schemas), with `log_time` the wall clock
//! (CLOCK_REALTIME ns, as rosbag2) and `publish_time` the message's stamp. Errors never end the process: a failed
//! write stops the recording ([`RecordError::Stopped`]), not the driver.

pub mod cdr;
mod channel;
mod error;
pub mod flight;
mod naming;
pub mod ros2;
mod size;
mod writer;

pub use channel::{ChannelKey, SchemaDef};
pub use error::RecordError;
pub use writer::{RecordLimits, RecordSummary, Recording, CHUNK_MAX_AGE};
