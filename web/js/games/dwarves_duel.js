// The Dwarves: The Duel. The opponent's side (hand backs, pile, discard, Wild
// Cards, display), the dice and the open response windows in the middle, and
// your display and hand below. Click a hand card to play it (a chooser lists
// its payments and targets), a display Ally to activate it, a die to re-roll
// or convert it, your draw pile to draw, the dice tray to roll.
import { h } from "../dom.js";
import { picker, lastMove, seatWord, describeBy, chip } from "./common.js";

const TYPE_LABEL = { ALLY: "Ally", VICTORY: "Victory", SUPPORT: "Support", EVENT: "Event", TWIST: "Twist of Fate" };
const WINDOW_LABEL = { cp1: "before the dice", cp2: "after the dice", cp4: "at the end of the turn", defend: "defend" };
const PIPS = {
  1: [[0, 0]], 2: [[-1, -1], [1, 1]], 3: [[-1, -1], [0, 0], [1, 1]],
  4: [[-1, -1], [1, -1], [-1, 1], [1, 1]], 5: [[-1, -1], [1, -1], [0, 0], [-1, 1], [1, 1]],
};

function card(catalog, id) {
  return (catalog && catalog.cards && catalog.cards[id]) || null;
}

function cardName(catalog, id) {
  const c = card(catalog, id);
  return c ? c.name : id;
}

function dieIndex(id) { return Number(String(id).slice(1)); }

function dieText(id, view) {
  const d = view && view.dice ? view.dice[dieIndex(id)] : null;
  const face = d && d.face ? (d.face === "W" ? "axe" : d.face) : "";
  return face ? `die ${dieIndex(id) + 1} (${face})` : `die ${dieIndex(id) + 1}`;
}

function unitText(u, view) {
  if (u === "WILD") return "a Wild Card";
  return dieText(u, view);
}

function targetText(t, catalog, view) {
  if (t === "PILE") return "the draw pile";
  return cardName(catalog, t);
}

export function costText(c) {
  if (!c) return "";
  if (c.cost === "FREE") return "free";
  if (c.cost === "ONE") return `one ${c.amount}`;
  return `${c.amount} alike`;
}

export function describeMove(m, catalog, ctx) {
  const view = ctx && ctx.view;
  switch (m.type) {
    case "draw_cards": return `Draw ${m.count} card${m.count === 1 ? "" : "s"}`;
    case "roll_dice": return "Roll the dice";
    case "reroll_die": return `Re-roll ${dieText(m.die, view)} with ${cardName(catalog, m.source)}`;
    case "end_dice_phase": return "Keep the dice";
    case "play_card": {
      const parts = [`Play ${cardName(catalog, m.card)}`];
      if (m.payment && m.payment.length) parts.push(`paying ${m.payment.map((u) => unitText(u, view)).join(", ")}`);
      if (m.target) parts.push(`on ${targetText(m.target, catalog, view)}`);
      if (m.die) parts.push(`turning ${dieText(m.die, view)} to an axe`);
      if (m.pick) parts.push(`taking back ${cardName(catalog, m.pick)}`);
      return parts.join(", ");
    }
    case "play_twist": return `Play ${cardName(catalog, m.card)}${m.target ? ` on ${targetText(m.target, catalog, view)}` : ""}`;
    case "activate_ally": return `${cardName(catalog, m.ally)}: spend ${unitText(m.unit, view)}, 1 damage to ${targetText(m.target, catalog, view)}`;
    case "king_convert": return `Turn ${dieText(m.die, view)} into an axe (King)`;
    case "pass": return "Pass (no Twist of Fate)";
    case "end_turn": return "End the turn";
    default: return describeBy(m, (v) => cardName(catalog, v), ctx);
  }
}

export function describeEvent(e, catalog, ctx) {
  const who = (s) => seatWord(ctx, s);
  const name = (id) => cardName(catalog, id);
  switch (e.type) {
    case "game_started": return `The duel begins: ${who(0)} ${e.sides[0] === "GOOD" ? "Forces of Good" : "Forces of Evil"}, ${who(1)} the other side`;
    case "deck_shuffled": return "";
    case "cards_drawn": return `${who(e.seat)} drew ${e.count} card${e.count === 1 ? "" : "s"}${e.cards && e.cards.length ? ` (${e.cards.map(name).join(", ")})` : ""}`;
    case "turn_started": return `Turn ${e.turn}: ${who(e.seat)}`;
    case "phase_changed": return "";
    case "dice_rolled": return `${who(e.seat)} rolled ${e.faces.map((f) => (f === "W" ? "axe" : f)).join(" ")}`;
    case "die_rerolled": return `${who(e.seat)} re-rolled die ${dieIndex(e.die) + 1}: ${e.old} → ${e.new}`;
    case "die_converted": return `${who(e.seat)} turned die ${dieIndex(e.die) + 1} (${e.old}) into an axe`;
    case "card_played": return `${who(e.seat)} played ${name(e.card)}`;
    case "card_entered_display": return `${name(e.card)} entered ${who(e.seat) === "You" ? "your" : `${who(e.seat)}'s`} display`;
    case "card_discarded": return `${name(e.card)} discarded`;
    case "ally_activated": return `${name(e.ally)} activated with ${e.unit === "WILD" ? "a Wild Card" : `die ${dieIndex(e.unit) + 1}`}`;
    case "damage_declared": return `${name(e.source)} strikes ${e.target === "PILE" ? `${who(e.owner)}'s draw pile` : name(e.target)}`;
    case "window_opened": return "";
    case "window_closed": return e.passed ? `${who(e.holder)} passed` : "";
    case "damage_cancelled": return `${name(e.card)} cancelled the damage`;
    case "card_burned": return `${name(e.card)} burned from ${who(e.seat)}'s pile`;
    case "damage_dealt": return `${name(e.card)} took a hit (${e.damage} damage)`;
    case "card_defeated": return `${name(e.card)} was defeated`;
    case "damage_fizzled": return "the damage fizzled";
    case "card_removed": return `${name(e.card)} was removed by ${who(e.by)}`;
    case "card_recovered": return `${who(e.seat)} took back ${name(e.card)}`;
    case "wild_card_taken": return `${who(e.seat)} took a Wild Card${e.source === "opponent" ? " from the opponent" : ""}`;
    case "turn_ended": return `${who(e.seat)} ended the turn`;
    case "extra_dice_pending": return `two more dice next roll for ${who(e.seat)}`;
    case "game_ended": return `Game over: ${e.scores.join(" to ")} (${String(e.reason).replace(/_/g, " ")})`;
    default: return describeBy(e, (v) => (card(catalog, v) ? name(v) : v), ctx);
  }
}

// Card ids and dice the last commit touched, to highlight.
function touched(events) {
  const cards = new Set();
  const dice = new Set();
  for (const e of events || []) {
    for (const k of ["card", "ally", "source", "target"]) if (typeof e[k] === "string") cards.add(e[k]);
    if (e.type === "dice_rolled") e.faces.forEach((_, i) => dice.add(`d${i}`));
    if (typeof e.die === "string") dice.add(e.die);
    if (typeof e.unit === "string" && e.unit.startsWith("d")) dice.add(e.unit);
  }
  return { cards, dice };
}

function cardEl(catalog, id, extra = {}) {
  const c = card(catalog, id);
  const cls = ["card", "dd-card", c ? `t-${c.type.toLowerCase()}` : "", c ? `s-${c.side.toLowerCase()}` : "", extra.cls || ""].join(" ");
  const stats = [];
  if (c) {
    stats.push(h("span", { class: "cost", title: "cost" }, `⚒ ${costText(c)}`));
    if (c.hp !== null && c.hp !== undefined) stats.push(h("span", { class: "hp", title: "hit points" }, `♥ ${c.hp - (extra.damage || 0)}/${c.hp}`));
    if (c.vp) stats.push(h("span", { class: "vp", title: "victory points" }, `★ ${c.vp}`));
    if (c.triggers && c.triggers.length) stats.push(h("span", { class: "trig", title: "activated by" }, `⚔ ${c.triggers.join("/")}`));
  }
  return h("div", { class: cls, dataset: { card: id } },
    h("span", { class: "type" }, c ? TYPE_LABEL[c.type] : ""),
    h("span", { class: "name" }, c ? c.name : id),
    h("span", { class: "stats" }, stats),
    c ? h("span", { class: "effect" }, c.effect) : null);
}

function dieSvg(d, i, hit) {
  const size = 56;
  const g = h("g", { class: `die${d.face ? "" : " idle"}${d.used ? " used" : ""}${hit ? " last" : ""}`, transform: `translate(${i * (size + 10) + 4},4)`, "data-die": `d${i}` },
    h("rect", { width: size, height: size, rx: 10 }));
  if (d.face === "W") {
    g.append(h("text", { x: size / 2, y: size / 2 + 9, "text-anchor": "middle", class: "axe" }, "⚒"));
  } else if (d.face) {
    for (const [dx, dy] of PIPS[d.face] || []) g.append(h("circle", { cx: size / 2 + dx * 15, cy: size / 2 + dy * 15, r: 5.5 }));
  } else {
    g.append(h("text", { x: size / 2, y: size / 2 + 6, "text-anchor": "middle", class: "idle-text" }, "·"));
  }
  const state = d.face ? `${d.face === "W" ? "axe" : d.face}${d.used ? ", spent" : ""}` : "not rolled";
  g.append(h("title", {}, `die ${i + 1}: ${state}`));
  g.setAttribute("aria-label", `die ${i + 1}: ${state}`);
  return g;
}

function keyOf(m) {
  switch (m.type) {
    case "draw_cards": return "pile";
    case "roll_dice": return "tray";
    case "reroll_die": case "king_convert": return `die:${m.die}`;
    case "play_card": case "play_twist": return `card:${m.card}`;
    case "activate_ally": return `card:${m.ally}`;
    default: return null;
  }
}

function points(p, catalog) {
  return p.display.reduce((n, d) => n + ((card(catalog, d.card) || {}).vp || 0), 0);
}

export function render(root, ctx) {
  const { view, catalog } = ctx;
  const describe = (m) => describeMove(m, catalog, ctx);
  const groupBy = (m) => {
    if (m.type === "activate_ally") return `spend ${unitText(m.unit, view)}`;
    if (m.type === "play_card" && m.payment && m.payment.length) return `pay ${m.payment.map((u) => unitText(u, view)).join(", ")}`;
    return "";
  };
  const pick = picker(root, ctx, describe, keyOf, groupBy);
  const hit = touched(ctx.events);
  const me = ctx.seat === null || ctx.seat === undefined ? 0 : ctx.seat;
  const them = 1 - me;
  const sideName = (p) => (p.side === "GOOD" ? "Forces of Good" : "Forces of Evil");

  function playerZone(seat, mine) {
    const p = view.players[seat];
    const label = `${seatWord(ctx, seat)} · ${sideName(p)}`;
    const pile = h("div", { class: "pile", "aria-label": `draw pile: ${p.pile_count} cards` },
      h("span", { class: "pile-count" }, String(p.pile_count)), h("span", { class: "muted" }, "draw pile"));
    if (mine) pick.bind(pile, "pile", "Your draw pile");
    const topDiscard = p.discard.length ? p.discard[p.discard.length - 1] : null;
    const display = h("div", { class: "cards display", "aria-label": `${label}: display` },
      p.display.length ? p.display.map((d) => {
        const el = cardEl(catalog, d.card, { damage: d.damage, cls: hit.cards.has(d.card) ? "last" : "" });
        if (d.damage) el.append(h("span", { class: "damage" }, `${d.damage} damage`));
        pick.bind(el, `card:${d.card}`, cardName(catalog, d.card));
        return el;
      }) : h("p", { class: "muted empty" }, "No cards in the display yet."));
    let hand;
    if (p.hand) {
      hand = h("div", { class: "cards hand", "aria-label": "your hand" }, p.hand.length ? p.hand.map((id) => {
        const el = cardEl(catalog, id, { cls: hit.cards.has(id) ? "last" : "" });
        pick.bind(el, `card:${id}`, cardName(catalog, id));
        return el;
      }) : h("p", { class: "muted empty" }, "Your hand is empty."));
    } else {
      const known = p.known_hand || [];
      const backs = Math.max(0, p.hand_count - known.length);
      hand = h("div", { class: "cards hand hidden-hand", "aria-label": `${label}: ${p.hand_count} cards in hand` },
        known.map((id) => cardEl(catalog, id, { cls: "known" })),
        Array.from({ length: backs }, () => h("div", { class: "card back", "aria-hidden": "true" }, "")));
    }
    return h("section", { class: `zone dd-player${mine ? " mine" : ""} s-${p.side.toLowerCase()}`, dataset: { seat: String(seat) } },
      h("h4", {}, label,
        h("span", { class: "row stats-row" },
          chip("points", points(p, catalog), "vp"), chip("hand", p.hand_count), chip("Wild Cards", p.wild_cards, "wild"),
          p.pending_extra_dice ? chip("extra dice next roll", 2 * p.pending_extra_dice) : null)),
      h("div", { class: "dd-row" }, pile,
        h("div", { class: "discard", "aria-label": `discard pile: ${p.discard.length} cards` },
          h("span", { class: "pile-count" }, String(p.discard.length)), h("span", { class: "muted" }, "discard"),
          topDiscard ? h("span", { class: "top-discard" }, cardName(catalog, topDiscard)) : null)),
      mine ? null : h("h5", {}, "Hand"), mine ? null : hand,
      h("h5", {}, "Display"), display,
      mine ? h("h5", {}, "Hand") : null, mine ? hand : null);
  }

  // the dice tray
  const size = 66;
  const tray = h("svg", { viewBox: `0 0 ${6 * size} 64`, class: "dice-tray", role: "group", "aria-label": "dice" },
    view.dice.map((d, i) => {
      const g = dieSvg(d, i, hit.dice.has(`d${i}`));
      pick.bind(g, `die:d${i}`, `die ${i + 1}`);
      return g;
    }));
  const trayBox = h("div", { class: "tray-box" }, tray);
  pick.bind(trayBox, "tray", "The dice");
  const windows = view.windows.length
    ? h("ul", { class: "windows", "aria-label": "open response windows" }, view.windows.map((w) => h("li", { class: `window w-${w.kind}` },
      h("b", {}, `Response window (${WINDOW_LABEL[w.kind] || w.kind})`), ` for ${seatWord(ctx, w.holder)}`,
      w.point ? ` · ${cardName(catalog, w.point.source)} deals 1 damage to ${w.point.target === "PILE" ? `${seatWord(ctx, w.point.owner)}'s draw pile` : cardName(catalog, w.point.target)}${w.point.cancelled ? " (cancelled)" : ""}` : "")))
    : null;
  const middle = h("section", { class: "zone dd-middle", "aria-label": "the middle" },
    h("h4", {}, `Turn ${view.turn} · ${seatWord(ctx, view.active)} · ${view.phase} phase`,
      h("span", { class: "row stats-row" }, chip("Wild Cards in the middle", view.middle_wild, "wild"))),
    trayBox, windows);

  root.append(h("div", { class: "game dd" },
    lastMove(ctx, describeEvent, (e) => e.type !== "deck_shuffled" && e.type !== "phase_changed"),
    pick.slot,
    playerZone(them, false),
    middle,
    playerZone(me, ctx.seat !== null && ctx.seat !== undefined),
    pick.actions()));
}
