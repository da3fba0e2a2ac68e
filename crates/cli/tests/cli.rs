//! The binary's tests that send no measured traffic: argument and input checks,
//! studies with the fake executor, reports and exports of fixture databases, stores
//! (SQLite, a throwaway PostgreSQL), disk faults, the exporter. Two run at a time.

mod support;

mod cli {
    mod db_target;
    mod exporter_cli;
    mod faults_disk;
    mod hardening_input;
    mod hardening_store;
    mod hardening_text;
    mod manifests;
    mod model;
    mod quantities;
    mod report_browser;
    mod report_e2e;
    mod report_errors;
    mod report_main_job;
    mod report_out_files;
    mod report_timeseries;
    mod study_fake;
    mod study_postgres;
    mod targets_e2e;
}
