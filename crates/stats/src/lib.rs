//! dualperf-stats: pure statistics for dualperf — per-cell summaries with Student-t
//! confidence intervals, two-group comparisons (Welch's t-test, Mann-Whitney U, effect
//! sizes, Holm correction) and the header/framing overhead model. No I/O, no clock.

pub mod special;
pub mod summary;

pub use special::{normal_cdf, normal_quantile, student_t_cdf, student_t_quantile};
pub use summary::Summary;
