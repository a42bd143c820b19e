/* Dynamo Lab's trace viewer: one plain ES module (no framework, no bundler).

The contract with whoever hosts it (anywidget in JupyterLab; a standalone page):

  export default { render }
  render({ model, el }) -> cleanup function

  `model` is used only through get(name), set(name, value), save_changes(),
  on("change:NAME", cb) and off("change:NAME", cb). The names (all made by
  widgets/viewer/__init__.py `viewer_state(recording, compile, step)`):

    data         the recording's JSON (Recording.to_json(), the engine's format),
                 gzip-compressed: a DataView (anywidget), an ArrayBuffer or a Uint8Array
    graphs       the graph layout of every compile (widgets/viewer/layout.py), gzip-compressed
                 JSON, same kinds of bytes
    titles       each compile's title, as the engine writes it
    compile      the index of the compile shown            (read and written)
    step         the index of the step shown                (read and written)
    predict      predict mode on or off                     (read and written)
    predictions  the learner's answers in predict mode      (read and written)

Everything is rendered here, from the recording: stepping never calls the kernel.
Text from the recorded program reaches the page only as text (textContent,
attribute values), never as markup; the engine has already bounded and escaped
it (capture/text.py), so nothing here cuts or escapes it again.

Everything above `render` is pure (no DOM), so node can import this file and test it.
*/

export const BYTECODE_BEFORE = 8;    // instructions shown above the current one
export const BYTECODE_AFTER = 16;    // ... and below it
export const SOURCE_WINDOW = 40;     // longer sources show this many lines around the current one
export const RECENT_GUARDS = 40;     // guards listed in full; earlier ones are counted
const PLAY_INTERVAL = 400;           // ms between two steps while playing
const SAVE_DELAY = 60;               // ms: the step is sent to the kernel once stepping pauses

// -- decoding ------------------------------------------------------------------------------

/** The bytes of a DataView, ArrayBuffer or typed array, as a Uint8Array. */
export function bytesOf(data) {
  if (data instanceof Uint8Array) return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  throw new TypeError("expected bytes (a DataView, ArrayBuffer or Uint8Array)");
}

/** gunzip, then UTF-8 decode. */
export async function gunzipText(data) {
  const stream = new Blob([bytesOf(data)]).stream().pipeThrough(new DecompressionStream("gzip"));
  return await new Response(stream).text();
}

/** The recording exactly as `Recording.to_json()` wrote it. */
export async function decode(data) {
  return JSON.parse(await gunzipText(data));
}

// -- one compile, read: pure functions of the recording ------------------------------------

const derived = new WeakMap();   // compile -> what is worth computing once per compile

function memo(c, key, make) {
  let d = derived.get(c);
  if (!d) derived.set(c, (d = {}));
  if (!(key in d)) d[key] = make();
  return d[key];
}

export function lastStep(c) {
  return Math.max(c.steps.length - 1, 0);
}

function sameFrame(a, b) {
  return a.code === b.code && JSON.stringify(a.inline_stack) === JSON.stringify(b.inline_stack);
}

/** For each step, the previous step of the same frame (null where a frame begins).
 * Inlined calls run deeper; a frame goes on only while the code and the chain of callers
 * stay the same and no shallower step came in between. */
export function frameLinks(c) {
  return memo(c, "frames", () => {
    const prev = new Array(c.steps.length).fill(null);
    const lastAt = new Map();
    c.steps.forEach((s, pos) => {
      const j = lastAt.get(s.depth);
      if (j !== undefined && sameFrame(c.steps[j], s)) prev[pos] = j;
      lastAt.set(s.depth, pos);
      for (const d of [...lastAt.keys()]) if (d > s.depth) lastAt.delete(d);
    });
    return prev;
  });
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
  return Math.min(gb.step, c.steps.length - 1);
}

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
  const j = frameLinks(c)[i];
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

// -- recompile reasons ---------------------------------------------------------------------

/** `0/0: tensor 'x' size mismatch ...  # f.py:4 in f` -> its parts. */
export function parseReason(reason) {
  const first = String(reason).split("\n")[0];
  const m = /^\s*(\S+?):\s+(.*)$/.exec(first);
  if (!m) return { id: null, text: first.trim(), lineno: null };
  let text = m[2];
  let lineno = null;
  const hash = text.lastIndexOf("  # ");
  if (hash >= 0) {
    const where = /:(\d+) in \S+\s*$/.exec(text.slice(hash));
    if (where) lineno = Number(where[1]);
    text = text.slice(0, hash);
  }
  return { id: m[1], text: text.trim(), lineno };
}

/** The guard of an earlier compile that failed and caused this recompile:
 * {compile, guard, step} (guard null when no guard reads like the reason). */
export function recompileTarget(rec, k, reason) {
  const { id, text, lineno } = parseReason(reason);
  const here = rec.compiles[k];
  let target = -1;
  for (let j = k - 1; j >= 0; j--) {
    const c = rec.compiles[j];
    if (c.compile_id === id && (c.generation || 0) === (here.generation || 0)) { target = j; break; }
  }
  if (target < 0) return null;
  const c = rec.compiles[target];
  const body = (g) => g.text.replace(/^[A-Z_]+:\s*/, "");
  const names = [...text.matchAll(/'([^']+)'/g)].map((m) => m[1]);
  let best = null, bestScore = 0;
  c.guard_details.forEach((g, gi) => {
    let score = 0;
    if (g.text && (text.includes(body(g)) || body(g).includes(text))) score += 8;
    if (g.source && text.includes(g.source)) score += 4;
    if (g.source && names.some((n) => g.source === n || g.source === `L['${n}']` || g.source === `G['${n}']`)) score += 4;
    if (score && /^tensor\b/.test(text) && g.kind === "TENSOR_MATCH") score += 2;
    if (score && lineno != null && g.lineno === lineno) score += 1;
    if (score && g.ambient) score -= 1;
    if (score > bestScore) { best = gi; bestScore = score; }
  });
  const step = best == null ? 0 : (guardStep(c, best) ?? lastStep(c));
  return { compile: target, guard: best, step };
}

// -- bytecode ------------------------------------------------------------------------------

/** The instructions Dynamo walks (schema 2's `walked`; the original `dis` before it). */
export function walkedOf(code) {
  return code.walked || code.instructions;
}

/** Original and walked bytecode side by side: rows of {walked, original} indices (either
 * may be null: an instruction Dynamo inserted, or one it removed) and whether Dynamo
 * changed the row. Rows follow the walked order; a removed original sits where it was,
 * beside the first instruction Dynamo inserted in its place if there is one
 * (POP_JUMP_IF_NOT_NONE beside the LOAD_CONST None; IS_OP; POP_JUMP_IF_TRUE that
 * replace it). */
export function alignBytecode(code) {
  const walked = code.walked;
  const original = code.instructions;
  if (!walked) return original.map((_, o) => ({ walked: null, original: o, changed: false }));
  const used = new Set(walked.map((w) => w.original).filter((o) => o != null));
  const rows = [];
  let next = 0;   // the first original not shown yet
  walked.forEach((w, k) => {
    const o = w.original;
    if (o != null && o >= next) {
      for (; next < o; next++) rows.push({ walked: null, original: next, changed: true });
      rows.push({ walked: k, original: o, changed: !!w.changed });
      next = o + 1;
    } else if (o == null && next < original.length && !used.has(next)) {
      rows.push({ walked: k, original: next, changed: true });   // a replacement
      next += 1;
    } else {
      rows.push({ walked: k, original: null, changed: w.changed !== false });
    }
  });
  for (; next < original.length; next++) rows.push({ walked: null, original: next, changed: true });
  return rows;
}

/** One instruction as a line of a listing: `  4 >>   30 CALL                 1`. */
export function instructionText(ins, showLine) {
  const line = showLine && ins.lineno != null ? String(ins.lineno) : "";
  const mark = ins.is_jump_target ? ">>" : "  ";
  return `${line.padStart(4)} ${mark} ${String(ins.offset).padStart(4)} ${ins.opname.padEnd(20)} ${ins.argrepr || ""}`.trimEnd();
}

function listingLines(list) {   // line numbers only where they change, as dis prints them
  let last = null;
  return list.map((ins) => {
    const show = ins.lineno != null && ins.lineno !== last;
    if (ins.lineno != null) last = ins.lineno;
    return instructionText(ins, show);
  });
}

function codeListing(code) {
  return memo(code, "listing", () => {
    const walked = walkedOf(code);
    const at = new Map(walked.map((ins, k) => [ins.offset, k]));
    return {
      walked: listingLines(walked), original: listingLines(code.instructions), at,
      rows: code.walked && code.cleaned ? alignBytecode(code) : null,
    };
  });
}

// -- predict mode --------------------------------------------------------------------------

/** What an instruction can do besides pushing: [id, as a choice, as it is told after]. */
export const EFFECTS = [
  ["node", "adds a node to the FX graph", "added a node to the FX graph"],
  ["guard", "installs a guard", "installed a guard"],
  ["break", "breaks the graph", "broke the graph"],
  ["inline", "inlines a call (steps into it)", "inlined a call"],
  ["return", "returns from its frame", "returned from its frame"],
];

function pushedKinds(c) {   // kinds the compile pushes, most frequent first
  return memo(c, "kinds", () => {
    const count = new Map();
    c.steps.forEach((_, j) => {
      const kind = pushedKind(c, j);
      if (kind) count.set(kind, (count.get(kind) || 0) + 1);
    });
    return [...count.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map((e) => e[0]);
  });
}

// Instructions that only keep CPython's books: when one does nothing visible, predict mode
// takes it without asking (there is nothing to reason about).
const BOOKKEEPING = new Set(["RESUME", "NOP", "PRECALL", "CACHE", "EXTENDED_ARG", "COPY_FREE_VARS", "MAKE_CELL"]);

/** What step i + 1 does, as predict mode asks it: the instruction about to run, the
 * choices (tracker kinds pushed in this compile, and EFFECTS), the truth, and whether it
 * is worth asking (`bookkeeping`: a no-op such as RESUME or PRECALL that did nothing).
 * Null at the last step. */
export function question(c, i) {
  if (!(i >= 0 && i < c.steps.length - 1)) return null;
  const here = c.steps[i], next = c.steps[i + 1];
  const inlines = next.depth > here.depth;
  // Entering a callee: the instruction about to run is the caller's call, whose own step
  // is recorded once the callee has returned.
  let shown = next;
  if (inlines) {
    const j = c.steps.findIndex((s, k) => k > i + 1 && s.depth <= here.depth);
    shown = j >= 0 ? c.steps[j] : null;
  }
  const does = [];
  if (next.nodes_added.length) does.push("node");
  if (next.guards_added.length) does.push("guard");
  if (breakStep(c) === i + 1) does.push("break");
  if (inlines) does.push("inline");
  if (/^RETURN/.test(next.opname)) does.push("return");
  const pushes = inlines ? null : pushedKind(c, i + 1);
  const kinds = pushedKinds(c).filter((k) => k !== pushes).slice(0, pushes ? 2 : 3);
  if (pushes) kinds.push(pushes);
  kinds.sort();
  return {
    step: i + 1,
    instruction: shown ? `${shown.opname} ${shown.argrepr || ""}`.trim() : "a call",
    lineno: shown ? shown.lineno : null,
    code_name: shown ? shown.code_name : here.code_name,
    kinds, truth: { pushes, does },
    bookkeeping: !inlines && BOOKKEEPING.has(next.opname) && !pushes && !does.length,
  };
}

/** Is an answer ({pushes: kind or null, does: [...]}) right about question q? */
export function grade(q, answer) {
  const does = [...new Set(answer.does)].sort();
  const truth = [...q.truth.does].sort();
  return (answer.pushes ?? null) === q.truth.pushes &&
    does.length === truth.length && does.every((d, k) => d === truth[k]);
}

// -- what each pane shows at a step: plain data, rendered below -----------------------------

/** The caption's facts about step i (null for a compile with no steps). */
export function stepSummary(c, i) {
  const s = c.steps[i];
  if (!s) return null;
  return {
    label: `step ${i} / ${lastStep(c)}`,
    lineno: s.lineno,
    code_name: s.code_name,
    inlinedFrom: s.inline_stack.length ? s.inline_stack[s.inline_stack.length - 1][0] : null,
    instruction: `${s.opname} ${s.argrepr || ""}`.trimEnd(),
    nodes: s.nodes_added,
    guards: s.guards_added.length,
    guardKinds: [...new Set(s.guards_added.map((g) => c.guard_details[g].kind))].sort(),
    breaks: !!c.graph_break && c.graph_break.step === i,
    capped: !!c.truncated && i === c.steps.length - 1,
  };
}

/** The source of the code running at step i: a window of rows around the current line,
 * the line of the graph break marked once the break has happened. */
export function sourceView(c, i) {
  const s = c.steps[i];
  if (!s) return null;
  const info = c.codes[s.code];
  if (!info || !info.source_lines.length) return { missing: info ? info.filename : "unknown file" };
  const gb = c.graph_break;
  const breakLine = gb && gb.step != null && i >= gb.step && gb.code_name === info.name ? gb.lineno : null;
  const lines = info.source_lines;
  let first = 0, last = lines.length;
  if (lines.length > SOURCE_WINDOW && s.lineno != null) {
    const centre = s.lineno - info.firstlineno;
    first = Math.max(0, Math.min(centre - Math.floor(SOURCE_WINDOW / 3), lines.length - SOURCE_WINDOW));
    last = first + SOURCE_WINDOW;
  }
  const rows = [];
  for (let k = first; k < last; k++) {
    const lineno = info.firstlineno + k;
    rows.push({ lineno, text: lines[k], current: lineno === s.lineno, broke: lineno === breakLine });
  }
  return { rows, above: first, below: lines.length - last };
}

/** The bytecode of the code running at step i, as Dynamo walks it, the current
 * instruction marked; where Dynamo cleaned it, the original `dis` beside it, aligned. */
export function bytecodeView(c, i) {
  const s = c.steps[i];
  if (!s) return null;
  const info = c.codes[s.code];
  if (!info) return { missing: true, offset: s.offset };
  const L = codeListing(info);
  const current = L.at.get(s.offset);
  const aligned = L.rows;
  const count = aligned ? aligned.length : L.walked.length;
  let here = current ?? 0;
  if (aligned) here = Math.max(0, aligned.findIndex((r) => r.walked === current));
  const first = Math.max(0, here - BYTECODE_BEFORE);
  const last = Math.min(count, here + BYTECODE_AFTER + 1);
  const rows = [];
  for (let k = first; k < last; k++) {
    if (!aligned) {
      rows.push({ walked: L.walked[k], original: null, current: k === current, change: null });
      continue;
    }
    const r = aligned[k];
    const change = !r.changed ? null : r.walked == null ? "removed" : r.original == null ? "inserted" : "changed";
    rows.push({
      walked: r.walked != null ? L.walked[r.walked] : null,
      original: r.original != null ? L.original[r.original] : null,
      current: current != null && r.walked === current, change,
    });
  }
  return { offset: s.offset, aligned: !!aligned, rows, above: first, below: count - last };
}

/** The stack (top first) and the symbolic locals after step i, what changed marked. */
export function stackView(c, i) {
  const s = c.steps[i];
  if (!s) return null;
  const ch = stackChange(c, i);
  const stack = [];
  for (let pos = s.stack.length - 1; pos >= 0; pos--) {
    stack.push({ v: c.vars[s.stack[pos]], isNew: !ch.first && pos >= ch.kept });
  }
  const j = frameLinks(c)[i];
  const then = j == null ? null : c.steps[j].locals;
  const locals = Object.entries(s.locals).map(([name, id]) =>
    ({ name, v: c.vars[id], isNew: !!then && then[name] !== id }));
  if (then) {
    for (const name of Object.keys(then)) if (!(name in s.locals)) locals.push({ name, gone: true });
  }
  return { stack, locals, ...ch };
}

/** The guards listed at step i: the ambient ones (folded), how many earlier ones are only
 * counted, the recent ones the code installed, and at the last step those added after. */
export function guardsView(c, i) {
  const groups = guardGroups(c);
  const n = guardsAt(c, i);
  const atEnd = !c.steps.length || i === lastStep(c);
  const installed = groups.stepped.slice(0, n);
  const shown = installed.slice(-RECENT_GUARDS);
  return {
    ambient: groups.ambient,
    earlier: installed.length - shown.length,
    shown: shown.map((k) => ({ k, isNew: c.steps.length > 0 && c.guard_details[k].step === i })),
    after: atEnd ? groups.after : [],
    total: groups.ambient.length + n + (atEnd ? groups.after.length : 0),
  };
}

/** How much of the graph exists at step i and which nodes this step added. */
export function graphView(c, i) {
  const shown = nodesAt(c, i);
  const before = c.steps.length && i > 0 ? nodesAt(c, i - 1) : 0;
  const fresh = c.steps.length ? nodeOrder(c).order.slice(before, shown) : [];
  return { shown, total: c.nodes.length, fresh, names: fresh.map((k) => nameAt(c.nodes[k], i)) };
}

// -- the page ------------------------------------------------------------------------------

/** An element; string children become text nodes, never markup. */
function h(tag, props, ...children) {
  const el = document.createElement(tag);
  if (props) {
    for (const [k, v] of Object.entries(props)) {
      if (v == null || v === false) continue;
      if (k === "class") el.className = v;
      else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? "" : String(v));
    }
  }
  for (const child of children.flat(Infinity)) {
    if (child != null && child !== false) el.append(child);
  }
  return el;
}

const SVG = "http://www.w3.org/2000/svg";

function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
  for (const child of children) if (child != null) el.append(child);
  return el;
}

function code(text) {
  return h("code", null, text);
}

function plural(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function pane(cls, title) {
  const head = h("div", { class: "dl-title" }, title);
  const body = h("div", { class: "dl-pane-body" });
  const el = h("div", { class: `dl-pane ${cls}` }, head, body);
  return { el, head, body, key: undefined };
}

/** Replace a pane's title and body only when what they show changed. */
function fill(p, key, make) {
  if (p.key === key) return;
  p.key = key;
  const [title, ...body] = make();
  p.head.replaceChildren(...[title].flat(Infinity).filter((x) => x != null));
  p.body.replaceChildren(...body.flat(Infinity).filter((x) => x != null));
}

/** Make `parent`'s children the given rows, in order, keeping the element already there for
 * each key: a row that stays keeps its layout, so a step costs what it changes, not what
 * is shown. A row is {key, make() -> element, cls (its class attribute, kept up to date)}. */
function sync(parent, rows) {
  const wanted = new Set(rows.map((r) => r.key));
  const kept = new Map();
  for (const el of [...parent.childNodes]) {
    if (el.__dlKey !== undefined && wanted.has(el.__dlKey) && !kept.has(el.__dlKey)) kept.set(el.__dlKey, el);
    else el.remove();
  }
  let at = parent.firstChild;
  for (const row of rows) {
    let el = kept.get(row.key);
    if (!el) {
      el = row.make();
      el.__dlKey = row.key;
    }
    if (row.cls !== undefined && (el.getAttribute("class") || "") !== row.cls) el.setAttribute("class", row.cls);
    if (el === at) at = at.nextSibling;
    else parent.insertBefore(el, at);
  }
}

/** A row that only says something (`… 3 line(s) above`): made again when its text changes. */
function textRow(cls, text) {
  return { key: `${cls}:${text}`, make: () => h("span", { class: cls }, text) };
}

const KEYS = {
  ArrowRight: "forward", ArrowLeft: "back", Home: "first", End: "last",
  l: "line", n: "node", g: "guard", b: "break", Backspace: "return", p: "predict", " ": "play",
};

class Viewer {
  constructor(model, el) {
    this.model = model;
    this.el = el;
    this.k = 0;
    this.i = 0;
    this.history = [];
    this.asking = null;
    this.verdict = null;
    this.note = null;
    this.flash = null;
    this.timers = new Set();
    this.root = h("div", { class: "dl-viewer", tabindex: 0 },
      h("div", { class: "dl-loading dl-dim" }, "Loading the recording…"));
    el.replaceChildren(this.root);
    this.listeners = [];
    this.listen("change:step", () => this.fromModel());
    this.listen("change:compile", () => this.fromModel());
    this.listen("change:predict", () => this.setPredict(!!model.get("predict"), false));
    this.listen("change:predictions", () => this.paintPredict());
    this.ready = this.load();
  }

  listen(name, cb) {
    this.model.on(name, cb);
    this.listeners.push([name, cb]);
  }

  destroy() {
    for (const [name, cb] of this.listeners) this.model.off(name, cb);
    this.stopPlay();
    for (const t of this.timers) clearTimeout(t);
    this.dead = true;
  }

  async load() {
    try {
      const [rec, graphs] = await Promise.all([decode(this.model.get("data")),
        this.model.get("graphs") ? decode(this.model.get("graphs")) : []]);
      if (this.dead) return;
      this.rec = rec;
      this.graphs = graphs;
      this.build();
      this.fromModel(true);
      this.root.dataset.ready = "1";
      // When the first frame with the viewer in it has been painted (wall-clock ms), for
      // tests and benchmarks: the timeout runs once the frame after this callback is done.
      requestAnimationFrame(() => setTimeout(() => {
        this.root.__dlFirstPaint = performance.timeOrigin + performance.now();
      }, 0));
    } catch (e) {
      this.root.replaceChildren(h("div", { class: "dl-banner dl-error" },
        `The recording could not be read (${e && e.message ? e.message : e}): run the cell again.`));
      throw e;
    }
  }

  get c() {
    return this.rec.compiles[this.k];
  }

  // -- building, once -----------------------------------------------------------------------

  build() {
    const rec = this.rec;
    const button = (text, title, cls, action) =>
      h("button", { class: `dl-button ${cls}`, title, type: "button", onclick: () => this.act(action) }, text);
    this.buttons = {
      first: button("first", "first step (Home)", "dl-first", "first"),
      back: button("back", "previous step (←)", "dl-back", "back"),
      play: button("play", "play / pause (Space)", "dl-play", "play"),
      forward: button("forward", "next step (→)", "dl-forward", "forward"),
      last: button("last", "last step (End)", "dl-last", "last"),
      line: button("next line", "next step on another source line, stepping over calls (L)", "dl-next-line", "line"),
      node: button("next node", "next step that adds a node to the FX graph (N)", "dl-next-node", "node"),
      guard: button("next guard", "next step that installs a guard (G)", "dl-next-guard", "guard"),
      break: button("graph break", "the step where the graph break happened (B)", "dl-graph-break", "break"),
      return: button("return", "return to where you were before the last jump (Backspace)", "dl-return", "return"),
      predict: button("predict", "predict mode: before each step forward, say what the instruction will do (P)", "dl-predict-toggle", "predict"),
      fit: button("fit graph", "shrink the FX graph to the width of its pane", "dl-fit-graph", "fit"),
    };
    this.buttons.predict.setAttribute("aria-pressed", "false");
    this.buttons.fit.setAttribute("aria-pressed", "false");
    this.selector = h("select", { class: "dl-compile", title: "the compile shown" });
    const titles = this.model.get("titles") || [];
    rec.compiles.forEach((c, k) => this.selector.append(h("option", { value: k }, titles[k] || `[${c.compile_id}] ${c.code_name}`)));
    this.selector.addEventListener("change", () => this.go(Number(this.selector.value), 0));
    this.slider = h("input", { class: "dl-slider", type: "range", min: 0, max: 0, value: 0, title: "step" });
    this.slider.addEventListener("input", () => this.go(this.k, Number(this.slider.value)));
    this.position = h("span", { class: "dl-position dl-stepno" });
    this.summary = h("div", { class: "dl-summary" });
    this.caption = h("div", { class: "dl-caption-bar" });
    this.predictBox = h("div", { class: "dl-predict", hidden: true });
    this.panes = {
      source: pane("dl-source", "Source"),
      bytecode: pane("dl-bytecode", "Bytecode"),
      stack: pane("dl-stack", "Stack"),
      graph: pane("dl-graph", "FX graph"),
      guards: pane("dl-guards", "Guards"),
    };
    this.drawing = h("div", { class: "dl-drawing" });
    this.graphText = h("div", { class: "dl-graph-text" });
    this.graphCode = h("details", { class: "dl-graph-code" });
    this.graphCode.addEventListener("toggle", () => this.paintGraphCode());
    this.panes.graph.body.replaceChildren(this.drawing, this.graphText, this.graphCode);
    this.original = pane("dl-original", "Original bytecode");
    this.rewritten = pane("dl-rewritten", "Rewritten bytecode");
    this.guardTree = pane("dl-guard-tree", "Guard tree");
    this.compare = h("details", { class: "dl-details dl-compare" },
      h("summary", null, "Bytecode: original and rewritten"),
      h("div", { class: "dl-grid" }, this.original.el, this.rewritten.el));
    this.tree = h("details", { class: "dl-details" }, h("summary", null, "Guard tree"), this.guardTree.el);
    this.compare.addEventListener("toggle", () => this.paintDetails());
    this.tree.addEventListener("toggle", () => this.paintDetails());

    const b = this.buttons;
    this.root.replaceChildren(
      h("div", { class: "dl-header" }, this.header()),
      h("div", { class: "dl-bar" }, this.selector),
      this.summary,
      h("div", { class: "dl-controls" }, b.first, b.back, b.play, b.forward, b.last, this.slider, this.position),
      h("div", { class: "dl-jumps" }, b.line, b.node, b.guard, b.break, b.return, b.predict, b.fit),
      this.predictBox,
      this.caption,
      h("div", { class: "dl-grid dl-panes" },
        h("div", { class: "dl-column" }, this.panes.source.el, this.panes.bytecode.el),
        this.panes.stack.el, this.panes.graph.el, this.panes.guards.el),
      this.compare, this.tree);
    this.root.addEventListener("keydown", (e) => this.key(e));
    this.root.addEventListener("click", (e) => this.link(e));
    if (!rec.compiles.length) {
      this.summary.replaceChildren(h("div", { class: "dl-banner" }, "Nothing was compiled while recording."));
      for (const el of [...Object.values(b), this.selector, this.slider]) el.disabled = true;
      this.position.textContent = "step 0 / 0";
    }
    this.setPredict(!!this.model.get("predict"), false);
  }

  header() {
    const r = this.rec;
    const steps = r.compiles.reduce((n, c) => n + c.steps.length, 0);
    const facts = [`${r.compiles.length} compile(s)`, `${steps} steps`];
    if (r.counters && r.counters.graph_breaks != null) facts.push(`${r.counters.graph_breaks} graph break(s)`);
    if (r.torch_version) facts.push(`torch ${r.torch_version}`);
    const out = [h("div", { class: "dl-head" }, h("b", null, "Recording"), h("span", { class: "dl-dim" }, ` · ${facts.join(" · ")}`))];
    if (r.ended_by) {
      out.push(h("div", { class: "dl-banner dl-error" }, "Ended by the exception ", code(r.ended_by),
        ": what was recorded until then is shown."));
    }
    if (r.truncated) {
      out.push(h("div", { class: "dl-banner" }, `The step cap (max_steps=${r.max_steps}) was reached: later steps were not stored. Record again with a larger cap to see them.`));
    }
    for (const e of r.events || []) {
      if (["cache_limit", "error", "recorder_error"].includes(e.kind)) {
        out.push(h("div", { class: "dl-banner dl-error" }, `${e.kind}: `, e.compile_id ? `[${e.compile_id}] ` : "", e.message));
      }
    }
    if (r.schema > 2) {
      out.push(h("div", { class: "dl-banner" }, `This recording uses schema ${r.schema}; this viewer knows schemas 1 and 2: some of it may not show. Update dynamo-lab.`));
    }
    return out;
  }

  // -- per compile ---------------------------------------------------------------------------

  selectCompile(k) {
    this.k = k;
    const c = this.c;
    this.selector.value = String(k);
    this.slider.max = String(lastStep(c));
    this.slider.disabled = !c.steps.length;
    for (const p of Object.values(this.panes)) {
      p.key = p.titleKey = p.parts = undefined;
      if (p !== this.panes.graph) p.body.replaceChildren();
    }
    this.paintSummary();
    this.buildDrawing();
    this.graphCode.replaceChildren(h("summary", null, "the graph's Python code"));
    this.graphCode.hidden = !c.graph_code;
    this.graphCode.dataset.compile = "";
    if (this.graphCode.open) this.paintGraphCode();
    this.paintDetails();
  }

  paintSummary() {
    const c = this.c;
    const name = c.filename.split("/").pop();
    const facts = [`${name}:${c.firstlineno}`, `outcome: ${c.outcome}`, `${c.steps.length} steps`,
      `${c.nodes.filter((n) => n.in_graph).length} graph nodes`, `${c.guard_details.length} guards`];
    const title = (this.model.get("titles") || [])[this.k] || `[${c.compile_id}] ${c.code_name}`;
    const out = [h("div", { class: "dl-head" }, h("b", null, title), h("span", { class: "dl-dim" }, ` · ${facts.join(" · ")}`))];
    c.recompile_reasons.forEach((reason, r) => {
      const target = recompileTarget(this.rec, this.k, reason);
      out.push(h("div", { class: "dl-banner" }, "Recompiled because a guard failed: ", reason,
        target ? h("button", {
          class: "dl-link dl-recompile", type: "button", "data-reason": r,
          title: `go to the guard that failed, in [${this.rec.compiles[target.compile].compile_id}]`,
        }, "show the guard that failed") : null));
    });
    const gb = c.graph_break;
    if (gb) {
      const at = breakStep(c);
      out.push(h("div", { class: "dl-banner dl-error" }, `Graph break${gb.lineno != null ? ` at line ${gb.lineno}` : ""}`,
        gb.line ? [": ", code(gb.line)] : "", " — ", gb.reason,
        at != null ? h("button", { class: "dl-link dl-break-link", type: "button", title: `go to step ${at}, where it broke (B)` }, "go to the break") : null));
    }
    if (c.restart_reason) out.push(h("div", { class: "dl-banner" }, `Restarted: ${c.restart_reason}`));
    if (c.error) out.push(h("div", { class: "dl-banner dl-error" }, `${c.outcome}: ${c.error}`));
    if (c.truncated) {
      out.push(h("div", { class: "dl-banner" }, "Truncated: the step cap was reached during this compile, so its later steps are missing."));
    }
    this.summary.replaceChildren(...out);
  }

  buildDrawing() {
    const c = this.c;
    const g = this.graphs[this.k] || {};
    this.shown = 0;
    this.drawn = null;
    this.drawing.replaceChildren();
    this.drawing.hidden = !!g.error || !g.nodes || !c.nodes.length;
    this.graphText.hidden = !this.drawing.hidden;
    if (this.drawing.hidden) return;
    const { rank } = nodeOrder(c);
    const nodeEls = new Array(c.nodes.length);
    const outlines = new Array(c.nodes.length);
    const renamed = [];
    const edgesAt = c.nodes.map(() => []);
    const svg = s("svg", {
      viewBox: `0 0 ${g.width} ${g.height}`, width: `${g.width}pt`, height: `${g.height}pt`,
      role: "img", "aria-label": "the FX graph",
    });
    const edges = s("g", { class: "dl-edges" });
    for (const e of g.edges) {
      const el = s("g", { class: "edge" }, s("path", { d: e.path, fill: "none" }),
        e.arrow ? s("polygon", { points: e.arrow }) : null);
      el.style.display = "none";
      edgesAt[Math.max(rank[e.tail], rank[e.head])].push(el);
      edges.append(el);
    }
    const nodes = s("g", { class: "dl-nodes" });
    for (const n of g.nodes) {
      const node = c.nodes[n.node];
      const [kind, ...geo] = n.shape;
      let outline = null;
      if (kind === "ellipse") outline = s("ellipse", { cx: geo[0], cy: geo[1], rx: geo[2], ry: geo[3] });
      else if (kind === "path") outline = s("path", { d: geo[0] });
      else if (kind === "polygon") outline = s("polygon", { points: geo[0] });
      const el = s("g", { class: `node dl-op-${node.op}${node.in_graph ? "" : " dl-dropped"}`, "data-node": n.node });
      const tip = s("title");
      const renamedAt = node.renamed_at != null && node.created_name && node.created_name !== node.name ?
        ` (named ${node.created_name} until step ${node.renamed_at})` : "";
      tip.textContent = `${node.name} = ${node.op}[${node.target}](${node.args})${renamedAt}` +
        (node.in_graph ? "" : " (not in the final graph)") + ` · made at step ${nodeStep(c, n.node)}: click to go there`;
      el.append(tip);
      if (outline) el.append(outline);
      n.text.forEach(([x, y], line) => {
        const t = s("text", { x, y, "text-anchor": "middle" });
        t.textContent = n.lines[line] ?? "";
        el.append(t);
        if (line === 0 && node.renamed_at != null && node.created_name && node.created_name !== node.name) {
          renamed.push({ node, text: t, line: n.lines[0] });
        }
      });
      el.style.display = "none";
      nodeEls[n.node] = el;
      outlines[n.node] = outline;
      nodes.append(el);
    }
    // New and linked-to nodes are outlined on a layer of their own, above the drawing:
    // the nodes themselves never change class, so marking them restyles nothing else.
    const marks = s("g", { class: "dl-marks" });
    svg.append(edges, nodes, marks);
    this.drawing.append(svg);
    const byRank = nodeOrder(c).order.map((k) => nodeEls[k]);
    this.drawn = { byRank, edgesAt: nodeOrder(c).order.map((k, r) => edgesAt[r]), renamed, outlines, marks };
  }

  // -- navigation ------------------------------------------------------------------------------

  /** Show compile k at step i. A jump (`jump: true`) can be returned from. */
  go(k, i, { jump = false, note = null, flash = null, save = true } = {}) {
    if (!this.rec || !this.rec.compiles.length) return;
    k = Math.max(0, Math.min(k, this.rec.compiles.length - 1));
    i = Math.max(0, Math.min(i, lastStep(this.rec.compiles[k])));
    if (jump && (k !== this.k || i !== this.i)) this.history.push({ k: this.k, i: this.i });
    if (!jump || k !== this.k || i !== this.i || note) {
      this.note = note;
      this.flash = flash;
    }
    if (k !== this.k || !this.built) {
      this.built = true;
      this.selectCompile(k);
    }
    this.i = i;
    this.asking = null;
    this.paint();
    if (save) this.save();
  }

  save() {
    clearTimeout(this.saveTimer);
    this.timers.delete(this.saveTimer);
    this.saveTimer = setTimeout(() => {
      this.timers.delete(this.saveTimer);
      if (this.dead) return;
      const m = this.model;
      if (m.get("compile") === this.k && m.get("step") === this.i) return;
      this.saving = true;   // our own change events: the model is half set between the two
      try {
        m.set("compile", this.k);
        m.set("step", this.i);
      } finally {
        this.saving = false;
      }
      m.save_changes();
    }, SAVE_DELAY);
    this.timers.add(this.saveTimer);
  }

  fromModel(first = false) {
    if (!this.rec || !this.rec.compiles.length || this.saving) return;
    const k = Number(this.model.get("compile")) || 0, i = Number(this.model.get("step")) || 0;
    if (!first && k === this.k && i === this.i) return;
    this.go(k, i, { save: false });
  }

  act(action) {
    if (!this.rec || !this.rec.compiles.length) return;
    const c = this.c, i = this.i;
    const jump = (to, note) => { if (to != null) this.go(this.k, to, { jump: true, note }); };
    switch (action) {
      case "first": this.go(this.k, 0); break;
      case "back": this.go(this.k, i - 1); break;
      case "forward": this.forward(); break;
      case "last": this.go(this.k, lastStep(c)); break;
      case "line": jump(nextLine(c, i) ?? lastStep(c)); break;
      case "node": jump(nextNode(c, i)); break;
      case "guard": jump(nextGuard(c, i)); break;
      case "break": jump(breakStep(c), "The graph break happened at this step."); break;
      case "return": this.back(); break;
      case "play": this.playing ? this.stopPlay() : this.play(); break;
      case "predict": this.setPredict(!this.predicting, true); break;
      case "fit": {
        const on = this.drawing.classList.toggle("dl-fit");
        this.buttons.fit.setAttribute("aria-pressed", String(on));
        break;
      }
      case "reveal": this.reveal(); break;
      case "skip": this.go(this.k, i + 1); break;
      default: break;
    }
  }

  back() {
    const to = this.history.pop();
    if (to) this.go(to.k, to.i);
    this.paintButtons();
  }

  forward() {
    if (this.i >= lastStep(this.c)) return;
    if (this.predicting) {
      if (this.asking) { this.reveal(); return; }
      const q = question(this.c, this.i);
      if (q && q.bookkeeping) this.verdict = { q, skipped: true };
      if (q && !q.bookkeeping) {
        this.stopPlay();
        this.asking = q;
        this.answer = { pushes: null, does: new Set() };
        this.verdict = null;
        this.paintPredict();
        this.paintButtons();
        return;
      }
    }
    this.go(this.k, this.i + 1);
  }

  play() {
    if (this.i >= lastStep(this.c)) this.go(this.k, 0);
    this.playing = setInterval(() => {
      if (this.dead || this.i >= lastStep(this.c) || this.asking) return this.stopPlay();
      this.forward();
    }, PLAY_INTERVAL);
    this.buttons.play.textContent = "pause";
    this.buttons.play.classList.add("dl-playing");
  }

  stopPlay() {
    if (this.playing) clearInterval(this.playing);
    this.playing = null;
    if (this.buttons) {
      this.buttons.play.textContent = "play";
      this.buttons.play.classList.remove("dl-playing");
    }
  }

  key(e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const tag = e.target && e.target.tagName;
    if (tag === "SELECT" || tag === "INPUT") {
      // the element's own keys: keep them from JupyterLab, let the element handle them
      if (e.key in KEYS || e.key.startsWith("Arrow")) e.stopPropagation();
      return;
    }
    let action = KEYS[e.key.length === 1 ? e.key.toLowerCase() : e.key];
    if (this.asking) {
      if (e.key === "Enter") action = "reveal";
      else if (e.key === "s" || e.key === "S") action = "skip";
      else if (/^[1-9]$/.test(e.key)) {
        const chip = this.predictBox.querySelectorAll(".dl-chip")[Number(e.key) - 1];
        if (chip) chip.click();
        e.preventDefault();
        e.stopPropagation();
        return;
      }
    }
    if (!action) return;
    e.preventDefault();
    e.stopPropagation();
    this.act(action);
  }

  /** Provenance: a click on a guard, a node, a source or a recompile reason. */
  link(e) {
    const t = e.target.closest ? e.target : e.target.parentElement;
    if (!t || !this.rec) return;
    this.follow(t);
    // What was clicked may have been redrawn away: keep the keys working.
    if (!t.isConnected) this.root.focus({ preventScroll: true });
  }

  follow(t) {
    const c = this.c;
    const guard = t.closest("[data-guard]");
    const node = t.closest("[data-node]");
    const source = t.closest("[data-source]");
    const reason = t.closest("[data-reason]");
    if (reason) {
      const target = recompileTarget(this.rec, this.k, c.recompile_reasons[Number(reason.dataset.reason)]);
      if (!target) return;
      const was = this.rec.compiles[target.compile];
      const g = target.guard != null ? was.guard_details[target.guard] : null;
      this.go(target.compile, target.step, {
        jump: true, flash: { guard: target.guard },
        note: g ? ["This guard failed and caused the recompile: ", code(g.text)] :
          "No guard of this compile reads like the recompile reason.",
      });
    } else if (t.closest(".dl-break-link")) {
      this.act("break");
    } else if (guard) {
      const g = Number(guard.dataset.guard);
      const to = guardStep(c, g);
      if (to != null) this.go(this.k, to, { jump: true, flash: { guard: g }, note: ["This step installed the guard ", code(c.guard_details[g].text)] });
    } else if (node) {
      const k = Number(node.dataset.node);
      this.go(this.k, nodeStep(c, k), {
        jump: true, flash: { node: k },
        note: ["This step made the graph node ", code(nameAt(c.nodes[k], nodeStep(c, k)))],
      });
    } else if (source) {
      const src = source.dataset.source;
      const to = whereRead(c, src);
      if (to == null) return;
      const s = c.steps[to];
      this.go(this.k, to, {
        jump: true, flash: { source: src },
        note: ["The source ", code(src), " was first read here, by ", code(`${s.opname} ${s.argrepr}`.trim()),
          s.lineno != null ? ` on line ${s.lineno}` : ""],
      });
    }
  }

  // -- predict mode ---------------------------------------------------------------------------

  setPredict(on, save) {
    this.predicting = on;
    if (!this.buttons) return;
    this.buttons.predict.setAttribute("aria-pressed", String(on));
    this.buttons.predict.classList.toggle("dl-on", on);
    this.predictBox.hidden = !on;
    if (!on) this.asking = null;
    if (save && this.model.get("predict") !== on) {
      this.model.set("predict", on);
      this.model.save_changes();
    }
    this.paintPredict();
    this.paintButtons();
  }

  reveal() {
    const q = this.asking;
    if (!q) return;
    const answer = { pushes: this.answer.pushes, does: EFFECTS.map((e) => e[0]).filter((d) => this.answer.does.has(d)) };
    const correct = grade(q, answer);
    const c = this.c;
    const record = {
      compile: c.compile_id, step: q.step, instruction: q.instruction, lineno: q.lineno,
      answer, truth: q.truth, correct,
    };
    this.model.set("predictions", [...(this.model.get("predictions") || []), record]);
    this.model.save_changes();
    this.verdict = { q, answer, correct };
    this.go(this.k, q.step);
  }

  paintPredict() {
    if (!this.predictBox || this.predictBox.hidden) return;
    const all = this.model.get("predictions") || [];
    const right = all.filter((p) => p.correct).length;
    const out = [h("div", { class: "dl-predict-head" }, h("b", null, "Predict"),
      h("span", { class: "dl-score dl-dim" }, ` · ${right} of ${all.length} right`),
      this.asking ? null : h("span", { class: "dl-dim" }, " · press forward (→) to be asked about the next instruction"))];
    const q = this.asking;
    if (q) {
      let n = 0;
      const chip = (label, pressed, onclick) => {
        n += 1;
        return h("button", { class: "dl-chip", type: "button", "aria-pressed": String(pressed), title: `key ${n}`, onclick },
          h("span", { class: "dl-key" }, String(n)), label);
      };
      const pushes = [null, ...q.kinds].map((kind) => chip(kind ?? "nothing", this.answer.pushes === kind,
        () => { this.answer.pushes = kind; this.paintPredict(); }));
      const does = EFFECTS.map(([id, label]) => chip(label, this.answer.does.has(id), () => {
        if (this.answer.does.has(id)) this.answer.does.delete(id); else this.answer.does.add(id);
        this.paintPredict();
      }));
      out.push(h("div", { class: "dl-question" }, "Next: ", code(q.instruction),
        q.lineno != null ? ` on line ${q.lineno}` : "", " in ", code(q.code_name), ". What will it do?"),
      h("div", { class: "dl-choices" }, h("span", { class: "dl-dim" }, "It pushes: "), pushes),
      h("div", { class: "dl-choices" }, h("span", { class: "dl-dim" }, "It also (tick all that apply): "), does),
      h("div", { class: "dl-choices" },
        h("button", { class: "dl-button dl-reveal", type: "button", title: "check your answer and take the step (Enter)", onclick: () => this.act("reveal") }, "reveal"),
        h("button", { class: "dl-button dl-skip", type: "button", title: "take the step without answering (S)", onclick: () => this.act("skip") }, "skip")));
    }
    const v = this.verdict;
    if (v && v.skipped && !q) {
      out.push(h("div", { class: "dl-verdict dl-dim" }, code(v.q.instruction),
        ": bookkeeping that changed nothing here, taken without asking."));
    } else if (v && !q) {
      const truth = [v.q.truth.pushes ? ["pushed ", code(v.q.truth.pushes)] : "pushed nothing"];
      for (const [id, , told] of EFFECTS) if (v.q.truth.does.includes(id)) truth.push(told);
      out.push(h("div", { class: `dl-verdict ${v.correct ? "dl-right" : "dl-wrong"}` },
        v.correct ? "Right: " : "Not quite. It ", truth.flatMap((t, j) => (j ? [", ", t] : [t])), "."));
    }
    this.predictBox.replaceChildren(...out);
  }

  // -- painting a step ------------------------------------------------------------------------

  paint() {
    const c = this.c, i = this.i;
    this.slider.value = String(i);
    this.position.textContent = `step ${i} / ${lastStep(c)}`;
    this.paintButtons();
    this.paintCaption();
    this.paintSource();
    this.paintBytecode();
    this.paintStack();
    this.paintGraph();
    this.paintGuards();
    this.paintPredict();
  }

  paintButtons() {
    const c = this.c, i = this.i, b = this.buttons;
    if (!c) return;
    const atEnd = i >= lastStep(c);
    b.first.disabled = b.back.disabled = i <= 0;
    b.forward.disabled = b.last.disabled = b.line.disabled = atEnd;
    b.play.disabled = !c.steps.length;
    b.node.disabled = nextNode(c, i) == null;
    b.guard.disabled = nextGuard(c, i) == null;
    b.break.disabled = breakStep(c) == null;
    b.return.disabled = !this.history.length;
  }

  crumbs(s) {
    const parts = s.inline_stack.map(([name, line]) => `${name} line ${line}`);
    return h("span", { class: "dl-crumbs" }, parts.map((p) => [p, " › "]), code(s.code_name));
  }

  paintCaption() {
    const c = this.c, i = this.i, d = stepSummary(c, i);
    const out = [];
    if (!d) {
      out.push(h("div", { class: "dl-caption" }, h("span", { class: "dl-stepno" }, `step ${i} / ${lastStep(c)}`), " · no steps"));
    } else {
      const did = [];
      if (d.nodes.length) {
        did.push([`added graph node${d.nodes.length > 1 ? "s" : ""} `, d.nodes.map((n, j) => [j ? ", " : "", code(n)])]);
      }
      if (d.guards) did.push(`installed ${plural(d.guards, "guard")} (${d.guardKinds.join(", ")})`);
      out.push(h("div", { class: "dl-caption" },
        h("span", { class: "dl-stepno" }, d.label),
        ` · ${d.lineno != null ? `line ${d.lineno}` : "line ?"} in `, code(d.code_name),
        d.inlinedFrom != null ? ` (inlined from ${d.inlinedFrom})` : "", " · ", code(d.instruction),
        did.length ? [" → ", did.map((x, j) => [j ? "; " : "", x])] : ""));
      if (d.breaks) out.push(this.breakBanner());
      if (d.capped) {
        out.push(h("div", { class: "dl-banner" }, "The step cap was reached here: Dynamo went on, but its later steps were not stored."));
      }
    }
    if (this.note) {
      out.push(h("div", { class: "dl-note" }, "↪ ", this.note,
        this.history.length ? h("span", { class: "dl-dim" }, " · return (Backspace) goes back") : ""));
    }
    this.caption.replaceChildren(...out);
  }

  breakBanner() {
    const c = this.c, gb = c.graph_break;
    const out = [h("b", null, "Graph break here:"), " ", gb.reason];
    if (gb.explanation) out.push(` — ${gb.explanation}`);
    if (c.outcome === "restarted") {
      out.push(" Dynamo abandons this attempt and traces the frame again (the next attempt), this time stopping before this instruction.");
    } else if (c.resume_functions.length) {
      out.push(" Dynamo compiles the graph built so far, runs this instruction in plain Python and continues in a resume function: ",
        c.resume_functions.map((r, j) => [j ? ", " : "", code(r.code_name)]), ".");
    }
    return h("div", { class: "dl-banner dl-error" }, out);
  }

  noSteps(p, what) {
    const c = this.c;
    fill(p, `none${this.k}`, () => [what, h("div", { class: "dl-dim" },
      `No steps were recorded for this compile: outcome ${c.outcome}${c.error ? ` (${c.error})` : ""}.`)]);
  }

  /** A pane's title, replaced only when its text would change. */
  title(p, key, make) {
    if (p.titleKey === key) return;
    p.titleKey = key;
    p.key = undefined;
    p.head.replaceChildren(...[make()].flat(Infinity).filter((x) => x != null));
  }

  /** The persistent element `name` of a pane's body (made once per compile). */
  part(p, name, make) {
    p.parts = p.parts || {};
    if (!p.parts[name]) p.parts[name] = make();
    return p.parts[name];
  }

  paintSource() {
    const c = this.c, s = c.steps[this.i], p = this.panes.source;
    if (!s) return this.noSteps(p, "Source");
    const view = sourceView(c, this.i);
    this.title(p, JSON.stringify([s.code, s.inline_stack]), () => ["Source · ", this.crumbs(s)]);
    if (view.missing) {
      sync(p.body, [{ key: `missing:${s.code}`, make: () => h("div", { class: "dl-dim" }, `Source not available (${view.missing}).`) }]);
      return;
    }
    const pre = this.part(p, "pre", () => h("pre", { class: "dl-code" }));
    sync(p.body, [{ key: "pre", make: () => pre }]);
    sync(pre, [
      view.above ? textRow("dl-more", `… ${view.above} line(s) above`) : null,
      ...view.rows.map((r) => ({
        key: `${s.code}:${r.lineno}`,
        cls: `dl-row${r.broke ? " dl-break" : ""}${r.current ? " dl-current" : ""}`,
        make: () => h("span", { "data-line": r.lineno },
          `${String(r.lineno).padStart(4)} `, h("span", { class: "dl-mark" }), " ", r.text),
      })),
      view.below ? textRow("dl-more", `… ${view.below} line(s) below`) : null,
    ].filter(Boolean));
  }

  paintBytecode() {
    const c = this.c, s = c.steps[this.i], p = this.panes.bytecode;
    if (!s) return this.noSteps(p, "Bytecode");
    const view = bytecodeView(c, this.i);
    this.title(p, JSON.stringify([s.code, s.inline_stack]), () =>
      ["Bytecode · ", this.crumbs(s), (p.offset = h("span", { class: "dl-dim" }))]);
    const offset = ` · offset ${s.offset}`;
    if (p.offset.textContent !== offset) p.offset.textContent = offset;
    if (view.missing) {
      sync(p.body, [{ key: `missing:${s.code}`, make: () => h("div", { class: "dl-dim" }, "(unknown code)") }]);
      return;
    }
    const pre = this.part(p, "pre", () => h("pre", { class: "dl-code" }));
    sync(p.body, [
      view.aligned ? {
        key: "pair-head", make: () => h("div", { class: "dl-pair dl-pair-head dl-dim" },
          h("span", { class: "dl-cell" }, "as Dynamo walks it (cleaned)"),
          h("span", { class: "dl-cell" }, "as Python compiled it (dis)")),
      } : null,
      { key: "pre", make: () => pre },
    ].filter(Boolean));
    const first = view.above;
    sync(pre, [
      view.above ? textRow("dl-more", `… ${view.above} instruction(s) above`) : null,
      ...view.rows.map((r, j) => ({
        key: `${s.code}:${first + j}`,
        cls: `dl-row${r.current ? " dl-current" : ""}${r.change ? ` dl-${r.change}` : ""}${view.aligned ? " dl-pair" : ""}`,
        make: () => (view.aligned ?
          h("span", null, h("span", { class: "dl-cell" }, r.walked ?? ""), h("span", { class: "dl-cell dl-orig" }, r.original ?? "")) :
          h("span", null, r.walked)),
      })),
      view.below ? textRow("dl-more", `… ${view.below} instruction(s) below`) : null,
    ].filter(Boolean));
  }

  varItem(v, key, name, isNew) {
    const flash = this.flash && this.flash.source != null && v.source === this.flash.source;
    return {
      key, cls: `${isNew ? "dl-new" : ""}${flash ? " dl-flash" : ""}`.trim(),
      make: () => {
        const parts = [h("span", { class: v.lazy && !v.realized ? "dl-kind dl-lazy" : "dl-kind" }, v.kind)];
        if (v.detail) parts.push(" ", v.detail);
        if (v.lazy && v.realized) parts.push(" ", h("span", { class: "dl-tag" }, "lazy, realized"));
        if (v.source) {
          parts.push(" ", h("button", {
            class: "dl-src dl-link", type: "button", "data-source": v.source,
            title: "go to the step that first read this source",
          }, `<- ${v.source}`));
        }
        return h("li", { title: v.python_type ? `models a ${v.python_type}` : null },
          name != null ? [h("b", null, name), " = "] : null, parts);
      },
    };
  }

  paintStack() {
    const c = this.c, s = c.steps[this.i], p = this.panes.stack;
    if (!s) return this.noSteps(p, "Stack and locals");
    const view = stackView(c, this.i);
    const change = view.first ? "" : ` · popped ${view.popped}, pushed ${view.pushed}`;
    this.title(p, JSON.stringify([s.stack.length, change, s.code, s.inline_stack]), () =>
      ["Stack ", h("span", { class: "dl-dim" }, `(top first) · ${s.stack.length} item(s)${change}`), " · ", this.crumbs(s)]);
    const stack = this.part(p, "stack", () => h("ol", { class: "dl-list" }));
    const locals = this.part(p, "locals", () => h("ul", { class: "dl-list" }));
    sync(p.body, [
      view.stack.length ? { key: "stack", make: () => stack } : textRow("dl-faint", "(empty)"),
      { key: "subtitle", make: () => h("div", { class: "dl-subtitle" }, "Symbolic locals") },
      view.locals.length ? { key: "locals", make: () => locals } : textRow("dl-faint", "(none)"),
    ]);
    const depth = s.stack.length;
    sync(stack, view.stack.map((e, j) => this.varItem(e.v, `${depth - 1 - j}:${s.stack[depth - 1 - j]}`, null, e.isNew)));
    sync(locals, view.locals.map((e) => (e.gone ?
      { key: `gone:${e.name}`, cls: "dl-gone", make: () => h("li", null, h("b", null, e.name), " (deleted)") } :
      this.varItem(e.v, `${e.name}=${s.locals[e.name]}`, e.name, e.isNew))));
  }

  paintGraph() {
    const c = this.c, i = this.i, p = this.panes.graph;
    const { shown, total, fresh, names } = graphView(c, i);
    const { order } = nodeOrder(c);
    p.head.replaceChildren("FX graph ", h("span", { class: "dl-dim" },
      ` · ${shown} of ${total} node(s)`,
      names.length ? [" · new: ", names.map((n, j) => [j ? ", " : "", code(n)])] : ""));
    const d = this.drawn;
    if (d) {
      const lo = Math.min(this.shown, shown), hi = Math.max(this.shown, shown);
      for (let r = lo; r < hi; r++) {
        const display = r < shown ? "" : "none";
        d.byRank[r].style.display = display;
        for (const e of d.edgesAt[r]) e.style.display = display;
      }
      this.shown = shown;
      const flashed = this.flash && this.flash.node != null ? this.flash.node : null;
      const mark = (k, cls) => ({
        key: `${cls}${k}`,
        make: () => {
          const el = d.outlines[k] ? d.outlines[k].cloneNode(false) : s("g");
          el.setAttribute("class", cls);
          el.setAttribute("data-node", k);
          return el;
        },
      });
      sync(d.marks, [...fresh.map((k) => mark(k, "dl-new")), ...(flashed != null ? [mark(flashed, "dl-flash")] : [])]);
      for (const r of d.renamed) {
        const name = nameAt(r.node, i);
        const text = name === r.node.name ? r.line : name;
        if (r.text.textContent !== text) r.text.textContent = text;
      }
    } else {
      const g = this.graphs[this.k] || {};
      // names change at renames, not only when nodes appear
      const renamed = c.nodes.filter((n) => n.renamed_at != null && n.renamed_at <= i).length;
      const key = `${this.k}|${shown}|${fresh.length}|${renamed}`;
      if (this.graphText.dataset.key !== key) {
        this.graphText.dataset.key = key;
        const items = order.slice(0, shown).map((k) => {
          const n = c.nodes[k];
          const meta = n.dtype ? ` ${n.dtype}${n.shape || ""}` : "";
          const when = n.step == null ? "after tracing" : `step ${n.step}`;
          return h("li", { class: fresh.includes(k) ? "dl-new" : null, "data-node": k },
            `${nameAt(n, i)} = ${n.op}[${n.target}](${n.args})${meta}   # ${when}${n.in_graph ? "" : "   (not in the final graph)"}`);
        });
        this.graphText.replaceChildren(
          g.error ? h("div", { class: "dl-faint" }, `No drawing: ${g.error}.`) : "",
          items.length ? h("ul", { class: "dl-list" }, items) : h("div", { class: "dl-faint" }, "(no nodes yet)"));
      }
    }
  }

  paintGraphCode() {
    const c = this.c;
    if (!this.graphCode.open || !c.graph_code || this.graphCode.dataset.compile === String(this.k)) return;
    this.graphCode.dataset.compile = String(this.k);
    const byName = new Map(c.nodes.map((n, k) => [n.name, k]));
    const rows = c.graph_code.split("\n").map((line) => {
      const m = /^(\s*)([A-Za-z_]\w*)( = .*)$/.exec(line);
      if (m && byName.has(m[2])) {
        const k = byName.get(m[2]);
        return h("span", { class: "dl-row" }, m[1],
          h("button", { class: "dl-link dl-node-link", type: "button", "data-node": k, title: `go to step ${nodeStep(c, k)}, which made this node` }, m[2]),
          m[3]);
      }
      return h("span", { class: "dl-row" }, line);
    });
    this.graphCode.replaceChildren(h("summary", null, "the graph's Python code"), h("pre", { class: "dl-code" }, rows));
  }

  guardItem(k, isNew) {
    const c = this.c, g = c.guard_details[k];
    const step = guardStep(c, k);
    const flash = this.flash && this.flash.guard === k;
    return {
      key: `g${k}`,
      cls: [isNew ? "dl-new" : "", step != null ? "dl-linked" : "", flash ? "dl-flash" : ""].join(" ").trim(),
      make: () => {
        let where;
        if (g.lineno) {
          where = [`line ${g.lineno}`, g.line ? `: ${g.line}` : "", g.code_name ? ` (in ${g.code_name})` : ""];
        } else if (g.ambient) {
          where = ["ambient: installed for every frame"];
        } else {
          where = ["installed after tracing, when the graph was compiled"];
        }
        if (g.step != null) where.push(` · step ${g.step}`);
        return h("li", {
          "data-guard": step != null ? k : null,
          title: step != null ? `installed at step ${step}: click to go there` : null,
        }, g.text, h("span", { class: "dl-where" }, where));
      },
    };
  }

  paintGuards() {
    const c = this.c, i = this.i, p = this.panes.guards;
    const view = guardsView(c, i);
    const flashed = this.flash && this.flash.guard != null ? this.flash.guard : null;
    this.title(p, `${this.k}|${view.total}`, () =>
      ["Guards ", h("span", { class: "dl-dim" }, `· ${view.total} installed so far (${view.ambient.length} ambient)`)]);
    let shown = view.shown;
    // A guard reached through a link is shown even when it is older than the recent ones.
    if (flashed != null && !shown.some((g) => g.k === flashed) && guardStep(c, flashed) != null && guardStep(c, flashed) <= i) {
      shown = [{ k: flashed, isNew: c.guard_details[flashed].step === i }, ...shown];
    }
    const list = this.part(p, "list", () => h("ul", { class: "dl-list" }));
    const after = this.part(p, "after", () => h("ul", { class: "dl-list" }));
    sync(p.body, [
      view.ambient.length ? {
        key: `ambient:${this.k}`, make: () => h("details", { class: "dl-ambient" },
          h("summary", null, `${view.ambient.length} ambient guard(s), installed before the first instruction`),
          h("ul", { class: "dl-list" }, view.ambient.map((k) => this.guardItem(k, false).make()))),
      } : null,
      view.earlier ? textRow("dl-more dl-faint", `… ${view.earlier} earlier guard(s); all of them are in the guard tree below`) : null,
      shown.length ? { key: "list", make: () => list } : null,
      !shown.length && !view.after.length ? textRow("dl-faint", "No guards installed by the traced code yet.") : null,
      view.after.length ? { key: "after-title", make: () => h("div", { class: "dl-subtitle" }, "After tracing") } : null,
      view.after.length ? { key: "after", make: () => after } : null,
    ].filter(Boolean));
    sync(list, shown.map((g) => this.guardItem(g.k, g.isNew)));
    sync(after, view.after.map((k) => this.guardItem(k, false)));
  }

  // -- per compile, on demand: original and rewritten bytecode, guard tree ----------------------

  paintDetails() {
    if (!this.rec || !this.rec.compiles.length) return;
    const c = this.c;
    if (this.compare.open) {
      const first = c.codes[0];
      fill(this.original, `${this.k}`, () => first ?
        [["Original bytecode · ", code(first.name)], h("pre", { class: "dl-code" },
          codeListing(first).original.map((line) => h("span", { class: "dl-row" }, line)))] :
        ["Original bytecode", h("div", { class: "dl-faint" }, "(unknown)")]);
      fill(this.rewritten, `${this.k}`, () => this.rewrittenBody());
    }
    if (this.tree.open) {
      fill(this.guardTree, `${this.k}`, () => c.guard_tree ?
        ["Guard tree", h("pre", { class: "dl-code" },
          c.guard_tree.replace(/^\n+|\n+$/g, "").split("\n").map((line) => h("span", { class: "dl-row" }, line)))] :
        ["Guard tree", h("div", { class: "dl-faint" }, `None: this compile produced no cache entry (outcome ${c.outcome}).`)]);
    }
  }

  rewrittenBody() {
    const c = this.c;
    if (!c.modified_bytecode) {
      const why = c.outcome === "restarted" ? "this attempt was abandoned and restarted" : `outcome ${c.outcome}`;
      return ["Rewritten bytecode", h("div", { class: "dl-faint" }, `None: ${why}.`)];
    }
    const rows = (text) => h("pre", { class: "dl-code" }, text.split("\n").slice(1).map((line) => {
      let cls = "dl-row";
      if (line.includes("record_pregraph_bytecode")) cls += " dl-runtime";   // Dynamo's own bookkeeping
      else if (line.includes("__compiled_fn_") || line.includes("__resume_at_")) cls += " dl-callgraph";
      return h("span", { class: cls }, line);
    }));
    const out = [];
    if (c.resume_functions.length) {
      out.push(h("div", { class: "dl-dim" }, "Resume functions: ", c.resume_functions.map((r, j) => [j ? ", " : "", code(r.code_name)])));
    }
    out.push(rows(c.modified_bytecode));
    for (const r of c.resume_functions) {
      out.push(h("details", null, h("summary", null, "resume function ", code(r.code_name), " (global ", code(r.global_name), ")"),
        rows(r.bytecode)));
    }
    return ["Rewritten bytecode", out];
  }
}

function render({ model, el }) {
  const viewer = new Viewer(model, el);
  el.__dlViewer = viewer;   // for tests and benchmarks in a page
  return () => viewer.destroy();
}

export default { render };
