//! `parchis verify FILE`: checks the fair dice of a finished game (`docs/FAIR_DICE.md`)
//! from the JSON of `GET /api/games/{id}` or from its text export.

use parchis_engine::fair_dice::{self, Claim, RecordedThrow, VerifyError};
use parchis_engine::{Action, Colour, GameRecord};
use serde_json::Value;

/// What a game's record says about its dice.
#[derive(Debug)]
pub struct Record {
    /// The claim to check.
    pub claim: Claim,
    /// Marked `test`: made with a test configuration, never verifiable.
    pub test: bool,
}

/// The outcome of `parchis verify`.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every throw matches the seeds; the number of throws.
    Verified(usize),
    /// The first problem found.
    Failed(VerifyError),
    /// A test game: the throws match (`Ok`) or not, but it is not verifiable either way.
    Test(Result<usize, VerifyError>),
}

/// Reads a record: JSON when the text starts with `{`, the text export otherwise.
///
/// # Errors
/// A message when the record lacks the fair-dice fields or is malformed.
pub fn read(text: &str) -> Result<Record, String> {
    let text = text.trim_start();
    if text.starts_with('{') {
        let v: Value = serde_json::from_str(text).map_err(|e| format!("bad JSON: {e}"))?;
        from_json(&v)
    } else {
        from_export(text)
    }
}

/// Checks a record.
pub fn check(record: &Record) -> Verdict {
    let result = fair_dice::verify(&record.claim);
    match (record.test, result) {
        (true, r) => Verdict::Test(r),
        (false, Ok(n)) => Verdict::Verified(n),
        (false, Err(e)) => Verdict::Failed(e),
    }
}

fn colour(v: &Value, what: &str) -> Result<Colour, String> {
    let name = v.as_str().ok_or_else(|| format!("{what}: no colour"))?;
    name.parse::<Colour>()
        .map_err(|e| format!("{what}: colour {name:?}: {e}"))
}

fn dice_of(v: &Value, what: &str) -> Result<Vec<u8>, String> {
    v.as_array()
        .ok_or_else(|| format!("{what}: no dice"))?
        .iter()
        .map(|d| {
            d.as_u64()
                .and_then(|d| u8::try_from(d).ok())
                .ok_or_else(|| format!("{what}: bad die {d}"))
        })
        .collect()
}

fn text_field(v: &Value, name: &str) -> Result<String, String> {
    v[name]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("the record's dice have no {name}"))
}

fn seeds_of(v: &Value) -> Result<Vec<(Colour, String)>, String> {
    v.as_array()
        .ok_or("the record's dice have no client_seeds")?
        .iter()
        .map(|s| {
            Ok((
                colour(&s["colour"], "client seed")?,
                s["seed"]
                    .as_str()
                    .ok_or("client seed without seed")?
                    .to_owned(),
            ))
        })
        .collect()
}

/// The commitment and client seeds `game_started` published at the start must be the
/// record's.
fn check_published(
    published: &Value,
    commitment: &str,
    client_seeds: &[(Colour, String)],
) -> Result<(), String> {
    if published["commitment"].as_str() != Some(commitment) {
        return Err(format!(
            "game_started published the commitment {}, the record gives {commitment}",
            published["commitment"]
        ));
    }
    if seeds_of(&published["client_seeds"])? != client_seeds {
        return Err("game_started published other client seeds than the record's".into());
    }
    Ok(())
}

/// The throws of an `opening_roll` event `ev`, named `what` in errors.
fn opening_throws(ev: &Value, what: &str) -> Result<Vec<RecordedThrow>, String> {
    ev["rolls"]
        .as_array()
        .ok_or_else(|| format!("{what}: no rolls"))?
        .iter()
        .map(|r| {
            Ok(RecordedThrow {
                number: r["throw"]
                    .as_u64()
                    .ok_or_else(|| format!("{what}: opening throw without a number"))?,
                colour: colour(&r["colour"], what)?,
                dice: dice_of(&r["dice"], what)?,
            })
        })
        .collect()
}

/// A record from the games API's JSON: its `dice` object, and the throws of its events
/// (`opening_roll` entries and `dice_rolled` events, with their `throw` numbers).
fn from_json(v: &Value) -> Result<Record, String> {
    let dice = &v["dice"];
    if !dice.is_object() {
        return Err("the record has no fair-dice data (a game stored before fair dice?)".into());
    }
    let commitment = text_field(dice, "commitment")?;
    let client_seeds = seeds_of(&dice["client_seeds"])?;
    let mut server_seed = dice["server_seed"].as_str().map(str::to_owned);
    let mut per_throw = dice["dice_per_throw"].as_u64();
    let mut throws = Vec::new();
    let events = v["events"].as_array().ok_or("the record has no events")?;
    for e in events {
        let ev = &e["event"];
        let seq = e["seq"].as_i64().unwrap_or_default();
        let what = format!("event seq {seq}");
        match ev["type"].as_str() {
            Some("game_started") => {
                check_published(&ev["dice"], &commitment, &client_seeds)?;
                if per_throw.is_none() {
                    per_throw = ev["position"]["rules"]["dice"].as_u64();
                }
            }
            Some("opening_roll") => {
                throws.extend(opening_throws(ev, &what)?);
            }
            Some("game") if ev["event"]["type"] == "dice_rolled" => {
                throws.push(RecordedThrow {
                    number: ev["throw"]
                        .as_u64()
                        .ok_or_else(|| format!("{what}: throw without a number"))?,
                    colour: colour(&ev["event"]["colour"], &what)?,
                    dice: dice_of(&ev["event"]["dice"], &what)?,
                });
            }
            Some("dice_revealed") => {
                let revealed = ev["server_seed"].as_str().map(str::to_owned);
                if server_seed.is_some() && revealed != server_seed {
                    return Err(
                        "the dice_revealed event and the record reveal different server seeds"
                            .into(),
                    );
                }
                server_seed = revealed;
            }
            _ => {}
        }
    }
    Ok(Record {
        test: dice["mode"] == "test",
        claim: Claim {
            scheme: text_field(dice, "scheme")?,
            commitment,
            server_seed,
            client_seeds,
            per_throw: per_throw.unwrap_or(2) as usize,
            throws,
        },
    })
}

/// A record from the text export: the `Dice*`, `ClientSeeds`, `ServerSeed`,
/// `OpeningThrows` and `FirstRollThrow` tags and the `roll` lines, numbered on from
/// `FirstRollThrow`.
fn from_export(text: &str) -> Result<Record, String> {
    let record: GameRecord = text.parse().map_err(|e| format!("bad export: {e}"))?;
    let tag = |name: &str| {
        record
            .tags
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let need = |name: &str| {
        tag(name).ok_or_else(|| format!("the export has no {name} tag (a game before fair dice?)"))
    };
    let letter = |s: &str, what: &str| -> Result<Colour, String> {
        s.chars()
            .next()
            .and_then(Colour::from_letter)
            .filter(|_| s.len() == 1)
            .ok_or_else(|| format!("{what}: bad colour {s:?}"))
    };
    let client_seeds = need("ClientSeeds")?
        .split_whitespace()
        .map(|p| {
            let (c, s) = p
                .split_once('=')
                .ok_or_else(|| format!("ClientSeeds: {p:?} is not C=seed"))?;
            Ok((letter(c, "ClientSeeds")?, s.to_owned()))
        })
        .collect::<Result<Vec<_>, String>>()?;
    let parse_dice = |s: &str, what: &str| -> Result<Vec<u8>, String> {
        s.split(',')
            .map(|d| {
                d.trim()
                    .parse::<u8>()
                    .map_err(|_| format!("{what}: bad die {d:?}"))
            })
            .collect()
    };
    let mut throws = Vec::new();
    if let Some(opening) = tag("OpeningThrows") {
        for entry in opening.split(';') {
            let words: Vec<&str> = entry.split_whitespace().collect();
            let [k, c, d] = words.as_slice() else {
                return Err(format!("OpeningThrows: {entry:?} is not `k C a,b`"));
            };
            throws.push(RecordedThrow {
                number: k
                    .parse()
                    .map_err(|_| format!("OpeningThrows: bad throw number {k:?}"))?,
                colour: letter(c, "OpeningThrows")?,
                dice: parse_dice(d, "OpeningThrows")?,
            });
        }
    }
    let first: u64 = need("FirstRollThrow")?
        .parse()
        .map_err(|_| "FirstRollThrow is not a number".to_string())?;
    let rolls = record.actions.iter().filter_map(|(c, a)| match a {
        Action::Roll { dice } => Some((*c, dice.values().to_vec())),
        _ => None,
    });
    for (i, (colour, dice)) in rolls.enumerate() {
        throws.push(RecordedThrow {
            number: first + i as u64,
            colour,
            dice,
        });
    }
    Ok(Record {
        test: need("DiceMode")? == "test",
        claim: Claim {
            scheme: need("DiceScheme")?,
            commitment: need("DiceCommitment")?,
            server_seed: tag("ServerSeed"),
            client_seeds,
            per_throw: usize::from(record.rules.dice.clamp(1, 2)),
            throws,
        },
    })
}
