//! Helpers shared by the lab integration tests: the root/CI gate, unique lab names,
//! "nothing left" checks, and small UDP/TCP exchanges run inside namespaces.
#![allow(dead_code)]

use dualperf_lab as lab;
use lab::LabError;
use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

/// True when labs can be built. Without root outside CI the test is skipped with a
/// printed reason; in CI (or with root but a broken setup) it fails.
pub fn labs_available() -> bool {
    match lab::check_privileges() {
        Ok(()) => true,
        Err(e @ LabError::NotRoot) if std::env::var_os("CI").is_none() => {
            eprintln!("SKIPPED: {e}");
            false
        }
        Err(e) => panic!("network-namespace labs cannot be built here: {e}"),
    }
}

/// A lab name unique to this test process and `tag`.
pub fn unique_name(tag: &str) -> String {
    format!("t{}{tag}", std::process::id())
}

/// Network namespaces of lab `name` still present (`ip netns list`).
pub fn leftover_namespaces(name: &str) -> Vec<String> {
    let out = std::process::Command::new("ip")
        .args(["netns", "list"])
        .output()
        .expect("ip netns list");
    let prefix = format!("dpl-{name}-");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|ns| ns.starts_with(&prefix))
        .map(String::from)
        .collect()
}

/// Lab veth names visible in the root namespace (there must never be any).
pub fn root_ns_lab_links() -> Vec<String> {
    let out = std::process::Command::new("ip")
        .args(["-o", "link", "show"])
        .output()
        .expect("ip link");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split(':').nth(1).map(|s| s.trim().to_string()))
        .filter(|dev| dev.starts_with("dp-"))
        .collect()
}

pub fn assert_nothing_left(name: &str) {
    assert_eq!(
        leftover_namespaces(name),
        Vec::<String>::new(),
        "namespaces of lab {name} left behind"
    );
    assert_eq!(
        root_ns_lab_links(),
        Vec::<String>::new(),
        "lab links in the root namespace"
    );
}

/// Runs `f` on a fresh thread that has entered namespace `ns`.
pub fn in_ns<T: Send + 'static>(
    ns: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> thread::JoinHandle<T> {
    let ns = ns.to_string();
    thread::spawn(move || {
        lab::enter_ns(&ns).expect("enter namespace");
        f()
    })
}

/// One UDP datagram from `client_ns` to `server_addr` (answered from `server_ns`);
/// returns the reply, or an error text when nothing came back within 2 s.
pub fn udp_echo(
    client_ns: &str,
    server_ns: &str,
    server_addr: IpAddr,
    port: u16,
) -> Result<Vec<u8>, String> {
    let (ready_tx, ready_rx) = mpsc::channel();
    let server = in_ns(server_ns, move || -> Result<(), String> {
        let sock = UdpSocket::bind(SocketAddr::new(server_addr, port))
            .map_err(|e| format!("bind: {e}"))?;
        sock.set_read_timeout(Some(Duration::from_secs(3)))
            .map_err(|e| e.to_string())?;
        ready_tx.send(()).map_err(|e| e.to_string())?;
        let mut buf = [0u8; 64];
        let (n, peer) = sock
            .recv_from(&mut buf)
            .map_err(|e| format!("server recv: {e}"))?;
        sock.send_to(&buf[..n], peer)
            .map_err(|e| format!("server send: {e}"))?;
        Ok(())
    });
    ready_rx
        .recv_timeout(Duration::from_secs(3))
        .map_err(|_| server_error(&server))?;
    let client = in_ns(client_ns, move || -> Result<Vec<u8>, String> {
        let local: SocketAddr = if server_addr.is_ipv4() {
            "0.0.0.0:0".parse().unwrap()
        } else {
            "[::]:0".parse().unwrap()
        };
        let sock = UdpSocket::bind(local).map_err(|e| format!("client bind: {e}"))?;
        sock.set_read_timeout(Some(Duration::from_secs(2)))
            .map_err(|e| e.to_string())?;
        sock.send_to(b"dualperf-lab-ping", SocketAddr::new(server_addr, port))
            .map_err(|e| format!("client send: {e}"))?;
        let mut buf = [0u8; 64];
        let (n, _) = sock
            .recv_from(&mut buf)
            .map_err(|e| format!("no reply: {e}"))?;
        Ok(buf[..n].to_vec())
    });
    let reply = client
        .join()
        .map_err(|_| "client thread panicked".to_string())?;
    server
        .join()
        .map_err(|_| "server thread panicked".to_string())??;
    reply
}

fn server_error(h: &thread::JoinHandle<Result<(), String>>) -> String {
    format!("server did not start (finished: {})", h.is_finished())
}

/// A TCP connection from `client_ns` to `server_addr:port` carrying 100 kB.
pub fn tcp_transfer(
    client_ns: &str,
    server_ns: &str,
    server_addr: IpAddr,
    port: u16,
) -> Result<usize, String> {
    const BYTES: usize = 100_000;
    let (ready_tx, ready_rx) = mpsc::channel();
    let server = in_ns(server_ns, move || -> Result<usize, String> {
        let listener = TcpListener::bind(SocketAddr::new(server_addr, port))
            .map_err(|e| format!("listen: {e}"))?;
        ready_tx.send(()).map_err(|e| e.to_string())?;
        let (mut conn, _) = listener.accept().map_err(|e| format!("accept: {e}"))?;
        conn.set_read_timeout(Some(Duration::from_secs(3)))
            .map_err(|e| e.to_string())?;
        let mut got = Vec::new();
        conn.read_to_end(&mut got)
            .map_err(|e| format!("read: {e}"))?;
        Ok(got.len())
    });
    ready_rx
        .recv_timeout(Duration::from_secs(3))
        .map_err(|_| "server did not start".to_string())?;
    let client = in_ns(client_ns, move || -> Result<(), String> {
        let mut conn =
            TcpStream::connect_timeout(&SocketAddr::new(server_addr, port), Duration::from_secs(2))
                .map_err(|e| format!("connect: {e}"))?;
        conn.write_all(&vec![7u8; BYTES])
            .map_err(|e| format!("write: {e}"))?;
        Ok(())
    });
    client
        .join()
        .map_err(|_| "client thread panicked".to_string())??;
    server
        .join()
        .map_err(|_| "server thread panicked".to_string())?
}
