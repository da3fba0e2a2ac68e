//! dualperf-stats: dualperf pure statistics: summaries, t intervals, Welch and Mann-Whitney tests, header-overhead model.
