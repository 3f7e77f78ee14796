// The fair-dice explanation inside the client, in the reader's language (the technical
// document, docs/FAIR_DICE.md in English, stays linked for the curious).

import { t } from './i18n.js';
import { openDialog } from './dialogs.js';

const PARAGRAPHS = ['fair_p1', 'fair_p2', 'fair_p3', 'fair_p4', 'fair_p5'];

/** Fills the fair-dice dialog `d` in the current language and opens it. */
export function showFairDice(d) {
  const body = d.querySelector('.fair-body');
  body.replaceChildren();
  for (const key of PARAGRAPHS) {
    const p = document.createElement('p');
    p.textContent = t(key);
    p.dataset.key = key;
    body.appendChild(p);
  }
  const more = document.createElement('a');
  more.href = '/FAIR_DICE.md';
  more.target = '_blank';
  more.rel = 'noopener';
  more.textContent = t('fair_more');
  const p = document.createElement('p');
  p.appendChild(more);
  body.appendChild(p);
  openDialog(d, d.querySelector('.dialog-close'));
}

/** A link that opens the explanation (in `d`) instead of the raw document. */
export function fairLinkTo(d) {
  const a = document.createElement('a');
  a.href = '/FAIR_DICE.md';
  a.className = 'fair-link';
  a.textContent = t('dice_how');
  a.addEventListener('click', (e) => { e.preventDefault(); showFairDice(d); });
  return a;
}
