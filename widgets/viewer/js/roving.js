// One tab stop per pane. A pane's body (dom.js's `pane`) is the stop: Tab reaches it once,
// whatever it holds (a bytecode row per instruction, a guard per line, a graph node per
// node), and ↓ ↑ move the focus between the things inside it that can be focused; Enter
// follows the one focused (viewer.js), Tab goes on to the next pane. Everything focusable
// inside a body is taken out of the tab order as it is put in the page (panes add rows
// at every step), so no pane has to remember to.

import { scrollIntoPane, showNodes } from "./scroll.js";

/** What can take the focus inside a pane's body. */
export const ITEM = "[tabindex], button, a[href], input, select, textarea, summary";
/** A pane's body: the one tab stop of its pane. */
export const STOP = ".dl-pane-body";

/** Take `el` and everything focusable under it out of the tab order, where it lies in a
 * pane's body (the body itself stays the stop). */
export function demote(el) {
  if (el.nodeType !== 1) return;
  const inBody = el.matches(STOP) || el.closest(STOP);
  const all = el.querySelectorAll ? [...el.querySelectorAll(ITEM)] : [];
  if (inBody && el.matches(ITEM)) all.unshift(el);
  for (const x of all) {
    if (x.matches(STOP) || !x.parentElement || !x.parentElement.closest(STOP)) continue;
    if (x.getAttribute("tabindex") !== "-1") x.setAttribute("tabindex", "-1");
  }
}

/** The items of a pane's body that are shown, in the order of the page. */
export function itemsOf(body) {
  // A closed fold's content keeps its boxes (content-visibility), so rects alone do not say.
  const shown = (x) => (x.checkVisibility ? x.checkVisibility() : x.getClientRects().length > 0);
  return [...body.querySelectorAll(ITEM)].filter((x) => x !== body && shown(x));
}

/** Where ↓ (dir 1) or ↑ (dir -1) takes the focus from `at`, in the body `body`: from the
 * body itself to the current row if it has one (else the first item shown), otherwise to
 * the next or previous item. null when there is nowhere to go. */
export function nextItem(body, at, dir) {
  const items = itemsOf(body);
  if (!items.length) return null;
  if (at === body) {
    const current = items.find((x) => x.getAttribute("aria-current")) ||
      items.find((x) => x.closest("[aria-current]"));
    if (current) return current;
    const top = body.getBoundingClientRect().top;
    return (dir > 0 ? items.find((x) => x.getBoundingClientRect().bottom > top) : null) || items[dir > 0 ? 0 : items.length - 1];
  }
  const j = items.indexOf(at);
  if (j < 0) return items[0];
  return items[j + dir] || null;
}

/** Keep `root`'s panes at one tab stop each: returns {keep()} to call around a paint,
 * which puts the focus back on the pane's body when the row that had it was redrawn away. */
export function rovingPanes(root) {
  const observer = new MutationObserver((records) => {
    for (const r of records) {
      if (r.type === "attributes") demote(r.target);
      else for (const n of r.addedNodes) demote(n);
    }
  });
  observer.observe(root, { childList: true, subtree: true, attributes: true, attributeFilter: ["tabindex"] });
  demote(root);
  root.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const at = document.activeElement;
    const body = at && at.closest && at.closest(STOP);
    if (!body || !root.contains(body)) return;
    if (e.key === "Tab" && e.shiftKey && at !== body) {
      body.focus({ preventScroll: true });   // Shift+Tab leaves the pane, not back to its stop
      return;
    }
    if ((e.key !== "ArrowDown" && e.key !== "ArrowUp") || e.shiftKey) return;
    if (at.tagName === "INPUT" || at.tagName === "SELECT" || at.tagName === "TEXTAREA") return;
    const to = nextItem(body, at, e.key === "ArrowDown" ? 1 : -1);
    e.preventDefault();
    e.stopPropagation();
    if (to) {
      // in view inside its pane only (never the page, nor the column around the pane);
      // a graph node by moving the graph's camera to it
      to.focus({ preventScroll: true });
      if (to.matches(".dl-graph g.node[data-node]")) showNodes(root, [Number(to.dataset.node)]);
      else scrollIntoPane(body, [to]);
    }
  });
  let held = null;   // the body whose item had the focus before a paint
  return {
    before() {
      const at = document.activeElement;
      held = at && at.closest && root.contains(at) ? at.closest(STOP) : null;
    },
    after() {
      if (held && held.isConnected && !root.contains(document.activeElement)) held.focus({ preventScroll: true });
      held = null;
    },
    stop() { observer.disconnect(); },
  };
}
