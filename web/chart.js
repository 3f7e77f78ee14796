// The rating chart's geometry (profile.js draws it as a small inline SVG; no chart
// library). Pure: no DOM, unit-tested in web/test/chart.test.mjs.

/**
 * The points of one pool's rating history, oldest first, scaled into a `width`×`height`
 * box with `pad` px of margin (`left` px on the left, for the scale's labels; default `pad`): `{points: [{x, y, display, at_ms, game_id}], path, min,
 * max}`. `path` is an SVG path ("M x y L x y …"); x is the game's index (one step per
 * rated game, so a busy day is not squeezed), y grows downwards (higher rating: higher
 * up). A flat history sits in the middle. No points: `path` ''.
 */
export function ratingChart(history, pool, { width = 320, height = 120, pad = 12, left = pad } = {}) {
  const pts = (history || []).filter((h) => h.pool === pool && Number.isFinite(h.display));
  if (!pts.length) return { points: [], path: '', min: null, max: null };
  const values = pts.map((p) => p.display);
  const min = Math.min(...values);
  const max = Math.max(...values);
  const span = max - min;
  const innerW = width - left - pad;
  const innerH = height - 2 * pad;
  const points = pts.map((p, i) => ({
    x: round(left + (pts.length === 1 ? innerW / 2 : (innerW * i) / (pts.length - 1))),
    y: round(span === 0 ? pad + innerH / 2 : pad + innerH * (1 - (p.display - min) / span)),
    display: p.display,
    at_ms: p.at_ms,
    game_id: p.game_id,
  }));
  const path = points.map((p, i) => `${i ? 'L' : 'M'}${p.x} ${p.y}`).join(' ');
  return { points, path, min, max };
}

/** The pools a history covers, most recently played first. */
export function historyPools(history) {
  const seen = [];
  for (let i = (history || []).length - 1; i >= 0; i--) {
    const p = history[i].pool;
    if (!seen.includes(p)) seen.push(p);
  }
  return seen;
}

function round(v) { return Math.round(v * 10) / 10; }
