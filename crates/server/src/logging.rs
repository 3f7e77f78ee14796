//! Log output of the server binary: `text` (human-readable, the default) or `json` (one
//! JSON object per line, for log shippers), through `tracing-subscriber`.
//!
//! ANSI colour codes are written only when stdout is a terminal, so a log file or a
//! journal never holds escape sequences. In JSON, an event's fields are top-level keys
//! next to `timestamp`, `level`, `target` and `fields.message` → `message`; the fields of
//! the enclosing span (`room`, `game`, `conn`, the HTTP request's `method` and `uri`) are
//! under `span`.

use std::io::IsTerminal;
use tracing_subscriber::EnvFilter;

/// `--log-format`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// `2026-12-01T09:00:00Z INFO room{room=…}: player joined seat=yellow …`
    #[default]
    Text,
    /// `{"timestamp":…,"level":"INFO","message":"player joined","room":…,"seat":…}`
    Json,
}

/// Installs the global subscriber writing to stdout. `filter` uses `EnvFilter` syntax
/// (`info`, `parchis_server=debug,parchis_room=debug,tower_http=info`); an invalid filter falls back to
/// `info`. Does nothing if a subscriber is already installed.
pub fn init(format: LogFormat, filter: &str) {
    let filter = EnvFilter::try_new(filter).unwrap_or_else(|_| EnvFilter::new("info"));
    let ansi = std::io::stdout().is_terminal();
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stdout);
    let result = match format {
        LogFormat::Text => builder.with_ansi(ansi).try_init(),
        LogFormat::Json => builder
            .with_ansi(false)
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .try_init(),
    };
    // A second call (tests) keeps the first subscriber.
    drop(result);
}
