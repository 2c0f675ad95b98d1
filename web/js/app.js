// The browser client: a lobby, a page per match (play or spectate) and replays.
// Routes: #/ (lobby), #/match/<id>, #/replay/<id>, #/tournament/<id>.
import { api, LiveSocket } from "./api.js";
import { h, clear } from "./dom.js";
import { lobbyPage } from "./lobby.js";
import { matchPage } from "./match.js";
import { replayPage } from "./replay.js";
import { tournamentPage } from "./tournament.js";

const root = document.getElementById("app");
const net = document.getElementById("net");
const who = document.getElementById("who");

const NET_TEXT = { online: "", reconnecting: "Connection lost: reconnecting…", error: "" };

function showNet(state) {
  net.textContent = NET_TEXT[state] ?? "";
  net.dataset.state = state;
}

const socket = new LiveSocket(showNet);
window.__tabletop = { socket }; // for tests: frames, reconnects, duplicates and gaps

let leave = null; // the current page's cleanup

async function route() {
  if (leave) { leave(); leave = null; }
  clear(root);
  const me = await api.ensureSignedIn();
  who.textContent = `signed in as ${me.player_id}`;
  const hash = location.hash.replace(/^#\/?/, "");
  const [page, id] = hash.split("/");
  const ctx = { root, socket, me, go: (to) => { location.hash = to; } };
  try {
    if (page === "match" && id) leave = await matchPage(ctx, decodeURIComponent(id));
    else if (page === "replay" && id) leave = await replayPage(ctx, decodeURIComponent(id));
    else if (page === "tournament" && id) leave = await tournamentPage(ctx, decodeURIComponent(id));
    else leave = await lobbyPage(ctx);
  } catch (e) {
    root.append(h("p", { class: "error", role: "alert" }, `Could not open the page: ${e.message}`));
  }
  root.focus({ preventScroll: true });
}

window.addEventListener("hashchange", route);
route();
