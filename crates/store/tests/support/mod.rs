//! Test support shared by the store's integration tests.
pub mod pg;
