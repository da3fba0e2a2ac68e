//! dualperf-stats: pure statistics for dualperf — per-cell summaries with Student-t
//! confidence intervals, two-group comparisons (Welch's t-test, Mann-Whitney U, effect
//! sizes, Holm correction) and the header/framing overhead model. No I/O, no clock.

pub mod compare;
pub mod overhead;
pub mod special;
pub mod summary;

pub use compare::{cohens_d, hedges_g, holm, MannWhitney, Welch};
pub use overhead::{header_share_of_gap, LinkModel, OverheadModel, WireCost};
pub use special::{normal_cdf, normal_quantile, student_t_cdf, student_t_quantile};
pub use summary::Summary;
