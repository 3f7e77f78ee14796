//! Cluster acceptance tests (docs/CLUSTER.md): real `parchis-server` processes in cluster
//! mode on loopback ports, one real NATS server (`PARCHIS_NATS_URL`, e.g.
//! `nats://127.0.0.1:4222`) and one fresh PostgreSQL database per test (created on the
//! server of `DATABASE_URL`, named after its database plus a random suffix, dropped at the
//! end). Without NATS or PostgreSQL each test prints `SKIPPED <test>: …`; with `CI` set it
//! fails instead. The tests run one at a time (they start several servers each).
//!
//! Run them alone with `cargo test -p parchis-server --test cluster`.

// The harness lands ahead of the tests that use all of it.
#![allow(dead_code)]

#[path = "../common/mod.rs"]
mod common;

mod audit;
mod db;
mod env;
mod harness;

mod routing;
mod start;
