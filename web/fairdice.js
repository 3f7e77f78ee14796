// Provably fair dice in the browser (docs/FAIR_DICE.md, served at /FAIR_DICE.md): a
// client seed of our own, and the verification of a finished game with Web Crypto —
// the commitment against the revealed server seed, then every throw, in order.

const SCHEME = 'parchis-fair-dice-v1';
const ORDER = ['yellow', 'blue', 'red', 'green'];
const LETTER = { yellow: 'Y', blue: 'B', red: 'R', green: 'G' };

/** A fresh client seed: 16 bytes from crypto.getRandomValues, as 32 hex digits. */
export function newClientSeed() {
  const b = new Uint8Array(16);
  crypto.getRandomValues(b);
  return hex(b);
}

function hex(bytes) {
  return Array.from(bytes, (x) => x.toString(16).padStart(2, '0')).join('');
}

function unhex(text) {
  if (!/^([0-9a-fA-F]{2})*$/.test(text)) throw new Error(`not hex: ${text}`);
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(text.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** C: per seated colour in board order, its letter byte, the seed's length byte, the seed. */
function combined(seeds) {
  const parts = [];
  for (const s of [...seeds].sort((a, b) => ORDER.indexOf(a.colour) - ORDER.indexOf(b.colour))) {
    const bytes = new TextEncoder().encode(s.seed);
    parts.push(LETTER[s.colour].charCodeAt(0), bytes.length, ...bytes);
  }
  return Uint8Array.from(parts);
}

/** The message of block j of throw k: C ‖ u64_be(k) ‖ u32_be(j). */
function message(c, k, j) {
  const m = new Uint8Array(c.length + 12);
  m.set(c);
  const v = new DataView(m.buffer);
  v.setBigUint64(c.length, BigInt(k));
  v.setUint32(c.length + 8, j);
  return m;
}

async function throwDice(key, c, k, n) {
  const dice = [];
  for (let j = 0; dice.length < n; j++) {
    const block = new Uint8Array(await crypto.subtle.sign('HMAC', key, message(c, k, j)));
    for (const b of block) {
      if (b < 252) {
        dice.push((b % 6) + 1);
        if (dice.length === n) break;
      }
    }
  }
  return dice;
}

/** The throws of a games-API game, in log order: { number, colour, dice }. */
function throwsOf(game) {
  const out = [];
  for (const { event: ev } of game.events || []) {
    if (ev.type === 'opening_roll') {
      for (const r of ev.rolls) out.push({ number: r.throw, colour: r.colour, dice: r.dice || [] });
    } else if (ev.type === 'game' && ev.event.type === 'dice_rolled') {
      out.push({ number: ev.throw, colour: ev.event.colour, dice: ev.event.dice });
    }
  }
  return out;
}

/**
 * Verifies a game from GET /api/games/{id}. Resolves to one of
 * { status: 'verified', throws }, { status: 'test' } (test dice, never verifiable),
 * { status: 'unavailable', reason } (no record, not over, no Web Crypto) or
 * { status: 'failed', throw?, reason }: the first throw (or seed) that does not match.
 */
export async function verifyGame(game) {
  const d = game.dice;
  if (!d) return { status: 'unavailable', reason: 'no fair-dice record' };
  if (d.mode === 'test') return { status: 'test' };
  if (d.scheme !== SCHEME) return { status: 'failed', reason: `unknown scheme ${d.scheme}` };
  const revealed = (game.events || []).find((e) => e.event.type === 'dice_revealed');
  const seedHex = d.server_seed || (revealed && revealed.event.server_seed);
  if (!seedHex) return { status: 'unavailable', reason: 'the server seed is not revealed yet' };
  if (!globalThis.crypto || !crypto.subtle) return { status: 'unavailable', reason: 'Web Crypto needs HTTPS' };
  const seed = unhex(seedHex);
  const digest = hex(new Uint8Array(await crypto.subtle.digest('SHA-256', seed)));
  const started = (game.events || []).find((e) => e.event.type === 'game_started');
  const published = started && started.event.dice ? started.event.dice.commitment : d.commitment;
  if (digest !== d.commitment || digest !== published) {
    return { status: 'failed', reason: 'the server seed does not match the commitment' };
  }
  const key = await crypto.subtle.importKey('raw', seed, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const c = combined(d.client_seeds || []);
  const n = d.dice_per_throw || 2;
  const throws = throwsOf(game);
  for (let i = 0; i < throws.length; i++) {
    const t = throws[i];
    if (t.number !== i) return { status: 'failed', throw: i, reason: `throw ${i} is missing or out of order` };
    const want = await throwDice(key, c, i, n);
    if (want.join(',') !== t.dice.join(',')) {
      return { status: 'failed', throw: i, reason: `throw ${i} (${t.colour}): ${t.dice.join(',')} ≠ ${want.join(',')}` };
    }
  }
  return { status: 'verified', throws: throws.length };
}
