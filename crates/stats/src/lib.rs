//! dualperf-stats: pure statistics for dualperf — per-cell summaries with Student-t
//! confidence intervals, two-group comparisons (Welch's t-test, Mann-Whitney U, effect
//! sizes, Holm correction), the confidence interval of a ratio of means ([`ratio`]) and the smallest corrected p a plan can reach ([`reach`]). No
//! I/O, no clock. (The header/framing overhead model lives in dualperf-model.)
#![forbid(unsafe_code)]

pub mod compare;
pub mod outliers;
pub mod percent;
pub mod proportion;
pub mod ratio;
pub mod reach;
pub mod special;
pub mod summary;

pub use compare::{
    cohens_d, exact_is_computable, exact_with_ties_is_computable, hedges_g, holm, HodgesLehmann,
    MannWhitney, Welch,
};
pub use outliers::{outliers, OUTLIER_MIN_RELATIVE, OUTLIER_SCALED_MADS};
pub use percent::{base_value, base_words, percent_difference, percent_of, PercentBase};
pub use proportion::wilson_interval;
pub use ratio::{ratio_ci, RatioCi};
pub use reach::{smallest_corrected_p, smallest_p, PrimaryTest, Reach};
pub use special::{normal_cdf, normal_quantile, student_t_cdf, student_t_quantile};
pub use summary::Summary;
