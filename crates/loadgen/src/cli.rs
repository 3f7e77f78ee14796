//! Command line of `parchis-loadgen`: the load run (the default, no subcommand) and the
//! `failover` subcommand, and the parsing of their values (URLs, shards, jitter).

use clap::{Args, Parser, Subcommand};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;

/// Load generator for the Parchís server.
#[derive(Parser, Debug, Clone)]
#[command(
    name = "parchis-loadgen",
    version,
    about,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// `failover` measures kill -9 → first event; without a subcommand: a load run.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// The load run's settings.
    #[command(flatten)]
    pub load: LoadArgs,
}

/// Subcommands.
#[derive(Subcommand, Debug, Clone)]
pub enum Command {
    /// Starts a cluster of server nodes, and N times: kills -9 the node owning a watched
    /// room and measures the time to the first event from its new owner.
    Failover(FailoverArgs),
}

/// Settings of a load run.
#[derive(Args, Debug, Clone)]
pub struct LoadArgs {
    /// Server base URL (http://HOST:PORT); HOST must be in 127.0.0.0/8 or `localhost`.
    /// Repeat it for a cluster: every room is created on a node drawn at random (seeded)
    /// and each of its four clients connects to a node drawn at random, so with N nodes
    /// (N − 1)/N of the commands cross nodes.
    #[arg(long = "url", default_value = "http://127.0.0.1:8080")]
    pub urls: Vec<String>,
    /// Rooms of four clients (in total, over every process).
    #[arg(long, default_value_t = 10)]
    pub rooms: usize,
    /// Think time before each `roll`/`play`, in milliseconds. Every room has one player
    /// to act at a time, so 1000 ms ≈ one action per second per room.
    #[arg(long, default_value_t = 1000)]
    pub think_ms: u64,
    /// Spread of the think time: each one is drawn uniformly from
    /// `think_ms × [1 − jitter, 1 + jitter]` (mean `think_ms`), and each room's first
    /// command waits a uniform `[0, think_ms)`, so rooms do not act in lockstep (real
    /// players don't). 0 gives the fixed think time and simultaneous starts.
    #[arg(long, default_value_t = 0.5, value_parser = parse_jitter)]
    pub think_jitter: f64,
    /// Warm-up before the measured window, in seconds, counted from the moment every game
    /// has started (the starts are staggered over one think time, each creating a game in
    /// the store): the games reach their steady state; nothing of it is counted.
    #[arg(long, default_value_t = 5)]
    pub warmup_secs: u64,
    /// Length of the measured play phase, in seconds. After it the clients send nothing
    /// more and stay connected one second (drain) so the last answers are counted.
    #[arg(long, default_value_t = 30)]
    pub duration_secs: u64,
    /// Give up on the setup phase after this many seconds (the rooms ready by then play),
    /// and likewise on waiting for every game to start (the window opens anyway).
    #[arg(long, default_value_t = 120)]
    pub setup_timeout_secs: u64,
    /// Rooms set up at the same time (per process).
    #[arg(long, default_value_t = 32)]
    pub setup_concurrency: usize,
    /// Games started per second once the play phase begins, over the whole run: room `r`
    /// sends its `start` at a random point of `[r / rate, (r + 1) / rate)` seconds, so
    /// the games trickle in as real players' do. 0: every room starts within one think
    /// time (all at once with `--think-jitter 0`), a burst of game creations in the store.
    #[arg(long, default_value_t = 0.0, value_parser = parse_rate)]
    pub start_rate: f64,
    /// Directory where the run's end of the measured window saves every node's
    /// `GET /metrics` (`node-<i>.prom`, `i` the `--url`'s position), by the process
    /// that samples the servers (alone, or the parent of `--processes`).
    #[arg(long)]
    pub metrics_dir: Option<PathBuf>,
    /// Source addresses, used round-robin per connection (bind before connect).
    #[arg(long, value_delimiter = ',', default_value = "127.0.0.1")]
    pub source_addrs: Vec<Ipv4Addr>,
    /// Server process ids (comma-separated or repeated, one per node): the report gives
    /// their VmRSS and CPU time from /proc, summed over every node.
    #[arg(long = "server-pid", value_delimiter = ',')]
    pub server_pids: Vec<u32>,
    /// Seed of the action choices and of the nodes drawn for rooms and clients.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Turn clock of the rooms created (seconds, 1–600).
    #[arg(long, default_value_t = 600)]
    pub turn_clock_secs: u64,
    /// Run as this many processes (this binary started again as children, each with a
    /// disjoint share of the rooms, `--shard i/N`), so that together they hold more
    /// sockets than one process's open-file limit allows. The parent keeps the children's
    /// phases in step (every child set up, every game started, one measured window),
    /// samples the servers, merges their histograms and prints one report.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub processes: u32,
    /// Play only the rooms `r` with `r mod N = i` (`i/N`, 0 ≤ i < N). Set by `--processes`
    /// on its children; the room numbers (and so the seeds) stay those of the whole run.
    #[arg(long, value_parser = parse_shard)]
    pub shard: Option<Shard>,
    /// Child of `--processes`: report each phase on stdout and wait for the parent's
    /// go-ahead on stdin; print the mergeable part of the report (histograms included).
    #[arg(long, hide = true)]
    pub child: bool,
}

/// Settings of `parchis-loadgen failover`.
#[derive(Args, Debug, Clone)]
pub struct FailoverArgs {
    /// The `parchis-server` binary to start as nodes.
    #[arg(long)]
    pub server_bin: PathBuf,
    /// Nodes of the cluster (at least 2: one is killed in each round).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(2..=16))]
    pub nodes: u32,
    /// Node i listens on 127.0.0.1:(base-port + i).
    #[arg(long, default_value_t = 18301)]
    pub base_port: u16,
    /// Rounds: each kills -9 the owner of that round's watched room.
    #[arg(long, default_value_t = 20)]
    pub kills: u32,
    /// NATS server of the cluster.
    #[arg(long, default_value = "nats://127.0.0.1:4222")]
    pub nats_url: String,
    /// NATS subject prefix (`--cluster` of the nodes): use your own on a shared NATS.
    #[arg(long, default_value = "lgfailover")]
    pub cluster: String,
    /// PostgreSQL database of the cluster (passed to every node as DATABASE_URL).
    #[arg(long, env = "DATABASE_URL")]
    pub database_url: String,
    /// Extra argument for every node (repeat it), e.g. `--node-arg=--lease-ttl-ms=3000`.
    #[arg(long = "node-arg", allow_hyphen_values = true)]
    pub node_args: Vec<String>,
    /// Directory of the nodes' logs (`node-<id>.log`).
    #[arg(long, default_value = "/tmp/parchis-failover")]
    pub log_dir: PathBuf,
    /// After the kill the waiting player sends its command again this often (ms) until
    /// an event comes. The server closes a connection after 20 errors in 10 s, so keep it
    /// ≥ 250 ms for failovers up to 5 s.
    #[arg(long, default_value_t = 250)]
    pub retry_ms: u64,
    /// Actions played in each round's room before the kill (its log is not empty).
    #[arg(long, default_value_t = 6)]
    pub actions_before: u32,
    /// A round whose first event has not come this long after the kill failed.
    #[arg(long, default_value_t = 30)]
    pub give_up_secs: u64,
    /// Seed of the owner chosen in each round and of the moment of the kill.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// One node to load: its socket address and the `Host` header for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// Where to connect.
    pub addr: SocketAddr,
    /// `HOST:PORT` as given in the URL.
    pub host: String,
}

/// `i/N` of `--shard`: this process plays the rooms `r` with `r mod N = i`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// This share, `0 ≤ index < count`.
    pub index: u32,
    /// Number of shares.
    pub count: u32,
}

impl Shard {
    /// The whole run in one process.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// Whether room number `room` (of the whole run) belongs to this share.
    pub fn owns(&self, room: usize) -> bool {
        room % self.count as usize == self.index as usize
    }
}

/// `--shard`: `i/N` with `0 ≤ i < N`, `1 ≤ N ≤ 64`.
pub fn parse_shard(s: &str) -> Result<Shard, String> {
    let (i, n) = s
        .split_once('/')
        .ok_or_else(|| format!("{s:?}: expected i/N, e.g. 0/2"))?;
    let index: u32 = i.trim().parse().map_err(|_| format!("{s:?}: bad index"))?;
    let count: u32 = n.trim().parse().map_err(|_| format!("{s:?}: bad count"))?;
    if !(1..=64).contains(&count) || index >= count {
        return Err(format!("{s:?}: need 0 ≤ i < N ≤ 64"));
    }
    Ok(Shard { index, count })
}

/// `--think-jitter`: a fraction in [0, 1].
pub fn parse_jitter(s: &str) -> Result<f64, String> {
    let j: f64 = s.parse().map_err(|e| format!("{s:?}: {e}"))?;
    if (0.0..=1.0).contains(&j) {
        Ok(j)
    } else {
        Err(format!("{s:?}: must be between 0 and 1"))
    }
}

/// `--start-rate`: a finite rate ≥ 0 (games per second).
pub fn parse_rate(s: &str) -> Result<f64, String> {
    let r: f64 = s.parse().map_err(|e| format!("{s:?}: {e}"))?;
    if r.is_finite() && r >= 0.0 {
        Ok(r)
    } else {
        Err(format!("{s:?}: must be a number ≥ 0"))
    }
}

/// Parses `http://HOST:PORT[/]` and checks HOST is a loopback IPv4 address.
pub fn parse_url(url: &str) -> Result<Node, String> {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("ws://"))
        .ok_or_else(|| format!("{url:?}: only http:// (or ws://) URLs are supported"))?;
    let hostport = rest.split('/').next().unwrap_or("");
    let (host, port) = match hostport.rsplit_once(':') {
        Some((h, p)) => (
            h,
            p.parse::<u16>()
                .map_err(|_| format!("{url:?}: bad port {p:?}"))?,
        ),
        None => (hostport, 80),
    };
    let ip: Ipv4Addr = if host.eq_ignore_ascii_case("localhost") {
        Ipv4Addr::LOCALHOST
    } else {
        host.parse()
            .map_err(|_| format!("{url:?}: host must be an IPv4 address in 127.0.0.0/8"))?
    };
    if !ip.is_loopback() {
        return Err(format!(
            "{url:?}: refusing to load a non-loopback host ({ip}); only 127.0.0.0/8 is allowed"
        ));
    }
    Ok(Node {
        addr: SocketAddr::new(IpAddr::V4(ip), port),
        host: hostport.to_string(),
    })
}

/// Every `--url`, parsed; an error names the first bad one. A URL given twice is refused
/// (it would weigh that node double in the random choice).
pub fn parse_urls(urls: &[String]) -> Result<Vec<Node>, String> {
    let mut nodes: Vec<Node> = Vec::with_capacity(urls.len());
    for url in urls {
        let node = parse_url(url)?;
        if nodes.iter().any(|n| n.addr == node.addr) {
            return Err(format!("{url:?}: given twice"));
        }
        nodes.push(node);
    }
    if nodes.is_empty() {
        return Err("no --url".into());
    }
    Ok(nodes)
}

/// The settings checked together: the nodes, and the share of the rooms of this process.
pub fn check(args: &LoadArgs) -> Result<(Vec<Node>, Shard), String> {
    let nodes = parse_urls(&args.urls)?;
    if args.source_addrs.iter().any(|a| !a.is_loopback()) {
        return Err("--source-addrs must be in 127.0.0.0/8".into());
    }
    if args.processes > 1 && (args.shard.is_some() || args.child) {
        return Err("--processes starts the shards itself: give it or --shard, not both".into());
    }
    Ok((nodes, args.shard.unwrap_or(Shard::WHOLE)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("parchis-loadgen").chain(args.iter().copied()))
    }

    #[test]
    fn accepts_loopback_urls_only() {
        let node = parse_url("http://127.0.0.3:18080/").unwrap();
        assert_eq!(node.addr, "127.0.0.3:18080".parse::<SocketAddr>().unwrap());
        assert_eq!(node.host, "127.0.0.3:18080");
        let node = parse_url("http://localhost:8080").unwrap();
        assert_eq!(node.addr, "127.0.0.1:8080".parse::<SocketAddr>().unwrap());
        assert!(parse_url("http://10.0.0.1:8080")
            .unwrap_err()
            .contains("refusing"));
        assert!(parse_url("http://example.com:80").is_err());
        assert!(parse_url("https://127.0.0.1:8080").is_err());
        assert!(parse_url("http://127.0.0.1:99999").is_err());
    }

    #[test]
    fn url_may_be_repeated_and_defaults_to_one_node() {
        let cli = parse(&[]).unwrap();
        assert_eq!(cli.load.urls, vec!["http://127.0.0.1:8080".to_string()]);
        assert!(cli.command.is_none());
        let cli = parse(&[
            "--url",
            "http://127.0.0.1:8081",
            "--url",
            "http://127.0.0.2:8082/",
            "--url",
            "http://localhost:8083",
        ])
        .unwrap();
        let (nodes, shard) = check(&cli.load).unwrap();
        let addrs: Vec<String> = nodes.iter().map(|n| n.addr.to_string()).collect();
        assert_eq!(
            addrs,
            ["127.0.0.1:8081", "127.0.0.2:8082", "127.0.0.1:8083"]
        );
        assert_eq!(shard, Shard::WHOLE);
        let twice = parse(&["--url", "http://127.0.0.1:1", "--url", "http://127.0.0.1:1"]);
        assert!(check(&twice.unwrap().load).unwrap_err().contains("twice"));
        let off = parse(&["--url", "http://127.0.0.1:1", "--url", "http://192.0.2.1:1"]);
        assert!(check(&off.unwrap().load)
            .unwrap_err()
            .contains("127.0.0.0/8"));
    }

    #[test]
    fn server_pids_are_a_list() {
        let cli = parse(&["--server-pid", "10,11", "--server-pid", "12"]).unwrap();
        assert_eq!(cli.load.server_pids, vec![10, 11, 12]);
    }

    #[test]
    fn shards_parse_and_split_the_rooms_disjointly() {
        assert_eq!(parse_shard("1/3"), Ok(Shard { index: 1, count: 3 }));
        assert!(parse_shard("3/3").is_err());
        assert!(parse_shard("0/0").is_err());
        assert!(parse_shard("0/65").is_err());
        assert!(parse_shard("a/2").is_err());
        assert!(parse_shard("1").is_err());
        let shards: Vec<Shard> = (0..3).map(|i| Shard { index: i, count: 3 }).collect();
        for room in 0..100 {
            let owners = shards.iter().filter(|s| s.owns(room)).count();
            assert_eq!(owners, 1, "room {room} is played by exactly one shard");
        }
        assert_eq!((0..100).filter(|r| shards[1].owns(*r)).count(), 33);
        assert!((0..5).all(|r| Shard::WHOLE.owns(r)));
    }

    #[test]
    fn processes_is_bounded_and_excludes_a_shard() {
        assert_eq!(parse(&["--processes", "2"]).unwrap().load.processes, 2);
        assert!(parse(&["--processes", "0"]).is_err());
        assert!(parse(&["--processes", "65"]).is_err());
        let both = parse(&["--processes", "2", "--shard", "0/2"]).unwrap();
        assert!(check(&both.load).is_err());
    }

    #[test]
    fn failover_is_a_subcommand_with_node_args() {
        let cli = parse(&[
            "failover",
            "--server-bin",
            "/bin/true",
            "--database-url",
            "postgres://x@127.0.0.1/db",
            "--kills",
            "5",
            "--node-arg=--lease-ttl-ms=2000",
            "--node-arg",
            "--commands-per-second=100",
        ])
        .unwrap();
        let Some(Command::Failover(f)) = cli.command else {
            panic!("failover subcommand");
        };
        assert_eq!(f.kills, 5);
        assert_eq!(f.nodes, 3);
        assert_eq!(
            f.node_args,
            ["--lease-ttl-ms=2000", "--commands-per-second=100"]
        );
        assert!(parse(&["failover", "--server-bin", "x", "--nodes", "1"]).is_err());
    }

    #[test]
    fn start_rate_is_a_non_negative_number() {
        assert_eq!(parse(&[]).unwrap().load.start_rate, 0.0);
        assert_eq!(
            parse(&["--start-rate", "250"]).unwrap().load.start_rate,
            250.0
        );
        assert!(parse(&["--start-rate", "-1"]).is_err());
        assert!(parse(&["--start-rate", "inf"]).is_err());
        assert!(parse(&["--start-rate", "x"]).is_err());
    }

    #[test]
    fn jitter_is_a_fraction() {
        assert!(parse_jitter("1.5").is_err());
        assert_eq!(parse_jitter("0.25"), Ok(0.25));
    }
}
