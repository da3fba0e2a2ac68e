//! Scheduler tests with the fake executor: order, warm-ups, the confidence stopping rule,
//! retries, and resume after an interruption at every point.

use crate::confidence::width_pct;
use crate::fake::{plausible_metrics, FakeExecutor, MemoryJournal};
use crate::plan::{Cell, Slot};
use crate::schedule::{
    Finished, Journal, JournalError, PastRun, Progress, ScheduleError, Scheduler,
};
use crate::spec::{SpecFile, StudySpec};
use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use wire::metrics as m;
use wire::spec::Family;

fn spec(toml: &str) -> StudySpec {
    SpecFile::from_toml(toml).unwrap().resolve(99).unwrap()
}

fn tput(v: f64) -> BTreeMap<String, f64> {
    [(m::THROUGHPUT_BPS.to_string(), v)].into()
}

#[test]
fn fixed_runs_make_every_slot_once_with_warmups_first_and_uncounted() {
    let s = spec("tests=['tcp-stream','udp-rr']\nsizes=[128,1408]\nruns=3\nwarmup=1\n");
    let runner = Scheduler::new(&s);
    let mut exec = FakeExecutor::default();
    let mut j = MemoryJournal::default();
    let out = runner.run(&mut exec, &mut j).unwrap();
    assert_eq!(exec.calls.len(), 8 * 4);
    assert!(exec.calls[..8].iter().all(|(_, sl, _)| sl.warmup));
    assert!(exec.calls[8..].iter().all(|(_, sl, _)| !sl.warmup));
    assert_eq!(out.cells.len(), 8);
    assert!(out
        .cells
        .iter()
        .all(|c| c.ok_runs == 3 && c.target_met.is_none()));
    // ABAB: within each round, every IPv4 run is followed by the IPv6 run of its pair.
    let fam = |i: u32| runner.cells()[i as usize].family;
    for pair in exec.calls.chunks(2) {
        assert_eq!((fam(pair[0].0), fam(pair[1].0)), (Family::V4, Family::V6));
        assert_eq!(pair[0].0 + 1, pair[1].0);
    }
}

#[test]
fn random_order_follows_the_seed() {
    let order_of = |seed: u64| {
        let s = spec(&format!("order='random'\nseed={seed}\nruns=2\n"));
        let mut exec = FakeExecutor::default();
        Scheduler::new(&s)
            .run(&mut exec, &mut MemoryJournal::default())
            .unwrap();
        exec.calls.iter().map(|c| c.0).collect::<Vec<_>>()
    };
    let a = order_of(5);
    assert_eq!(a, order_of(5));
    assert_ne!(a, order_of(6));
    assert_eq!(a.len(), 96);
    let mut first_round = a[..48].to_vec();
    first_round.sort_unstable();
    assert_eq!(
        first_round,
        (0..48).collect::<Vec<_>>(),
        "a round visits every cell once"
    );
    assert_ne!(&a[..48], &a[48..], "each round has its own order");
}

#[test]
fn confidence_rule_stops_exactly_when_the_width_is_reached() {
    // 100, 102, 100, 102, …: hand-computed full 95 % widths 25.2 %, 5.70 %, 3.64 %.
    for (target, expect_runs) in [(6.0, 3u32), (5.0, 4), (30.0, 2)] {
        let s = spec(&format!(
            "tests=['tcp-stream']\nsizes=[128]\nfamilies=[4]\nconfidence=95\nci_width={target}\nmin_runs=2\nmax_runs=20\n"
        ));
        let mut exec = FakeExecutor::new(|_, slot, _| {
            Ok(tput(if slot.repetition % 2 == 0 {
                100.0
            } else {
                102.0
            }))
        });
        let mut j = MemoryJournal::default();
        let out = Scheduler::new(&s).run(&mut exec, &mut j).unwrap();
        assert_eq!(out.cells[0].ok_runs, expect_runs, "target {target}%");
        assert_eq!(out.cells[0].target_met, Some(true));
        assert_eq!(j.cells_done, vec![(0, Some(true))]);
    }
}

#[test]
fn confidence_rule_never_stops_one_run_early_or_late_on_realistic_data() {
    let s = spec("confidence=95\nci_width=1.5\nmin_runs=2\nmax_runs=40\nsizes=[128,640]\n");
    let mut exec = FakeExecutor::default();
    let mut j = MemoryJournal::default();
    let runner = Scheduler::new(&s);
    let out = runner.run(&mut exec, &mut j).unwrap();
    for c in &out.cells {
        let cell = &runner.cells()[c.cell_index as usize];
        let runs: Vec<BTreeMap<String, f64>> = j
            .runs
            .iter()
            .filter(|(sl, _)| sl.cell_index == c.cell_index)
            .map(|(_, p)| p.metrics.clone())
            .collect();
        assert_eq!(runs.len() as u32, c.ok_runs);
        let worst = |n: usize| {
            crate::confidence::counted_metrics(cell.kind)
                .iter()
                .filter(|k| runs[0].contains_key(**k))
                .map(|k| width_pct(&runs[..n].iter().map(|r| r[*k]).collect::<Vec<_>>(), 95.0).1)
                .fold(0.0, f64::max)
        };
        let n = runs.len();
        assert!(
            worst(n) <= 1.5,
            "cell {} stopped above target",
            c.cell_index
        );
        if n > 2 {
            assert!(
                worst(n - 1) > 1.5,
                "cell {} ran one run too many",
                c.cell_index
            );
        }
        assert_eq!(c.target_met, Some(true));
    }
}

#[test]
fn confidence_rule_stops_at_max_runs_and_marks_the_target_missed() {
    let s = spec(
        "tests=['udp-stream']\nsizes=[128]\nconfidence=99\nci_width=1\nmin_runs=3\nmax_runs=7\n",
    );
    let mut exec = FakeExecutor::new(|_, slot, _| {
        Ok(tput(if slot.repetition % 2 == 0 {
            50.0
        } else {
            150.0
        }))
    });
    let mut j = MemoryJournal::default();
    let out = Scheduler::new(&s).run(&mut exec, &mut j).unwrap();
    assert_eq!(exec.calls.len(), 2 * 7);
    assert!(out
        .cells
        .iter()
        .all(|c| c.ok_runs == 7 && c.target_met == Some(false)));
    assert_eq!(j.cells_done, vec![(0, Some(false)), (1, Some(false))]);
    assert!(out.cells[0].widths[0].width_pct > 1.0);
}

#[test]
fn failed_runs_are_retried_recorded_and_the_study_goes_on() {
    // Cell 0's first repetition fails twice, then works; cell 1 always fails.
    let s = spec("tests=['tcp-rr']\nsizes=[256]\nruns=2\nretries=2\n");
    let mut exec = FakeExecutor::new(|cell, slot, attempt| {
        if cell.index == 1 {
            Err("peer vanished".into())
        } else if slot.repetition == 0 && attempt < 2 {
            Err(format!("timeout on attempt {attempt}").into())
        } else {
            Ok(plausible_metrics(cell, slot))
        }
    });
    let mut j = MemoryJournal::default();
    let out = Scheduler::new(&s).run(&mut exec, &mut j).unwrap();
    // cell 0: 3 attempts + 1; cell 1: 3 + 3.
    assert_eq!(exec.calls.len(), 10);
    assert_eq!(j.runs.len(), 10);
    assert_eq!(out.failed_attempts, 8);
    assert_eq!(out.cells[0].ok_runs, 2);
    assert_eq!(out.cells[1].ok_runs, 0);
    assert_eq!(out.cells[1].failed_slots, 2);
    let attempts: Vec<u32> = j.runs.iter().take(3).map(|(_, p)| p.attempt).collect();
    assert_eq!(attempts, vec![0, 1, 2]);
}

/// Results of a slot: (cell, warmup, repetition, attempt, ok, metrics).
type Key = (u32, bool, u32, u32, bool, Vec<(String, u64)>);

fn keys(j: &MemoryJournal) -> Vec<Key> {
    j.runs
        .iter()
        .map(|(_, p)| {
            (
                p.cell_index,
                p.warmup,
                p.repetition,
                p.attempt,
                p.ok,
                p.metrics
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_bits()))
                    .collect(),
            )
        })
        .collect()
}

/// A study with a confidence target, warm-up, retries and random order: what resume
/// must replay exactly.
fn retrying_study() -> StudySpec {
    spec(
        "tests=['tcp-stream','udp-rr']\nsizes=[128,640]\nconfidence=95\nci_width=2\n\
          min_runs=2\nmax_runs=6\nwarmup=1\nretries=1\norder='random'\nseed=11\n",
    )
}

/// Some attempts fail (deterministically), to exercise retries across restarts.
fn retrying_executor() -> FakeExecutor {
    FakeExecutor::new(|cell, slot, attempt| {
        if (cell.index + slot.repetition) % 3 == 0 && attempt == 0 && !slot.warmup {
            Err("transient".into())
        } else {
            Ok(plausible_metrics(cell, slot))
        }
    })
}

#[test]
fn resume_after_an_interruption_at_every_point_loses_and_repeats_nothing() {
    let s = retrying_study();
    let make_exec = retrying_executor;
    let mut reference = MemoryJournal::default();
    let mut ref_exec = make_exec();
    let ref_out = Scheduler::new(&s)
        .run(&mut ref_exec, &mut reference)
        .unwrap();
    let total = reference.runs.len();
    assert!(total > 20, "{total}");
    for k in 0..total {
        let mut first = MemoryJournal {
            fail_after: Some(k),
            ..MemoryJournal::default()
        };
        let err = Scheduler::new(&s)
            .run(&mut make_exec(), &mut first)
            .unwrap_err();
        assert!(
            matches!(&err, ScheduleError::Journal(j) if j.inner().is::<crate::fake::SimulatedCrash>()),
            "{err}"
        );
        assert_eq!(first.runs.len(), k);
        let mut resumed = MemoryJournal {
            runs: first.runs.clone(),
            ..MemoryJournal::default()
        };
        let mut exec = make_exec();
        let out = Scheduler::new(&s)
            .with_history(first.history())
            .run(&mut exec, &mut resumed)
            .unwrap();
        assert_eq!(
            keys(&resumed),
            keys(&reference),
            "interrupted after {k} runs"
        );
        assert_eq!(
            exec.calls.len(),
            total - k,
            "after {k}: runs made again or skipped"
        );
        assert_eq!(out.cells, ref_out.cells);
    }
}

/// `remaining` replays the journal: what it says is left is what the resumed study
/// shows at its first attempt, at every point an interruption can leave it.
#[test]
fn remaining_is_where_a_resumed_study_starts() {
    let s = retrying_study();
    let make_exec = retrying_executor;
    #[derive(Default)]
    struct FirstStart(Option<Progress>, MemoryJournal);
    impl Journal for FirstStart {
        fn record(&mut self, f: &Finished<'_>) -> Result<(), JournalError> {
            self.1.record(f)
        }
        fn starting(&mut self, _: &Cell, _: &Slot, _: u32, p: &Progress) {
            self.0.get_or_insert(*p);
        }
    }
    let mut reference = MemoryJournal::default();
    Scheduler::new(&s)
        .run(&mut make_exec(), &mut reference)
        .unwrap();
    let total = reference.runs.len();
    assert_eq!(
        Scheduler::new(&s)
            .remaining()
            .map(|p| (p.done_slots, p.cells_finished)),
        Some((0, 0))
    );
    for k in 0..total {
        let past: Vec<PastRun> = reference.runs[..k].iter().map(|(_, p)| p.clone()).collect();
        let left = Scheduler::new(&s).with_history(past.clone()).remaining();
        let mut resumed = FirstStart::default();
        Scheduler::new(&s)
            .with_history(past)
            .run(&mut make_exec(), &mut resumed)
            .unwrap();
        assert_eq!(left, resumed.0, "after {k} runs");
        assert!(left.is_some(), "after {k} runs");
    }
    let all = reference.history();
    assert_eq!(Scheduler::new(&s).with_history(all).remaining(), None);
}

#[test]
fn recorded_pace_is_the_median_gap_between_starts() {
    use crate::schedule::recorded_pace_s;
    assert_eq!(recorded_pace_s(&[]), None);
    assert_eq!(recorded_pace_s(&[5]), None);
    // Runs every 2 s, then an interruption of an hour, then every 2 s again; in any order.
    let s = 1_000_000_000i64;
    let starts = [0, 2 * s, 4 * s, 3604 * s, 3606 * s, 3608 * s];
    assert_eq!(recorded_pace_s(&starts), Some(2.0));
    let mut shuffled = starts;
    shuffled.reverse();
    assert_eq!(recorded_pace_s(&shuffled), Some(2.0));
    // An even number of gaps: the mean of the middle two.
    assert_eq!(recorded_pace_s(&[0, s, 4 * s]), Some(2.0));
}

#[test]
fn stop_flag_interrupts_before_the_next_run() {
    let s = spec("runs=1\n");
    let stop = AtomicBool::new(true);
    let mut exec = FakeExecutor::default();
    let err = Scheduler::new(&s)
        .with_stop_flag(&stop)
        .run(&mut exec, &mut MemoryJournal::default())
        .unwrap_err();
    assert!(matches!(err, ScheduleError::Interrupted), "{err}");
    assert!(exec.calls.is_empty());
}

#[test]
fn min_runs_counts_successful_runs_not_failed_slots() {
    // Identical values meet any width at once; the first slot fails (no retries), so
    // min_runs = 4 needs a fifth slot. Counting slots would stop at 3 good runs.
    let s = spec(
        "tests=['tcp-stream']\nsizes=[128]\nfamilies=[4]\nconfidence=95\nci_width=5\nmin_runs=4\nmax_runs=10\nretries=0\n",
    );
    let mut exec = FakeExecutor::new(|_, slot, _| {
        if slot.repetition == 0 {
            Err("peer vanished".into())
        } else {
            Ok(tput(100.0))
        }
    });
    let out = Scheduler::new(&s)
        .run(&mut exec, &mut MemoryJournal::default())
        .unwrap();
    assert_eq!(out.cells[0].ok_runs, 4);
    assert_eq!(out.cells[0].failed_slots, 1);
    assert_eq!(out.cells[0].target_met, Some(true));
}

#[test]
fn given_cells_run_instead_of_the_specs_matrix_under_its_repetition() {
    // A matrix of 2 tests x 2 families, but one given cell (a size beyond the axis).
    let s = spec("tests=['tcp-stream','udp-rr']\nsizes=[128]\nruns=2\nwarmup=1\n");
    let mut cell = crate::plan::cells(&s).remove(0);
    cell.payload_bytes = 131_072;
    cell.test.payload_bytes = 131_072;
    let mut exec = FakeExecutor::new(|c, _, _| {
        assert_eq!(c.test.payload_bytes, 131_072, "the given cell runs");
        Ok(tput(1e9))
    });
    let runner = Scheduler::of_cells(&s, vec![cell]);
    assert_eq!(runner.cells().len(), 1);
    let out = runner
        .run(&mut exec, &mut MemoryJournal::default())
        .unwrap();
    // One warm-up and two measured runs of the one cell, as the spec says.
    assert_eq!(exec.calls.len(), 3);
    assert!(exec.calls.iter().all(|(ci, _, _)| *ci == 0));
    assert_eq!(out.cells.len(), 1);
    assert_eq!(out.cells[0].ok_runs, 2);
}

/// A journal that keeps every progress the scheduler reports, over a memory journal.
#[derive(Default)]
struct Watching {
    inner: MemoryJournal,
    seen: Vec<crate::schedule::Progress>,
}

impl crate::schedule::Journal for Watching {
    fn record(
        &mut self,
        f: &crate::schedule::Finished,
    ) -> Result<(), crate::schedule::JournalError> {
        self.inner.record(f)
    }
    fn cell_done(
        &mut self,
        cell: &crate::Cell,
        o: &crate::schedule::CellOutcome,
    ) -> Result<(), crate::schedule::JournalError> {
        self.inner.cell_done(cell, o)
    }
    fn starting(
        &mut self,
        _: &crate::Cell,
        _: &crate::Slot,
        _: u32,
        p: &crate::schedule::Progress,
    ) {
        self.seen.push(*p);
    }
}

#[test]
fn progress_says_cells_finished_and_a_range_of_runs_left_that_only_narrows() {
    // 4 cells, 1 warm-up each, 3..6 runs; a 0.001 % target is never met, so every cell
    // runs to 6 and the upper bound is exact from the start.
    let s = spec(
        "tests=['udp-rr']\nsizes=[128,256]\nconfidence=95.0\nci_width=0.001\nmin_runs=3\nmax_runs=6\nwarmup=1\n",
    );
    let mut j = Watching::default();
    Scheduler::new(&s)
        .run(&mut FakeExecutor::default(), &mut j)
        .unwrap();
    let first = j.seen[0];
    assert_eq!((first.cells, first.cells_finished), (4, 0));
    assert_eq!((first.left_min, first.left_max), (4 + 4 * 3, 4 + 4 * 6));
    let total = j.seen.len() as u64;
    assert_eq!(total, 4 + 4 * 6, "one progress per attempt");
    for (i, p) in j.seen.iter().enumerate() {
        // The slot about to run is still left; what is done plus what is left is the
        // study, never fewer than it needs.
        assert_eq!(p.done_slots, i as u64);
        assert_eq!(p.done_slots + p.left_max, total, "at {i}: {p:?}");
        assert!(p.left_min >= 1 && p.left_min <= p.left_max, "{p:?}");
    }
    let last = j.seen[j.seen.len() - 1];
    assert_eq!((last.left_min, last.left_max), (1, 1));
    assert_eq!(last.cells_finished, 3, "the last cell is running");
    assert!(j
        .seen
        .windows(2)
        .all(|w| w[1].cells_finished >= w[0].cells_finished));
}

#[test]
fn time_left_is_the_runs_left_at_the_mean_run_length_so_far() {
    use crate::schedule::{time_left_s, Progress};
    let p = Progress {
        done_slots: 10,
        expected_slots: 40,
        cells_finished: 1,
        cells: 4,
        left_min: 5,
        left_max: 30,
    };
    // A fake clock: 10 runs in 20 s are 2 s a run.
    assert_eq!(time_left_s(&p, 10, 20.0), Some((10.0, 60.0)));
    // Runs taken from the journal (a resumed study) took no time: only timed runs count.
    assert_eq!(time_left_s(&p, 4, 20.0), Some((25.0, 150.0)));
    assert_eq!(time_left_s(&p, 0, 20.0), None, "nothing timed yet");
    assert_eq!(time_left_s(&p, 3, f64::NAN), None);
}
