//! `parchis-server`: the online Parchís server binary.

use clap::Parser;
use parchis_server::logging::LogFormat;
use parchis_server::{AppState, ServerConfig};
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use tokio_util::sync::CancellationToken;

/// Authoritative online Parchís server.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// Address to bind.
    #[arg(long, env = "PARCHIS_BIND", default_value = "127.0.0.1")]
    bind: IpAddr,
    /// TCP port.
    #[arg(long, env = "PARCHIS_PORT", default_value_t = 8080)]
    port: u16,
    /// Database URL (`postgres://…` or `sqlite:…`); none: SQLite file in the data dir.
    #[arg(long, env = "DATABASE_URL")]
    database_url: Option<String>,
    /// Directory of the default SQLite database.
    #[arg(long, env = "PARCHIS_DATA_DIR", default_value = "data")]
    data_dir: PathBuf,
    /// Log filter (tracing `EnvFilter` syntax), e.g. `info` or `parchis_server=debug`.
    #[arg(long, env = "PARCHIS_LOG", default_value = "info")]
    log: String,
    /// Log line format: `text` (colours only on a terminal) or `json` (one object a line).
    #[arg(long, env = "PARCHIS_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
    /// Base URL used in invite links; default `http://BIND:PORT`.
    #[arg(long, env = "PARCHIS_PUBLIC_URL")]
    public_url: Option<String>,
    /// Largest WebSocket text frame accepted; larger frames get `frame_too_large`.
    #[arg(long, env = "PARCHIS_MAX_MESSAGE_BYTES", default_value_t = 16 * 1024)]
    max_message_bytes: usize,
    /// WebSocket read buffer per connection, bytes.
    #[arg(long, env = "PARCHIS_READ_BUFFER_BYTES", default_value_t = 4 * 1024)]
    read_buffer_bytes: usize,
    /// Commands per second allowed per connection.
    #[arg(long, env = "PARCHIS_COMMANDS_PER_SECOND", default_value_t = 10)]
    commands_per_second: u32,
    /// Outbound messages queued per connection before it is dropped as too slow.
    #[arg(long, env = "PARCHIS_OUTBOUND_QUEUE", default_value_t = 256)]
    outbound_queue: usize,
    /// Bearer token of the admin API (`/admin/…`); unset: the admin API is disabled.
    #[arg(long, env = "PARCHIS_ADMIN_TOKEN", hide_env_values = true)]
    admin_token: Option<String>,
    /// Fixed dice seed, for tests only: every game's dice become predictable.
    #[arg(long, env = "PARCHIS_DICE_SEED", hide = true)]
    dice_seed: Option<u64>,
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let args = Args::parse();
    parchis_server::logging::init(args.log_format, &args.log);
    match serve(args).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %e, "server failed");
            std::process::ExitCode::FAILURE
        }
    }
}

#[derive(Debug, thiserror::Error)]
enum MainError {
    #[error("store: {0}")]
    Store(#[from] parchis_store::StoreError),
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
}

async fn serve(args: Args) -> Result<(), MainError> {
    let addr = SocketAddr::new(args.bind, args.port);
    let store = parchis_store::open_store(args.database_url.as_deref(), &args.data_dir).await?;
    let config = ServerConfig {
        public_url: args.public_url.unwrap_or_else(|| format!("http://{addr}")),
        max_message_bytes: args.max_message_bytes,
        hard_max_message_bytes: args.max_message_bytes.saturating_mul(4),
        read_buffer_bytes: args.read_buffer_bytes,
        commands_per_second: args.commands_per_second,
        outbound_queue: args.outbound_queue,
        dice_seed: args.dice_seed,
        admin_token: args.admin_token.filter(|t| !t.trim().is_empty()),
        ..ServerConfig::default()
    };
    let state = AppState::new(config, store);
    let listener = tokio::net::TcpListener::bind(addr).await?;
    tracing::info!(%addr, "listening");
    let shutdown = CancellationToken::new();
    let signal = shutdown.clone();
    tokio::spawn(async move {
        wait_for_signal().await;
        tracing::info!("signal received: shutting down");
        signal.cancel();
    });
    parchis_server::run(listener, state, shutdown).await?;
    Ok(())
}

async fn wait_for_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}
