// The Parchís board in SVG, and the board geometry the client needs (rules.md §1).
//
// Ring squares 1..68 run counter-clockwise. Colour k (yellow, blue, red, green) exits on
// square 17k+5 and turns into its home column h1..h7 after square 17k (68 for yellow),
// then reaches the goal. Safe squares: 5, 12, 17, 22, 29, 34, 39, 46, 51, 56, 63, 68.
//
// Layout: four arms of 3 lanes x 8 cells around a central goal; nests in the corners.
// Yellow's arm is at the bottom, blue's on the right, red's on top, green's on the left.

import { t, colourName, locName } from './i18n.js';

export const COLOURS = ['yellow', 'blue', 'red', 'green'];
export const SAFE = new Set([5, 12, 17, 22, 29, 34, 39, 46, 51, 56, 63, 68]);
export const EXIT = { yellow: 5, blue: 22, red: 39, green: 56 };
const LAST = { yellow: 68, blue: 17, red: 34, green: 51 };
export const FILL = { yellow: '#f4c430', blue: '#2d6fd6', red: '#d7362c', green: '#2e9b4f' };
const TINT = { yellow: '#fbe9a6', blue: '#bcd2f5', red: '#f3bdb8', green: '#bfe5c9' };
const ARM = { yellow: 'S', blue: 'E', red: 'N', green: 'W' };

const SVGNS = 'http://www.w3.org/2000/svg';
const W = 60; // cell size across an arm
const L = 30; // cell size along an arm
const A = 8 * L; // arm length: 240
const SIZE = 2 * A + 3 * W; // 660
const C0 = A; // centre block from 240
const C1 = A + 3 * W; // to 420

// ----- geometry -----------------------------------------------------------------------

/** Steps from the exit square (0) to the goal (71) of `loc` for `colour`; -1 in the nest. */
export function progress(colour, loc) {
  if (loc === 'nest') return -1;
  if (loc === 'goal') return 71;
  if (loc.startsWith('h')) return 63 + Number(loc.slice(1));
  const sq = Number(loc);
  return (sq - EXIT[colour] + 68) % 68;
}

/** The location `steps` squares ahead of `loc` (with the bounce at the goal, R-BOUNCE). */
export function advance(colour, loc, steps) {
  if (loc === 'nest') return String(EXIT[colour]);
  let p = progress(colour, loc) + steps;
  if (p > 71) p = 71 - (p - 71);
  if (p === 71) return 'goal';
  if (p >= 64) return `h${p - 63}`;
  return String(((EXIT[colour] - 1 + p) % 68) + 1);
}

// Rectangle of lane c (0..2) at distance d (0 = next to the centre .. 7 = outer end) of an arm.
function armRect(arm, c, d) {
  switch (arm) {
    case 'S': return { x: C0 + W * c, y: C1 + L * d, w: W, h: L };
    case 'N': return { x: C0 + W * c, y: C0 - L * (d + 1), w: W, h: L };
    case 'E': return { x: C1 + L * d, y: C0 + W * c, w: L, h: W };
    default: return { x: C0 - L * (d + 1), y: C0 + W * c, w: L, h: W }; // 'W'
  }
}

/** The rectangle of ring square n (1..68). */
export function ringRect(n) {
  if (n >= 1 && n <= 8) return armRect('S', 2, 8 - n);
  if (n >= 9 && n <= 16) return armRect('E', 2, n - 9);
  if (n === 17) return armRect('E', 1, 7);
  if (n >= 18 && n <= 25) return armRect('E', 0, 25 - n);
  if (n >= 26 && n <= 33) return armRect('N', 2, n - 26);
  if (n === 34) return armRect('N', 1, 7);
  if (n >= 35 && n <= 42) return armRect('N', 0, 42 - n);
  if (n >= 43 && n <= 50) return armRect('W', 0, n - 43);
  if (n === 51) return armRect('W', 1, 7);
  if (n >= 52 && n <= 59) return armRect('W', 2, 59 - n);
  if (n >= 60 && n <= 67) return armRect('S', 0, n - 60);
  return armRect('S', 1, 7); // 68
}

/** The rectangle of home-column square h (1..7) of colour. */
export function homeRect(colour, h) {
  return armRect(ARM[colour], 1, 7 - h);
}

const NEST_ORIGIN = { yellow: [C1, C1], blue: [C1, 0], red: [0, 0], green: [0, C1] };
const GOAL_TRI = {
  yellow: [[C0, C1], [C1, C1], [SIZE / 2, SIZE / 2]],
  blue: [[C1, C0], [C1, C1], [SIZE / 2, SIZE / 2]],
  red: [[C0, C0], [C1, C0], [SIZE / 2, SIZE / 2]],
  green: [[C0, C0], [C0, C1], [SIZE / 2, SIZE / 2]],
};

function centre(r) { return [r.x + r.w / 2, r.y + r.h / 2]; }

/** Centre of slot i (of n) of a location, for drawing pieces and targets. */
function slotPoint(colour, loc, i, n) {
  if (loc === 'nest') {
    const [x0, y0] = NEST_ORIGIN[colour];
    const cx = x0 + A / 2; const cy = y0 + A / 2;
    const dx = (i % 2 ? 1 : -1) * 34; const dy = (i < 2 ? -1 : 1) * 34;
    return [cx + dx, cy + dy];
  }
  if (loc === 'goal') {
    const tri = GOAL_TRI[colour];
    const gx = (tri[0][0] + tri[1][0] + tri[2][0]) / 3;
    const gy = (tri[0][1] + tri[1][1] + tri[2][1]) / 3;
    const horiz = colour === 'yellow' || colour === 'red';
    const off = (i - (n - 1) / 2) * 16;
    return horiz ? [gx + off, gy] : [gx, gy + off];
  }
  const r = loc.startsWith('h') ? homeRect(colour, Number(loc.slice(1))) : ringRect(Number(loc));
  const [cx, cy] = centre(r);
  if (n < 2) return [cx, cy];
  const off = i === 0 ? -14 : 14;
  return r.w > r.h ? [cx + off, cy] : [cx, cy + off];
}

// ----- drawing ------------------------------------------------------------------------

function el(name, attrs = {}, parent = null) {
  const e = document.createElementNS(SVGNS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (parent) parent.appendChild(e);
  return e;
}

function rectEl(r, attrs, parent) {
  return el('rect', { x: r.x, y: r.y, width: r.w, height: r.h, ...attrs }, parent);
}

/**
 * Creates the board in `container`. Returns { render(state), svg }.
 * state: { pieces: [{colour, piece, at}], selectable: Set("colour:piece"), selected,
 *          targets: [{loc, colour, label, capture, key}], onPiece(colour, piece),
 *          onTarget(key), seq, turn }
 */
export function createBoard(container) {
  const svg = el('svg', {
    viewBox: `0 0 ${SIZE} ${SIZE}`,
    class: 'board',
    role: 'group',
    'aria-label': t('board_label'),
  });
  container.appendChild(svg);
  const base = el('g', { class: 'base' }, svg);
  drawBase(base);
  const targets = el('g', { class: 'targets' }, svg);
  const pieces = el('g', { class: 'pieces' }, svg);

  function render(state) {
    svg.setAttribute('aria-label', t('board_label'));
    if (state.seq !== undefined) svg.dataset.seq = String(state.seq);
    if (state.turn) svg.dataset.turn = state.turn;
    pieces.replaceChildren();
    targets.replaceChildren();
    // Group pieces by location so two on one square sit side by side.
    const groups = new Map();
    for (const p of state.pieces) {
      const key = p.at === 'nest' || p.at === 'goal' || p.at.startsWith('h') ? `${p.colour}:${p.at}` : p.at;
      if (!groups.has(key)) groups.set(key, []);
      groups.get(key).push(p);
    }
    for (const list of groups.values()) {
      list.forEach((p, i) => {
        const n = p.at === 'nest' ? 4 : list.length;
        const slot = p.at === 'nest' ? p.piece : i;
        const [x, y] = slotPoint(p.colour, p.at, slot, n);
        const id = `${p.colour}:${p.piece}`;
        const selectable = state.selectable && state.selectable.has(id);
        const g = el('g', {
          class: `piece piece-${p.colour}${selectable ? ' selectable' : ''}${state.selected === id ? ' selected' : ''}`,
          transform: `translate(${x} ${y})`,
          'data-colour': p.colour,
          'data-piece': p.piece,
          'data-loc': p.at,
          'aria-label': t('piece_label', { n: p.piece + 1, colour: colourName(p.colour), loc: locName(p.at) }),
        }, pieces);
        if (selectable) {
          g.setAttribute('tabindex', '0');
          g.setAttribute('role', 'button');
          if (state.selected === id) g.setAttribute('aria-pressed', 'true');
          const pick = () => state.onPiece && state.onPiece(p.colour, p.piece);
          g.addEventListener('click', pick);
          g.addEventListener('keydown', (e) => {
            if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); pick(); }
          });
        } else {
          g.setAttribute('role', 'img');
        }
        el('circle', { r: 13, class: 'piece-body', fill: FILL[p.colour] }, g);
        el('circle', { r: 6, class: 'piece-eye' }, g);
        const tx = el('text', { class: 'piece-num', 'text-anchor': 'middle', 'dominant-baseline': 'central' }, g);
        tx.textContent = String(p.piece + 1);
      });
    }
    for (const tg of state.targets || []) {
      const [x, y] = slotPoint(tg.colour, tg.loc, 0, 1);
      const g = el('g', {
        class: `target${tg.capture ? ' capture' : ''}`,
        transform: `translate(${x} ${y})`,
        tabindex: 0,
        role: 'button',
        'data-loc': tg.loc,
        'data-key': tg.key,
        'aria-label': tg.label,
      }, targets);
      el('circle', { r: 17, class: 'target-ring' }, g);
      const go = () => state.onTarget && state.onTarget(tg.key);
      g.addEventListener('click', go);
      g.addEventListener('keydown', (e) => {
        if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); go(); }
      });
    }
    // Targets above pieces so they can be clicked on occupied squares.
    svg.appendChild(targets);
  }

  return { svg, render };
}

function drawBase(g) {
  el('rect', { x: 0, y: 0, width: SIZE, height: SIZE, rx: 18, class: 'board-bg' }, g);
  // Nests.
  for (const c of COLOURS) {
    const [x, y] = NEST_ORIGIN[c];
    el('rect', { x: x + 8, y: y + 8, width: A - 16, height: A - 16, rx: 24, fill: FILL[c], class: 'nest', 'data-nest': c }, g);
    el('circle', { cx: x + A / 2, cy: y + A / 2, r: 74, class: 'nest-inner' }, g);
    const label = el('text', {
      x: x + A / 2, y: y + (c === 'yellow' || c === 'green' ? A - 18 : 30),
      class: 'nest-label', 'text-anchor': 'middle',
    }, g);
    label.textContent = colourName(c).toUpperCase();
    label.dataset.colourLabel = c;
  }
  // Goal triangles.
  for (const c of COLOURS) {
    el('polygon', { points: GOAL_TRI[c].map((p) => p.join(',')).join(' '), fill: FILL[c], class: 'goal' }, g);
  }
  const goal = el('text', { x: SIZE / 2, y: SIZE / 2 + 5, class: 'goal-label', 'text-anchor': 'middle' }, g);
  goal.textContent = t('goal');
  // Home columns.
  for (const c of COLOURS) {
    for (let h = 1; h <= 7; h++) {
      rectEl(homeRect(c, h), { fill: TINT[c], class: 'cell home', 'data-home': `${c}:h${h}` }, g);
    }
  }
  // Ring squares.
  const exitOf = Object.fromEntries(Object.entries(EXIT).map(([c, s]) => [s, c]));
  const lastOf = Object.fromEntries(Object.entries(LAST).map(([c, s]) => [s, c]));
  for (let n = 1; n <= 68; n++) {
    const r = ringRect(n);
    const ex = exitOf[n];
    const cell = rectEl(r, {
      class: `cell ring${SAFE.has(n) ? ' safe' : ''}${ex ? ' exit' : ''}`,
      fill: ex ? FILL[ex] : (lastOf[n] ? TINT[lastOf[n]] : '#fffdf7'),
      'data-square': n,
    }, g);
    const title = el('title', {}, cell);
    title.textContent = t('square_label', { n });
    const [cx, cy] = centre(r);
    if (SAFE.has(n)) {
      el('circle', { cx, cy, r: 10, class: `safe-mark${ex ? ' on-exit' : ''}` }, g);
    }
    // Square number near the outer edge of the cell.
    const horiz = r.w > r.h;
    const tx = el('text', {
      x: horiz ? r.x + 4 : cx,
      y: horiz ? cy + 4 : r.y + 11,
      class: `num${ex ? ' on-exit' : ''}`,
      'text-anchor': horiz ? 'start' : 'middle',
    }, g);
    tx.textContent = String(n);
  }
}
