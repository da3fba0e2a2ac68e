//! System metadata as text, with no OS call: the sheet a capture fills ([`Capture`],
//! the boot-id key) and parsers of the files Linux keeps host facts in (os-release,
//! cpuinfo, meminfo, if_inet6). `sysinfo` and each OS's readings in `sys` fill it.

use std::collections::BTreeMap;

/// The key of the running kernel's boot id (Linux): two processes that report the same
/// one read the same wall clock.
pub const BOOT_ID_KEY: &str = "clock.boot_id";

/// Fields read so far and the keys that could not be read.
#[derive(Default)]
pub(crate) struct Capture {
    pub(crate) out: BTreeMap<String, String>,
    pub(crate) missing: Vec<String>,
}

impl Capture {
    pub(crate) fn set(&mut self, key: &str, value: Option<String>) {
        match value
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
        {
            Some(v) => {
                self.out.insert(key.to_string(), v);
            }
            None => self.missing.push(key.to_string()),
        }
    }
    pub(crate) fn finish(mut self) -> BTreeMap<String, String> {
        if !self.missing.is_empty() {
            self.out
                .insert("sysinfo.unreadable".into(), self.missing.join(", "));
        }
        self.out
    }
}

/// `KEY=value` lines of os-release(5), quotes removed.
pub fn parse_os_release(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| {
            let v = v.trim();
            let v = v
                .strip_prefix('"')
                .and_then(|s| s.strip_suffix('"'))
                .or_else(|| v.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')))
                .unwrap_or(v);
            (k.trim().to_string(), v.to_string())
        })
        .collect()
}

/// (model name, logical CPU count) from /proc/cpuinfo (x86 `model name`, ARM
/// `Model`/`CPU part` fallbacks).
pub fn parse_cpuinfo(text: &str) -> (Option<String>, usize) {
    let mut model = None;
    let mut count = 0;
    for line in text.lines() {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let k = k.trim();
        if k == "processor" {
            count += 1;
        } else if model.is_none() && (k == "model name" || k == "Model" || k == "cpu model") {
            model = Some(v.trim().to_string());
        }
    }
    (model, count)
}

/// MemTotal in bytes from /proc/meminfo.
pub fn parse_meminfo_total_bytes(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut parts = line.split_whitespace().skip(1);
    let n: u64 = parts.next()?.parse().ok()?;
    let mult = match parts.next() {
        Some("kB") | Some("KB") => 1024,
        None => 1,
        Some(_) => return None,
    };
    n.checked_mul(mult)
}

/// The interface names of /proc/net/if_inet6 lines holding `addr`.
pub fn parse_if_inet6(text: &str, addr: std::net::Ipv6Addr) -> Option<String> {
    let want: String = addr.octets().iter().map(|b| format!("{b:02x}")).collect();
    text.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.len() >= 6 && f[0].eq_ignore_ascii_case(&want)).then(|| f[5].to_string())
    })
}

#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) fn normalise_ws(t: &str) -> String {
    t.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// "yes" when the kernel has IPv6 and it is not disabled globally.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) fn ipv6_enabled(proc_present: bool, disable_all: Option<&str>) -> &'static str {
    match (proc_present, disable_all.map(str::trim)) {
        (false, _) => "no",
        (true, Some("1")) => "no",
        _ => "yes",
    }
}
