// Short synthesized sounds (Web Audio, no files): your turn, the last seconds of your
// clock, a capture, a piece in the goal, the end. A mute switch remembered in
// localStorage ("parchis.muted").

const TONES = {
  turn: [[660, 0.09], [880, 0.12]],
  tick: [[1200, 0.04]],
  capture: [[220, 0.12], [160, 0.16]],
  goal: [[523, 0.08], [659, 0.08], [784, 0.14]],
  win: [[523, 0.1], [659, 0.1], [784, 0.1], [1046, 0.22]],
  ready: [[784, 0.1], [988, 0.1], [784, 0.1], [988, 0.16]],
};

let ctx = null;
let muted = false;
try { muted = localStorage.getItem('parchis.muted') === '1'; } catch (_) { /* storage unavailable */ }

/** Every sound asked for, played or muted (read by the browser test through its hook). */
export const played = [];

export function isMuted() { return muted; }

export function setMuted(m) {
  muted = !!m;
  try { localStorage.setItem('parchis.muted', muted ? '1' : '0'); } catch (_) { /* ignore */ }
}

/** Plays sound `name` (a key of TONES) unless muted. */
export function play(name) {
  played.push({ name, muted });
  if (played.length > 200) played.shift();
  if (muted || !TONES[name]) return;
  try {
    ctx = ctx || new (window.AudioContext || window.webkitAudioContext)();
    let at = ctx.currentTime;
    for (const [freq, len] of TONES[name]) {
      const osc = ctx.createOscillator();
      const gain = ctx.createGain();
      osc.frequency.value = freq;
      osc.type = 'triangle';
      gain.gain.setValueAtTime(0.12, at);
      gain.gain.exponentialRampToValueAtTime(0.001, at + len);
      osc.connect(gain).connect(ctx.destination);
      osc.start(at);
      osc.stop(at + len);
      at += len * 0.9;
    }
  } catch (_) { /* no audio available */ }
}
