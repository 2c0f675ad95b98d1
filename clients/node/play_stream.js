// Plays one whole match from both seats over PlayMatch: one bidirectional
// stream per seat that both follows the match (its commit frames, with the
// seat's view) and carries the seat's moves, each answered by the frame that
// names its `ref`. Checks at every version that neither seat ever sees the
// other's hidden hand, and provokes refusals on purpose: each comes back as an
// error frame on the stream, which stays open.
//
//   node play_stream.js <match address> [game] [max moves]
//
// Prints one JSON line: the match id, moves played, the outcome, the reasons
// of the refusals, and what it checked.
"use strict";

const assert = require("node:assert/strict");
const { MatchClient } = require("./tabletop");
const { mentions, picker, secretsOf } = require("./checks");

const [address, game = "dwarves_duel", maxMovesText = "3000"] = process.argv.slice(2);
const MAX_MOVES = Number(maxMovesText);

const pick = picker(424242);

/** One seat's PlayMatch stream: every frame kept, answers found by ref. */
class Seat {
  constructor(client, matchId, metadata) {
    this.frames = [];
    this.waiting = new Map(); // ref -> resolve
    this.call = client.playMatch(metadata);
    this.ended = new Promise((resolve, reject) => {
      this.call.on("end", resolve);
      this.call.on("error", reject);
    });
    this.call.on("data", (frame) => {
      this.frames.push(frame);
      const resolve = frame.ref && this.waiting.get(frame.ref);
      if (resolve) {
        this.waiting.delete(frame.ref);
        resolve(frame);
      }
    });
    this.call.write({ open: { match_id: matchId, include_view: true } });
  }

  /** Send a move; resolves with the frame that answers it (commit, answer or error). */
  move(ref, move) {
    const answered = new Promise((resolve) => this.waiting.set(ref, resolve));
    this.call.write({ move: { ref, ...move } });
    return answered;
  }

  commits() {
    return this.frames.filter((f) => f.kind === "commit").map((f) => f.commit);
  }
}

async function main() {
  const client = new MatchClient(address);
  const checks = { watched: 0, hidden: 0, answered_by_commit: 0 };
  const refusals = {};
  try {
    const players = [
      await client.guestLogin({ name: "node-stream-a" }),
      await client.guestLogin({ name: "node-stream-b" }),
    ];
    const meta = players.map((p) => MatchClient.bearer(p.token));
    const created = await client.createMatch(
      { game, players: players.map((p) => p.player_id), idempotency_key: "node-stream-1" },
      meta[0],
    );
    const matchId = created.match_id;
    const seats = meta.map((m) => new Seat(client, matchId, m));

    const secretsAt = new Map(); // version -> [secrets of seat 0, of seat 1]
    let moves = 0;
    let refs = 0;
    let last = null;
    while (moves < MAX_MOVES) {
      const views = [];
      for (const seat of [0, 1]) views.push(await client.getMatch({ match_id: matchId }, meta[seat]));
      last = views[0];
      const parsed = views.map((v) => JSON.parse(v.view_json));
      secretsAt.set(last.version, [secretsOf(parsed[0], 0), secretsOf(parsed[1], 1)]);
      if (last.status === "MATCH_STATUS_FINISHED") break;
      const seat = last.awaiting.length === 1 ? last.awaiting[0] : pick(last.awaiting);
      const move = pick(views[seat].legal_moves_json);

      if (moves === 0 && last.awaiting.length === 1) {
        // Refusals are error frames with SubmitMove's code and reason; the
        // streams stay open and the next move goes through.
        const offTurn = await seats[1 - seat].move(`r${refs++}`, { move_json: move });
        assert.equal(offTurn.kind, "error");
        refusals.off_turn = offTurn.error.reason;
        refusals.off_turn_code = offTurn.error.code;
        const stale = await seats[seat].move(`r${refs++}`, {
          move_json: move,
          expected_version: last.version + 5,
        });
        assert.equal(stale.kind, "error");
        refusals.stale = stale.error.reason;
        refusals.stale_current = stale.error.metadata.current_version;
      }

      const ref = `r${refs++}`;
      const answer = await seats[seat].move(ref, {
        move_json: move,
        expected_version: last.version,
        idempotency_key: `${players[seat].player_id}:${last.version}`,
      });
      assert.notEqual(answer.kind, "error", JSON.stringify(answer.error));
      const version = answer.kind === "commit" ? answer.commit.version : answer.answer.version;
      assert.equal(version, last.version + 1);
      if (answer.kind === "commit") checks.answered_by_commit += 1;
      moves += 1;
    }
    assert.equal(last.status, "MATCH_STATUS_FINISHED", `finished within ${MAX_MOVES} moves`);
    // Each stream ends by itself after the match's last commit.
    await Promise.all(seats.map((s) => s.ended));

    for (const seat of [0, 1]) {
      const commits = seats[seat].commits();
      const versions = commits.map((c) => c.version);
      assert.deepEqual(versions, [...Array(last.version + 1).keys()], "every version, in order");
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
    console.log(
      JSON.stringify({
        match_id: matchId,
        moves,
        version: last.version,
        outcome: last.outcome,
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
