// The timeline: a strip under the step controls, the whole compile from its first step to
// its last, with a mark wherever a step adds graph nodes or guards, where the graph break
// or the restart is, where inlined calls run, and where the current line ran. A click goes
// to the marked step under the pointer (navigation.js says which); the pointer's step is
// the strip's tooltip. Drawn on a canvas, so a 140,000-step compile costs what 12 do:
// the marks are drawn once per compile and width (a frame after the compile is first
// shown, so they never hold up its first paint), each step redraws the cursor and the
// current line's runs over them.

import { MARK, lineRuns, stepAtColumn, timelineBins, timelineMarks } from "./navigation.js";
import { instructionOf, lastStep } from "./recording.js";
import { h, plural } from "./dom.js";

const HEIGHT = 12;   // CSS px; the lanes, top to bottom: nodes, guards, inlined calls, this line
const LANES = { node: [0, 4], guard: [4, 4], inlined: [8, 2], line: [10, 2] };

/** What the timeline says for step j, as its tooltip. */
function stepTip(c, j) {
  const s = c.steps[j];
  if (!s) return "";
  const did = [];
  if (s.nodes_added.length) did.push(`adds ${s.nodes_added.join(", ")}`);
  if (s.guards_added.length) did.push(`installs ${plural(s.guards_added.length, "guard")}`);
  const m = timelineMarks(c)[j];
  if (m & MARK.break) did.push("the graph break");
  if (m & MARK.restart) did.push("the restart: Dynamo traces the frame again");
  if (m & MARK.call) did.push(`begins the inlined call of ${s.code_name}`);
  return `step ${j} · line ${s.lineno ?? "?"} in ${s.code_name}${s.depth ? " (inlined)" : ""} · ${instructionOf(s)}` +
    `${did.length ? ` · ${did.join(", ")}` : ""} · click to go there`;
}

/** The timeline of the compile shown: {el, selectCompile(compile), paint(view)}. */
export function timeline() {
  const canvas = h("canvas", { class: "dl-timeline-canvas", width: 1, height: 1 });
  const el = h("div", { class: "dl-timeline", role: "img" }, canvas);
  let c = null, i = 0, width = 0, base = null, colours = null, theme = null, runs = null, later = 0, due = false;

  function themeKey() {
    const dark = typeof matchMedia === "function" && matchMedia("(prefers-color-scheme: dark)").matches;
    return `${document.body ? document.body.dataset.jpThemeName || "" : ""}|${dark}`;
  }

  function readColours() {
    const style = getComputedStyle(el);
    const get = (name, fallback) => style.getPropertyValue(name).trim() || fallback;
    colours = {
      node: get("--dl-tl-node", "#1976d2"), guard: get("--dl-tl-guard", "#e65100"),
      break: get("--dl-tl-break", "#d32f2f"), restart: get("--dl-tl-restart", "#7b1fa2"),
      inlined: get("--dl-tl-inlined", "#9e9e9e"), line: get("--dl-tl-line", "#1976d2"),
      cursor: get("--dl-tl-cursor", "#212121"),
    };
  }

  /** The marks of the whole compile, drawn once per compile, width and theme. */
  function drawBase() {
    describe();
    const dpr = (typeof devicePixelRatio === "number" && devicePixelRatio) || 1;
    base = document.createElement("canvas");
    base.width = Math.round(width * dpr);
    base.height = Math.round(HEIGHT * dpr);
    const ctx = base.getContext("2d");
    if (!ctx) return;
    ctx.scale(dpr, dpr);
    const marks = timelineMarks(c), n = marks.length;
    const put = (x, w, lane, colour) => {
      ctx.fillStyle = colour;
      ctx.fillRect(x, LANES[lane][0], w, LANES[lane][1]);
    };
    const full = (x, colour) => {
      ctx.fillStyle = colour;
      ctx.fillRect(Math.min(x, width - 2), 0, 2, HEIGHT);
    };
    const bins = n < width ? null : timelineBins(c, width);   // per column, the OR of its steps' marks
    const each = (draw) => {   // every column (or every step, if there are fewer steps)
      if (!bins) {
        const band = width / n, tick = Math.max(2, Math.min(4, band - 1));
        for (let j = 0; j < n; j++) draw(marks[j], (j + 0.5) * band - tick / 2, tick, band);
      } else {
        for (let x = 0; x < width; x++) draw(bins[x], x, 1, 1);
      }
    };
    each((m, x, w, band) => {
      if (m & MARK.inlined) put(x - (band - w) / 2, band, "inlined", colours.inlined);   // the whole band
    });
    each((m, x, w) => {
      if (m & MARK.node) put(x, w, "node", colours.node);
      if (m & MARK.guard) put(x, w, "guard", colours.guard);
    });
    each((m, x) => {
      if (m & MARK.break) full(x, colours.break);
      if (m & MARK.restart) full(x, colours.restart);
    });
  }

  /** The current line's runs, as [x, w] spans at this width (made once per line). */
  function lineSpans() {
    const list = lineRuns(c, i), n = c.steps.length;
    if (runs && runs.list === list) return runs.spans;
    const spans = list.map(([a, b]) => {
      const x0 = (a * width) / n, x1 = ((b + 1) * width) / n;
      return [x0, Math.max(1, x1 - x0)];
    });
    runs = { list, spans };
    return spans;
  }

  function draw() {
    if (!c || !width || !c.steps.length) return;
    if (!base && !due) {   // the marks of a compile just shown: in the frame after this one
      if (!later) later = requestAnimationFrame(() => requestAnimationFrame(() => { later = 0; due = true; draw(); }));
      return;
    }
    const key = themeKey();
    if (!colours || key !== theme) {
      theme = key;
      readColours();
      base = null;
    }
    if (!base) drawBase();
    const dpr = base.width / width;
    if (canvas.width !== base.width || canvas.height !== base.height) {
      canvas.width = base.width;
      canvas.height = base.height;
    }
    const ctx = canvas.getContext("2d");
    if (!ctx) return;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    ctx.drawImage(base, 0, 0);
    ctx.scale(dpr, dpr);
    ctx.fillStyle = colours.line;
    for (const [x, w] of lineSpans()) ctx.fillRect(x, LANES.line[0], w, LANES.line[1]);
    const n = c.steps.length;
    const x = n <= 1 ? 0 : ((i + 0.5) * width) / n;
    ctx.fillStyle = colours.cursor;
    ctx.fillRect(Math.max(0, Math.min(width - 2, x - 1)), 0, 2, HEIGHT);
  }

  if (typeof ResizeObserver === "function") {
    new ResizeObserver((entries) => {
      const w = Math.floor(entries[entries.length - 1].contentRect.width);
      if (w === width) return;
      width = w;
      base = runs = null;
      draw();
    }).observe(el);
  }

  /** The step a pointer at clientX means. */
  function stepAt(clientX) {
    const r = el.getBoundingClientRect();
    return stepAtColumn(c, Math.max(1, Math.floor(r.width)), clientX - r.left);
  }

  el.addEventListener("pointermove", (e) => {
    if (!c || !c.steps.length) return;
    const tip = stepTip(c, stepAt(e.clientX));
    if (el.title !== tip) el.title = tip;
  });
  // The Viewer turns a click into a step through the clicked element's data-action: this
  // listener (on the strip) runs before the Viewer's (on its root) and sets it.
  el.addEventListener("click", (e) => {
    if (c && c.steps.length) el.dataset.action = `goto:${stepAt(e.clientX)}`;
  });

  function selectCompile(compile) {
    c = compile.c;
    base = runs = null;
    due = false;
    el.hidden = !c || !c.steps.length;
  }


  /** What the strip says to a screen reader: how many steps of each kind it marks. */
  function describe() {
    const marks = timelineMarks(c);
    let nodes = 0, guards = 0, calls = 0;
    for (const m of marks) {
      if (m & MARK.node) nodes++;
      if (m & MARK.guard) guards++;
      if (m & MARK.call) calls++;
    }
    el.setAttribute("aria-label", `timeline of steps 0 to ${lastStep(c)}: ${plural(nodes, "step")} adding graph nodes, ` +
      `${guards} installing guards, ${plural(calls, "inlined call")}${c.graph_break ? ", a graph break" : ""}`);
  }

  function paint(view) {
    if (!view.c) return;
    c = view.c;
    i = view.i;
    draw();
  }

  return { el, selectCompile, paint };
}
