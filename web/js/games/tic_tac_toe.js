// Tic-tac-toe: a 3x3 board; an empty cell you may mark is a button.
import { h, pressable } from "../dom.js";

const MARK = { 1: "X", [-1]: "O", 0: "" };

export function describeMove(m) {
  return m.type === "place_mark" ? `Mark cell ${m.cell + 1} (row ${Math.floor(m.cell / 3) + 1}, column ${(m.cell % 3) + 1})` : m.type;
}

export function describeEvent(e, _catalog, ctx) {
  if (e.type === "mark_placed") {
    const who = ctx && e.seat === ctx.seat ? "You" : `Seat ${e.seat}`;
    return `${who} marked cell ${e.cell + 1} with ${e.seat === 0 ? "X" : "O"}`;
  }
  return e.type.replace(/_/g, " ");
}

export function render(root, ctx) {
  const byCell = new Map(ctx.legal.filter((m) => m.type === "place_mark").map((m) => [m.cell, m]));
  const last = (ctx.events || []).filter((e) => e.type === "mark_placed").map((e) => e.cell).pop();
  const size = 100;
  const svg = h("svg", { viewBox: `0 0 ${3 * size} ${3 * size}`, class: "board ttt", role: "grid", "aria-label": "board" });
  ctx.view.board.forEach((v, i) => {
    const x = (i % 3) * size;
    const y = Math.floor(i / 3) * size;
    const g = h("g", { class: `cell${i === last ? " last" : ""}`, "data-cell": String(i) },
      h("rect", { x: x + 2, y: y + 2, width: size - 4, height: size - 4, rx: 8 }),
      h("text", { x: x + size / 2, y: y + size / 2 + 18, "text-anchor": "middle", class: `mark m${v}` }, MARK[v]),
    );
    const move = byCell.get(i);
    if (move && ctx.myTurn) pressable(g, `mark cell ${i + 1}`, () => ctx.onMove(move));
    else g.setAttribute("aria-label", `cell ${i + 1}: ${MARK[v] || "empty"}`);
    svg.append(g);
  });
  root.append(svg);
}
