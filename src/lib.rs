//! thymio-rt wiring: configuration and assembly of the RT and NRT domains.
