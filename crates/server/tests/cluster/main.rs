//! Cluster acceptance tests (docs/CLUSTER.md): real `parchis-server` processes in cluster
//! mode on loopback ports, one real NATS server (`PARCHIS_NATS_URL`, e.g.
//! `nats://127.0.0.1:4222`) and one fresh PostgreSQL database per test (created on the
//! server of `DATABASE_URL`, named after its database plus a random suffix, dropped at the
//! end). Without NATS or PostgreSQL each test prints `SKIPPED <test>: …`; with `CI` set it
//! fails instead. The tests run one at a time (they start several servers each).
//!
//! Run them alone with `cargo test -p parchis-server --test cluster`.

#[path = "../common/mod.rs"]
mod common;

mod audit;
mod checks;
mod db;
mod driver;
mod env;
mod fake_owner;
mod harness;
mod nats;
mod proxy;
mod setup;

mod accounts;
mod clock;
mod db_outage;
mod drain;
mod edge_faults;
mod failover;
mod faults;
mod first_join;
mod game;
mod hostile;
mod lobby;
mod lost_commit;
mod pairing;
mod pause;
mod rename;
mod rerated;
mod routing;
mod start;
mod tournament;
mod tournament_nodes;
mod unknown_codes;
