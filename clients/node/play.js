// Plays one whole match from both seats against a running match service and
// checks, at every version, that neither seat ever sees the other's hidden
// hand (in its GetMatch view, or in the events and views of its WatchMatch).
//
//   node play.js <match address> [game] [max moves]
//
// Prints one JSON line: the match id, moves played, the outcome, the reasons
// of the rejections it provoked on purpose, and what it checked.
"use strict";

const assert = require("node:assert/strict");
const { MatchClient, errorInfo, grpc } = require("./tabletop");
const { mentions, picker, secretsOf: handSecrets } = require("./checks");

const [address, game = "dwarves_duel", maxMovesText = "3000"] = process.argv.slice(2);
const MAX_MOVES = Number(maxMovesText);

const pick = picker(12345);

// The secrets of a seat's own hand, which its own view must show.
function secretsOf(view, seat) {
  assert.ok(Array.isArray(view.players[seat].hand), `seat ${seat} sees its own hand`);
  return handSecrets(view, seat);
}

async function rejection(promise) {
  try {
    await promise;
  } catch (error) {
    return { code: grpc.status[error.code], info: errorInfo(error) };
  }
  throw new Error("the call was expected to fail");
}

async function main() {
  const client = new MatchClient(address);
  const checks = { views: 0, watched: 0, hidden: 0 };
  const rejections = {};
  try {
    // GuestLogin needs no token.
    const players = [
      await client.guestLogin({ name: "node-a" }),
      await client.guestLogin({ name: "node-b" }),
    ];
    // A token is renewed with RefreshToken (the same player id, a new expiry).
    const renewed = await client.refreshToken({}, MatchClient.bearer(players[0].token));
    assert.equal(renewed.player_id, players[0].player_id);
    assert.ok(Date.parse(renewed.expires_at) >= Date.parse(players[0].expires_at));
    players[0] = { ...players[0], token: renewed.token };
    const meta = players.map((p) => MatchClient.bearer(p.token));

    // Rejections carry a reason a client can switch on.
    const anonymous = await rejection(client.getMatch({ match_id: "nope" }));
    assert.equal(anonymous.code, "UNAUTHENTICATED");
    rejections.anonymous = anonymous.info.reason;
    const forged = await rejection(client.refreshToken({}, MatchClient.bearer("not.a.jwt")));
    rejections.forged = forged.info.reason;

    const created = await client.createMatch(
      { game, players: players.map((p) => p.player_id), idempotency_key: "node-1" },
      meta[0],
    );
    const matchId = created.match_id;
    const missing = await rejection(client.getMatch({ match_id: "0".repeat(26) }, meta[0]));
    rejections.missing = missing.info.reason;

    // Both seats watch with their views; the streams end with the match.
    const watched = [[], []];
    const streams = meta.map(
      (m, seat) =>
        new Promise((resolve, reject) => {
          const call = client.watchMatch({ match_id: matchId, include_view: true }, m);
          call.on("data", (commit) => watched[seat].push(commit));
          call.on("end", resolve);
          call.on("error", reject);
        }),
    );

    const secretsAt = new Map(); // version -> [secrets of seat 0, of seat 1]
    let moves = 0;
    let last = null;
    let offTurnTried = false;
    while (moves < MAX_MOVES) {
      const views = [];
      for (const seat of [0, 1]) {
        const m = await client.getMatch({ match_id: matchId }, meta[seat]);
        assert.equal(m.your_seat, seat, "your_seat is set, seat 0 included");
        views.push(m);
      }
      assert.equal(views[0].version, views[1].version);
      last = views[0];
      const parsed = views.map((v) => JSON.parse(v.view_json));
      const secrets = [secretsOf(parsed[0], 0), secretsOf(parsed[1], 1)];
      secretsAt.set(last.version, secrets);
      for (const seat of [0, 1]) {
        const other = 1 - seat;
        assert.equal(parsed[seat].players[other].hand, null, "the other hand is hidden");
        assert.equal(parsed[seat].players[other].hand_count, parsed[other].players[other].hand.length);
        assert.deepEqual(mentions(views[seat].view_json, secrets[other]), [], "no secret card");
        checks.views += 1;
        checks.hidden += secrets[other].length;
      }
      if (last.status === "MATCH_STATUS_FINISHED") break;
      const seat = last.awaiting.length === 1 ? last.awaiting[0] : pick(last.awaiting);
      if (!offTurnTried && last.awaiting.length === 1) {
        offTurnTried = true;
        const offTurn = await rejection(
          client.submitMove(
            { match_id: matchId, move_json: views[seat].legal_moves_json[0] },
            meta[1 - seat],
          ),
        );
        rejections.off_turn = offTurn.info.reason;
      }
      const move = pick(views[seat].legal_moves_json);
      const reply = await client.submitMove(
        {
          match_id: matchId,
          move_json: move,
          expected_version: last.version,
          idempotency_key: `${players[seat].player_id}:${last.version}`,
        },
        meta[seat],
      );
      assert.equal(reply.version, last.version + 1);
      moves += 1;
      if (moves === 1) {
        // A stale expected_version is refused with the current version.
        const stale = await rejection(
          client.submitMove(
            { match_id: matchId, move_json: move, expected_version: 0, idempotency_key: "x" },
            meta[seat],
          ),
        );
        rejections.stale = stale.info.reason;
        rejections.stale_current = stale.info.metadata.current_version;
      }
    }
    assert.equal(last.status, "MATCH_STATUS_FINISHED", `finished within ${MAX_MOVES} moves`);
    await Promise.all(streams);

    // Every commit each seat watched: its events and view hold none of the
    // other seat's secret cards at that version.
    for (const seat of [0, 1]) {
      const versions = watched[seat].map((c) => c.version);
      assert.deepEqual(versions, [...Array(last.version + 1).keys()], "every version, in order");
      assert.equal(watched[seat][0].seat, undefined, "the creation commit has no seat");
      for (const commit of watched[seat]) {
        const secrets = secretsAt.get(commit.version)[1 - seat];
        const text = commit.view_json + commit.events_json.join("\n");
        assert.deepEqual(mentions(text, secrets), [], `version ${commit.version}`);
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
        rejections,
        checks,
      }),
    );
  } finally {
    client.close();
  }
}

main().catch((error) => {
  console.error(error && error.stack ? error.stack : error);
  if (error && error.metadata) console.error("ErrorInfo:", JSON.stringify(errorInfo(error)));
  process.exit(1);
});
