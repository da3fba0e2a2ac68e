//! Runs the iperf3-compatible server on the given address (default [::]:5201) until
//! killed; prints a line per finished session. For manual interoperability checks.

use dualperf_iperf3::server::Server;
use std::sync::atomic::AtomicBool;

fn main() {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "[::]:5201".into());
    let Ok(addr) = addr.parse() else {
        eprintln!("usage: iperf3_serve [ADDR:PORT]");
        std::process::exit(2);
    };
    let server = match Server::bind(&[addr]) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let reports = server.reports();
    std::thread::spawn(move || {
        let mut seen = 0;
        loop {
            std::thread::sleep(std::time::Duration::from_millis(200));
            let Ok(r) = reports.lock() else { return };
            for rep in &r[seen..] {
                println!("{:?}", rep);
            }
            seen = r.len();
        }
    });
    let never = AtomicBool::new(false);
    if let Err(e) = server.serve(&never) {
        eprintln!("{e}");
    }
}
