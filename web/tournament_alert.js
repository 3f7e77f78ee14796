// "Your match is ready" (issue 27): when the room of the player's tournament match opens,
// the tournament page says so (with the no-show countdown), plays a short sound
// (sound.js), marks the tab title, and shows a browser notification when the player
// allowed them. Permission is asked only from a button (`askNotifications`), never on
// load. Which match to announce is the pure `readyToAnnounce` of tournament_model.js.

import { t } from './i18n.js';
import * as sound from './sound.js';
import { $ } from './ui.js';
import { readyToAnnounce, secondsLeft, clockText, entrantName, myEntrant } from './tournament_model.js';

const announced = new Set();
let baseTitle = null;
let current = null; // { key, match } announced and not yet acted on

const notifications = () => (typeof Notification === 'function' ? Notification : null);

/** Announces the player's newly ready match in `view` (once per match and room), and
 * keeps the announcement's countdown up to date. */
export function announce(view, username) {
  const next = readyToAnnounce(view, username, announced);
  if (next) {
    announced.add(next.key);
    current = next;
    sound.play('ready');
    if (baseTitle === null) baseTitle = document.title;
    document.title = `⏰ ${t('tour_ready_title')} · ${baseTitle}`;
    const N = notifications();
    if (N && N.permission === 'granted') {
      try { new N(t('tour_ready_title'), { body: t('tour_ready_notice', { name: view.name }), tag: `parchis-${next.key}` }); } catch (_) { /* not offered here */ }
    }
  }
  if (current) {
    const m = view.matches.find((x) => x.id === current.match.id);
    if (!m || m.status !== 'open' || m.room !== current.match.room) { clearAnnouncement(); return; }
    const e = myEntrant(view, username);
    const rivals = m.entrants.filter((id) => !e || id !== e.id).map((id) => entrantName(view, id)).join(', ');
    const left = secondsLeft(m.no_show_deadline_ms, Date.now());
    $('tp-ready').hidden = false;
    $('tp-ready').dataset.match = String(m.id);
    $('tp-ready-text').textContent = t('tour_ready_text', { rivals, left: left == null ? '—' : clockText(left) });
  }
}

/** Takes the announcement down (the player took the seat, or the match moved on). */
export function clearAnnouncement() {
  current = null;
  const box = $('tp-ready');
  if (box) box.hidden = true;
  if (baseTitle !== null) { document.title = baseTitle; baseTitle = null; }
}

/** Shows the "notify me" button while there is a match ahead and the browser can still
 * be asked. */
export function renderNotifyButton(matchAhead) {
  const N = notifications();
  $('tp-notify').hidden = !matchAhead || !N || N.permission !== 'default';
}

/** Asks for the Notification permission (from the button's click only). */
export async function askNotifications() {
  const N = notifications();
  if (!N) return;
  try { await N.requestPermission(); } catch (_) { /* refused or not offered */ }
  renderNotifyButton(true);
}
