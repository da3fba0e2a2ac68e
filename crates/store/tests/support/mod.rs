//! Test support shared by the store's integration tests (each test binary uses part).
#![allow(dead_code)]
pub mod pg;
