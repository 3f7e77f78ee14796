// Unit tests of the profile's rating chart geometry (web/chart.js).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ratingChart, historyPools } from '../chart.js';

const h = (pool, display, i) => ({ pool, display, at_ms: 1000 + i, game_id: `g${i}` });

test('a rising history goes up from left to right inside the padding', () => {
  const c = ratingChart([h('online', 1000, 0), h('classic', 50, 1), h('online', 1010, 2), h('online', 1030, 3)], 'online', { width: 100, height: 50, pad: 10 });
  assert.deepEqual(c.points.map((p) => [p.x, p.y]), [[10, 40], [50, 30], [90, 10]]);
  assert.equal(c.path, 'M10 40 L50 30 L90 10');
  assert.equal(c.min, 1000);
  assert.equal(c.max, 1030);
  assert.deepEqual(c.points.map((p) => p.game_id), ['g0', 'g2', 'g3'], 'only the pool asked for');
});

test('one game or a flat history sits in the middle; no games draws nothing', () => {
  const one = ratingChart([h('online', 990, 0)], 'online', { width: 100, height: 50, pad: 10 });
  assert.deepEqual(one.points.map((p) => [p.x, p.y]), [[50, 25]]);
  const flat = ratingChart([h('online', 990, 0), h('online', 990, 1)], 'online', { width: 100, height: 50, pad: 10 });
  assert.deepEqual(flat.points.map((p) => p.y), [25, 25]);
  assert.deepEqual(ratingChart([], 'online'), { points: [], path: '', min: null, max: null });
  assert.deepEqual(ratingChart(undefined, 'online').points, []);
});

test('a left margin for the scale moves the first point right', () => {
  const c = ratingChart([h('online', 1000, 0), h('online', 1030, 1)], 'online', { width: 100, height: 50, pad: 10, left: 30 });
  assert.deepEqual(c.points.map((p) => p.x), [30, 90]);
});

test('pools are listed most recently played first, once each', () => {
  assert.deepEqual(historyPools([h('online', 1, 0), h('classic', 1, 1), h('online', 1, 2)]), ['online', 'classic']);
  assert.deepEqual(historyPools(null), []);
});
