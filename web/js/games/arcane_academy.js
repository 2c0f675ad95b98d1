// Arcane Academy. Each player's slate: a 4x3 grid of spaces with their tile
// stacks (the top tile's actions, its connectors as placed, its rotation,
// the stack's height, exhaustion), Will and Shards, completed Spells and
// Items; the market of tiles, the public Assignments, your hand and the cast
// in progress. Click a space to cast it (or to place the tile you hold: a
// chooser lists its rotations), a market tile to take it, an Assignment to
// complete it, an Item to use it.
import { h } from "../dom.js";
import { picker, lastMove, seatWord, describeBy, chip, SEAT_COLOURS } from "./common.js";

const SIZE = 100;

function design(card) { return String(card).slice(0, 3); }

function cardInfo(catalog, card) {
  return (catalog && catalog.cards && catalog.cards[design(card)]) || null;
}

function cardName(catalog, card) {
  const c = cardInfo(catalog, card);
  return c ? c.name : card;
}

function comp(catalog, id) {
  return (catalog && catalog.components && catalog.components[id]) || null;
}

function compText(catalog, id) {
  const c = comp(catalog, id);
  return c ? c.actions : id;
}

function connectorsAt(catalog, tile, rotation) {
  const c = comp(catalog, tile);
  return c ? c.connectors[rotation % 4] : "";
}

const ACTION_WORDS = { shard: "Shard", will: "Will", add_tile: "Add Tile", use_item: "Use Item", complete: "Complete Assignment" };

export function describeMove(m, catalog, ctx) {
  const view = ctx && ctx.view;
  switch (m.type) {
    case "cast": return `Cast the space (${m.x + 1}, ${m.y + 1})`;
    case "rest": return m.discard ? `Rest, discarding ${cardName(catalog, m.discard)} to draw` : "Rest";
    case "collect_shards": return `Collect Shards (action ${m.part + 1})`;
    case "gain_will": return `Gain Will (action ${m.part + 1})`;
    case "take_tile": {
      const tile = view && view.market ? view.market[m.slot] : null;
      return `Take ${tile ? `${tile} (${compText(catalog, tile)})` : `market tile ${m.slot + 1}`}`;
    }
    case "use_item": return `Use ${cardName(catalog, m.item)}`;
    case "complete_assignment": {
      const c = cardInfo(catalog, m.card);
      return `Complete ${cardName(catalog, m.card)}${c ? ` (${c.cost} ${c.kind === "spell" ? "Will" : "Shards"}, ${c.pp} PP)` : ""}`;
    }
    case "skip_part": return `Skip action ${m.part + 1}`;
    case "remove_token": return `Remove the exhaustion token of (${m.x + 1}, ${m.y + 1})`;
    case "decline_effect": return "Decline the effect";
    case "resolve_linked": return `Resolve the linked tile at (${m.x + 1}, ${m.y + 1})`;
    case "finish_cast": return "Finish the cast";
    case "place_tile": return `Place ${m.tile} at (${m.x + 1}, ${m.y + 1}), turned ${m.rotation * 90}° (connectors ${connectorsAt(catalog, m.tile, m.rotation) || "none"})`;
    default: return describeBy(m, (v) => v, ctx);
  }
}

export function describeEvent(e, catalog, ctx) {
  const who = (s) => seatWord(ctx, s);
  switch (e.type) {
    case "turn_started": return `Round ${e.round}: ${who(e.seat)}${e.kind !== "normal" ? ` (${e.kind} turn)` : ""}`;
    case "rested": return `${who(e.seat)} rested`;
    case "card_discarded": return e.card ? `${who(e.seat)} discarded ${cardName(catalog, e.card)}` : "";
    case "card_drawn": return e.card ? `${who(e.seat)} drew ${cardName(catalog, e.card)}` : `${who(e.seat)} drew a card`;
    case "tile_activated": return `${who(e.seat)} cast ${compText(catalog, e.component)} at (${e.x + 1}, ${e.y + 1})${e.linked.length ? ` with ${e.linked.length} linked` : ""}`;
    case "linked_tile_started": return `linked: ${compText(catalog, e.component)}`;
    case "part_performed": return `${ACTION_WORDS[e.action] || e.action}`;
    case "will_gained": return `${who(e.seat)} gained ${e.amount} Will${e.lost ? ` (${e.lost} lost over the cap)` : ""}`;
    case "shards_collected": return `${who(e.seat)} collected ${e.amount} Shard${e.amount === 1 ? "" : "s"}`;
    case "resources_spent": return `${who(e.seat)} spent ${[e.will ? `${e.will} Will` : "", e.shards ? `${e.shards} Shards` : ""].filter(Boolean).join(" and ")}`;
    case "tile_taken": return `${who(e.seat)} took ${e.tile} (${compText(catalog, e.tile)})`;
    case "tile_placed": return `${who(e.seat)} placed ${e.tile} at (${e.x + 1}, ${e.y + 1}), turned ${e.rotation * 90}°`;
    case "assignment_completed": return `${who(e.seat)} completed ${cardName(catalog, e.card)}`;
    case "item_used": return `${who(e.seat)} used ${cardName(catalog, e.item)}`;
    case "card_revealed": return e.card ? `${cardName(catalog, e.card)} revealed` : "";
    case "tile_drawn": return e.tile ? `${e.tile} came to the market` : "";
    case "part_skipped": case "tile_resolved": case "cast_finished": case "bag_shuffled": case "deck_shuffled": case "effect_ended": return "";
    case "pencils_down": return `Pencils down: ${who(e.seat)}`;
    default: return describeBy(e, (v) => (cardInfo(catalog, v) ? cardName(catalog, v) : v), ctx);
  }
}

function keyOf(m) {
  switch (m.type) {
    case "cast": case "remove_token": case "resolve_linked": case "place_tile": return `space:${m.x}:${m.y}`;
    case "take_tile": return `market:${m.slot}`;
    case "complete_assignment": return `card:${m.card}`;
    case "use_item": return `item:${m.item}`;
    case "rest": return "rest";
    default: return null;
  }
}

function wrapText(text) {
  // "Complete Assignment + Add Tile" -> lines of a few words
  const out = [];
  for (const chunk of text.split(/\s*([+/])\s*/)) {
    if (chunk === "+" || chunk === "/") { out[out.length - 1] += ` ${chunk}`; continue; }
    const w = chunk.replace("Complete Assignment", "Complete").replace("Add Tile", "Add Tile");
    out.push(w);
  }
  return out;
}

const EDGE = { N: [SIZE / 2, 4, 28, 8], S: [SIZE / 2, SIZE - 4, 28, 8], E: [SIZE - 4, SIZE / 2, 8, 28], W: [4, SIZE / 2, 8, 28] };

function spaceSvg(catalog, sp, highlight) {
  const x0 = sp.x * SIZE;
  const y0 = sp.y * SIZE;
  const top = sp.stack.length ? sp.stack[sp.stack.length - 1] : null;
  const rot = sp.rotations.length ? sp.rotations[sp.rotations.length - 1] : 0;
  const c = top ? comp(catalog, top) : null;
  const corner = c && c.kind === "corner";
  const g = h("g", { class: `space${top ? "" : " vacant"}${sp.exhausted ? " exhausted" : ""}${corner ? " corner" : ""}${highlight ? " last" : ""}`, transform: `translate(${x0},${y0})`, dataset: { x: String(sp.x), y: String(sp.y) } },
    h("rect", { x: 3, y: 3, width: SIZE - 6, height: SIZE - 6, rx: 10 }));
  if (top) {
    for (const e of sp.connectors ? sp.connectors.split(",") : []) {
      const [cx, cy, w, hh] = EDGE[e];
      g.append(h("rect", { class: "connector", x: cx - w / 2, y: cy - hh / 2, width: w, height: hh, rx: 3 }));
    }
    const lines = wrapText(compText(catalog, top));
    const y = SIZE / 2 - ((lines.length - 1) * 13) / 2 + 4;
    lines.forEach((line, i) => g.append(h("text", { x: SIZE / 2, y: y + i * 13, "text-anchor": "middle", class: "actions-text" }, line)));
    g.append(h("text", { x: 12, y: 20, class: "tile-id" }, top));
    if (!corner && rot) g.append(h("text", { x: SIZE - 12, y: 20, "text-anchor": "end", class: "tile-rot" }, `${rot * 90}°`));
    if (sp.stack.length > 1) g.append(h("text", { x: SIZE - 12, y: SIZE - 12, "text-anchor": "end", class: "stack-h" }, `×${sp.stack.length}`));
    if (sp.exhausted) g.append(h("circle", { class: "token", cx: 18, cy: SIZE - 18, r: 9 }), h("text", { x: 18, y: SIZE - 14, "text-anchor": "middle", class: "token-x" }, "✕"));
  } else {
    g.append(h("text", { x: SIZE / 2, y: SIZE / 2 + 4, "text-anchor": "middle", class: "vacant-text" }, "empty"));
  }
  const label = top
    ? `space ${sp.x + 1}, ${sp.y + 1}: ${compText(catalog, top)}, connectors ${sp.connectors || "none"}${sp.stack.length > 1 ? `, ${sp.stack.length} tiles` : ""}${sp.exhausted ? ", exhausted" : ""}`
    : `space ${sp.x + 1}, ${sp.y + 1}: empty`;
  g.append(h("title", {}, label));
  g.setAttribute("aria-label", label);
  return { g, label };
}

function cardEl(catalog, card, cls = "") {
  const c = cardInfo(catalog, card);
  return h("div", { class: `card aa-card${c ? ` k-${c.kind}` : ""} ${cls}`, dataset: { card } },
    h("span", { class: "type" }, c ? (c.kind === "spell" ? "Spell" : `Item${c.use && c.use !== "none" ? ` · ${c.use}` : ""}`) : ""),
    h("span", { class: "name" }, c ? c.name : card),
    c ? h("span", { class: "stats" }, h("span", {}, `${c.cost} ${c.kind === "spell" ? "Will" : "Shards"}`), " · ", h("b", {}, `${c.pp} PP`)) : null,
    c ? h("span", { class: "effect" }, c.effect) : null);
}

function tileEl(catalog, tile) {
  const c = comp(catalog, tile);
  return h("div", { class: "card aa-tile", dataset: { tile } },
    h("span", { class: "name" }, tile),
    h("span", { class: "stats" }, c ? c.actions : ""),
    c ? h("span", { class: "effect" }, `connectors ${c.connectors[0]}`) : null);
}

export function render(root, ctx) {
  const { view, catalog } = ctx;
  const describe = (m) => describeMove(m, catalog, ctx);
  const pick = picker(root, ctx, describe, keyOf);
  const hitSpaces = new Set();
  const hitCards = new Set();
  for (const e of ctx.events || []) {
    if (typeof e.x === "number") hitSpaces.add(`${e.seat}:${e.x}:${e.y}`);
    if (e.type === "assignment_completed" || e.type === "item_used") hitCards.add(e.card || e.item);
  }
  const seatColour = (s) => SEAT_COLOURS[s % SEAT_COLOURS.length];
  const cast = view.cast;

  const players = view.players.map((p) => {
    const mine = p.seat === ctx.seat;
    const svg = h("svg", { viewBox: `0 0 ${4 * SIZE} ${3 * SIZE}`, class: "slate", role: "group", "aria-label": `${seatWord(ctx, p.seat)}'s slate` });
    for (const sp of p.slate) {
      const { g, label } = spaceSvg(catalog, sp, hitSpaces.has(`${p.seat}:${sp.x}:${sp.y}`));
      if (cast && view.current === p.seat) {
        const at = (xy) => xy && xy[0] === sp.x && xy[1] === sp.y;
        if (at(cast.current)) g.classList.add("resolving");
        else if (cast.linked.some(at)) g.classList.add("linked");
      }
      if (mine) pick.bind(g, `space:${sp.x}:${sp.y}`, label);
      svg.append(g);
    }
    const owned = [...p.spells, ...p.items];
    return h("section", { class: `zone aa-player${mine ? " mine" : ""}${view.current === p.seat ? " active" : ""}`, style: { borderTopColor: seatColour(p.seat) }, dataset: { seat: String(p.seat) } },
      h("h4", {}, `${seatWord(ctx, p.seat)}${view.current === p.seat ? " · playing" : ""}`,
        h("span", { class: "row stats-row" },
          chip("Will", `${p.will}/${(catalog && catalog.will_cap) || 9}`, "will"), chip("Shards", p.shards, "shards"),
          chip("prestige", p.prestige, "vp"), chip("completed", p.completed), chip("hand", p.hand_count))),
      svg,
      p.held.length ? h("div", {}, h("h5", {}, "Tiles to place"), h("div", { class: "cards" }, p.held.map((t) => tileEl(catalog, t)))) : null,
      owned.length ? h("div", {}, h("h5", {}, "Completed"), h("div", { class: "cards" }, owned.map((c) => {
        const el = cardEl(catalog, c, hitCards.has(c) ? "last" : "");
        if (mine) pick.bind(el, `item:${c}`, `use ${cardName(catalog, c)}`);
        return el;
      }))) : null,
      mine && p.hand ? h("div", {}, h("h5", {}, "Your hand"), h("div", { class: "cards" }, p.hand.map((c) => {
        const el = cardEl(catalog, c);
        pick.bind(el, `card:${c}`, cardName(catalog, c));
        return el;
      }))) : null);
  });

  const market = h("div", { class: "cards market", "aria-label": "the market of tiles" }, view.market.map((t, i) => {
    if (!t) return h("div", { class: "card aa-tile muted" }, "—");
    const el = tileEl(catalog, t);
    pick.bind(el, `market:${i}`, `market tile ${t}: ${compText(catalog, t)}`);
    return el;
  }));
  const assignments = h("div", { class: "cards public", "aria-label": "public Assignments" }, view.public.map((c) => {
    if (!c) return h("div", { class: "card muted" }, "—");
    const el = cardEl(catalog, c, hitCards.has(c) ? "last" : "");
    pick.bind(el, `card:${c}`, cardName(catalog, c));
    return el;
  }));
  const castBox = cast ? h("p", { class: "cast" }, h("b", {}, "Casting: "), compText(catalog, cast.component),
    ` (${cast.parts_done.filter(Boolean).length} of ${cast.parts_done.length} actions done)`,
    cast.linked.length ? ` · ${cast.linked.length} linked tile${cast.linked.length === 1 ? "" : "s"}` : "") : null;
  const effect = view.effect ? h("p", { class: "cast" }, h("b", {}, "Effect: "), `${view.effect.kind.replace(/_/g, " ")} from ${cardName(catalog, view.effect.source)}`) : null;
  const rest = pick.button("rest", "Rest");

  root.append(h("div", { class: "game aa" },
    lastMove(ctx, describeEvent),
    pick.slot,
    h("p", { class: "df-round" }, h("b", {}, `Round ${view.round}`), ` · ${seatWord(ctx, view.current)} to play`,
      h("span", { class: "muted" }, ` · ${view.phase.replace(/_/g, " ")}${view.turn_kind !== "normal" ? ` (${view.turn_kind} turn)` : ""}`),
      view.pencils_down !== null ? h("span", { class: "muted" }, ` · pencils down by ${seatWord(ctx, view.pencils_down)}`) : null),
    castBox, effect,
    h("section", { class: "zone" }, h("h4", {}, "Market", h("span", { class: "row stats-row" }, chip("tiles in the bag", view.bag_count))), market),
    h("section", { class: "zone" }, h("h4", {}, "Assignments", h("span", { class: "row stats-row" }, chip("deck", view.deck_count), chip("discard", view.discard_count))), assignments),
    h("div", { class: "aa-players" }, players),
    rest ? h("div", { class: "row" }, rest) : null,
    pick.actions()));
}
