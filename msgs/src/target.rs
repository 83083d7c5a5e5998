//! Dashel target strings (aseba.md §1.6) parsed into typed targets.
