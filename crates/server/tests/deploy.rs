//! The deploy files stay true: `rust-version` is the real minimum the lockfile needs and
//! the Dockerfile builds with exactly that toolchain; every path the systemd unit names is
//! created by the install steps of `deploy/README.md`; every setting of the binary is in
//! `deploy/parchis.env.example` and in the README's settings section.

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

/// The string constants `pub const X: &str = "parchis_…";` of `crates/server/src/metrics.rs`.
fn metric_names() -> Vec<String> {
    read("crates/server/src/metrics.rs")
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
