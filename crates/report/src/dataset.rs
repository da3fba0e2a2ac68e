//! The report's input, defined beside the results store (`store::dataset`) so that the
//! application layer fills it without depending on the report: re-exported here.

pub use store::dataset::*;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{build, fixture, ReportOptions};

    /// Every metric a run could store, added to the fixture's runs, changes nothing
    /// once the metrics [`report_reads`] leaves out are dropped: the report reads no
    /// metric outside the list (else the two reports would differ).
    #[test]
    fn report_reads_every_metric_it_uses() {
        let mut full = fixture::dataset_with_series();
        let mut every: Vec<String> = wire::metrics::ALL
            .iter()
            .chain(wire::metrics::LOADED)
            .map(|s| s.to_string())
            .collect();
        for loaded in [false, true] {
            for udp in [false, true] {
                for p in wire::metrics::RTT_LADDER_PCT {
                    every.push(wire::metrics::rtt_ladder_name(loaded, udp, p));
                }
            }
        }
        for c in &mut full.campaigns {
            for (i, r) in c.runs.iter_mut().enumerate() {
                let mut m = r.metrics.to_map();
                for (k, name) in every.iter().enumerate() {
                    m.entry(name.clone())
                        .or_insert(1.0 + ((i * 7 + k * 13) % 29) as f64);
                }
                r.metrics = m.into();
            }
        }
        let mut read = full.clone();
        for c in &mut read.campaigns {
            for r in &mut c.runs {
                r.metrics = r
                    .metrics
                    .iter()
                    .filter(|(k, _)| report_reads(k))
                    .map(|(k, v)| (k.to_string(), v))
                    .collect();
            }
        }
        assert!(read.campaigns[0].runs[0].metrics.len() < full.campaigns[0].runs[0].metrics.len());
        let options = ReportOptions {
            link_rate_bps: Some(1e9),
            ..ReportOptions::default()
        };
        let (a, b) = (build(&full, &options), build(&read, &options));
        assert_eq!(a.markdown(), b.markdown());
        assert_eq!(a.latex(), b.latex());
        assert_eq!(a.html, b.html);
    }

    /// A run with an impossible value is left out and listed; the report says so in a
    /// table of its own, which a report of sound runs does not have.
    #[test]
    fn runs_with_impossible_values_are_left_out_and_listed() {
        let sound = fixture::dataset();
        let mut c = CampaignData {
            hosts: [(
                "client".to_string(),
                [("cpu.cores".to_string(), "2".to_string())].into(),
            )]
            .into(),
            ..sound.campaigns[0].clone()
        };
        c.runs.clear();
        for (i, r) in sound.campaigns[0].runs.iter().enumerate() {
            let mut r = r.clone();
            if i == 3 {
                r.metrics
                    .insert(wire::metrics::PROC_LOCAL_PCT.into(), 250.0);
            }
            assert_eq!(c.push_checked(100 + i as i64, r), i != 3);
        }
        assert_eq!(c.left_out_total, 1);
        assert_eq!(c.left_out[0].run_id, 103);
        assert_eq!(
            c.left_out[0].reason,
            "proc_local_pct = 250 % (must be within 0–200 %)"
        );
        let labels = vec!["a".to_string()];
        let data = Dataset { campaigns: vec![c] };
        let t = crate::left_out::table(&data, &labels).unwrap().to_text();
        assert!(t.contains("103") && t.contains("within 0–200 %"), "{t}");
        let report = build(&data, &ReportOptions::default());
        assert!(report.text().contains("Runs left out"));
        assert!(!build(&sound, &ReportOptions::default())
            .text()
            .contains("Runs left out"));
    }
}
