// boardgame.io's own Server (in-memory storage, socket.io transport) with a
// tic-tac-toe whose moves run on the server only (`client: false`).
// Usage: node server.js <game port> <lobby api port>
// Prints "listening" once both ports serve.
'use strict';
const { Server, Origins } = require('boardgame.io/server');
const { INVALID_MOVE } = require('boardgame.io/core');

const LINES = [
  [0, 1, 2], [3, 4, 5], [6, 7, 8],
  [0, 3, 6], [1, 4, 7], [2, 5, 8],
  [0, 4, 8], [2, 4, 6],
];

const TicTacToe = {
  name: 'tic-tac-toe',
  minPlayers: 2,
  maxPlayers: 2,
  setup: () => ({ cells: Array(9).fill(null) }),
  turn: { minMoves: 1, maxMoves: 1 },
  moves: {
    clickCell: {
      move: ({ G, playerID }, id) => {
        if (!Number.isInteger(id) || id < 0 || id > 8 || G.cells[id] !== null) {
          return INVALID_MOVE;
        }
        G.cells[id] = playerID;
      },
      client: false,
    },
  },
  endIf: ({ G, ctx }) => {
    const won = LINES.some(([a, b, c]) => G.cells[a] !== null && G.cells[a] === G.cells[b] && G.cells[a] === G.cells[c]);
    if (won) return { winner: ctx.currentPlayer };
    if (G.cells.every((c) => c !== null)) return { draw: true };
  },
};

const [port, apiPort] = process.argv.slice(2).map(Number);
const server = Server({ games: [TicTacToe], origins: [Origins.LOCALHOST] });
server
  .run({ port, lobbyConfig: { apiPort } })
  .then(() => console.log('listening'))
  .catch((e) => {
    console.error(e);
    process.exit(1);
  });
process.on('SIGTERM', () => process.exit(0));
