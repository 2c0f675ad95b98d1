// The same workload as driver.js, against Tabletop's match service, from
// Node: G concurrent loops of tic-tac-toe games, each game the same 9-move
// draw, created with CreateMatch, each seat a PlayMatch stream (@grpc/grpc-js)
// that follows the match live and carries the seat's moves; a seat moves only
// once its own stream has shown the previous move. One gRPC connection for
// all loops (as the Python driver's one channel).
// With `session` as the fifth argument, each seat is instead one PlaySession
// stream kept from game to game (as boardgame.io's socket per seat): the
// first seat creates each match on its session, both open a subscription to
// it, and the game ends when both have seen its last commit.
// Usage: node tabletop_driver.js <protos dir> <match address> <G> <seconds> [play|session]
// with one JSON list on stdin: per loop, the two players' [player id, token].
// Prints one JSON line: moves, games, seconds, latency percentiles (ms), and
// `phases`: the median of each part of a game (ms): `create` (CreateMatch),
// `open` (both streams opened until both showed version 0), `move` (each
// move but the last, sent until the next mover saw it), `last` (the last
// move until both streams ended; with sessions, until both seats saw it),
// `last_frame` (the last move until the other seat saw it).
'use strict';
const { pct, runLoops } = require('./measure.js');
const fs = require('node:fs');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const [protos, address, loopsText, secondsText, mode = 'play'] = process.argv.slice(2);
const loops = Number(loopsText);
const seconds = Number(secondsText);
const players = JSON.parse(fs.readFileSync(0, 'utf8'));
const DRAW = [0, 1, 2, 4, 3, 5, 7, 6, 8]; // X O X O X O X O X: no line, a draw
const MOVES = DRAW.map((c) => JSON.stringify({ type: 'place_mark', cell: c }));

const definition = protoLoader.loadSync('tabletop/match/v1/match.proto', {
  keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true, includeDirs: [protos],
});
const { MatchService } = grpc.loadPackageDefinition(definition).tabletop.match.v1;
const client = new MatchService(address, grpc.credentials.createInsecure());

function bearer(token) {
  const m = new grpc.Metadata();
  m.set('authorization', `Bearer ${token}`);
  return m;
}

function createMatch(ids, metadata) {
  return new Promise((resolve, reject) =>
    client.CreateMatch({ game: 'tic_tac_toe', players: ids }, metadata, (e, r) => (e ? reject(e) : resolve(r))));
}

// One seat's stream for one game: the last version it has shown, and waiters.
function seatStream(matchId, metadata) {
  const call = client.PlayMatch(metadata);
  const seat = { call, seen: -1, waiters: [] };
  seat.ended = new Promise((resolve, reject) => {
    call.on('end', resolve);
    call.on('error', reject);
  });
  call.on('data', (f) => {
    if (f.kind === 'error') {
      call.destroy(new Error(`move ${f.ref} refused: ${f.error.reason}`));
      return;
    }
    if (f.kind !== 'commit') return;
    seat.seen = f.commit.version;
    for (let i = seat.waiters.length - 1; i >= 0; i--) {
      const w = seat.waiters[i];
      if (seat.seen >= w.version) {
        seat.waiters.splice(i, 1);
        w.resolve();
      }
    }
  });
  seat.until = (version) =>
    seat.seen >= version ? Promise.resolve() : new Promise((resolve) => seat.waiters.push({ version, resolve }));
  call.write({ open: { match_id: matchId } });
  return seat;
}

const phases = { create: [], open: [], move: [], last: [], last_frame: [] };

function medians() {
  const out = {};
  for (const [name, values] of Object.entries(phases)) {
    values.sort((a, b) => a - b);
    out[name] = pct(values, 50);
  }
  return { phases: out };
}

// One seat's session: the last version seen per subscription, and waiters;
// the answer of each create by its ref.
function seatSession(metadata) {
  const call = client.PlaySession(metadata);
  const seat = { call, seen: new Map(), waiters: [], creates: new Map() };
  seat.ended = new Promise((resolve, reject) => {
    call.on('end', resolve);
    call.on('error', reject);
  });
  call.on('data', (f) => {
    if (f.kind === 'created' || (f.kind === 'error' && !f.sub)) {
      const answer = seat.creates.get(f.ref);
      seat.creates.delete(f.ref);
      if (f.kind === 'created') answer.resolve(f.created.match_id);
      else answer.reject(new Error(`create refused: ${f.error.reason}`));
      return;
    }
    if (f.kind === 'error') {
      call.destroy(new Error(`${f.sub} ${f.ref} refused: ${f.error.reason}`));
      return;
    }
    if (f.kind !== 'commit') return;
    const version = f.commit.version;
    seat.seen.set(f.sub, version);
    for (let i = seat.waiters.length - 1; i >= 0; i--) {
      const w = seat.waiters[i];
      if (w.sub === f.sub && version >= w.version) {
        seat.waiters.splice(i, 1);
        w.resolve();
      }
    }
  });
  seat.until = (sub, version) =>
    (seat.seen.get(sub) ?? -1) >= version
      ? Promise.resolve()
      : new Promise((resolve) => seat.waiters.push({ sub, version, resolve }));
  seat.create = (ref, ids) =>
    new Promise((resolve, reject) => {
      seat.creates.set(ref, { resolve, reject });
      call.write({ create: { ref, match: { game: 'tic_tac_toe', players: ids } } });
    });
  return seat;
}

async function sessionLoop(k, deadline, latencies) {
  const [[id0, token0], [id1, token1]] = players[k];
  const seats = [bearer(token0), bearer(token1)].map(seatSession);
  let moves = 0;
  let games = 0;
  while (performance.now() < deadline) {
    const created = performance.now();
    const sub = String(games);
    const matchId = await seats[0].create(sub, [id0, id1]);
    const opened = performance.now();
    phases.create.push(opened - created);
    seats.forEach((s) => s.call.write({ open: { sub, open: { match_id: matchId } } }));
    await Promise.all(seats.map((s) => s.until(sub, 0)));
    phases.open.push(performance.now() - opened);
    for (let i = 0; i < MOVES.length; i++) {
      const seat = i % 2;
      const t = performance.now();
      seats[seat].call.write({ move: { sub, move: { ref: String(i), move_json: MOVES[i] } } });
      await seats[1 - seat].until(sub, i + 1);
      if (i + 1 < MOVES.length) {
        phases.move.push(performance.now() - t);
      } else {
        phases.last_frame.push(performance.now() - t);
        await seats[seat].until(sub, i + 1); // both seats saw the match end
        phases.last.push(performance.now() - t);
      }
      latencies.push(performance.now() - t);
      moves += 1;
    }
    seats.forEach((s) => s.seen.delete(sub));
    games += 1;
  }
  seats.forEach((s) => s.call.end());
  await Promise.all(seats.map((s) => s.ended));
  return { moves, games };
}

async function loop(k, deadline, latencies) {
  const [[id0, token0], [id1, token1]] = players[k];
  const meta = [bearer(token0), bearer(token1)];
  let moves = 0;
  let games = 0;
  while (performance.now() < deadline) {
    const created = performance.now();
    const { match_id: matchId } = await createMatch([id0, id1], meta[0]);
    const opened = performance.now();
    phases.create.push(opened - created);
    const seats = meta.map((m) => seatStream(matchId, m));
    await Promise.all(seats.map((s) => s.until(0)));
    phases.open.push(performance.now() - opened);
    for (let i = 0; i < MOVES.length; i++) {
      const seat = i % 2;
      const t = performance.now();
      seats[seat].call.write({ move: { ref: String(i), move_json: MOVES[i] } });
      if (i + 1 < MOVES.length) {
        await seats[1 - seat].until(i + 1);
        phases.move.push(performance.now() - t);
      } else {
        await seats[1 - seat].until(i + 1);
        phases.last_frame.push(performance.now() - t);
        await Promise.all(seats.map((s) => s.ended)); // both streams end with the match
        phases.last.push(performance.now() - t);
      }
      latencies.push(performance.now() - t);
      moves += 1;
    }
    seats.forEach((s) => s.call.end());
    games += 1;
  }
  return { moves, games };
}

(async () => {
  await runLoops(loops, seconds, mode === 'session' ? sessionLoop : loop, medians);
  client.close();
  process.exit(0);
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
