// The lobby: pick a game and a player count, play against bots (of a chosen
// difficulty) or queue,
// resume one of my matches, spectate or replay any match by id.
import { api, identity } from "./api.js";
import { h, clear } from "./dom.js";

let ticketSeq = 0;

// The bot levels matchmaking knows (docs/bots.md), weakest first; "" = the server's.
const LEVELS = [["", "server's default bots"], ["random", "easy bots (random)"],
  ["greedy", "medium bots (greedy)"], ["search", "hard bots (search)"]];

export async function lobbyPage({ root, socket, me, go }) {
  const { games } = await api.games();
  const status = h("p", { class: "status", role: "status", "aria-live": "polite", id: "queue-status" });
  let watching = null;

  function queue(game, players, bots, clock, level = "") {
    return async () => {
      const against = bots && level ? ` (${LEVELS.find(([v]) => v === level)[1]})` : "";
      status.textContent = `Looking for a ${players}-player ${game.title} match${against}…`;
      let ticket;
      try {
        ticket = await api.enqueue(game.id, [players], bots, undefined, clock, bots ? level : "");
      } catch (e) {
        status.textContent = `Matchmaking refused: ${e.message} (${e.reason})`;
        return;
      }
      const sub = `ticket-${++ticketSeq}`;
      watching = { sub, ticket: ticket.ticket_id };
      const cancel = h("button", {
        type: "button",
        onclick: async () => { await api.cancelTicket(ticket.ticket_id).catch(() => {}); },
      }, "Cancel");
      socket.watchTicket(sub, ticket.ticket_id, (f) => {
        if (f.type === "ticket" && f.state === "searching" && f.searching) {
          clear(status).append(
            `Searching: ${Math.round(f.searching.waited_seconds)} s waited, rating window ±${f.searching.rating_window.toFixed(1)} `,
            cancel,
          );
        } else if (f.type === "ticket" && f.state === "matched") {
          watching = null;
          go(`/match/${f.matched.match_id}`);
        } else if (f.type === "ticket") {
          watching = null;
          status.textContent = `The ticket ended without a match (${f.reason || f.state}).`;
        } else if (f.type === "error") {
          status.textContent = `Matchmaking: ${f.message} (${f.reason})`;
        }
      });
    };
  }

  const cards = games.map((g) => {
    const counts = [];
    for (let n = g.min_players; n <= g.max_players; n++) counts.push(n);
    const select = h("select", { "aria-label": `players for ${g.title}`, id: `players-${g.id}` },
      counts.map((n) => h("option", { value: String(n) }, `${n} players`)));
    const count = () => Number(select.value);
    const clock = h("select", { "aria-label": `turn clock for ${g.title}`, id: `clock-${g.id}` },
      [["", "server's default clock"], ["default", "the game's clock"], ["30s", "30 s a move"],
        ["2m", "2 min a move"], ["5m+3s", "5 min + 3 s a move"], ["none", "no clock"]]
        .map(([v, t]) => h("option", { value: v }, t)));
    const level = h("select", { "aria-label": `bot difficulty for ${g.title}`, id: `level-${g.id}` },
      LEVELS.map(([v, t]) => h("option", { value: v }, t)));
    return h("li", { class: "game-card", dataset: { game: g.id } },
      h("h3", {}, g.title),
      h("p", { class: "muted" }, `${g.min_players === g.max_players ? g.min_players : `${g.min_players}–${g.max_players}`} players · rules ${g.rules_version}`),
      h("label", {}, "Players ", select),
      h("label", {}, "Clock ", clock),
      h("div", { class: "row" },
        h("label", {}, "Bots ", level),
        h("button", { type: "button", class: "primary", onclick: () => queue(g, count(), true, clock.value, level.value)() }, "Play against bots"),
        h("button", { type: "button", onclick: () => queue(g, count(), false, clock.value)() }, "Find players"),
      ),
    );
  });

  const mine = h("ul", { class: "matches", id: "my-matches" }, h("li", { class: "muted" }, "Loading…"));
  api.matches().then(({ matches }) => {
    clear(mine);
    if (!matches.length) mine.append(h("li", { class: "muted" }, "No matches yet."));
    for (const m of matches.slice(0, 20)) {
      const title = (games.find((g) => g.id === m.game) || { title: m.game }).title;
      mine.append(h("li", {},
        h("span", { class: `badge ${m.status}` }, m.status),
        ` ${title} `,
        h("code", {}, m.match_id), " ",
        m.status === "active"
          ? h("a", { href: `#/match/${m.match_id}` }, "Resume")
          : h("a", { href: `#/replay/${m.match_id}` }, "Replay"),
      ));
    }
  }).catch((e) => { clear(mine).append(h("li", { class: "error" }, e.message)); });

  const tours = h("ul", { class: "matches", id: "tournaments" }, h("li", { class: "muted" }, "Loading…"));
  api.tournaments().then(({ tournaments }) => {
    clear(tours);
    if (!tournaments.length) tours.append(h("li", { class: "muted" }, "No tournaments right now."));
    for (const t of tournaments.slice(0, 20)) {
      tours.append(h("li", {},
        h("span", { class: "badge" }, (t.status || "").replace("STATUS_", "").toLowerCase()), " ",
        h("a", { href: `#/tournament/${t.tournament_id}` }, t.name || t.tournament_id),
        ` · ${(games.find((g) => g.id === t.game) || { title: t.game }).title}`));
    }
  }).catch((e) => { clear(tours).append(h("li", { class: "muted" }, `Tournaments unavailable (${e.reason || e.message})`)); });

  const matchId = h("input", { id: "open-id", placeholder: "match id", "aria-label": "match id", autocomplete: "off" });
  const open = (where) => (ev) => { ev.preventDefault(); if (matchId.value.trim()) go(`/${where}/${matchId.value.trim()}`); };

  root.append(
    h("section", { "aria-labelledby": "games-h" },
      h("h2", { id: "games-h" }, "Play"),
      status,
      h("ul", { class: "games" }, cards),
    ),
    h("section", { "aria-labelledby": "mine-h" }, h("h2", { id: "mine-h" }, "My matches"), mine),
    h("section", { "aria-labelledby": "tours-h" }, h("h2", { id: "tours-h" }, "Tournaments"), tours),
    h("section", { "aria-labelledby": "open-h" },
      h("h2", { id: "open-h" }, "Spectate or replay"),
      h("form", { class: "row", onsubmit: open("match") }, matchId,
        h("button", { type: "submit" }, "Spectate"),
        h("button", { type: "button", onclick: open("replay") }, "Replay")),
    ),
    h("section", {},
      h("button", {
        type: "button", class: "link",
        onclick: async () => { identity.clear(); location.reload(); },
      }, `Not ${me.player_id}? Start as a new guest`)),
  );
  return () => { if (watching) socket.unwatch(watching.sub); };
}
