//! `parchis-server`: the online Parchís server binary.

use clap::Parser;
use parchis_server::config::{AccountLimits, Limits, Timeouts, TournamentLimits};
use parchis_server::logging::LogFormat;
use parchis_server::{AppState, ServerConfig};
use parchis_store::{PostgresOptions, SqliteOptions};
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;
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
    /// SQLite only: bytes the WAL file (`<db>-wal`) is kept within (truncated beyond).
    #[arg(long, env = "PARCHIS_SQLITE_WAL_LIMIT_BYTES", default_value_t = SqliteOptions::default().wal_limit_bytes)]
    sqlite_wal_limit_bytes: u64,
    /// SQLite only: milliseconds between background WAL checkpoints (and size checks).
    #[arg(
        long,
        env = "PARCHIS_SQLITE_CHECKPOINT_INTERVAL_MS",
        default_value_t = 1000
    )]
    sqlite_checkpoint_interval_ms: u64,
    /// SQLite only: milliseconds the truncating checkpoint (WAL over its limit) waits for
    /// readers while writes are held (1 to 10000).
    #[arg(long, env = "PARCHIS_SQLITE_TRUNCATE_WAIT_MS", default_value_t = SqliteOptions::default().truncate_wait.as_millis() as u64)]
    sqlite_truncate_wait_ms: u64,
    /// PostgreSQL only: connections of the main pool (the group-commit writer, reads).
    #[arg(long, env = "PARCHIS_PG_POOL_SIZE", default_value_t = PostgresOptions::default().pool_connections)]
    pg_pool_size: u32,
    /// PostgreSQL, cluster mode only: connections kept for the lease statements alone
    /// (renewals, heartbeats, claims), so game traffic never makes them wait.
    #[arg(long, env = "PARCHIS_PG_LEASE_POOL_SIZE", default_value_t = PostgresOptions::default().lease_connections)]
    pg_lease_pool_size: u32,
    /// PostgreSQL, cluster mode only: `statement_timeout` and
    /// `idle_in_transaction_session_timeout` of the lease connections (ms).
    #[arg(
        long,
        env = "PARCHIS_PG_LEASE_STATEMENT_TIMEOUT_MS",
        default_value_t = 2000
    )]
    pg_lease_statement_timeout_ms: u64,
    /// Log filter (tracing `EnvFilter` syntax), e.g. `info` or `parchis_server=debug,parchis_room=debug,parchis_cluster=debug` (the gateway, the rooms and cluster mode are crates of their own).
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
    #[arg(long, env = "PARCHIS_OUTBOUND_QUEUE", default_value_t = 4096)]
    outbound_queue: usize,
    /// Bearer token of the admin API (`/admin/…`); unset: the admin API is disabled.
    #[arg(long, env = "PARCHIS_ADMIN_TOKEN", hide_env_values = true)]
    admin_token: Option<String>,
    /// Tests only: `POST /admin/debug/stall` (admin token) blocks every worker thread;
    /// `POST /admin/debug/shed` makes a cluster node shed load.
    #[arg(long, env = "PARCHIS_DEBUG_STALL_HOOK", hide = true)]
    debug_stall_hook: bool,
    /// Kernel send buffer per connection, bytes (0: the OS default, which grows to MBs).
    #[arg(long, env = "PARCHIS_SEND_BUFFER_BYTES", default_value_t = 64 * 1024)]
    send_buffer_bytes: usize,
    /// Bytes queued for a connection and not yet written before it is dropped as too slow.
    #[arg(long, env = "PARCHIS_OUTBOUND_QUEUE_BYTES", default_value_t = ServerConfig::default().outbound_queue_bytes)]
    outbound_queue_bytes: usize,
    /// At most one presence frame per room per this many milliseconds (changes coalesce).
    #[arg(long, env = "PARCHIS_PRESENCE_INTERVAL_MS", default_value_t = 250)]
    presence_interval_ms: u64,
    /// Seconds an unstarted room with nobody in it lives.
    #[arg(long, env = "PARCHIS_LOBBY_IDLE_SECS", default_value_t = 600)]
    lobby_idle_secs: u64,
    /// Milliseconds the players of a quick pairing's room have to claim their seats
    /// before its lobby is closed and those who claimed wait in the pool again.
    #[arg(long, env = "PARCHIS_PAIRING_CLAIM_WAIT_MS", default_value_t = 60_000)]
    pairing_claim_wait_ms: u64,
    /// Minimum bot think time, ms, in a room where no person is connected (not in a
    /// tournament room, whose bots keep the tournament's think time).
    #[arg(
        long,
        env = "PARCHIS_MIN_UNWATCHED_BOT_THINK_MS",
        default_value_t = 1000
    )]
    min_unwatched_bot_think_ms: u64,
    /// Unfinished tournaments one account may organise at once (one more: 409
    /// `too_many_tournaments`).
    #[arg(long, env = "PARCHIS_MAX_OPEN_TOURNAMENTS_PER_ACCOUNT", default_value_t = TournamentLimits::default().max_open_per_account)]
    max_open_tournaments_per_account: usize,
    /// Largest `bot_fill.up_to` of a tournament, in entrants (more: 400 `bad_request`).
    #[arg(long, env = "PARCHIS_MAX_TOURNAMENT_BOT_FILL", default_value_t = TournamentLimits::default().max_bot_fill)]
    max_tournament_bot_fill: u32,
    /// Maximum number of live rooms (503 `server_full` beyond).
    #[arg(long, env = "PARCHIS_MAX_ROOMS", default_value_t = 10_000)]
    max_rooms: usize,
    /// Open connections for the whole server (clamped below the open-file limit).
    #[arg(long, env = "PARCHIS_MAX_CONNECTIONS", default_value_t = Limits::default().max_connections)]
    max_connections: usize,
    /// Descriptors kept free below the open-file limit.
    #[arg(long, env = "PARCHIS_RESERVED_FDS", default_value_t = Limits::default().reserved_fds)]
    reserved_fds: usize,
    /// Answers to connections over a limit in flight at once (beyond: closed unanswered).
    #[arg(long, env = "PARCHIS_MAX_REFUSALS", default_value_t = Limits::default().max_refusals)]
    max_refusals: usize,
    /// `/readyz` and `/metrics` requests served at once on connections over a limit
    /// (within --max-refusals; 0: refused like any other path).
    #[arg(long, env = "PARCHIS_OPS_RESERVED", default_value_t = Limits::default().ops_reserved)]
    ops_reserved: usize,
    /// Open connections from one client address.
    #[arg(long, env = "PARCHIS_MAX_CONNECTIONS_PER_ADDRESS", default_value_t = Limits::default().max_connections_per_address)]
    max_connections_per_address: usize,
    /// Rooms one address may create per minute.
    #[arg(long, env = "PARCHIS_ROOM_CREATIONS_PER_MINUTE", default_value_t = Limits::default().room_creations_per_minute)]
    room_creations_per_minute: u32,
    /// Unstarted lobbies one address may have open at once.
    #[arg(long, env = "PARCHIS_MAX_LOBBIES_PER_ADDRESS", default_value_t = Limits::default().max_lobbies_per_address)]
    max_lobbies_per_address: usize,
    /// Rooms with bots (not finished) one address may have at once.
    #[arg(long, env = "PARCHIS_MAX_BOT_ROOMS_PER_ADDRESS", default_value_t = Limits::default().max_bot_rooms_per_address)]
    max_bot_rooms_per_address: usize,
    /// Rooms with bots (not finished) on the whole server.
    #[arg(long, env = "PARCHIS_MAX_BOT_ROOMS", default_value_t = Limits::default().max_bot_rooms)]
    max_bot_rooms: usize,
    /// Lookups by room code (HTTP and WebSocket join/watch/resume) per address and minute;
    /// also, counted apart, the reads of stored games (`GET /api/games...`).
    #[arg(long, env = "PARCHIS_LOOKUPS_PER_MINUTE", default_value_t = Limits::default().lookups_per_minute)]
    lookups_per_minute: u32,
    /// Account sign-ups per client address and hour.
    #[arg(long, env = "PARCHIS_SIGNUPS_PER_HOUR", default_value_t = AccountLimits::default().signups_per_hour)]
    signups_per_hour: u32,
    /// Log-in and recovery attempts per client address and minute.
    #[arg(long, env = "PARCHIS_LOGINS_PER_MINUTE", default_value_t = AccountLimits::default().logins_per_minute)]
    logins_per_minute: u32,
    /// Log-in and recovery attempts per username and hour, all addresses together.
    #[arg(long, env = "PARCHIS_LOGINS_PER_HOUR_PER_USERNAME", default_value_t = AccountLimits::default().logins_per_hour_per_username)]
    logins_per_hour_per_username: u32,
    /// Password hashes (Argon2id, 19 MiB each) computed at once; more wait their turn.
    #[arg(long, env = "PARCHIS_CONCURRENT_HASHES", default_value_t = AccountLimits::default().concurrent_hashes)]
    concurrent_hashes: usize,
    /// Spectator joins per address and minute.
    #[arg(long, env = "PARCHIS_WATCHES_PER_MINUTE", default_value_t = Limits::default().watches_per_minute)]
    watches_per_minute: u32,
    /// Seconds a client has to send a request's header (WebSocket upgrade included).
    #[arg(long, env = "PARCHIS_HEADER_READ_TIMEOUT_SECS", default_value_t = Timeouts::default().header_read.as_secs())]
    header_read_timeout_secs: u64,
    /// Seconds an HTTP request may take (408 beyond).
    #[arg(long, env = "PARCHIS_REQUEST_TIMEOUT_SECS", default_value_t = Timeouts::default().request.as_secs())]
    request_timeout_secs: u64,
    /// Seconds a WebSocket may stay without joining a room (then closed with 4004).
    #[arg(long, env = "PARCHIS_JOIN_TIMEOUT_SECS", default_value_t = Timeouts::default().join.as_secs())]
    join_timeout_secs: u64,
    /// Seconds between server pings.
    #[arg(long, env = "PARCHIS_PING_INTERVAL_SECS", default_value_t = Timeouts::default().ping_interval.as_secs())]
    ping_interval_secs: u64,
    /// Seconds of silence after a ping before a connection is dropped (4005).
    #[arg(long, env = "PARCHIS_PONG_TIMEOUT_SECS", default_value_t = Timeouts::default().pong_timeout.as_secs())]
    pong_timeout_secs: u64,
    /// Seconds a frame may wait to be written before its reader is dropped (4001).
    #[arg(long, env = "PARCHIS_WRITE_TIMEOUT_SECS", default_value_t = Timeouts::default().write.as_secs())]
    write_timeout_secs: u64,
    /// Reverse proxies (IP addresses, comma-separated) whose X-Forwarded-For names the
    /// client for the per-address limits.
    #[arg(long, env = "PARCHIS_TRUSTED_PROXIES", value_delimiter = ',')]
    trusted_proxies: Vec<IpAddr>,
    /// Origins whose pages may open a WebSocket, comma-separated (`*`: any); default: the
    /// public URL's origin. No Origin and the server's own Host are always allowed.
    #[arg(long, env = "PARCHIS_ALLOWED_ORIGINS", value_delimiter = ',')]
    allowed_origins: Vec<String>,
    /// NATS server URL: turns cluster mode on (`docs/CLUSTER.md`; needs PostgreSQL).
    #[arg(long, env = "PARCHIS_NATS_URL")]
    nats_url: Option<String>,
    /// This node's id in cluster mode (`[A-Za-z0-9_-]`, at most 32); default: random.
    #[arg(long, env = "PARCHIS_NODE_ID")]
    node_id: Option<String>,
    /// Cluster name: the NATS subject prefix, so clusters sharing a NATS server stay apart.
    #[arg(long, env = "PARCHIS_CLUSTER", default_value = "parchis")]
    cluster: String,
    /// A room lease not renewed for this long expires (ms, PostgreSQL's clock).
    #[arg(long, env = "PARCHIS_LEASE_TTL_MS", default_value_t = 3000)]
    lease_ttl_ms: u64,
    /// How often a node renews its leases, in one statement (ms).
    #[arg(long, env = "PARCHIS_LEASE_RENEW_MS", default_value_t = 1000)]
    lease_renew_ms: u64,
    /// How often every node looks for expired or unowned rooms (ms).
    #[arg(long, env = "PARCHIS_SWEEP_MS", default_value_t = 500)]
    sweep_ms: u64,
    /// Longest SIGTERM hand-off of a node's rooms before it exits anyway (s).
    #[arg(long, env = "PARCHIS_DRAIN_TIMEOUT_SECS", default_value_t = 20)]
    drain_timeout_secs: u64,
    /// Fixed dice seed, for tests only: every game's dice become predictable.
    #[arg(long, env = "PARCHIS_DICE_SEED", hide = true)]
    dice_seed: Option<u64>,
}

/// mimalloc instead of glibc's malloc: a server under load allocates and frees a frame,
/// a buffer or a task for every message (docs/BENCHMARKS.md, "Frames without rules, a lean
/// load generator, mimalloc").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let args = Args::parse();
    parchis_server::logging::init(args.log_format, &args.log);
    let checked = cluster_config(&args)
        .map(drop)
        .map_err(|e| e.to_string())
        .and_then(|()| limits(&args).validate().map_err(|e| e.to_string()))
        .and_then(|()| sqlite_options(&args).validate().map_err(|e| e.to_string()))
        .and_then(|()| {
            parchis_server::config::check_admin_token(args.admin_token.as_deref())
                .map_err(|e| e.to_string())
        });
    if let Err(e) = checked {
        eprintln!("parchis-server: {e}");
        tracing::error!(error = %e, "cannot start");
        return std::process::ExitCode::from(2);
    }
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
    #[error("{0}")]
    Cluster(#[from] parchis_cluster::ClusterError),
}

/// The cluster settings of `args`, `None` without `--nats-url`.
fn cluster_config(
    args: &Args,
) -> Result<Option<parchis_cluster::ClusterConfig>, parchis_cluster::ClusterError> {
    use parchis_cluster::{ClusterConfig, ClusterError, NodeId};
    let Some(url) = args.nats_url.as_deref().filter(|u| !u.trim().is_empty()) else {
        return Ok(None);
    };
    let postgres = args
        .database_url
        .as_deref()
        .is_some_and(|u| u.starts_with("postgres://") || u.starts_with("postgresql://"));
    if !postgres {
        return Err(ClusterError::NeedsPostgres);
    }
    let node_id = match &args.node_id {
        Some(id) => NodeId::new(id)?,
        None => NodeId::random(),
    };
    let ms = Duration::from_millis;
    let mut config = ClusterConfig::new(url, node_id).with_cluster(&args.cluster)?;
    config.lease_ttl = ms(args.lease_ttl_ms.max(100));
    config.lease_renew = ms(args
        .lease_renew_ms
        .clamp(50, args.lease_ttl_ms.max(100) / 2));
    config.sweep = ms(args.sweep_ms.max(50));
    config.drain_timeout = Duration::from_secs(args.drain_timeout_secs);
    Ok(Some(config))
}

/// The admission limits of `args` (checked with [`Limits::validate`] at start).
fn limits(args: &Args) -> Limits {
    Limits {
        max_connections: args.max_connections,
        reserved_fds: args.reserved_fds,
        max_connections_per_address: args.max_connections_per_address,
        room_creations_per_minute: args.room_creations_per_minute,
        max_lobbies_per_address: args.max_lobbies_per_address,
        max_bot_rooms_per_address: args.max_bot_rooms_per_address,
        max_bot_rooms: args.max_bot_rooms,
        lookups_per_minute: args.lookups_per_minute,
        watches_per_minute: args.watches_per_minute,
        trusted_proxies: args.trusted_proxies.clone(),
        max_refusals: args.max_refusals,
        ops_reserved: args.ops_reserved,
    }
}

/// The SQLite WAL options of `args` (checked with [`SqliteOptions::validate`] at start).
fn sqlite_options(args: &Args) -> SqliteOptions {
    SqliteOptions {
        wal_limit_bytes: args.sqlite_wal_limit_bytes,
        checkpoint_interval: Duration::from_millis(args.sqlite_checkpoint_interval_ms.max(10)),
        truncate_wait: Duration::from_millis(args.sqlite_truncate_wait_ms),
    }
}

/// The PostgreSQL pool options of `args`; lease connections only in cluster mode (a
/// single node has no leases).
fn postgres_options(args: &Args, cluster: bool) -> PostgresOptions {
    PostgresOptions {
        pool_connections: args.pg_pool_size.max(2),
        lease_connections: if cluster {
            args.pg_lease_pool_size.max(1)
        } else {
            0
        },
        lease_statement_timeout: Duration::from_millis(args.pg_lease_statement_timeout_ms.max(100)),
        // A node stopped inside a room write must not block the room's takeover for good.
        idle_in_transaction_timeout: cluster
            .then(|| Duration::from_millis(args.lease_ttl_ms.max(100))),
    }
}

/// The server's configuration from `args`, listening on `addr`.
fn server_config(args: Args, addr: SocketAddr, admission_limits: Limits) -> ServerConfig {
    let public_url = args.public_url.unwrap_or_else(|| format!("http://{addr}"));
    let allowed_origins = if args.allowed_origins.is_empty() {
        parchis_server::origin::origin_of(&public_url)
            .into_iter()
            .collect()
    } else {
        args.allowed_origins
    };
    let secs = Duration::from_secs;
    ServerConfig {
        public_url,
        max_message_bytes: args.max_message_bytes,
        hard_max_message_bytes: args.max_message_bytes.saturating_mul(4),
        read_buffer_bytes: args.read_buffer_bytes,
        send_buffer_bytes: (args.send_buffer_bytes > 0).then_some(args.send_buffer_bytes),
        commands_per_second: args.commands_per_second,
        outbound_queue: args.outbound_queue,
        dice_seed: args.dice_seed,
        admin_token: args.admin_token.filter(|t| !t.trim().is_empty()),
        debug_stall_hook: args.debug_stall_hook,
        max_rooms: args.max_rooms,
        outbound_queue_bytes: args.outbound_queue_bytes.max(64 * 1024),
        presence_interval: Duration::from_millis(args.presence_interval_ms),
        lobby_idle: secs(args.lobby_idle_secs.max(1)),
        min_unwatched_bot_think: Duration::from_millis(args.min_unwatched_bot_think_ms),
        limits: admission_limits,
        timeouts: Timeouts {
            header_read: secs(args.header_read_timeout_secs.max(1)),
            request: secs(args.request_timeout_secs.max(1)),
            join: secs(args.join_timeout_secs.max(1)),
            ping_interval: secs(args.ping_interval_secs.max(1)),
            pong_timeout: secs(args.pong_timeout_secs.max(1)),
            write: secs(args.write_timeout_secs.max(1)),
        },
        allowed_origins,
        accounts: AccountLimits {
            signups_per_hour: args.signups_per_hour,
            logins_per_minute: args.logins_per_minute,
            logins_per_hour_per_username: args.logins_per_hour_per_username,
            concurrent_hashes: args.concurrent_hashes.max(1),
        },
        pairing_claim_wait: Duration::from_millis(args.pairing_claim_wait_ms.max(1)),
        tournaments: TournamentLimits {
            max_open_per_account: args.max_open_tournaments_per_account,
            max_bot_fill: args.max_tournament_bot_fill,
        },
        ..ServerConfig::default()
    }
}

async fn serve(args: Args) -> Result<(), MainError> {
    let addr = SocketAddr::new(args.bind, args.port);
    let cluster = match cluster_config(&args)? {
        Some(config) => {
            let cluster = parchis_cluster::Cluster::connect(config).await?;
            tracing::info!(node = %cluster.node(), cluster = %cluster.config.cluster, "cluster mode");
            Some(std::sync::Arc::new(cluster))
        }
        None => None,
    };
    let sqlite = sqlite_options(&args);
    let admission_limits = limits(&args);
    let postgres = postgres_options(&args, cluster.is_some());
    let store = parchis_store::open_store_tuned(
        args.database_url.as_deref(),
        &args.data_dir,
        sqlite,
        postgres,
    )
    .await?;
    let config = server_config(args, addr, admission_limits);
    let state = AppState::with_cluster(config, store, cluster);
    let listener = tokio::net::TcpListener::bind(addr).await?;
    tracing::info!(%addr, "listening");
    let shutdown = CancellationToken::new();
    let signal = shutdown.clone();
    let draining = state.clone();
    tokio::spawn(async move {
        let signal_kind = wait_for_signal().await;
        // Cluster mode: SIGTERM hands every room to another node first (docs/CLUSTER.md,
        // "Drain"); the remaining sockets are then closed with 1001 as on a single node.
        if signal_kind == Signal::Term && draining.cluster().is_some() {
            tracing::info!("SIGTERM: draining");
            // Tournaments first: their leases released, other nodes direct them at once.
            draining.directors().drain().await;
            parchis_cluster::ownership::drain::drain(draining.node()).await;
        }
        tracing::info!("signal received: shutting down");
        signal.cancel();
    });
    parchis_server::run(listener, state, shutdown).await?;
    Ok(())
}

/// Which signal asked the server to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Signal {
    /// Ctrl-C (SIGINT): stop at once.
    Interrupt,
    /// SIGTERM: drain first in cluster mode.
    Term,
}

async fn wait_for_signal() -> Signal {
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
        _ = ctrl_c => Signal::Interrupt,
        _ = term => Signal::Term,
    }
}
