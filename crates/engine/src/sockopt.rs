//! The engine's record of socket settings: what `net` read back from the kernel after
//! applying the user's options, flattened to `name → value` strings for the result.

use wire::proto::AppliedOpts;

/// Flatten `net`'s read-back into the result's map (absent values are left out).
pub(crate) fn to_map(a: &net::AppliedOpts) -> AppliedOpts {
    let mut m = AppliedOpts::new();
    let mut put = |k: &str, v: Option<String>| {
        if let Some(v) = v {
            m.insert(k.to_string(), v);
        }
    };
    put("sndbuf_bytes", a.sndbuf_bytes.map(|v| v.to_string()));
    put("rcvbuf_bytes", a.rcvbuf_bytes.map(|v| v.to_string()));
    put("nodelay", a.nodelay.map(|v| v.to_string()));
    put("mss_bytes", a.mss_bytes.map(|v| v.to_string()));
    put("tos", a.tos.map(|v| format!("{v:#04x}")));
    put("flowlabel", a.flowlabel.map(|v| format!("{v:#07x}")));
    put("congestion", a.congestion.clone());
    put("dont_fragment", a.dont_fragment.map(|v| v.to_string()));
    put("v6only", a.v6only.map(|v| v.to_string()));
    if !a.notes.is_empty() {
        put("notes", Some(a.notes.join("; ")));
    }
    m
}
