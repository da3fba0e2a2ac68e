//! A throwaway PostgreSQL cluster for tests: `initdb` and `pg_ctl` in a temporary
//! folder, listening on 127.0.0.1 only, on a free port, stopped and deleted on drop.
//!
//! The binaries are looked up under `/usr/lib/postgresql/*/bin` (Debian's `postgresql`
//! package) or in `$PG_BIN`. `initdb` refuses to run as root, so as root the cluster runs
//! as the `postgres` user (Debian creates it) via `runuser`.
//! When no binary is found, [`Cluster::start_or_skip`] returns `None` after printing why,
//! unless the environment variable `CI` is set: then it panics, so CI cannot pass a
//! PostgreSQL test by skipping it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub struct Cluster {
    bin: PathBuf,
    data: PathBuf,
    run_as: Option<String>,
    pub port: u16,
    _dir: tempfile::TempDir,
}

/// The directory holding `initdb`, `pg_ctl` and `psql`, newest major version first.
pub fn find_bin() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PG_BIN") {
        let p = PathBuf::from(p);
        return p.join("initdb").exists().then_some(p);
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| {
            let e = e.ok()?;
            let v: u32 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((v, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, b)| b)
}

fn is_root() -> bool {
    // The effective uid, read from /proc (no libc call).
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|u| u == "0"))
        })
        .unwrap_or(false)
}

impl Cluster {
    /// Starts a cluster, or explains why there is none (see the module doc).
    pub fn start_or_skip(test: &str) -> Option<Cluster> {
        let Some(bin) = find_bin() else {
            let why =
                "no PostgreSQL binaries (initdb) under /usr/lib/postgresql/*/bin or $PG_BIN; \
                       install Debian's `postgresql` package";
            if std::env::var_os("CI").is_some() {
                panic!("{test}: CI is set and {why}");
            }
            eprintln!("{test}: SKIPPED: {why}");
            return None;
        };
        Some(Cluster::start(bin))
    }

    fn start(bin: PathBuf) -> Cluster {
        let dir = tempfile::tempdir().expect("temp dir");
        let run_as = is_root().then(|| "postgres".to_string());
        if run_as.is_some() {
            // The cluster's user must own its folder (and reach it through the temp dir).
            chown_postgres(dir.path());
        }
        let data = dir.path().join("data");
        let mut c = Cluster {
            bin,
            data,
            run_as,
            port: 0,
            _dir: dir,
        };
        let init = c.run(
            "initdb",
            &[
                "-D",
                c.data.to_str().unwrap(),
                "-U",
                "dualperf",
                "--auth=trust",
                "--no-sync",
                "-E",
                "UTF8",
            ],
        );
        assert!(init.status.success(), "initdb failed: {}", text(&init));
        // A port that was free a moment ago may be taken before the server binds it:
        // try a few, each start waiting (-w) until the server accepts connections.
        let mut last = String::new();
        for _ in 0..5 {
            c.port = crate::free_port();
            let opts = format!(
                "-c listen_addresses=127.0.0.1 -p {} -c unix_socket_directories={} -c fsync=off",
                c.port,
                c.data.parent().unwrap().display()
            );
            let log = c.data.parent().unwrap().join("server.log");
            let out = c.run(
                "pg_ctl",
                &[
                    "-D",
                    c.data.to_str().unwrap(),
                    "-l",
                    log.to_str().unwrap(),
                    "-o",
                    &opts,
                    "-w",
                    "-t",
                    "120",
                    "start",
                ],
            );
            if out.status.success() {
                return c;
            }
            last = format!(
                "{}\nserver log:\n{}",
                text(&out),
                std::fs::read_to_string(&log).unwrap_or_default()
            );
        }
        panic!("pg_ctl start failed 5 times: {last}");
    }

    /// `postgres://dualperf@127.0.0.1:PORT/DB` (trust authentication, no password).
    pub fn url(&self, db: &str) -> String {
        format!("postgres://dualperf@127.0.0.1:{}/{db}", self.port)
    }

    /// Runs one SQL command with `psql` over TCP; stdout, or a panic naming stderr.
    pub fn psql(&self, db: &str, sql: &str) -> String {
        let out = self.run(
            "psql",
            &[
                "-X",
                "-q",
                "-A",
                "-t",
                "-v",
                "ON_ERROR_STOP=1",
                "-d",
                &self.url(db),
                "-c",
                sql,
            ],
        );
        assert!(out.status.success(), "psql {sql:?}: {}", text(&out));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// A new, empty database on this cluster; its URL.
    pub fn create_db(&self, name: &str) -> String {
        self.psql("postgres", &format!("CREATE DATABASE {name}"));
        self.url(name)
    }

    /// Ends every other session connected to `db` (`pg_terminate_backend`), as a
    /// server restart or a network cut would; how many it ended.
    pub fn terminate_sessions(&self, db: &str) -> usize {
        self.psql(
            "postgres",
            &format!(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
                 WHERE datname = '{db}' AND pid <> pg_backend_pid()"
            ),
        )
        .parse()
        .unwrap_or(0)
    }

    /// A role that must log in with a password over TCP (scram-sha-256), the others
    /// keeping trust authentication.
    pub fn add_password_user(&self, user: &str, password: &str) {
        self.psql(
            "postgres",
            &format!("CREATE ROLE {user} LOGIN SUPERUSER PASSWORD '{password}'"),
        );
        let hba = self.data.join("pg_hba.conf");
        let old = std::fs::read_to_string(&hba).expect("read pg_hba.conf");
        let line = format!("host all {user} 127.0.0.1/32 scram-sha-256\n");
        std::fs::write(&hba, line + &old).expect("write pg_hba.conf");
        self.psql("postgres", "SELECT pg_reload_conf()");
    }

    /// Turns TLS on with a self-signed certificate for 127.0.0.1 (made with the
    /// `openssl` tool); the certificate's PEM file, to use as `sslrootcert`. None, with
    /// the reason printed, when `openssl` cannot be run.
    pub fn enable_tls(&self) -> Option<PathBuf> {
        let crt = self.data.join("server.crt");
        let key = self.data.join("server.key");
        let out = Command::new("openssl")
            .args([
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
            ])
            .args([
                "-subj",
                "/CN=127.0.0.1",
                "-addext",
                "subjectAltName=IP:127.0.0.1",
            ])
            .arg("-keyout")
            .arg(&key)
            .arg("-out")
            .arg(&crt)
            .output();
        match out {
            Ok(o) if o.status.success() => {}
            other => {
                eprintln!("SKIPPED TLS: openssl req failed: {other:?}");
                return None;
            }
        }
        if self.run_as.is_some() {
            for f in [&crt, &key] {
                chown_postgres(f);
            }
        }
        let chmod = Command::new("chmod").arg("600").arg(&key).output();
        assert!(chmod.is_ok_and(|o| o.status.success()), "chmod server.key");
        self.psql("postgres", "ALTER SYSTEM SET ssl = on");
        self.psql("postgres", "SELECT pg_reload_conf()");
        // The reload is asynchronous: wait until new sessions see it.
        for _ in 0..100 {
            if self.psql("postgres", "SHOW ssl") == "on" {
                return Some(crt);
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        panic!("ssl did not turn on");
    }

    /// Stops the server now (fast shutdown), as a test of a lost server would.
    pub fn stop(&self) -> Output {
        self.run(
            "pg_ctl",
            &[
                "-D",
                self.data.to_str().unwrap(),
                "-m",
                "fast",
                "-w",
                "stop",
            ],
        )
    }

    fn run(&self, tool: &str, args: &[&str]) -> Output {
        let exe = self.bin.join(tool);
        let mut cmd = match &self.run_as {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--"]).arg(&exe);
                c
            }
            None => Command::new(&exe),
        };
        cmd.args(args)
            .current_dir(self.data.parent().unwrap())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", exe.display()))
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if self.data.join("postmaster.pid").exists() {
            let _ = self.stop();
        }
    }
}

fn chown_postgres(dir: &Path) {
    let out = Command::new("chown")
        .args(["postgres:postgres"])
        .arg(dir)
        .output()
        .expect("run chown");
    assert!(
        out.status.success(),
        "chown postgres {}: {}",
        dir.display(),
        text(&out)
    );
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}
