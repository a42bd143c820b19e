// Search: find a guard by the source it guards, a graph node by its name, a local by its
// name, in the compile shown, and jump to the step that made it. The results are links
// of provenance.js (`data-guard`, `data-node`, `data-local`), so a jump reads like any
// other: a note where it lands, the thing followed marked, return goes back. Keyboard:
// "/" puts the cursor in the box, arrows choose, Enter goes, Escape leaves.
//
// searchIndex and searchCompile are pure (node tests them, tests/js/search.test.mjs).

import { guardStep, lastStep, memo, nodeStep } from "./recording.js";
import { h } from "./dom.js";
import { guardReading, readableSource } from "./guards.js";

export const SEARCH_RESULTS = 12;   // results listed; the rest are counted

const TYPE_ORDER = { node: 0, guard: 1, local: 2 };

/** What can be found in compile c: [{type, k, keys (lower case), label, detail, step}];
 * `k` is the guard's or node's index, or the local's name. Made once per compile. */
export function searchIndex(c) {
  return memo(c, "searchIndex", () => {
    const out = [];
    const last = lastStep(c);
    c.nodes.forEach((n, k) => {
      const names = [n.name, n.created_name].filter((x, j, a) => x && a.indexOf(x) === j);
      out.push({
        type: "node", k, keys: names.map((x) => x.toLowerCase()), label: n.name,
        detail: `${n.op} ${n.target}${n.created_name && n.created_name !== n.name ? ` (first named ${n.created_name})` : ""}`,
        step: nodeStep(c, k),
      });
    });
    c.guard_details.forEach((g, k) => {
      if (g.ambient) return;
      const r = guardReading(c, k);
      const src = g.source || (r.group.scope !== "other" ? r.group.key : null);
      if (!src) return;
      const keys = [src, readableSource(src), r.group.key, r.group.label].map((x) => x.toLowerCase())
        .filter((x, j, a) => a.indexOf(x) === j);
      const step = guardStep(c, k);
      out.push({ type: "guard", k, keys, label: readableSource(src), detail: r.kind, step: step ?? last, after: step == null });
    });
    const seen = new Set();
    c.steps.forEach((s, j) => {
      for (const name of Object.keys(s.locals)) {
        const key = `${s.code_name}\u0000${name}`;
        if (seen.has(key)) continue;
        seen.add(key);
        out.push({ type: "local", k: name, keys: [name.toLowerCase()], label: name, detail: `local of ${s.code_name}`, step: j });
      }
    });
    return out;
  });
}

/** How well an entry's keys match a query: 0 exact, 1 prefix, 2 at a word's start, 3
 * anywhere, null not at all. */
function score(keys, q) {
  let best = null;
  for (const key of keys) {
    const at = key.indexOf(q);
    if (at < 0) continue;
    const s = key === q ? 0 : at === 0 ? 1 : /[^a-z0-9]/.test(key[at - 1]) ? 2 : 3;
    if (best == null || s < best) best = s;
  }
  return best;
}

/** The entries of compile c matching `query` (case-insensitive), best first (exact, then
 * prefix, word start, anywhere; then nodes, guards, locals; then by step): {results
 * (at most `limit`), total}. */
export function searchCompile(c, query, limit = SEARCH_RESULTS) {
  const q = String(query || "").trim().toLowerCase();
  if (!q || !c) return { results: [], total: 0 };
  const found = [];
  for (const e of searchIndex(c)) {
    const s = score(e.keys, q);
    if (s != null) found.push({ e, s });
  }
  found.sort((a, b) => a.s - b.s || TYPE_ORDER[a.e.type] - TYPE_ORDER[b.e.type] || a.e.step - b.e.step ||
    String(a.e.k).localeCompare(String(b.e.k), undefined, { numeric: true }));
  return { results: found.slice(0, limit).map((f) => f.e), total: found.length };
}

// -- the box ----------------------------------------------------------------------------------

let searchCount = 0;

/** The search box of a viewer's root, a pane the Viewer paints like the others (it follows
 * the compile shown). Its results are provenance links: a click goes through the root. */
export function searchBox(root) {
  const id = `dl-search-${++searchCount}`;
  const input = h("input", {
    class: "dl-search-input", type: "search", placeholder: "search guards, nodes, locals  ( / )",
    "aria-label": "search this compile: a guard by its source, a graph node or a local by its name",
    role: "combobox", "aria-expanded": "false", "aria-controls": id, "aria-autocomplete": "list", spellcheck: "false",
  });
  const list = h("ul", { class: "dl-search-results", role: "listbox", id, hidden: true, "aria-label": "search results" });
  const el = h("div", { class: "dl-search", role: "search" }, input, list);
  let c = null, active = -1, items = [];

  function close() {
    list.hidden = true;
    input.setAttribute("aria-expanded", "false");
    input.removeAttribute("aria-activedescendant");
  }

  function choose(j) {
    items.forEach((li, n) => li.setAttribute("aria-selected", String(n === j)));
    active = j;
    if (j >= 0 && items[j]) {
      input.setAttribute("aria-activedescendant", items[j].id);
      items[j].scrollIntoView({ block: "nearest" });
    } else input.removeAttribute("aria-activedescendant");
  }

  function update() {
    const { results, total } = searchCompile(c, input.value);
    items = results.map((e, j) => h("li", {
      id: `${id}-${j}`, role: "option", class: `dl-result dl-result-${e.type}`, "aria-selected": "false",
      "data-guard": e.type === "guard" ? e.k : null, "data-guard-row": e.type === "guard" ? e.k : null,
      "data-node": e.type === "node" ? e.k : null,
      "data-local": e.type === "local" ? e.k : null, "data-at": e.type === "local" ? e.step : null,
      title: `go to step ${e.step}${e.after ? " (installed after tracing: shown from the last step)" : ""}`,
    }, h("span", { class: "dl-tag" }, e.type), h("code", { class: "dl-result-label" }, e.label),
    h("span", { class: "dl-dim dl-result-detail" }, e.detail), h("span", { class: "dl-dim dl-result-step" }, `step ${e.step}`)));
    const said = !input.value.trim() ? [] : !total ? [h("li", { class: "dl-faint", role: "presentation" }, "nothing in this compile matches")] :
      total > items.length ? [h("li", { class: "dl-faint", role: "presentation" }, `… and ${total - items.length} more: type more to narrow`)] : [];
    list.replaceChildren(...items, ...said);
    const open = !!input.value.trim();
    list.hidden = !open;
    input.setAttribute("aria-expanded", String(open));
    choose(items.length ? 0 : -1);
  }

  input.addEventListener("input", update);
  input.addEventListener("focus", () => { if (input.value.trim()) update(); });
  input.addEventListener("keydown", (e) => {
    e.stopPropagation();   // typing is the box's, not the viewer's keys (nor JupyterLab's)
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      if (list.hidden) return update();
      if (items.length) choose((active + (e.key === "ArrowDown" ? 1 : -1) + items.length) % items.length);
    } else if (e.key === "Enter") {
      e.preventDefault();
      const li = items[active >= 0 ? active : 0];
      if (li && !list.hidden) {
        li.click();   // the Viewer's root follows the link
        close();
        el.closest(".dl-viewer")?.focus({ preventScroll: true });   // the keys step again
      }
    } else if (e.key === "Escape") {
      e.preventDefault();
      if (!list.hidden) close();
      else el.closest(".dl-viewer")?.focus({ preventScroll: true });
    }
  });
  list.addEventListener("mousedown", (e) => e.preventDefault());   // the box keeps the focus while choosing
  list.addEventListener("click", () => close());
  input.addEventListener("blur", () => setTimeout(close, 0));

  // "/" anywhere in the viewer but a text field: the cursor to the box (registered before
  // the Viewer's own keys).
  root.addEventListener("keydown", (e) => {
    if (e.key !== "/" || e.ctrlKey || e.metaKey || e.altKey) return;
    const tag = e.target && e.target.tagName;
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;
    e.preventDefault();
    e.stopPropagation();
    input.focus();
    input.select();
  });

  return {
    el, input,
    selectCompile(compile) { c = compile.c; close(); },
    paint(view) { if (view.c !== c) { c = view.c; close(); } },
  };
}
