//! What the actor makes of a [`RoomCmd`] from its queue, one helper per group: an attach
//! (its link and reply kept until the core answers), a connection's command or detach or
//! a bot's choice (inputs for the core), and the requests met without the core's inputs
//! (an operator's view, inspection or close; the host's stop or handoff).

use super::Actor;
use crate::end::RoomEnd;
use crate::ids;
use crate::{now_ms, ConnLink, Member, Refusal, RoomCmd};
use parchis_room_core::core::Input;
use tokio::sync::oneshot;
use tracing::info;

impl Actor {
    /// The input of a `join`, `watch`, `resume` or `reattach`, its link and reply kept
    /// pending; any other command is given back.
    pub(super) fn attach_input(&mut self, cmd: RoomCmd) -> Result<Input, RoomCmd> {
        Ok(match cmd {
            RoomCmd::Join {
                link,
                req,
                name,
                colour,
                client_seed,
                account,
                reply,
            } => {
                let conn = link.id;
                self.pending(link, reply);
                Input::Join {
                    conn,
                    req,
                    name,
                    colour,
                    client_seed: client_seed.map(String::from),
                    account: account.as_ref().map(|a| a.id),
                    ratings: account.map(|a| a.ratings).unwrap_or_default(),
                    token: ids::session_token(),
                }
            }
            RoomCmd::Claim {
                link,
                req,
                key,
                client_seed,
                reply,
            } => {
                let conn = link.id;
                self.pending(link, reply);
                Input::Claim {
                    conn,
                    req,
                    key,
                    client_seed,
                    token: ids::session_token(),
                }
            }
            RoomCmd::Director { cmd, reply } => {
                self.directed = Some(reply);
                Input::Director(cmd)
            }
            RoomCmd::Watch { link, req, reply } => {
                let conn = link.id;
                self.pending(link, reply);
                Input::Watch { conn, req }
            }
            RoomCmd::Resume {
                link,
                req,
                token,
                last_seq,
                account,
                reply,
            } => {
                let conn = link.id;
                self.pending(link, reply);
                Input::Resume {
                    conn,
                    req,
                    token,
                    last_seq,
                    account,
                }
            }
            RoomCmd::Reattach {
                link,
                reattach,
                last_seq,
                replaces,
                reply,
            } => {
                let conn = link.id;
                self.pending(link, reply);
                Input::Reattach {
                    conn,
                    reattach,
                    last_seq,
                    replaces,
                }
            }
            other => return Err(other),
        })
    }

    fn pending(&mut self, link: ConnLink, reply: oneshot::Sender<Result<Member, Refusal>>) {
        self.pending_link = Some(link);
        self.reply = Some(reply);
    }

    /// The input of a connection's command (its arrival noted for the command's latency)
    /// or detach, or of a bot's choice; any other command is given back.
    pub(super) fn command_input(&mut self, cmd: RoomCmd) -> Result<Input, RoomCmd> {
        Ok(match cmd {
            RoomCmd::Leave {
                conn,
                member,
                req,
                seq,
                received,
                outcome,
            } => {
                self.received = Some((conn, req, received));
                self.leave_outcome = Some((conn, outcome));
                Input::Command {
                    conn,
                    member,
                    req,
                    seq,
                    cmd: parchis_room_core::SeatCmd::Leave,
                }
            }
            RoomCmd::Command {
                conn,
                member,
                req,
                seq,
                cmd,
                received,
            } => {
                self.received = Some((conn, req, received));
                Input::Command {
                    conn,
                    member,
                    req,
                    seq,
                    cmd,
                }
            }
            RoomCmd::Detach { conn } => Input::Detach { conn },
            RoomCmd::BotChose(choice) => Input::BotChose(choice),
            other => return Err(other),
        })
    }

    /// An operator's view, inspection or close, or the host's stop or handoff (the room
    /// ends after the current step).
    pub(super) async fn on_request(&mut self, cmd: RoomCmd) {
        match cmd {
            RoomCmd::View { reply } => {
                // The public view: a delayed game as its spectators see it.
                let _ = reply.send(self.core.spectator_view());
            }
            RoomCmd::Inspect { reply } => {
                let _ = reply.send(self.core.inspect());
            }
            RoomCmd::Close { reply } => {
                let (answer, effects) = self.core.close_by_admin(now_ms());
                self.execute(effects).await;
                let _ = reply.send(answer);
            }
            RoomCmd::Rename { account, name } => {
                let effects = self.core.rename_account(account, &name);
                self.execute(effects).await;
            }
            RoomCmd::Rerate { accounts } => {
                let effects =
                    crate::seat_ratings::rerate(&self.rooms, &mut self.core, &accounts).await;
                self.execute(effects).await;
            }
            RoomCmd::CloseLobby { reply } => {
                let (answer, effects) = self.core.close_lobby(now_ms());
                self.execute(effects).await;
                if answer.is_ok() {
                    info!("quick pairing's lobby closed: not every seat claimed in time");
                }
                let _ = reply.send(answer);
            }
            RoomCmd::Stop { why } => {
                self.ending.get_or_insert(RoomEnd::Lost(why));
            }
            RoomCmd::Handoff { reply } => {
                self.ending.get_or_insert(RoomEnd::Handoff(reply));
            }
            RoomCmd::Join { .. }
            | RoomCmd::Claim { .. }
            | RoomCmd::Director { .. }
            | RoomCmd::Watch { .. }
            | RoomCmd::Resume { .. }
            | RoomCmd::Reattach { .. }
            | RoomCmd::Command { .. }
            | RoomCmd::Leave { .. }
            | RoomCmd::Detach { .. }
            | RoomCmd::BotChose(_) => {
                unreachable!("inputs are attach_input's and command_input's")
            }
        }
    }
}
