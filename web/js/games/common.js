// Shared pieces of the game pages: a picker that binds the server's legal
// moves to drawn pieces (one click plays the move, or opens a chooser when
// several legal moves match the piece), an action bar for the moves no piece
// stands for, the last move in words, and a description of moves and events
// that names ids from the catalog.
import { h, clear, pressable, words } from "../dom.js";

// A picker for one render. keyOf(move) names the piece a move belongs to
// (or null: an action-bar move). Pieces bind themselves with bind(el, key, label).
// groupBy(move) (optional) names a first step for long choosers: with more
// than GROUP_OVER moves in two or more groups, the chooser first lists the
// groups (buttons of class "choice-group"), then the moves of the one taken.
const GROUP_OVER = 6;

export function picker(root, ctx, describe, keyOf, groupBy = null) {
  const groups = new Map();
  const order = [];
  if (ctx.myTurn) {
    for (const m of ctx.legal) {
      const k = keyOf(m);
      const key = k === null || k === undefined ? null : String(k);
      if (!groups.has(key)) { groups.set(key, []); order.push(key); }
      groups.get(key).push(m);
    }
  }
  const bound = new Set();
  const slot = h("div", { class: "chooser-slot" });

  function choose(moves, title) {
    if (moves.length === 1) { ctx.onMove(moves[0]); return; }
    clear(slot);
    const close = () => clear(slot);
    const groups = new Map();
    if (groupBy && moves.length > GROUP_OVER) {
      for (const m of moves) {
        const g = groupBy(m) || "";
        if (!groups.has(g)) groups.set(g, []);
        groups.get(g).push(m);
      }
    }
    const entries = groups.size > 1
      ? [...groups].map(([g, ms]) => h("button", {
        type: "button", class: "choice-group", onclick: () => choose(ms, `${title}: ${g}`),
      }, `${g}… (${ms.length})`))
      : moves.map((m) => h("button", {
        type: "button", class: "choice", onclick: () => { close(); ctx.onMove(m); },
      }, describe(m)));
    const box = h("div", { class: "chooser", role: "group", "aria-label": `choose: ${title}` },
      h("p", { class: "chooser-title" }, title, h("span", { class: "muted" }, ` · ${moves.length} choices`)),
      h("div", { class: "choices" }, entries),
      h("button", { type: "button", class: "link cancel", onclick: close }, "Cancel"));
    slot.append(box);
    box.querySelector("button").focus({ preventScroll: true });
    box.scrollIntoView({ block: "nearest" });
  }

  return {
    slot,
    has: (key) => groups.has(String(key)),
    moves: (key) => groups.get(String(key)) || [],
    // Make `el` (SVG or HTML) play or choose the moves of `key`.
    bind(el, key, label) {
      const moves = groups.get(String(key));
      if (!moves || key === null) return el;
      bound.add(String(key));
      const text = moves.length > 1 ? `${label}: ${moves.length} choices` : `${label}: ${describe(moves[0])}`;
      pressable(el, text, () => choose(moves, label));
      el.classList.add("playable");
      return el;
    },
    // A text button for the moves of `key`.
    button(key, text, cls = "") {
      const moves = groups.get(String(key));
      if (!moves) return null;
      bound.add(String(key));
      return h("button", { type: "button", class: `act ${cls}`, onclick: () => choose(moves, text) },
        moves.length > 1 ? `${text}…` : text);
    },
    // Buttons for every move no piece was bound to: the player can always
    // reach every legal move from the drawn page.
    actions() {
      const left = order.filter((k) => !bound.has(k)).flatMap((k) => groups.get(k));
      if (!left.length) return null;
      return h("div", { class: "actions row", role: "group", "aria-label": "other moves" },
        left.map((m) => h("button", { type: "button", class: "act", onclick: () => ctx.onMove(m) }, describe(m))));
    },
  };
}

// "Last move: ..." from the last commit's events, for the page's top.
export function lastMove(ctx, describeEvent, keep = () => true) {
  const evs = (ctx.events || []).filter(keep);
  if (!evs.length) return null;
  const text = evs.map((e) => describeEvent(e, ctx.catalog, ctx)).filter(Boolean);
  if (!text.length) return null;
  return h("p", { class: "last-move", "aria-live": "polite" }, h("strong", {}, "Last move: "), text.join(" · "));
}

export function seatWord(ctx, seat) {
  if (seat === null || seat === undefined || seat < 0) return "";
  return ctx && ctx.seatName ? ctx.seatName(seat) : `Seat ${seat}`;
}

// Fields of a move or an event in words, ids named by `name(id)`.
export function fieldsText(obj, name, ctx, skip = ["type"]) {
  const val = (k, v) => {
    if (v === null || v === undefined || v === "" || (Array.isArray(v) && !v.length)) return null;
    if ((k === "seat" || k === "by" || k === "owner" || k === "holder" || k === "partner" || k === "to_seat") && typeof v === "number") return seatWord(ctx, v);
    if (Array.isArray(v)) return v.map((x) => (typeof x === "object" ? JSON.stringify(x) : name(x, k))).join(", ");
    if (typeof v === "object") return null;
    if (typeof v === "boolean") return v ? "yes" : "no";
    return name(v, k);
  };
  return Object.entries(obj)
    .filter(([k]) => !skip.includes(k))
    .map(([k, v]) => [k, val(k, v)])
    .filter(([, v]) => v !== null && v !== "")
    .map(([k, v]) => `${k.replace(/_/g, " ")} ${v}`)
    .join(", ");
}

export function describeBy(obj, name, ctx, skip) {
  const rest = fieldsText(obj, name, ctx, skip);
  return rest ? `${words(obj.type)}: ${rest}` : words(obj.type);
}

// A chip: a small labelled value (a resource, a count).
export function chip(label, value, cls = "") {
  return h("span", { class: `chip ${cls}` }, h("span", { class: "chip-label" }, label), " ", h("b", {}, String(value)));
}

export function svgText(x, y, text, attrs = {}) {
  return h("text", { x, y, ...attrs }, text);
}

// A stable colour per seat.
export const SEAT_COLOURS = ["#2e5cb8", "#b3261e", "#2f7d32", "#9a6700", "#6a3fb5", "#00796b"];
