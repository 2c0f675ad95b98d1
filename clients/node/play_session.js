// Plays two whole matches at once from both seats over PlaySession: one
// bidirectional stream per player for the whole session, on which it creates
// the matches, follows each under a subscription of its own (commit frames
// with the seat's view and turn) and sends the seat's moves, each answered by
// the frame that names its subscription and `ref`. The seat to move and its
// legal moves come from the turn on each commit: no other call is made.
// Checks at every version that neither seat ever sees the other's hidden
// hand, provokes refusals on purpose (error frames; the session stays open),
// then half-closes: each session ends by itself once its matches have.
//
//   node play_session.js <match address> [game] [max moves per match]
//
// Prints one JSON line: the match ids, moves played, each outcome, the
// reasons of the refusals, and what it checked.
"use strict";

const assert = require("node:assert/strict");
const { MatchClient } = require("./tabletop");
const { mentions, picker, secretsOf } = require("./checks");

const [address, game = "dwarves_duel", maxMovesText = "3000"] = process.argv.slice(2);
const MAX_MOVES = Number(maxMovesText);
const SUBS = ["a", "b"];

const pick = picker(97531);

/** One player's session: every frame kept by subscription, answers by ref. */
class Session {
  constructor(client, metadata) {
    this.frames = new Map(); // sub -> frames
    this.waiting = new Map(); // `${sub}/${ref}` -> resolve
    this.listeners = [];
    this.call = client.playSession(metadata);
    this.ended = new Promise((resolve, reject) => {
      this.call.on("end", resolve);
      this.call.on("error", reject);
    });
    this.call.on("data", (frame) => {
      if (!this.frames.has(frame.sub)) this.frames.set(frame.sub, []);
      this.frames.get(frame.sub).push(frame);
      const key = `${frame.sub}/${frame.ref}`;
      const resolve = frame.ref && this.waiting.get(key);
      if (resolve) {
        this.waiting.delete(key);
        resolve(frame);
      }
      for (const listener of this.listeners) listener(frame);
    });
  }

  answer(sub, ref) {
    return new Promise((resolve) => this.waiting.set(`${sub}/${ref}`, resolve));
  }

  create(ref, request) {
    const answered = this.answer("", ref);
    this.call.write({ create: { ref, match: request } });
    return answered;
  }

  open(sub, matchId) {
    this.call.write({ open: { sub, open: { match_id: matchId, include_view: true, include_turn: true } } });
  }

  move(sub, ref, move) {
    const answered = this.answer(sub, ref);
    this.call.write({ move: { sub, move: { ref, ...move } } });
    return answered;
  }

  commits(sub) {
    return (this.frames.get(sub) || []).filter((f) => f.kind === "commit").map((f) => f.commit);
  }

  /** Resolves with the first commit of `sub` at `version` or later. */
  until(sub, version) {
    const seen = this.commits(sub).find((c) => c.version >= version);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => {
      const listener = (f) => {
        if (f.sub === sub && f.kind === "commit" && f.commit.version >= version) {
          this.listeners.splice(this.listeners.indexOf(listener), 1);
          resolve(f.commit);
        }
      };
      this.listeners.push(listener);
    });
  }
}

async function playOne(sessions, players, sub, checks, refusals) {
  let refs = 0;
  let moves = 0;
  let version = 0;
  const secretsAt = new Map(); // version -> [secrets of seat 0, of seat 1]
  for (;;) {
    const seen = await Promise.all(sessions.map((s) => s.until(sub, version)));
    assert.deepEqual(seen.map((c) => c.version), [version, version]);
    const views = seen.map((c) => JSON.parse(c.view_json));
    secretsAt.set(version, [secretsOf(views[0], 0), secretsOf(views[1], 1)]);
    if (seen[0].status === "MATCH_STATUS_FINISHED") break;
    assert.ok(moves < MAX_MOVES, `finished within ${MAX_MOVES} moves`);
    const awaiting = seen[0].turn.awaiting;
    const seat = awaiting.length === 1 ? awaiting[0] : pick(awaiting);
    const turn = seen[seat].turn;
    assert.equal(turn.your_seat, seat);
    const move = pick(turn.legal_moves_json);
    if (moves === 0 && sub === SUBS[0] && awaiting.length === 1) {
      const offTurn = await sessions[1 - seat].move(sub, `r${refs++}`, { move_json: move });
      assert.equal(offTurn.kind, "error");
      refusals.off_turn = offTurn.error.reason;
      const notOpen = await sessions[seat].move("nowhere", `r${refs++}`, { move_json: move });
      assert.equal(notOpen.kind, "error");
      refusals.not_subscribed = notOpen.error.reason;
    }
    const answer = await sessions[seat].move(sub, `r${refs++}`, {
      move_json: move,
      expected_version: version,
      idempotency_key: `${players[seat].player_id}:${sub}:${version}`,
    });
    assert.notEqual(answer.kind, "error", JSON.stringify(answer.error));
    assert.equal(answer.kind === "commit" ? answer.commit.version : answer.answer.version, version + 1);
    if (answer.kind === "commit") checks.answered_by_commit += 1;
    moves += 1;
    version += 1;
  }
  for (const seat of [0, 1]) {
    const commits = sessions[seat].commits(sub);
    assert.deepEqual(commits.map((c) => c.version), [...Array(version + 1).keys()], "every version, in order");
    for (const commit of commits) {
      const secrets = secretsAt.get(commit.version)[1 - seat];
      const text = commit.view_json + commit.events_json.join("\n");
      assert.deepEqual(mentions(text, secrets), [], `version ${commit.version}`);
      checks.hidden += secrets.length;
      if (commit.seat !== undefined && commit.seat !== seat) {
        assert.equal(commit.move_json, "", "another seat's move text is not shown");
      }
      checks.watched += 1;
    }
  }
  return { moves, version, outcome: sessions[0].commits(sub).at(-1).outcome };
}

async function main() {
  const client = new MatchClient(address);
  const checks = { watched: 0, hidden: 0, answered_by_commit: 0 };
  const refusals = {};
  try {
    const players = [
      await client.guestLogin({ name: "node-session-a" }),
      await client.guestLogin({ name: "node-session-b" }),
    ];
    const sessions = players.map((p) => new Session(client, MatchClient.bearer(p.token)));
    const ids = players.map((p) => p.player_id);
    const matches = [];
    for (const sub of SUBS) {
      const created = await sessions[0].create(sub, { game, players: ids });
      assert.equal(created.kind, "created", JSON.stringify(created.error));
      matches.push(created.created.match_id);
      for (const s of sessions) s.open(sub, created.created.match_id);
    }
    // both matches at once, on the same two streams
    const results = await Promise.all(SUBS.map((sub) => playOne(sessions, players, sub, checks, refusals)));
    for (const s of sessions) s.call.end(); // each session ends once its matches have
    await Promise.all(sessions.map((s) => s.ended));
    console.log(
      JSON.stringify({
        match_ids: matches,
        moves: results.map((r) => r.moves),
        versions: results.map((r) => r.version),
        outcomes: results.map((r) => r.outcome),
        refusals,
        checks,
      }),
    );
  } finally {
    client.close();
  }
}

main().catch((error) => {
  console.error(error && error.stack ? error.stack : error);
  process.exit(1);
});
