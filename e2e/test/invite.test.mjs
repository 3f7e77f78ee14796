// Browser test of issue 29, point 10: invite links are built from the server's public URL
// (`--public-url`, read from `GET /api/config`), not from the page's address, so they work
// behind a proxy or on a LAN; phone and desktop.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, teardown, newPage, PHONE, DESKTOP } from '../harness.mjs';

const PUBLIC = 'http://192.168.77.5:8080';
let env;
before(async () => { env = await setup({ seed: '10', publicUrl: `${PUBLIC}/` }); });
after(async () => { await teardown(env); });

for (const [label, viewport] of [['phone', PHONE], ['desktop', DESKTOP]]) {
  test(`${label}: the invite link names the server's public URL`, { timeout: 2 * 60 * 1000 }, async () => {
    const p = await newPage(env, `I-${label}`, viewport);
    await p.goto(env.base);
    await p.fill('#name', 'Inés');
    await p.click('#create-btn');
    await p.waitForSelector('#view-room:not([hidden])');
    const code = await p.evaluate(() => window.__parchis.state().code);
    await p.waitForFunction((c) => document.getElementById('invite').value.endsWith(c), code);
    assert.equal(await p.inputValue('#invite'), `${PUBLIC}/?room=${code}`);
    assert.ok(await p.isHidden('#invite-loopback'), 'no loopback warning: the link works on the LAN');
    assert.deepEqual(p.errors, []);
    await p.context().close();
  });
}
