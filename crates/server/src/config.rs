//! Server settings that are not per-room.

use std::time::Duration;

/// Limits and knobs of a running server. [`ServerConfig::default`] is the production
/// default; tests tighten it.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Base URL used in invite links, e.g. `http://127.0.0.1:8080`.
    pub public_url: String,
    /// Largest text frame accepted (bytes); larger ones get `frame_too_large` (16 KiB).
    pub max_message_bytes: usize,
    /// Hard limit (bytes) enforced by the WebSocket layer, which closes with 1009.
    pub hard_max_message_bytes: usize,
    /// WebSocket read buffer per connection (bytes). Small: idle connections are cheap.
    pub read_buffer_bytes: usize,
    /// Kernel send buffer per TCP connection (bytes); `None` keeps the OS default.
    pub send_buffer_bytes: Option<usize>,
    /// Commands per second allowed per connection (token bucket, burst = 2 × rate).
    pub commands_per_second: u32,
    /// Errors per connection within [`ServerConfig::error_window`] before it is closed (1008).
    pub max_errors: u32,
    /// Window over which errors are counted.
    pub error_window: Duration,
    /// Outbound messages queued per connection before it is disconnected as too slow.
    pub outbound_queue: usize,
    /// Commands queued per room actor.
    pub room_queue: usize,
    /// Room events kept for reconnecting clients; older gaps get a snapshot.
    pub history: usize,
    /// Fixed dice seed (tests only); `None`: each room seeds a CSPRNG from the OS.
    pub dice_seed: Option<u64>,
    /// Maximum number of live rooms.
    pub max_rooms: usize,
    /// Bearer token of the admin API (`/admin/…`); `None` disables it.
    pub admin_token: Option<String>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            public_url: "http://127.0.0.1:8080".into(),
            max_message_bytes: 16 * 1024,
            hard_max_message_bytes: 64 * 1024,
            read_buffer_bytes: 4 * 1024,
            send_buffer_bytes: None,
            commands_per_second: 10,
            max_errors: 20,
            error_window: Duration::from_secs(10),
            outbound_queue: 256,
            room_queue: 64,
            history: 1024,
            dice_seed: None,
            max_rooms: 10_000,
            admin_token: None,
        }
    }
}
