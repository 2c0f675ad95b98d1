// Dice Forge. The islands with their card stacks and the heroes' pawns, the
// Temple (the Sanctuary's pools by cost, the Gardens), and each hero: reserve
// with its caps, both dice with their six faces (the face up outlined),
// Hammer track, tokens and cards. Click a face in the Temple to buy it, a
// face of your die to forge over it, a card on an island to perform its
// feat, one of your reinforcement cards to use it.
import { h } from "../dom.js";
import { picker, lastMove, seatWord, describeBy, chip, SEAT_COLOURS } from "./common.js";

const RES = { G: "gold", S: "sun", M: "moon", V: "glory" };
const RES_SYM = { gold: "●", sun: "▲", moon: "◆", glory: "★" };
const SPECIAL = { X3: "×3", MIRROR: "Mirror", SHIP: "Ship", NONE: "—" };

function cardName(catalog, id) {
  const c = catalog && catalog.cards && catalog.cards[id];
  return c ? c.name : String(id).replace(/_/g, " ").toLowerCase();
}

// "G3|V2" -> [{sep:"", parts:[[3,"gold"]]}, ...]
function faceTokens(face) {
  const sep = face.includes("|") ? "/" : "+";
  return { sep, parts: face.split(/[|+]/).map((t) => [Number(t.slice(1)), RES[t[0]]]) };
}

export function faceWords(face) {
  if (!face) return "nothing";
  if (SPECIAL[face]) return SPECIAL[face] === "×3" ? "×3 (triples the other face)" : SPECIAL[face];
  if (face.startsWith("SHIELD_")) return `shield (${face.slice(7).toLowerCase()})`;
  if (face.startsWith("BOAR_")) return `boar (${face.slice(5).toLowerCase()})`;
  const { sep, parts } = faceTokens(face);
  return parts.map(([n, r]) => `${n} ${r}`).join(sep === "/" ? " or " : " + ");
}

// A face as an SVG square: amounts with resource symbols, or a word.
export function faceSvg(face, attrs = {}) {
  const size = 44;
  const cls = `face${attrs.up ? " up" : ""}${attrs.last ? " last" : ""}${attrs.dark ? " dark" : ""}`;
  const g = h("svg", { viewBox: `0 0 ${size} ${size}`, class: cls, width: attrs.w || size, height: attrs.w || size, dataset: { face } },
    h("rect", { x: 1.5, y: 1.5, width: size - 3, height: size - 3, rx: 7 }));
  const special = SPECIAL[face] || (face.startsWith("SHIELD_") ? "Shield" : face.startsWith("BOAR_") ? "Boar" : null);
  if (special) {
    g.append(h("text", { x: size / 2, y: size / 2 + 4, "text-anchor": "middle", class: "special" }, special));
    if (face.startsWith("SHIELD_") || face.startsWith("BOAR_")) {
      const tail = face.split("_")[1].toLowerCase();
      const colour = { sun: "#d84315", gold: "#b8860b", glory: "#2e7d32", moon: "#1e63b5", red: "#c62828", yellow: "#d4a017", green: "#2e7d32", blue: "#1e63b5" }[tail];
      g.append(h("circle", { cx: size / 2, cy: size - 9, r: 4, fill: colour }));
    }
  } else {
    const { sep, parts } = faceTokens(face);
    const lines = parts.length;
    const lh = lines > 2 ? 11 : 15;
    const y0 = size / 2 - ((lines - 1) * lh) / 2 + 5;
    parts.forEach(([n, r], i) => {
      g.append(h("text", { x: size / 2, y: y0 + i * lh, "text-anchor": "middle", class: `amount r-${r}${lines > 2 ? " small" : ""}` },
        `${i && sep === "/" ? "/" : ""}${n}${RES_SYM[r]}`));
    });
  }
  g.append(h("title", {}, faceWords(face)));
  return g;
}

export function describeMove(m, catalog, ctx) {
  const view = ctx && ctx.view;
  switch (m.type) {
    case "buy_face": return `Buy ${faceWords(m.face)}${catalog && catalog.faces && catalog.faces[m.face] && catalog.faces[m.face].cost !== undefined ? ` for ${catalog.faces[m.face].cost} gold` : ""}`;
    case "ship_buy": return `Ship: buy ${faceWords(m.face)} (discounted)`;
    case "ship_pass": return "Ship: buy nothing";
    case "forge_face": {
      const old = view && ctx.seat !== null && view.players[ctx.seat] ? view.players[ctx.seat].dice[m.die][m.slot] : "";
      return `Forge onto the ${m.die === 0 ? "light" : "dark"} die, face ${m.slot + 1}${old ? ` (over ${faceWords(old)})` : ""}`;
    }
    case "finish_offering": return "Finish the offering";
    case "perform_feat": {
      const i = catalog && catalog.slots ? catalog.slots.findIndex((s) => s.id === m.slot) : -1;
      const card = view && i >= 0 ? view.cards[i] : m.slot;
      const s = i >= 0 ? catalog.slots[i] : null;
      return `Perform a feat: ${cardName(catalog, card)}${s ? ` (${[s.sun ? `${s.sun} sun` : "", s.moon ? `${s.moon} moon` : ""].filter(Boolean).join(" + ")})` : ""}`;
    }
    case "end_turn": return "End the turn";
    case "choose_option": return `Take ${m.option}`;
    case "choose_mirror": return `Mirror copies ${faceWords(m.face)}`;
    case "choose_shield": return `Take ${faceWords(m.face)}`;
    case "split_gain": {
      const parts = [];
      if (m.hammer) parts.push(`${m.hammer} gold onto the Hammer`);
      if (m.gold_glory) parts.push(`${m.gold_glory} gold as glory`);
      if (m.sun_glory) parts.push(`${m.sun_glory} sun as glory`);
      if (m.moon_glory) parts.push(`${m.moon_glory} moon as glory`);
      return parts.length ? `Split: ${parts.join(", ")}, the rest to the reserve` : "Everything to the reserve";
    }
    case "order_faces": return m.ship_first ? "Use the Ship first" : "Take the gold first";
    case "use_cerberus": return m.use ? "Use Cerberus: gain the faces again" : "Keep the Cerberus token";
    case "use_triton": return `Use Triton: take ${m.option === "gold" ? "6 gold" : `2 ${m.option}`}`;
    case "use_reinforcement": {
      const card = view && ctx.seat !== null ? view.players[ctx.seat].cards[m.card] : m.card;
      return `Use ${cardName(catalog, card)}${m.option ? ` (${m.option})` : ""}`;
    }
    case "end_reinforcements": return "No more reinforcements";
    case "choose_boar_bearer": return `Give the boar to ${seatWord(ctx, m.seat)}`;
    case "choose_satyr_faces": return `Satyrs: take ${seatWord(ctx, m.first[0])}'s ${m.first[1] ? "dark" : "light"} and ${seatWord(ctx, m.second[0])}'s ${m.second[1] ? "dark" : "light"} die`;
    case "choose_minor_die": return `Use the ${m.die ? "dark" : "light"} die`;
    default: return describeBy(m, (v) => v, ctx);
  }
}

export function describeEvent(e, catalog, ctx) {
  const who = (s) => seatWord(ctx, s);
  const res = (o, pre = "") => ["gold", "sun", "moon", "glory"].filter((r) => o[pre + r]).map((r) => `${o[pre + r]} ${r}`).join(", ");
  switch (e.type) {
    case "game_started": return `${e.players} heroes, ${e.rounds} rounds`;
    case "turn_started": return `Round ${e.round}: ${who(e.seat)}`;
    case "dice_rolled": return `${who(e.seat)} rolled ${e.faces.map(faceWords).join(" and ")}${e.reason && e.reason !== "blessing" ? ` (${e.reason})` : ""}`;
    case "resources_gained": return `${who(e.seat)} gained ${res(e) || "nothing"}`;
    case "resources_lost": return `${who(e.seat)} lost ${res(e)}`;
    case "resources_spent": return `${who(e.seat)} spent ${res(e)}`;
    case "face_bought": return `${who(e.seat)} bought ${faceWords(e.face)} for ${e.cost} gold`;
    case "garden_face_taken": return `${who(e.seat)} took ${faceWords(e.face)}`;
    case "face_forged": return `${who(e.seat)} forged ${faceWords(e.face)} onto the ${e.die ? "dark" : "light"} die`;
    case "feat_performed": return `${who(e.seat)} performed a feat: ${cardName(catalog, e.card)}`;
    case "card_taken": return "";
    case "pawn_moved": return `${who(e.seat)} went to island ${e.island}`;
    case "hero_ousted": return `${who(e.by)} ousted ${who(e.seat)}`;
    case "hammer_advanced": return `${who(e.seat)}'s Hammer moved ${e.spaces}${e.glory ? `, +${e.glory} glory` : ""}`;
    case "extra_action_taken": return `${who(e.seat)} paid ${e.sun} sun for another action`;
    case "turn_ended": return `${who(e.seat)} ended the turn`;
    case "round_ended": return `Round ${e.round} over`;
    case "offering_finished": return "";
    case "hammer_token_placed": return `a Hammer track for ${who(e.seat)}`;
    case "token_gained": return `${who(e.seat)} gained a ${e.token} token`;
    case "agenda_changed": case "faces_applied": return "";
    default: return describeBy(e, (v) => (catalog && catalog.cards && catalog.cards[v] ? cardName(catalog, v) : v), ctx);
  }
}

function keyOf(m) {
  switch (m.type) {
    case "buy_face": case "ship_buy": return `face:${m.face}`;
    case "forge_face": return `slot:${m.die}:${m.slot}`;
    case "perform_feat": return `feat:${m.slot}`;
    case "use_reinforcement": return `card:${m.card}`;
    case "choose_minor_die": return `die:${m.die}`;
    default: return null;
  }
}

function caps(catalog, p) {
  const base = (catalog && catalog.caps) || { gold: 12, sun: 6, moon: 6 };
  const chest = (catalog && catalog.chest_caps) || { gold: 4, sun: 3, moon: 3 };
  const chests = p.cards.filter((c) => c === "CHEST").length;
  const out = {};
  for (const r of ["gold", "sun", "moon"]) out[r] = (base[r] || 0) + chests * (chest[r] || 0);
  return out;
}

function touched(events) {
  const t = { faces: new Set(), slots: new Set(), seats: new Set(), dice: new Set() };
  for (const e of events || []) {
    if (e.type === "face_forged") t.dice.add(`${e.seat}:${e.die}:${e.slot}`);
    if (e.type === "dice_rolled") e.dice.forEach((d, i) => t.dice.add(`${e.seat}:${d}:${e.slots[i]}`));
    if (e.type === "feat_performed" || e.type === "card_taken") t.slots.add(e.slot);
    if (e.type === "face_bought") t.faces.add(e.face);
    if (typeof e.seat === "number" && e.type === "resources_gained") t.seats.add(e.seat);
  }
  return t;
}

export function render(root, ctx) {
  const { view, catalog } = ctx;
  const describe = (m) => describeMove(m, catalog, ctx);
  const pick = picker(root, ctx, describe, keyOf);
  const hit = touched(ctx.events);
  const slots = (catalog && catalog.slots) || [];
  const colour = (s) => SEAT_COLOURS[s % SEAT_COLOURS.length];

  // islands
  const islands = [];
  for (let n = 1; n <= 7; n++) {
    const here = slots.map((s, i) => ({ s, i })).filter((x) => x.s.island === n);
    const pawns = view.players.map((p, s) => ({ p, s })).filter((x) => x.p.pawn === n);
    islands.push(h("section", { class: "island", "aria-label": `island ${n}` },
      h("div", { class: "island-head" }, h("span", {}, `Island ${n}`),
        h("span", { class: "pawns" }, pawns.map(({ s }) => h("span", { class: "pawn", style: { background: colour(s) }, title: seatWord(ctx, s), "aria-label": `${seatWord(ctx, s)}'s hero` }, "")))),
      h("div", { class: "feats" }, here.map(({ s, i }) => {
        const cardId = view.cards[i];
        const c = catalog && catalog.cards ? catalog.cards[cardId] : null;
        const left = view.stacks[i].length;
        const el = h("div", { class: `card df-card${left ? "" : " gone"}${hit.slots.has(s.id) ? " last" : ""}`, dataset: { slot: s.id } },
          h("span", { class: "name" }, c ? c.name : cardId),
          h("span", { class: "stats" },
            s.sun ? h("span", { class: "r-sun" }, `${s.sun}${RES_SYM.sun}`) : null,
            s.moon ? h("span", { class: "r-moon" }, `${s.moon}${RES_SYM.moon}`) : null,
            c && c.glory ? h("span", { class: "r-glory" }, ` ${c.glory}${RES_SYM.glory}`) : null,
            h("span", { class: "muted" }, ` · ${left} left`)),
          c ? h("span", { class: "effect" }, c.effect) : null);
        pick.bind(el, `feat:${s.id}`, c ? c.name : cardId);
        return el;
      }))));
  }
  const portal = view.players.map((p, s) => ({ p, s })).filter((x) => x.p.pawn === 0);

  // the Temple
  const pools = (catalog && catalog.sanctuary) || view.sanctuary.map((_, i) => ({ id: `P${i}`, cost: "?" }));
  const temple = h("div", { class: "temple" },
    view.sanctuary.map((faces, i) => h("div", { class: "pool", "aria-label": `pool ${pools[i].cost} gold: ${faces.length} faces` },
      h("span", { class: "pool-cost" }, `${pools[i].cost}${RES_SYM.gold}`),
      h("div", { class: "pool-faces" }, faces.length ? [...new Set(faces)].map((f) => {
        const count = faces.filter((x) => x === f).length;
        const el = h("span", { class: "pool-face" }, faceSvg(f, { w: 38, last: hit.faces.has(f) }), count > 1 ? h("span", { class: "count" }, `×${count}`) : null);
        pick.bind(el, `face:${f}`, faceWords(f));
        return el;
      }) : h("span", { class: "muted" }, "empty")))),
    view.gardens.some((g) => g.length) ? h("div", { class: "pool garden", "aria-label": "the Gardens" },
      h("span", { class: "pool-cost" }, "Gardens"),
      h("div", { class: "pool-faces" }, view.gardens.filter((g) => g.length).map((g) => h("span", { class: "pool-face" }, faceSvg(g[0], { w: 38 }), h("span", { class: "count" }, `×${g.length}`))))) : null);

  // the heroes
  const heroes = view.players.map((p, s) => {
    const cap = caps(catalog, p);
    const mine = s === ctx.seat;
    const dice = [0, 1].map((d) => h("div", { class: "df-die", "aria-label": `${d ? "dark" : "light"} die` },
      (() => {
        const label = h("span", { class: "die-name" }, d ? "dark" : "light");
        if (mine) pick.bind(label, `die:${d}`, `the ${d ? "dark" : "light"} die`);
        return label;
      })(),
      p.dice[d].map((f, slot) => {
        const el = h("span", { class: "die-face" }, faceSvg(f, { up: p.up[d] === slot, dark: d === 1, last: hit.dice.has(`${s}:${d}:${slot}`), w: 40 }));
        if (mine) pick.bind(el, `slot:${d}:${slot}`, `${d ? "dark" : "light"} die, face ${slot + 1}: ${faceWords(f)}`);
        return el;
      })));
    const cards = p.cards.length ? h("div", { class: "hero-cards" }, p.cards.map((c, i) => {
      const el = h("span", { class: "mini-card" }, cardName(catalog, c));
      if (mine) pick.bind(el, `card:${i}`, cardName(catalog, c));
      return el;
    })) : null;
    const active = view.active === s;
    return h("section", { class: `zone hero${active ? " active" : ""}${mine ? " mine" : ""}`, style: { borderTopColor: colour(s) }, dataset: { seat: String(s) } },
      h("h4", {}, h("span", {}, h("span", { class: "pawn", style: { background: colour(s) } }, ""), ` ${seatWord(ctx, s)}${active ? " · playing" : ""}`),
        h("span", { class: "row stats-row" },
          chip(`${RES_SYM.gold} gold`, `${p.gold}/${cap.gold}`, "r-gold"),
          chip(`${RES_SYM.sun} sun`, `${p.sun}/${cap.sun}`, "r-sun"),
          chip(`${RES_SYM.moon} moon`, `${p.moon}/${cap.moon}`, "r-moon"),
          chip(`${RES_SYM.glory} glory`, p.glory, "r-glory"))),
      h("div", { class: "dice-pair" }, dice),
      h("div", { class: "row stats-row" },
        p.hammers ? chip("Hammer", `${p.hammer_pos}/${(catalog && catalog.hammer_track) || 30}`) : null,
        p.cerberus ? chip("Cerberus tokens", p.cerberus) : null,
        p.triton ? chip("Triton tokens", p.triton) : null,
        cards));
  });

  const flowNow = (view.flow || [])[0];
  root.append(h("div", { class: "game df" },
    lastMove(ctx, describeEvent, (e) => e.type !== "agenda_changed"),
    pick.slot,
    h("p", { class: "df-round" }, h("b", {}, `Round ${view.round} of ${view.rounds}`), ` · ${seatWord(ctx, view.active)} to play`,
      flowNow ? h("span", { class: "muted" }, ` · now: ${String(flowNow.task).replace(/_/g, " ")}`) : null,
      portal.length ? h("span", { class: "muted" }, ` · at the start portals: ${portal.map(({ s }) => seatWord(ctx, s)).join(", ")}`) : null),
    h("section", { class: "zone" }, h("h4", {}, "The islands"), h("div", { class: "islands" }, islands)),
    h("section", { class: "zone" }, h("h4", {}, "The Temple"), temple),
    h("div", { class: "heroes" }, heroes),
    pick.actions()));
}
