// The page of each game: a module with render(root, ctx), and optionally
// describeMove(move, catalog) and describeEvent(event, catalog, ctx).
//
// ctx = {view, seat, legal, awaiting, myTurn, players, catalog, events,
//        onMove(move)} where `legal` is exactly the server's legal-move list:
// the client holds no rules, it only lets the player click one of them.
import * as generic from "./generic.js";

const loaders = {
  tic_tac_toe: () => import("./tic_tac_toe.js"),
  dwarves_duel: () => import("./dwarves_duel.js"),
  dice_forge: () => import("./dice_forge.js"),
  arcane_academy: () => import("./arcane_academy.js"),
  assault_of_the_giants: () => import("./assault_of_the_giants.js"),
};

export async function gameModule(game) {
  const load = loaders[game];
  if (!load) return generic;
  try {
    const m = await load();
    return { ...generic, ...m };
  } catch (e) {
    console.warn(`no page for ${game}:`, e);
    return generic;
  }
}
