//! The checked-in JSON Schemas of the director core's wire types (the body of
//! `POST /api/tournaments` and the answer of `GET /api/tournaments/{id}`) must equal
//! what the code generates. They live beside the protocol's in `proto/schema/`.
//! Regenerate with `UPDATE_SCHEMA=1 cargo test -p parchis-director --test schema`.

use parchis_tournament::{Settings, TournamentView};
use std::path::PathBuf;

fn render(schema: schemars::Schema) -> String {
    let mut s = serde_json::to_string_pretty(&schema).expect("schema as JSON");
    s.push('\n');
    s
}

#[test]
fn checked_in_tournament_schemas_match_the_code() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../proto/schema");
    let update = std::env::var_os("UPDATE_SCHEMA").is_some();
    let files = [
        (
            "tournament_settings.json",
            render(schemars::schema_for!(Settings)),
        ),
        (
            "tournament_view.json",
            render(schemars::schema_for!(TournamentView)),
        ),
    ];
    let mut stale = Vec::new();
    for (name, text) in files {
        let path = dir.join(name);
        if update {
            std::fs::write(&path, &text).expect("write schema");
            continue;
        }
        if std::fs::read_to_string(&path).unwrap_or_default() != text {
            stale.push(name);
        }
    }
    assert!(
        stale.is_empty(),
        "proto/schema is out of date ({stale:?}); regenerate with:\n  UPDATE_SCHEMA=1 cargo test -p parchis-director --test schema"
    );
}
