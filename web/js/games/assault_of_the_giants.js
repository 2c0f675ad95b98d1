// D&D Assault of the Giants. The map of the Sword Coast (22 regions, their
// roads, the giants in each by race, Lyn Armaal, the towns of the small
// folk), each player's command row, Ordning Points and resources, the OP
// pools, the event draft and a battle in progress. Click a region to move
// there, attack it, plunder it or pick a unit in it (a chooser lists the
// legal moves of that region); a command to play it, an event to claim it,
// one of your spells to cast it.
import { h } from "../dom.js";
import { picker, lastMove, seatWord, describeBy, chip } from "./common.js";

export const RACE_COLOUR = {
  storm: "#5e35b1", cloud: "#78909c", fire: "#d84315", frost: "#0288d1", stone: "#6d4c41", hill: "#558b2f", giantslayer: "#212121",
};

// The map's layout: north up, the sea to the west (viewBox 640 x 540).
const POS = [
  [95, 40], [310, 38], [500, 48], [130, 125], [270, 120], [395, 118], [545, 135],
  [50, 235], [165, 212], [290, 208], [430, 205], [330, 290], [455, 290], [575, 255],
  [540, 365], [190, 300], [255, 385], [135, 410], [395, 395], [500, 450], [420, 505], [275, 480],
];

function regionName(catalog, i) {
  const r = catalog && catalog.regions ? catalog.regions[i] : null;
  return r ? r.name : `region ${i + 1}`;
}

function unitName(catalog, i) {
  const u = catalog && catalog.units ? catalog.units[i] : null;
  return u ? u.id.replace(/_/g, " ") : `unit ${i}`;
}

function eventName(catalog, id) {
  const e = catalog && catalog.events ? catalog.events[id] : null;
  return e ? e.name : id;
}

function spellName(catalog, id) {
  const k = catalog && catalog.spells ? catalog.spells[id] : null;
  return k ? k.replace(/_/g, " ") : id;
}

function kindWord(k) {
  return String(k).replace(/^rune_/, "rune ").replace(/_/g, " ");
}

export function describeMove(m, catalog, ctx) {
  const r = (i) => regionName(catalog, i);
  const u = (i) => unitName(catalog, i);
  switch (m.type) {
    case "claim_event": return `Claim ${eventName(catalog, m.event)} (${(catalog && catalog.events && catalog.events[m.event] ? `${catalog.events[m.event].op} OP, ` : "")}pay ${kindWord(m.payment)})${m.remove >= 0 ? `, returning ${u(m.remove)}` : ""}`;
    case "play_command": return `Play the ${m.command} command`;
    case "maneuver": return `Move ${u(m.unit)} to ${r(m.to)}`;
    case "move_lyn": return `Move Lyn Armaal to ${r(m.to)}`;
    case "pay_toll": return m.card === "wound" ? "Pay the toll with a wound" : `Pay the toll with ${kindWord(m.card)}`;
    case "end_move": return "End moving";
    case "declare_battle": return `Attack ${r(m.target)}`;
    case "add_attacker": return `Add ${u(m.unit)} to the attack`;
    case "start_battle": return "Start the battle";
    case "reroll": return `Re-roll dice ${m.dice.map((d) => d + 1).join(", ")}`;
    case "convert_arcane": return `Turn arcane on dice ${m.dice.map((d) => d + 1).join(", ")} into ${m.into}`;
    case "cast_spell": return `Cast ${spellName(catalog, m.spell)}${m.dice && m.dice.length ? ` on dice ${m.dice.map((d) => d + 1).join(", ")}` : ""}`;
    case "play_armament": return `Play an armament for a ${m.effect}`;
    case "finalize_roll": return "Keep the roll";
    case "assign_casualty": return `Wound or lose ${u(m.unit)}`;
    case "cast_mend": return `Cast ${spellName(catalog, m.spell)} on ${u(m.unit)}`;
    case "pass_mend": return "No mending";
    case "advance": return `Advance ${u(m.unit)}`;
    case "end_advance": return "Stop advancing";
    case "end_attack": return "End attacking";
    case "recruit": return `Recruit a ${m.kind}${m.remove >= 0 ? `, returning ${u(m.remove)}` : ""}`;
    case "end_recruit": return "End recruiting";
    case "start_trade": return m.mode === "deck" ? "Trade with the deck" : `${m.mode === "forced" ? "Force a trade" : "Offer a trade"} with ${seatWord(ctx, m.partner)}`;
    case "give_card": return `Give ${kindWord(m.card)}`;
    case "request_card": return `Ask for ${kindWord(m.card)}`;
    case "confirm_trade": return m.take ? `Confirm, taking ${kindWord(m.take)}` : "Confirm the trade";
    case "return_card": return `Return ${kindWord(m.card)}`;
    case "respond_offer": return m.accept ? "Accept the offer" : "Refuse the offer";
    case "end_trade": return "End trading";
    case "leader_ability": return `Use the leader's ability${m.lyn_to >= 0 ? `, Lyn to ${r(m.lyn_to)}` : ""}`;
    case "leader_return": return `Return the leader${m.remove >= 0 ? `, removing ${u(m.remove)}` : ""}`;
    case "leader_pass": return "Do not use the leader";
    case "discard_spell": return `Discard ${spellName(catalog, m.spell)}`;
    case "plunder": return `Plunder ${r(m.region)}`;
    case "end_plunder": return "End plundering";
    case "heal_unit": return `Heal ${u(m.unit)}${m.food ? " (pay a Food)" : ""}`;
    case "end_heal": return "End healing";
    case "gs_recruit": return `Giantslayers: place one in ${r(m.region)}`;
    case "gs_move": return `Giantslayers: move ${u(m.slayer)} to ${r(m.to)}`;
    case "gs_attack": return `Giantslayers attack ${r(m.region)} with ${m.slayers.map(u).join(", ")}`;
    case "end_rest": return "End resting";
    default: return describeBy(m, (v) => v, ctx);
  }
}

export function describeEvent(e, catalog, ctx) {
  const who = (s) => seatWord(ctx, s);
  const r = (i) => regionName(catalog, i);
  const u = (i) => unitName(catalog, i);
  switch (e.type) {
    case "turn_began": return `Round ${e.round}: ${who(e.seat)}`;
    case "event_claimed": return `${who(e.seat)} claimed ${eventName(catalog, e.event)}`;
    case "op_awarded": return `${who(e.seat)} +${e.amount} OP (${String(e.reason).replace(/_/g, " ")})`;
    case "command_played": return `${who(e.seat)} played ${e.command} (${e.strength})`;
    case "unit_moved": return `${u(e.unit)}: ${r(e.from_region)} → ${r(e.to_region)}`;
    case "lyn_moved": return `Lyn Armaal: ${r(e.from_region)} → ${r(e.to_region)}`;
    case "unit_wounded": return `${u(e.unit)} wounded`;
    case "unit_healed": return `${u(e.unit)} healed`;
    case "unit_removed": return `${u(e.unit)} removed`;
    case "unit_placed": return "";
    case "battle_declared": return `Battle for ${r(e.target)}`;
    case "attacker_joined": return `${u(e.unit)} joins the attack`;
    case "region_plundered": return `${who(e.seat)} plundered ${r(e.region)}`;
    case "spell_cast": return `${who(e.seat)} cast ${spellName(catalog, e.card)}`;
    case "spells_discarded": return `${who(e.seat)} discarded ${e.cards.length} spell${e.cards.length === 1 ? "" : "s"}`;
    case "dice_rolled": return `${e.side} rolled ${e.faces.map((f, i) => dieWords(catalog, e.dice[i], f)).join(", ")}`;
    case "dice_rerolled": return `${e.side} re-rolled ${e.positions.length} di${e.positions.length === 1 ? "e" : "ce"} (${String(e.source).replace(/_/g, " ")})`;
    case "arcane_converted": return `${e.side}: ${e.positions.length} arcane into ${e.into}`;
    case "bonus_added": return `${e.side} +${e.hits} hits, +${e.blocks} blocks (${String(e.source).replace(/_/g, " ")})`;
    case "roll_finalized": return `${e.side}: ${e.hits} hits, ${e.blocks} blocks`;
    case "casualty_taken": return `${u(e.unit)} ${e.defeated ? "defeated" : `absorbed ${e.absorbed}`}`;
    case "battle_ended": return `the battle for ${r(e.target)} is over`;
    case "toll_due": return `${u(e.unit)} owes a toll in ${r(e.region)}`;
    case "toll_paid": return `${who(e.seat)} paid the toll in ${r(e.region)}${e.card ? ` with ${kindWord(e.card)}` : " with a wound"}`;
    case "cards_given": return `${who(e.from_seat)} gave ${e.cards.length} card${e.cards.length === 1 ? "" : "s"} to ${who(e.to_seat)}`;
    case "trade_offered": return `${who(e.seat)} offers ${who(e.partner)} a trade`;
    case "offer_answered": return `${who(e.seat)} ${e.accepted ? "accepted" : "refused"} the offer`;
    case "trade_completed": return `${who(e.seat)} traded`;
    case "resources_discarded": return `${who(e.seat)} discarded ${e.cards.map((c) => kindWord(catalog && catalog.resources ? catalog.resources[c] || c : c)).join(", ")}`;
    case "pile_card_taken": return `${who(e.seat)} took ${kindWord(catalog && catalog.resources ? catalog.resources[e.card] || e.card : e.card)} from the discard pile`;
    case "resources_drawn": case "spells_drawn": return "";
    case "rest_stage": return "";
    case "row_returned": return `${who(e.seat)} took back the command row`;
    case "stage_began": return e.stage === "endgame" ? "The endgame begins" : "The final Ordning begins";
    case "phase_entered": case "trade_changed": case "deck_shuffled": case "battle_step": return "";
    case "turn_ended": return `${who(e.seat)} ended the turn`;
    default: return describeBy(e, (v, k) => (k === "region" || k === "target" ? r(v) : k === "unit" ? u(v) : v), ctx);
  }
}

function dieWords(catalog, kind, face) {
  const f = catalog && catalog.die_faces && catalog.die_faces[kind] ? catalog.die_faces[kind][face - 1] : null;
  if (!f) return `${kind} ${face}`;
  const parts = [f.hits ? `${f.hits} hit${f.hits > 1 ? "s" : ""}` : "", f.blocks ? `${f.blocks} block${f.blocks > 1 ? "s" : ""}` : "", f.arcane ? `${f.arcane} arcane` : ""].filter(Boolean);
  return parts.length ? parts.join(" + ") : "blank";
}

// A battle die: its symbols (hits, blocks, arcane), coloured by its kind.
function battleDie(catalog, kind, face, pos) {
  const f = catalog && catalog.die_faces && catalog.die_faces[kind] ? catalog.die_faces[kind][face - 1] : null;
  const sym = f ? "⚔".repeat(f.hits) + "■".repeat(f.blocks) + "✦".repeat(f.arcane) : String(face);
  const label = `die ${pos + 1} (${kind}): ${dieWords(catalog, kind, face)}`;
  const g = h("svg", { viewBox: "0 0 44 44", width: 44, height: 44, class: "bdie", dataset: { pos: String(pos) } },
    h("rect", { x: 1.5, y: 1.5, width: 41, height: 41, rx: 7, fill: "#fffdf8", stroke: RACE_COLOUR[kind] || "#6b6b70", "stroke-width": 3 }),
    h("text", { x: 22, y: sym.length > 3 ? 26 : 28, "text-anchor": "middle", class: `bdie-sym${sym.length > 3 ? " small" : ""}` }, sym || "·"),
    h("title", {}, label));
  g.setAttribute("aria-label", label);
  return g;
}

function keyOf(m, view) {
  const at = (unit) => (view.unit_loc[unit] >= 0 ? `region:${view.unit_loc[unit]}` : null);
  switch (m.type) {
    case "maneuver": case "move_lyn": case "gs_move": return `region:${m.to}`;
    case "declare_battle": return `region:${m.target}`;
    case "plunder": case "gs_recruit": case "gs_attack": return `region:${m.region}`;
    case "add_attacker": case "assign_casualty": case "advance": case "heal_unit": return at(m.unit);
    case "play_command": return `command:${m.command}`;
    case "claim_event": return `event:${m.event}`;
    case "cast_spell": case "discard_spell": return `spell:${m.spell}`;
    case "reroll": return m.dice.length === 1 ? `bdie:${m.dice[0]}` : null;
    default: return null;
  }
}

function wrap(name) {
  if (name.length <= 11) return [name];
  const words = name.split(" ");
  if (words.length === 1) return [name];
  const half = Math.ceil(words.length / 2);
  return [words.slice(0, half).join(" "), words.slice(half).join(" ")];
}

export function render(root, ctx) {
  const { view, catalog } = ctx;
  const describe = (m) => describeMove(m, catalog, ctx);
  // long choosers of a region: first the kind of move (or the unit)
  const groupBy = (m) => (typeof m.unit === "number" ? unitName(catalog, m.unit) : describeMove(m, catalog, ctx).split(" ")[0]);
  const pick = picker(root, ctx, describe, (m) => keyOf(m, view), groupBy);
  const regions = (catalog && catalog.regions) || POS.map((_, i) => ({ name: `region ${i + 1}`, small_folk: false, adjacent: [] }));
  const units = (catalog && catalog.units) || [];
  const edges = (catalog && catalog.edges) || [];
  const hitRegions = new Set();
  for (const e of ctx.events || []) {
    for (const k of ["to_region", "from_region", "target", "region"]) if (typeof e[k] === "number" && e[k] >= 0) hitRegions.add(e[k]);
    if (typeof e.unit === "number" && view.unit_loc[e.unit] >= 0) hitRegions.add(view.unit_loc[e.unit]);
  }
  const raceOfSeat = view.seat_races;
  const seatOfRace = (race) => raceOfSeat.indexOf(race);
  const used = new Set(view.used_regions || []);

  // units per region, by race
  const here = regions.map(() => new Map());
  view.unit_loc.forEach((loc, i) => {
    if (loc < 0 || !units[i]) return;
    const race = units[i].race;
    const m = here[loc];
    if (!m.has(race)) m.set(race, { n: 0, wounded: 0 });
    const x = m.get(race);
    x.n += 1;
    if (view.unit_wounded[i]) x.wounded += 1;
  });

  const svg = h("svg", { viewBox: "0 0 640 540", class: "giants-map", role: "group", "aria-label": "the map of the Sword Coast" },
    h("rect", { x: 0, y: 0, width: 640, height: 540, class: "sea" }),
    edges.map(([a, b]) => h("line", { x1: POS[a][0], y1: POS[a][1], x2: POS[b][0], y2: POS[b][1], class: "road" })));
  regions.forEach((reg, i) => {
    const [x, y] = POS[i];
    const groups = [...here[i].entries()];
    const owner = groups.length ? groups[0][0] : "";
    const g = h("g", { class: `region${reg.small_folk ? " town" : ""}${hitRegions.has(i) ? " last" : ""}${used.has(i) ? " used" : ""}`, transform: `translate(${x},${y})`, dataset: { region: String(i) } },
      reg.small_folk
        ? h("rect", { x: -50, y: -30, width: 100, height: 60, rx: 8, class: "region-shape", style: owner ? { stroke: RACE_COLOUR[owner] } : {} })
        : h("rect", { x: -50, y: -30, width: 100, height: 60, rx: 28, class: "region-shape", style: owner ? { stroke: RACE_COLOUR[owner] } : {} }));
    const lines = wrap(reg.name);
    lines.forEach((line, k) => g.append(h("text", { x: 0, y: -14 + k * 11 - (lines.length - 1) * 3, "text-anchor": "middle", class: "region-name" }, line)));
    let bx = -((groups.length * 30) / 2);
    for (const [race, { n, wounded }] of groups) {
      g.append(h("g", { class: "unit-badge", transform: `translate(${bx},${lines.length > 1 ? 8 : 4})` },
        h("rect", { width: 27, height: 17, rx: 4, fill: RACE_COLOUR[race] || "#444" }),
        h("text", { x: 13.5, y: 12.5, "text-anchor": "middle", class: "unit-n" }, wounded ? `${n}*` : String(n))));
      bx += 30;
    }
    if (view.lyn === i) g.append(h("g", { class: "lyn", transform: "translate(40,-24)" }, h("circle", { r: 9 }), h("text", { y: 4, "text-anchor": "middle" }, "L")));
    const who = groups.map(([race, { n, wounded }]) => `${n} ${race}${wounded ? ` (${wounded} wounded)` : ""}`).join(", ");
    const label = `${reg.name}${reg.small_folk ? " (town)" : ""}: ${who || "no units"}${view.lyn === i ? ", Lyn Armaal" : ""}`;
    g.append(h("title", {}, label));
    g.setAttribute("aria-label", label);
    pick.bind(g, `region:${i}`, label);
    svg.append(g);
  });

  // players: race, OP, command row, resources, spells, claimed events
  const resKind = (id) => (catalog && catalog.resources ? catalog.resources[id] : id);
  const players = raceOfSeat.map((race, s) => {
    const mine = s === ctx.seat;
    const rc = catalog && catalog.races ? catalog.races.find((x) => x.id === race) : null;
    const counts = {};
    for (const id of view.resources[s]) counts[resKind(id)] = (counts[resKind(id)] || 0) + 1;
    const commands = (catalog && catalog.commands) || [];
    const row = view.rows[s];
    const commandEls = mine
      ? h("div", { class: "commands" }, commands.map((c) => {
        const played = row.includes(c);
        const el = h("span", { class: `command${played ? " played" : ""}` }, c);
        pick.bind(el, `command:${c}`, `the ${c} command`);
        return el;
      }))
      : h("div", { class: "commands" }, row.length ? row.map((c) => h("span", { class: "command played" }, c)) : h("span", { class: "muted" }, "no commands played"));
    const spells = mine
      ? h("div", { class: "cards spells" }, view.my_spells.map((sp) => {
        const el = h("span", { class: "mini-card spell" }, spellName(catalog, sp));
        pick.bind(el, `spell:${sp}`, spellName(catalog, sp));
        return el;
      }))
      : null;
    return h("section", { class: `zone giant-player${view.active === s ? " active" : ""}`, style: { borderTopColor: RACE_COLOUR[race] }, dataset: { seat: String(s) } },
      h("h4", {}, h("span", {}, `${seatWord(ctx, s)} · ${race} giants`, rc ? h("span", { class: "muted" }, ` · ${rc.leader}${view.leader_face_up[s] ? "" : " (used)"}`) : null),
        h("span", { class: "row stats-row" }, chip("OP", view.op[s], "vp"), chip("spells", view.spell_counts[s]))),
      h("h5", {}, mine ? "Commands (played ones are in your row)" : "Command row"), commandEls,
      h("h5", {}, "Resources"),
      h("div", { class: "row stats-row" }, Object.keys(counts).length ? Object.entries(counts).map(([k, n]) => chip(kindWord(k), n, `res-${k}`)) : h("span", { class: "muted" }, "none")),
      spells ? h("h5", {}, "Your spells") : null, spells,
      view.claimed[s].length ? h("p", { class: "claimed" }, "Claimed: ", view.claimed[s].map((e) => eventName(catalog, e)).join(", ")) : null);
  });

  const draft = h("div", { class: "cards draft" },
    [...view.draft, ...view.special_next.filter(Boolean)].map((id) => {
      const ev = catalog && catalog.events ? catalog.events[id] : null;
      const el = h("div", { class: `card event${id.startsWith("U") ? "" : " special"}`, dataset: { event: id } },
        h("span", { class: "name" }, ev ? ev.name : id), h("span", { class: "stats" }, ev ? `${ev.op} OP` : ""));
      pick.bind(el, `event:${id}`, ev ? ev.name : id);
      return el;
    }));

  const b = view.battle;
  const battle = b ? h("section", { class: "zone battle", "aria-label": "battle" },
    h("h4", {}, `Battle for ${regionName(catalog, b.target)} · ${b.step.replace(/_/g, " ")}`),
    h("p", {}, `${seatWord(ctx, b.attacker)} attacks with ${b.attackers.map((u) => unitName(catalog, u)).join(", ") || "—"}; ${b.defender >= 0 ? seatWord(ctx, b.defender) : `the ${catalog && catalog.races && catalog.races[b.defender_race] ? catalog.races[b.defender_race].id : "neutral"} giants`} defend with ${b.defenders.map((u) => unitName(catalog, u)).join(", ") || "—"}`),
    [["attacker", b.att, "attacker_roll"], ["defender", b.dfn, "defender_roll"]].map(([who, side, step]) => (side.dice.length
      ? h("div", { class: "bdice", "aria-label": `the ${who}'s dice` }, h("span", { class: "muted" }, `${who}: `),
        side.dice.map((kind, pos) => {
          const el = h("span", { class: "bdie-wrap" }, battleDie(catalog, kind, side.faces[pos], pos));
          if (b.step === step) pick.bind(el, `bdie:${pos}`, `${who}'s die ${pos + 1}: ${dieWords(catalog, kind, side.faces[pos])}`);
          return el;
        }))
      : null)),
    b.damage ? h("p", {}, `${b.damage} damage to assign`) : null) : null;

  root.append(h("div", { class: "game ag" },
    lastMove(ctx, describeEvent),
    pick.slot,
    h("p", { class: "df-round" }, h("b", {}, `Round ${view.round}`), ` · ${seatWord(ctx, view.active)} · ${view.phase}`,
      view.command ? h("span", { class: "muted" }, ` · ${view.command} (${view.budget} left)`) : null,
      view.endgame ? h("b", {}, " · endgame") : null),
    h("div", { class: "row stats-row pools" }, chip("OP pool A", view.pool_a, "vp"), chip("OP pool B", view.pool_b, "vp"),
      chip("resource deck", view.res_deck_count), chip("spell deck", view.spell_deck_count), chip("event deck", view.uni_deck_count),
      view.npc_races.length ? h("span", { class: "muted" }, `NPC giants: ${view.npc_races.join(", ")}`) : null),
    battle,
    h("div", { class: "map-wrap" }, svg),
    h("section", { class: "zone" }, h("h4", {}, "Events to claim"), draft),
    h("div", { class: "giant-players" }, players),
    pick.actions()));
}
