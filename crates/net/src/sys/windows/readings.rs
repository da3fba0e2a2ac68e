//! Windows readings: per-processor CPU times (NtQuerySystemInformation), process CPU
//! (GetProcessTimes), IPv6 availability; UDP error counters, thread pinning and timer
//! slack, which Windows does not offer here.

use crate::error::NetError;
use std::net::{Ipv6Addr, SocketAddr, UdpSocket};
use windows_sys::Wdk::System::SystemInformation::{
    NtQuerySystemInformation, SystemProcessorPerformanceInformation,
};
use windows_sys::Win32::Foundation::FILETIME;
use windows_sys::Win32::System::Threading::{GetCurrentProcess, GetProcessTimes};
use windows_sys::Win32::System::WindowsProgramming::SYSTEM_PROCESSOR_PERFORMANCE_INFORMATION;
use wire::cpu::{CoreTimes, CpuSnapshot, CpuTimes, ProcessCpuTimes};

pub(crate) const CPU_SOURCE: &str =
    "NtQuerySystemInformation(SystemProcessorPerformanceInformation): \
     user, kernel minus idle, DPC and interrupt time, in 100 ns units; busy = all but idle";

pub(crate) fn udp_error_counters() -> Option<wire::snmp::UdpErrorCounters> {
    None
}

/// Most processors one query reads (a processor group holds at most 64).
const MAX_CPUS: usize = 256;

pub(crate) fn cpu_snapshot() -> Result<CpuSnapshot, NetError> {
    let mut info = vec![SYSTEM_PROCESSOR_PERFORMANCE_INFORMATION::default(); MAX_CPUS];
    let bytes = std::mem::size_of_val(info.as_slice()) as u32;
    let mut returned = 0u32;
    // SAFETY: `info` is a writable buffer of `bytes` bytes of the structure this
    // class fills; `returned` is valid for writes.
    let status = unsafe {
        NtQuerySystemInformation(
            SystemProcessorPerformanceInformation,
            info.as_mut_ptr().cast(),
            bytes,
            &mut returned,
        )
    };
    if status < 0 {
        return Err(NetError::ProcStat(format!(
            "NtQuerySystemInformation(SystemProcessorPerformanceInformation) failed: \
             NTSTATUS {status:#x}"
        )));
    }
    let n = (returned as usize / std::mem::size_of::<SYSTEM_PROCESSOR_PERFORMANCE_INFORMATION>())
        .min(MAX_CPUS);
    if n == 0 {
        return Err(NetError::ProcStat(
            "NtQuerySystemInformation returned no processors".into(),
        ));
    }
    let mut all = CpuTimes::default();
    let mut cores = Vec::with_capacity(n);
    for (id, p) in info[..n].iter().enumerate() {
        let t = times_of(p);
        all.user += t.user;
        all.system += t.system;
        all.idle += t.idle;
        all.irq += t.irq;
        all.softirq += t.softirq;
        cores.push(CoreTimes {
            id: id as u32,
            times: t,
        });
    }
    Ok(CpuSnapshot { all, cores })
}

/// One processor's times in /proc/stat's fields: KernelTime includes idle, DPC and
/// interrupt time, which are taken out of `system` and shown as idle, softirq
/// (DPC) and irq.
fn times_of(p: &SYSTEM_PROCESSOR_PERFORMANCE_INFORMATION) -> CpuTimes {
    let u = |v: i64| u64::try_from(v).unwrap_or(0);
    let (idle, kernel, user) = (u(p.IdleTime), u(p.KernelTime), u(p.UserTime));
    let (dpc, interrupt) = (u(p.Reserved1[0]), u(p.Reserved1[1]));
    CpuTimes {
        user,
        system: kernel
            .saturating_sub(idle)
            .saturating_sub(dpc)
            .saturating_sub(interrupt),
        idle,
        irq: interrupt,
        softirq: dpc,
        ..CpuTimes::default()
    }
}

fn filetime_ns(ft: FILETIME) -> u64 {
    ((u64::from(ft.dwHighDateTime) << 32) | u64::from(ft.dwLowDateTime)).saturating_mul(100)
}

pub(crate) fn process_cpu_times() -> ProcessCpuTimes {
    let zero = FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    };
    let (mut created, mut exited, mut kernel, mut user) = (zero, zero, zero, zero);
    // SAFETY: the pseudo-handle of the current process is always valid; the four
    // FILETIMEs are valid for writes.
    let ok = unsafe {
        GetProcessTimes(
            GetCurrentProcess(),
            &mut created,
            &mut exited,
            &mut kernel,
            &mut user,
        )
    };
    if ok == 0 {
        return ProcessCpuTimes::default();
    }
    ProcessCpuTimes {
        user_ns: filetime_ns(user),
        system_ns: filetime_ns(kernel),
    }
}

pub(crate) fn ipv6_check() -> Result<(), NetError> {
    match UdpSocket::bind(SocketAddr::from((Ipv6Addr::LOCALHOST, 0))) {
        Ok(_) => Ok(()),
        Err(e) => Err(NetError::Ipv6Unavailable {
            reason: format!("binding [::1]:0 failed: {e}"),
        }),
    }
}

/// Refused: on Windows the threads a thread starts take the process's affinity,
/// not the starting thread's, so pinning one thread would leave the client's and the
/// embedded server's data threads unpinned while the metadata claimed otherwise.
pub(crate) fn pin_current_thread(_cpu: usize) -> std::io::Result<()> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "on Windows a thread's CPU affinity is not inherited by the threads it starts",
    ))
}

/// Windows has no per-thread timer slack; std's sleep already uses a
/// high-resolution waitable timer.
pub(crate) fn fine_timer_slack() {}
