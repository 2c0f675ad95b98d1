// What both drivers (driver.js: boardgame.io; tabletop_driver.js: Tabletop)
// measure, in one place, so the two sides of the comparison count moves and
// take percentiles exactly alike.
'use strict';

// The q-th percentile of sorted values (nearest rank), or null for none.
function pct(sorted, q) {
  if (!sorted.length) return null;
  const k = Math.max(0, Math.min(sorted.length - 1, Math.round((q / 100) * sorted.length + 0.5) - 1));
  return sorted[k];
}

// Runs `loops` copies of `loop(k, deadline, latencies)` (each resolving to
// {moves, games}) for `seconds`, then prints the one JSON line the Python
// side reads: moves, games, seconds, moves per second, latency percentiles,
// and what `extra()` returns, if given (merged in).
async function runLoops(loops, seconds, loop, extra) {
  const latencies = [];
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const results = await Promise.all(Array.from({ length: loops }, (_, k) => loop(k, deadline, latencies)));
  const elapsed = (performance.now() - started) / 1000;
  const moves = results.reduce((a, r) => a + r.moves, 0);
  const games = results.reduce((a, r) => a + r.games, 0);
  latencies.sort((a, b) => a - b);
  console.log(JSON.stringify({
    loops, moves, games, seconds: elapsed, moves_per_s: moves / elapsed,
    latency: { n: latencies.length, p50_ms: pct(latencies, 50), p99_ms: pct(latencies, 99) },
    ...(extra ? extra() : {}),
  }));
}

module.exports = { pct, runLoops };
