// Keeping what a step changed in view: each pane scrolls inside itself (never the page,
// never the notebook around it) to its current row or what the step added, and where
// not all of it fits, a badge in the pane says how much more is below ("3 new guards ↓").
//
// The Viewer paints every pane first and only then asks each to `reveal`, so the page is
// laid out once per step: every read here comes after every write of the paint.

import { h } from "./dom.js";

/** Scroll `body` (a pane's scrolling box) so that the elements `els` are in view: all of
 * them if they fit, else the first ones from the top. `centre` puts a single row in the
 * middle when it has to move. Returns how many of `els` stay below the visible area. */
export function scrollIntoPane(body, els, { centre = false } = {}) {
  const targets = els.filter((el) => el && el.isConnected);
  if (!targets.length || !body.clientHeight) return 0;
  const box = body.getBoundingClientRect();
  const rects = targets.map((el) => el.getBoundingClientRect());
  const top = Math.min(...rects.map((r) => r.top)) - box.top + body.scrollTop;
  const bottom = Math.max(...rects.map((r) => r.bottom)) - box.top + body.scrollTop;
  const view = body.clientHeight;
  const from = body.scrollTop, to = from + view;
  let next = from;
  if (bottom - top > view - 8) next = top - 4;                           // the first ones, from the top
  else if (top < from || bottom > to) next = centre ? (top + bottom - view) / 2 : (top < from ? top - 4 : bottom - view + 4);
  next = Math.max(0, Math.min(next, body.scrollHeight - view));
  if (Math.abs(next - from) >= 1) body.scrollTop = next;
  const end = next + view;
  return rects.filter((r) => r.bottom - box.top + from > end + 1).length;
}

/** The badge of a pane that says how many of the new entries are below its fold, and
 * scrolls to them when clicked. `say(n)` is the text for n entries (null hides it). */
export function belowBadge(paneEl, body) {
  const badge = h("button", { class: "dl-below", type: "button", hidden: true, title: "scroll down to them" });
  badge.addEventListener("click", (e) => {
    e.stopPropagation();
    body.scrollTop += body.clientHeight * 0.8;
  });
  paneEl.append(badge);
  return (text) => {
    if (text == null) {
      if (!badge.hidden) badge.hidden = true;
      return;
    }
    if (badge.textContent !== text) badge.textContent = text;
    if (badge.hidden) badge.hidden = false;
  };
}


/** Ask the graph pane to bring graph nodes `nodes` into its view (the ones drawn so far;
 * it leaves the view alone when one of them already shows). */
export function showNodes(root, nodes) {
  const graph = root.querySelector(".dl-graph");
  if (graph) graph.dispatchEvent(new CustomEvent("dl-show-nodes", { detail: { nodes } }));
}
