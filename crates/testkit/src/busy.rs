//! An iperf3 server that is always busy: it answers every connection ACCESS_DENIED
//! after the client's cookie, as iperf3 does while another client's test runs.

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Starts the busy server on 127.0.0.1 for at most `max` connections (then its thread
/// ends); gives its port and the count of connections it answered so far.
pub fn busy_iperf3_server(max: usize) -> (u16, Arc<Mutex<usize>>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let port = listener.local_addr().expect("its address").port();
    let seen = Arc::new(Mutex::new(0));
    let count = seen.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming().take(max) {
            let Ok(mut conn) = conn else { continue };
            if let Ok(mut n) = count.lock() {
                *n += 1;
            }
            let _ = conn.set_read_timeout(Some(Duration::from_secs(2)));
            let mut cookie = [0u8; 37];
            let _ = conn.read_exact(&mut cookie);
            let _ = conn.write_all(&[0xff]);
        }
    });
    (port, seen)
}
