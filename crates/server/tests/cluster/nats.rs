//! A nats-server of the test's own (`/usr/sbin/nats-server`, or `PARCHIS_NATS_SERVER`) on
//! a free loopback port, which a test can stop and start again on the same port (a NATS
//! restart) without touching the shared server of the other tests.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running (or stopped) nats-server of one test; killed when dropped.
pub struct NatsServer {
    port: u16,
    child: Option<Child>,
}

/// The nats-server binary.
fn binary() -> String {
    std::env::var("PARCHIS_NATS_SERVER").unwrap_or_else(|_| "/usr/sbin/nats-server".into())
}

impl NatsServer {
    /// Starts a nats-server on a free port and waits until it accepts connections.
    pub async fn start() -> NatsServer {
        let mut n = NatsServer {
            port: crate::env::free_port(),
            child: None,
        };
        n.up().await;
        n
    }

    /// `nats://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Starts the server again on the same port (after [`NatsServer::stop`]).
    pub async fn up(&mut self) {
        assert!(self.child.is_none(), "nats-server still runs");
        let child = Command::new(binary())
            .args(["-a", "127.0.0.1", "-p", &self.port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", binary()));
        self.child = Some(child);
        let until = Instant::now() + Duration::from_secs(10);
        while tokio::net::TcpStream::connect(("127.0.0.1", self.port))
            .await
            .is_err()
        {
            assert!(Instant::now() < until, "nats-server did not listen in 10 s");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Kills the server (`kill -9`: every connection drops at once).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        self.stop();
    }
}
