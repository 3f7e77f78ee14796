//! Who wrote each stored event. A trigger in the test's database (not in the product's
//! migrations) records, for every piece of a packed game log (issue 28) written to
//! `game_log_tail` (the game's one tail row, inserted by its first append and updated by
//! each later one: `postgres/0017_game_log_tail_row.sql`), the writing connection's client
//! port and the room's lease as the writing transaction saw it, and when; the test maps client
//! ports to node processes through `/proc` (each node's TCP sockets to the database,
//! sampled every 100 ms: [`Holders`]). A write by a node that was not the lease's owner in
//! that same transaction is a fencing failure.

use crate::harness::Cluster;
use sqlx::Row;
use std::collections::{HashMap, HashSet};

/// Who held each client port to the database, and when (unix ms of the first and last
/// sample that saw it). An ephemeral port may be held by one node, then (after a kill
/// and a restart) by another: a write is the holder's whose time window covers it.
pub type Holders = HashMap<u16, Vec<Holding>>;

/// One node's holding of a port.
#[derive(Clone, Debug)]
pub struct Holding {
    pub node: String,
    pub first_ms: i64,
    pub last_ms: i64,
}

/// Between two samples: a connection may open up to this long before the first sample
/// that sees it and close up to this long after the last.
const SAMPLE_SLACK_MS: i64 = 150;

/// Records that `node` held `port` at `now_ms`.
pub fn record(holders: &mut Holders, port: u16, node: &str, now_ms: i64) {
    let held = holders.entry(port).or_default();
    match held.last_mut() {
        Some(h) if h.node == node => h.last_ms = now_ms,
        _ => held.push(Holding {
            node: node.to_owned(),
            first_ms: now_ms,
            last_ms: now_ms,
        }),
    }
}

/// The node that wrote through `port` at `at_ms`: the one whose holding window (with
/// [`SAMPLE_SLACK_MS`]) covers it, if exactly one node's does.
pub fn writer(holders: &Holders, port: u16, at_ms: i64) -> Option<String> {
    let mut nodes: Vec<&str> = holders
        .get(&port)?
        .iter()
        .filter(|h| h.first_ms - SAMPLE_SLACK_MS <= at_ms && at_ms <= h.last_ms + SAMPLE_SLACK_MS)
        .map(|h| h.node.as_str())
        .collect();
    nodes.sort_unstable();
    nodes.dedup();
    match nodes.as_slice() {
        [one] => Some((*one).to_owned()),
        _ => None,
    }
}

/// One audited write.
#[derive(Clone, Debug)]
pub struct Write {
    pub room: String,
    pub seq: i64,
    /// The writer's node id, when its connection was seen (`None`: unknown).
    pub node: Option<String>,
    pub lease_owner: Option<String>,
    pub lease_epoch: Option<i64>,
}

/// Creates the audit table and trigger (once the cluster tables exist). Returns whether
/// auditing is on.
pub async fn install(cluster: &Cluster) -> bool {
    let leases: Option<String> =
        sqlx::query_scalar("SELECT to_regclass('public.room_leases')::TEXT")
            .fetch_one(&cluster.db)
            .await
            .expect("look for room_leases");
    if leases.is_none() {
        eprintln!("{}: no room_leases table: writes not audited", cluster.test);
        return false;
    }
    for sql in [
        "CREATE TABLE test_writes (id BIGSERIAL PRIMARY KEY, room_code TEXT, seq BIGINT, \
         client_port INTEGER, lease_owner TEXT, lease_epoch BIGINT, at_ms BIGINT)",
        "CREATE FUNCTION test_audit_write() RETURNS trigger LANGUAGE plpgsql AS $$ \
         DECLARE r TEXT; o TEXT; e BIGINT; \
         BEGIN \
           SELECT room_code INTO r FROM games WHERE id = NEW.game_id; \
           SELECT owner, epoch INTO o, e FROM room_leases WHERE room_code = r; \
           INSERT INTO test_writes (room_code, seq, client_port, lease_owner, lease_epoch, at_ms) \
             VALUES (r, NEW.last_seq, inet_client_port(), o, e, \
                     (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT); \
           RETURN NEW; \
         END $$",
        // Every append inserts or updates the game's tail row with one more piece; a
        // fold's reset (no pieces left: the bytes moved to `games.log`, in the same
        // transaction as the append that filled the tail) writes no piece.
        "CREATE TRIGGER test_audit_write AFTER INSERT OR UPDATE ON game_log_tail \
         FOR EACH ROW WHEN (NEW.pieces > 0) EXECUTE FUNCTION test_audit_write()",
    ] {
        sqlx::query(sql)
            .execute(&cluster.db)
            .await
            .expect("install the write audit");
    }
    true
}

/// Every audited write, in commit order of insertion, with its writer named by `ports`.
pub async fn writes(cluster: &Cluster, ports: &Holders) -> Vec<Write> {
    sqlx::query(
        "SELECT room_code, seq, client_port, lease_owner, lease_epoch, at_ms FROM test_writes ORDER BY id",
    )
    .fetch_all(&cluster.db)
    .await
    .expect("read test_writes")
    .iter()
    .map(|r| {
        let port: Option<i32> = r.get("client_port");
        let at_ms: Option<i64> = r.get("at_ms");
        Write {
            room: r.get::<Option<String>, _>("room_code").unwrap_or_default(),
            seq: r.get("seq"),
            node: port
                .and_then(|p| u16::try_from(p).ok())
                .zip(at_ms)
                .and_then(|(p, at)| writer(ports, p, at)),
            lease_owner: r.get("lease_owner"),
            lease_epoch: r.get("lease_epoch"),
        }
    })
    .collect()
}

/// Local ports of process `pid`'s TCP connections to remote port `db_port` (Linux
/// `/proc`; empty elsewhere or when the process is gone).
pub fn db_ports(pid: u32, db_port: u16) -> HashSet<u16> {
    let mut inodes = HashSet::new();
    if let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) {
        for fd in dir.flatten() {
            if let Ok(target) = std::fs::read_link(fd.path()) {
                let t = target.to_string_lossy();
                if let Some(inode) = t.strip_prefix("socket:[").and_then(|s| s.strip_suffix(']')) {
                    inodes.insert(inode.to_owned());
                }
            }
        }
    }
    let mut ports = HashSet::new();
    for table in ["tcp", "tcp6"] {
        let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/net/{table}")) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let cols: Vec<&str> = line.split_whitespace().collect();
            if cols.len() < 10 || !inodes.contains(cols[9]) {
                continue;
            }
            let port_of = |addr: &str| {
                addr.rsplit(':')
                    .next()
                    .and_then(|p| u16::from_str_radix(p, 16).ok())
            };
            if port_of(cols[2]) == Some(db_port) {
                if let Some(local) = port_of(cols[1]) {
                    ports.insert(local);
                }
            }
        }
    }
    ports
}

/// Checks that every write made by a known node was made while that node owned the room
/// (`room_leases.owner` as read in the writing transaction), and that a room's lease
/// epochs never go back from one write to the next. Returns `(known, unknown)` writes.
pub fn writes_by_owners(writes: &[Write]) -> (usize, usize) {
    let mut last_epoch: HashMap<&str, i64> = HashMap::new();
    let (mut known, mut unknown) = (0, 0);
    for w in writes {
        assert!(
            w.lease_owner.is_some(),
            "room {} seq {}: an event was written with no lease row",
            w.room,
            w.seq
        );
        if let Some(e) = w.lease_epoch {
            let prev = last_epoch.insert(&w.room, e);
            assert!(
                prev.is_none_or(|p| p <= e),
                "room {} seq {}: written under epoch {e} after a write under {prev:?}",
                w.room,
                w.seq
            );
        }
        match &w.node {
            Some(node) => {
                known += 1;
                assert_eq!(
                    Some(node),
                    w.lease_owner.as_ref(),
                    "room {} seq {}: node {node} wrote while {:?} owned the room (epoch {:?}): a late write was not refused",
                    w.room,
                    w.seq,
                    w.lease_owner,
                    w.lease_epoch
                );
            }
            None => unknown += 1,
        }
    }
    (known, unknown)
}

/// A port held by b, then (after b's kill and a restart) by c: each write is its own
/// holder's; a write at a moment either could have made is nobody's.
#[test]
fn a_reused_port_names_the_writer_of_its_time() {
    let mut h = Holders::new();
    for t in [1_000, 1_100, 1_200] {
        record(&mut h, 40_000, "b", t);
    }
    for t in [5_000, 5_100] {
        record(&mut h, 40_000, "c", t);
    }
    assert_eq!(writer(&h, 40_000, 1_150).as_deref(), Some("b"));
    assert_eq!(writer(&h, 40_000, 5_050).as_deref(), Some("c"));
    assert_eq!(writer(&h, 40_000, 3_000), None, "seen by no sample");
    assert_eq!(writer(&h, 40_001, 1_150), None, "never seen");
    record(&mut h, 40_000, "b", 5_200);
    assert_eq!(writer(&h, 40_000, 5_150), None, "both held it then");
}
