#![cfg(feature = "ros1")]
pub mod ros1_msgs {
    #![allow(missing_docs, clippy::all, non_snake_case, non_camel_case_types, unused)]
    include!(concat!(env!("OUT_DIR"), "/ros1_msgs.rs"));
}
