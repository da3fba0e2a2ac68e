//! What several subcommands accept alike: the kind of peer, the pre-shared key file and
//! the value parsers of shared flags. Subcommand modules import from here, never from
//! each other.

use clap::ValueEnum;
use wire::spec::{Family, Rate};

/// What kind of server the study talks to.
#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Peer {
    /// `dualperf server` (every test and metric).
    #[default]
    Dualperf,
    /// An unmodified iperf3 3.x server (`iperf3 -s`): tcp-stream and udp-stream only.
    Iperf3,
}

/// Where `run` and `study` send their tests: a server, the embedded loopback server
/// (no HOST) or a lab made for the command. Flattened into both.
#[derive(clap::Args, Debug, Default, Clone)]
pub struct TargetArgs {
    /// Server to test; none = an embedded server on 127.0.0.1 and ::1 in this process.
    ///
    /// A `dualperf server`, or `iperf3 -s` with --peer iperf3. A name is tested at its
    /// A and AAAA addresses; `localhost` (and NAME.localhost) is 127.0.0.1 and ::1
    /// whatever /etc/hosts says (RFC 6761).
    pub host: Option<String>,
    /// The IPv4 server, an address or a name (its A record), instead of HOST's.
    ///
    /// For a host whose addresses no one name holds (a name with only an A record, two
    /// addresses of one machine): `--host4 192.0.2.7 --host6 2001:db8::7`. Alone, it
    /// makes the study IPv4 only. Recorded with the campaign (study.target_ipv4).
    #[arg(long, value_name = "ADDR", conflicts_with = "lab")]
    pub host4: Option<String>,
    /// The IPv6 server, an address or a name (its AAAA record), instead of HOST's.
    ///
    /// With --host4 for the other family; alone, the study is IPv6 only. Recorded with
    /// the campaign (study.target_ipv6).
    #[arg(long, value_name = "ADDR", conflicts_with = "lab")]
    pub host6: Option<String>,
    /// Control port of the server [default: 5301; 5201 with --peer iperf3].
    #[arg(short, long)]
    pub port: Option<u16>,
    /// The server is `dualperf` or an unmodified `iperf3` 3.x (`iperf3 -s`).
    ///
    /// An iperf3 server runs tcp-stream and udp-stream only; a study waits out a busy one
    /// with backoff.
    #[arg(long, value_enum, default_value_t = Peer::Dualperf)]
    pub peer: Peer,
    /// With --peer iperf3: authenticate as this user (iperf3's --username).
    ///
    /// The password is read from IPERF3_PASSWORD, as iperf3 reads it.
    #[arg(
        long,
        value_name = "USER",
        requires = "iperf3_rsa_public_key",
        hide_short_help = true
    )]
    pub iperf3_username: Option<String>,
    /// With --peer iperf3: the server's RSA public key in PEM (iperf3's
    /// --rsa-public-key-path).
    #[arg(
        long,
        value_name = "FILE",
        requires = "iperf3_username",
        hide_short_help = true
    )]
    pub iperf3_rsa_public_key: Option<std::path::PathBuf>,
    /// Run in a temporary network-namespace lab (needs root): p2p or client-server.
    ///
    /// p2p: two hosts on one veth link; client-server: through a router namespace. A
    /// `dualperf server` (`iperf3 -s` with a study's --peer iperf3) runs in the server
    /// namespace, the client in the client one; the lab is removed afterwards, also on
    /// error and Ctrl-C. A study's `--resume` builds the same lab again.
    #[arg(long, value_name = "TOPOLOGY", value_parser = parse_topology, conflicts_with = "host")]
    pub lab: Option<lab::Topology>,
    /// Shape each lab host's egress with tbf at this rate (100mbit, 1gbit, 500k).
    #[arg(long, value_name = "RATE", value_parser = parse_lab_rate, requires = "lab", hide_short_help = true)]
    pub lab_rate: Option<u64>,
    /// MTU of the lab's veth links, bytes (1280–65535) [default: 1500].
    #[arg(long, value_name = "BYTES", requires = "lab", hide_short_help = true)]
    pub lab_mtu: Option<u32>,
    /// Emulate a link in the lab (as `dualperf lab up --link`): 802.11g:54, 802.11ac:….
    ///
    /// tbf at the link's rate plus a per-packet overhead for what each frame costs
    /// beyond its bytes; the report sets the results against that link's airtime model.
    #[arg(long, value_name = "LINK", value_parser = LinkParser, requires = "lab", conflicts_with = "lab_rate", hide_short_help = true)]
    pub lab_link: Option<model::Link>,
    /// With an 802.11n/ac/ax --lab-link: MPDUs per A-MPDU the emulated sender
    /// aggregates [default: 1].
    #[arg(long, value_name = "N", requires = "lab_link", hide_short_help = true)]
    pub lab_ampdu: Option<u32>,
    /// With --lab client-server (alias routed): the path MTU toward the server, bytes
    /// (1280 to the links' MTU), a route MTU on the router's link to the server.
    #[arg(long, value_name = "BYTES", requires = "lab", hide_short_help = true)]
    pub lab_path_mtu: Option<u32>,
    /// With --lab client-server: what the router drops (nftables, from Debian's
    /// nftables package): icmp-too-big, fragments, hop-by-hop, dest-opts; repeatable.
    #[arg(long, value_name = "WHAT", value_parser = parse_path_drop, requires = "lab", hide_short_help = true)]
    pub lab_drop: Vec<lab::PathDrop>,
    /// Pre-shared key of the `dualperf server --psk-file` at HOST (it must prove it too).
    #[arg(long, value_name = "FILE")]
    pub psk_file: Option<std::path::PathBuf>,
}

impl TargetArgs {
    /// What the lab's router does to the path (`--lab-path-mtu`, `--lab-drop`).
    pub fn lab_path(&self) -> lab::PathSpec {
        lab::PathSpec {
            mtu_bytes: self.lab_path_mtu,
            drops: self.lab_drop.iter().copied().collect(),
        }
    }

    /// The remote target per family: HOST, --host4, --host6 (none: embedded or lab).
    pub fn hosts(&self) -> runner::Hosts {
        runner::Hosts {
            host: self.host.clone(),
            host4: self.host4.clone(),
            host6: self.host6.clone(),
        }
    }

    /// The server port: `--port`, or the peer's default (runner's).
    pub fn port(&self) -> u16 {
        self.port.unwrap_or(self.peer.runner().default_port())
    }
}

impl Peer {
    /// The runner's kind of peer.
    pub fn runner(self) -> runner::Peer {
        match self {
            Peer::Dualperf => runner::Peer::Dualperf,
            Peer::Iperf3 => runner::Peer::Iperf3,
        }
    }
}

/// Load `--psk-file` (if given), printing a warning on stderr when others can read it.
pub fn load_psk(path: Option<&std::path::Path>) -> anyhow::Result<Option<wire::auth::Psk>> {
    let Some(path) = path else {
        return Ok(None);
    };
    let key = wire::auth::Psk::load(path).map_err(|e| anyhow::anyhow!("{e}"))?;
    if let Some(w) = wire::auth::psk_file_warning(path) {
        eprintln!("warning: {w}");
    }
    Ok(Some(key))
}

/// Where iperf3 and we read an iperf3 password: never the command line, which others
/// can see in the process list.
pub const IPERF3_PASSWORD_ENV: &str = "IPERF3_PASSWORD";

/// `--iperf3-username USER --iperf3-rsa-public-key FILE` (with the password from
/// `IPERF3_PASSWORD`, as iperf3 reads it): the credentials for an iperf3 server that
/// requires authentication; `None` without the flags. Refused unless `peer` is iperf3.
pub fn iperf3_auth(
    peer: Peer,
    username: Option<&str>,
    public_key: Option<&std::path::Path>,
) -> anyhow::Result<Option<iperf3::auth::ClientAuth>> {
    let (Some(username), Some(key)) = (username, public_key) else {
        return Ok(None);
    };
    if peer != Peer::Iperf3 {
        anyhow::bail!(
            "--iperf3-username and --iperf3-rsa-public-key are for an iperf3 server: add --peer iperf3"
        );
    }
    let password = std::env::var(IPERF3_PASSWORD_ENV).map_err(|_| {
        anyhow::anyhow!(
            "--iperf3-username: set the password in the environment variable \
             {IPERF3_PASSWORD_ENV} (as iperf3 reads it), not on the command line"
        )
    })?;
    let auth = iperf3::auth::ClientAuth::from_file(username, &password, key)
        .map_err(|e| anyhow::anyhow!("{e}"))
        .map_err(|e| e.context("cannot set up iperf3 authentication"))?;
    Ok(Some(auth))
}

// Every quantity flag reads through `wire::quantity`, the one grammar for bytes, rates
// and durations (README "Quantities"); these adapt it to clap's `value_parser`.

/// `-b/--rate`: bits/s (100M, 100mbit) or packets/s (50kpps).
pub fn parse_rate(s: &str) -> Result<Rate, impl std::error::Error + Send + Sync + 'static> {
    wire::quantity::parse_rate(s)
}

/// A rate that must be bits per second (`--link-rate`, `--max-rate`).
pub fn parse_bit_rate(s: &str) -> Result<u64, impl std::error::Error + Send + Sync + 'static> {
    wire::quantity::parse_bit_rate(s)
}

/// Socket buffer and payload sizes: 1408, 64K / 64KiB, 4M.
pub fn parse_bytes_u32(s: &str) -> Result<u32, impl std::error::Error + Send + Sync + 'static> {
    wire::quantity::parse_bytes_u32(s)
}

/// Byte counts kept as 64 bits (study socket options before their range check).
pub fn parse_bytes_u64(s: &str) -> Result<u64, impl std::error::Error + Send + Sync + 'static> {
    wire::quantity::parse_bytes(s)
}

/// Durations kept as seconds: 10, 10s, 500ms, 2min.
pub fn parse_secs(s: &str) -> Result<f64, impl std::error::Error + Send + Sync + 'static> {
    wire::quantity::parse_duration_s(s)
}

/// `--lab` / `--topology`: p2p or client-server.
pub fn parse_topology(s: &str) -> Result<lab::Topology, lab::LabError> {
    s.parse()
}

/// `--lab-drop`, `lab up --drop`: one drop rule by name.
pub fn parse_path_drop(s: &str) -> Result<lab::PathDrop, lab::LabError> {
    s.parse()
}

/// `--link` (model), `--lab-link`, `lab up --link`: a link as `model::link::parse`
/// reads it. A bad link is said with the value quoted visibly escaped by
/// `model::LinkError` (`'tbf:\u{1b}[31m'`), not raw as clap's "invalid value '…'"
/// would quote it (an escape sequence there reaches the terminal or is dropped).
#[derive(Clone, Copy, Debug)]
pub struct LinkParser;

impl clap::builder::TypedValueParser for LinkParser {
    type Value = model::Link;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<model::Link, clap::Error> {
        model::link::parse(&value.to_string_lossy()).map_err(|e| {
            let flag = arg.map_or_else(|| "--link".to_string(), ToString::to_string);
            clap::Error::raw(
                clap::error::ErrorKind::ValueValidation,
                format!("invalid value for '{flag}': {e}\n"),
            )
            .with_cmd(cmd)
        })
    }
}

/// `--lab-rate` / `lab up --rate`: a tbf rate in bits per second.
pub fn parse_lab_rate(s: &str) -> anyhow::Result<u64> {
    Ok(lab::check_rate_bps(parse_bit_rate(s)?)?)
}

pub use runner::literal_family;

/// `run -f`: a target given in one family only (an IP-literal HOST, or --host4/--host6
/// alone) decides the family (`-f` is needed only for names and both hosts, where it
/// defaults to 4); an `-f` that contradicts it is refused with the fix.
pub fn family_of(hosts: &runner::Hosts, flag: Option<Family>) -> anyhow::Result<Family> {
    let only = hosts.families().and_then(|f| f.first().copied());
    if let (Some(only), None, Some(f)) =
        (only, hosts.host.as_deref().and_then(literal_family), flag)
    {
        if only != f {
            anyhow::bail!(
                "-f {} asks for {f} but only an {only} server is given; add --host{} ADDR or \
                 drop -f",
                f.number(),
                f.number()
            );
        }
    }
    let host = hosts.host.as_deref();
    match (host.and_then(literal_family).or(only), flag) {
        (Some(lit), Some(f)) if lit != f => anyhow::bail!(
            "{} is an {lit} address but -f {} asks for {f}; drop -f (an address decides its \
             family) or give a host name that has an {f} address",
            host.unwrap_or_default(),
            f.number()
        ),
        (Some(lit), _) => Ok(lit),
        (None, Some(f)) => Ok(f),
        (None, None) => Ok(Family::V4),
    }
}

/// `--db` and `DUALPERF_DB`: an SQLite file or a `postgres://` URL (any bytes a path
/// may hold; what is not a PostgreSQL URL is a file).
pub fn db_target_parser() -> impl clap::builder::TypedValueParser<Value = store::DbTarget> {
    use clap::builder::TypedValueParser;
    clap::builder::OsStringValueParser::new().map(|s| store::DbTarget::parse(&s))
}

/// The `--db` option of every command that reads or writes the results database: one
/// help text, one default, one environment variable.
#[derive(clap::Args, Debug, Default, Clone)]
pub struct DbArg {
    /// Results database: an SQLite file or a postgres:// URL.
    ///
    /// postgres://USER@HOST/DB?sslmode=require is shared by several controllers.
    #[arg(
        long = "db",
        env = store::DB_ENV,
        hide_env_values = true,
        value_name = "FILE|URL",
        default_value = "dualperf.db",
        value_parser = db_target_parser()
    )]
    pub target: store::DbTarget,
}

/// `--connect-timeout` of `run` and `study`: one meaning, and the runner's default.
#[derive(clap::Args, Debug, Clone)]
pub struct ConnectTimeoutArg {
    /// Seconds each run waits for its control connection (0.01 to 600).
    #[arg(
        long = "connect-timeout",
        value_name = "SECS",
        default_value_t = runner::target::DEFAULT_CONNECT_TIMEOUT.as_secs_f64()
    )]
    pub secs: f64,
}

impl Default for ConnectTimeoutArg {
    fn default() -> ConnectTimeoutArg {
        ConnectTimeoutArg {
            secs: runner::target::DEFAULT_CONNECT_TIMEOUT.as_secs_f64(),
        }
    }
}

/// What a file given as a results database is, when it is not one: "… is empty: not a
/// dualperf database" or "… is not an SQLite database" (rather than SQLite's or the
/// schema check's words). A missing file and a real SQLite file pass, and an empty one
/// when it is about to be written (`study`, `import`: SQLite makes it a database).
pub fn check_database_file(db: &std::path::Path, empty_ok: bool) -> anyhow::Result<()> {
    use std::io::Read;
    // A FIFO, socket, device or directory is refused before it is opened (opening a
    // FIFO blocks until a writer comes).
    store::check_database_path(db)?;
    let Ok(mut f) = std::fs::File::open(db) else {
        return Ok(());
    };
    let mut head = [0u8; 16];
    let mut got = 0;
    while got < head.len() {
        match f.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) => anyhow::bail!("cannot read {}: {e}", db.display()),
        }
    }
    if got == 0 && empty_ok {
        return Ok(());
    }
    if got == 0 {
        anyhow::bail!(
            "{} is empty: not a dualperf database (a study writes one: dualperf study --db {}; \
             or remove the empty file)",
            db.display(),
            db.display()
        );
    }
    if &head[..got] != b"SQLite format 3\0" {
        anyhow::bail!(
            "{} is not an SQLite database, so not a dualperf results database; pass the file \
             `dualperf study` wrote (default dualperf.db) with --db",
            db.display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ip_literal_decides_the_family() {
        let h = |s: &str| runner::Hosts::one(s);
        assert_eq!(family_of(&h("fd00:231::2"), None).unwrap(), Family::V6);
        assert_eq!(family_of(&h("[::1]"), None).unwrap(), Family::V6);
        assert_eq!(family_of(&h("10.0.0.1"), None).unwrap(), Family::V4);
        assert_eq!(
            family_of(&h("10.0.0.1"), Some(Family::V4)).unwrap(),
            Family::V4
        );
        assert_eq!(family_of(&h("example.org"), None).unwrap(), Family::V4);
        assert_eq!(
            family_of(&h("example.org"), Some(Family::V6)).unwrap(),
            Family::V6
        );
        assert_eq!(
            family_of(&runner::Hosts::default(), None).unwrap(),
            Family::V4
        );
        let e = family_of(&h("::1"), Some(Family::V4))
            .unwrap_err()
            .to_string();
        assert!(e.contains("drop -f"), "{e}");
    }

    #[test]
    fn a_host_given_for_one_family_decides_the_runs_family() {
        let only6 = runner::Hosts {
            host6: Some("::1".into()),
            ..Default::default()
        };
        assert_eq!(family_of(&only6, None).unwrap(), Family::V6);
        let e = family_of(&only6, Some(Family::V4)).unwrap_err().to_string();
        assert!(e.contains("add --host4 ADDR"), "{e}");
        let both = runner::Hosts {
            host4: Some("127.0.0.1".into()),
            host6: Some("::1".into()),
            ..Default::default()
        };
        assert_eq!(family_of(&both, Some(Family::V6)).unwrap(), Family::V6);
        assert_eq!(family_of(&both, None).unwrap(), Family::V4);
    }
}
