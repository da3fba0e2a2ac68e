//! The binary's tests in network-namespace labs (root; skipped outside CI without it):
//! `dualperf lab`, runs and studies in shaped labs against the overhead model, link
//! state, faults when a link goes down, the report of a lab study. A test that measures
//! holds `support::serial()` and runs alone; the others hold `support::shared()`.

mod support;

mod netns {
    mod crr_ports;
    mod faults_lab;
    mod lab_accuracy;
    mod lab_cli;
    mod lab_link;
    mod link_state_lab;
    mod loaded_lab;
    mod path_lab;
    mod report_lab;
    mod run_lab;
    mod study_lab;
}
