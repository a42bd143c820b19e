// The recording as the front end reads it: the per-compile queries every pane, jump and
// link is built on. Pure functions of the recording (no DOM), so node imports this file and
// tests it directly.
//
// A recording is exactly what `Recording.to_json()` wrote (capture/recording.py says the
// schema), its steps made objects by decode.js. What is worth computing once per compile is kept beside it in `memo`.

// -- the recording and its compiles, in words said once ------------------------------------

const derived = new WeakMap();   // compile (or code) -> what is worth computing once for it

/** `make()`, computed once per object and key. */
export function memo(obj, key, make) {
  let d = derived.get(obj);
  if (!d) derived.set(obj, (d = {}));
  if (!(key in d)) d[key] = make();
  return d[key];
}

export function lastStep(c) {
  return Math.max(c.steps.length - 1, 0);
}

/** How many steps the whole recording holds (Python: `Recording.step_count`). */
export function stepCount(rec) {
  return rec.compiles.reduce((n, c) => n + c.steps.length, 0);
}

/** Where the viewer stands, as every place that says it writes it: `step 3 / 17`. */
export function stepLabel(c, i) {
  return `step ${i} / ${c ? lastStep(c) : 0}`;
}

/** An instruction as a learner reads it: `LOAD_FAST x`, `RESUME`. */
export function instructionOf(s) {
  return `${s.opname} ${s.argrepr || ""}`.trimEnd();
}

/** A compile's title: the engine's (`titles`, from Compile.title()), else its id and name. */
export function compileTitle(titles, c, k) {
  return (titles || [])[k] || `${compileId(c)} ${c.code_name}`;
}

/** A compile's id as the viewer writes it: `[0/1]`, and `rank 1 [0/1]` on a page of several
 * ranks, where ids repeat from rank to rank. */
export function compileId(c) {
  return (c.rank == null ? "" : `rank ${c.rank} `) + `[${c.compile_id}]`;
}

function sameFrame(a, b) {   // the same code, called from the same chain of [name, line]
  const x = a.inline_stack, y = b.inline_stack;
  if (a.code !== b.code || x.length !== y.length) return false;
  return x === y || x.every((p, j) => p[0] === y[j][0] && p[1] === y[j][1]);
}

/** The previous step of step i's frame (null where a frame begins). Inlined calls run
 * deeper; a frame goes on only while the code and the chain of callers stay the same and
 * no shallower step came in between. Looked for back from i, so painting one step never
 * walks the whole compile (a 140,000-step loop at one depth finds it at i - 1). */
export function frameBefore(c, i) {
  const steps = c.steps, s = steps[i];
  if (!s) return null;
  for (let j = i - 1; j >= 0; j--) {
    const d = steps[j].depth;
    if (d < s.depth) return null;
    if (d === s.depth) return sameFrame(steps[j], s) ? j : null;
  }
  return null;
}

function nextMarks(c) {
  return memo(c, "marks", () => {
    const n = c.steps.length;
    const node = new Int32Array(n).fill(-1), guard = new Int32Array(n).fill(-1);
    let nn = -1, ng = -1;
    for (let j = n - 1; j >= 0; j--) {
      node[j] = nn; guard[j] = ng;
      if (c.steps[j].nodes_added.length) nn = j;
      if (c.steps[j].guards_added.length) ng = j;
    }
    return { node, guard };
  });
}

// -- where each jump goes ------------------------------------------------------------------

/** The next step on another line of the same frame, or back in a caller (steps over calls). */
export function nextLine(c, i) {
  const steps = c.steps;
  if (!(i >= 0 && i < steps.length - 1)) return null;
  const here = steps[i];
  for (let j = i + 1; j < steps.length; j++) {
    const s = steps[j];
    if (s.depth < here.depth) return j;
    if (s.depth === here.depth && (s.lineno !== here.lineno || !sameFrame(s, here))) return j;
  }
  return null;
}

/** The next step that adds a node to the FX graph. */
export function nextNode(c, i) {
  if (!(i >= 0 && i < c.steps.length)) return null;
  const j = nextMarks(c).node[i];
  return j < 0 ? null : j;
}

/** The next step that installs a guard. */
export function nextGuard(c, i) {
  if (!(i >= 0 && i < c.steps.length)) return null;
  const j = nextMarks(c).guard[i];
  return j < 0 ? null : j;
}

/** The step of the graph break, if this compile met one while it was recorded. */
export function breakStep(c) {
  const gb = c.graph_break;
  if (!gb || gb.step == null || !c.steps.length) return null;
  return Math.min(gb.step, lastStep(c));
}

// -- where each link goes (provenance) -----------------------------------------------------

/** The step that installed guard g (null for ambient guards and those added after tracing). */
export function guardStep(c, g) {
  const guard = c.guard_details[g];
  return guard && guard.step != null ? Math.min(guard.step, lastStep(c)) : null;
}

/** The step at which node k appears: the step that created it, or the last step for
 * nodes made after the last recorded step (the output node, any made past a step cap). */
export function nodeStep(c, k) {
  const n = c.nodes[k];
  return n.step != null ? Math.min(n.step, lastStep(c)) : lastStep(c);
}

/** A node's name as Dynamo held it at step i (schema 2: named after its op until renamed). */
export function nameAt(node, i) {
  if (node.renamed_at == null || node.created_name == null) return node.name;
  return i < node.renamed_at ? node.created_name : node.name;
}

/** Where a source (`L['x']`) was first read: the first step with a reading from it on
 * the stack, or else in the locals. */
export function whereRead(c, source) {
  const first = memo(c, "reads", () => {
    const pushed = new Map();
    c.steps.forEach((s, j) => {
      for (const id of s.stack) {
        const src = c.vars[id].source;
        if (src != null && !pushed.has(src)) pushed.set(src, j);
      }
    });
    return pushed;
  });
  if (first.has(source)) return first.get(source);
  const j = c.steps.findIndex((s) => Object.values(s.locals).some((id) => c.vars[id].source === source));
  return j < 0 ? null : j;
}

// -- what exists at a step -----------------------------------------------------------------

/** The nodes in order of appearance: `order[r]` is the index of the r-th node to appear,
 * `reveal[r]` its step (non-decreasing), `rank[k]` the place of node k. */
export function nodeOrder(c) {
  return memo(c, "order", () => {
    const order = c.nodes.map((_, k) => k);
    const at = c.nodes.map((_, k) => nodeStep(c, k));
    order.sort((a, b) => at[a] - at[b] || a - b);
    const rank = new Int32Array(c.nodes.length);
    order.forEach((k, r) => { rank[k] = r; });
    return { order, reveal: order.map((k) => at[k]), rank };
  });
}

function countUpTo(sorted, i) {   // how many entries of a sorted array are <= i
  let lo = 0, hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid] <= i) lo = mid + 1; else hi = mid;
  }
  return lo;
}

/** How many nodes exist at the end of step i. */
export function nodesAt(c, i) {
  return c.steps.length ? countUpTo(nodeOrder(c).reveal, i) : c.nodes.length;
}

/** The compile's guards in three groups: ambient ones, those the traced code installed
 * (in the order it did), and those installed after tracing; `stepAt` is sorted. */
export function guardGroups(c) {
  return memo(c, "guards", () => {
    const ambient = [], stepped = [], after = [];
    c.guard_details.forEach((g, k) => {
      if (g.ambient) ambient.push(k);
      else if (g.step != null) stepped.push(k);
      else after.push(k);
    });
    stepped.sort((a, b) => c.guard_details[a].step - c.guard_details[b].step || a - b);
    return { ambient, stepped, after, stepAt: stepped.map((k) => c.guard_details[k].step) };
  });
}

/** How many guards the traced code had installed by the end of step i. */
export function guardsAt(c, i) {
  const g = guardGroups(c);
  return c.steps.length ? countUpTo(g.stepAt, i) : g.stepped.length;
}

/** What step i did to the stack, against the previous step of its frame:
 * `kept` entries stayed at the bottom, then `popped` went and `pushed` came. */
export function stackChange(c, i) {
  const s = c.steps[i];
  const j = frameBefore(c, i);
  const before = j == null ? [] : c.steps[j].stack;
  let kept = 0;
  while (kept < before.length && kept < s.stack.length && before[kept] === s.stack[kept]) kept++;
  return { first: j == null, kept, popped: before.length - kept, pushed: s.stack.length - kept };
}

/** The kind of tracker step i pushed (the top one if several), or null. */
export function pushedKind(c, i) {
  const { pushed } = stackChange(c, i);
  const s = c.steps[i];
  return pushed > 0 ? c.vars[s.stack[s.stack.length - 1]].kind : null;
}

// -- recompile reasons ---------------------------------------------------------------------

/** The guard of an earlier compile that failed and caused this recompile:
 * {compile, guard, step}: guard indexes that compile's guard_details, null when the
 * recording names no failed guard (a compile made before it was recording). */
export function recompileTarget(rec, k, reason) {
  // The recording says which guards failed (compile.failed_guards, each naming its compile
  // and its guard), never read from the reason's words: Dynamo gives one reason per cache
  // entry it checked, in the order the failures were recorded, so the r-th reason is about
  // the r-th compile the failed guards name (the compile replaced when there are none).
  const here = rec.compiles[k];
  const generation = here.generation || 0;
  const failed = here.failed_guards || [];
  const named = [...new Set(failed.map((f) => f.compile_id))];
  const r = (here.recompile_reasons || []).indexOf(reason);
  const id = named[r] ?? named[0] ?? here.replaces;
  const fg = failed.find((f) => f.compile_id === id) ?? null;
  const targetId = fg ? fg.compile_id : here.replaces;
  if (targetId == null) return null;
  let target = -1;
  for (let j = k - 1; j >= 0; j--) {
    const c = rec.compiles[j];
    if (c.compile_id === targetId && (c.generation || 0) === generation) { target = j; break; }
  }
  if (target < 0) return null;
  const c = rec.compiles[target];
  const guard = fg && fg.detail != null ? fg.detail : null;
  const step = (guard != null ? guardStep(c, guard) : null) ?? (fg ? fg.step : null) ?? lastStep(c);
  return { compile: target, guard, step };
}
