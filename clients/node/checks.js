// What the example clients check and how they choose, in one place: a
// reproducible pick among legal moves, and the cards of a seat's hand that
// the other seat must never see.
"use strict";

/** A deterministic pick among a list (a small LCG from `seed`): reproducible runs. */
function picker(seed) {
  let state = seed;
  return (list) => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return list[state % list.length];
  };
}

// The cards a seat holds that the other seat must not know: its hand minus
// the cards both know (taken openly). Dwarves Duel's view: players[s].hand is
// a list for the viewer's own seat and null for the other; a game without
// hands in its view has none to check.
function secretsOf(view, seat) {
  const me = view.players && view.players[seat];
  if (!me || !Array.isArray(me.hand)) return [];
  const known = new Set(me.known_hand);
  return me.hand.filter((c) => !known.has(c));
}

/** The cards of `cards` that `text` names. */
function mentions(text, cards) {
  return cards.filter((c) => text.includes(JSON.stringify(c)));
}

module.exports = { mentions, picker, secretsOf };
