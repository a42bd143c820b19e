// The shapes pane: what the compile's shape environment knew at the step shown (the
// recording's `shapes`, capture/shapes.py). Each input's dimensions as static, dynamic or
// unbacked, with the symbol that stands for a dynamic one from the step that made it and
// its range; a specialization said where it happens (`s77 became 4 here: line 3, a
// broadcast`); the symbolic guards added so far, the new ones marked, each a button
// (`data-shape-guard`) to the step that added it. It shares the guards' place in the
// layout: a button in either title shows the other.
//
// Symbols elsewhere link here: a symbol in the stack (`.dl-sym`, help.js `withSymbols`)
// or in a guard row shows this pane with the symbol lit; hovering one, or a graph node
// (a symbol's placeholder, a tensor of shape [s77, 3]), lights it while this pane shows.
// Every word of dynamic shapes explains itself on hover (`data-help-term`,
// capture/help.json `terms`). Program text is text, never markup.

import { h, pane, plural, resetPane, setTitle, sync, textRow } from "../dom.js";
import { scrollIntoPane } from "../scroll.js";
import { becameText, newAt, SYMBOL, shapesAt, shapeStepButton, shapeTerm, symbolsIn, withTerms } from "../shapes.js";

/** Past this many inputs whose every size is static, they fold into one row. */
const FOLD_STATIC = 3;

// -- painting ---------------------------------------------------------------------------------

function shapeDimRow(d) {
  const head = [h("code", null, d.dim != null ? `[${d.dim}]` : d.source), " "];
  if (d.state === "static") {
    const why = d.how && d.how !== "static" ? d.how : null;
    return [...head, shapeTerm("static", "static", "dl-term dl-state dl-static"), " ", h("code", null, String(d.value)),
      why ? [" · ", shapeTerm(why === "0/1 specialization" ? why : "specialized", why, "dl-term")] : null];
  }
  const parts = [...head, shapeTerm(d.state === "specialized" ? "specialized" : d.state === "unbacked" ? "unbacked" : "dynamic",
    d.state, `dl-term dl-state dl-${d.state}`), " "];
  if (!d.made) {
    parts.push(h("span", { class: "dl-faint" }, `its symbol ${d.symbol} is made at `), shapeStepButton(d.madeAt, `step ${d.madeAt}`, d.symbol));
  } else {
    parts.push(withTerms(d.symbol));
    if (d.became) parts.push(" = ", withTerms(d.became.to));
    if (d.range) parts.push(" ", shapeTerm("range", d.range, "dl-term dl-range"), d.final ? "" : h("span", { class: "dl-faint" }, " by the end"));
    if (d.isNew) parts.push(" ", h("span", { class: "dl-tag dl-new-tag" }, "made here"));
  }
  const how = d.how && !["specialized", "static"].includes(d.how) ? d.how : d.marks.join(", ");
  if (how) parts.push(" · ", shapeTerm(how, how, "dl-term dl-how"));
  parts.push(" · ", d.state === "unbacked" ? h("span", { class: "dl-dim" }, `${d.size} on this call, no hint`) :
    shapeTerm("hint", `${d.size} on this call`, "dl-term dl-dim"));
  const lines = [h("div", { class: "dl-shape-dim-head" }, parts)];
  if (d.made && d.shared.length) {
    lines.push(h("div", { class: "dl-shape-note" }, "one symbol with ", d.shared.map((s, j) => [j ? ", " : "", h("code", null, s)]),
      d.policy === "DUCK" ? [": ", shapeTerm("duck shaping", "duck shaping"), " (equal sizes, one symbol)"] : ""));
  }
  if (d.became && !d.became.here) {
    lines.push(h("div", { class: "dl-shape-note" }, withTerms(becameText(d.became)), " ",
      d.became.step != null && d.became.step >= 0 ? shapeStepButton(d.became.step, "go", d.symbol) : null));
  }
  return lines;
}

function shapeGuardRow(g, flashed) {
  const where = [g.step != null ? `step ${g.step}` : null, g.line != null ? `line ${g.line}${g.code ? `: ${g.code}` : ""}` : null,
    g.why ? withTerms(g.why) : null, g.oblivious ? shapeTerm("size_oblivious", "size-oblivious") : null]
    .filter(Boolean).map((x, j) => [j ? " · " : "", x]);
  return {
    key: `sg${g.j}`,
    cls: [g.isNew ? "dl-new" : "", flashed === g.j ? "dl-flash" : ""].join(" ").trim(),
    make: () => h("li", { "data-shape-row": g.j },
      h("button", { type: "button", class: "dl-link dl-shape-guard", "data-shape-guard": g.j,
        title: g.step != null ? `added at step ${g.step}: click to go there` : "added when the graph was compiled: click to go to the last step" },
      withTerms(g.expr)),
      g.isNew ? [" ", h("span", { class: "dl-tag dl-new-tag" }, "new")] : null,
      where.length ? h("span", { class: "dl-where dl-dim" }, " ", where) : null),
  };
}

/** The pane. `root`: the viewer's root (links from the other panes); `guards`: the guards
 * pane's element, whose place this pane shares. */
export function shapesPane(root, guards) {
  const p = pane("dl-shapes", "Shapes");
  let showing = false, last = null, lit = null, openStatic = false;
  const toShapes = h("button", { type: "button", class: "dl-pane-switch", title: "show the shapes: symbols, ranges, symbolic guards" }, "Shapes");
  const toGuards = h("button", { type: "button", class: "dl-pane-switch", title: "show the guards" }, "Guards");
  guards.classList.add("dl-has-switch");
  p.el.classList.add("dl-has-switch");
  guards.append(toShapes);
  p.el.append(toGuards);

  function show(on) {
    showing = on;
    p.el.hidden = !on;
    guards.hidden = on;
    if (on && last) { paint(last); reveal(); }
  }
  show(false);
  toShapes.addEventListener("click", () => { show(true); toGuards.focus({ preventScroll: true }); });
  toGuards.addEventListener("click", () => { show(false); toShapes.focus({ preventScroll: true }); });

  /** Light the rows of symbol `names` (a name or a list; null: none) here. */
  function light(names, scroll = false) {
    lit = names;
    for (const el of p.body.querySelectorAll(".dl-lit")) el.classList.remove("dl-lit");
    const wanted = new Set([].concat(names || []));
    if (!wanted.size) return;
    const rows = [...p.body.querySelectorAll("[data-shape-symbol]")].filter((el) => wanted.has(el.dataset.shapeSymbol))
      .map((el) => el.closest(".dl-shape-dim, li, .dl-shape-became") || el);
    for (const el of rows) el.classList.add("dl-lit");
    if (scroll && rows.length) scrollIntoPane(p.body, rows);
  }

  // The symbols of the other panes: the one under the pointer or focus is lit here; a
  // click (or Enter) on one shows this pane with it lit.
  const symbolAt = (t) => {
    if (!t || !t.closest || p.el.contains(t)) return null;
    const sym = t.closest(".dl-sym[data-help-symbol]");
    if (sym) return sym.dataset.helpSymbol;
    const node = t.closest(".dl-graph [data-node]");
    if (node && last) {   // a graph node: the symbol it is, and those of its shape
      const n = last.c.nodes[Number(node.dataset.node)];
      return n ? [...(SYMBOL.test(n.name) ? [n.name] : []), ...symbolsIn(n.shape)] : null;
    }
    return null;
  };
  const hover = (e) => { if (showing && !p.el.contains(e.target)) light(symbolAt(e.target)); };   // inside: it stays
  root.addEventListener("mouseover", hover);
  root.addEventListener("focusin", hover);
  // Capturing, so the symbol's own link runs before its row's (a guard's, in the guards pane).
  root.addEventListener("click", (e) => {
    const t = e.target && e.target.closest ? e.target.closest(".dl-sym[data-help-symbol]") : null;
    if (!t || p.el.contains(t)) return;
    e.stopImmediatePropagation();   // the symbol's own link, not its row's
    show(true);
    light(t.dataset.helpSymbol, true);
  }, true);
  root.addEventListener("keydown", (e) => {
    const t = e.target;
    if (e.key !== "Enter" || !t.classList || !t.classList.contains("dl-sym") || p.el.contains(t)) return;
    e.preventDefault();
    e.stopImmediatePropagation();
    show(true);
    light(t.dataset.helpSymbol, true);
  }, true);

  function paint(view) {
    last = view;
    const news = newAt(view.c, view.i);   // the guards' button says when the shapes changed here
    if (toShapes.classList.contains("dl-news") !== !!news) {
      toShapes.classList.toggle("dl-news", !!news);
      toShapes.textContent = news ? "Shapes •" : "Shapes";
      toShapes.title = news ? `this step ${news}: show the shapes` : "show the shapes: symbols, ranges, symbolic guards";
    }
    // A link that led to a guard (the guard tree, a search, a recompile's reason) shows the guards.
    if (showing && view.flash && view.flash.guard != null) show(false);
    if (!showing) return;
    const { c, k, i, flash } = view;
    const s = shapesAt(c, i);
    const flashed = flash && flash.shapeGuard != null ? flash.shapeGuard : null;
    const title = s.state === "shapes" ? `· ${plural(s.symbols, "symbol")} · ${plural(s.guards.length + s.after.length, "guard")}` +
      (s.fresh ? ` · ${s.fresh} new` : "") : "";
    setTitle(p, `${k}|${title}`, () => ["Shapes ", h("span", { class: "dl-dim" }, title)]);
    if (s.state === "old") return sync(p.body, [textRow("dl-faint", "This recording was made before shapes were recorded: record it again to see its symbols and symbolic guards.")]);
    if (s.state === "none") return sync(p.body, [textRow("dl-faint", "Dynamo made no shape environment for this compile: no symbol, no symbolic guard.")]);
    if (s.state === "static") {
      const sizes = s.inputs.map((x) => `${x.input} [${x.dims.map((d) => d.value).join(", ")}]`).join(", ");
      const why = [...new Set(s.inputs.flatMap((x) => x.dims.map((d) => d.how)).filter((w) => w && w !== "static"))];
      return sync(p.body, [{
        key: `static:${sizes}:${why}`,
        make: () => h("div", { class: "dl-shape-static" }, shapeTerm("static", "Every size static"),
          why.length ? [" (", why.map((w, j) => [j ? ", " : "", shapeTerm(w, w)]), ")"] : null,
          `: no symbol; this graph serves ${sizes || "no tensor input"} only, and another size fails its guards.`),
      }]);
    }
    const rows = [];
    for (const r of s.became) {
      rows.push({ key: `became:${r.name}`, make: () => h("div", { class: "dl-shape-became", role: "note" },
        h("span", { "data-shape-symbol": r.name }, withTerms(becameText(r)))) });
    }
    // Inputs with a symbol first; on a model the parameters (every size static) are most
    // of the list, so past a few they fold into one row that opens them.
    const moving = s.inputs.filter((x) => x.dims.some((d) => d.state !== "static"));
    const fixed = s.inputs.filter((x) => !moving.includes(x));
    const folded = fixed.length > FOLD_STATIC && !openStatic;
    for (const x of folded ? moving : [...moving, ...fixed]) {
      rows.push(textRow("dl-shape-input", x.input, "div"));
      x.dims.forEach((d, j) => rows.push({
        key: `dim:${x.input}:${j}:${d.state}:${d.made}:${d.isNew}:${d.final}:${d.became ? d.became.here : "-"}`,
        make: () => h("div", { class: "dl-shape-dim", "data-shape-symbol": d.symbol || null }, shapeDimRow(d)),
      }));
    }
    if (fixed.length > FOLD_STATIC) {
      rows.push({
        key: `fold:${fixed.length}:${folded}`,
        make: () => h("div", { class: "dl-shape-fold" },
          h("button", { type: "button", class: "dl-link", "aria-expanded": String(!folded),
            onclick: (e) => {
              e.stopPropagation();   // the button is redrawn: the viewer's click handler must not take the focus
              openStatic = folded;
              if (last) paint(last);
              const again = p.body.querySelector(".dl-shape-fold button");
              if (again) again.focus({ preventScroll: true });
            } },
          folded ? `${plural(fixed.length, "more input")} with every size static: show them` : "hide the inputs with every size static")),
      });
    }
    if (s.others.length) rows.push(textRow("dl-subtitle", "Other symbols", "div"));
    for (const o of s.others) {
      rows.push({
        key: `other:${o.name}:${o.isNew}:${o.final}`,
        make: () => h("div", { class: "dl-shape-dim", "data-shape-symbol": o.name },
          withTerms(o.name), " ", shapeTerm(o.unbacked ? "unbacked" : "backed", o.unbacked ? "unbacked" : "backed", "dl-term dl-state"),
          o.range ? [" ", shapeTerm("range", o.range, "dl-term dl-range"), o.final ? "" : h("span", { class: "dl-faint" }, " by the end")] : null,
          o.node ? h("span", { class: "dl-dim" }, ` · made by ${o.node}`) : null,
          o.isNew ? [" ", h("span", { class: "dl-tag dl-new-tag" }, "made here")] :
            o.step != null ? [h("span", { class: "dl-dim" }, " at "), shapeStepButton(o.step, `step ${o.step}`, o.name)] : null),
      });
    }
    rows.push(textRow("dl-subtitle", "Symbolic guards", "div"));
    const list = { key: "guards", make: () => h("ul", { class: "dl-list dl-shape-guards" }) };
    const afterList = { key: "after", make: () => h("ul", { class: "dl-list dl-shape-guards" }) };
    if (s.guards.length) rows.push(list);
    else rows.push(textRow("dl-faint", s.after.length ? "None added while tracing." : "None so far.", "div"));
    if (s.after.length) rows.push(textRow("dl-subtitle", "Added when the graph was compiled", "div"), afterList);
    sync(p.body, rows);
    const lists = p.body.querySelectorAll("ul.dl-shape-guards");
    if (s.guards.length) sync(lists[0], s.guards.slice().reverse().map((g) => shapeGuardRow(g, flashed)));
    if (s.after.length) sync(lists[lists.length - 1], s.after.map((g) => shapeGuardRow(g, flashed)));
    if (lit) light(lit);
  }

  function reveal() {
    if (!showing) return;
    const flashed = [...p.body.querySelectorAll(".dl-flash")];
    if (flashed.length) return scrollIntoPane(p.body, flashed);
    // the specialization and the new guards; where not all fit, the new guards
    const fresh = [...p.body.querySelectorAll("li.dl-new")];
    if (scrollIntoPane(p.body, [...p.body.querySelectorAll(".dl-shape-became"), ...fresh]) && fresh.length) scrollIntoPane(p.body, fresh);
  }

  function selectCompile() {
    resetPane(p);
    lit = null;
  }

  return { el: p.el, selectCompile, paint, reveal, show, light, get showing() { return showing; } };
}
