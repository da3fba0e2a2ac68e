//! Runs one test against an iperf3 server and prints the metrics, for manual checks:
//! `iperf3_client HOST PORT tcp|udp [SECONDS] [forward|reverse|bidir] [STREAMS] [RATE_BPS]`.

use dualperf_iperf3::{run, ClientOptions};
use wire::spec::{Bound, Direction, Family, Rate, TestKind, TestSpec};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize, d: &str| args.get(i).cloned().unwrap_or_else(|| d.to_string());
    let host = arg(1, "127.0.0.1");
    let port: u16 = arg(2, "5201").parse().unwrap_or(5201);
    let kind = if arg(3, "tcp") == "udp" {
        TestKind::UdpStream
    } else {
        TestKind::TcpStream
    };
    let secs: f64 = arg(4, "1").parse().unwrap_or(1.0);
    let family = if host.contains(':') {
        Family::V6
    } else {
        Family::V4
    };
    let payload = if kind == TestKind::UdpStream {
        1400
    } else {
        131_072
    };
    let mut spec = TestSpec::new(kind, family, payload);
    spec.bound = Bound::DurationNs((secs * 1e9) as u64);
    spec.direction = match arg(5, "forward").as_str() {
        "reverse" => Direction::Reverse,
        "bidir" => Direction::Bidir,
        _ => Direction::Forward,
    };
    spec.streams = arg(6, "1").parse().unwrap_or(1);
    spec.rate = arg(7, "").parse().ok().map(Rate::BitsPerSec);
    match run(&host, port, &spec, &ClientOptions::default()) {
        Ok(r) => {
            for m in &r.metrics {
                println!("{:28} {:>18.3} {}", m.name, m.value, m.unit);
            }
            println!("unavailable: {}", r.unavailable.join(", "));
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
