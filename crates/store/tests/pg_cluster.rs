//! The throwaway PostgreSQL cluster that the store's PostgreSQL tests will use: it
//! starts on a free loopback port, answers SQL over TCP, and a stopped server refuses
//! connections. Skipped (with the reason) when no PostgreSQL is installed and CI is
//! unset; fails under CI.

use testkit::pg::Cluster;

#[test]
fn throwaway_cluster_starts_answers_and_stops() {
    let Some(pg) = Cluster::start_or_skip("throwaway_cluster_starts_answers_and_stops") else {
        return;
    };
    assert_eq!(pg.psql("postgres", "SELECT 6 * 7"), "42");
    pg.psql("postgres", "CREATE DATABASE t");
    pg.psql("t", "CREATE TABLE x (uuid TEXT PRIMARY KEY)");
    pg.psql("t", "INSERT INTO x VALUES ('a'), ('b')");
    assert_eq!(pg.psql("t", "SELECT count(*) FROM x"), "2");
    let port = pg.port;
    let stop = pg.stop();
    assert!(stop.status.success(), "{stop:?}");
    // The port no longer answers: a stopped server is a refused connection.
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());
}
