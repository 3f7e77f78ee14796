//! The JSON shapes between nodes (`docs/CLUSTER.md`, "NATS subjects"), serde, versioned:
//! every request and notice carries `v` ([`WIRE_VERSION`]); a node refuses another
//! version with a clear error instead of misreading it. Clients never see these.
//!
//! Why one file of ~1,090 lines: it is the catalogue of the wire between nodes, one
//! documented serde type per message with its version check (~690 lines, grown by the
//! tournament directors' and quick pairing's room commands), and the round-trip tests
//! that pin each shape's bytes (~400); splitting them would separate a message from the
//! test of its bytes.
//!
//! * `P.room.<CODE>` requests: [`RoomRequest`]; answers [`AttachAnswer`],
//!   [`CommandAnswer`], a [`parchis_protocol::RoomView`] for `view`, or a
//!   [`DirectorReply`] for a tournament director's `director` and `close`.
//! * `P.edge.<NODE>` messages: the frame itself as the body behind a line per link naming
//!   the link, its counter, the [`Kind`] and the frame's [`Tag`] (read from the frame by
//!   [`frame_tag`]): [`super::edge_msg`]; a kick's body is [`KickBody`].
//! * `P.moved`: [`Moved`]. `P.lobby`: [`LobbyAsk`] → [`LobbyAnswer`].
//!
//! Size: about 850 lines, 290 of them the tests that pin every shape on the wire; the
//! shapes belong together (one version for all of them).

use parchis_engine::Colour;
use parchis_protocol::{Emote, ErrorCode, Play, RoomSummary};
use parchis_room::{Member, Reattach, Refusal, SeatCmd};
use parchis_room_core::reserved::{DirectorAnswer, DirectorCmd};
use serde::{Deserialize, Serialize};

/// The version of every shape here.
pub const WIRE_VERSION: u32 = 1;

/// What a `P.edge` message is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A frame for the client (the body, as is).
    Frame,
    /// Close the client's socket ([`KickBody`]).
    Kick,
    /// The owner forgot the link (left, detached, replaced): nothing more comes.
    End,
}

impl Kind {
    /// Its name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Frame => "frame",
            Kind::Kick => "kick",
            Kind::End => "end",
        }
    }

    /// Reads its name on the wire.
    pub fn parse(s: &str) -> Option<Kind> {
        match s {
            "frame" => Some(Kind::Frame),
            "kick" => Some(Kind::Kick),
            "end" => Some(Kind::End),
            _ => None,
        }
    }
}

/// The stream tag of a frame, read from its first bytes without parsing it: `event` and
/// `your_turn` frames are serialized as `{"type":…,"room":"CODE","seq":N,…` (serde keeps
/// field order; room codes are `[A-Z0-9]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tag {
    /// An event of the room's stream, with its seq.
    Event(u64),
    /// `your_turn` at this seq.
    Turn(u64),
    /// An `ok` or `error` replying to request `req` (read by the edge from the frame;
    /// never sent in a message's line).
    Reply(u64),
    /// Anything else (`welcome`, `presence`, `closing`, an `error` without `req`).
    Other,
}

/// Reads the [`Tag`] of `frame`.
pub fn frame_tag(frame: &str) -> Tag {
    let seq_after = |prefix: &str| -> Option<u64> {
        let rest = frame.strip_prefix(prefix)?;
        let (_, rest) = rest.split_once("\",\"seq\":")?;
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        rest[..digits].parse().ok()
    };
    if let Some(seq) = seq_after(r#"{"type":"event","room":""#) {
        return Tag::Event(seq);
    }
    if let Some(seq) = seq_after(r#"{"type":"your_turn","room":""#) {
        return Tag::Turn(seq);
    }
    let req_after = |prefix: &str| -> Option<u64> {
        let rest = frame.strip_prefix(prefix)?;
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        rest[..digits].parse().ok()
    };
    // `ok` and `error` frames are serialized `{"type":…,"req":N,…` (`null` without one).
    if let Some(req) =
        req_after(r#"{"type":"ok","req":"#).or_else(|| req_after(r#"{"type":"error","req":"#))
    {
        return Tag::Reply(req);
    }
    Tag::Other
}

/// A request to a room's owner on `P.room.<CODE>`. Written as one flat object (`v`,
/// `owner`, `op` and the op's fields); read through `FlatRequest` (one pass, no
/// buffering of the object as `flatten` and an internally tagged enum do: every relayed
/// command is read here).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "FlatRequest")]
pub struct RoomRequest {
    /// [`WIRE_VERSION`].
    pub v: u32,
    /// The node the asker was told owns the room now (a `moved` notice): any other node
    /// that still serves the room (one that lost it and does not know yet) stays silent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// What is asked.
    #[serde(flatten)]
    pub op: RoomOp,
}

/// The name of a [`RoomOp`] (`op`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum OpName {
    Attach,
    Command,
    Detach,
    View,
    Probe,
    Director,
    Close,
    CloseLobby,
}

/// [`RoomRequest`] as read: every field any op has, each op's required ones checked by
/// `TryFrom` (unknown fields are ignored, as they were with the flattened enum).
#[derive(Deserialize)]
struct FlatRequest {
    v: u32,
    #[serde(default)]
    owner: Option<String>,
    op: OpName,
    #[serde(default)]
    edge: Option<String>,
    #[serde(default)]
    conn: Option<u64>,
    #[serde(default)]
    gen: Option<u64>,
    #[serde(default)]
    req: Option<u64>,
    #[serde(default)]
    seq: Option<u64>,
    #[serde(default)]
    cmd: Option<WireCmd>,
    #[serde(default)]
    how: Option<AttachHow>,
    #[serde(default)]
    deadline_ms: Option<i64>,
    #[serde(default)]
    director: Option<WireDirectorCmd>,
}

impl TryFrom<FlatRequest> for RoomRequest {
    type Error = String;

    fn try_from(f: FlatRequest) -> Result<RoomRequest, String> {
        fn need<T>(v: Option<T>, field: &str) -> Result<T, String> {
            v.ok_or_else(|| format!("missing field `{field}`"))
        }
        let op = match f.op {
            OpName::Attach => RoomOp::Attach {
                edge: need(f.edge, "edge")?,
                conn: need(f.conn, "conn")?,
                gen: need(f.gen, "gen")?,
                how: need(f.how, "how")?,
            },
            OpName::Command => RoomOp::Command {
                edge: need(f.edge, "edge")?,
                conn: need(f.conn, "conn")?,
                gen: f.gen,
                req: need(f.req, "req")?,
                seq: need(f.seq, "seq")?,
                cmd: need(f.cmd, "cmd")?,
                deadline_ms: f.deadline_ms,
            },
            OpName::Detach => RoomOp::Detach {
                edge: need(f.edge, "edge")?,
                conn: need(f.conn, "conn")?,
                gen: f.gen,
            },
            OpName::View => RoomOp::View,
            OpName::Probe => RoomOp::Probe,
            OpName::Director => RoomOp::Director {
                director: need(f.director, "director")?,
            },
            OpName::Close => RoomOp::Close,
            OpName::CloseLobby => RoomOp::CloseLobby,
        };
        Ok(RoomRequest {
            v: f.v,
            owner: f.owner,
            op,
        })
    }
}

/// The operations of [`RoomRequest`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum RoomOp {
    /// Attach edge `edge`'s connection `conn` (a remote link publishing to
    /// `P.edge.<edge>` with generation `gen`).
    Attach {
        /// The edge node.
        edge: String,
        /// Its connection id.
        conn: u64,
        /// The generation the edge chose for this attach.
        gen: u64,
        /// How.
        how: AttachHow,
    },
    /// A command of an attached connection (answered [`CommandAnswer`]: taken by the
    /// room's queue, not applied: the room answers `ok`/`error` on the link).
    Command {
        /// The edge node.
        edge: String,
        /// Its connection id.
        conn: u64,
        /// The generation of the link the edge waits for its reply on: the owner takes
        /// it only on that link ([`CommandAnswer::NotAttached`] otherwise). `None` from
        /// an edge that does not say (any link).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        gen: Option<u64>,
        /// Request id.
        req: u64,
        /// The seq it was based on.
        seq: u64,
        /// What to do.
        cmd: WireCmd,
        /// When the edge stops waiting for the owner to take it, on the database's clock
        /// (unix ms, each node's clock corrected by its measured skew): an owner that
        /// gets it later answers [`CommandAnswer::Expired`] and does not apply it (the
        /// sender was answered already). `None` from an edge that does not say.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        deadline_ms: Option<i64>,
    },
    /// The connection closed or left (no answer needed).
    Detach {
        /// The edge node.
        edge: String,
        /// Its connection id.
        conn: u64,
        /// The generation of the link to detach: a late detach of an earlier attach of
        /// the same connection (a `join` after a `leave`) does not detach the live one.
        /// `None` from an edge that does not say (any link).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        gen: Option<u64>,
    },
    /// The room's public state (answered with a `RoomView`, or [`CommandAnswer::Gone`]).
    View,
    /// Whether the room is served (answered [`CommandAnswer::Taken`] at once, without
    /// asking the room).
    Probe,
    /// A tournament director's command to its match's room, from the node directing the
    /// tournament (answered [`DirectorReply`] once the room stored what it changed).
    Director {
        /// What to do.
        director: WireDirectorCmd,
    },
    /// A tournament director closes its match's room without a result (answered
    /// [`DirectorReply::Closed`] once closed, or [`DirectorReply::Gone`]).
    Close,
    /// The quick-pairing matcher (on another node) closes the lobby of a paired room
    /// whose claim wait ran out (`docs/ACCOUNTS.md`, "Claim wait"): answered
    /// [`DirectorReply::LobbyClosed`] once it is closed and stored finished,
    /// [`DirectorReply::Refused`] (`game_started`: nothing changed) or
    /// [`DirectorReply::Gone`]. A node of before it answers an unreadable request
    /// (`AttachAnswer::Bad`), which the asker takes as "not known".
    CloseLobby,
}

/// A [`DirectorCmd`] on the wire.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WireDirectorCmd {
    /// [`DirectorCmd::Start`].
    Start {
        /// Colours left empty.
        absent: Vec<Colour>,
    },
    /// [`DirectorCmd::PauseClock`].
    PauseClock,
    /// [`DirectorCmd::ResumeClock`].
    ResumeClock,
    /// [`DirectorCmd::Expel`].
    Expel {
        /// The expelled colours.
        colours: Vec<Colour>,
    },
}

impl From<DirectorCmd> for WireDirectorCmd {
    fn from(c: DirectorCmd) -> WireDirectorCmd {
        match c {
            DirectorCmd::Start { absent } => WireDirectorCmd::Start { absent },
            DirectorCmd::PauseClock => WireDirectorCmd::PauseClock,
            DirectorCmd::ResumeClock => WireDirectorCmd::ResumeClock,
            DirectorCmd::Expel { colours } => WireDirectorCmd::Expel { colours },
        }
    }
}

impl From<WireDirectorCmd> for DirectorCmd {
    fn from(c: WireDirectorCmd) -> DirectorCmd {
        match c {
            WireDirectorCmd::Start { absent } => DirectorCmd::Start { absent },
            WireDirectorCmd::PauseClock => DirectorCmd::PauseClock,
            WireDirectorCmd::ResumeClock => DirectorCmd::ResumeClock,
            WireDirectorCmd::Expel { colours } => DirectorCmd::Expel { colours },
        }
    }
}

/// The owner's answer to [`RoomOp::Director`] and [`RoomOp::Close`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum DirectorReply {
    /// Done: the room's [`DirectorAnswer`].
    Directed {
        /// The room's game, once started.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        game_id: Option<uuid::Uuid>,
        /// The clock is paused now.
        paused: bool,
    },
    /// The room refused the command.
    Refused {
        /// Why.
        code: ErrorCode,
        /// Human-readable text.
        message: String,
    },
    /// The room closed.
    Closed,
    /// The lobby closed ([`RoomOp::CloseLobby`]): the colours whose seats had been
    /// claimed (board order).
    LobbyClosed {
        /// The claimed colours.
        claimed: Vec<Colour>,
    },
    /// The room is not (or no longer) running on the answering node.
    Gone,
}

impl DirectorReply {
    /// The answer for a room's outcome.
    pub fn of(outcome: Result<DirectorAnswer, Refusal>) -> DirectorReply {
        match outcome {
            Ok(a) => DirectorReply::Directed {
                game_id: a.game_id,
                paused: a.paused,
            },
            Err(r) => DirectorReply::Refused {
                code: r.code,
                message: r.message,
            },
        }
    }
}

/// How a connection attaches.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AttachHow {
    /// `join` (the name already checked by the edge).
    Join {
        /// Request id.
        req: u64,
        /// Display name.
        name: String,
        /// Wanted colour.
        colour: Option<Colour>,
        /// Fair-dice client seed.
        client_seed: Option<String>,
        /// The logged-in player's account (issue 26); absent from a node of before.
        #[serde(default)]
        account: Option<uuid::Uuid>,
        /// The account's display ratings by pool, read by the edge from the store (the
        /// seat shows its room's); absent from a node of before.
        #[serde(default)]
        ratings: std::collections::BTreeMap<String, i64>,
    },
    /// `watch`.
    Watch {
        /// Request id.
        req: u64,
    },
    /// `resume` with the session token, or (token empty) by the logged-in account.
    Resume {
        /// Request id.
        req: u64,
        /// Session token; empty: the seat of `account`.
        token: String,
        /// Last seq the client saw.
        last_seq: u64,
        /// The logged-in account (issue 26); absent from a node of before.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        account: Option<uuid::Uuid>,
    },
    /// `claim` of a reserved seat (the key made by the edge: an account's id, or a
    /// quick-pairing ticket's key). Not understood by nodes of before it.
    Claim {
        /// Request id.
        req: u64,
        /// The reservation's key.
        key: String,
        /// Fair-dice client seed.
        client_seed: Option<String>,
    },
    /// Back without a token ([`parchis_room_core::Input::Reattach`]).
    Reattach {
        /// What it was.
        reattach: Reattach,
        /// Last event seq delivered to the client.
        last_seq: u64,
    },
}

/// A [`SeatCmd`] on the wire.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum WireCmd {
    /// [`SeatCmd::ChooseColour`].
    ChooseColour {
        /// Colour.
        colour: Colour,
    },
    /// [`SeatCmd::ClientSeed`].
    ClientSeed {
        /// Seed.
        seed: String,
    },
    /// [`SeatCmd::Start`].
    Start,
    /// [`SeatCmd::Roll`].
    Roll,
    /// [`SeatCmd::Play`].
    Play {
        /// Action.
        action: Play,
    },
    /// [`SeatCmd::Leave`].
    Leave,
    /// [`SeatCmd::Rematch`].
    Rematch,
    /// [`SeatCmd::Emote`].
    Emote {
        /// Which emote.
        emote: Emote,
    },
}

impl From<SeatCmd> for WireCmd {
    fn from(c: SeatCmd) -> WireCmd {
        match c {
            SeatCmd::ChooseColour(colour) => WireCmd::ChooseColour { colour },
            SeatCmd::ClientSeed(seed) => WireCmd::ClientSeed { seed },
            SeatCmd::Start => WireCmd::Start,
            SeatCmd::Roll => WireCmd::Roll,
            SeatCmd::Play(action) => WireCmd::Play { action },
            SeatCmd::Leave => WireCmd::Leave,
            SeatCmd::Rematch => WireCmd::Rematch,
            SeatCmd::Emote(emote) => WireCmd::Emote { emote },
        }
    }
}

impl From<WireCmd> for SeatCmd {
    fn from(c: WireCmd) -> SeatCmd {
        match c {
            WireCmd::ChooseColour { colour } => SeatCmd::ChooseColour(colour),
            WireCmd::ClientSeed { seed } => SeatCmd::ClientSeed(seed),
            WireCmd::Start => SeatCmd::Start,
            WireCmd::Roll => SeatCmd::Roll,
            WireCmd::Play { action } => SeatCmd::Play(action),
            WireCmd::Leave => SeatCmd::Leave,
            WireCmd::Rematch => SeatCmd::Rematch,
            WireCmd::Emote { emote } => SeatCmd::Emote(emote),
        }
    }
}

/// A [`Member`] on the wire (the owner keeps the seat id; the edge only needs the role).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Holds a seat.
    Player,
    /// Watches.
    Spectator,
}

impl From<Member> for Role {
    fn from(m: Member) -> Role {
        match m {
            Member::Player(_) => Role::Player,
            Member::Spectator => Role::Spectator,
        }
    }
}

/// The answer to an attach.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum AttachAnswer {
    /// Attached; its frames follow on `P.edge`.
    Attached {
        /// What it is in the room now.
        role: Role,
        /// The answering owner's lease epoch (its fence): an edge that followed a later
        /// epoch of the room (a `moved` notice, another attach) takes this answer for a
        /// stale owner's and attaches again. `None` from a node that does not say.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        epoch: Option<i64>,
        /// The answering owner: the edge's later requests name it (any other node that
        /// still serves the room stays silent to them). `None` from a node that does not
        /// say.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        node: Option<String>,
    },
    /// Refused (nothing attached): the error for the client.
    Refused {
        /// Code.
        code: ErrorCode,
        /// Text.
        message: String,
        /// Rule id.
        rule: Option<String>,
    },
    /// The room is not (or no longer) running on the answering node.
    Gone,
    /// The request's version or shape is not understood.
    Bad {
        /// Why.
        message: String,
    },
}

impl AttachAnswer {
    /// The answer for a refusal.
    pub fn refused(r: Refusal) -> AttachAnswer {
        AttachAnswer::Refused {
            code: r.code,
            message: r.message,
            rule: r.rule,
        }
    }
}

/// The answer to a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum CommandAnswer {
    /// In the room's queue: its `ok`/`error` comes on the link.
    Taken,
    /// The owner has no link for this connection (it must reattach first).
    NotAttached,
    /// The room is not running here.
    Gone,
    /// It came after its deadline (`RoomOp::Command::deadline_ms`): not applied.
    Expired,
}

/// The body of a `kick` on `P.edge`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KickBody {
    /// WebSocket close code.
    pub code: u16,
    /// Reason.
    pub reason: String,
    /// The kicking owner's lease epoch: an edge that followed a later epoch of the room
    /// ignores the kick (a stale owner's, e.g. resumed after SIGSTOP). `None` from a
    /// node that does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epoch: Option<i64>,
}

/// The body of an `end` on `P.edge` (empty from a node that does not say its epoch).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EndBody {
    /// The owner's lease epoch, as in [`KickBody::epoch`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epoch: Option<i64>,
}

/// The owner's epoch an `end` or `kick` body names (`None`: none, or unreadable).
pub fn notice_epoch(body: &[u8]) -> Option<i64> {
    #[derive(Deserialize)]
    struct E {
        #[serde(default)]
        epoch: Option<i64>,
    }
    serde_json::from_slice::<E>(body).ok()?.epoch
}

/// Whether a notice of an owner at `epoch` is stale for an edge connection that followed
/// `followed` (0: none yet): its owner lost the room to a later epoch. A notice without
/// an epoch (a node that does not say) is judged by its link's generation alone.
pub fn is_stale(epoch: Option<i64>, followed: i64) -> bool {
    epoch.is_some_and(|e| e < followed)
}

/// `P.moved`: `node` acquired `room` at `epoch`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Moved {
    /// [`WIRE_VERSION`].
    pub v: u32,
    /// Room code.
    pub room: String,
    /// The new owner.
    pub node: String,
    /// Its lease epoch.
    pub epoch: i64,
}

/// `P.lobby` request: every node's public rooms.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LobbyAsk {
    /// [`WIRE_VERSION`].
    pub v: u32,
    /// `false`: lobbies; `true`: games in progress that allow spectators.
    pub playing: bool,
    /// The asking node (it answers itself without the bus).
    pub from: String,
}

/// A node's answer to [`LobbyAsk`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LobbyAnswer {
    /// [`WIRE_VERSION`].
    pub v: u32,
    /// The answering node.
    pub node: String,
    /// Its matching rooms.
    pub rooms: Vec<RoomSummary>,
}

/// Why a message from another node could not be read.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    /// Not JSON of the expected shape.
    #[error("unreadable: {0}")]
    Json(#[from] serde_json::Error),
    /// Another version.
    #[error("wire version {0}, this node speaks {WIRE_VERSION}")]
    Version(u32),
}

/// Reads a [`RoomRequest`], checking its version.
///
/// # Errors
/// [`WireError`] for bad JSON or another version.
pub fn read_request(body: &[u8]) -> Result<RoomRequest, WireError> {
    // Parsed once (every relayed command comes through here); only a body that does not
    // read is looked at again, for its version: another version may have another shape,
    // and is refused as such.
    match serde_json::from_slice::<RoomRequest>(body) {
        Ok(r) if r.v == WIRE_VERSION => Ok(r),
        Ok(r) => Err(WireError::Version(r.v)),
        Err(e) => {
            #[derive(Deserialize)]
            struct V {
                v: u32,
            }
            match serde_json::from_slice::<V>(body) {
                Ok(V { v }) if v != WIRE_VERSION => Err(WireError::Version(v)),
                _ => Err(WireError::Json(e)),
            }
        }
    }
}

/// Serializes a value for the bus (these plain types cannot fail to serialize).
pub fn to_bytes<T: Serialize>(value: &T) -> bytes::Bytes {
    bytes::Bytes::from(serde_json::to_vec(value).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use parchis_protocol::ServerMessage;
    use parchis_room::encode;

    #[test]
    fn requests_round_trip_with_their_version_and_names() {
        let req = RoomRequest {
            v: WIRE_VERSION,
            owner: None,
            op: RoomOp::Attach {
                edge: "b".into(),
                conn: 7,
                gen: 2,
                how: AttachHow::Reattach {
                    reattach: Reattach::Player(Colour::Red),
                    last_seq: 41,
                },
            },
        };
        let text = String::from_utf8(to_bytes(&req).to_vec()).expect("utf-8");
        assert_eq!(
            text,
            r#"{"v":1,"op":"attach","edge":"b","conn":7,"gen":2,"how":{"kind":"reattach","reattach":{"as":"player","colour":"red"},"last_seq":41}}"#
        );
        assert_eq!(read_request(text.as_bytes()).expect("reads"), req);
        let spectator = serde_json::to_string(&Reattach::Spectator).expect("json");
        assert_eq!(spectator, r#"{"as":"spectator"}"#);
        let cmd = RoomRequest {
            v: WIRE_VERSION,
            owner: Some("c".into()),
            op: RoomOp::Command {
                edge: "b".into(),
                conn: 7,
                gen: Some(4),
                req: 3,
                seq: 9,
                cmd: WireCmd::from(SeatCmd::Play(Play::Exit)),
                deadline_ms: Some(1_700_000_001_250),
            },
        };
        let back = read_request(&to_bytes(&cmd)).expect("reads");
        assert_eq!(back.owner.as_deref(), Some("c"));
        let RoomOp::Command {
            cmd: c,
            gen,
            deadline_ms,
            ..
        } = back.op
        else {
            panic!("a command");
        };
        assert_eq!(gen, Some(4));
        assert_eq!(deadline_ms, Some(1_700_000_001_250));
        assert_eq!(SeatCmd::from(c), SeatCmd::Play(Play::Exit));
    }

    #[test]
    fn every_op_reads_back_as_written() {
        let ops = [
            RoomOp::Attach {
                edge: "b".into(),
                conn: 1,
                gen: 2,
                how: AttachHow::Join {
                    req: 3,
                    name: "Ana \"la\" \u{e9}".into(),
                    colour: Some(Colour::Blue),
                    client_seed: None,
                    account: None,
                    ratings: [("online".to_owned(), 1012)].into(),
                },
            },
            RoomOp::Attach {
                edge: "b".into(),
                conn: 1,
                gen: 2,
                how: AttachHow::Watch { req: 4 },
            },
            RoomOp::Attach {
                edge: "b".into(),
                conn: 1,
                gen: 2,
                how: AttachHow::Resume {
                    req: 5,
                    token: "t".into(),
                    account: None,
                    last_seq: 6,
                },
            },
            RoomOp::Command {
                edge: "b".into(),
                conn: 1,
                gen: None,
                req: 7,
                seq: 8,
                cmd: WireCmd::ClientSeed { seed: "s".into() },
                deadline_ms: None,
            },
            RoomOp::Command {
                edge: "b".into(),
                conn: 1,
                gen: Some(9),
                req: 10,
                seq: 11,
                cmd: WireCmd::Play {
                    action: Play::Move {
                        piece: 2,
                        die: 5,
                        capture: true,
                    },
                },
                deadline_ms: Some(5),
            },
            RoomOp::Detach {
                edge: "b".into(),
                conn: 1,
                gen: None,
            },
            RoomOp::Detach {
                edge: "b".into(),
                conn: 1,
                gen: Some(3),
            },
            RoomOp::View,
            RoomOp::Probe,
            RoomOp::Director {
                director: WireDirectorCmd::Start {
                    absent: vec![Colour::Red],
                },
            },
            RoomOp::Director {
                director: WireDirectorCmd::PauseClock,
            },
            RoomOp::Director {
                director: WireDirectorCmd::Expel {
                    colours: vec![Colour::Blue, Colour::Green],
                },
            },
            RoomOp::Close,
            RoomOp::CloseLobby,
        ];
        for op in ops {
            for owner in [None, Some("c".to_owned())] {
                let req = RoomRequest {
                    v: WIRE_VERSION,
                    owner,
                    op: op.clone(),
                };
                assert_eq!(read_request(&to_bytes(&req)).expect("reads"), req);
            }
        }
    }

    #[test]
    fn a_directors_ops_and_answers_have_these_bytes() {
        let req = RoomRequest {
            v: WIRE_VERSION,
            owner: None,
            op: RoomOp::Director {
                director: DirectorCmd::Start {
                    absent: vec![Colour::Green],
                }
                .into(),
            },
        };
        let text = String::from_utf8(to_bytes(&req).to_vec()).expect("utf-8");
        assert_eq!(
            text,
            r#"{"v":1,"op":"director","director":{"kind":"start","absent":["green"]}}"#
        );
        let RoomOp::Director { director } = read_request(text.as_bytes()).expect("reads").op else {
            panic!("a director's op");
        };
        assert_eq!(
            DirectorCmd::from(director),
            DirectorCmd::Start {
                absent: vec![Colour::Green]
            }
        );
        let err = read_request(br#"{"v":1,"op":"director"}"#).expect_err("no command");
        assert!(
            err.to_string().contains("missing field `director`"),
            "{err}"
        );
        let close = String::from_utf8(
            to_bytes(&RoomRequest {
                v: WIRE_VERSION,
                owner: None,
                op: RoomOp::Close,
            })
            .to_vec(),
        )
        .expect("utf-8");
        assert_eq!(close, r#"{"v":1,"op":"close"}"#);
        let game = uuid::Uuid::nil();
        let done = DirectorReply::of(Ok(DirectorAnswer {
            game_id: Some(game),
            paused: true,
        }));
        assert_eq!(
            serde_json::to_string(&done).expect("json"),
            format!(r#"{{"answer":"directed","game_id":"{game}","paused":true}}"#)
        );
        let refused = DirectorReply::of(Err(Refusal::code(ErrorCode::NotEnoughPlayers)));
        let text = serde_json::to_string(&refused).expect("json");
        assert!(
            text.starts_with(r#"{"answer":"refused","code":"not_enough_players""#),
            "{text}"
        );
        assert_eq!(
            serde_json::from_str::<DirectorReply>(&text).expect("reads"),
            refused
        );
        assert_eq!(
            serde_json::to_string(&DirectorReply::Closed).expect("json"),
            r#"{"answer":"closed"}"#
        );
        let close_lobby = RoomRequest {
            v: WIRE_VERSION,
            owner: None,
            op: RoomOp::CloseLobby,
        };
        assert_eq!(
            &to_bytes(&close_lobby)[..],
            br#"{"v":1,"op":"close_lobby"}"#
        );
        let lobby = DirectorReply::LobbyClosed {
            claimed: vec![Colour::Yellow, Colour::Red],
        };
        let text = serde_json::to_string(&lobby).expect("json");
        assert_eq!(
            text,
            r#"{"answer":"lobby_closed","claimed":["yellow","red"]}"#
        );
        assert_eq!(
            serde_json::from_str::<DirectorReply>(&text).expect("reads"),
            lobby
        );
    }

    #[test]
    fn another_version_or_shape_is_refused() {
        let err = read_request(br#"{"v":2,"op":"view"}"#).expect_err("v2");
        assert!(matches!(err, WireError::Version(2)), "{err}");
        // Another version in a shape this one does not know is refused for its version.
        let err = read_request(br#"{"v":3,"op":"teleport","to":[1]}"#).expect_err("v3");
        assert!(matches!(err, WireError::Version(3)), "{err}");
        let err = read_request(br#"{"v":1,"op":"teleport"}"#).expect_err("unknown op");
        assert!(matches!(err, WireError::Json(_)), "{err}");
        // Each op's own fields are required (and only those).
        let err = read_request(
            br#"{"v":1,"op":"command","edge":"b","conn":7,"req":3,"cmd":{"type":"roll"}}"#,
        )
        .expect_err("no seq");
        assert!(err.to_string().contains("missing field `seq`"), "{err}");
        let err = read_request(
            br#"{"v":1,"op":"attach","edge":"b","conn":7,"how":{"kind":"watch","req":1}}"#,
        )
        .expect_err("no gen");
        assert!(err.to_string().contains("missing field `gen`"), "{err}");
        assert!(read_request(br#"{"v":1,"op":"detach","edge":"b"}"#).is_err());
        let probe = read_request(br#"{"v":1,"op":"probe","edge":"b","extra":[1,{"x":2}]}"#);
        assert_eq!(probe.expect("reads").op, RoomOp::Probe);
        // A command without `gen` (an edge that does not say) is for any link.
        let any = read_request(
            br#"{"v":1,"op":"command","edge":"b","conn":7,"req":3,"seq":9,"cmd":{"type":"roll"}}"#,
        )
        .expect("reads");
        assert_eq!(
            any.op,
            RoomOp::Command {
                edge: "b".into(),
                conn: 7,
                gen: None,
                req: 3,
                seq: 9,
                cmd: WireCmd::Roll,
                deadline_ms: None,
            }
        );
        assert!(read_request(br#"{"v":1,"op":"fly"}"#).is_err());
        assert!(read_request(b"[1]").is_err());
        assert!(read_request(br#"{"v":1,"op":"view"}"#).is_ok());
    }

    #[test]
    fn answers_are_tagged() {
        let a = AttachAnswer::refused(Refusal::code(ErrorCode::RoomFull));
        let text = serde_json::to_string(&a).expect("json");
        assert!(
            text.starts_with(r#"{"answer":"refused","code":"room_full""#),
            "{text}"
        );
        let ok: AttachAnswer =
            serde_json::from_str(r#"{"answer":"attached","role":"player"}"#).expect("reads");
        assert_eq!(
            ok,
            AttachAnswer::Attached {
                role: Role::Player,
                epoch: None,
                node: None
            }
        );
        let fenced = AttachAnswer::Attached {
            role: Role::Spectator,
            epoch: Some(3),
            node: Some("b".into()),
        };
        let text = serde_json::to_string(&fenced).expect("json");
        assert_eq!(
            text,
            r#"{"answer":"attached","role":"spectator","epoch":3,"node":"b"}"#
        );
        assert_eq!(
            serde_json::from_str::<AttachAnswer>(&text).expect("reads"),
            fenced
        );
        let taken = serde_json::to_string(&CommandAnswer::Taken).expect("json");
        assert_eq!(taken, r#"{"answer":"taken"}"#);
        let expired = serde_json::to_string(&CommandAnswer::Expired).expect("json");
        assert_eq!(expired, r#"{"answer":"expired"}"#);
    }

    #[test]
    fn the_tag_of_real_frames_is_read_from_their_first_bytes() {
        let event = encode(&parchis_room_core::frames::event_message(
            "7QK2M9D4TX",
            1234,
            5,
            parchis_protocol::RoomEvent::PlayerJoined {
                colour: Colour::Red,
                name: "Ana".into(),
                creator: true,
                bot: None,
            },
            None,
        ));
        assert_eq!(frame_tag(&event), Tag::Event(1234), "{event}");
        let ok = encode(&ServerMessage::Ok { req: 3, seq: 8 });
        assert_eq!(frame_tag(&ok), Tag::Reply(3));
        let refused = Refusal::code(ErrorCode::StaleSeq).to_message(Some(41));
        assert_eq!(frame_tag(&encode(&refused)), Tag::Reply(41));
        let unread = Refusal::code(ErrorCode::BadJson).to_message(None);
        assert_eq!(frame_tag(&encode(&unread)), Tag::Other);
        let presence = encode(&ServerMessage::Presence {
            room: "AB".into(),
            seq: 8,
            connected: vec![],
            spectators: 0,
            away: vec![],
        });
        assert_eq!(frame_tag(&presence), Tag::Other);
        assert_eq!(
            frame_tag(r#"{"type":"your_turn","room":"AB","seq":77,"colour":"red"}"#),
            Tag::Turn(77)
        );
        assert_eq!(
            frame_tag(r#"{"type":"event","room":"AB","seq":"x"}"#),
            Tag::Other
        );
        assert_eq!(frame_tag(r#"{"type":"event""#), Tag::Other);
    }

    #[test]
    fn end_and_kick_bodies_name_the_owners_epoch_and_stale_ones_are_told_apart() {
        let kick = KickBody {
            code: 1012,
            reason: "moved".into(),
            epoch: Some(4),
        };
        let text = serde_json::to_string(&kick).expect("json");
        assert_eq!(text, r#"{"code":1012,"reason":"moved","epoch":4}"#);
        assert_eq!(notice_epoch(text.as_bytes()), Some(4));
        let end = serde_json::to_string(&EndBody { epoch: Some(7) }).expect("json");
        assert_eq!(end, r#"{"epoch":7}"#);
        assert_eq!(notice_epoch(end.as_bytes()), Some(7));
        // A node of before: an empty end, a kick without an epoch.
        assert_eq!(notice_epoch(b""), None);
        assert_eq!(notice_epoch(br#"{"code":1012,"reason":"x"}"#), None);
        let old: KickBody = serde_json::from_str(r#"{"code":1012,"reason":"x"}"#).expect("reads");
        assert_eq!(old.epoch, None);
        // Stale only when it names an epoch older than the one followed.
        assert!(is_stale(Some(1), 2));
        assert!(!is_stale(Some(2), 2));
        assert!(!is_stale(Some(3), 2));
        assert!(!is_stale(None, 2));
        assert!(!is_stale(Some(1), 0), "nothing followed yet");
    }

    #[test]
    fn kinds_read_back() {
        for k in [Kind::Frame, Kind::Kick, Kind::End] {
            assert_eq!(Kind::parse(k.as_str()), Some(k));
        }
        assert_eq!(Kind::parse("other"), None);
    }
}
