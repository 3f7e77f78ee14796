//! The checked-in JSON Schema in `proto/schema/` must equal what the code generates.
//! Regenerate with `UPDATE_SCHEMA=1 cargo test -p parchis-protocol --test schema`.

use std::path::PathBuf;

#[test]
fn checked_in_schema_matches_the_code() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../proto/schema");
    let update = std::env::var_os("UPDATE_SCHEMA").is_some();
    let mut stale = Vec::new();
    for (name, text) in parchis_protocol::schema::all() {
        let path = dir.join(name);
        if update {
            std::fs::create_dir_all(&dir).expect("create proto/schema");
            std::fs::write(&path, &text).expect("write schema");
            continue;
        }
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        if current != text {
            stale.push(name);
        }
    }
    assert!(
        stale.is_empty(),
        "proto/schema is out of date ({stale:?}); regenerate with:\n  UPDATE_SCHEMA=1 cargo test -p parchis-protocol --test schema"
    );
}
