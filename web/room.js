// The room view before the start: the invite link, the rules, the seats (with accounts'
// ratings when the room view carries them), changing colour, starting and leaving.

import { t, colourName } from './i18n.js';
import { COLOURS, SHAPE_CHAR } from './board.js';
import { inviteUrl, inviteIsLoopback } from './invite.js';
import { ctx, dispatch, registerView } from './ctx.js';
import { $, button, displayName, ratingText, roomInfo, botsInfo, seatRow, seatOf, unclaimedReserved } from './ui.js';
import { command, leaveRoom } from './session.js';
import { renderFair } from './fairline.js';

/** The invite link (and the warnings and share button that go with it); none for a
 * room whose seats are reserved (nobody else can join it). */
export function renderInvite() {
  const reserved = !!(ctx.S.room && ctx.S.room.reserved);
  for (const id of ['invite-label', 'invite-row']) $(id).hidden = reserved;
  if (reserved) {
    $('invite').value = '';
    $('invite-loopback').hidden = true;
    return;
  }
  $('invite').value = inviteUrl(ctx.S.code);
  $('invite-loopback').hidden = !inviteIsLoopback(ctx.S.code);
  $('share-invite').hidden = !(navigator.share && matchMedia('(pointer: coarse)').matches);
}

/** Draws the room view from the state. */
export function renderRoom() {
  const { S } = ctx;
  renderFair($('room-fair'));
  const room = S.room;
  $('room-title').textContent = t('room', { code: S.code });
  renderInvite();
  $('room-info').textContent = roomInfo(room.settings);
  // Free seats and bots filling them: not in a room whose seats are all reserved.
  $('room-bots').textContent = room.reserved ? '' : botsInfo(room.settings);
  $('room-bots').hidden = !!room.reserved;
  const ul = $('seat-list');
  ul.replaceChildren();
  const me = S.role === 'player' ? seatOf(S.colour) : null;
  // The room's seats only (a 2-seat room lists two): the taken ones, then the free ones.
  for (const seat of room.seats) {
    const tags = [];
    if (seat.colour === S.colour && S.role === 'player') tags.push(t('you'));
    if (seat.creator) tags.push(t('creator'));
    if (seat.bot) tags.push(t('bot_tag'));
    else if (!seat.connected) tags.push(t('offline'));
    const li = seatRow(seat.colour, `${colourName(seat.colour)}: ${displayName(seat)}${ratingText(seat)}${tags.length ? ` (${tags.join(', ')})` : ''}`);
    li.dataset.taken = 'true';
    ul.appendChild(li);
  }
  // A room with reserved seats: those not claimed yet are shown reserved, not free.
  const waiting = unclaimedReserved(room);
  for (const r of waiting) {
    const li = seatRow(r.colour, `${colourName(r.colour)}: ${r.name ? t('reserved_for', { name: r.name }) : t('reserved_seat')}`);
    li.dataset.reserved = 'true';
    ul.appendChild(li);
  }
  for (let i = room.seats.length + waiting.length; i < room.settings.seats; i++) {
    ul.appendChild(seatRow(null, room.settings.bots ? t('free_seat_bot') : t('free_seat')));
  }
  // A seated player may switch to a free colour.
  const change = $('colour-change');
  change.replaceChildren();
  const freeColours = COLOURS.filter((c) => !seatOf(c));
  if (me && freeColours.length && !room.reserved) {
    const lab = document.createElement('span');
    lab.className = 'muted';
    lab.textContent = `${t('change_colour')}:`;
    change.appendChild(lab);
    for (const c of freeColours) {
      const b = button(`${SHAPE_CHAR[c]} ${colourName(c)}`, () => { dispatch({ type: 'local:want_colour', colour: c }); command('choose_colour', { colour: c }); }, t('take_colour', { colour: colourName(c) }), `take-colour c-${c}`);
      b.dataset.colour = c;
      change.appendChild(b);
    }
  }
  change.hidden = !change.children.length;
  if (ctx.autoStart && me && me.creator) {
    ctx.autoStart = false;
    command('start');
  }
  const creator = room.seats.find((s) => s.creator);
  const start = $('start-btn');
  start.hidden = !(me && me.creator);
  const bots = !!room.settings.bots; // bots fill the free seats at the start
  start.disabled = room.seats.length < 2 && !bots;
  if (room.reserved) {
    // Nobody starts it by hand: by itself once all claimed, or by the tournament.
    $('room-status').textContent = t(room.reserved.starts_when_seated ? 'reserved_auto_start' : 'reserved_director_start');
  } else {
    $('room-status').textContent = room.seats.length < 2 && !bots
      ? t('need_two')
      : (me && me.creator ? '' : t('waiting_creator', { name: creator ? displayName(creator) : '' }));
  }
  $('room-spectators').textContent = t('spectators', { n: room.spectators || 0 });
}

/** Wires the room view's controls. */
export function initRoom() {
  $('copy-invite').addEventListener('click', async () => {
    const text = $('invite').value;
    try { await navigator.clipboard.writeText(text); } catch (_) {
      $('invite').select();
      try { document.execCommand('copy'); } catch (__) { /* ignore */ }
    }
    $('copy-invite').textContent = t('copied');
    setTimeout(() => { $('copy-invite').textContent = t('copy'); }, 1500);
  });
  $('share-invite').addEventListener('click', () => {
    navigator.share({ title: t('share_title'), text: t('share_text', { code: ctx.S.code }), url: $('invite').value }).catch(() => {});
  });
  $('start-btn').addEventListener('click', () => command('start'));
  $('room-leave').addEventListener('click', leaveRoom);
}

registerView('room');
