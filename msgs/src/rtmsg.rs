//! Fixed-size messages exchanged between the RT and NRT domains (all `Copy`).
