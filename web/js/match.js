// A match page: the game drawn by its module, the caller's legal moves to
// click, the last moves in words, clocks, and the result. Spectators (no
// seat) see the public view. Everything comes from the socket's commits.
import { api } from "./api.js";
import { h, clear } from "./dom.js";
import { gameModule } from "./games/index.js";

let pageSeq = 0;

export function clockText(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  const m = Math.floor(s / 60);
  return `${m}:${String(s % 60).padStart(2, "0")}`;
}

// How a finished match ended, in words. A match a service ended from outside
// (EndMatch: the outcome's reason is "adjudicated:<reason>") says who ended it.
export function endedText(reason) {
  const r = reason || "";
  if (!r.startsWith("adjudicated:")) return `ended by ${r.replace(/_/g, " ")}`;
  const why = r.slice("adjudicated:".length);
  if (why === "round_deadline") return "ended by the tournament: round deadline";
  return `ended by the server: ${why.replace(/_/g, " ")}`;
}

export async function matchPage({ root, socket, me }, matchId) {
  const first = await api.match(matchId);
  const mod = await gameModule(first.game);
  const catalog = await api.catalog(first.game).catch(() => null);
  const games = (await api.games()).games;
  const title = (games.find((g) => g.id === first.game) || { title: first.game }).title;
  const seat = first.your_seat;
  const state = {
    version: null, view: first.view, status: first.status, outcome: first.outcome,
    awaiting: first.awaiting, legal: [], turnVersion: null, log: [], events: [],
    deadlines: null, sending: false, error: "",
  };

  const head = h("div", { class: "match-head" });
  const board = h("div", { class: "board-wrap", id: "board" });
  const moves = h("div", { class: "moves", id: "moves" });
  const log = h("ol", { class: "log", id: "log", "aria-live": "polite", "aria-label": "last moves" });
  const notice = h("p", { class: "notice", role: "alert", id: "notice" });
  root.append(
    h("section", { class: "match", dataset: { game: first.game, match: matchId } },
      head, notice, board, moves,
      h("section", { class: "log-wrap" }, h("h3", {}, "Last moves"), log)),
  );

  const seatName = (s) => {
    const p = first.seats.find((x) => x.seat === s);
    if (s === seat) return "You";
    return p ? (p.bot ? `${p.player.replace(/^bot:/, "bot ")}` : p.player) : `seat ${s}`;
  };

  const sub = `match-${++pageSeq}`; // this page's match subscription on the socket

  async function submit(move) {
    if (state.sending || state.turnVersion === null) return;
    state.sending = true;
    state.error = "";
    draw();
    const at = state.turnVersion;
    try {
      await socket.move(sub, matchId, move, at, seat);
      // Our commit is on its way on the socket (unless it came first).
      if (state.turnVersion === at) state.legal = [];
    } catch (e) {
      if (state.turnVersion !== at) return; // a newer commit already answered
      state.error = `Move refused: ${e.message} (${e.reason || e.status})`;
      // Look again: the match may have moved on (a newer commit follows on the
      // socket), or the choices at this version still stand.
      try {
        const m = await api.match(matchId);
        if (m.version === state.version) {
          state.legal = m.legal_moves;
          state.awaiting = m.awaiting;
          state.turnVersion = m.version;
        } else {
          state.legal = [];
        }
      } catch { state.legal = []; }
    } finally {
      state.sending = false;
      draw();
    }
  }

  function drawHead() {
    clear(head).append(
      h("h2", {}, title),
      h("p", { class: "muted" }, "match ", h("code", { id: "match-id" }, matchId),
        ` · version `, h("span", { id: "version" }, String(state.version ?? first.version)),
        seat === null ? " · spectating" : ` · you are seat ${seat}`),
      h("ul", { class: "seats", "aria-label": "players" }, first.seats.map((p) => {
        const waiting = state.status === "active" && state.awaiting.includes(p.seat);
        const d = state.deadlines && state.deadlines[p.seat];
        return h("li", { class: `seat${waiting ? " to-move" : ""}${p.seat === seat ? " me" : ""}` },
          h("span", {}, `${p.seat}: ${seatName(p.seat)}`),
          waiting ? h("span", { class: "turn" }, " ● to move") : null,
          d ? h("span", { class: "clock", dataset: { deadline: d } }, "") : null);
      })),
    );
  }

  function drawMoves() {
    clear(moves);
    if (state.status === "finished") {
      const o = state.outcome || { ranks: [], scores: [], reason: "" };
      moves.append(h("section", { class: "outcome", id: "outcome" },
        h("h3", {}, "Game over"),
        h("ol", {}, first.seats.map((p) => h("li", {},
          `${seatName(p.seat)}: rank ${o.ranks[p.seat] ?? "?"}${o.scores.length ? `, score ${o.scores[p.seat]}` : ""}`))),
        o.reason ? h("p", { class: "muted" }, endedText(o.reason)) : null,
        h("p", {}, h("a", { href: `#/replay/${matchId}` }, "Replay this match"), " · ", h("a", { href: "#/" }, "Back to the lobby"))));
      return;
    }
    if (seat === null) return;
    if (!state.legal.length) {
      moves.append(h("p", { class: "muted", id: "waiting" },
        state.sending ? "Sending…" : `Waiting for ${state.awaiting.map(seatName).join(", ") || "the server"}…`));
      return;
    }
    const list = h("ul", { class: "move-list" }, state.legal.map((m, i) =>
      h("li", {}, h("button", {
        type: "button", class: "move", dataset: { index: String(i) },
        disabled: state.sending, onclick: () => submit(m),
      }, mod.describeMove(m, catalog, ctx())))));
    moves.append(h("details", { class: "all-moves", open: state.legal.length <= 12 },
      h("summary", {}, `Your move: ${state.legal.length} choice${state.legal.length === 1 ? "" : "s"}`), list));
  }

  function ctx() {
    return {
      view: state.view, seat, legal: state.legal, awaiting: state.awaiting,
      myTurn: seat !== null && state.legal.length > 0 && !state.sending,
      players: first.seats, catalog, events: state.events, onMove: submit, seatName,
    };
  }

  function draw() {
    drawHead();
    clear(board);
    try {
      mod.render(board, ctx());
    } catch (e) {
      console.error(e);
      board.append(h("p", { class: "error" }, `This view could not be drawn: ${e.message}`));
    }
    drawMoves();
    notice.textContent = state.error;
    tick();
  }

  // The server's deadlines, counted down on the server's time (the skew is
  // measured at each turn), so a reconnect or a replica's answer agree.
  let skew = first.server_time ? Date.parse(first.server_time) - Date.now() : 0;
  function deadlines(clocks) {
    const d = {};
    for (const c of clocks || []) if (c.deadline) d[c.seat] = c.deadline;
    return Object.keys(d).length ? d : null;
  }
  state.deadlines = deadlines(first.clocks);
  function tick() {
    for (const el of head.querySelectorAll(".clock")) {
      const left = Date.parse(el.dataset.deadline) - (Date.now() + skew);
      el.textContent = ` ⏱ ${clockText(left)}`;
      el.classList.toggle("low", left < 10_000);
      el.setAttribute("aria-label", `time left ${clockText(left)}`);
    }
  }
  const timer = setInterval(tick, 250);

  socket.watchMatch(sub, matchId, null, (f) => {
    if (f.type === "commit") {
      state.version = f.version;
      state.view = f.view;
      state.status = f.status;
      state.outcome = f.outcome;
      state.events = f.events;
      state.deadlines = deadlines(f.clocks);
      if (f.turn) {
        state.awaiting = f.turn.awaiting;
        state.legal = f.turn.legal_moves;
        state.turnVersion = f.turn.version;
        if (f.turn.server_time) skew = Date.parse(f.turn.server_time) - Date.now();
      } else {
        state.legal = [];
        state.turnVersion = null;
      }
      if (f.version > 0) {
        const c = ctx();
        const who = f.seat === null || f.seat === undefined ? "" : `${seatName(f.seat)}${f.timeout ? " (out of time: played for them)" : ""}${f.forfeit ? " (forfeited)" : ""}: `;
        const text = f.events.map((e) => mod.describeEvent(e, catalog, c)).filter(Boolean);
        const said = f.ended_by_service ? endedText(f.outcome && f.outcome.reason) : text.join("; ") || "moved";
        // a game's own words may already name the seat
        const prefix = who && !said.startsWith(seatName(f.seat)) ? who : "";
        log.prepend(h("li", { dataset: { version: String(f.version) } }, `${prefix}${said}`));
        while (log.children.length > 12) log.lastChild.remove();
      }
      draw();
      board.classList.remove("flash");
      void board.offsetWidth; // restart the animation
      board.classList.add("flash");
    } else if (f.type === "error") {
      state.error = `${f.message} (${f.reason})`;
      draw();
    }
  });
  draw();
  return () => { clearInterval(timer); socket.unwatch(sub); };
}
