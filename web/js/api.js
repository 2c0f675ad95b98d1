// The gateway's HTTP API and its one WebSocket, with resume after a disconnect.

const TOKEN_KEY = "tabletop.identity";

export class ApiError extends Error {
  constructor(httpStatus, body) {
    const e = (body && body.error) || {};
    super(e.message || `HTTP ${httpStatus}`);
    this.httpStatus = httpStatus;
    this.status = e.status || "UNKNOWN";
    this.reason = e.reason || "";
    this.metadata = e.metadata || {};
  }
}

export const identity = {
  get() {
    try { return JSON.parse(localStorage.getItem(TOKEN_KEY) || "null"); } catch { return null; }
  },
  set(value) { localStorage.setItem(TOKEN_KEY, JSON.stringify(value)); },
  clear() { localStorage.removeItem(TOKEN_KEY); },
};

const REFRESH = "/api/v1/auth/refresh";

const expired = (e) => e && e.status === "UNAUTHENTICATED" && e.reason === "token_expired";

// A call of the gateway's HTTP API. A call refused for an expired token did
// nothing: it is made once more after the token is renewed.
async function call(method, path, body, renewed = false) {
  const headers = { "content-type": "application/json" };
  const me = identity.get();
  if (me && me.token) headers.authorization = `Bearer ${me.token}`;
  const r = await fetch(path, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
  });
  let data = null;
  try { data = await r.json(); } catch { data = null; }
  if (!r.ok) {
    const error = new ApiError(r.status, data);
    if (renewed || path === REFRESH || !expired(error)) throw error;
    await renewToken();
    return call(method, path, body, true);
  }
  return data;
}

// The token renewed for the same player (valid, or expired within the
// gateway's grace period), one renewal at a time however many ask for it.
let renewing = null;
export function renewToken() {
  if (!renewing) {
    renewing = call("POST", REFRESH).then((fresh) => { identity.set(fresh); return fresh; })
      .finally(() => { renewing = null; });
  }
  return renewing;
}

export const api = {
  async signIn(name = "") {
    const me = await call("POST", "/api/v1/auth/guest", { name });
    identity.set(me);
    return me;
  },
  // A saved identity that still works, renewed when it nears expiry; else a new guest.
  async ensureSignedIn() {
    const me = identity.get();
    if (me && me.token) {
      const left = Date.parse(me.expires_at || "") - Date.now();
      if (!(left < 24 * 3600 * 1000)) return me;
      try {
        return await renewToken();
      } catch { /* renewal refused or not offered: sign in anew */ }
    }
    return this.signIn("");
  },
  games: () => call("GET", "/api/v1/games"),
  catalog: (game) => call("GET", `/api/v1/games/${encodeURIComponent(game)}/catalog`),
  matches: (status = "") => call("GET", `/api/v1/matches${status ? `?status=${status}` : ""}`),
  match: (id) => call("GET", `/api/v1/matches/${encodeURIComponent(id)}`),
  replay: (id) => call("GET", `/api/v1/matches/${encodeURIComponent(id)}/replay`),
  move: (id, move, expectedVersion, seat, key) =>
    call("POST", `/api/v1/matches/${encodeURIComponent(id)}/moves`, {
      move,
      expected_version: expectedVersion,
      seat,
      idempotency_key: key || (crypto.randomUUID ? crypto.randomUUID() : String(Math.random()).slice(2)),
    }),
  // botLevel: "random", "greedy", "search" or "" (the matchmaker's setting).
  enqueue: (game, playerCounts, allowBots, options, timeControl = "", botLevel = "") =>
    call("POST", "/api/v1/tickets", {
      game, player_counts: playerCounts, allow_bots: allowBots, options, time_control: timeControl,
      bot_level: botLevel,
    }),
  tournaments: (status = "") => call("GET", `/api/v1/tournaments${status ? `?status=${status}` : ""}`),
  tournament: (id) => call("GET", `/api/v1/tournaments/${encodeURIComponent(id)}`),
  register: (id) => call("POST", `/api/v1/tournaments/${encodeURIComponent(id)}/register`),
  withdraw: (id) => call("POST", `/api/v1/tournaments/${encodeURIComponent(id)}/withdraw`),
  cancelTicket: (id) => call("DELETE", `/api/v1/tickets/${encodeURIComponent(id)}`),
};

// One WebSocket for the page. Subscriptions survive reconnects: a match
// stream resumes after the last version it delivered, so the page sees every
// commit exactly once whatever happens to the connection. The socket is
// signed in with the page's token; it is renewed before it expires (and when
// the gateway says it has), and the socket connects again with the fresh one,
// its subscriptions resuming where they were.
export class LiveSocket {
  constructor(onNet = () => {}) {
    this.onNet = onNet;
    this.subs = new Map(); // sub -> {msg, onFrame, last}
    this.moving = new Map(); // ref -> {resolve, reject, retry}: moves sent on the socket
    this.refs = 0;
    this.ws = null;
    this.closed = false;
    this.backoff = 250;
    this.stats = { connects: 0, duplicates: 0, gaps: 0, renewals: 0 };
    this.renewal = null; // the timer that renews the token before it expires
    this.connect();
  }

  // Renew the token, then connect again with it (at once, not after a backoff).
  // False when it cannot be renewed (the page then shows the refusal).
  async renew() {
    try {
      await renewToken();
    } catch {
      return false;
    }
    this.stats.renewals += 1;
    this.backoff = 0;
    if (this.ws) this.ws.close();
    return true;
  }

  // On each sign-in of the socket: renew five minutes before the token
  // expires, or half-way through what is left when that is under ten minutes
  // (a page's clock that is a little off still renews in time).
  scheduleRenewal() {
    clearTimeout(this.renewal);
    const me = identity.get();
    const left = Date.parse((me && me.expires_at) || "") - Date.now();
    if (!(left > 0)) return; // unknown or past: the gateway will say so
    const wait = Math.max(0, left - Math.min(5 * 60 * 1000, left / 2));
    this.renewal = setTimeout(() => this.renew(), Math.min(wait, 2 ** 31 - 1));
  }

  connect() {
    if (this.closed) return;
    const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/api/v1/ws`;
    const ws = new WebSocket(url);
    this.ws = ws;
    ws.onopen = () => {
      const me = identity.get();
      ws.send(JSON.stringify({ op: "auth", token: me ? me.token : "" }));
    };
    ws.onmessage = (ev) => this.frame(JSON.parse(ev.data));
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.ready = false;
      clearTimeout(this.renewal);
      // Moves on their way may have been played: each is sent again by HTTP
      // with its idempotency key, which answers it once either way.
      for (const [ref, m] of this.moving) { this.moving.delete(ref); m.retry(); }
      if (this.closed) return;
      this.onNet("reconnecting");
      setTimeout(() => this.connect(), this.backoff);
      this.backoff = Math.min(Math.max(this.backoff * 2, 250), 5000);
    };
  }

  frame(f) {
    if (f.type === "ready") {
      this.ready = true;
      this.stats.connects += 1;
      this.backoff = 250;
      this.onNet("online");
      this.scheduleRenewal();
      for (const [sub, s] of this.subs) this.sendSub(sub, s);
      return;
    }
    if (f.type === "error" && expired(f) && !f.ref) {
      // the socket's sign-in, or a subscription's stream, outlived the token:
      // renewed, the socket connects again and every subscription resumes
      this.renew().then((ok) => { if (!ok) this.deliver(f); });
      return;
    }
    if (f.type === "pong") return;
    if (f.ref && this.moving.has(f.ref)) {
      const m = this.moving.get(f.ref);
      this.moving.delete(f.ref);
      if (f.type === "error") {
        // the stream broke or was resuming: the move again, by HTTP
        if (f.status === "UNAVAILABLE") m.retry();
        else m.reject(new ApiError(0, { error: f }));
      } else m.resolve(f);
      if (f.type !== "commit") return; // a commit is the page's too
    }
    this.deliver(f);
  }

  deliver(f) {
    const s = f.sub ? this.subs.get(f.sub) : null;
    if (f.type === "error" && !s) { this.onNet("error", f); return; }
    if (!s) return;
    if (f.type === "commit") {
      if (s.last !== null && f.version <= s.last) { this.stats.duplicates += 1; return; }
      if (s.last !== null && f.version !== s.last + 1) this.stats.gaps += 1;
      s.last = f.version;
    }
    if (f.type === "end") this.subs.delete(f.sub);
    s.onFrame(f);
  }

  sendSub(sub, s) {
    const msg = { ...s.msg, sub };
    if (s.last !== null && s.last !== undefined) msg.after_version = s.last;
    this.ws.send(JSON.stringify(msg));
  }

  watchMatch(sub, matchId, afterVersion, onFrame) {
    const s = { msg: { op: "watch", match_id: matchId }, onFrame, last: afterVersion ?? null };
    this.subs.set(sub, s);
    if (this.ready) this.sendSub(sub, s);
  }

  watchTicket(sub, ticketId, onFrame) {
    const s = { msg: { op: "watch_ticket", ticket_id: ticketId }, onFrame, last: null };
    this.subs.set(sub, s);
    if (this.ready) this.sendSub(sub, s);
  }

  watchTournament(sub, tournamentId, onFrame) {
    const s = { msg: { op: "watch_tournament", tournament_id: tournamentId }, onFrame, last: null };
    this.subs.set(sub, s);
    if (this.ready) this.sendSub(sub, s);
  }

  // A move on the match subscription ``sub``: over the socket when it is up
  // (the gateway's stream to the match answers it), else by HTTP. Resolves
  // once the move is played, rejects with an ApiError when it is refused.
  move(sub, matchId, move, expectedVersion, seat) {
    const key = crypto.randomUUID ? crypto.randomUUID() : String(Math.random()).slice(2);
    const http = () => api.move(matchId, move, expectedVersion, seat, key);
    if (!this.ready || !this.subs.has(sub)) return http();
    return new Promise((resolve, reject) => {
      const ref = `mv${++this.refs}`;
      const retry = () => http().then(resolve, reject);
      this.moving.set(ref, { resolve, reject, retry });
      this.ws.send(JSON.stringify({
        op: "move", sub, ref, move, expected_version: expectedVersion, seat, idempotency_key: key,
      }));
    });
  }

  unwatch(sub) {
    if (this.subs.delete(sub) && this.ready) this.ws.send(JSON.stringify({ op: "unwatch", sub }));
  }

  // For tests and the network indicator: drop the connection as a network would.
  drop() { if (this.ws) this.ws.close(); }

  close() { this.closed = true; clearTimeout(this.renewal); if (this.ws) this.ws.close(); }
}
