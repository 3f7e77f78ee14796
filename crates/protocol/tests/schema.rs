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

/// The settings' ranges in the schema (what generated clients and the fuzzer see) are
/// exactly what `RoomSettings::validate` accepts: each bound passes, one beyond fails.
#[test]
fn settings_ranges_in_the_schema_are_the_validated_ones() {
    use parchis_protocol::RoomSettings;
    let schema = serde_json::to_value(schemars::schema_for!(RoomSettings)).expect("schema");
    let fields = [
        "seats",
        "turn_clock_secs",
        "disconnect_grace_secs",
        "timeouts_to_abandon",
        "bot_think_ms",
        "max_spectators",
    ];
    for field in fields {
        let property = &schema["properties"][field];
        let min = property["minimum"].as_i64().expect("minimum");
        let max = property["maximum"].as_i64().expect("maximum");
        let with = |value: i64| -> Result<(), String> {
            let mut json = serde_json::to_value(RoomSettings::default()).expect("json");
            json[field] = value.into();
            match serde_json::from_value::<RoomSettings>(json) {
                Ok(settings) => settings.validate(),
                Err(e) => Err(e.to_string()),
            }
        };
        assert_eq!(with(min), Ok(()), "{field} = {min} (the schema's minimum)");
        assert_eq!(with(max), Ok(()), "{field} = {max} (the schema's maximum)");
        assert!(with(max + 1).is_err(), "{field} = {} is refused", max + 1);
        if min > 0 {
            assert!(with(min - 1).is_err(), "{field} = {} is refused", min - 1);
        }
    }
}
