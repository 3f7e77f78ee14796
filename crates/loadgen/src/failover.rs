//! `parchis-loadgen failover`: how long a room is silent when its owner dies.
//!
//! Starts `--nodes` server nodes in cluster mode (one PostgreSQL database, one NATS
//! server, node i on 127.0.0.1:(base-port + i)), then each round:
//!
//! 1. draws the owner node (seeded), creates a room there (`POST /api/rooms` on it: the
//!    node that creates a room owns it, docs/CLUSTER.md "Placement"), seats four players
//!    whose sockets are all on the *other* nodes (relayed connections), starts the game
//!    and plays `--actions-before` actions;
//! 2. when the next `your_turn` arrives it holds the command back, waits a random part of
//!    a second (so the kill falls anywhere in the lease renewal cycle), kills the owner
//!    with SIGKILL and reaps it;
//! 3. from the kill on, the player whose turn it is sends its command and sends it again
//!    every `--retry-ms` while the cluster refuses it (no owner yet), until the first
//!    `event` with a higher `seq` arrives: that event can only come from the new owner
//!    (nobody else acts, and the turn clock is 600 s). The round's figure is kill → that
//!    event;
//! 4. closes the players and starts the killed node again (a new node id, as a
//!    supervisor's restart after a crash), and waits for its `/readyz`.
//!
//! A round whose event came without any refusal in under half a second is marked
//! `suspect` (the room was not on the killed node) and left out of the figures. The
//! rooms of earlier rounds stay (abandoned games the cluster keeps owning), so later
//! kills also move those. Prints JSON; exits 1 when a round failed.

use crate::cli::{FailoverArgs, Node};
use crate::client::{seq_of, type_of, Net, Ws};
use crate::rng::Rng;
use futures_util::stream::SplitSink;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::process::{ExitCode, Stdio};
use std::time::Duration;
use tokio::process::{Child, Command};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::{sleep, sleep_until, timeout, Instant};
use tokio_tungstenite::tungstenite::Message;

/// `req` of the first action of a player (1 is its join, 2 the start).
const FIRST_REQ: u64 = 10;

/// Whether `url`'s host (after `scheme://` and any `user[:password]@`) is in 127.0.0.0/8
/// or `localhost`: the tool starts nodes against this machine's services only.
pub fn loopback_host(url: &str) -> bool {
    let rest = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
    let authority = rest.split(['/', '?']).next().unwrap_or("");
    let hostport = authority
        .rsplit_once('@')
        .map(|(_, h)| h)
        .unwrap_or(authority);
    let host = match hostport.rsplit_once(':') {
        Some((h, p)) if p.chars().all(|c| c.is_ascii_digit()) => h,
        _ => hostport,
    };
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<Ipv4Addr>().is_ok_and(|ip| ip.is_loopback())
}

/// One server node this tool runs.
struct NodeProc {
    /// Where it listens.
    node: Node,
    /// Its current `--node-id`.
    id: String,
    /// How many times it was started.
    starts: u32,
    child: Option<Child>,
}

/// The nodes and how to start them.
struct Cluster {
    args: FailoverArgs,
    nodes: Vec<NodeProc>,
    net: Net,
}

impl Cluster {
    fn new(args: FailoverArgs) -> Cluster {
        let nodes = (0..args.nodes)
            .map(|i| {
                let port = args.base_port.saturating_add(i as u16);
                NodeProc {
                    node: Node {
                        addr: SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port),
                        host: format!("127.0.0.1:{port}"),
                    },
                    id: String::new(),
                    starts: 0,
                    child: None,
                }
            })
            .collect();
        Cluster {
            args,
            nodes,
            net: Net::new(vec![Ipv4Addr::LOCALHOST]),
        }
    }

    /// Starts node `i` (a new node id each time) and waits for its `/readyz`.
    async fn start(&mut self, i: usize) -> Result<(), String> {
        let a = &self.args;
        let n = &mut self.nodes[i];
        n.starts += 1;
        n.id = format!("fo{i}-{}", n.starts);
        let log_path = a.log_dir.join(format!("node-{}.log", n.id));
        let log =
            std::fs::File::create(&log_path).map_err(|e| format!("{}: {e}", log_path.display()))?;
        let err = log.try_clone().map_err(|e| format!("log: {e}"))?;
        let port = n.node.addr.port().to_string();
        let child = Command::new(&a.server_bin)
            .args(["--bind", "127.0.0.1", "--port", &port])
            .args(["--nats-url", &a.nats_url, "--cluster", &a.cluster])
            .args(["--node-id", &n.id])
            .args(&a.node_args)
            .env("DATABASE_URL", &a.database_url)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err)
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("start {}: {e}", a.server_bin.display()))?;
        n.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(200) = self.net.get_status(&self.nodes[i].node, "/readyz").await {
                return Ok(());
            }
            let n = &mut self.nodes[i];
            if let Some(Ok(Some(status))) = n.child.as_mut().map(Child::try_wait) {
                return Err(format!(
                    "node {} exited at start ({status}); see {}",
                    n.id,
                    log_path.display()
                ));
            }
            if Instant::now() >= deadline {
                return Err(format!("node {} not ready after 60 s", n.id));
            }
            sleep(Duration::from_millis(100)).await;
        }
    }

    /// SIGKILL to node `i`, and waits until it is gone.
    async fn kill(&mut self, i: usize) -> Result<(), String> {
        let Some(mut child) = self.nodes[i].child.take() else {
            return Err(format!("node {i} is not running"));
        };
        child.start_kill().map_err(|e| format!("kill: {e}"))?;
        child.wait().await.map_err(|e| format!("wait: {e}"))?;
        Ok(())
    }

    /// SIGTERM to every node (they drain), then waits for them.
    async fn stop(&mut self) {
        for n in &self.nodes {
            if let Some(pid) = n.child.as_ref().and_then(Child::id) {
                let _ = Command::new("kill")
                    .args(["-TERM", &pid.to_string()])
                    .status()
                    .await;
            }
        }
        for n in &mut self.nodes {
            if let Some(mut c) = n.child.take() {
                if timeout(Duration::from_secs(30), c.wait()).await.is_err() {
                    let _ = c.kill().await;
                }
            }
        }
    }
}

/// What the round's players said: (player, when, frame), or `None` when its socket closed.
type Said = (usize, Instant, Option<Value>);

/// The four players of a round: their sinks, and reader tasks feeding one channel.
struct Table {
    sinks: Vec<SplitSink<Ws, Message>>,
    readers: Vec<JoinHandle<()>>,
    rx: mpsc::Receiver<Said>,
    /// Latest `seq` seen.
    seq: u64,
    /// Next `req` of each player.
    req: [u64; 4],
}

impl Table {
    async fn seat(net: &Net, nodes: &[&Node], code: &str) -> Result<Table, String> {
        let (tx, rx) = mpsc::channel(256);
        let mut t = Table {
            sinks: Vec::new(),
            readers: Vec::new(),
            rx,
            seq: 0,
            req: [FIRST_REQ; 4],
        };
        for i in 0..4 {
            let node = nodes[i % nodes.len()];
            let c = net.join(node, code, &format!("fo-{i}")).await?;
            t.seq = t.seq.max(c.seq);
            let (sink, mut stream) = c.ws.split();
            let tx = tx.clone();
            t.readers.push(tokio::spawn(async move {
                loop {
                    let frame = match stream.next().await {
                        Some(Ok(Message::Text(s))) => serde_json::from_str(s.as_str()).ok(),
                        Some(Ok(Message::Close(_))) | Some(Err(_)) | None => None,
                        Some(Ok(_)) => continue,
                    };
                    let closed = frame.is_none();
                    if tx.send((i, Instant::now(), frame)).await.is_err() || closed {
                        return;
                    }
                }
            }));
            t.sinks.push(sink);
        }
        Ok(t)
    }

    async fn send(&mut self, i: usize, mut msg: Value) -> Result<u64, String> {
        let req = self.req[i];
        self.req[i] += 1;
        msg["req"] = json!(req);
        self.sinks[i]
            .send(Message::text(msg.to_string()))
            .await
            .map_err(|e| format!("send: {e}"))?;
        Ok(req)
    }

    /// The next frame before `deadline`: `Err` on a closed socket or the deadline.
    async fn next(&mut self, deadline: Instant) -> Result<(usize, Instant, Value), String> {
        match timeout(deadline - Instant::now(), self.rx.recv()).await {
            Ok(Some((i, at, Some(v)))) => {
                self.seq = self.seq.max(seq_of(&v));
                Ok((i, at, v))
            }
            Ok(Some((i, _, None))) => Err(format!("player {i}'s socket closed")),
            Ok(None) => Err("every socket closed".into()),
            Err(_) => Err("timed out".into()),
        }
    }

    async fn close(mut self) {
        for s in &mut self.sinks {
            let _ = s.close().await;
        }
        for r in self.readers {
            r.abort();
        }
    }
}

/// The command answering a `your_turn` frame: `roll`, or a random legal `play`.
fn answer(code: &str, turn: &Value, rng: &mut Rng) -> Option<Value> {
    let seq = seq_of(turn);
    if turn
        .get("must_roll")
        .and_then(Value::as_bool)
        .unwrap_or(false)
    {
        return Some(json!({"type": "roll", "room": code, "seq": seq}));
    }
    let legal = turn.get("legal").and_then(Value::as_array)?;
    let a = legal.get(rng.below(legal.len()))?.clone();
    Some(json!({"type": "play", "room": code, "seq": seq, "action": a}))
}

/// One round's outcome.
#[derive(Debug, Default)]
struct Round {
    owner: usize,
    code: String,
    first_event_ms: Option<f64>,
    sends: u32,
    refusals: BTreeMap<String, u64>,
    suspect: bool,
    failure: Option<String>,
}

/// Sets up the round's room on `owner` and plays until the held turn; returns the table
/// and who is to act with what.
async fn prepare(
    c: &Cluster,
    owner: usize,
    code: &str,
    rng: &mut Rng,
) -> Result<(Table, usize, Value), String> {
    let others: Vec<&Node> = (0..c.nodes.len())
        .filter(|&i| i != owner)
        .map(|i| &c.nodes[i].node)
        .collect();
    let mut t = Table::seat(&c.net, &others, code).await?;
    let deadline = Instant::now() + Duration::from_secs(30);
    // The creator starts once it has seen every join.
    let latest = t.seq;
    let mut creator_seq = 0;
    while creator_seq < latest {
        let (i, _, v) = t.next(deadline).await?;
        if i == 0 {
            creator_seq = creator_seq.max(seq_of(&v));
        }
    }
    let start = json!({"type": "start", "req": 2, "room": code, "seq": t.seq});
    t.sinks[0]
        .send(Message::text(start.to_string()))
        .await
        .map_err(|e| format!("send start: {e}"))?;
    let mut played = 0;
    loop {
        let (i, _, v) = t.next(deadline).await?;
        match type_of(&v) {
            "your_turn" if seq_of(&v) == t.seq => {
                if played >= c.args.actions_before {
                    return Ok((t, i, v));
                }
                let msg = answer(code, &v, rng).ok_or("a your_turn without legal moves")?;
                t.send(i, msg).await?;
                played += 1;
            }
            "error" => {
                let code = v.get("code").and_then(Value::as_str).unwrap_or("?");
                return Err(format!("refused before the kill: {code}"));
            }
            _ => {}
        }
    }
}

/// Kills the owner and measures until the first event of the new one.
async fn measure(
    c: &mut Cluster,
    t: &mut Table,
    round: &mut Round,
    player: usize,
    turn: Value,
    rng: &mut Rng,
) -> Result<(), String> {
    let held_seq = t.seq;
    let mut msg = answer(&round.code, &turn, rng).ok_or("no command to hold")?;
    // Anywhere within a renewal period (1 s by default) of the lease.
    let pause = Duration::from_millis(rng.below(1000) as u64);
    let until = Instant::now() + pause;
    // The other players' copies of the last events may still arrive (four sockets); a
    // newer event would mean someone else acted.
    while let Ok((_, _, v)) = t.next(until).await {
        if type_of(&v) == "event" && seq_of(&v) > held_seq {
            return Err("an event while the turn was held".into());
        }
    }
    let killed = Instant::now();
    c.kill(round.owner).await?;
    let retry = Duration::from_millis(c.args.retry_ms.max(1));
    let give_up = killed + Duration::from_secs(c.args.give_up_secs);
    let mut req = t.send(player, msg.clone()).await?;
    round.sends = 1;
    let mut next_send = Instant::now() + retry;
    let mut refused_once = false;
    loop {
        let frame = tokio::select! {
            f = t.next(give_up) => Some(f?),
            _ = sleep_until(next_send) => None,
        };
        let Some((i, at, v)) = frame else {
            // Unanswered, or refused and due again.
            req = t.send(player, msg.clone()).await?;
            round.sends += 1;
            next_send = Instant::now() + retry;
            continue;
        };
        match type_of(&v) {
            "event" if seq_of(&v) > held_seq => {
                let ms = (at - killed).as_secs_f64() * 1000.0;
                round.first_event_ms = Some(ms);
                round.suspect = !refused_once && ms < 500.0;
                return Ok(());
            }
            "error" if i == player && v.get("req").and_then(Value::as_u64) == Some(req) => {
                let code = v.get("code").and_then(Value::as_str).unwrap_or("?");
                *round.refusals.entry(code.to_string()).or_insert(0) += 1;
                refused_once = true;
            }
            "your_turn" if i == player => {
                // The new owner restored the room and re-sent the turn: answer it.
                if let Some(m) = answer(&round.code, &v, rng) {
                    msg = m;
                }
            }
            _ => {}
        }
    }
}

/// Median, p90, min and max of `ms` (sorted here), `null` when empty.
pub fn spread(ms: &mut [f64]) -> Value {
    if ms.is_empty() {
        return json!({"count": 0, "median": null, "p90": null, "min": null, "max": null});
    }
    ms.sort_by(f64::total_cmp);
    let n = ms.len();
    let median = if n % 2 == 1 {
        ms[n / 2]
    } else {
        (ms[n / 2 - 1] + ms[n / 2]) / 2.0
    };
    let p90 = ms[((n as f64 * 0.9).ceil() as usize).clamp(1, n) - 1];
    json!({"count": n, "median": median, "p90": p90, "min": ms[0], "max": ms[n - 1]})
}

/// Every round, then the nodes stopped.
async fn rounds(c: &mut Cluster) -> Result<Vec<Round>, String> {
    for i in 0..c.nodes.len() {
        c.start(i).await?;
    }
    let mut rng = Rng::new(c.args.seed);
    let mut out = Vec::new();
    for k in 0..c.args.kills {
        let owner = rng.below(c.nodes.len());
        let mut round = Round {
            owner,
            ..Round::default()
        };
        let created = c.net.create_room(&c.nodes[owner].node, 600).await;
        let created = created.map(|code| round.code = code);
        let result = match created {
            Ok(()) => match prepare(c, owner, &round.code.clone(), &mut rng).await {
                Ok((mut t, player, turn)) => {
                    let r = measure(c, &mut t, &mut round, player, turn, &mut rng).await;
                    t.close().await;
                    r
                }
                Err(e) => Err(e),
            },
            Err(e) => Err(e),
        };
        if let Err(e) = result {
            round.failure = Some(e);
        }
        eprintln!(
            "failover round {k}: owner {} room {} first event {:?} ms{}",
            c.nodes[owner].id,
            round.code,
            round.first_event_ms.map(|m| m.round()),
            round
                .failure
                .as_deref()
                .map(|f| format!(" FAILED: {f}"))
                .unwrap_or_default()
        );
        out.push(round);
        if c.nodes[owner].child.is_none() {
            c.start(owner).await?;
        }
    }
    Ok(out)
}

/// The subcommand.
pub async fn main(args: FailoverArgs) -> ExitCode {
    for url in [&args.database_url, &args.nats_url] {
        if !loopback_host(url) {
            eprintln!("parchis-loadgen failover: {url:?} is not on 127.0.0.0/8");
            return ExitCode::from(2);
        }
    }
    if let Err(e) = std::fs::create_dir_all(&args.log_dir) {
        eprintln!("parchis-loadgen failover: {}: {e}", args.log_dir.display());
        return ExitCode::from(2);
    }
    let mut c = Cluster::new(args.clone());
    let result = rounds(&mut c).await;
    c.stop().await;
    let rounds = match result {
        Ok(r) => r,
        Err(e) => {
            eprintln!("parchis-loadgen failover: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut good: Vec<f64> = rounds
        .iter()
        .filter(|r| !r.suspect)
        .filter_map(|r| r.first_event_ms)
        .collect();
    let failed = rounds.iter().filter(|r| r.failure.is_some()).count();
    let report = json!({
        "nodes": args.nodes,
        "kills": args.kills,
        "retry_ms": args.retry_ms,
        "node_args": args.node_args,
        "failover_ms": spread(&mut good),
        "failed": failed,
        "suspect": rounds.iter().filter(|r| r.suspect).count(),
        "rounds": rounds.iter().map(|r| json!({
            "owner": r.owner,
            "room": r.code,
            "first_event_ms": r.first_event_ms,
            "sends": r.sends,
            "refusals": r.refusals,
            "suspect": r.suspect,
            "failure": r.failure,
        })).collect::<Vec<_>>(),
    });
    match serde_json::to_string_pretty(&report) {
        Ok(s) => println!("{s}"),
        Err(e) => eprintln!("parchis-loadgen failover: {e}"),
    }
    if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_local_services() {
        assert!(loopback_host(
            "postgres://postgres@127.0.0.1:5432/parchis_bench"
        ));
        assert!(loopback_host("postgres://u:p@localhost/db"));
        assert!(loopback_host("nats://127.0.0.1:4222"));
        assert!(loopback_host("nats://127.1.2.3"));
        assert!(!loopback_host("postgres://u@db.example.com:5432/x"));
        assert!(!loopback_host("nats://10.0.0.1:4222"));
        assert!(!loopback_host("postgres://u:p@10.0.0.1/db?host=127.0.0.1"));
    }

    #[test]
    fn spread_gives_median_p90_and_extremes() {
        let mut ms = vec![3400.0, 3100.0, 4900.0, 3600.0];
        let s = spread(&mut ms);
        assert_eq!(s["count"], 4);
        assert_eq!(s["median"], 3500.0);
        assert_eq!(s["p90"], 4900.0);
        assert_eq!(s["min"], 3100.0);
        assert_eq!(s["max"], 4900.0);
        let mut odd: Vec<f64> = (1..=21).map(f64::from).collect();
        let s = spread(&mut odd);
        assert_eq!(s["median"], 11.0);
        assert_eq!(s["p90"], 19.0);
        assert!(spread(&mut []).get("median").is_some_and(Value::is_null));
    }

    #[test]
    fn a_turn_is_answered_with_roll_or_a_legal_move() {
        let mut rng = Rng::new(3);
        let roll = json!({"type": "your_turn", "seq": 7, "must_roll": true});
        assert_eq!(
            answer("ABC", &roll, &mut rng),
            Some(json!({"type": "roll", "room": "ABC", "seq": 7}))
        );
        let play = json!({"type": "your_turn", "seq": 8, "legal": [{"piece": 1}]});
        assert_eq!(
            answer("ABC", &play, &mut rng).unwrap()["action"],
            json!({"piece": 1})
        );
        let none = json!({"type": "your_turn", "seq": 9, "legal": []});
        assert_eq!(answer("ABC", &none, &mut rng), None);
    }
}
