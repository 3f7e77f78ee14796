//! The real `parchis-server` binary as a child process, for the tests that kill it
//! (tests/restart.rs, tests/kill_during_start.rs): a free loopback port, a single node
//! whatever the environment says, and a WebSocket client to it.

use crate::common::http_at;
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A running server process; dropping it kills the process, whatever happened.
pub struct Proc {
    pub child: Child,
    pub addr: SocketAddr,
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Proc {
    /// SIGKILL, and waits for the process to end.
    pub fn kill(&mut self) {
        self.child.kill().expect("SIGKILL");
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

/// Starts the binary on a free port with `data_dir`, `--commands-per-second 2000`,
/// `PARCHIS_LOG=warn`, PostgreSQL at `database_url` (else SQLite in `data_dir`), no
/// NATS, and the extra `args` and `envs`; waits until `/healthz` answers.
pub async fn spawn(
    data_dir: &Path,
    database_url: Option<&str>,
    args: &[&str],
    envs: &[(&str, &str)],
) -> Proc {
    let port = free_port();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_parchis-server"));
    cmd.arg("--port")
        .arg(port.to_string())
        .arg("--data-dir")
        .arg(data_dir)
        .arg("--commands-per-second")
        .arg("2000")
        .args(args)
        .env("PARCHIS_LOG", "warn")
        // A single node, whatever the environment says (CI sets it for the cluster tests).
        .env_remove("PARCHIS_NATS_URL")
        .envs(envs.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    match database_url {
        Some(url) => cmd.env("DATABASE_URL", url),
        None => cmd.env_remove("DATABASE_URL"),
    };
    let child = cmd.spawn().expect("spawn the server binary");
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    let proc = Proc { child, addr };
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(addr).await.is_ok() {
            let (status, _) = http_at(addr, "GET", "/healthz", None).await;
            if status == 200 {
                return proc;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("server did not come up on {addr}");
}
