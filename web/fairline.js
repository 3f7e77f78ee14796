// The fair-dice lines of the room, game, result and replay views (docs/FAIR_DICE.md):
// the room's commitment and our client seed while it runs, and a finished game's dice
// checked with Web Crypto. Only shown and checked here, never interpreted by the rules.

import { t } from './i18n.js';
import { api } from './net.js';
import { verifyGame } from './fairdice.js';
import { fairLinkTo } from './fairpage.js';
import { ctx } from './ctx.js';
import { $ } from './ui.js';

/** Notes the fair-dice facts a server message carries (into `ctx.fair`). */
export function noteFair(m) {
  if (m.type === 'welcome' && m.snapshot && m.snapshot.dice) ctx.fair.info = m.snapshot.dice;
  if (m.type !== 'event' || !m.event) return;
  if (m.event.type === 'game_started' && m.event.dice) ctx.fair.info = m.event.dice;
  if (m.event.type === 'dice_revealed' && ctx.fair.info) ctx.fair.info = { ...ctx.fair.info, server_seed: m.event.server_seed };
}

function fairLink() { return fairLinkTo($('fair-dialog')); }

/** The fair-dice line: our client seed and the server's commitment, with the explanation. */
export function renderFair(el) {
  const { fair, S } = ctx;
  el.replaceChildren();
  if (!fair.info) return;
  const parts = [];
  if (fair.clientSeed && S.role === 'player') parts.push(t('dice_seed_mine', { seed: fair.clientSeed }));
  parts.push(t('dice_commitment', { c: fair.info.commitment.slice(0, 16) }));
  if (fair.info.mode === 'test') parts.push(t('dice_test'));
  el.append(`🎲 ${parts.join(' · ')} · `);
  el.appendChild(fairLink());
}

/** Checks a finished game's dice with Web Crypto and shows the verdict in `el`
 * (`data-status`: checking, verified, failed, test or unavailable). */
export async function checkDice(gameId, el) {
  el.dataset.status = 'checking';
  el.replaceChildren(t('dice_checking'));
  let verdict;
  try {
    verdict = await verifyGame(await api('GET', `/api/games/${encodeURIComponent(gameId || '')}`));
  } catch (err) {
    verdict = { status: 'unavailable', reason: String((err && err.message) || err) };
  }
  el.dataset.status = verdict.status;
  if (verdict.throw !== undefined) el.dataset.throw = String(verdict.throw);
  const text = verdict.status === 'verified' ? t('dice_verified', { n: verdict.throws })
    : verdict.status === 'test' ? t('dice_test')
      : verdict.status === 'failed' ? t('dice_failed', { reason: verdict.reason })
        : t('dice_unavailable', { reason: verdict.reason });
  el.replaceChildren(`🎲 ${text} · `);
  el.appendChild(fairLink());
}
