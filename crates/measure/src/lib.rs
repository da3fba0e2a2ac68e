//! dualperf-measure: dualperf pure measurement accumulators: histograms, jitter, loss/reorder, CPU deltas.
