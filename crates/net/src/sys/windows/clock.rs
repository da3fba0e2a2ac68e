//! Windows clocks: the portable ones (std's monotonic and wall clocks).

pub(crate) use crate::sys::portable::{now_ns, sleep_until_ns, wall_ns};
