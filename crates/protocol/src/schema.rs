//! JSON Schema of the protocol, generated with schemars and checked into `proto/schema/`.
//!
//! Regenerate with `UPDATE_SCHEMA=1 cargo test -p parchis-protocol --test schema`.

use crate::{
    AdminBan, AdminRename, AdminResetPassword, BlockList, ChangePassword, Credentials,
    DeleteAccount, Leaderboard, Me, Profile, Recover, SessionToken, SignUp,
};
use crate::{
    AdminCloseRoom, AdminDisconnect, AdminRoomList, ClientConfig, ClientMessage, CreateRoomRequest,
    CreateRoomResponse, GameDetail, GameList, GameReplay, HttpError, Readiness, RoomList, RoomView,
    ServerMessage,
};
use crate::{NameReferee, RefereeCommand, RegisterEntry, TournamentCreated};
use crate::{PairingPools, PairingRequest, PairingStatus, PairingTicket};

/// Every schema file: `(file name, pretty JSON text ending in a newline)`.
pub fn all() -> Vec<(&'static str, String)> {
    fn render(schema: schemars::Schema) -> String {
        let mut s = serde_json::to_string_pretty(&schema).unwrap_or_default();
        s.push('\n');
        s
    }
    vec![
        (
            "tournament_created.json",
            render(schemars::schema_for!(TournamentCreated)),
        ),
        (
            "register_entry.json",
            render(schemars::schema_for!(RegisterEntry)),
        ),
        (
            "name_referee.json",
            render(schemars::schema_for!(NameReferee)),
        ),
        (
            "referee_command.json",
            render(schemars::schema_for!(RefereeCommand)),
        ),
        (
            "client_message.json",
            render(schemars::schema_for!(ClientMessage)),
        ),
        (
            "server_message.json",
            render(schemars::schema_for!(ServerMessage)),
        ),
        (
            "create_room_request.json",
            render(schemars::schema_for!(CreateRoomRequest)),
        ),
        (
            "create_room_response.json",
            render(schemars::schema_for!(CreateRoomResponse)),
        ),
        ("room_list.json", render(schemars::schema_for!(RoomList))),
        ("room_view.json", render(schemars::schema_for!(RoomView))),
        ("http_error.json", render(schemars::schema_for!(HttpError))),
        ("readiness.json", render(schemars::schema_for!(Readiness))),
        ("game_list.json", render(schemars::schema_for!(GameList))),
        (
            "game_detail.json",
            render(schemars::schema_for!(GameDetail)),
        ),
        (
            "game_replay.json",
            render(schemars::schema_for!(GameReplay)),
        ),
        (
            "admin_room_list.json",
            render(schemars::schema_for!(AdminRoomList)),
        ),
        (
            "admin_close_room.json",
            render(schemars::schema_for!(AdminCloseRoom)),
        ),
        (
            "client_config.json",
            render(schemars::schema_for!(ClientConfig)),
        ),
        (
            "admin_disconnect.json",
            render(schemars::schema_for!(AdminDisconnect)),
        ),
        (
            "credentials.json",
            render(schemars::schema_for!(Credentials)),
        ),
        ("sign_up.json", render(schemars::schema_for!(SignUp))),
        (
            "session_token.json",
            render(schemars::schema_for!(SessionToken)),
        ),
        ("me.json", render(schemars::schema_for!(Me))),
        (
            "change_password.json",
            render(schemars::schema_for!(ChangePassword)),
        ),
        ("recover.json", render(schemars::schema_for!(Recover))),
        (
            "delete_account.json",
            render(schemars::schema_for!(DeleteAccount)),
        ),
        ("profile.json", render(schemars::schema_for!(Profile))),
        (
            "leaderboard.json",
            render(schemars::schema_for!(Leaderboard)),
        ),
        ("block_list.json", render(schemars::schema_for!(BlockList))),
        (
            "admin_reset_password.json",
            render(schemars::schema_for!(AdminResetPassword)),
        ),
        (
            "admin_rename.json",
            render(schemars::schema_for!(AdminRename)),
        ),
        ("admin_ban.json", render(schemars::schema_for!(AdminBan))),
        (
            "pairing_request.json",
            render(schemars::schema_for!(PairingRequest)),
        ),
        (
            "pairing_ticket.json",
            render(schemars::schema_for!(PairingTicket)),
        ),
        (
            "pairing_status.json",
            render(schemars::schema_for!(PairingStatus)),
        ),
        (
            "pairing_pools.json",
            render(schemars::schema_for!(PairingPools)),
        ),
    ]
}
