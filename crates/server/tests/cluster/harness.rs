//! The cluster fixture: a fresh PostgreSQL database and a NATS subject prefix of the
//! test's own, N real `parchis-server` processes in cluster mode on free loopback ports,
//! signals (SIGKILL, SIGSTOP, SIGCONT, SIGTERM), restarts, and reads of the database.
//!
//! Cluster tests run one at a time (a process-wide lock): each starts several servers on
//! a 2-core machine, and their failover and drain bounds are about time.
//!
//! Why one file of ~690 lines: the fixture is one type, [`Cluster`], whose start, node
//! processes (with their proxies and clocks), signals and database reads share its
//! fields; its reads of leases and games are in `db.rs`, the audit in `audit.rs`.

use crate::audit;
use crate::common::http_at;
use crate::env::{
    create_database, free_port, pg_hostport, random_hex, services, url_port, with_hostport,
};
use crate::proxy::Proxy;
use serde_json::Value;
use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::Connection;
use std::collections::HashMap;
use std::fs::File;
use std::io::BufRead;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One cluster test at a time in this process.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The admin token of every node (`PARCHIS_ADMIN_TOKEN`).
pub const ADMIN_TOKEN: &str = "test-admin-token";

/// Settings of the nodes of one test cluster.
#[derive(Clone, Debug)]
pub struct Opts {
    /// Nodes started by [`Cluster::start`].
    pub nodes: usize,
    /// `--lease-ttl-ms`.
    pub lease_ttl_ms: u64,
    /// `--lease-renew-ms`.
    pub lease_renew_ms: u64,
    /// `--sweep-ms`.
    pub sweep_ms: u64,
    /// `--drain-timeout-secs`.
    pub drain_timeout_secs: u64,
    /// `--dice-seed` (the same on every node).
    pub dice_seed: u64,
    /// `--max-rooms` of every node (`None`: the default).
    pub max_rooms: Option<usize>,
    /// `(node, delay)`: that node reaches NATS through a proxy that holds everything it
    /// sends for `delay` ([`crate::proxy::delaying`]).
    pub slow_nats: Option<(usize, Duration)>,
    /// Every node reaches PostgreSQL through one [`Proxy`] ([`Cluster::db_proxy`]) that
    /// the test can cut and restore; the test's own pool ([`Cluster::db`]) does not.
    pub db_proxy: bool,
    /// `--commands-per-second` of every node (2000 unless a test measures the limit).
    pub commands_per_second: u32,
    /// Each node reaches NATS through a [`Proxy`] of its own ([`Cluster::nats_proxy`]),
    /// which the test can cut, restore and stall.
    pub nats_proxies: bool,
    /// The nodes use a nats-server of the test's own ([`crate::nats::NatsServer`],
    /// [`Cluster::nats_server`]) on a free port, which the test can stop and start.
    pub own_nats: bool,
    /// Environment variables of every node set after the harness's own (so they replace
    /// them), e.g. a per-address limit a test exercises.
    pub env: Vec<(&'static str, String)>,
    /// `(node, offset)`: that node runs with its wall clock moved by `offset` (libfaketime's
    /// `FAKETIME`, e.g. `"+30s"`, `"-20s"`; Debian's `faketime`), its monotonic clock left
    /// alone ([`crate::env::libfaketime`]: fails under `CI` when it is not installed).
    pub clock_offsets: Vec<(usize, &'static str)>,
}

impl Default for Opts {
    /// Three nodes with short leases (a failover takes about 2 s instead of 3.5 s).
    fn default() -> Opts {
        Opts {
            nodes: 3,
            lease_ttl_ms: 1500,
            lease_renew_ms: 500,
            sweep_ms: 250,
            drain_timeout_secs: 10,
            dice_seed: 7,
            max_rooms: None,
            slow_nats: None,
            db_proxy: false,
            commands_per_second: 2000,
            nats_proxies: false,
            own_nats: false,
            env: Vec::new(),
            clock_offsets: Vec::new(),
        }
    }
}

/// Where the nodes are and which of them are up, shared with the test's clients (they
/// reconnect to a node that is up when theirs dies).
#[derive(Debug)]
pub struct Roster {
    nodes: Mutex<Vec<NodeState>>,
}

#[derive(Clone, Debug)]
struct NodeState {
    addr: SocketAddr,
    up: bool,
    pid: Option<u32>,
    /// When the node was killed or sent SIGTERM.
    downs: Vec<Instant>,
}

impl Roster {
    /// The address of node `i`.
    pub fn addr(&self, i: usize) -> SocketAddr {
        self.lock()[i].addr
    }

    /// How many nodes the cluster has (up or not).
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether node `i` is up (running, or only stopped with SIGSTOP).
    pub fn is_up(&self, i: usize) -> bool {
        self.lock()[i].up
    }

    /// Whether node `i` went down (SIGKILL or SIGTERM) at some moment in `from..=to`.
    pub fn went_down_between(&self, i: usize, from: Instant, to: Instant) -> bool {
        self.lock()[i].downs.iter().any(|t| *t >= from && *t <= to)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<NodeState>> {
        self.nodes.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records which node owns each of the nodes' current connections to the database
    /// (by client port, [`audit::db_ports`]).
    fn sample_ports(&self, ids: &[String], db_port: u16, into: &Mutex<audit::Holders>) {
        let pids: Vec<(usize, u32)> = self
            .lock()
            .iter()
            .enumerate()
            .filter_map(|(i, n)| n.pid.map(|p| (i, p)))
            .collect();
        let mut map = into.lock().unwrap_or_else(|e| e.into_inner());
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        for (i, pid) in pids {
            for port in audit::db_ports(pid, db_port) {
                if let Some(id) = ids.get(i) {
                    audit::record(&mut map, port, id, now_ms);
                }
            }
        }
    }
}

/// A node process.
struct Node {
    id: String,
    port: u16,
    child: Option<Child>,
    log: PathBuf,
}

/// A running test cluster. Dropping it kills every node and drops the database.
pub struct Cluster {
    pub test: String,
    /// The `--cluster` subject prefix.
    pub prefix: String,
    pub opts: Opts,
    pub roster: Arc<Roster>,
    /// A pool on the test's database (never through [`Cluster::db_proxy`]).
    pub db: PgPool,
    /// The proxy between the nodes and PostgreSQL, with [`Opts::db_proxy`].
    pub db_proxy: Option<Proxy>,
    /// Each node's proxy to NATS, by node, with [`Opts::nats_proxies`].
    pub nats_proxies: Vec<Proxy>,
    /// The test's own nats-server, with [`Opts::own_nats`].
    pub nats_server: Option<crate::nats::NatsServer>,
    /// Whether the database audits who writes events ([`audit`]).
    pub audited: bool,
    /// Client port of every database connection seen → the nodes that held it, when.
    ports: Arc<Mutex<audit::Holders>>,
    db_port: u16,
    /// The port sampler's thread and its stop switch (reading `/proc` blocks: never on
    /// the test's runtime, whose two workers run the clients).
    sampler: Option<(Arc<AtomicBool>, std::thread::JoinHandle<()>)>,
    nats_url: String,
    /// libfaketime, with [`Opts::clock_offsets`].
    faketime: Option<PathBuf>,
    /// The NATS URL of the node of [`Opts::slow_nats`] (its proxy).
    slow_nats_url: Option<String>,
    admin_url: String,
    db_name: String,
    db_url: String,
    nodes: Vec<Node>,
    dir: tempfile::TempDir,
    _serial: tokio::sync::MutexGuard<'static, ()>,
}

impl Cluster {
    /// Creates the test's database, starts `opts.nodes` nodes and waits until each is
    /// ready. `None` (after a visible `SKIPPED`) when NATS or PostgreSQL is absent.
    pub async fn start(test: &str, opts: Opts) -> Option<Cluster> {
        let (url, nats_url) = services(test).await?;
        let faketime = if opts.clock_offsets.is_empty() {
            None
        } else {
            Some(crate::env::libfaketime(test)?)
        };
        let serial = SERIAL.lock().await;
        let nats_server = if opts.own_nats {
            Some(crate::nats::NatsServer::start().await)
        } else {
            None
        };
        let nats_url = match &nats_server {
            Some(n) => n.url(),
            None => nats_url,
        };
        let mut nats_proxies = Vec::new();
        if opts.nats_proxies {
            for _ in 0..opts.nodes {
                let upstream = crate::env::nats_hostport(&nats_url);
                nats_proxies.push(Proxy::start(upstream, Duration::ZERO).await);
            }
        }
        let (admin, db_name, db_url) = create_database(&url).await;
        drop(admin);
        let db = PgPoolOptions::new()
            .max_connections(4)
            .connect(&db_url)
            .await
            .expect("connect to the test database");
        let prefix = format!("t{}", random_hex(12));
        let slow_nats_url = match opts.slow_nats {
            Some((_, delay)) => {
                let proxy =
                    crate::proxy::delaying(crate::env::nats_hostport(&nats_url), delay).await;
                Some(format!("nats://{proxy}"))
            }
            None => None,
        };
        let db_proxy = if opts.db_proxy {
            Some(Proxy::start(pg_hostport(&db_url), Duration::ZERO).await)
        } else {
            None
        };
        let roster = Arc::new(Roster {
            nodes: Mutex::new(Vec::new()),
        });
        let mut cluster = Cluster {
            test: test.to_owned(),
            prefix,
            opts: opts.clone(),
            roster,
            db,
            db_proxy,
            nats_proxies,
            nats_server,
            audited: false,
            ports: Arc::new(Mutex::new(HashMap::new())),
            db_port: url_port(&url),
            sampler: None,
            nats_url,
            faketime,
            slow_nats_url,
            admin_url: url,
            db_name,
            db_url,
            nodes: Vec::new(),
            dir: tempfile::tempdir().expect("tempdir"),
            _serial: serial,
        };
        eprintln!(
            "{test}: database {}, NATS prefix {}, logs in {}",
            cluster.db_name,
            cluster.prefix,
            cluster.dir.path().display()
        );
        // The first node applies the migrations alone; the others start together.
        for i in 0..opts.nodes {
            cluster.add_node();
            if i == 0 {
                cluster.wait_ready(0).await;
                cluster.audited = audit::install(&cluster).await;
            }
        }
        for i in 1..opts.nodes {
            cluster.wait_ready(i).await;
        }
        let (roster, ports, db_port) = (
            cluster.roster.clone(),
            cluster.ports.clone(),
            cluster.db_port,
        );
        let ids: Vec<String> = cluster.nodes.iter().map(|n| n.id.clone()).collect();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let thread = std::thread::spawn(move || {
            while !stopped.load(Ordering::Relaxed) {
                roster.sample_ports(&ids, db_port, &ports);
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        cluster.sampler = Some((stop, thread));
        Some(cluster)
    }

    /// The id (`--node-id`) of node `i`: `a`, `b`, `c`…
    pub fn id(&self, i: usize) -> &str {
        &self.nodes[i].id
    }

    /// The index of the node whose id is `id`.
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.id == id)
    }

    /// The address of node `i`.
    pub fn addr(&self, i: usize) -> SocketAddr {
        self.roster.addr(i)
    }

    /// The process id of node `i` (while it runs).
    pub fn pid(&self, i: usize) -> Option<u32> {
        self.nodes[i].child.as_ref().map(Child::id)
    }

    fn add_node(&mut self) {
        let i = self.nodes.len();
        let id = ((b'a' + i as u8) as char).to_string();
        let port = free_port();
        let log = self.dir.path().join(format!("{id}.log"));
        self.nodes.push(Node {
            id,
            port,
            child: None,
            log,
        });
        self.roster.lock().push(NodeState {
            addr: ([127, 0, 0, 1], port).into(),
            up: false,
            pid: None,
            downs: Vec::new(),
        });
        self.spawn(i);
    }

    /// Starts node `i`'s process (same id and port as before), logs appended to its file.
    fn spawn(&mut self, i: usize) {
        let node = &self.nodes[i];
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&node.log)
            .expect("open the node's log");
        let data_dir = self.dir.path().join(format!("data-{}", node.id));
        let o = &self.opts;
        let proxied = self
            .nats_proxies
            .get(i)
            .map(|p| format!("nats://{}", p.addr));
        let nats_url = match (&self.slow_nats_url, o.slow_nats, &proxied) {
            (Some(url), Some((slow, _)), _) if slow == i => url,
            (_, _, Some(url)) => url,
            _ => &self.nats_url,
        };
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_parchis-server"));
        if let Some(max) = o.max_rooms {
            cmd.arg("--max-rooms").arg(max.to_string());
        }
        let offset = o.clock_offsets.iter().find(|(n, _)| *n == i);
        if let (Some((_, offset)), Some(lib)) = (offset, &self.faketime) {
            // The wall clock only: tokio's timers and `Instant` keep the real monotonic
            // clock (a node whose NTP is wrong, not one whose time runs at another rate).
            cmd.env("LD_PRELOAD", lib)
                .env("FAKETIME", offset)
                .env("FAKETIME_DONT_FAKE_MONOTONIC", "1");
        }
        let child = cmd
            .arg("--port")
            .arg(node.port.to_string())
            .arg("--data-dir")
            .arg(&data_dir)
            .arg("--dice-seed")
            .arg(o.dice_seed.to_string())
            .arg("--commands-per-second")
            .arg(o.commands_per_second.to_string())
            .arg("--nats-url")
            .arg(nats_url)
            .arg("--node-id")
            .arg(&node.id)
            .arg("--cluster")
            .arg(&self.prefix)
            .arg("--lease-ttl-ms")
            .arg(o.lease_ttl_ms.to_string())
            .arg("--lease-renew-ms")
            .arg(o.lease_renew_ms.to_string())
            .arg("--sweep-ms")
            .arg(o.sweep_ms.to_string())
            .arg("--drain-timeout-secs")
            .arg(o.drain_timeout_secs.to_string())
            .env("DATABASE_URL", self.node_db_url())
            .env("PARCHIS_LOG", "info,tower_http=warn")
            .env_remove("PARCHIS_LOG_FORMAT")
            .env("NO_COLOR", "1")
            // Every test client comes from 127.0.0.1.
            .env("PARCHIS_ROOM_CREATIONS_PER_MINUTE", "100000")
            .env("PARCHIS_MAX_LOBBIES_PER_ADDRESS", "100000")
            .env("PARCHIS_MAX_BOT_ROOMS_PER_ADDRESS", "100000")
            .env("PARCHIS_MAX_CONNECTIONS_PER_ADDRESS", "100000")
            .env("PARCHIS_LOOKUPS_PER_MINUTE", "1000000")
            .env("PARCHIS_WATCHES_PER_MINUTE", "1000000")
            // The stall hook (`POST /admin/debug/stall`), for tests that starve a node.
            .env("PARCHIS_ADMIN_TOKEN", ADMIN_TOKEN)
            .env("PARCHIS_DEBUG_STALL_HOOK", "true")
            .envs(o.env.iter().map(|(k, v)| (*k, v.as_str())))
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log fd"))
            .stderr(log)
            .spawn()
            .expect("spawn the server binary");
        self.roster.lock()[i].pid = Some(child.id());
        self.nodes[i].child = Some(child);
    }

    /// Node `i`'s proxy to NATS ([`Opts::nats_proxies`]).
    pub fn nats_proxy(&self, i: usize) -> &Proxy {
        &self.nats_proxies[i]
    }

    /// The `DATABASE_URL` of the nodes: through [`Cluster::db_proxy`] when there is one.
    fn node_db_url(&self) -> String {
        match &self.db_proxy {
            Some(proxy) => with_hostport(&self.db_url, proxy.addr),
            None => self.db_url.clone(),
        }
    }

    /// Waits until node `i` answers `/readyz` with 200 (30 s at most).
    async fn wait_ready(&mut self, i: usize) {
        let addr = self.addr(i);
        let until = Instant::now() + Duration::from_secs(30);
        while Instant::now() < until {
            if let Some(Ok(Some(status))) = self.nodes[i].child.as_mut().map(Child::try_wait) {
                panic!(
                    "node {} exited at start ({status}):\n{}",
                    self.nodes[i].id,
                    self.log_tail(i, 30)
                );
            }
            if tokio::net::TcpStream::connect(addr).await.is_ok() {
                let (status, _) = http_at(addr, "GET", "/readyz", None).await;
                if status == 200 {
                    self.roster.lock()[i].up = true;
                    return;
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!(
            "node {} was not ready on {addr} within 30 s:\n{}",
            self.nodes[i].id,
            self.log_tail(i, 30)
        );
    }

    /// `kill -9` node `i` and reaps it.
    ///
    /// At once: the victim's database connections are known from the sampler (every
    /// 100 ms; one opened since counts as an unknown writer). Sampling here delayed the
    /// kill under load (reading `/proc/<pid>/net/tcp` of a busy machine), past the
    /// moment the test had noted as the kill's.
    pub fn kill(&mut self, i: usize) {
        self.mark_down(i);
        self.roster.lock()[i].pid = None;
        if let Some(mut child) = self.nodes[i].child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts node `i` again (same id and port) and waits until it is ready.
    pub async fn restart(&mut self, i: usize) {
        assert!(self.nodes[i].child.is_none(), "node {i} still runs");
        self.spawn(i);
        self.wait_ready(i).await;
    }

    /// Sends `signal` (`STOP`, `CONT`, `TERM`) to node `i` with `kill(1)`.
    pub fn signal(&mut self, i: usize, signal: &str) {
        if signal == "TERM" {
            self.mark_down(i);
        }
        let pid = self.pid(i).expect("the node runs");
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(pid.to_string())
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -{signal} {pid}: {status}");
    }

    fn mark_down(&self, i: usize) {
        let mut nodes = self.roster.lock();
        nodes[i].up = false;
        nodes[i].downs.push(Instant::now());
    }

    /// Waits up to `limit` for node `i` to exit; its exit status, or `None` if it still
    /// runs.
    pub async fn wait_exit(&mut self, i: usize, limit: Duration) -> Option<ExitStatus> {
        let until = Instant::now() + limit;
        loop {
            let child = self.nodes[i].child.as_mut()?;
            if let Ok(Some(status)) = child.try_wait() {
                self.nodes[i].child = None;
                self.roster.lock()[i].pid = None;
                return Some(status);
            }
            if Instant::now() > until {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    fn sample_ports(&self) {
        let ids: Vec<String> = self.nodes.iter().map(|n| n.id.clone()).collect();
        self.roster.sample_ports(&ids, self.db_port, &self.ports);
    }

    /// Every audited event write, its writer named (when its connection was seen), and
    /// checks that each known writer owned the room's lease in its transaction; returns
    /// `(known, unknown)` writers. `(0, 0)` when the database is not audited.
    pub async fn check_writers(&self) -> (usize, usize) {
        if !self.audited {
            return (0, 0);
        }
        self.sample_ports();
        let ports = self.ports.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let writes = audit::writes(self, &ports).await;
        audit::writes_by_owners(&writes)
    }

    /// `(status, JSON body)` of an HTTP request to node `i`.
    pub async fn http(
        &self,
        i: usize,
        method: &str,
        path: &str,
        body: Option<&str>,
    ) -> (u16, Value) {
        http_at(self.addr(i), method, path, body).await
    }

    /// [`metric_at`] of node `i`.
    pub async fn metric(&self, i: usize, name: &str, labels: &[&str]) -> f64 {
        metric_at(self.addr(i), name, labels).await
    }

    /// Creates a room on node `i` with `settings`; its code. The room is owned by node `i`
    /// (checked in its lease): the tests that use this build on it.
    ///
    /// A node that sheds load places new rooms on another node (`docs/CLUSTER.md`,
    /// "Placement"), and a slow commit on a busy CI machine (a sixth of the test TTL,
    /// 250 ms) makes it shed for two TTLs. So this first waits, up to 20 s, until node `i`
    /// does not shed; a room placed elsewhere all the same fails here, saying so, rather
    /// than later in a test that kills "the other" node and finds the room gone with it.
    pub async fn create_room(&self, i: usize, settings: &Value) -> String {
        self.wait_not_shedding(i).await;
        let (status, body) = self
            .http(i, "POST", "/api/rooms", Some(&settings.to_string()))
            .await;
        assert_eq!(status, 201, "create on node {}: {body}", self.id(i));
        let code = body["code"].as_str().expect("code").to_owned();
        let until = Instant::now() + Duration::from_secs(5);
        let mut lease = self.lease(&code).await;
        while lease.is_none() && Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(25)).await;
            lease = self.lease(&code).await;
        }
        assert_eq!(
            lease.as_ref().map(|l| l.owner.as_str()),
            Some(self.id(i)),
            "room {code} created through node {} is not owned by it (placed elsewhere: \
             the node shed load or was full): {lease:?}",
            self.id(i)
        );
        code
    }

    /// Waits, up to 20 s, until node `i` does not shed load (`parchis_cluster_shedding`
    /// is 0), so that it takes new rooms (a slow commit on a busy machine makes a node
    /// shed for two TTLs, `docs/CLUSTER.md`, "Load shedding"). Returns after 20 s all the
    /// same: the test's own checks then say what went wrong.
    pub async fn wait_not_shedding(&self, i: usize) {
        let until = Instant::now() + Duration::from_secs(20);
        while self.metric(i, "parchis_cluster_shedding", &[]).await > 0.0 && Instant::now() < until
        {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The last `n` lines of node `i`'s log.
    pub fn log_tail(&self, i: usize, n: usize) -> String {
        let Ok(f) = File::open(&self.nodes[i].log) else {
            return String::new();
        };
        let lines: Vec<String> = std::io::BufReader::new(f)
            .lines()
            .map_while(Result::ok)
            .collect();
        lines[lines.len().saturating_sub(n)..]
            .iter()
            .map(|l| l.chars().take(300).collect::<String>())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if let Some((stop, thread)) = self.sampler.take() {
            stop.store(true, Ordering::Relaxed);
            let _ = thread.join();
        }
        for node in &mut self.nodes {
            if let Some(mut child) = node.child.take() {
                // SIGKILL also ends a stopped process.
                let _ = child.kill();
                let _ = child.wait();
            }
        }
        if std::thread::panicking() {
            for i in 0..self.nodes.len() {
                eprintln!(
                    "----- {}: last lines of node {} -----\n{}",
                    self.test,
                    self.nodes[i].id,
                    self.log_tail(i, 40)
                );
            }
            if std::env::var_os("PARCHIS_TEST_KEEP").is_some() {
                let dir = std::mem::replace(&mut self.dir, tempfile::tempdir().expect("tempdir"));
                let kept = dir.keep();
                eprintln!("kept database {} and logs {}", self.db_name, kept.display());
                return;
            }
        }
        let (admin, name) = (self.admin_url.clone(), self.db_name.clone());
        // Drop runs inside the test's runtime: the database goes on a runtime of its own.
        let _ = std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async move {
                if let Ok(mut c) = sqlx::PgConnection::connect(&admin).await {
                    let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                        .execute(&mut c)
                        .await;
                }
            });
        })
        .join();
    }
}

/// The sum of the samples of metric `name` in the `/metrics` of the node at `addr` whose
/// line holds every one of `labels` (e.g. `answer="read"`); 0 when there is none.
pub async fn metric_at(addr: SocketAddr, name: &str, labels: &[&str]) -> f64 {
    let (status, text) = crate::common::get_raw(addr, "/metrics", &[]).await;
    assert_eq!(status, 200, "{text}");
    text.lines()
        .filter(|l| {
            l.strip_prefix(name)
                .is_some_and(|rest| rest.starts_with('{') || rest.starts_with(' '))
        })
        .filter(|l| labels.iter().all(|lab| l.contains(lab)))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}
