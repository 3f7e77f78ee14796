// The player's display preferences, remembered in localStorage: shapes on the pieces
// (colour-blind-safe, on by default), high contrast, emotes muted. Applied as classes on
// <body> (CSS) and read by the board and the emotes.

const KEY = 'parchis.prefs';
export const DEFAULTS = Object.freeze({ shapes: true, contrast: false, emotesMuted: false });

/** The stored preferences, defaults filled in. */
export function loadPrefs() {
  let stored = null;
  try { stored = JSON.parse(localStorage.getItem(KEY)); } catch (_) { /* none */ }
  return { ...DEFAULTS, ...(stored && typeof stored === 'object' ? stored : {}) };
}

/** Stores `prefs` and applies them to the page. */
export function savePrefs(prefs) {
  try { localStorage.setItem(KEY, JSON.stringify(prefs)); } catch (_) { /* ignore */ }
  applyPrefs(prefs);
}

/** Applies `prefs` to the page: `body.hc` (high contrast), `body.no-shapes`. */
export function applyPrefs(prefs) {
  document.body.classList.toggle('hc', !!prefs.contrast);
  document.body.classList.toggle('no-shapes', !prefs.shapes);
}
