//! dualperf-store: dualperf SQLite results store.
