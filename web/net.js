// HTTP API and the WebSocket connection (proto/README.md): JSON text frames, request ids,
// reconnection with backoff. The app decides what to send on (re)open.

export async function api(method, path, body) {
  const res = await fetch(path, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let data = null;
  try { data = await res.json(); } catch (_) { /* empty body */ }
  if (!res.ok) {
    const err = new Error((data && data.message) || res.statusText);
    err.code = data && data.code;
    err.status = res.status;
    throw err;
  }
  return data;
}

/**
 * A WebSocket that reconnects by itself from start() until closed with close().
 * handlers: onOpen(conn) after each (re)connection, onMessage(msg), onState(state) with
 * state 'connecting' | 'open' | 'reconnecting' | 'closed', onClose(code, reason).
 */
export class Connection {
  constructor(handlers) {
    this.handlers = handlers;
    this.nextReq = 1;
    this.ws = null;
    this.closed = false;
    this.attempt = 0;
    this.timer = null;
    this.pingTimer = null;
    this.onOnline = () => { if (!this.ws || this.ws.readyState > 1) this.reconnectNow(); };
    window.addEventListener('online', this.onOnline);
  }

  /** Opens the first connection. */
  start() {
    this.connect();
    return this;
  }

  url() {
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    return `${proto}//${location.host}/ws`;
  }

  connect() {
    if (this.closed) return;
    this.handlers.onState?.(this.attempt ? 'reconnecting' : 'connecting');
    let ws;
    try {
      ws = new WebSocket(this.url());
    } catch (_) {
      this.schedule();
      return;
    }
    this.ws = ws;
    ws.onopen = () => {
      this.attempt = 0;
      this.handlers.onState?.('open');
      this.handlers.onOpen?.(this);
      clearInterval(this.pingTimer);
      this.pingTimer = setInterval(() => this.send({ type: 'ping' }), 25000);
    };
    ws.onmessage = (e) => {
      let msg;
      try { msg = JSON.parse(e.data); } catch (_) { return; }
      this.handlers.onMessage?.(msg);
    };
    ws.onclose = (e) => {
      clearInterval(this.pingTimer);
      if (this.ws !== ws) return;
      this.ws = null;
      if (this.closed) return;
      const stop = this.handlers.onClose?.(e.code, e.reason);
      if (stop === false) { this.close(); return; }
      this.schedule();
    };
    ws.onerror = () => { /* onclose follows */ };
  }

  schedule() {
    if (this.closed) return;
    this.attempt += 1;
    this.handlers.onState?.('reconnecting');
    const delay = Math.min(5000, 250 * 2 ** Math.min(this.attempt - 1, 5)) + Math.random() * 200;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.connect(), delay);
  }

  reconnectNow() {
    clearTimeout(this.timer);
    if (this.ws) { try { this.ws.close(); } catch (_) { /* ignore */ } this.ws = null; }
    this.attempt = Math.max(this.attempt, 1);
    this.connect();
  }

  /** Sends a command with a fresh request id; returns the id (or null when offline). */
  send(msg) {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return null;
    const req = this.nextReq++;
    this.ws.send(JSON.stringify({ ...msg, req }));
    return req;
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
    clearInterval(this.pingTimer);
    window.removeEventListener('online', this.onOnline);
    if (this.ws) { try { this.ws.close(1000); } catch (_) { /* ignore */ } }
    this.ws = null;
    this.handlers.onState?.('closed');
  }
}
