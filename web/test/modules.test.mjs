// The web client's module rules (the team's guide): no module imports another in a
// circle (directly or round a longer loop), and no file over 600 lines. Read as text:
// the static `import … from './x.js'` lines of web/*.js.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const WEB = join(dirname(fileURLToPath(import.meta.url)), '..');
const files = readdirSync(WEB).filter((f) => f.endsWith('.js'));
const source = Object.fromEntries(files.map((f) => [f, readFileSync(join(WEB, f), 'utf8')]));
const imports = Object.fromEntries(files.map((f) => [f,
  [...source[f].matchAll(/^import\s[^;]*?from\s+'\.\/([\w.-]+\.js)';/gms)].map((m) => m[1])]));

test('every import names a module of web/', () => {
  for (const [f, deps] of Object.entries(imports)) for (const d of deps) assert.ok(files.includes(d), `${f} imports ./${d}`);
  assert.ok(imports['app.js'].includes('lobby.js'), 'the import lines are read (app.js wires lobby.js)');
});

test('no import circles between the web modules', () => {
  const state = {};
  const path = [];
  const visit = (f) => {
    if (state[f] === 'done') return;
    if (state[f] === 'open') assert.fail(`import circle: ${[...path.slice(path.indexOf(f)), f].join(' → ')}`);
    state[f] = 'open';
    path.push(f);
    for (const d of imports[f] || []) visit(d);
    path.pop();
    state[f] = 'done';
  };
  for (const f of files) visit(f);
});

test('no web module over 600 lines', () => {
  const long = files.map((f) => [f, source[f].split('\n').length]).filter(([, n]) => n > 600);
  assert.deepEqual(long, []);
});
