// Invite links: built from the server's public URL (`GET /api/config`, the server's
// `--public-url`), which is right behind a proxy or on a LAN; the page's own address
// when the server names none or cannot be asked.

import { api } from './net.js';

let base = null; // the server's public URL, once known

/** Asks the server for its public URL (once; later calls reuse it). */
export async function loadInviteBase() {
  if (base !== null) return base;
  try {
    const cfg = await api('GET', '/api/config');
    base = cfg && typeof cfg.public_url === 'string' && cfg.public_url ? cfg.public_url.replace(/\/+$/, '') : '';
  } catch (_) { base = ''; }
  return base;
}

/** The invite link of room `code`. */
export function inviteUrl(code) {
  return `${base || location.origin}/?room=${encodeURIComponent(code)}`;
}

/** Whether the link only works on this computer (a loopback host). */
export function inviteIsLoopback(code) {
  let host;
  try { host = new URL(inviteUrl(code)).hostname; } catch (_) { return false; }
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\./.test(host);
}
