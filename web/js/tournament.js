// A tournament: standings with tiebreaks, rounds and their tables (each
// match to spectate or replay), registration; live from its event stream.
import { api } from "./api.js";
import { h, clear } from "./dom.js";

let seq = 0;

const name = (s) => String(s || "").replace(/^(FORMAT_|STATUS_)/, "").replace(/_/g, " ").toLowerCase();

export async function tournamentPage({ root, socket, me }, id) {
  const box = h("section", { class: "tournament", dataset: { tournament: id } });
  const notice = h("p", { class: "notice", role: "alert" });
  root.append(box);

  async function draw() {
    const t = await api.tournament(id);
    const mine = (t.entrants || []).find((e) => e.player === me.player_id && !e.withdrawn);
    const act = async (fn) => {
      notice.textContent = "";
      try { await fn(id); await draw(); } catch (e) { notice.textContent = `${e.message} (${e.reason})`; }
    };
    const standings = t.standings || [];
    const keys = [...new Set(standings.flatMap((s) => Object.keys(s.tiebreaks || {})))];
    clear(box).append(
      h("h2", {}, t.name || id),
      h("p", { class: "muted" }, `${t.game} · ${name(t.format)} · ${name(t.status)}`,
        t.total_rounds ? ` · round ${t.round} of ${t.total_rounds}` : ""),
      notice,
      name(t.status) === "registering"
        ? h("p", {}, mine
          ? h("button", { type: "button", onclick: () => act(api.withdraw) }, "Withdraw")
          : h("button", { type: "button", class: "primary", onclick: () => act(api.register) }, "Register"),
        ` ${(t.entrants || []).filter((e) => !e.withdrawn).length} registered`)
        : null,
      h("h3", {}, "Standings"),
      h("div", { class: "scroll-x" }, h("table", { class: "standings" },
        h("thead", {}, h("tr", {}, h("th", {}, "#"), h("th", {}, "player"), h("th", {}, "points"),
          h("th", {}, "played"), keys.map((k) => h("th", {}, k.replace(/_/g, " "))))),
        h("tbody", {}, standings.map((s) => h("tr", { class: s.player === me.player_id ? "me" : "" },
          h("td", {}, s.rank), h("td", {}, s.player), h("td", {}, s.points), h("td", {}, s.played),
          keys.map((k) => h("td", {}, (s.tiebreaks || {})[k] ?? ""))))))),
      ...(t.rounds || []).slice().reverse().map((r) => h("section", {},
        h("h3", {}, `Round ${r.round}${r.stage ? ` (${r.stage})` : ""}${r.completed ? " · complete" : ""}`),
        h("ul", { class: "tables" }, (r.tables || []).map((tb) => h("li", {},
          `Table ${tb.table}: ${tb.players.join(" vs ")} `,
          ...(tb.match_ids || []).map((m) => h("a", { href: tb.finished ? `#/replay/${m}` : `#/match/${m}` },
            tb.finished ? "replay " : "watch ")),
          tb.finished && tb.result ? h("span", { class: "muted" }, `ranks ${tb.result.ranks.join("/")}`) : null))),
        r.byes && r.byes.length ? h("p", { class: "muted" }, `byes: ${r.byes.join(", ")}`) : null)),
    );
  }

  await draw();
  const sub = `tournament-${++seq}`;
  let pending = null;
  socket.watchTournament(sub, id, () => {
    clearTimeout(pending); // a burst of events (a round starting) redraws once
    pending = setTimeout(() => draw().catch(() => {}), 150);
  });
  return () => { clearTimeout(pending); socket.unwatch(sub); };
}
