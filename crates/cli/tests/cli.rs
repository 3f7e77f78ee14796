//! The `parchis` command-line tool, run as a process.

use std::process::{Command, Output};

fn parchis(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_parchis"))
        .args(args)
        .output()
        .expect("run parchis")
}

fn stdout_json(o: &Output) -> serde_json::Value {
    assert!(
        o.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).expect("JSON on stdout")
}

#[test]
fn legal_rolls_the_given_dice_and_lists_the_exit() {
    let o = parchis(&[
        "legal",
        "online Y:n,n,n,n R:n,n,n,n turn=Y roll",
        "--dice",
        "5,3",
    ]);
    let v = stdout_json(&o);
    assert_eq!(v["legal"], serde_json::json!([{"type": "exit"}]));
    assert_eq!(v["position"], "online Y:n,n,n,n R:n,n,n,n turn=Y move=5,3");
}

#[test]
fn apply_returns_the_new_position_and_events() {
    let o = parchis(&[
        "apply",
        "online Y:10,n,n,n R:13,n,n,n turn=Y move=3,6",
        "move 0 3",
    ]);
    let v = stdout_json(&o);
    assert_eq!(
        v["notation"],
        "online Y:13,n,n,n R:n,n,n,n turn=Y move=3*,6 bonus=20"
    );
    assert_eq!(v["events"][1]["type"], "piece_captured");
    assert_eq!(
        v["legal"],
        serde_json::json!([{"type": "bonus", "piece": 0, "amount": 20}])
    );
}

#[test]
fn apply_accepts_a_json_position() {
    let o = parchis(&[
        "apply",
        "online Y:n,n,n,n R:n,n,n,n turn=Y roll",
        "roll 1,2",
    ]);
    let v = stdout_json(&o);
    let json = serde_json::to_string(&v["position"]).unwrap();
    let o2 = parchis(&["legal", &json]);
    assert_eq!(
        stdout_json(&o2)["position"],
        "online Y:n,n,n,n R:n,n,n,n turn=R roll"
    );
}

#[test]
fn play_prints_a_whole_game_and_its_winner() {
    let o = parchis(&["play", "--seed", "3", "--players", "2"]);
    assert!(o.status.success());
    let out = String::from_utf8(o.stdout).unwrap();
    let last = out.lines().last().unwrap();
    assert!(
        last.starts_with("# final: online") && last.contains("over="),
        "{last}"
    );
    assert!(out.lines().count() > 50);
    // Deterministic: the same seed gives the same game.
    let again = parchis(&["play", "--seed", "3", "--players", "2"]);
    assert_eq!(String::from_utf8(again.stdout).unwrap(), out);
}

#[test]
fn selfplay_reports_statistics() {
    let v = stdout_json(&parchis(&["selfplay", "--games", "5", "--seed", "9"]));
    assert_eq!(v["games"], 5);
    let wins: u64 = v["wins_per_seat"]
        .as_object()
        .unwrap()
        .values()
        .map(|w| w.as_u64().unwrap())
        .sum();
    assert_eq!(wins, 5);
    assert!(v["mean_turns_per_game"].as_f64().unwrap() > 20.0);
}

#[test]
fn bad_input_fails_cleanly_with_a_message() {
    let cases: [(&[&str], &str); 9] = [
        (
            &["legal", "online Y:n,n,n,n R:n,n,n,n turn=Y"],
            "missing stage",
        ),
        (
            &[
                "legal",
                "online Y:10,n,n,n R:n,n,n,n turn=Y move=3*,4 last=Y0",
            ],
            "R-THIRD",
        ),
        (
            &[
                "legal",
                "online Y:10,n,n,n R:30,30',n,n turn=Y move=2,2 open=R0+R1 doubles=1",
            ],
            "R-OPEN",
        ),
        (
            &["legal", "online Y:10,10,10,n R:n,n,n,n turn=Y roll"],
            "R-CAP",
        ),
        (
            &["legal", "online Y:n,n,n,n,n R:n,n,n,n turn=Y roll"],
            "exactly 4",
        ),
        (&["legal", "garbage"], "unknown preset"),
        (&["legal", "{\"rules\": 3}"], "bad position JSON"),
        (
            &[
                "apply",
                "online Y:n,n,n,n R:n,n,n,n turn=Y roll",
                "move 0 3",
            ],
            "R-ROLL",
        ),
        (
            &[
                "apply",
                "online Y:n,n,n,n R:n,n,n,n turn=Y roll",
                "fly away",
            ],
            "unknown action",
        ),
    ];
    for (args, needle) in cases {
        let o = parchis(args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn board_1_a_ring_square_off_the_path_is_refused_in_text_and_json() {
    // Issue 18: yellow never stands on ring squares 1..4; `Y:2` is not `Y:h2`.
    let o = parchis(&["legal", "online Y:2,n,n,n R:n,n,n,n turn=Y roll"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("rules.md §1") && err.contains("ring square 2"),
        "{err}"
    );
    // The same position as JSON (h2 written, then edited to the ring square 2).
    let ok = stdout_json(&parchis(&[
        "apply",
        "online Y:h2,n,n,n R:n,n,n,n turn=Y roll",
        "timeout",
    ]));
    let mut pos = ok["position"].clone();
    pos["players"][0]["pieces"][0]["at"] = serde_json::json!("2");
    let o = parchis(&["legal", &pos.to_string()]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("ring square 2"), "{err}");
}

#[test]
fn r_bonus_the_parcheesi_goal_bonus_is_offered_when_the_other_die_cannot_be_played() {
    let v = stdout_json(&parchis(&[
        "apply",
        "parcheesi Y:h7,11,g,g B:12,17,n,n turn=Y move=1,6",
        "move 0 1",
    ]));
    assert_eq!(
        v["notation"],
        "parcheesi Y:g,11,g,g B:12,17,n,n turn=Y move=1*,6 bonus=10 lost=1"
    );
    assert_eq!(
        v["legal"],
        serde_json::json!([{"type": "bonus", "piece": 1, "amount": 10}])
    );
    let v = stdout_json(&parchis(&[
        "apply",
        v["notation"].as_str().unwrap(),
        "bonus 1 10",
    ]));
    assert_eq!(
        v["notation"],
        "parcheesi Y:g,21,g,g B:12,17,n,n turn=B roll"
    );
}

#[test]
fn d33_a_variant_on_a_preset_it_was_not_written_for_is_refused() {
    // Issue 30: the variants are seed 001's, for `classic`; other presets refuse them,
    // naming the preset and the variant (and, for pairs, seed 004's sentence).
    for (args, preset, variant) in [
        (
            vec![
                "legal",
                "pairs+safe-only Y:n,n,n,n B:n,n,n,n R:n,n,n,n G:n,n,n,n turn=Y roll",
            ],
            "pairs",
            "safe-only",
        ),
        (
            vec!["play", "--preset", "online+two-out"],
            "online",
            "two-out",
        ),
        (
            vec![
                "selfplay",
                "--games",
                "1",
                "--preset",
                "parcheesi+safe-only",
            ],
            "parcheesi",
            "safe-only",
        ),
    ] {
        let o = parchis(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(
            stderr.contains(&format!(
                "the variant {variant} is not played with {preset}"
            )),
            "{args:?}: {stderr}"
        );
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    let o = parchis(&[
        "legal",
        "pairs+safe-only Y:n,n,n,n B:n,n,n,n R:n,n,n,n G:n,n,n,n turn=Y roll",
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("Se permite formar barreras en cualquier lugar"),
        "{stderr}"
    );
    // classic takes them.
    let o = parchis(&[
        "play",
        "--seed",
        "2",
        "--players",
        "2",
        "--preset",
        "classic+safe-only+two-out",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn output_into_a_closed_pipe_ends_quietly() {
    // Issue 30: `parchis play … | head` must not panic when the reader goes away. The
    // read end is closed before anything is written, so the first write fails.
    use std::process::Stdio;
    for args in [
        vec!["play", "--seed", "5"],
        vec![
            "legal",
            "online Y:n,n,n,n R:n,n,n,n turn=Y roll",
            "--dice",
            "5,3",
        ],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_parchis"))
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run parchis");
        drop(child.stdout.take());
        let o = child.wait_with_output().expect("wait for parchis");
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{args:?}: {:?} {stderr}", o.status);
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
    }
}
