//! The binary's tests over real loopback traffic: `dualperf run` and `server` (the
//! engine's counts, pacing, jitter, traffic models, loaded latency, one-way delay),
//! authentication, a hostile peer, server limits, iperf3 in both roles, real studies.
//! A test that measures holds `support::serial()` and runs alone; every other test here
//! holds `support::shared()` (see `support::TURNS`).

mod support;

mod loopback {
    mod auth_e2e;
    mod crr_e2e;
    mod engine_e2e;
    mod engine_errors;
    mod faults_study;
    mod hardening_peer;
    mod link_state_e2e;
    mod loaded_e2e;
    mod main_job_e2e;
    mod owd_e2e;
    mod quic_e2e;
    mod robustness_limits;
    mod robustness_server;
    mod run_iperf3;
    mod server_iperf3_policy;
    mod study_e2e;
    mod study_iperf3;
    mod traffic_e2e;
    mod udp_honesty;
}
