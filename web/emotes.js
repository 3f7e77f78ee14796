// Quick emotes (proto/README.md, `emote`): a fixed list of phrases, never free text. Seated
// players get a bar of buttons; spectators get none (the server refuses theirs anyway);
// everyone can mute them. The feed shows the latest few, in the reader's language.

import { t, colourName } from './i18n.js';

/** The emote ids, in the order offered (the server's fixed list). */
export const EMOTES = ['hello', 'good_luck', 'nice_move', 'well_played', 'thanks', 'oops', 'sorry', 'wow'];

/** Draws the bar into `bar` (buttons call `send(id)`) for a player; hidden otherwise. */
export function renderEmoteBar(bar, { player, muted, send }) {
  bar.hidden = !player || muted;
  if (bar.hidden) { bar.replaceChildren(); return; }
  if (bar.dataset.lang === t('emote_hello') && bar.children.length) return; // drawn
  bar.dataset.lang = t('emote_hello');
  bar.replaceChildren();
  for (const id of EMOTES) {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'emote';
    b.dataset.emote = id;
    b.textContent = t(`emote_${id}`);
    b.addEventListener('click', () => send(id));
    bar.appendChild(b);
  }
}

/** Draws the latest emotes (`S.emotes`) into `feed`, named with `nameOf(colour)`. */
export function renderEmoteFeed(feed, emotes, nameOf) {
  feed.replaceChildren();
  for (const e of emotes) {
    const li = document.createElement('li');
    li.className = `emote-msg c-${e.colour}`;
    li.dataset.colour = e.colour;
    li.dataset.emote = e.emote;
    li.dataset.n = e.n;
    li.textContent = t('emote_from', { name: `${colourName(e.colour)} (${nameOf(e.colour)})`, text: t(`emote_${e.emote}`) });
    feed.appendChild(li);
  }
}
