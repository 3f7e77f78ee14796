//! The deploy files stay true: `rust-version` is the real minimum the lockfile needs and
//! the Dockerfile builds with exactly that toolchain; every path the systemd unit names is
//! created by the install steps of `deploy/README.md`; every setting of the binary is in
//! `deploy/parchis.env.example` and in the README's settings section; the compose file
//! runs one node by default and a cluster (NATS, nodes on PostgreSQL, a load balancer)
//! in its `cluster` profile; stop timeouts exceed the drain timeout.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"))
}

/// `"1.89"` → `(1, 89)`; a patch level is ignored.
fn version(v: &str) -> (u32, u32) {
    let mut parts = v.trim().split('.').map(|p| p.parse::<u32>().ok());
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(major), Some(minor)) => (major, minor),
        _ => panic!("not a version: {v:?}"),
    }
}

/// The `rust-version` of `[workspace.package]`.
fn declared_rust_version() -> (u32, u32) {
    let manifest = read("Cargo.toml");
    let line = manifest
        .lines()
        .find(|l| l.trim_start().starts_with("rust-version"))
        .expect("rust-version in Cargo.toml");
    let value = line.split('"').nth(1).expect("quoted rust-version");
    version(value)
}

/// The highest toolchain any locked dependency (from a registry or git, not the workspace's
/// own crates) needs on Linux: its `rust-version`, or the edition's first release (2024:
/// 1.85, 2021: 1.56) when it states none.
fn required_rust_version() -> ((u32, u32), String) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(root())
        .args([
            "metadata",
            "--format-version",
            "1",
            "--locked",
            "--offline",
            "--filter-platform",
            "x86_64-unknown-linux-gnu",
        ])
        .output()
        .expect("run cargo metadata");
    assert!(
        out.status.success(),
        "cargo metadata --locked failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata JSON");
    let mut best = ((0, 0), String::new());
    for p in meta["packages"].as_array().expect("packages") {
        if p["source"].is_null() {
            continue; // a workspace crate: it states the workspace's own rust-version
        }
        let from_edition = match p["edition"].as_str() {
            Some("2024") => (1, 85),
            Some("2021") => (1, 56),
            _ => (1, 0),
        };
        let stated = p["rust_version"].as_str().map(version).unwrap_or((1, 0));
        let need = stated.max(from_edition);
        if need > best.0 {
            best = (need, format!("{} {}", p["name"], p["version"]));
        }
    }
    best
}

#[test]
fn rust_version_is_the_lockfile_minimum_and_the_dockerfile_uses_it() {
    let declared = declared_rust_version();
    let (required, by) = required_rust_version();
    assert_eq!(
        declared, required,
        "Cargo.toml says rust-version {declared:?}, the lockfile needs {required:?} ({by})"
    );
    let dockerfile = read("Dockerfile");
    let image = dockerfile
        .lines()
        .find_map(|l| l.trim().strip_prefix("FROM rust:"))
        .expect("a FROM rust:… line in the Dockerfile");
    let tag = image.split_whitespace().next().unwrap_or(image);
    let tag_version = version(tag.split('-').next().unwrap_or(tag));
    assert_eq!(
        tag_version, declared,
        "the Dockerfile builds with rust:{tag}, rust-version is {declared:?}"
    );
    assert!(
        dockerfile.contains("--locked"),
        "the image builds the locked dependencies"
    );
}

#[test]
fn every_path_of_the_systemd_unit_is_created_by_the_install_steps() {
    let unit = read("deploy/parchis.service");
    let guide = read("deploy/README.md");
    let state_dir = unit
        .lines()
        .find_map(|l| l.strip_prefix("StateDirectory="))
        .map(|d| format!("/var/lib/{}", d.trim()))
        .expect("StateDirectory");
    let mut checked = 0;
    for line in unit.lines().filter(|l| !l.starts_with('#')) {
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let paths: Vec<&str> = match key {
            "ExecStart" | "EnvironmentFile" | "WorkingDirectory" => {
                value.split_whitespace().take(1).collect()
            }
            "Documentation" => value
                .split_whitespace()
                .filter_map(|u| u.strip_prefix("file://"))
                .collect(),
            "Environment" => value
                .split_whitespace()
                .filter_map(|kv| kv.split_once('=').map(|(_, v)| v))
                .filter(|v| v.starts_with('/'))
                .collect(),
            _ => continue,
        };
        for path in paths {
            checked += 1;
            let path = path.trim_start_matches('-');
            if path == state_dir {
                continue; // systemd creates the StateDirectory
            }
            assert!(
                guide.contains(path),
                "deploy/parchis.service names {path} ({key}), which deploy/README.md never installs"
            );
        }
    }
    assert!(checked >= 4, "unit paths checked: {checked}");
}

/// `[env: NAME=…]` of every option in `parchis-server --help`.
fn settings() -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_parchis-server"))
        .arg("--help")
        .output()
        .expect("run parchis-server --help");
    let help = String::from_utf8_lossy(&out.stdout).to_string();
    let names: Vec<String> = help
        .split("[env: ")
        .skip(1)
        .filter_map(|s| s.split(['=', ']']).next())
        .map(str::to_owned)
        .collect();
    assert!(names.len() >= 10, "settings found: {names:?}");
    names
}

#[test]
fn every_setting_is_documented_in_the_env_example_and_the_readme() {
    let example = read("deploy/parchis.env.example");
    let readme = read("README.md");
    let section = readme
        .split("## Server settings")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("a Server settings section in README.md");
    for name in settings() {
        assert!(
            example.contains(&format!("{name}=")),
            "{name} missing from deploy/parchis.env.example"
        );
        assert!(
            section.contains(&name),
            "{name} missing from README.md's Server settings"
        );
    }
}

/// The string constants `pub const X: &str = "parchis_…";` of `crates/telemetry/src/names.rs`.
fn metric_names() -> Vec<String> {
    read("crates/telemetry/src/names.rs")
        .lines()
        .filter(|l| l.starts_with("pub const ") && l.contains(": &str = \"parchis_"))
        .filter_map(|l| l.split('"').nth(1).map(str::to_owned))
        .collect()
}

#[test]
fn the_grafana_dashboard_charts_every_metric_and_only_real_ones() {
    let names = metric_names();
    assert!(names.len() >= 20, "{names:?}");
    let dashboard: serde_json::Value =
        serde_json::from_str(&read("deploy/grafana-dashboard.json")).expect("dashboard JSON");
    let mut used = std::collections::BTreeSet::new();
    for panel in dashboard["panels"].as_array().expect("panels") {
        for target in panel["targets"].as_array().expect("targets") {
            let expr = target["expr"].as_str().expect("expr");
            for word in expr.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
                if !word.starts_with("parchis_") {
                    continue;
                }
                let base = ["_bucket", "_sum", "_count"]
                    .iter()
                    .find_map(|s| word.strip_suffix(s))
                    .filter(|b| names.iter().any(|n| n == b))
                    .unwrap_or(word);
                assert!(
                    names.iter().any(|n| n == base),
                    "the dashboard queries {word}, which the server does not export"
                );
                used.insert(base.to_owned());
            }
        }
    }
    for name in &names {
        assert!(used.contains(name), "the dashboard does not chart {name}");
    }
}

/// One service of `docker-compose.yml`: its environment, profiles and other top-level
/// keys (`key: value` on one line), read by indentation (the file keeps to two spaces).
#[derive(Debug, Default)]
struct Service {
    env: std::collections::BTreeMap<String, String>,
    profiles: Vec<String>,
    keys: std::collections::BTreeMap<String, String>,
    /// Every line of the service, for checks of nested keys.
    text: String,
}

fn compose_services() -> std::collections::BTreeMap<String, Service> {
    let compose = read("docker-compose.yml");
    let mut services = std::collections::BTreeMap::new();
    let mut in_services = false;
    let mut current: Option<String> = None;
    let mut section = String::new();
    for line in compose.lines() {
        if line.trim_start().starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let trimmed = line.trim();
        if indent == 0 {
            in_services = trimmed == "services:";
            current = None;
            continue;
        }
        if !in_services {
            continue;
        }
        if indent == 2 {
            let name = trimmed.trim_end_matches(':').to_string();
            services.insert(name.clone(), Service::default());
            current = Some(name);
            continue;
        }
        let Some(svc) = current.as_ref().and_then(|n| services.get_mut(n)) else {
            continue;
        };
        svc.text.push_str(line);
        svc.text.push('\n');
        let (key, value) = trimmed.split_once(':').unwrap_or((trimmed, ""));
        let value = value.trim().trim_matches('"').to_string();
        if indent == 4 {
            section = key.to_string();
            if key == "profiles" {
                svc.profiles = value
                    .trim_matches(['[', ']'])
                    .split(',')
                    .map(|p| p.trim().trim_matches('"').to_string())
                    .filter(|p| !p.is_empty())
                    .collect();
            }
            svc.keys.insert(key.to_string(), value);
        } else if indent == 6 && section == "environment" {
            svc.env.insert(key.to_string(), value);
        }
    }
    services
}

/// The database name of a `postgres://…/NAME` URL.
fn database_name(url: &str) -> &str {
    url.rsplit('/')
        .next()
        .unwrap_or("")
        .split('?')
        .next()
        .unwrap_or("")
}

/// `"30s"` → 30; `"1m30s"` → 90.
fn seconds(s: &str) -> u64 {
    let mut total = 0;
    let mut n = 0;
    for c in s.trim().chars() {
        match c {
            '0'..='9' => n = n * 10 + u64::from(c as u8 - b'0'),
            'm' => (total, n) = (total + 60 * n, 0),
            's' => (total, n) = (total + n, 0),
            _ => panic!("not a duration: {s:?}"),
        }
    }
    total + n
}

/// The `[default: N]` of `--drain-timeout-secs` in `parchis-server --help`.
fn default_drain_timeout_secs() -> u64 {
    let out = Command::new(env!("CARGO_BIN_EXE_parchis-server"))
        .arg("--help")
        .output()
        .expect("run parchis-server --help");
    let help = String::from_utf8_lossy(&out.stdout).to_string();
    let after = help
        .split("--drain-timeout-secs")
        .nth(1)
        .expect("--drain-timeout-secs in --help");
    let default = after
        .split("[default: ")
        .nth(1)
        .and_then(|s| s.split(']').next())
        .expect("a default drain timeout");
    default.parse().expect("drain timeout in seconds")
}

#[test]
fn the_compose_file_runs_one_node_by_default_and_a_cluster_in_its_profile() {
    let services = compose_services();
    let known = settings();
    // Every variable a service sets is a real setting of the server (or the database's).
    for (name, svc) in &services {
        for key in svc.env.keys() {
            if key.starts_with("PARCHIS_") {
                assert!(
                    known.contains(key),
                    "service {name} sets {key}, which parchis-server does not read"
                );
            }
        }
    }
    // The default: one node, no NATS, always started.
    let single = &services["server"];
    assert!(
        single.profiles.is_empty(),
        "the single node starts by default"
    );
    assert!(!single.env.contains_key("PARCHIS_NATS_URL"));
    let single_db = database_name(&single.env["DATABASE_URL"]);
    assert_eq!(single_db, "parchis");

    // The cluster profile: NATS and at least two nodes.
    let nats = services.get("nats").expect("a nats service");
    assert_eq!(nats.profiles, ["cluster"]);
    let nodes: Vec<(&String, &Service)> = services
        .iter()
        .filter(|(_, s)| s.env.contains_key("PARCHIS_NATS_URL"))
        .collect();
    assert!(nodes.len() >= 2, "two cluster nodes: {:?}", services.keys());
    let mut ids = std::collections::BTreeSet::new();
    let mut ports = std::collections::BTreeSet::new();
    let drain_default = default_drain_timeout_secs();
    for (name, node) in &nodes {
        assert_eq!(
            node.profiles,
            ["cluster"],
            "{name} is in the cluster profile"
        );
        assert_eq!(node.env["PARCHIS_NATS_URL"], "nats://nats:4222", "{name}");
        let db = &node.env["DATABASE_URL"];
        assert!(
            db.starts_with("postgres://"),
            "{name}: cluster mode needs PostgreSQL"
        );
        assert_eq!(database_name(db), "parchis_cluster", "{name}");
        assert_ne!(
            database_name(db),
            single_db,
            "a single node must never share the cluster's database"
        );
        assert_eq!(
            node.env.get("PARCHIS_CLUSTER").map(String::as_str),
            Some("parchis")
        );
        assert!(
            ids.insert(node.env["PARCHIS_NODE_ID"].clone()),
            "{name}: node ids differ"
        );
        assert!(
            ports.insert(
                node.text
                    .lines()
                    .find(|l| l.contains(":8080\""))
                    .map(str::trim)
                    .map(str::to_owned)
            ),
            "{name}: host ports differ"
        );
        let drain = node
            .env
            .get("PARCHIS_DRAIN_TIMEOUT_SECS")
            .map(|d| d.parse::<u64>().expect("drain secs"))
            .unwrap_or(drain_default);
        let grace = seconds(
            node.keys
                .get("stop_grace_period")
                .expect("stop_grace_period"),
        );
        assert!(
            grace > drain,
            "{name}: stop_grace_period {grace} s must exceed the drain timeout {drain} s"
        );
        assert_eq!(
            node.keys.get("stop_signal").map(String::as_str),
            Some("SIGTERM")
        );
    }
    // The database the nodes use is created by the init script the db service mounts.
    let db = &services["db"];
    assert!(db
        .text
        .contains("./deploy/postgres-init:/docker-entrypoint-initdb.d"));
    let init = read("deploy/postgres-init/10-cluster-database.sql");
    assert!(init.contains("CREATE DATABASE parchis_cluster"), "{init}");
    // The load balancer sends to every node, and the nodes trust its address.
    let lb = services.get("lb").expect("a load balancer");
    assert_eq!(lb.profiles, ["cluster"]);
    let conf = read("deploy/nginx-cluster.conf");
    let lb_ip = lb
        .text
        .lines()
        .find_map(|l| l.trim().strip_prefix("ipv4_address:"))
        .map(str::trim)
        .expect("the load balancer's fixed address");
    for (name, node) in &nodes {
        assert!(
            conf.contains(&format!("server {name}:8080")),
            "nginx upstream lacks {name}"
        );
        assert_eq!(
            node.env["PARCHIS_TRUSTED_PROXIES"], lb_ip,
            "{name} trusts the balancer"
        );
    }
    // The guide says how to run both.
    let guide = read("deploy/CLUSTER.md");
    assert!(guide.contains("docker compose --profile cluster up"));
    assert!(guide.contains("docker compose up --build -d"));
}

#[test]
fn the_systemd_stop_timeout_exceeds_the_drain_timeout() {
    let unit = read("deploy/parchis.service");
    let timeout = unit
        .lines()
        .find_map(|l| l.strip_prefix("TimeoutStopSec="))
        .map(seconds)
        .expect("TimeoutStopSec");
    let drain = default_drain_timeout_secs();
    assert_eq!(drain, 20, "the documented default");
    assert!(
        timeout > drain,
        "TimeoutStopSec={timeout}s must exceed --drain-timeout-secs {drain}"
    );
    assert!(unit.contains("KillSignal=SIGTERM"));
    assert_eq!(seconds("1m30s"), 90);
}
