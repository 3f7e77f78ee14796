// Accessibility checks shared by every browser test (and every future view: accounts,
// leaderboards…): axe-core run inside the page, and the 44×44 CSS px rule for every
// visible interactive element.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import assert from 'node:assert/strict';

const require = createRequire(import.meta.url);
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** Runs axe-core on the page as it is (WCAG 2.x A/AA and best practices); returns the
 * violations as `id: targets` strings. Evaluated through the debugging protocol, so the
 * page's Content Security Policy does not stand in the way. */
export async function axeViolations(page, { exclude = [] } = {}) {
  await page.evaluate(AXE_SOURCE);
  const result = await page.evaluate(async (ex) => {
    const r = await window.axe.run({ exclude: ex.map((e) => [e]) }, { resultTypes: ['violations'] });
    return r.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 4).map((n) => n.target.join(' ')).join(', ')}`);
  }, exclude);
  return result;
}

/** Asserts axe-core finds no violation on the page (`what` names the view). */
export async function assertNoAxeViolations(page, what, opts) {
  const v = await axeViolations(page, opts);
  assert.deepEqual(v, [], `axe-core on ${what}:\n${v.join('\n')}`);
}

/** Every visible interactive element smaller than `min`×`min` CSS px: buttons, selects,
 * text inputs, range inputs, checkboxes (measured by their label, the tap target),
 * HTML elements with role=button and stand-alone links. Board pieces and targets are SVG
 * and have touch areas of their own (measured by the game tests). */
export async function smallTargets(page, min = 44) {
  return page.evaluate((m) => {
    const out = [];
    const visible = (e) => {
      const r = e.getBoundingClientRect();
      const st = getComputedStyle(e);
      return r.width > 0 && r.height > 0 && st.visibility !== 'hidden' && !e.closest('[hidden]');
    };
    const sel = 'button, select, input, [role="button"]:not(svg *), a[href]:not(p a):not(li a)';
    for (const e of document.querySelectorAll(sel)) {
      if (!visible(e) && !(e.type === 'checkbox' && e.closest('label') && visible(e.closest('label')))) continue;
      const target = (e.type === 'checkbox' || e.type === 'radio') && e.closest('label') ? e.closest('label') : e;
      if (!visible(target)) continue;
      const r = target.getBoundingClientRect();
      if (r.width + 0.5 < m || r.height + 0.5 < m) {
        out.push(`${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}${e.className && typeof e.className === 'string' ? `.${e.className.split(' ').join('.')}` : ''} ${Math.round(r.width)}×${Math.round(r.height)}`);
      }
    }
    return out;
  }, min);
}

/** Asserts every visible interactive element is at least 44×44 CSS px. */
export async function assertTargets(page, what, min = 44) {
  const small = await smallTargets(page, min);
  assert.deepEqual(small, [], `targets under ${min}×${min} px on ${what}:\n${small.join('\n')}`);
}
