//! Path-MTU and extension-header options off Linux: IP_RECVERR, IP_MTU,
//! IP_PMTUDISC_PROBE and the sticky IPv6 option headers have no equivalent dualperf
//! uses here, so every call says "not supported on this system".

use crate::pathmtu::{DfMode, ExtHeader, PathError, QueuedError, TcpMtuSysctls};
use crate::sys::{os_name, AsOsSocket};
use std::time::Duration;

fn unsupported<T>(what: &'static str) -> Result<T, PathError> {
    Err(PathError::Unsupported {
        what,
        os: os_name(),
    })
}

pub(crate) fn set_df_mode<S: AsOsSocket>(_sock: &S, _mode: DfMode) -> Result<(), PathError> {
    unsupported("probing the path MTU (IP_PMTUDISC_PROBE)")
}

pub(crate) fn is_message_too_big(_e: &std::io::Error) -> bool {
    false
}

pub(crate) fn kernel_path_mtu<S: AsOsSocket>(_sock: &S) -> Result<u32, PathError> {
    unsupported("reading the kernel's path MTU (IP_MTU)")
}

pub(crate) fn enable_error_queue<S: AsOsSocket>(_sock: &S) -> Result<(), PathError> {
    unsupported("the socket error queue (IP_RECVERR)")
}

pub(crate) fn wait_queued_errors<S: AsOsSocket>(
    _sock: &S,
    _wait: Duration,
) -> Result<bool, PathError> {
    unsupported("the socket error queue (IP_RECVERR)")
}

pub(crate) fn drain_queued_errors<S: AsOsSocket>(_sock: &S) -> Result<Vec<QueuedError>, PathError> {
    unsupported("the socket error queue (IP_RECVERR)")
}

pub(crate) fn tcp_mtu_sysctls() -> TcpMtuSysctls {
    TcpMtuSysctls::default()
}

pub(crate) fn set_ext_header<S: AsOsSocket>(_sock: &S, header: ExtHeader) -> Result<(), PathError> {
    unsupported(header.option_name())
}
