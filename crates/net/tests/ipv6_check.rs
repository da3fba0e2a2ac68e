//! `check_ipv6` in a private network namespace (root only; skipped otherwise): with
//! net.ipv6.conf.all.disable_ipv6=1 it says so and what to do; with loopback down it
//! says IPv6 is unusable. The namespace lives only in a thread of this test.
#![cfg(target_os = "linux")]

use dualperf_net::{check_ipv6, NetError};

/// Run `f` on a fresh thread moved into a new, empty network namespace. `None` when the
/// namespace cannot be made (not root).
fn in_new_netns<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    std::thread::spawn(move || {
        // SAFETY: unshare only changes this thread's namespaces; no memory is involved.
        let rc = unsafe { libc::unshare(libc::CLONE_NEWNET) };
        if rc != 0 {
            println!(
                "cannot create a network namespace ({}), skipped",
                std::io::Error::last_os_error()
            );
            return None;
        }
        Some(f())
    })
    .join()
    .expect("namespace thread panicked")
}

#[test]
fn disabled_ipv6_is_reported_with_what_to_do() {
    let result = in_new_netns(|| {
        std::fs::write("/proc/sys/net/ipv6/conf/all/disable_ipv6", "1")
            .map_err(|e| format!("write sysctl: {e}"))?;
        Ok::<_, String>(check_ipv6())
    });
    let Some(result) = result else { return };
    let outcome = match result {
        Ok(o) => o,
        Err(e) => {
            println!("IPv6 sysctl not writable in the namespace ({e}), skipped");
            return;
        }
    };
    let err = outcome.expect_err("IPv6 reported usable with disable_ipv6=1");
    assert!(matches!(err, NetError::Ipv6Disabled), "{err}");
    assert_eq!(
        err.to_string(),
        "IPv6 is disabled on this host (net.ipv6.conf.all.disable_ipv6=1); use -4 or enable it"
    );
}

#[test]
fn ipv6_without_a_loopback_address_is_unusable() {
    // A new namespace's lo is down, so ::1 is not assigned and cannot be bound.
    let Some(outcome) = in_new_netns(check_ipv6) else {
        return;
    };
    let err = outcome.expect_err("::1 bound in a namespace whose lo is down");
    match &err {
        NetError::Ipv6Unavailable { reason } => assert!(reason.contains("[::1]"), "{reason}"),
        NetError::Ipv6Disabled => println!("IPv6 disabled by default in new namespaces: {err}"),
        other => panic!("unexpected error: {other}"),
    }
    assert!(err.to_string().contains("use -4"), "{err}");
}
