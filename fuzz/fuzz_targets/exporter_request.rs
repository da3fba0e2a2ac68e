//! The exporter's HTTP requests (issue 28): what a scraper controls after hyper has
//! parsed the request — the `/probe` query string, the scrape-timeout header, the Accept
//! header and the Basic `Authorization` header. Input: those four texts separated by
//! newlines. Properties: no panic; a parsed probe names a configured module, a target
//! no longer than a host name allows and a budget within a day; parsed credentials
//! come from a `Basic ` header and have a user without a colon; every refusal has a
//! reason label the exporter counts and a message of bounded length.
#![no_main]

use exporter::config::Config;
use exporter::server::parse_probe_request;
use exporter::target::{Target, MAX_HOST_CHARS};
use exporter::webconfig::basic_credentials;
use libfuzzer_sys::fuzz_target;
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

fn config() -> &'static Config {
    static CONFIG: OnceLock<Config> = OnceLock::new();
    CONFIG.get_or_init(|| match Config::from_toml_str("", Path::new("(built-in)")) {
        Ok(c) => c,
        Err(e) => panic!("the built-in configuration is invalid: {e}"),
    })
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.splitn(4, '\n');
    let query = parts.next().unwrap_or("");
    let timeout = parts.next();
    let accept = parts.next();
    let authorization = parts.next();

    match parse_probe_request(config(), query, timeout) {
        Ok(ask) => {
            assert!(config().modules.contains_key(&ask.module));
            assert!(!ask.target.host.is_empty());
            assert!(ask.target.host.chars().count() <= MAX_HOST_CHARS + 8);
            assert!(ask.budget <= Duration::from_secs(86_400));
            // What parsed once parses again the same (the host is kept normalised).
            let again = match ask.target.port {
                Some(p) if ask.target.host.contains(':') => format!("[{}]:{p}", ask.target.host),
                Some(p) => format!("{}:{p}", ask.target.host),
                None => ask.target.host.clone(),
            };
            assert_eq!(Target::parse(&again).ok(), Some(ask.target.clone()));
        }
        Err((reason, message)) => {
            assert!(["bad_request", "unknown_module"].contains(&reason));
            // Echoed user text is cut; the rest is the exporter's own words.
            assert!(message.chars().count() < 2_000, "{} chars", message.len());
        }
    }
    let _ = exporter::exposition::wants_openmetrics(accept);
    if let Some(h) = authorization {
        if let Some((user, _password)) = basic_credentials(h) {
            assert!(h.starts_with("Basic "));
            assert!(!user.contains(':'));
        }
    }
});
