// Replay with a scrubber: any version, play and pause, speed.
import { api } from "./api.js";
import { h, clear } from "./dom.js";
import { gameModule } from "./games/index.js";

export async function replayPage({ root }, matchId) {
  const first = await api.match(matchId);
  const mod = await gameModule(first.game);
  const catalog = await api.catalog(first.game).catch(() => null);
  const { commits } = await api.replay(matchId);
  let at = commits.length - 1;
  let playing = null;
  let speed = 4;

  const board = h("div", { class: "board-wrap", id: "board" });
  const label = h("span", { id: "replay-version", "aria-live": "polite" });
  const events = h("ul", { class: "log", id: "replay-events" });
  const scrub = h("input", {
    type: "range", min: "0", max: String(commits.length - 1), value: String(at),
    "aria-label": "version", id: "scrubber",
    oninput: () => { at = Number(scrub.value); draw(); },
  });
  const play = h("button", { type: "button", id: "play", onclick: () => (playing ? pause() : start()) }, "Play");
  const speedSel = h("select", { "aria-label": "speed", onchange: () => { speed = Number(speedSel.value); if (playing) { pause(); start(); } } },
    [1, 2, 4, 8, 16].map((s) => h("option", { value: String(s), selected: s === speed }, `${s}×`)));

  function seatName(s) {
    const p = first.seats.find((x) => x.seat === s);
    return p ? p.player : `seat ${s}`;
  }

  function draw() {
    const c = commits[at];
    label.textContent = `version ${c.version} of ${commits[commits.length - 1].version}`;
    scrub.value = String(at);
    clear(board);
    const ctx = { view: c.view, seat: first.your_seat, legal: [], awaiting: [], myTurn: false,
      players: first.seats, catalog, events: c.events, onMove: () => {}, seatName };
    try { mod.render(board, ctx); } catch (e) { board.append(h("p", { class: "error" }, e.message)); }
    clear(events).append(...c.events.map((e) => h("li", {}, mod.describeEvent(e, catalog, ctx))));
  }

  function start() {
    if (at >= commits.length - 1) at = 0;
    play.textContent = "Pause";
    playing = setInterval(() => {
      if (at >= commits.length - 1) { pause(); return; }
      at += 1;
      draw();
    }, 1000 / speed);
  }

  function pause() {
    clearInterval(playing);
    playing = null;
    play.textContent = "Play";
  }

  root.append(h("section", { class: "replay" },
    h("h2", {}, `Replay of `, h("code", {}, matchId)),
    h("div", { class: "row controls" },
      h("button", { type: "button", "aria-label": "first", onclick: () => { at = 0; draw(); } }, "⏮"),
      h("button", { type: "button", "aria-label": "back", onclick: () => { at = Math.max(0, at - 1); draw(); } }, "◀"),
      play,
      h("button", { type: "button", "aria-label": "forward", onclick: () => { at = Math.min(commits.length - 1, at + 1); draw(); } }, "▶"),
      speedSel),
    scrub, label, board, h("h3", {}, "Events of this commit"), events));
  draw();
  return () => pause();
}
