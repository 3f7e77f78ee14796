// Small DOM helpers shared by the views: element lookup, buttons, the toast, error texts,
// the address bar, remembered values, and the pieces of a room drawn in more than one
// view (seat rows, dice, the log, rule set and seat names). No state of its own beyond
// the toast's timer.

import { t, colourName, locName } from './i18n.js';
import { COLOURS, SHAPE_CHAR } from './board.js';
import { ctx } from './ctx.js';

/** The element with id `id`. */
export const $ = (id) => document.getElementById(id);

/** localStorage as JSON, silent when storage is unavailable. */
export const store = {
  get(key) { try { return JSON.parse(localStorage.getItem(key)); } catch (_) { return null; } },
  set(key, v) { try { localStorage.setItem(key, JSON.stringify(v)); } catch (_) { /* ignore */ } },
  del(key) { try { localStorage.removeItem(key); } catch (_) { /* ignore */ } },
};
/** The storage key of a room's seat (its token, colour and client seed). */
export const sessionKey = (code) => `parchis.session.${code}`;

let toastTimer = null;
/** Shows `text` in the toast for 5 s. */
export function toast(text) {
  const el = $('toast');
  el.textContent = text;
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { el.hidden = true; }, 5000);
}

/** An error code's text (`err_<code>`), else the generic text with the server's message. */
export function errorText(code, message) {
  const key = `err_${code}`;
  const s = t(key);
  return s === key ? t('err_generic', { msg: message || code }) : s;
}

/** The text of a failed HTTP call (net.js `api` errors): the server's code, or "no answer". */
export function httpErrorText(err) {
  return err && err.code ? errorText(err.code, err.message) : t('err_http');
}

/** Replaces the address bar's path (no history entry); null: the lobby. */
export function setUrl(path) {
  const url = path || '/';
  if (location.pathname + location.search + location.hash !== url) history.replaceState(null, '', url);
}
/** A room's address. */
export const roomUrl = (code) => `/?room=${encodeURIComponent(code)}`;

/** A button with a text, an optional aria-label and class. */
export function button(text, onClick, label, cls) {
  const b = document.createElement('button');
  b.type = 'button';
  b.textContent = text;
  if (label) b.setAttribute('aria-label', label);
  if (cls) b.className = cls;
  b.addEventListener('click', onClick);
  return b;
}

/** Fills a colour `<select>` with "any" and the colours (only `free` ones when given). */
export function fillColourSelect(sel, free) {
  const keep = sel.value;
  sel.replaceChildren();
  const any = document.createElement('option');
  any.value = ''; any.textContent = t('any_colour');
  sel.appendChild(any);
  for (const c of COLOURS) {
    if (free && !free.includes(c)) continue;
    const o = document.createElement('option');
    o.value = c; o.textContent = `${SHAPE_CHAR[c]} ${colourName(c)}`;
    sel.appendChild(o);
  }
  if ([...sel.options].some((o) => o.value === keep)) sel.value = keep;
}

/** A seat's name as shown: bots' names are translated. */
export function displayName(seat) {
  if (!seat) return '';
  const m = seat.bot && /^\w+ bot (\d+)$/.exec(seat.name || '');
  return m ? t('bot_name', { level: t(`level_${seat.bot}`), n: m[1] }) : seat.name;
}

/** A room with reserved seats (`room.reserved`, sent by the server): its reserved
 * seats nobody has claimed yet, in board order, as `[{colour, name, bot}]`; `[]` for
 * an ordinary room or once every reserved seat is taken. */
export function unclaimedReserved(room) {
  const seats = room && room.reserved && Array.isArray(room.reserved.seats) ? room.reserved.seats : [];
  const taken = new Set(((room && room.seats) || []).map((s) => s.colour));
  return seats.filter((r) => r && !taken.has(r.colour))
    .map((r) => ({ colour: r.colour, name: typeof r.name === 'string' ? r.name : '', bot: !!r.bot }));
}

/** The room's seat of `colour`, if taken. */
export function seatOf(colour) { return ctx.S.room && ctx.S.room.seats.find((s) => s.colour === colour); }
/** The name shown for `colour`: its seat's, else the colour's. */
export function nameOf(colour) { const s = seatOf(colour); return s ? displayName(s) : colourName(colour); }

/** A seat's account and rating as a short tag (" · 1012"), when the room view carries
 * them (`username`, `rating`: `{display}` or a number); '' otherwise. */
export function ratingText(seat) {
  if (!seat || seat.rating === undefined || seat.rating === null) return '';
  const r = typeof seat.rating === 'object' ? seat.rating.display : seat.rating;
  return Number.isFinite(r) ? t('seat_rating', { r }) : '';
}

/** A rule set name (`classic+murcia-12`) in words. */
export function presetName(name) {
  const [base, ...variants] = String(name || '').split('+');
  const key = `preset_${base.replace(/-/g, '_')}`;
  const s = t(key);
  return (s === key ? base : s) + (variants.length ? ` + ${variants.join(' + ')}` : '');
}

/** A room's rules, seats and clock in words. */
export function roomInfo(settings) {
  const info = t('room_info', { preset: presetName(settings.preset), seats: settings.seats, clock: settings.turn_clock_secs });
  return settings.rated ? `${info} · ${t('rated_tag')}` : info;
}
/** Whether bots fill the empty seats, in words. */
export function botsInfo(settings) {
  return settings.bots ? t('bots_fill', { level: t(`level_${settings.bots}`) }) : t('no_bots_fill');
}

/** A colour's swatch (with its shape); `colour` null: an empty one. */
export function swatch(colour) {
  const sw = document.createElement('span');
  sw.className = colour ? `swatch bg-${colour}` : 'swatch empty';
  sw.setAttribute('aria-hidden', 'true');
  if (colour) sw.textContent = SHAPE_CHAR[colour];
  return sw;
}

/** A seat row: a colour's swatch and a text; `colour` null: a free seat. */
export function seatRow(colour, text) {
  const li = document.createElement('li');
  li.className = colour ? `seat c-${colour}` : 'seat free';
  if (colour) li.dataset.colour = colour;
  li.append(swatch(colour));
  const label = document.createElement('span');
  label.className = 'seat-label';
  label.textContent = text;
  li.append(label);
  return li;
}

const PIPS = { 1: [4], 2: [0, 8], 3: [0, 4, 8], 4: [0, 2, 6, 8], 5: [0, 2, 4, 6, 8], 6: [0, 2, 3, 5, 6, 8] };

/** A listed room's seated players (`GET /api/rooms`' `players`: `[{colour, name,
 * username, bot, rating?}]`) as one line: each username (or a guest's name), its rating
 * when listed, and a bot's tag; '' when the listing carries none. */
export function playersText(r) {
  if (!r || !Array.isArray(r.players) || !r.players.length) return '';
  return r.players
    .map((p) => `${p.username || p.name || ''}${ratingText(p)}${p.bot ? ` (${t('bot_tag')})` : ''}`)
    .join(', ');
}

/** A die showing `v` (used: greyed; small: for the players' last rolls). */
export function dieEl(v, used, small) {
  const d = document.createElement('span');
  d.className = `die${used ? ' used' : ''}${small ? ' small' : ''}`;
  d.dataset.value = v;
  d.setAttribute('role', 'img');
  d.setAttribute('aria-label', `${v}${used ? ` (${t('die_used')})` : ''}`);
  for (let p = 0; p < 9; p++) {
    const pip = document.createElement('i');
    if (PIPS[v].includes(p)) pip.className = 'pip';
    d.appendChild(pip);
  }
  return d;
}

/** The pieces to draw from `colour -> [location]`, leaving out abandoned seats. */
export function boardPieces(pieces, seatStatus) {
  const out = [];
  for (const c of COLOURS) {
    if (!pieces[c] || seatStatus[c] === 'abandoned') continue;
    pieces[c].forEach((at, i) => out.push({ colour: c, piece: i, at }));
  }
  return out;
}

/** A log entry (`{key, p}` of state.js) in the current language. */
export function logText(e) {
  const p = {};
  for (const [k, v] of Object.entries(e.p || {})) {
    if (v && typeof v === 'object') {
      if ('c' in v) p[k] = colourName(v.c);
      else if ('loc' in v) p[k] = locName(v.loc);
      else if ('rolls' in v) p[k] = v.rolls.map((r) => `${colourName(r.colour)} ${r.value}`).join(', ');
      else if ('name' in v) p[k] = displayName({ name: v.name, bot: v.bot });
    } else p[k] = v;
  }
  let s = t(e.key, p);
  if (e.p && e.p.bounced) s += t('ev_bounced');
  if (e.p && e.p.counts) s += t('ev_and_counts', { n: e.p.counts });
  return s;
}

/** Draws the log `entries` (oldest first) into `ol`, newest on top. */
export function renderLog(ol, entries) {
  ol.replaceChildren();
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i];
    const li = document.createElement('li');
    li.textContent = logText(e);
    if (e.cls) li.className = e.cls;
    ol.appendChild(li);
  }
}

/** A "#/…" page link (profile, leaderboard) as an `<a>`. */
export function pageLink(hash, text, cls) {
  const a = document.createElement('a');
  a.href = hash;
  a.textContent = text;
  if (cls) a.className = cls;
  return a;
}
