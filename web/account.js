// The account pages (issue 26, proto/README.md "Accounts and sessions"): sign up (the
// ten recovery codes shown once, with an "I saved them" step), log in, log out, recover
// with a code, change password; and the header's account button. Accounts are optional:
// guests play as before. The session is the server's HttpOnly cookie; the page never
// stores a password or a token.
//
// Routes: `#/login`, `#/signup`, `#/recover`, `#/account` (one view, one panel each).

import { t } from './i18n.js';
import { api } from './net.js';
import { ctx, actions, registerView, show, currentView } from './ctx.js';
import { $, toast, httpErrorText, setUrl, store } from './ui.js';

const PANELS = ['login', 'signup', 'codes', 'recover', 'home'];
const USERNAME = /^[A-Za-z0-9_-]{3,20}$/;
const changeListeners = [];
let pendingCodes = null; // the sign-up's codes until "I saved them"
let returnTo = null; // a room code to go back to after logging in

/** Registers `fn()`, called whenever the logged-in account changes (or is loaded). */
export function onAccountChange(fn) { changeListeners.push(fn); }

// Whether this browser logged in (the username, nothing secret): a guest's page does
// not ask `GET /api/me` (its 401 would be noise on every load).
const HINT = 'parchis.account';

function setMe(me) {
  ctx.me = me;
  if (me) store.set(HINT, me.username); else store.del(HINT);
  renderAccountButton();
  for (const fn of changeListeners) fn();
}

/** Asks the server who is logged in (`GET /api/me`); a guest when it says 401. With
 * `always` false, only when this browser has logged in before. */
export async function loadMe({ always = true } = {}) {
  if (!always && !store.get(HINT)) { setMe(null); return; }
  try { setMe(await api('GET', '/api/me')); } catch (err) {
    // No answer at all: keep the hint (and ask again on the next load).
    if (err.status) setMe(null); else { ctx.me = null; renderAccountButton(); }
  }
}

/** The header's account button: "Log in", or the username once logged in. */
export function renderAccountButton() {
  const b = $('account-btn');
  const name = $('account-name');
  if (ctx.me) {
    name.textContent = ctx.me.username;
    b.title = t('account_user_label', { u: ctx.me.username });
    b.dataset.user = ctx.me.username;
    $('lobby-account').textContent = t('my_profile');
    $('lobby-account').href = `#/player/${encodeURIComponent(ctx.me.username)}`;
  } else {
    name.textContent = t('account_link');
    b.title = t('account_link_label');
    delete b.dataset.user;
    $('lobby-account').textContent = t('account_link');
    $('lobby-account').href = '#/login';
  }
}

function panel(which) {
  for (const p of PANELS) $(`account-${p}`).hidden = p !== which;
  const first = $(`account-${which}`).querySelector('input, button');
  if (first) first.focus();
}

function renderHome() {
  const me = ctx.me;
  $('account-who').textContent = t('logged_in_as', { u: me.username });
  $('account-codes-left').textContent = t('codes_left', { n: me.recovery_codes_left ?? 0 });
  $('change-username').value = me.username;
  $('account-profile').href = `#/player/${encodeURIComponent(me.username)}`;
}

/** Shows the account page's panel for `page` ('login', 'signup', 'recover', 'account'). */
export function openAccountPage(page) {
  // From a rated room's join page: back to that room once logged in.
  if (page === 'login' && currentView() === 'join') returnTo = $('join-form').dataset.code || null;
  show('account');
  if (pendingCodes) { panel('codes'); return; } // the codes stay until "I saved them"
  if (ctx.me && page !== 'recover') { renderHome(); panel('home'); return; }
  panel(page === 'account' ? 'login' : page);
}

/** A form's checks before it is sent: a username's shape, a password's length. */
function checkFields(username, password) {
  if (username !== null && !USERNAME.test(username)) return t('err_username_format');
  if (password !== null && password.length < 10) return t('err_password_short');
  return null;
}

async function submit(e, run) {
  e.preventDefault();
  const form = e.target;
  const btn = form.querySelector('button[type="submit"]');
  btn.disabled = true;
  try { await run(); } catch (err) { toast(httpErrorText(err)); } finally { btn.disabled = false; }
}

function afterLogin() {
  const code = returnTo;
  returnTo = null;
  if (code && actions.enterRoom) { actions.enterRoom(code, null); return; }
  setUrl(null);
  show('lobby');
}

async function signUp(e) {
  await submit(e, async () => {
    const username = $('signup-username').value.trim();
    const password = $('signup-password').value;
    const bad = checkFields(username, password);
    if (bad) { toast(bad); return; }
    const res = await api('POST', '/api/accounts', { username, password });
    $('signup-password').value = '';
    pendingCodes = res.recovery_codes;
    setMe(res.account);
    const ol = $('codes-list');
    ol.replaceChildren();
    for (const c of pendingCodes) {
      const li = document.createElement('li');
      li.textContent = c;
      ol.appendChild(li);
    }
    panel('codes');
  });
}

async function logIn(e) {
  await submit(e, async () => {
    const username = $('login-username').value.trim();
    const password = $('login-password').value;
    if (!username || !password) { toast(t('err_bad_credentials')); return; }
    await api('POST', '/api/session', { username, password });
    $('login-password').value = '';
    await loadMe();
    toast(t('welcome_user', { u: ctx.me ? ctx.me.username : username }));
    afterLogin();
  });
}

async function recover(e) {
  await submit(e, async () => {
    const username = $('recover-username').value.trim();
    const code = $('recover-code').value.trim();
    const password = $('recover-password').value;
    const bad = checkFields(null, password);
    if (bad) { toast(bad); return; }
    await api('POST', '/api/accounts/recover', { username, code, new_password: password });
    $('recover-password').value = '';
    $('recover-code').value = '';
    await loadMe();
    toast(t('account_recovered'));
    afterLogin();
  });
}

async function changePassword(e) {
  await submit(e, async () => {
    const password = $('change-current').value;
    const next = $('change-new').value;
    const bad = checkFields(null, next);
    if (bad) { toast(bad); return; }
    await api('POST', '/api/me/password', { password, new_password: next });
    $('change-current').value = '';
    $('change-new').value = '';
    toast(t('password_changed'));
  });
}

async function logOut() {
  try { await api('DELETE', '/api/session'); } catch (err) { toast(httpErrorText(err)); return; }
  setMe(null);
  toast(t('logged_out'));
  setUrl(null);
  show('lobby');
}

/** Wires the account pages and the header's button, then asks who is logged in. */
export function initAccount() {
  $('account-btn').addEventListener('click', () => { location.hash = ctx.me ? '#/account' : '#/login'; });
  $('login-form').addEventListener('submit', logIn);
  $('signup-form').addEventListener('submit', signUp);
  $('recover-form').addEventListener('submit', recover);
  $('change-form').addEventListener('submit', changePassword);
  $('logout-btn').addEventListener('click', logOut);
  $('codes-copy').addEventListener('click', async () => {
    try { await navigator.clipboard.writeText((pendingCodes || []).join('\n')); $('codes-copy').textContent = t('codes_copied'); } catch (_) { /* copy by hand */ }
  });
  $('codes-saved').addEventListener('click', () => {
    pendingCodes = null;
    $('codes-list').replaceChildren();
    $('codes-copy').textContent = t('codes_copy');
    toast(t('welcome_user', { u: ctx.me ? ctx.me.username : '' }));
    afterLogin();
  });
  renderAccountButton();
  return loadMe({ always: false });
}

registerView('account');
