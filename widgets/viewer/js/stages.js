// The stages after Dynamo as the front end reads them: which Dynamo node a stage's unit (an
// AOTAutograd node, an Inductor post-grad node or kernel) came from, what a Dynamo node
// became, and which lines of a stage's printed code show a unit. Pure functions of the
// recording (no DOM), so node imports this file and tests it directly.
//
// A compile's `stages` are exactly what `Compile.to_dict()` wrote (capture/recording.py
// shows one stage as JSON): each has `name`, `graph`, `code`, `from_cache` and `units`,
// each unit `name`, `op`, `target`, `dynamo_nodes` (names as `Compile.nodes` has them),
// `invented`, `via` and `lines` (1-based lines of `code`).

import { lastStep, memo, nodeStep } from "./recording.js";

/** The stages of a compile, in pipeline order (none for a recording made without
 * `after_dynamo`, or a compile whose backend does not go through AOTAutograd). */
export function stagesOf(c) {
  return (c && c.stages) || [];
}

/** Whether any compile of the recording has stages (the view is absent otherwise). */
export function hasStages(rec) {
  return !!rec && rec.compiles.some((c) => stagesOf(c).length > 0);
}

const GRAPH_WORDS = { joint: "joint graph", forward: "forward graph", backward: "backward graph", inference: "inference graph" };

/** What a stage is called in the view: `forward graph`, `post-grad graph`, `output code`. */
export function stageLabel(stage) {
  if (stage.name === "inductor_post_grad") return "post-grad graph";
  if (stage.name === "inductor_output_code") return "output code";
  return GRAPH_WORDS[stage.graph] || stage.graph || stage.name;
}

/** Who made a stage, in words: AOTAutograd's graphs, then Inductor's per graph it compiled. */
export function stageMaker(stage) {
  return stage.name.startsWith("aot_") ? "AOTAutograd" : `Inductor · ${stage.graph || "graph"}`;
}

/** The stages in groups, by maker: [{title, stages: [index, ...]}] in pipeline order. */
export function stageGroups(c) {
  const groups = [];
  stagesOf(c).forEach((s, j) => {
    const title = stageMaker(s);
    const last = groups[groups.length - 1];
    if (last && last.title === title) last.stages.push(j);
    else groups.push({ title, stages: [j] });
  });
  return groups;
}

/** The stage a view opens on: the forward (or inference) graph, else the first. */
export function firstStage(c) {
  const j = stagesOf(c).findIndex((s) => s.name === "aot_forward");
  return j >= 0 ? j : 0;
}

/** What a stage's units are called: kernels in output code, nodes in a graph. */
export function unitWord(stage, n) {
  const word = stage.name === "inductor_output_code" ? "kernel" : "node";
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** What kind of unit it is, in a few words: `kernel`, `extern kernel`, `input`, `aten.mm.default`. */
export function unitKind(u) {
  if (u.op === "kernel") return "kernel";
  if (u.op === "extern_kernel") return "extern kernel";
  if (u.op === "placeholder") return "input";
  return u.target || u.op;
}

/** Which cache served a stage, and what turns it off, for a stage that came from one. */
export function cacheOf(stage) {
  return stage.name.startsWith("aot_") ?
    { cache: "AOTAutograd's cache", off: "torch._functorch.config.enable_autograd_cache = False" } :
    { cache: "Inductor's FX graph cache", off: "torch._inductor.config.fx_graph_cache = False" };
}

// -- the links, both ways --------------------------------------------------------------

/** A Dynamo node's name -> its index in `c.nodes` (the one in the final graph when a name
 * was used twice). */
export function nodeIndex(c) {
  return memo(c, "stageNodeIndex", () => {
    const byName = new Map();
    c.nodes.forEach((n, k) => {
      if (!byName.has(n.name) || (n.in_graph && !c.nodes[byName.get(n.name)].in_graph)) byName.set(n.name, k);
    });
    return byName;
  });
}

/** The Dynamo nodes a unit came from, each {name, k, step} (k null for a name the compile's
 * nodes do not hold), earliest step first. */
export function unitOrigins(c, u) {
  const byName = nodeIndex(c);
  const out = (u.dynamo_nodes || []).map((name) => {
    const k = byName.has(name) ? byName.get(name) : null;
    return { name, k, step: k == null ? null : nodeStep(c, k) };
  });
  return out.sort((a, b) => (a.step ?? Infinity) - (b.step ?? Infinity));
}

/** The steps that made the Dynamo nodes a unit came from, in order, each once
 * (Python: `capture.stages.steps_of`). */
export function unitSteps(c, u) {
  return [...new Set(unitOrigins(c, u).map((o) => o.step).filter((s) => s != null))].sort((a, b) => a - b);
}

/** Where the step that made a node stands in the source: {lineno, line} or null. */
export function madeWhere(c, step) {
  const s = c.steps[step];
  if (!s || s.lineno == null) return null;
  const info = c.codes[s.code];
  const line = info && info.source_lines ? info.source_lines[s.lineno - info.firstlineno] : undefined;
  return { lineno: s.lineno, line: line == null ? null : line.trim(), code_name: s.code_name };
}

/** For each Dynamo node index, every unit it became: [[stage index, unit index], ...]
 * (Python: `capture.stages.became`). */
export function becameIndex(c) {
  return memo(c, "stageBecame", () => {
    const byName = nodeIndex(c);
    const out = new Map();
    stagesOf(c).forEach((s, j) => s.units.forEach((u, v) => {
      for (const name of u.dynamo_nodes || []) {
        if (!byName.has(name)) continue;
        const k = byName.get(name);
        if (!out.has(k)) out.set(k, []);
        out.get(k).push([j, v]);
      }
    }));
    return out;
  });
}

/** Every unit Dynamo node k became, as [stage index, unit index] pairs. */
export function became(c, k) {
  return becameIndex(c).get(k) || [];
}

/** What the step i made became: the nodes it created ({k, name}) and, per stage index, the
 * set of unit indices they became. A step that made no node marks nothing. */
export function stepMarks(c, i) {
  const made = [];
  if (c.steps.length && i >= 0 && i <= lastStep(c)) {
    c.nodes.forEach((n, k) => { if (n.step === i) made.push({ k, name: n.name }); });
  }
  return { made, units: unitsOfNodes(c, made.map((m) => m.k)) };
}

/** Per stage index, the set of unit indices that the Dynamo nodes `ks` became. */
export function unitsOfNodes(c, ks) {
  const units = new Map();
  for (const k of ks) {
    for (const [j, v] of became(c, k)) {
      if (!units.has(j)) units.set(j, new Set());
      units.get(j).add(v);
    }
  }
  return units;
}

// -- lines of the printed code ---------------------------------------------------------

/** The 1-based lines that show unit u of a stage: its own (`lines`), and for a kernel
 * whose definition opens a block of source (`cpp_fused_relu_0 = async_compile.cpp_pybinding(
 * ..., r'''`), every line of that block down to its closing `''')`. */
export function unitLines(stage, u) {
  const code = stageLines(stage);
  const out = [];
  for (const n of u.lines || []) {
    out.push(n);
    const text = code[n - 1];
    if (u.op === "kernel" && text != null && /r?'''\s*$/.test(text) && /= async_compile\./.test(text)) {
      for (let m = n + 1; m <= code.length; m++) {
        out.push(m);
        if (/^'''\)/.test(code[m - 1])) break;
      }
    }
  }
  return [...new Set(out)].sort((a, b) => a - b);
}

/** A stage's code, split into lines once. */
export function stageLines(stage) {
  return memo(stage, "lines", () => (stage.code ? stage.code.split("\n") : []));
}

/** For each 1-based line of a stage's code, the units shown there: Map line -> [unit index]. */
export function lineUnits(stage) {
  return memo(stage, "lineUnits", () => {
    const at = new Map();
    stage.units.forEach((u, v) => {
      for (const n of unitLines(stage, u)) {
        if (!at.has(n)) at.set(n, []);
        at.get(n).push(v);
      }
    });
    return at;
  });
}

/** What the partitioner chose for a stage, as lists of {name, unit} (unit: the index of
 * the unit of that name in the stage, or null): inputs, outputs, saved (a forward's values
 * kept for the backward) and recomputed (forward ops a backward computes again). */
export function partition(stage) {
  const at = new Map(stage.units.map((u, v) => [u.name, v]));
  const list = (names) => (names || []).map((name) => ({ name, unit: at.has(name) ? at.get(name) : null }));
  return { inputs: list(stage.inputs), outputs: list(stage.outputs), saved: list(stage.saved), recomputed: list(stage.recomputed) };
}

/** How many of a stage's units link back, and how many are invented. */
export function linkCounts(stage) {
  const invented = stage.units.filter((u) => u.invented).length;
  return { linked: stage.units.length - invented, invented };
}
