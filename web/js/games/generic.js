// What every game falls back to: moves and events described in words from
// their fields (empty fields left out), and the view as a readable outline.
import { h, words } from "../dom.js";

function value(v) {
  if (Array.isArray(v)) return v.map(value).join(", ");
  if (v && typeof v === "object") return Object.entries(v).map(([k, x]) => `${words(k)} ${value(x)}`).join(", ");
  return String(v);
}

function empty(v) {
  return v === "" || v === null || v === undefined || (Array.isArray(v) && v.length === 0);
}

export function describeFields(obj, skip = ["type"]) {
  return Object.entries(obj)
    .filter(([k, v]) => !skip.includes(k) && !empty(v))
    .map(([k, v]) => `${k.replace(/_/g, " ")} ${value(v)}`)
    .join(" · ");
}

export function describeMove(move) {
  const rest = describeFields(move);
  return rest ? `${words(move.type)}: ${rest}` : words(move.type);
}

export function describeEvent(event) {
  const rest = describeFields(event);
  return rest ? `${words(event.type)}: ${rest}` : words(event.type);
}

function outline(v, depth = 0) {
  if (v === null || typeof v !== "object") return h("span", {}, String(v));
  if (Array.isArray(v)) {
    if (v.every((x) => x === null || typeof x !== "object")) return h("span", {}, v.length ? v.join(", ") : "—");
    return h("ol", {}, v.map((x) => h("li", {}, outline(x, depth + 1))));
  }
  return h("dl", { class: "outline" }, Object.entries(v).flatMap(([k, x]) => [h("dt", {}, words(k)), h("dd", {}, outline(x, depth + 1))]));
}

export function render(root, ctx) {
  root.append(h("div", { class: "generic-view" }, outline(ctx.view)));
}
