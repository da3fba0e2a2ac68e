//! dualperf-report: dualperf tables, SVG figures, findings and the HTML report.
