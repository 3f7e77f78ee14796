// The Parchís board in SVG: where each square is drawn, and drawing pieces, targets,
// last-move marks and move animations. It knows no rules: which squares are safe and
// where each colour exits come from the server (`room.board`), where a piece can go from
// `your_turn.previews`, where pieces stand from the server's positions.
//
// Layout: four arms of 3 lanes x 8 cells around a central goal; nests in the corners.
// Unrotated, yellow's arm is at the bottom, blue's on the right, red's on top, green's on
// the left; the board turns so that a chosen colour is at the bottom.

import { t, colourName, locName } from './i18n.js';

export const COLOURS = ['yellow', 'blue', 'red', 'green'];
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

// ----- geometry (where things are drawn; no rules) ----------------------------------------

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

/** Centre of a location's first slot (for paths and marks). */
export function locPoint(colour, loc) { return slotPoint(colour, loc, 0, 1); }

const TURNS = { yellow: 0, blue: 90, red: 180, green: 270 };

/**
 * A shape per colour, drawn on every piece and beside every colour's name, so colours
 * are told apart without seeing hue (red-green colour blindness): yellow a circle, blue
 * a square, red a triangle, green a diamond. `SHAPE_CHAR` is the same as text.
 */
export const SHAPE_CHAR = { yellow: '●', blue: '■', red: '▲', green: '◆' };
function shapeEl(colour, parent) {
  switch (colour) {
    case 'blue': return el('rect', { x: -7.5, y: -7.5, width: 15, height: 15, class: 'piece-shape' }, parent);
    case 'red': return el('polygon', { points: '0,-10 9.5,7 -9.5,7', class: 'piece-shape' }, parent);
    case 'green': return el('polygon', { points: '0,-10 10,0 0,10 -10,0', class: 'piece-shape' }, parent);
    default: return el('circle', { r: 8, class: 'piece-shape' }, parent);
  }
}
/** Minimum touch target, CSS px (WCAG 2.5.5, platform guidelines). */
export const HIT_PX = 46;

/**
 * How much larger pieces are drawn on a phone-sized screen (≤ 820 CSS px wide, where the
 * zoom button shows): a ring square is only ~18 CSS px long there, so a piece of radius
 * 13 units (26 of the square's 30) would be under 15 px; at 1.2 it is as long as the
 * square (31 units, ~18.5 px on a 390 px phone; twice that zoomed). Two pieces on one
 * square then touch rather than sit apart. Touch areas do not depend on it (HIT_PX).
 */
export const PHONE_PIECE_SCALE = 1.2;
function pieceScale() {
  return typeof matchMedia === 'function' && matchMedia('(max-width: 820px)').matches ? PHONE_PIECE_SCALE : 1;
}

/**
 * Creates the board in `container`. Returns { render(state), animate(move), svg }.
 * state: { board: {safe_squares, exit_squares, last_ring_squares}, bottom: colour,
 *          pieces: [{colour, piece, at}], selectable: Set("colour:piece"), selected,
 *          targets: [{loc, colour, label, capture, key}], lastMoves: [{colour, from, to,
 *          captures}], onPiece(colour, piece), onTarget(key), seq, turn }
 */
export function createBoard(container) {
  const svg = el('svg', {
    viewBox: `0 0 ${SIZE} ${SIZE}`,
    class: 'board',
    role: 'group',
    'aria-label': t('board_label'),
  });
  container.appendChild(svg);
  const turn = el('g', { class: 'turned' }, svg);
  const base = el('g', { class: 'base' }, turn);
  const marks = el('g', { class: 'marks' }, turn);
  // Layers, bottom to top: the wide touch areas of targets sit under the pieces (so
  // tapping another movable piece chooses it), the target rings above them.
  const targetHits = el('g', { class: 'target-hits' }, turn);
  const pieceHits = el('g', { class: 'piece-hits' }, turn);
  const pieces = el('g', { class: 'pieces' }, turn);
  // The last capture's mark, above the pieces (the capturer stands on it).
  const captureMarks = el('g', { class: 'capture-marks' }, turn);
  const targets = el('g', { class: 'targets' }, turn);
  let baseKey = null;
  let angle = 0;
  const upright = (x, y) => (angle ? ` rotate(${-angle} ${x} ${y})` : '');

  /** SVG units per CSS pixel: touch areas keep HIT_PX whatever the board's size. */
  function unitsPerPx() {
    const w = svg.getBoundingClientRect().width;
    return w > 0 ? SIZE / w : 1;
  }

  function render(state) {
    angle = TURNS[state.bottom] || 0;
    turn.setAttribute('transform', angle ? `rotate(${angle} ${SIZE / 2} ${SIZE / 2})` : '');
    svg.dataset.bottom = state.bottom || 'yellow';
    const key = JSON.stringify([state.board, angle, t('goal')]);
    if (key !== baseKey) {
      base.replaceChildren();
      drawBase(base, state.board, upright);
      baseKey = key;
    }
    svg.setAttribute('aria-label', t('board_label'));
    if (state.seq !== undefined) svg.dataset.seq = String(state.seq);
    if (state.turn) svg.dataset.turn = state.turn;
    const upp = unitsPerPx();
    const hitR = Math.max(16, (HIT_PX / 2) * upp);
    const scale = pieceScale();
    svg.dataset.pieceScale = String(scale);
    // Square numbers are drawn 10 units high: left out when that is under 9 CSS px.
    svg.classList.toggle('no-nums', 10 / upp < 9);
    pieces.replaceChildren();
    targets.replaceChildren();
    targetHits.replaceChildren();
    pieceHits.replaceChildren();
    marks.replaceChildren();
    captureMarks.replaceChildren();
    svg.classList.toggle('shapes', state.shapes !== false);
    if (state.lastCapture) {
      const c = state.lastCapture;
      const [cx, cy] = locPoint(c.by, c.square);
      const x = el('g', { class: `capture-mark c-${c.by}`, 'data-square': c.square, 'data-by': c.by, 'data-colour': c.colour }, captureMarks);
      el('circle', { cx, cy, r: 19, class: 'capture-ring' }, x);
      for (const [a, b, c2, d] of [[-11, -11, 11, 11], [-11, 11, 11, -11]]) {
        el('line', { x1: cx + a, y1: cy + b, x2: cx + c2, y2: cy + d, class: 'capture-x-under' }, x);
        el('line', { x1: cx + a, y1: cy + b, x2: cx + c2, y2: cy + d, class: 'capture-x' }, x);
      }
    }
    // Last move of every player: from (dashed) -> to (solid), captures crossed.
    for (const m of state.lastMoves || []) {
      const g = el('g', { class: `last-move c-${m.colour}`, 'data-colour': m.colour, 'data-from': m.from, 'data-to': m.to }, marks);
      if (m.from !== 'nest') {
        const [fx, fy] = locPoint(m.colour, m.from);
        el('circle', { cx: fx, cy: fy, r: 11, class: 'last-from', stroke: FILL[m.colour] }, g);
      }
      const [tx, ty] = locPoint(m.colour, m.to);
      el('circle', { cx: tx, cy: ty, r: 18, class: 'last-to', stroke: FILL[m.colour] }, g);
      for (const c of m.captures || []) {
        const [cx, cy] = locPoint(m.colour, c);
        const x = el('g', { class: 'last-capture', 'data-square': c }, g);
        el('line', { x1: cx - 9, y1: cy - 9, x2: cx + 9, y2: cy + 9 }, x);
        el('line', { x1: cx - 9, y1: cy + 9, x2: cx + 9, y2: cy - 9 }, x);
      }
    }
    // Group pieces by location so two on one square sit side by side.
    const groups = new Map();
    for (const p of state.pieces) {
      const k = p.at === 'nest' || p.at === 'goal' || p.at.startsWith('h') ? `${p.colour}:${p.at}` : p.at;
      if (!groups.has(k)) groups.set(k, []);
      groups.get(k).push(p);
    }
    const hits = [];
    for (const list of groups.values()) {
      // Two or more movable pieces on one square: one touch area for the square, which
      // asks which piece (their own areas would overlap); each body stays tappable.
      const movableHere = list.filter((p) => state.selectable && state.selectable.has(`${p.colour}:${p.piece}`));
      const stacked = movableHere.length > 1 && list[0].at !== 'nest';
      if (stacked) {
        const [sx, sy] = slotPoint(list[0].colour, list[0].at, 0, 1);
        const ids = movableHere.map((p) => `${p.colour}:${p.piece}`);
        const hit = el('circle', { cx: sx, cy: sy, r: hitR, class: 'hit piece-hit stack-hit', 'data-loc': list[0].at, 'data-pieces': ids.join(' ') }, pieceHits);
        hit.addEventListener('click', () => state.onStack && state.onStack(ids, list[0].at));
      }
      list.forEach((p, i) => {
        const n = p.at === 'nest' ? 4 : list.length;
        const slot = p.at === 'nest' ? p.piece : i;
        const [x, y] = slotPoint(p.colour, p.at, slot, n);
        const id = `${p.colour}:${p.piece}`;
        const selectable = state.selectable && state.selectable.has(id);
        const g = el('g', {
          class: `piece piece-${p.colour}${selectable ? ' selectable' : ''}${state.selected === id ? ' selected' : ''}`,
          'data-colour': p.colour,
          'data-piece': p.piece,
          'data-loc': p.at,
          'data-x': x,
          'data-y': y,
          'aria-label': t('piece_label', { n: p.piece + 1, colour: colourName(p.colour), loc: locName(p.at) }),
        }, pieces);
        g.style.transform = `translate(${x}px, ${y}px)`;
        if (selectable) {
          g.setAttribute('tabindex', '0');
          g.setAttribute('role', 'button');
          if (state.selected === id) g.setAttribute('aria-pressed', 'true');
          const pick = () => state.onPiece && state.onPiece(p.colour, p.piece);
          g.addEventListener('click', pick);
          g.addEventListener('keydown', (e) => {
            if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); pick(); }
          });
          // A transparent touch area of at least HIT_PX around the piece, under every
          // piece's body (so each body stays tappable where areas overlap).
          if (!stacked) {
            const hit = el('circle', { cx: x, cy: y, r: hitR, class: 'hit piece-hit', 'data-colour': p.colour, 'data-piece': p.piece }, pieceHits);
            hit.addEventListener('click', pick);
          }
          hits.push(g);
        } else {
          g.setAttribute('role', 'img');
        }
        // The drawing, scaled on a phone (the group `g` itself is moved and animated).
        const art = scale === 1 ? g : el('g', { class: 'piece-art', transform: `scale(${scale})` }, g);
        el('circle', { r: 13, class: 'piece-body', fill: FILL[p.colour] }, art);
        el('circle', { r: 6, class: 'piece-eye' }, art);
        const shape = el('g', { class: 'piece-mark', 'data-shape': SHAPE_CHAR[p.colour], transform: angle ? `rotate(${-angle})` : '' }, art);
        shapeEl(p.colour, shape);
        const tx = el('text', { class: 'piece-num', 'text-anchor': 'middle', 'dominant-baseline': 'central', transform: angle ? `rotate(${-angle})` : '' }, art);
        tx.textContent = String(p.piece + 1);
      });
    }
    // Selectable pieces above the others.
    for (const h of hits) pieces.appendChild(h);
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
      // The square's number on the target itself (the phone board hides the others).
      if (tg.short) {
        const lab = el('g', { class: 'target-label', transform: angle ? `rotate(${-angle})` : '' }, g);
        el('rect', { x: -18, y: -40, width: 36, height: 21, rx: 6, class: 'target-label-bg' }, lab);
        const tt = el('text', { x: 0, y: -29.5, 'text-anchor': 'middle', 'dominant-baseline': 'central', class: 'target-label-text' }, lab);
        tt.textContent = tg.short;
      }
      const go = (e) => { e.stopPropagation(); if (state.onTarget) state.onTarget(tg.key); };
      const hit = el('circle', { cx: x, cy: y, r: hitR, class: 'hit target-hit', 'data-key': tg.key, 'data-loc': tg.loc }, targetHits);
      hit.addEventListener('click', go);
      g.addEventListener('click', go);
      g.addEventListener('keydown', (e) => {
        if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); go(e); }
      });
    }
  }

  /**
   * Animates a piece just drawn at the end of `path` from `from` along `path` (short:
   * at most 600 ms). Nothing when the user prefers reduced motion.
   */
  function animate(move) {
    if (typeof matchMedia === 'function' && matchMedia('(prefers-reduced-motion: reduce)').matches) return null;
    const g = pieces.querySelector(`.piece[data-colour="${move.colour}"][data-piece="${move.piece}"]`);
    if (!g || !g.animate) return null;
    const pts = [];
    if (move.from && move.from !== 'nest') pts.push(locPoint(move.colour, move.from));
    else pts.push(slotPoint(move.colour, 'nest', move.piece, 4));
    for (const loc of move.path.slice(0, -1)) pts.push(locPoint(move.colour, loc));
    pts.push([Number(g.dataset.x), Number(g.dataset.y)]);
    const frames = pts.map(([x, y]) => ({ transform: `translate(${x}px, ${y}px)` }));
    const duration = Math.min(600, 90 * (pts.length - 1));
    g.classList.add('moving');
    const a = g.animate(frames, { duration, easing: 'ease-in-out' });
    a.onfinish = () => g.classList.remove('moving');
    return a;
  }

  /**
   * Animates a captured piece, just drawn in its nest, going home from square `from`
   * (700 ms). Nothing when the user prefers reduced motion.
   */
  function animateHome(f) {
    if (typeof matchMedia === 'function' && matchMedia('(prefers-reduced-motion: reduce)').matches) return null;
    const g = pieces.querySelector(`.piece[data-colour="${f.colour}"][data-piece="${f.piece}"]`);
    if (!g || !g.animate || g.dataset.loc !== 'nest') return null;
    const [fx, fy] = locPoint(f.colour, f.from);
    const to = `translate(${g.dataset.x}px, ${g.dataset.y}px)`;
    g.classList.add('going-home');
    const a = g.animate([
      { transform: `translate(${fx}px, ${fy}px) scale(1.3)` },
      { transform: `translate(${fx}px, ${fy}px) scale(1.3)`, offset: 0.25 },
      { transform: to },
    ], { duration: 700, easing: 'ease-in' });
    a.onfinish = () => g.classList.remove('going-home');
    return a;
  }

  return { svg, render, animate, animateHome };
}

function drawBase(g, board, upright) {
  const safe = new Set((board && board.safe_squares) || []);
  const exitOf = Object.fromEntries(((board && board.exit_squares) || []).map((x) => [x.square, x.colour]));
  const lastOf = Object.fromEntries(((board && board.last_ring_squares) || []).map((x) => [x.square, x.colour]));
  el('rect', { x: 0, y: 0, width: SIZE, height: SIZE, rx: 18, class: 'board-bg' }, g);
  // Nests.
  for (const c of COLOURS) {
    const [x, y] = NEST_ORIGIN[c];
    el('rect', { x: x + 8, y: y + 8, width: A - 16, height: A - 16, rx: 24, fill: FILL[c], class: 'nest', 'data-nest': c }, g);
    el('circle', { cx: x + A / 2, cy: y + A / 2, r: 74, class: 'nest-inner' }, g);
    const lx = x + A / 2; const ly = y + A / 2 + 100;
    const label = el('text', { x: lx, y: ly, class: 'nest-label', 'text-anchor': 'middle', transform: upright(x + A / 2, y + A / 2).trim() }, g);
    label.textContent = colourName(c).toUpperCase();
    label.dataset.colourLabel = c;
  }
  // Goal triangles.
  for (const c of COLOURS) {
    el('polygon', { points: GOAL_TRI[c].map((p) => p.join(',')).join(' '), fill: FILL[c], class: 'goal' }, g);
  }
  const goal = el('text', { x: SIZE / 2, y: SIZE / 2 + 5, class: 'goal-label', 'text-anchor': 'middle', transform: upright(SIZE / 2, SIZE / 2).trim() }, g);
  goal.textContent = t('goal');
  // Home columns.
  for (const c of COLOURS) {
    for (let h = 1; h <= 7; h++) {
      rectEl(homeRect(c, h), { fill: TINT[c], class: 'cell home', 'data-home': `${c}:h${h}` }, g);
    }
  }
  // Ring squares.
  for (let n = 1; n <= 68; n++) {
    const r = ringRect(n);
    const ex = exitOf[n];
    const cell = rectEl(r, {
      class: `cell ring${safe.has(n) ? ' safe' : ''}${ex ? ' exit' : ''}`,
      fill: ex ? FILL[ex] : (lastOf[n] ? TINT[lastOf[n]] : '#fffdf7'),
      'data-square': n,
    }, g);
    const title = el('title', {}, cell);
    title.textContent = t('square_label', { n });
    const [cx, cy] = centre(r);
    if (safe.has(n)) {
      el('circle', { cx, cy, r: 10, class: `safe-mark${ex ? ' on-exit' : ''}` }, g);
    }
    // Square number near the outer edge of the cell, kept upright.
    const horiz = r.w > r.h;
    const nx = horiz ? r.x + 9 : cx;
    const ny = horiz ? cy : r.y + 8;
    const tx = el('text', {
      x: nx,
      y: ny,
      class: `num${ex ? ' on-exit' : ''}`,
      'text-anchor': 'middle',
      'dominant-baseline': 'central',
      'data-n': n,
      transform: upright(nx, ny).trim(),
    }, g);
    tx.textContent = String(n);
  }
}
