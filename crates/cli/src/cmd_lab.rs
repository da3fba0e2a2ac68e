//! `dualperf lab`: build, list and remove network-namespace testbeds (the `lab` crate
//! does the work; this module parses arguments and prints).

use anyhow::Context;
use clap::{Args, Subcommand, ValueEnum};
use lab::{Lab, LabSpec, LinkEmulation, Role, Topology};
use std::process::{Command, ExitCode};

#[derive(Args, Debug)]
pub struct LabArgs {
    #[command(subcommand)]
    command: LabCommand,
}

#[derive(Subcommand, Debug)]
enum LabCommand {
    /// Create a lab: namespaces, veth links, IPv4 + IPv6 addresses, optional shaping.
    Up(UpArgs),
    /// Remove labs by name (namespaces, links and the processes inside them).
    Down(DownArgs),
    /// List the labs on this machine.
    List,
    /// Run a command inside a lab's client, server or router namespace.
    ///
    /// As `ip netns exec dpl-NAME-ROLE CMD`: `dualperf lab exec p2p-1 server -- dualperf
    /// server`. Exits with the command's status.
    Exec(ExecArgs),
}

#[derive(Args, Debug)]
struct UpArgs {
    /// p2p: two hosts on one link; client-server: client and server joined by a router.
    #[arg(long, value_enum, default_value_t = TopologyArg::P2p)]
    topology: TopologyArg,
    /// Shape each host's egress with tbf at this rate (bits/s: 100mbit, 1gbit, 500k).
    #[arg(long, value_name = "RATE", value_parser = crate::args::parse_lab_rate)]
    rate: Option<u64>,
    /// Emulate a link: tbf at its rate plus a per-packet overhead for what each frame
    /// costs beyond its bytes (802.11a/b/g/n/ac/ax: the airtime model's contention,
    /// preamble, SIFS and ACK under its default assumptions; ethernet:RATE: FCS,
    /// preamble and gap; tbf:RATE: none). LINK as in `dualperf model --link`.
    #[arg(long, value_name = "LINK", conflicts_with = "rate", value_parser = crate::args::LinkParser)]
    link: Option<model::Link>,
    /// With an 802.11n/ac/ax --link: MPDUs per A-MPDU the emulated sender aggregates
    /// (the fixed airtime of one access is divided over them; default 1).
    #[arg(long, value_name = "N", requires = "link")]
    ampdu: Option<u32>,
    /// MTU of every veth link, in bytes (1280–65535; default 1500).
    #[arg(long, value_name = "BYTES")]
    mtu: Option<u32>,
    /// client-server only: path MTU toward the server, bytes (1280 to the links' MTU),
    /// a route MTU on the router's link to the server; the router answers bigger
    /// packets with Packet Too Big / fragmentation-needed.
    #[arg(long, value_name = "BYTES")]
    path_mtu: Option<u32>,
    /// client-server only: what the router drops (nftables rules): icmp-too-big,
    /// fragments, hop-by-hop, dest-opts; repeatable.
    #[arg(long = "drop", value_name = "WHAT", value_parser = crate::args::parse_path_drop)]
    drops: Vec<lab::PathDrop>,
    /// Lab name (namespaces are dpl-NAME-client, dpl-NAME-server, dpl-NAME-router);
    /// default: the first free TOPOLOGY-N.
    #[arg(long)]
    name: Option<String>,
    /// Keep the lab only while this command runs; Ctrl-C removes it.
    #[arg(long)]
    foreground: bool,
}

#[derive(Args, Debug)]
struct DownArgs {
    /// Names of the labs to remove.
    #[arg(required_unless_present = "all")]
    names: Vec<String>,
    /// Remove every dualperf lab on this machine.
    #[arg(long, conflicts_with = "names")]
    all: bool,
}

#[derive(Args, Debug)]
struct ExecArgs {
    /// The lab's name (`dualperf lab list`).
    name: String,
    /// The namespace to run in.
    #[arg(value_enum)]
    role: RoleArg,
    /// The command and its arguments (after `--`).
    #[arg(last = true, required = true)]
    command: Vec<String>,
}

#[derive(ValueEnum, Clone, Copy, Debug)]
enum TopologyArg {
    P2p,
    #[value(alias = "routed")]
    ClientServer,
}

#[derive(ValueEnum, Clone, Copy, Debug)]
enum RoleArg {
    Client,
    Server,
    Router,
}

pub fn main(args: LabArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        LabCommand::Up(a) => up(a),
        LabCommand::Down(a) => down(a),
        LabCommand::List => list(),
        LabCommand::Exec(a) => exec(a),
    }
}

fn up(args: UpArgs) -> anyhow::Result<ExitCode> {
    let topology = match args.topology {
        TopologyArg::P2p => Topology::P2p,
        TopologyArg::ClientServer => Topology::ClientServer,
    };
    let name = match args.name {
        Some(n) => n,
        None => first_free_name(topology)?,
    };
    let spec = LabSpec {
        name,
        topology,
        rate_bps: args.rate,
        mtu: args.mtu,
    };
    let path = lab::PathSpec {
        mtu_bytes: args.path_mtu,
        drops: args.drops.iter().copied().collect(),
    };
    let emulation = match &args.link {
        Some(link) => Some(emulation(link, args.mtu, args.ampdu)?),
        None => None,
    };
    let lab = Lab::create_with_path(&spec, &path, emulation.as_ref())?;
    for w in lab.warnings() {
        eprintln!("dualperf: warning: {w}");
    }
    print_lab(&lab)?;
    if args.foreground {
        outln!("lab {} is up; press Ctrl-C to remove it", lab.name())?;
        flush_stdout();
        loop {
            // The lab crate's signal guard removes the lab and exits on SIGINT/SIGTERM.
            std::thread::park();
        }
    }
    let name = lab.persist();
    outln!("lab {name} is up; remove it with `dualperf lab down {name}`")?;
    Ok(ExitCode::SUCCESS)
}

/// The tbf rate and per-packet overhead that stand for `link` (see
/// `lab::LinkEmulation::of`).
pub fn emulation(
    link: &model::Link,
    mtu: Option<u32>,
    ampdu: Option<u32>,
) -> anyhow::Result<LinkEmulation> {
    Ok(LinkEmulation::of(link, mtu, ampdu)?)
}

fn first_free_name(topology: Topology) -> anyhow::Result<String> {
    let taken: Vec<String> = lab::list_labs()?.into_iter().map(|l| l.name).collect();
    (1..10_000)
        .map(|n| format!("{}-{n}", topology.name()))
        .find(|n| !taken.contains(n))
        .context("no free lab name; pass --name")
}

fn print_lab(lab: &Lab) -> std::io::Result<()> {
    let d = lab.describe();
    let get = |k: &str| d.get(&format!("lab.{k}")).cloned().unwrap_or_default();
    outln!(
        "lab {} ({}, MTU {} bytes)",
        lab.name(),
        get("topology"),
        get("mtu_bytes")
    )?;
    outln!("  shaping: {}", get("shaping"))?;
    if d.contains_key("lab.emulation") {
        outln!("  emulating {}: {}", get("emulated_link"), get("emulation"))?;
    }
    if d.contains_key("lab.path") {
        outln!("  path: {}", get("path"))?;
    }
    outln!(
        "  client  {:<28} {:<12} {}",
        get("client_ns"),
        get("client_addr_v4"),
        get("client_addr_v6")
    )?;
    outln!(
        "  server  {:<28} {:<12} {}",
        get("server_ns"),
        get("server_addr_v4"),
        get("server_addr_v6")
    )?;
    if let Some(router) = lab.router_ns() {
        outln!("  router  {router}")?;
    }
    // Printed so that it works when pasted: this very binary (by name when that is what
    // PATH finds, since `sudo` and `ip netns exec` ignore shell aliases), and the server's
    // IPv6 address, whose family `run` takes from the address itself.
    let exe = self_command();
    outln!(
        "  run a server:  ip netns exec {} {exe} server",
        lab.server_ns()
    )?;
    outln!(
        "  run a client:  ip netns exec {} {exe} run {}",
        lab.client_ns(),
        get("server_addr_v6")
    )
}

/// `dualperf` if PATH leads to this executable, else its full path.
fn self_command() -> String {
    let Ok(me) = std::env::current_exe().and_then(std::fs::canonicalize) else {
        return "dualperf".into();
    };
    let on_path = std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path)
            .any(|dir| std::fs::canonicalize(dir.join("dualperf")).is_ok_and(|p| p == me))
    });
    if on_path {
        "dualperf".into()
    } else {
        me.display().to_string()
    }
}

fn down(args: DownArgs) -> anyhow::Result<ExitCode> {
    let names: Vec<String> = if args.all {
        lab::list_labs()?.into_iter().map(|l| l.name).collect()
    } else {
        args.names
    };
    let mut failed = false;
    for name in &names {
        match lab::destroy(name) {
            Ok(()) => outln!("removed lab {name}")?,
            Err(e) => {
                eprintln!("dualperf: error: {e}");
                failed = true;
            }
        }
    }
    if args.all && names.is_empty() {
        outln!("no labs")?;
    }
    Ok(if failed {
        crate::exit::code(crate::exit::ERROR)
    } else {
        ExitCode::SUCCESS
    })
}

fn list() -> anyhow::Result<ExitCode> {
    let labs = lab::list_labs()?;
    if labs.is_empty() {
        outln!("no labs")?;
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        "{:<20} {:<14} {:<10} {:<6} NAMESPACES",
        "NAME",
        "TOPOLOGY",
        "RATE",
        "MTU"
    )?;
    for l in labs {
        let topology = l.topology.map_or("incomplete", |t| t.name());
        let mtu = l.mtu_bytes.map_or("-".to_string(), |m| m.to_string());
        let rate = l.rate.unwrap_or_else(|| "-".to_string());
        outln!(
            "{:<20} {:<14} {:<10} {:<6} {}",
            l.name,
            topology,
            rate,
            mtu,
            l.namespaces.join(" ")
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

fn exec(args: ExecArgs) -> anyhow::Result<ExitCode> {
    lab::validate_name(&args.name)?;
    let role = match args.role {
        RoleArg::Client => Role::Client,
        RoleArg::Server => Role::Server,
        RoleArg::Router => Role::Router,
    };
    let ns = lab::ns_name(&args.name, role);
    let (program, rest) = args.command.split_first().context("no command given")?;
    let mut cmd = Command::new(program);
    cmd.args(rest);
    let status = lab::spawn_in_ns(&ns, &mut cmd)?
        .wait()
        .context("waiting for the command")?;
    Ok(ExitCode::from(lab::shell_exit_code(status)))
}

fn flush_stdout() {
    use std::io::Write;
    let _ = std::io::stdout().flush();
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn lab_exec_is_listed_in_the_help_it_is_documented_in() {
        let mut cmd = crate::Cli::command();
        cmd.build();
        let lab = cmd.find_subcommand_mut("lab").expect("lab");
        let help = lab.render_help().to_string();
        assert!(
            help.contains("exec") && help.contains("Run a command inside a lab's"),
            "{help}"
        );
        let exec = lab.find_subcommand_mut("exec").expect("lab exec");
        assert!(!exec.is_hide_set());
        let long = exec.render_long_help().to_string();
        assert!(
            long.contains("-- dualperf") && long.contains("command's status"),
            "{long}"
        );
    }
}
