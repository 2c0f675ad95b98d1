// G concurrent loops of tic-tac-toe games against a boardgame.io server, each
// game a 9-move draw, create and join through the Lobby API included, each
// seat a socket.io client following the match live; a seat moves only once
// its own socket has received the previous move.
// Usage: node driver.js <game port> <api port> <G> <seconds>
// Prints one JSON line: moves, games, seconds, latency percentiles (ms).
'use strict';
const { runLoops } = require('./measure.js');
const { io } = require('socket.io-client');

const [port, apiPort, loops, seconds] = process.argv.slice(2).map(Number);
const GAME = 'tic-tac-toe';
const DRAW = [0, 1, 2, 4, 3, 5, 7, 6, 8]; // X O X O X O X O X: no line, a draw
const api = `http://127.0.0.1:${apiPort}/games/${GAME}`;

async function post(url, body) {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status} ${await r.text()}`);
  return r.json();
}

// One seat's socket: the latest state id it has seen per match, and waiters.
function seatSocket() {
  const socket = io(`http://127.0.0.1:${port}/${GAME}`, { transports: ['websocket'] });
  const seen = new Map();
  const waiters = [];
  const saw = (matchID, state) => {
    seen.set(matchID, state._stateID);
    for (let i = waiters.length - 1; i >= 0; i--) {
      const w = waiters[i];
      if (w.matchID === matchID && state._stateID >= w.stateID) {
        waiters.splice(i, 1);
        w.resolve();
      }
    }
  };
  socket.on('sync', (matchID, info) => saw(matchID, info.state));
  socket.on('update', (matchID, state) => saw(matchID, state));
  const until = (matchID, stateID) =>
    (seen.get(matchID) ?? -1) >= stateID
      ? Promise.resolve()
      : new Promise((resolve) => waiters.push({ matchID, stateID, resolve }));
  const connected = new Promise((resolve) => socket.once('connect', resolve));
  return { socket, seen, until, connected };
}

async function loop(k, deadline, latencies) {
  const seats = [seatSocket(), seatSocket()];
  await Promise.all(seats.map((s) => s.connected));
  let moves = 0;
  let games = 0;
  while (performance.now() < deadline) {
    const { matchID } = await post(`${api}/create`, { numPlayers: 2 });
    const creds = [];
    for (const playerID of ['0', '1']) {
      const j = await post(`${api}/${matchID}/join`, { playerID, playerName: `p${k}-${playerID}` });
      creds.push(j.playerCredentials);
    }
    seats.forEach((s, i) => s.socket.emit('sync', matchID, String(i), creds[i], 2));
    await Promise.all(seats.map((s) => s.until(matchID, 0)));
    let stateID = seats[0].seen.get(matchID);
    for (let i = 0; i < DRAW.length; i++) {
      const seat = i % 2;
      const playerID = String(seat);
      const t = performance.now();
      seats[seat].socket.emit(
        'update',
        { type: 'MAKE_MOVE', payload: { type: 'clickCell', args: [DRAW[i]], playerID, credentials: creds[seat] } },
        stateID,
        matchID,
        playerID,
      );
      stateID += 1;
      if (i + 1 < DRAW.length) await seats[1 - seat].until(matchID, stateID);
      else await Promise.all(seats.map((s) => s.until(matchID, stateID)));
      latencies.push(performance.now() - t);
      moves += 1;
    }
    seats.forEach((s) => s.seen.delete(matchID));
    games += 1;
  }
  seats.forEach((s) => s.socket.close());
  return { moves, games };
}

(async () => {
  await runLoops(loops, seconds, loop);
  process.exit(0);
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
