// Dynamo Lab's trace viewer, joined from widgets/viewer/js/ by `python -m widgets.viewer.join`:
// edit those sources, then run it. The contract with the host is in js/index.js, below.

// ---- js/stepfields.js ------------------------------------------------------------------------

// A step's fields as capture declares them (capture/steps.py, STEP_FIELDS): written by
// `python -m widgets.viewer.stepfields`, never by hand. `column` says how a field is
// sent as columns: place, plain, text (an index into `strings`), table (an index into
// `table`), sparse ([step, value] pairs where not empty); `default` is read where a
// recording made before the field existed has no column for it.
export const STEP_FIELDS = [
  {"name": "index", "column": "place"},
  {"name": "offset", "column": "plain"},
  {"name": "opname", "column": "text"},
  {"name": "argrepr", "column": "text"},
  {"name": "lineno", "column": "plain"},
  {"name": "depth", "column": "plain"},
  {"name": "code", "column": "plain"},
  {"name": "code_name", "column": "text", "default": ""},
  {"name": "graph_size", "column": "plain", "default": 0},
  {"name": "nodes_added", "column": "sparse", "default": []},
  {"name": "nodes_renamed", "column": "sparse", "default": []},
  {"name": "guards_added", "column": "sparse", "default": []},
  {"name": "inline_stack", "column": "table", "table": "inline_stacks", "default": []},
  {"name": "stack", "column": "plain", "default": []},
  {"name": "locals", "column": "table", "table": "locals_table", "default": {}},
];

// ---- js/decode.js ----------------------------------------------------------------------------

// The bytes a host hands over, decoded into the recording as every pane reads it: gunzip,
// parse, and each compile's steps made into step objects where they came as columns. Pure
// functions (no DOM), so node imports this file and tests it directly.

/** The bytes of a DataView, ArrayBuffer or typed array, as a Uint8Array. */
export function bytesOf(data) {
  if (data instanceof Uint8Array) return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  throw new TypeError("expected bytes (a DataView, ArrayBuffer or Uint8Array)");
}

/** gunzip, then UTF-8 decode. The chunks go straight into one buffer of the size gzip's
 * last four bytes give (what it holds, mod 2^32), decoded once: on a 55 MB recording about
 * half the time of `new Response(stream).text()`, which joins and decodes as it goes. */
export async function gunzipText(data) {
  const bytes = bytesOf(data);
  const inflate = new DecompressionStream("gzip");
  const writer = inflate.writable.getWriter();
  writer.write(bytes).catch(() => {});   // a bad stream is reported by the reader below
  writer.close().catch(() => {});
  const tail = bytes.length >= 4 ? new DataView(bytes.buffer, bytes.byteOffset + bytes.length - 4, 4).getUint32(0, true) : 0;
  let out = new Uint8Array(tail), at = 0;
  const reader = inflate.readable.getReader();
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    if (at + r.value.length > out.length) {   // more than one gzip member, or over 4 GB
      const bigger = new Uint8Array(Math.max(2 * out.length, at + r.value.length));
      bigger.set(out.subarray(0, at));
      out = bigger;
    }
    out.set(r.value, at);
    at += r.value.length;
  }
  return new TextDecoder().decode(out.subarray(0, at));
}

/** The recording exactly as `Recording.to_json()` wrote it: each compile's steps and vars
 * arrays of objects also where they came as columns (`columns=True`). */
export async function decode(data) {
  const rec = JSON.parse(await gunzipText(data));
  if (rec && Array.isArray(rec.compiles)) {
    for (const c of rec.compiles) {
      c.steps = stepRows(c.steps);
      c.vars = varRows(c.vars);
      for (const n of c.nodes || []) if (n.module === undefined) n.module = null;   // recorded before modules were
    }
  }
  return rec;
}

/** Readings sent as columns (capture/codec.py, `var_columns`) as the objects the
 * schema's rows are; rows are returned as they are. */
export function varRows(cols) {
  if (Array.isArray(cols) || cols == null) return cols;
  const n = cols.length, out = new Array(n), strings = cols.strings;
  const text = (k) => (k == null ? null : strings[k]);
  const { kind, python_type, source, detail, lazy, realized, node } = cols;
  for (let i = 0; i < n; i++) {
    out[i] = { kind: text(kind[i]), python_type: text(python_type[i]), source: text(source[i]),
      detail: text(detail[i]), lazy: lazy[i], realized: realized[i], node: text(node[i]) };
  }
  return out;
}

/** Steps sent as columns (capture/steps.py, `step_columns`) as the step objects the
 * schema's rows are; rows are returned as they are. Each field is read as its column says
 * (STEP_FIELDS, written from capture's declaration). Values equal from step to step (the
 * locals of a frame, its callers, an empty list) are one shared object: read, never change. */
export function stepRows(cols) {
  if (Array.isArray(cols) || cols == null) return cols;
  const n = cols.length, out = new Array(n);
  const names = STEP_FIELDS.map((f) => f.name), readers = STEP_FIELDS.map((f) => fieldReader(f, cols));
  const k = readers.length;
  for (let i = 0; i < n; i++) {
    const step = {};
    for (let j = 0; j < k; j++) step[names[j]] = readers[j](i);
    out[i] = step;
  }
  return out;
}

/** The reader of one field's column: step i -> its value as the schema's rows hold it. */
function fieldReader(field, cols) {
  const col = cols[field.name];
  if (field.column === "place") return col ? (i) => col[i] : (i) => i;
  if (col == null) {
    if (!("default" in field)) throw new Error(`the steps' columns have no ${field.name}`);
    const value = field.default;
    return () => value;
  }
  if (field.column === "plain") return (i) => col[i];
  if (field.column === "text") {
    const strings = cols.strings;
    return (i) => strings[col[i]];
  }
  if (field.column === "table") {
    const table = cols[field.table];
    return (i) => table[col[i]];
  }
  if (field.column === "sparse") {
    const at = new Map(col), none = [];
    return (i) => at.get(i) || none;
  }
  throw new Error(`step field ${field.name}: unknown column ${field.column}`);
}

// ---- js/recording.js -------------------------------------------------------------------------

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

// ---- js/dom.js -------------------------------------------------------------------------------

// Making and updating the page: elements whose text is always text, a pane's frame, and a
// keyed update that keeps what stays (so a step costs what it changes, not what is shown).
//
// Text from the recorded program reaches the page only as text (text nodes, attribute
// values), never as markup; the engine has already bounded and escaped it
// (capture/text.py), so nothing here cuts or escapes it again.

const SVG_NS = "http://www.w3.org/2000/svg";

/** An element; string children become text nodes, never markup. */
export function h(tag, props, ...children) {
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

/** An SVG element with its attributes; children as for `h`. */
export function svgElement(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
  for (const child of children) if (child != null) el.append(child);
  return el;
}

export function code(text) {
  return h("code", null, text);
}

export function plural(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** `a, b, c` with each item made by `make` (code by default). */
export function commaList(items, make = code) {
  return items.map((x, j) => [j ? ", " : "", make(x)]);
}

/** The callers a title shows of an inline stack: the compiled frame (the user's function,
 * where the path starts), the innermost `keep`, and how many are left out between. */
export function crumbParts(stack, keep = 1) {
  const parts = stack.map(([name, line]) => `${name} line ${line}`);
  if (parts.length <= keep + 2) return parts;
  return [parts[0], `… ${parts.length - keep - 1} more`, ...parts.slice(-keep)];
}

/** Where step s runs: its callers, then its own code (`f line 3 › g`); a deep path keeps its
 * two ends, and the whole of it is the title. */
export function crumbs(s) {
  const whole = [...s.inline_stack.map(([name, line]) => `${name} line ${line}`), s.code_name].join(" › ");
  return h("span", { class: "dl-crumbs", title: whole }, crumbParts(s.inline_stack).map((p) => [p, " › "]), code(s.code_name));
}

// -- a pane: a title and a body, each replaced only when what it shows changed --------------

let paneCount = 0;   // ids for the panes' titles, unique in the page

/** A pane: its title (a heading) and its body, the pane's one tab stop (roving.js), named
 * by the title. */
export function pane(cls, title) {
  const id = `dl-pane-title-${++paneCount}`;
  const head = h("div", { class: "dl-title", role: "heading", "aria-level": 3, id }, title);
  const body = h("div", { class: "dl-pane-body", tabindex: 0, role: "group", "aria-labelledby": id });
  const el = h("div", { class: `dl-pane ${cls}` }, head, body);
  return { el, head, body, key: undefined };
}

/** Forget what a pane shows (another compile): its title and body are made again. */
export function resetPane(p, { keepBody = false } = {}) {
  p.key = p.titleKey = p.parts = undefined;
  if (!keepBody) p.body.replaceChildren();
}

/** Replace a pane's title and body only when what they show changed. */
export function fill(p, key, make) {
  if (p.key === key) return;
  p.key = key;
  const [title, ...body] = make();
  p.head.replaceChildren(...[title].flat(Infinity).filter((x) => x != null));
  p.body.replaceChildren(...body.flat(Infinity).filter((x) => x != null));
}

/** A pane's title, replaced only when its text would change. */
export function setTitle(p, key, make) {
  if (p.titleKey === key) return;
  p.titleKey = key;
  p.key = undefined;
  p.head.replaceChildren(...[make()].flat(Infinity).filter((x) => x != null));
}

/** The persistent element `name` of a pane's body (made once per compile). */
export function part(p, name, make) {
  p.parts = p.parts || {};
  if (!p.parts[name]) p.parts[name] = make();
  return p.parts[name];
}

/** What a pane says for a compile that recorded no steps. */
export function noSteps(p, c, k, what) {
  fill(p, `none${k}`, () => [what, h("div", { class: "dl-dim" },
    `No steps were recorded for this compile: outcome ${c.outcome}${c.error ? ` (${c.error})` : ""}.`)]);
}

// -- keyed rows -----------------------------------------------------------------------------

/** Make `parent`'s children the given rows, in order, keeping the element already there for
 * each key: a row that stays keeps its layout, so a step costs what it changes, not what
 * is shown. A row is {key, make() -> element, cls (its class attribute, kept up to date),
 * current (whether it is the current row: aria-current, kept up to date)}. */
export function sync(parent, rows) {
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
    if (row.current !== undefined && el.hasAttribute("aria-current") !== !!row.current) {
      if (row.current) el.setAttribute("aria-current", "step"); else el.removeAttribute("aria-current");
    }
    if (el === at) at = at.nextSibling;
    else parent.insertBefore(el, at);
  }
}

/** A row that only says something (`… 3 line(s) above`): made again when its text changes;
 * `tag` "li" for a row of a list. */
export function textRow(cls, text, tag = "span") {
  return { key: `${cls}:${text}`, make: () => h(tag, { class: cls }, text) };
}

// ---- js/shapes.js ----------------------------------------------------------------------------

// Shapes at a step, read from the recording's `shapes` (capture/shapes.py): what the shapes
// pane (panes/shapes.js) shows, as plain values; where its links lead; and the words of
// dynamic shapes as elements that explain themselves on hover (`data-help-term`, help.js).

export const SYMBOL = /^(?:zuf|zf|ps|s|u)\d+$/;
const NUMBER = /^-?\d+(?:\.\d+)?$/;
// The words of a symbolic expression that explain themselves.
const TERMS = /\b(?:zuf|zf|ps|s|u)\d+\b|\b(?:Eq|Ne|Max|Min|FloorDiv|Mod|int_oo|guard_or_false|guard_or_true)\b|torch\._check\b|\[-?(?:\d+|int_oo), -?(?:\d+|int_oo)\]/g;

// -- what the pane shows (pure) -------------------------------------------------------------

/** `L['x'].size()[0]` -> {input: "L['x']", dim: 0}; any other source is an input of its own. */
export function sizeSource(source) {
  const m = /^(.*)\.size\(\)\[(\d+)\]$/.exec(source || "");
  return m ? { input: m[1], dim: Number(m[2]) } : { input: source, dim: null };
}

/** torch's note of a place (`x + y  # f.py:3 in f (fake_impls.py:1960 in infer_size)`) ->
 * {line, fn, code (the user's text, or null), framework (the function that asked, or null)}. */
export function placeOf(note) {
  if (!note) return null;
  const hash = note.lastIndexOf("  # ");
  const code = hash >= 0 ? note.slice(0, hash).trim() || null : null;
  const rest = hash >= 0 ? note.slice(hash + 4) : note.trim().replace(/^#\s*/, "");
  const m = /:(\d+) in (\S+)/.exec(rest);
  const fw = /\(([^()]*) in (\w+)\)\s*$/.exec(rest);
  return { line: m ? Number(m[1]) : null, fn: m ? m[2] : null, code, framework: fw ? fw[2] : null };
}

// A symbol exists from the step that made it (one made outside any step: throughout).
const made = (sym, i) => sym.step == null || sym.step <= i;

/** What a symbol's replacement says at step i: null before it happened (or never), else
 * {name, to, number (a constant: specialized; else tied to another symbol), step, here,
 * line, code, why} — the line and why from the guard its step added on it, else torch's note. */
export function replacementAt(shapes, sym, i) {
  if (sym.replacement == null) return null;
  if (sym.replaced_step != null && sym.replaced_step > i) return null;
  const at = placeOf(sym.replaced_at) || {};
  const pat = new RegExp(`\\b${sym.name}\\b`);
  const g = shapes.guards.find((x) => x.step != null && x.step === sym.replaced_step && pat.test(x.expr));
  return {
    name: sym.name, to: sym.replacement, number: NUMBER.test(sym.replacement), step: sym.replaced_step,
    here: sym.replaced_step === i, line: g && g.lineno != null ? g.lineno : at.line ?? null,
    code: at.code ?? null, why: (g && g.why) || (at.framework ? `asked by ${at.framework}` : ""),
  };
}

/** One sentence for a replacement: `s77 became 4 here: line 3, a broadcast: ...`. */
export function becameText(r) {
  const when = r.here ? "here" : r.step != null ? `at step ${r.step}` : "when the graph was compiled";
  const where = [r.line != null ? `line ${r.line}${r.code ? ` (${r.code})` : ""}` : null, r.why || null].filter(Boolean);
  return `${r.name} became ${r.to} ${when}${where.length ? `: ${where.join(", ")}` : ""}`;
}

/** The pane at step i of compile c: {state: "old" (recorded before shapes were) | "none"
 * (no shape environment) | "static" (every size static: `sizes`) | "shapes", inputs, others,
 * guards, after, became, counts}. */
export function shapesAt(c, i) {
  if (!c || !("shapes" in c)) return { state: "old" };
  const shapes = c.shapes;
  if (!shapes) return { state: "none" };
  const atEnd = !c.steps.length || i >= lastStep(c);
  const byName = new Map(shapes.symbols.map((s) => [s.name, s]));
  const inputs = [];
  const inputOf = (name) => {
    let x = inputs.find((y) => y.input === name);
    if (!x) inputs.push((x = { input: name, dims: [] }));
    return x;
  };
  const shown = new Set();
  for (const d of shapes.dims) {
    const { input, dim } = sizeSource(d.source);
    const sym = d.dynamic === false || NUMBER.test(d.value) ? null : byName.get(d.value) || null;
    const row = { source: d.source, dim, size: d.size, value: d.value, how: d.how, policy: d.policy, marks: d.marks || [] };
    if (!sym && NUMBER.test(d.value)) {
      row.state = "static";
    } else {
      row.state = d.policy === "UNBACKED" || (sym && sym.name.startsWith("u")) ? "unbacked" : "dynamic";
      row.symbol = d.value;
      row.made = sym ? made(sym, i) : true;
      row.madeAt = sym ? sym.step : null;
      row.range = sym ? sym.range : null;   // as it was when the compile ended
      row.final = atEnd;
      row.isNew = !!sym && sym.step != null && sym.step === i;
      row.shared = sym ? sym.sources.filter((s) => s !== d.source) : [];
      row.became = sym && row.made ? replacementAt(shapes, sym, i) : null;
      if (row.became && row.became.number) row.state = "specialized";
      if (sym) shown.add(sym.name);
    }
    inputOf(input).dims.push(row);
  }
  // Symbols no input dimension stands for (nonzero's length, an .item()).
  const others = shapes.symbols.filter((s) => !shown.has(s.name) && made(s, i)).map((s) => ({
    name: s.name, unbacked: s.name.startsWith("u"), range: s.range, hint: s.hint, node: s.node,
    sources: s.sources, step: s.step, isNew: s.step != null && s.step === i, became: replacementAt(shapes, s, i), final: atEnd,
  }));
  const guards = [], after = [];
  shapes.guards.forEach((g, j) => {
    const row = { j, expr: g.expr, step: g.step, line: g.lineno, fn: g.function, why: g.why,
      code: (placeOf(g.user) || {}).code ?? null, node: g.node, oblivious: !!g.size_oblivious };
    if (g.step != null && g.step <= i) guards.push({ ...row, isNew: g.step === i });
    else if (g.step == null && atEnd) after.push(row);
  });
  const became = shapes.symbols.map((s) => replacementAt(shapes, s, i)).filter((r) => r && r.here);
  const symbols = shapes.symbols.filter((s) => made(s, i)).length;
  if (!shapes.symbols.length && shapes.dims.every((d) => NUMBER.test(d.value))) {
    return { state: "static", inputs, guards, after, others: [], became: [], symbols: 0 };
  }
  return { state: "shapes", inputs, others, guards, after, became, symbols,
    fresh: guards.filter((g) => g.isNew).length };
}

/** The symbols an input guard's text is about: those whose sources it names
 * (`9 <= L['x'].size()[0]` -> ["s77"]). */
export function symbolsOfText(c, text) {
  if (!c || !c.shapes || !text) return [];
  return c.shapes.symbols.filter((s) => s.sources.some((src) => text.includes(src))).map((s) => s.name);
}

/** What step i of compile c did to its shapes, in words (`made s77, added a symbolic
 * guard`), or null when nothing. */
export function newAt(c, i) {
  const shapes = c && c.shapes;
  if (!shapes || !c.steps.length) return null;
  const made = shapes.symbols.filter((s) => s.step === i).map((s) => s.name);
  const replaced = shapes.symbols.filter((s) => s.replaced_step === i && s.replacement != null).map((s) => s.name);
  const guards = shapes.guards.filter((g) => g.step === i).length;
  const said = [made.length ? `made ${made.join(", ")}` : null, replaced.length ? `replaced ${replaced.join(", ")}` : null,
    guards ? `added ${guards === 1 ? "a symbolic guard" : `${guards} symbolic guards`}` : null].filter(Boolean);
  return said.length ? said.join(", ") : null;
}

/** What compile c's shape environment held of symbol `name`, in a sentence, or null. */
export function symbolSaid(c, name) {
  const sym = c && c.shapes ? c.shapes.symbols.find((s) => s.name === name) : null;
  if (!sym) return null;
  const what = sym.sources.length ? `stands for ${sym.sources.join(" and ")}` : sym.node ? `is the size ${sym.node} made` : "was made";
  const parts = [`From the recording: ${name} ${what}${sym.step != null ? ` (made at step ${sym.step})` : ""}`,
    sym.hint != null ? `hint ${sym.hint}` : "no hint (unbacked)", `range ${sym.range} when the compile ended`];
  if (sym.replacement != null) parts.push(`replaced by ${sym.replacement}${sym.replaced_step != null ? ` at step ${sym.replaced_step}` : ""}`);
  return `${parts.join("; ")}. The shapes pane (the button beside the guards' title) shows it at each step.`;
}

/** The symbol names in a piece of text (`[s77, 3]` -> ["s77"]). */
export function symbolsIn(text) {
  return [...new Set(String(text || "").match(/\b(?:zuf|zf|ps|s|u)\d+\b/g) || [])];
}

/** Where a click on element `t` (a symbolic guard of the shapes pane) leads: {compile,
 * step, flash, note}, or null. */
export function shapeLink(rec, k, t) {
  const el = t.closest ? t.closest("[data-shape-guard], [data-shape-step]") : null;
  const c = rec.compiles[k];
  if (!el || !c || !c.shapes) return null;
  if (el.dataset.shapeGuard != null) {
    const j = Number(el.dataset.shapeGuard), g = c.shapes.guards[j];
    if (!g) return null;
    if (g.step == null) {
      return { compile: k, step: lastStep(c), flash: { shapeGuard: j },
        note: `The symbolic guard ${g.expr} was added when the graph was compiled, after the last step.` };
    }
    return { compile: k, step: g.step, flash: { shapeGuard: j }, note: `This step added the symbolic guard ${g.expr}.` };
  }
  const to = Number(el.dataset.shapeStep);
  return Number.isFinite(to) ? { compile: k, step: to, flash: { symbol: el.dataset.shapeSymbol || null } } : null;
}

// -- the words, as elements -------------------------------------------------------------------

/** Text with each word of dynamic shapes explaining itself (symbols also lit and linked). */
export function withTerms(text) {
  const out = [];
  let at = 0;
  text = String(text);
  for (const m of text.matchAll(TERMS)) {
    if (m.index > at) out.push(text.slice(at, m.index));
    const w = m[0];
    if (SYMBOL.test(w)) out.push(h("span", { class: "dl-sym", "data-help-symbol": w, "data-shape-symbol": w, tabindex: 0 }, w));
    else if (w.startsWith("[")) out.push(shapeTerm("range", w));
    else out.push(shapeTerm(w, w));
    at = m.index + w.length;
  }
  if (at < text.length) out.push(text.slice(at));
  return out;
}

export function shapeTerm(name, said, cls = "dl-term") {
  return h("span", { class: cls, "data-help-term": name, "data-help-said": said, tabindex: 0 }, said);
}

export function shapeStepButton(step, label, symbol = null) {
  return h("button", { type: "button", class: "dl-link", "data-shape-step": step, "data-shape-symbol": symbol }, label);
}

// ---- js/help.js ------------------------------------------------------------------------------

// Help where a word appears: an opcode, a VariableTracker class, a guard kind or a symbol
// explains itself on hover and on keyboard focus, in the project's own words (the `help`
// the kernel sends with the recording: capture/help.py `for_recording`, made from
// capture/help.json, which the text view and notebooks/GLOSSARY.md share). At a graph
// break, Dynamo's own explanation and hints from the installed torch's graph-break
// registry (read when recording: GraphBreak.gb_id and .registry), repeats of one break
// merged. And what a screen reader hears: the step said after each change.
//
// A word carries what it is in data-* attributes (`data-help-op`, `data-help-tracker`,
// `data-help-guard`, `data-help-symbol`, `data-help-term` for a word of dynamic shapes:
// `Eq`, a range, unbacked, `torch._check`, with `data-help-said` the text shown); one
// tooltip element per viewer (role="tooltip") says it, and the word points at it with
// aria-describedby while it shows. All of it is text (textContent), never markup.

const HELP_ATTRS = ["data-help-op", "data-help-tracker", "data-help-guard", "data-help-symbol", "data-help-term"];
const HELP_SELECTOR = HELP_ATTRS.map((a) => `[${a}]`).join(",");
export const SYMBOL_RE = /\b(?:zuf|zf|ps|s|u)\d+\b/g;
let tipCount = 0;

/** The help of one word: {title, lines} (lines of text), or null when there is none. */
export function helpOf(help, rec, k, attrs) {
  if (!help) return null;
  const op = attrs["data-help-op"], kind = attrs["data-help-tracker"];
  const guard = attrs["data-help-guard"], symbol = attrs["data-help-symbol"];
  if (op != null) {
    const e = (help.opcodes || {})[op];
    if (!e) return { title: op, lines: ["No help for this opname yet."] };
    const lines = [e.does, `Dynamo: ${e.dynamo}`];
    const where = e.python ? `Python ${e.python.join(", ")} only` : "Python 3.11, 3.12 and 3.13";
    lines.push(help.python ? `${where}; this recording: Python ${help.python}.` : `${where}.`);
    return { title: `${op} (opcode)`, lines };
  }
  if (kind != null) {
    const e = (help.trackers || {})[kind];
    if (!e) return { title: kind, lines: ["A VariableTracker class with no help yet."] };
    return { title: `${kind} (VariableTracker)`, lines: [e.text, e.family ? `(said of every …${e.family}; no entry of its own)` : null].filter(Boolean) };
  }
  if (guard != null) {
    const text = (help.guards || {})[guard];
    return { title: `${guard} (guard kind)`, lines: [text || "No help for this guard kind yet."] };
  }
  const term = attrs["data-help-term"];
  if (term != null) {
    const text = (help.terms || {})[term];
    if (!text) return null;
    const said = attrs["data-help-said"];
    return { title: said && said !== term ? `${said} (${term})` : term, lines: [text] };
  }
  if (symbol != null) {
    const m = /^(zuf|zf|ps|s|u)\d+$/.exec(symbol);
    const syms = help.symbols || {};
    const lines = [(m && syms[m[1]]) || syms.other || "A symbol of Dynamo's shape environment."];
    const c = rec && k != null ? rec.compiles[k] : null;
    // where the readings first show it, and what the shape environment held of it
    for (const x of [symbolOrigin(c, symbol), symbolSaid(c, symbol)]) if (x) lines.push(x);
    return { title: `${symbol} (symbol)`, lines };
  }
  return null;
}

/** Where a symbol comes from, read from the recording: the first reading of an input whose
 * shape holds it (`dimension 0 of L['x']`), and the first step that shows it. */
export function symbolOrigin(c, symbol) {
  if (!c) return null;
  const dims = (detail) => {
    const m = /\[([^\]]*)\]/.exec(detail || "");
    return m ? m[1].split(",").map((x) => x.trim()) : [];
  };
  for (const v of c.vars) {
    const d = dims(v.detail).indexOf(symbol);
    if (v.source && d >= 0) {
      const j = c.steps.findIndex((s) => s.stack.some((id) => c.vars[id] === v) ||
        Object.values(s.locals).some((id) => c.vars[id] === v));
      return `From the recording: dimension ${d} of ${v.source} (${v.detail})${j >= 0 ? `, first seen at step ${j}` : ""}.`;
    }
  }
  const node = c.nodes.find((n) => n.op === "placeholder" && n.name === symbol);
  if (node) return "From the recording: an input of the graph (a placeholder) of its own.";
  return null;
}

/** Text with each symbol (`s77`) as a focusable word that explains itself. */
export function withSymbols(text) {
  const out = [];
  let at = 0;
  for (const m of String(text).matchAll(SYMBOL_RE)) {
    if (m.index > at) out.push(text.slice(at, m.index));
    out.push(h("span", { class: "dl-sym", "data-help-symbol": m[0], tabindex: 0 }, m[0]));
    at = m.index + m[0].length;
  }
  if (at < text.length) out.push(text.slice(at));
  return out;
}

// -- the graph break: Dynamo's own words, once per break ----------------------------------

/** What Dynamo says about compile k's graph break: its GB id and type, the explanation and
 * hints (the message's, which name this program's values, else the registry's), the
 * registry's general form, and every other compile that met the same break (merged). */
export function breakHelp(rec, k) {
  const c = rec.compiles[k];
  const gb = c && c.graph_break;
  if (!gb) return null;
  const reg = gb.registry || null;
  const hints = [];
  for (const hint of (gb.hints && gb.hints.length ? gb.hints : (reg && reg.Hints) || [])) {
    if (hint && !hints.includes(hint.trim())) hints.push(hint.trim());
  }
  const same = [];
  rec.compiles.forEach((o, j) => {
    const b = o.graph_break;
    if (j !== k && b && b.reason === gb.reason && b.lineno === gb.lineno && b.code_name === gb.code_name &&
        (b.gb_id || null) === (gb.gb_id || null)) same.push(o.compile_id);
  });
  return {
    id: gb.gb_id || null, type: (reg && reg.Gb_type) || gb.reason,
    explanation: gb.explanation || (reg && reg.Explanation) || null, hints,
    general: reg && reg.Explanation && reg.Explanation !== gb.explanation ? reg.Explanation : null,
    context: reg ? reg.Context || null : null, link: gb.link || null, also: same,
  };
}

// -- the tooltip ------------------------------------------------------------------------

/** One tooltip for a viewer's root: shows the help of the word under the pointer or with
 * the keyboard focus. `context()` gives {help, rec, k}. Returns {el, hide, destroy}. */
export function helpTips(root, context) {
  const id = `dl-tip-${++tipCount}`;
  const el = h("div", { class: "dl-tooltip", role: "tooltip", id, hidden: true });
  root.append(el);
  let target = null;

  function show(t) {
    if (t === target) return;
    hide();
    const attrs = {};
    for (const a of [...HELP_ATTRS, "data-help-said"]) if (t.hasAttribute(a)) attrs[a] = t.getAttribute(a);
    const { help, rec, k } = context();
    const said = helpOf(help, rec, k, attrs);
    if (!said) return;
    el.replaceChildren(h("div", { class: "dl-tip-title" }, said.title), ...said.lines.map((x) => h("div", null, x)));
    el.hidden = false;
    target = t;
    t.setAttribute("aria-describedby", id);
    place(t);
  }

  function place(t) {
    const r = t.getBoundingClientRect(), box = root.getBoundingClientRect();
    const w = Math.min(440, Math.max(220, box.width - 16));
    el.style.maxWidth = `${w}px`;
    let left = r.left - box.left;
    left = Math.max(4, Math.min(left, box.width - w - 4));
    el.style.left = `${left}px`;
    el.style.top = `${r.bottom - box.top + 4}px`;
    const tip = el.getBoundingClientRect();
    // No room below in the window: above the word instead.
    if (tip.bottom > window.innerHeight && r.top - tip.height - 4 > 0) el.style.top = `${r.top - box.top - tip.height - 4}px`;
  }

  function hide() {
    if (target) target.removeAttribute("aria-describedby");
    target = null;
    el.hidden = true;
  }

  const word = (e) => (e.target && e.target.closest ? e.target.closest(HELP_SELECTOR) : null);
  // After a paint a word may come to lie under a pointer that has not moved: the browser
  // says "mouseover", but nobody pointed at it. Such a word shows its help once the pointer
  // moves (to other coordinates) again.
  let still = false, at = null;
  const moved = (e) => !at || e.clientX !== at[0] || e.clientY !== at[1];
  const on = {
    mouseover: (e) => {
      if (still && !moved(e)) return;
      still = false;
      at = [e.clientX, e.clientY];
      const t = word(e);
      if (t) show(t);
    },
    mousemove: (e) => {
      if (!moved(e)) return;
      at = [e.clientX, e.clientY];
      if (!still) return;
      still = false;
      const t = word(e);
      if (t && t !== target) show(t);
    },
    mouseout: (e) => { const t = word(e); if (t && t === target && !t.contains(e.relatedTarget) && document.activeElement !== t) hide(); },
    focusin: (e) => { const t = word(e); if (t) show(t); else hide(); },
    focusout: (e) => { if (target && !target.contains(e.relatedTarget)) hide(); },
    keydown: (e) => { if (e.key === "Escape" && target) { hide(); e.stopPropagation(); } },
  };
  for (const [name, f] of Object.entries(on)) root.addEventListener(name, f);
  return {
    el, hide,
    refresh() { still = true; if (target && !target.isConnected) hide(); },
    destroy() { for (const [name, f] of Object.entries(on)) root.removeEventListener(name, f); el.remove(); },
  };
}

// -- the viewer's aids, as one more pane ---------------------------------------------------

/** The tooltips, the live region and Enter on a guard, a graph node or a linked row (keyboard-only
 * provenance), on a viewer's root: a pane the Viewer paints like the others. The help is
 * the model's `help` value; Enter follows a link as a click does (`viewer.follow`). */
export function helpAids(viewer) {
  const root = viewer.root, help = viewer.model.get("help") || null;
  const follow = (t) => viewer.follow(t);
  let view = null;
  const tips = helpTips(root, () => ({ help, rec: view && view.rec, k: view && view.k }));
  const live = announcer();
  root.addEventListener("keydown", (e) => {   // before the Viewer's own keys: registered first
    const linked = e.key === "Enter" && !e.ctrlKey && !e.metaKey && !e.altKey && e.target.closest &&
      e.target.closest("[data-guard], [data-node], [data-graph-call], [data-resume], .dl-details [data-source]");
    if (!linked || linked.tagName === "BUTTON") return;
    e.preventDefault();
    e.stopImmediatePropagation();
    follow(linked);
    if (!linked.isConnected) root.focus({ preventScroll: true });   // redrawn away: keys still work
  });
  return {
    tips, live, selectCompile() { tips.hide(); },
    paint(v) {
      view = v;
      if (!live.el.isConnected) root.append(tips.el, live.el);   // the Viewer fills its root after making its panes
      live.say(v.c, v.i);
      queueMicrotask(() => tips.refresh());   // once the other panes have painted
    },
  };
}

// -- what a screen reader hears ----------------------------------------------------------

/** The slider's and the live region's words for step i: `step 12 of 77, line 5`. */
export function stepSpoken(c, i) {
  const s = c && c.steps[i];
  if (!s) return `step ${i} of ${c ? lastStep(c) : 0}`;
  return `step ${i} of ${lastStep(c)}, line ${s.lineno ?? "?"}`;
}

/** A polite live region that says each step, in the same frame as the step is painted (a
 * screen reader says the latest when keys are held; nothing changes the page later). */
export function announcer() {
  const el = h("div", { class: "dl-live", "aria-live": "polite", "aria-atomic": "true" });
  return {
    el,
    say(c, i) {
      const s = c && c.steps[i];
      const text = s ? `${stepSpoken(c, i)}: ${instructionOf(s)}${s.nodes_added.length ? `, adds ${s.nodes_added.join(", ")}` : ""}` +
        `${s.guards_added.length ? `, ${plural(s.guards_added.length, "guard")}` : ""}` : stepSpoken(c, i);
      if (el.textContent !== text) el.textContent = text;
    },
    destroy() {},
  };
}

// ---- js/compare.js ---------------------------------------------------------------------------

// Compare mode's data: two compiles of one frame side by side, as capture.compare aligned
// them in the kernel (widgets/viewer/state.py `comparisons`, one entry per pair offered),
// and how the compiles of a recording relate (a recompile of, a resume of). Pure functions
// of the recording and those entries (no DOM): node imports this file and tests it.
//
// Nothing here reads a reason's text: a recompile names the compile it replaces
// (`replaces`) and the guards that failed (`failed_guards`, each naming its compile and,
// by index, the guard as installed), and the pairs carry guard indices.

/** The `comparisons` bytes of a model, decoded (an empty list when there are none). */
export async function comparisonsOf(model) {
  const data = model.get("comparisons");
  return data ? await decode(data) : [];
}

// -- the compiles of one frame, and how they relate ----------------------------------------

/** Compiles of one code object (and one generation: ids start again after a reset). On a
 * page of several ranks (capture.ranks.merged: each compile has its `rank`, each rank
 * generations of its own) the compiles of that code on every rank. */
function frameKey(c) {
  return JSON.stringify([c.code_name, c.filename, c.firstlineno, c.rank == null ? c.generation || 0 : "ranks"]);
}

/** Whether `a` and `b` are of one generation, where compile ids name the same compiles
 * (ids start again after a reset, and on a page of several ranks with each rank). */
function sameGeneration(a, b) {
  return (a.generation || 0) === (b.generation || 0);
}

/** The index of the compile with this id in this generation, or -1. */
export function indexOfCompile(rec, id, generation = 0) {
  return rec.compiles.findIndex((c) => c.compile_id === id && (c.generation || 0) === generation);
}

/** The other compiles of compile k's frame, in recording order. */
export function framePartners(rec, k) {
  const key = frameKey(rec.compiles[k]);
  const out = [];
  rec.compiles.forEach((c, j) => { if (j !== k && frameKey(c) === key) out.push(j); });
  return out;
}

/** Whom compile k is compared with by default: the compile it replaces, else a compile
 * that replaces it, else the nearest compile of its frame (earlier first); null if alone. */
export function defaultPartner(rec, k) {
  const c = rec.compiles[k];
  const gen = c.generation || 0;
  const partners = framePartners(rec, k);
  if (c.replaces != null) {
    const j = indexOfCompile(rec, c.replaces, gen);
    if (partners.includes(j)) return j;
  }
  const later = partners.find((j) => j > k && rec.compiles[j].replaces === c.compile_id && sameGeneration(rec.compiles[j], c));
  if (later !== undefined) return later;
  const earlier = partners.filter((j) => j < k);
  if (earlier.length) return earlier[earlier.length - 1];
  return partners.length ? partners[0] : null;
}

/** Whom to compare with after the viewer moved from compile `from` to compile `to`:
 * the compile left when the two swapped sides, the same partner within the frame, else
 * the default for the new compile. */
export function keptPartner(rec, partner, from, to) {
  if (to === partner) return from;
  if (partner != null && framePartners(rec, to).includes(partner)) return partner;
  return defaultPartner(rec, to);
}

/** One failed guard in a few words: `L['x'] size: expected [4], got [8]`. */
export function failedText(fg) {
  const what = fg.what ? ` ${fg.what}` : "";
  return `${fg.source || fg.kind}${what}: expected ${fg.expected}, got ${fg.seen}`;
}

/** How compile k relates to the compiles before it, in a few words, or "": a recompile
 * (`recompile of [0/0]: L['x'] size: expected [4], got [8]`), a resume function (`resume
 * of [0/0_1] after its graph break at line 6`). For the compile selector. */
export function relationOf(rec, k) {
  const c = rec.compiles[k];
  const gen = c.generation || 0;
  if (c.replaces != null) {
    const failed = (c.failed_guards || []).filter((fg) => fg.compile_id === c.replaces);
    const more = failed.length > 1 ? ` (+${failed.length - 1} more)` : "";
    return `recompile of [${c.replaces}]` + (failed.length ? `: ${failedText(failed[0])}${more}` : "");
  }
  for (let j = k - 1; j >= 0; j--) {
    const p = rec.compiles[j];
    if ((p.generation || 0) !== gen || !(p.resume_functions || []).some((r) => r.code_name === c.code_name)) continue;
    const gb = p.graph_break;
    return `resume of [${p.compile_id}]` + (gb && gb.lineno != null ? ` after its graph break at line ${gb.lineno}` : "");
  }
  return "";
}

// -- a pair, as shipped ----------------------------------------------------------------------

/** The pair of compiles ka and kb as shipped: {d, left, right} with `left` the earlier
 * compile (d.ka), or null when that pair was not compared. */
export function pairOf(comparisons, ka, kb) {
  const d = (comparisons || []).find((x) => (x.ka === ka && x.kb === kb) || (x.ka === kb && x.kb === ka));
  return d ? { d, left: d.ka, right: d.kb } : null;
}

/** The alignment as two arrays of step indices, -1 where one compile has no step: pair p
 * is (a[p], b[p]); `at.a[i]` is the pair of step i of the left compile, `at.b` the right. */
export function alignment(d) {
  return memo(d, "aligned", () => {
    const a = [], b = [];
    for (const [x, y, n] of d.runs || []) {
      for (let j = 0; j < n; j++) {
        a.push(x == null ? -1 : x + j);
        b.push(y == null ? -1 : y + j);
      }
    }
    const index = (side) => {
      let top = -1;
      for (const i of side) if (i > top) top = i;
      const at = new Int32Array(top + 1).fill(-1);
      side.forEach((i, p) => { if (i >= 0) at[i] = p; });
      return at;
    };
    return { a, b, at: { a: index(a), b: index(b) } };
  });
}

/** The step of the other compile beside step i of one side ("a": the left, "b": the
 * right): {step, exact} where exact says the two ran the same instruction at the same
 * line; where the other ran nothing there, its last step before (exact false), or null. */
export function partnerStep(d, side, i) {
  const al = alignment(d);
  const mine = al.at[side], other = side === "a" ? al.b : al.a;
  const p = i < mine.length ? mine[i] : -1;
  if (p < 0) return null;
  if (other[p] >= 0) return { step: other[p], exact: true };
  for (let q = p - 1; q >= 0; q--) if (other[q] >= 0) return { step: other[q], exact: false };
  for (let q = p + 1; q < other.length; q++) if (other[q] >= 0) return { step: other[q], exact: false };
  return null;
}

// -- what the compare mode shows --------------------------------------------------------

/** A guard that failed, as a row: what it read, expected and got, and where it came from. */
function failedRow(rec, k, fg) {
  const c = rec.compiles[k];
  const step = fg.step != null && c && c.steps.length ? Math.min(fg.step, lastStep(c)) : null;
  const g = c && fg.detail != null ? c.guard_details[fg.detail] : null;
  return {
    compile: k, step, lineno: fg.lineno, guard: fg.detail, kind: fg.kind || (g ? g.kind : ""),
    source: fg.source, what: fg.what, expected: fg.expected, seen: fg.seen,
    text: g ? g.text : null, line: lineText(c, fg.lineno, step),
  };
}

/** The source text of a line of compile c (in the code of step `step` when it has one). */
export function lineText(c, lineno, step = null) {
  if (!c || lineno == null) return null;
  const s = step != null ? c.steps[step] : null;
  const info = s && c.codes ? c.codes[s.code] : null;
  for (const code of [info, c].filter(Boolean)) {
    const k = lineno - code.firstlineno;
    if (code.source_lines && k >= 0 && k < code.source_lines.length) return code.source_lines[k].trim();
  }
  return null;
}

/** The guards of compile `left` that failed on the call that made compile `right`. */
export function failedGuards(rec, left, right) {
  const a = rec.compiles[left], b = rec.compiles[right];
  if (!sameGeneration(a, b)) return [];   // its ids name compiles of another generation (or rank)
  return (b.failed_guards || []).filter((fg) => fg.compile_id === a.compile_id).map((fg) => failedRow(rec, left, fg));
}

/** Calls Dynamo refused to compile (a cache limit, fail_on_recompile) that failed guards
 * of the given compiles: [{kind, compile_id, message, rows}], rows as failedGuards'. */
export function refusals(rec, ks) {
  const byId = new Map(ks.filter((k) => k != null).map((k) => [rec.compiles[k].compile_id, k]));
  const out = [];
  for (const e of rec.events || []) {
    const rows = (e.failed_guards || []).filter((fg) => byId.has(fg.compile_id))
      .map((fg) => failedRow(rec, byId.get(fg.compile_id), fg));
    if (rows.length) out.push({ kind: e.kind, compile_id: e.compile_id, message: e.message, rows });
  }
  return out;
}

/** The guard rows of the pair: those changed (the left's text and the right's), then those
 * only in the left, then only in the right; each with the step that installed it. */
export function guardChanges(rec, d) {
  const a = rec.compiles[d.ka], b = rec.compiles[d.kb];
  const row = (k, c, g) => ({ compile: k, guard: g, text: c.guard_details[g].text,
    step: c.guard_details[g].step != null && c.steps.length ? Math.min(c.guard_details[g].step, lastStep(c)) : null });
  return {
    changed: d.guards_changed.map((x) => ({ kind: x.kind, source: x.source, was: row(d.ka, a, x.a), now: row(d.kb, b, x.b) })),
    onlyLeft: d.guards_only_in_a.map((g) => row(d.ka, a, g)),
    onlyRight: d.guards_only_in_b.map((g) => row(d.kb, b, g)),
  };
}

/** A tracker as the comparison reads it: object ids and node names do not count. */
export function readingOf(v) {
  if (!v) return "";
  const detail = (v.detail || "").replace(/\s*node=\S+/g, "").replace(/\b\d{9,}\b/g, "<id>").replace(/\b0x[0-9a-f]{6,16}\b/gi, "0x<addr>");
  return [v.kind, v.python_type, detail, v.source].join("\u0000");
}

/** Step i of compile c beside step j of compile o (null where o has none): its instruction,
 * line, stack (top first) and locals, each entry marked `differs` where the other's
 * reading at the same place differs, and the guards it installed. */
export function stepBeside(c, i, o, j) {
  const s = c.steps[i];
  if (!s) return null;
  const t = o && j != null ? o.steps[j] : null;
  const their = (id) => (id == null ? null : o.vars[id]);
  const stack = [];
  for (let pos = s.stack.length - 1, up = 0; pos >= 0; pos--, up++) {
    const theirs = t ? t.stack[t.stack.length - 1 - up] : undefined;
    const v = c.vars[s.stack[pos]];
    stack.push({ v, differs: !!t && readingOf(v) !== readingOf(their(theirs)) });
  }
  const locals = Object.entries(s.locals).map(([name, id]) => {
    const v = c.vars[id];
    return { name, v, differs: !!t && readingOf(v) !== readingOf(their(t.locals[name])) };
  });
  const sameInstruction = !!t && instructionOf(s) === instructionOf(t) && s.lineno === t.lineno;
  return {
    i, instruction: instructionOf(s), lineno: s.lineno, line: lineText(c, s.lineno, i), depth: s.depth,
    code_name: s.code_name, stack, locals, guards: s.guards_added || [], sameInstruction,
    stackDiffers: !!t && s.stack.length !== t.stack.length,
  };
}

/** Where the first divergence is on each side: {left, right} step indices (null where a
 * side ran nothing there), or null when the two traces never went different ways. */
export function divergenceSteps(d) {
  const dv = d && d.divergence;
  if (!dv) return null;
  let { a, b } = dv;
  // An instruction only one side ran: the other is shown at its step beside it.
  if (a == null && b != null) a = (partnerStep(d, "b", b) || {}).step ?? null;
  if (b == null && a != null) b = (partnerStep(d, "a", a) || {}).step ?? null;
  return { left: a, right: b, exactLeft: dv.a != null, exactRight: dv.b != null };
}

// -- where compare mode's links lead -------------------------------------------------------

/** Where a compare-mode link leads: `dataset` {cmpGo: "k:step", cmpGuard: "g" (optional),
 * cmpNote: "failed" | "installed" | ""} -> {compile, step, flash, note} or null. */
export function compareTarget(rec, dataset) {
  const m = /^(\d+):(\d+)$/.exec(dataset.cmpGo || "");
  if (!m) return null;
  const k = Number(m[1]), step = Number(m[2]);
  const c = rec.compiles[k];
  if (!c) return null;
  const g = dataset.cmpGuard != null && dataset.cmpGuard !== "" ? Number(dataset.cmpGuard) : null;
  const guard = g != null ? c.guard_details[g] : null;
  const s = c.steps[Math.min(step, lastStep(c))];
  const where = s && s.lineno != null ? ` (line ${s.lineno})` : "";
  let note = null;
  if (guard && dataset.cmpNote === "failed") note = [`This step of [${c.compile_id}]${where} installed the guard that failed: `, guard.text];
  else if (guard) note = [`This step of [${c.compile_id}]${where} installed the guard `, guard.text];
  return { compile: k, step: Math.min(step, lastStep(c)), flash: g != null ? { guard: g } : null, note };
}

/** Where "first divergence" leads from compile k compared with `other`: the step of k's
 * side (or, where k ran nothing there, the other compile's), {compile, step, note}. */
export function divergenceTarget(rec, comparisons, k, other) {
  const pair = other == null ? null : pairOf(comparisons, k, other);
  const at = pair && divergenceSteps(pair.d);
  if (!at) return null;
  const dv = pair.d.divergence;
  // On k's side when k ran the instruction there; else on the side that ran it alone.
  const left = k === pair.left ? at.exactLeft : !at.exactRight;
  const to = left ? pair.left : pair.right;
  const step = left ? at.left : at.right;
  if (step == null) return null;
  return { compile: to, step, note: `The first divergence: ${dv.instruction} on line ${dv.lineno} (${dv.why}).` };
}

/** What compare says where no guard of `a` is listed as failing for `b`: {text, reasons}, the
 * `reasons` Dynamo's own (its first failure only) where a TORCH_TRACE log kept no more. */
export function noFailedGuards(a, b) {
  const ia = compileId(a), ib = compileId(b);
  const replaces = b.replaces === a.compile_id && sameGeneration(a, b);
  const reasons = replaces && !b.steps.length ? b.recompile_reasons || [] : [];
  if (reasons.length) return { text: "Not recorded; Dynamo's own reason (its first failure only):", reasons };
  return { reasons, text: replaces ? `${ib} replaces ${ia}, but no guard of it is recorded as failing.` :
    `None recorded: ${ib} ${b.replaces ? `was compiled instead of [${b.replaces}]` : "is not a recompile"}.` };
}

/** Why no first divergence is found for `a` beside `b` (either kept without steps), or null. */
export function steplessNote(a, b) {
  const stepless = [a, b].filter((c) => !c.steps.length).map((c) => `[${c.compile_id}]`);
  if (!stepless.length) return null;
  return `Not known: ${stepless.join(" and ")} ${stepless.length > 1 ? "were" : "was"} kept without steps ` +
    "(read from a TORCH_TRACE log, or outside record(only=...)); record the program to compare it step by step.";
}

// ---- js/navigation.js ------------------------------------------------------------------------

// Where a step is and how to get elsewhere: the file and line a learner knows it by, the
// timeline's marks (which steps add graph nodes or guards, where the graph break and a
// restart are, where inlined calls run, the runs of the current line), stepping over an
// inlined call, running to the end of one, and going to a typed step. Pure functions of a
// compile (no DOM), so node tests them directly; the controls draw the marks
// (timeline.js), the Viewer turns an action into a step.
//
// An inlined call in the recording: Dynamo's InliningInstructionTranslator runs the
// callee's instructions one level deeper (`depth`), and they are recorded before the
// caller's CALL that started them, which is recorded when the callee has returned. So the
// steps of one call are a run of deeper steps, and the caller's CALL comes right after.

// -- where a step is -------------------------------------------------------------------------

/** A file as a learner knows it: a Jupyter cell's temporary file (IPython writes each cell
 * to /tmp/ipykernel_<pid>/<hash>.py) is "cell"; any other file, its base name. */
export function fileLabel(filename) {
  const f = String(filename || "");
  if (/(^|[\\/])ipykernel_\d+[\\/][^\\/]+\.py$/.test(f) || /^<ipython-input-\d+/.test(f)) return "cell";
  return f.split(/[\\/]/).pop();
}

/** For a step with no line of its own, the line its frame reaches next (the def line of an
 * inlined function, for the instructions before its first line); null for a step that has
 * a line, or when the frame never reaches one. */
export function lineBefore(c, i) {
  const s = c.steps[i];
  if (!s || s.lineno != null) return null;
  const next = memo(c, "lineBefore", () => {
    const out = new Map();   // step -> the line reached next in its frame
    const pending = new Map();   // frame key -> the steps waiting for a line
    c.steps.forEach((t, j) => {
      const key = `${t.depth}:${t.code}:${JSON.stringify(t.inline_stack)}`;
      if (t.lineno == null) {
        if (!pending.has(key)) pending.set(key, []);
        pending.get(key).push(j);
      } else if (pending.has(key)) {
        for (const w of pending.get(key)) out.set(w, t.lineno);
        pending.delete(key);
      }
    });
    return out;
  });
  if (next.has(i)) return next.get(i);
  const info = c.codes[s.code];
  return info ? info.firstlineno : null;
}

/** The kinds of mark a step can carry on the timeline (bits of `timelineMarks`). */
export const MARK = { node: 1, guard: 2, break: 4, restart: 8, inlined: 16, call: 32 };

/** Per step, the marks it carries: MARK bits in a Uint8Array. `inlined` is every step
 * run inside an inlined call; `call` is the first step of one (where the call begins). */
export function timelineMarks(c) {
  return memo(c, "timeline", () => {
    const n = c.steps.length, marks = new Uint8Array(n);
    for (let j = 0; j < n; j++) {
      const s = c.steps[j];
      let m = 0;
      if (s.nodes_added.length) m |= MARK.node;
      if (s.guards_added.length) m |= MARK.guard;
      if (s.depth > 0) m |= MARK.inlined;
      if (j > 0 && s.depth > c.steps[j - 1].depth) m |= MARK.call;
      marks[j] = m;
    }
    const b = breakStep(c);
    if (b != null) marks[b] |= c.outcome === "restarted" ? MARK.restart : MARK.break;
    return marks;
  });
}

/** The timeline at `width` pixels: per pixel column, the OR of the marks of its steps. */
export function timelineBins(c, width) {
  const marks = timelineMarks(c), n = marks.length;
  const w = Math.max(1, Math.floor(width));
  const bins = new Uint8Array(w);
  for (let j = 0; j < n; j++) bins[binOf(n, w, j)] |= marks[j];
  return bins;
}

/** The pixel column of step j on a timeline of w columns for n steps. */
export function binOf(n, w, j) {
  return n <= 1 ? 0 : Math.min(w - 1, Math.floor((j * w) / n));
}

/** The steps of pixel column x (of w) for n steps, [lo, hi): with fewer steps than
 * columns, a step is a band of columns and each column is within one step. */
export function columnSteps(n, w, x) {
  if (n <= 0) return [0, 0];
  if (n < w) {
    const j = Math.min(n - 1, Math.floor((x * n) / w));
    return [j, j + 1];
  }
  const at = (col) => Math.min(n, Math.ceil((col * n) / w));
  return [at(x), x + 1 >= w ? n : at(x + 1)];
}

const PRIORITY = [MARK.break, MARK.restart, MARK.node, MARK.guard, MARK.call];

/** The step a click at pixel column x (of w) means: the most telling marked step within
 * `reach` columns of it (a break, then a node, a guard, the start of a call; the nearest
 * first), else the first step of that column. */
export function stepAtColumn(c, w, x, reach = 2) {
  const marks = timelineMarks(c), n = marks.length;
  if (!n) return 0;
  if (x >= w) return n - 1;   // past the right end: the last step
  x = Math.max(0, Math.floor(x));
  for (const kind of PRIORITY) {
    for (let d = 0; d <= reach; d++) {
      for (const col of d ? [x - d, x + d] : [x]) {
        if (col < 0 || col >= w) continue;
        const [lo, hi] = columnSteps(n, w, col);
        for (let j = lo; j < hi; j++) if (marks[j] & kind) return j;
      }
    }
  }
  return Math.min(columnSteps(n, w, x)[0], n - 1);
}

/** The runs of consecutive steps on step i's line (same code and depth), as [first, last]
 * pairs: the timeline marks the current line's runs. A run ends where another line or
 * another frame's step (an inlined call) comes in between. Found once per line. */
export function lineRuns(c, i) {
  const s = c.steps[i];
  if (!s || s.lineno == null) return [];
  const cache = memo(c, "lineRuns", () => new Map());
  const key = `${s.code}:${s.depth}:${s.lineno}`;
  if (cache.has(key)) return cache.get(key);
  const runs = [], steps = c.steps;
  let start = -1;
  for (let j = 0; j < steps.length; j++) {
    const t = steps[j];
    const on = t.lineno === s.lineno && t.code === s.code && t.depth === s.depth;
    if (on && start < 0) start = j;
    else if (!on && start >= 0) { runs.push([start, j - 1]); start = -1; }
  }
  if (start >= 0) runs.push([start, steps.length - 1]);
  cache.set(key, runs);
  return runs;
}

// -- inlined calls ---------------------------------------------------------------------------

/** The next step after i at depth `depth` or shallower (null if none). */
function nextAtOrAbove(c, i, depth) {
  const steps = c.steps;
  for (let j = i + 1; j < steps.length; j++) if (steps[j].depth <= depth) return j;
  return null;
}

/** Step over: where step i's next step begins an inlined call, the step after the whole
 * call (the caller's CALL, once the callee has returned); null where no call begins. */
export function stepOver(c, i) {
  const s = c.steps[i], next = c.steps[i + 1];
  if (!s || !next || next.depth <= s.depth) return null;
  return nextAtOrAbove(c, i, s.depth);
}

/** Run to the end of the inlined call step i is in: the caller's step that the call
 * returns to (its CALL); null in the frame itself, or when the recording ends first. */
export function stepOut(c, i) {
  const s = c.steps[i];
  if (!s || s.depth === 0) return null;
  return nextAtOrAbove(c, i, s.depth - 1);
}

/** The step a typed text names: an integer within the compile, else null. `clamped`
 * says a number past either end was brought inside. */
export function typedStep(c, text) {
  const t = String(text).trim();
  if (!/^-?\d+$/.test(t) || !c.steps.length) return null;
  const n = Number(t), to = Math.max(0, Math.min(n, lastStep(c)));
  return { to, clamped: to !== n };
}

/** What a navigation action asks for at step i: {to} (null: nowhere), with the note the
 * jump leaves or what is said when there is nowhere to go; undefined for other actions. */
export function navigate(action, c, i) {
  if (action === "over") {
    return { to: stepOver(c, i), none: "The next step does not begin an inlined call: forward (→) steps." };
  }
  if (action === "out") {
    const to = stepOut(c, i);
    return { to, note: to != null ? "The inlined call returned here, to its caller's CALL." : null,
      none: c.steps[i] && c.steps[i].depth ? "The recording ends inside this inlined call." : "This step is in the frame itself, not in an inlined call." };
  }
  if (typeof action === "string" && action.startsWith("goto:")) {
    const t = typedStep(c, action.slice(5));
    if (!t) return { to: null, none: `Type a step number from 0 to ${lastStep(c)}.` };
    return { to: t.to, note: t.clamped ? `Steps are numbered 0 to ${lastStep(c)}: this is step ${t.to}.` : null };
  }
  return undefined;
}

// ---- js/answers.js ---------------------------------------------------------------------------

// What `dynamo-lab explain` says about each compile, as the kernel shipped it
// (widgets/viewer/state.py `answers`, capture/explain.py `viewer_answers`, entry k for
// compile k), kept beside the decoded recording (which stays exactly what the engine
// wrote): the compile menu, the break card and the compare view say these words and make
// up none of their own. Pure functions (no DOM): node imports this file and tests it.

const shipped = new WeakMap();   // a decoded recording -> its answers

/** Keep `answers` (the model's `answers`) as what explain says of recording `rec`'s compiles. */
export function setAnswers(rec, answers) {
  shipped.set(rec, Array.isArray(answers) ? answers : []);
}

/** What explain says about compile k (capture/explain.py `viewer_answers`), or null: none
 * was shipped, or it names another compile. */
export function answerOf(rec, k) {
  const all = shipped.get(rec);
  const a = all && all[k];
  return a && a.compile_id === (rec.compiles[k] || {}).compile_id ? a : null;
}

/** `file:line:  text` of a place explain names, or null. */
export function placeText(p) {
  if (!p || p.lineno == null) return null;
  return `${fileLabel(p.file)}:${p.lineno}` + (p.line ? `:  ${p.line}` : "");
}

/** Explain's answer for compile k as lines, as explain prints them: {kind, text, user}
 * with `user` the user's own line (`file:line:  text`) where explain names one: its
 * function's statement, each cause of its recompile with its guard, each graph break it
 * met, each refusal, each fix. [] when explain says nothing of it. */
export function answerLines(rec, k) {
  const a = answerOf(rec, k);
  if (!a) return [];
  const out = [];
  if (a.frame) out.push({ kind: "outcome", text: `${a.frame.function}: ${a.frame.statement}`, user: null });
  for (const c of a.causes) {
    out.push({ kind: "cause", user: placeText(c.user),
      text: `recompiles of ${c.function}${c.expected ? " (expected)" : ""}: ${c.statement} · guard: ${c.kind} ${c.source || ""}`.trim() });
  }
  for (const b of a.graph_breaks) {
    const elsewhere = b.user && (b.user.file !== b.file || b.user.lineno !== b.lineno);
    out.push({ kind: "break", user: elsewhere ? placeText(b.user) : null,
      text: `graph break in ${b.function} at ${fileLabel(b.file)}:${b.lineno}: ${b.reason}` + (b.gb_id ? ` (${b.gb_id})` : "") });
  }
  for (const r of a.refusals) out.push({ kind: "refused", text: `refused (${r.kind}): ${r.message}`, user: null });
  for (const fix of a.advice) out.push({ kind: "fix", text: `fix: ${fix}`, user: null });
  return out;
}

/** A line of `answerLines` as plain text. */
export function answerLineText(x) {
  return x.text + (x.user ? ` · your line: ${x.user}` : "");
}

/** The user's own line explain names for a guard that failed on the call that made
 * compile `later` ({compile_id, kind, source, what}), as `placeText`; null where explain
 * names none or it is the line that installed the guard. */
export function failedGuardUser(rec, later, fg) {
  const a = later == null ? null : answerOf(rec, later);
  const g = a && a.failed_guards.find((x) => x.compile_id === fg.compile_id && x.kind === fg.kind &&
    x.source === fg.source && (x.what || null) === (fg.what || null));
  return g && g.user && (g.user.file !== g.file || g.user.lineno !== g.lineno) ? placeText(g.user) : null;
}

// ---- js/compile-menu.js ----------------------------------------------------------------------

// The compile selector: every compile with how it relates to those before it (a recompile
// of [0/0] and the guard that failed, a resume of [0/0_1] after its graph break), and
// compare mode's button and second selector (the compile set beside the one shown).
// Beside the selector, what `dynamo-lab explain` says about the compile shown (its
// function's outcome, the causes of its recompile with the guard and the user's line, the
// fixes): the kernel's words (widgets/viewer/state.py `answers`), never the viewer's own.
// Part of the controls (controls.js puts these in the bar and paints them).

/** The text of compile k's option: its title and its relation. */
export function compileOption(rec, titles, k) {
  const relation = relationOf(rec, k);
  return compileTitle(titles, rec.compiles[k], k) + (relation ? ` · ${relation}` : "");
}

/** Explain's answer for compile k, put into the fold `el` (text only: program text is
 * data): its summary says the line that matters most (the cause of a recompile, else the
 * outcome) and how many fixes; opened, every line. Hidden when explain says nothing of it;
 * open or closed as the learner left it. */
export function fillAnswer(el, rec, k) {
  const lines = answerLines(rec, k);
  el.hidden = !lines.length;
  const first = lines.find((x) => x.kind === "cause") || lines[0];
  const fixes = lines.filter((x) => x.kind === "fix").length;
  const line = (x) => h("div", { class: `dl-answer-line dl-answer-${x.kind}` },
    x.text, x.user ? [" · your line: ", code(x.user)] : null);
  el.replaceChildren(...(first ? [
    h("summary", { class: "dl-answer-summary", title: `what dynamo-lab explain says about this compile: ${first.text} (open for every line)` },
      h("b", { class: "dl-answer-title" }, "explain"), fixes ? ` (${fixes} fix${fixes > 1 ? "es" : ""})` : "", ": ",
      h("span", { class: "dl-answer-first" }, first.text)),
    h("div", { class: "dl-answer-lines" }, lines.map(line))] : []));
  return el;
}

/** {selector, compare, partner, els, selectCompile(c, k), paint(view), disable()}; `mode` is
 * compare mode (panes/compare.js CompareMode): its button and second selector act on it. */
export function compileMenu(rec, titles, mode) {
  const selector = h("select", { class: "dl-compile", title: "the compile shown" },
    rec.compiles.map((c, k) => h("option", {
      value: k, title: answerLines(rec, k).map(answerLineText).join("\n") || null,
    }, compileOption(rec, titles, k))));
  const answer = h("details", { class: "dl-answer", hidden: true });   // explain's words on the compile shown
  const compare = h("button", {
    class: "dl-button dl-compare-toggle", type: "button", "data-cmp-action": "compare", "aria-pressed": "false",
    title: "compare mode: this compile beside another compile of its frame, what differs and why it recompiled (C)",
  }, "compare");
  const partner = h("select", { class: "dl-partner", title: "the compile set beside the one shown", "aria-label": "compare with", hidden: true });
  let listed = null;   // the compile whose partners `partner` lists
  if (mode) partner.addEventListener("change", () => mode.choose(partner.value === "" ? null : Number(partner.value)));

  function selectCompile(c, k) {
    selector.value = String(k);
    fillAnswer(answer, rec, k);
    compare.disabled = !framePartners(rec, k).length && !refusals(rec, [k]).length;
  }

  function paint(view) {
    const on = !!(mode && mode.on);
    if (compare.getAttribute("aria-pressed") !== String(on)) compare.setAttribute("aria-pressed", String(on));
    compare.classList.toggle("dl-on", on);
    partner.hidden = !on;
    if (!on) return;
    if (listed !== view.k) {
      listed = view.k;
      const ks = framePartners(rec, view.k);
      partner.replaceChildren(...(ks.length ?
        ks.map((j) => h("option", { value: j }, `beside ${compileTitle(titles, rec.compiles[j], j)}`)) :
        [h("option", { value: "" }, "no other compile of this frame")]));
      partner.disabled = !ks.length;
    }
    const value = mode.partner == null ? "" : String(mode.partner);
    if (partner.value !== value) partner.value = value;
  }

  function disable() {
    selector.disabled = compare.disabled = partner.disabled = true;
  }

  return { selector, compare, partner, answer, els: [selector, compare, partner, answer], selectCompile, paint, disable };
}

// ---- js/timeline.js --------------------------------------------------------------------------

// The timeline: a strip under the step controls, the whole compile from its first step to
// its last, with a mark wherever a step adds graph nodes or guards, where the graph break
// or the restart is, where inlined calls run, and where the current line ran. A click goes
// to the marked step under the pointer (navigation.js says which); the pointer's step is
// the strip's tooltip. Drawn on a canvas, so a 140,000-step compile costs what 12 do:
// the marks are drawn once per compile and width (a frame after the compile is first
// shown, so they never hold up its first paint), each step redraws the cursor and the
// current line's runs over them.

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

// ---- js/controls.js --------------------------------------------------------------------------

// The controls: the compile selector, play / slider / previous / next, the timeline, the
// jumps, "go to step", and the keys (with the list of them that "keys" shows). They show
// where the viewer stands (`paint(view)`) and carry what they do as `data-action`; the
// Viewer listens on its root and turns a click, a key, a choice of compile, a move of the
// slider or a typed step into a step.

/** Key -> action (a letter in either case). */
export const KEYS = {
  ArrowRight: "forward", ArrowLeft: "back", Home: "first", End: "last",
  l: "line", n: "node", g: "guard", b: "break", Backspace: "return", p: "predict", " ": "play",
  o: "over", u: "out", j: "goto-focus", "?": "keys",
  "+": "zoom-in", "=": "zoom-in", "-": "zoom-out", "0": "zoom-reset",
};

/** Every key, as the keys list shows it: [keys, what they do]. */
export const KEY_HELP = [
  ["→ ←", "next / previous step"], ["Home End", "first / last step"], ["Space", "play / pause"],
  ["L", "next step on another source line (steps over calls)"], ["N", "next step that adds a graph node"],
  ["G", "next step that installs a guard"], ["B", "the step of the graph break"],
  ["O", "step over the inlined call the next step begins"], ["U", "run to the end of this inlined call (back in its caller)"],
  ["J", "go to a step: type its number, then Enter"], ["Backspace", "return to where the last jump came from"],
  ["/", "search guards, graph nodes and locals by name; ↓ ↑ choose, Enter goes to the step"],
  ["C · D", "compare mode: this compile beside another of its frame · go to their first divergence"],
  ["P", "predict mode"], ["Enter · S", "in predict mode: reveal · skip"],
  ["0–9 · , .", "in predict mode: what it pushes (0 nothing; , . go through every kind)"],
  ["N G B I R", "in predict mode: it adds a node · installs a guard · breaks the graph · inlines a call · returns"],
  ["+ − 0", "zoom the graph in / out / back"], ["Shift+arrows", "pan the graph"],
  ["Tab · ↓ ↑ · Enter", "Tab: the next pane (one stop each) · ↓ ↑: its rows, guards or graph nodes · Enter: follow one to its step"], ["?", "show or hide this list"],
];

/** The timeline's marks, as the keys list explains them: [class, what it marks]. */
const LEGEND = [["dl-tl-node", "adds graph nodes"], ["dl-tl-guard", "installs guards"],
  ["dl-tl-break", "graph break"], ["dl-tl-restart", "restart"], ["dl-tl-inlined", "inside an inlined call"],
  ["dl-tl-line", "the current line's steps"], ["dl-tl-cursor", "the step shown"]];

/** Shift+arrow pans the graph (a plain arrow steps). */
const PAN_KEYS = { ArrowLeft: "pan-left", ArrowRight: "pan-right", ArrowUp: "pan-up", ArrowDown: "pan-down" };

/** What a key press on the viewer asks for: an action, {chip: n} (the n-th choice of the
 * question, keys 1-9), or null. A key the viewer uses is kept from JupyterLab (an arrow
 * would move its active cell); in the selector and the slider they are the element's. */
export function keyPress(e, asking) {
  if (e.ctrlKey || e.metaKey || e.altKey) return null;
  const tag = e.target && e.target.tagName;
  if (tag === "INPUT" && e.target.classList.contains("dl-goto") && e.key === "Enter") {
    e.preventDefault();
    e.stopPropagation();
    return `goto:${e.target.value}`;
  }
  if (tag === "SELECT" || tag === "INPUT") {
    if (e.key in KEYS || e.key.startsWith("Arrow")) e.stopPropagation();
    return null;
  }
  const action = keyAction(e, asking);
  if (action) {
    e.preventDefault();
    e.stopPropagation();
  }
  return action;
}

/** The action of a key, or null. While predict mode asks, Enter reveals, S skips, , and .
 * move the choice of what is pushed, and a letter or digit is {choose: key} (the choice
 * that key stands for, if the question has one; else `or`, what the key does otherwise). */
export function keyAction(e, asking) {
  if (asking) {
    if (e.key === "Enter") return "reveal";
    if (e.key === "s" || e.key === "S") return "skip";
    if (e.key === "," || e.key === ".") return { cycle: e.key === "." ? 1 : -1 };
    if (/^[0-9a-z]$/i.test(e.key)) return { choose: e.key.toLowerCase(), or: KEYS[e.key.toLowerCase()] || null };
  }
  if (e.shiftKey && PAN_KEYS[e.key]) return PAN_KEYS[e.key];
  return KEYS[e.key.length === 1 ? e.key.toLowerCase() : e.key] || null;
}

const BUTTONS = [   // [action, label, title, class]
  ["first", "first", "first step (Home)", "dl-first"],
  ["back", "back", "previous step (←)", "dl-back"],
  ["play", "play", "play / pause (Space)", "dl-play"],
  ["forward", "forward", "next step (→)", "dl-forward"],
  ["last", "last", "last step (End)", "dl-last"],
  ["line", "next line", "next step on another source line, stepping over calls (L)", "dl-next-line"],
  ["node", "next node", "next step that adds a node to the FX graph (N)", "dl-next-node"],
  ["guard", "next guard", "next step that installs a guard (G)", "dl-next-guard"],
  ["break", "graph break", "the step where the graph break happened (B)", "dl-graph-break"],
  ["over", "step over", "step over the inlined call the next step begins: to the caller's CALL once it has returned (O)", "dl-step-over"],
  ["out", "end of call", "run to the end of this inlined call: to the CALL in its caller that it returns to (U)", "dl-step-out"],
  ["return", "return", "return to where you were before the last jump (Backspace)", "dl-return"],
  ["predict", "predict", "predict mode: before each step forward, say what the instruction will do (P)", "dl-predict-toggle"],
  ["fit", "fit graph", "show the FX graph drawn so far, whole, in its pane; off, the graph follows each new node (+ − 0 zoom, Shift+arrows pan)", "dl-fit-graph"],
  ["keys", "keys", "the keys and the timeline's marks (?)", "dl-keys-toggle"],
];

/** The list of keys and of the timeline's marks, shown over the panes by "keys" or "?". */
function keysPanel() {
  const close = h("button", { class: "dl-button dl-keys-close", type: "button", "data-action": "keys", title: "hide (? or Esc)" }, "close");
  return h("div", { class: "dl-keys", hidden: true, role: "dialog", "aria-label": "keys", tabindex: -1 },
    h("div", { class: "dl-keys-head" }, h("b", null, "Keys"), h("span", { class: "dl-dim" }, " · with the viewer focused (click it or Tab to it)"), close),
    h("div", { class: "dl-keys-list" }, KEY_HELP.map(([k, what]) => [h("span", null, h("span", { class: "dl-kbd" }, k)), h("span", null, what)])),
    h("div", { class: "dl-keys-head" }, h("b", null, "The timeline"), h("span", { class: "dl-dim" }, " · under the slider; click a mark to go to its step")),
    h("ul", { class: "dl-keys-legend" }, LEGEND.map(([cls, what]) => h("li", null, h("span", { class: `dl-swatch ${cls}` }), what))));
}

function pressed(button, on) {   // a toggle's state, written only when it changes
  if (button.getAttribute("aria-pressed") !== String(on)) button.setAttribute("aria-pressed", String(on));
}

/** The controls of a recording: `bar` (the compile selector), `steps` and `jumps` (the two
 * rows of buttons), and `paint(view)` with view {c, i, returnable, playing, predicting, fit}. */
export function controls(rec, titles, compareMode) {
  const buttons = {};
  for (const [action, label, title, cls] of BUTTONS) {
    buttons[action] = h("button", { class: `dl-button ${cls}`, title, type: "button", "data-action": action }, label);
  }
  buttons.predict.setAttribute("aria-pressed", "false");
  buttons.fit.setAttribute("aria-pressed", "false");
  buttons.keys.setAttribute("aria-expanded", "false");
  const menu = compileMenu(rec, titles, compareMode);   // the compile selector, compare mode's toggle
  const selector = menu.selector;
  if (!selector.hasAttribute("aria-label")) selector.setAttribute("aria-label", "compile shown");
  const slider = h("input", { class: "dl-slider", type: "range", min: 0, max: 0, value: 0, title: "step", "aria-label": "step" });
  const goto = h("input", { class: "dl-goto", type: "text", inputmode: "numeric", size: 7, placeholder: "go to step",
    title: "go to a step: type its number, then Enter (J)", "aria-label": "go to step" });
  const strip = timeline();
  const keys = keysPanel();
  const b = buttons;
  const bar = h("div", { class: "dl-bar" }, menu.els);
  const speed = h("select", { class: "dl-speed", title: "how fast play steps", "aria-label": "play speed" },
    [1, 2, 4, 8, 16].map((x) => h("option", { value: x }, `${x}×`)));
  const steps = h("div", { class: "dl-controls" }, b.first, b.back, b.play, speed, b.forward, b.last,
    h("div", { class: "dl-track" }, slider, strip.el), goto);   // the step's number: the caption
  const jumps = h("div", { class: "dl-jumps" }, b.line, b.node, b.guard, b.break, b.over, b.out, b.return, b.predict, b.fit, b.keys, keys);
  keys.addEventListener("keydown", (e) => {
    if (e.key === "Escape") { e.stopPropagation(); act("keys"); }
  });
  goto.addEventListener("keydown", (e) => {   // after Enter the keys step again
    if (e.key === "Enter") setTimeout(() => { const root = goto.closest(".dl-viewer"); if (root) root.focus({ preventScroll: true }); }, 0);
  });

  function selectCompile(c, k) {
    menu.selectCompile(c, k);
    slider.max = String(lastStep(c));
    slider.disabled = goto.disabled = !c.steps.length;
    goto.placeholder = c.steps.length ? `go to 0–${lastStep(c)}` : "go to step";
    goto.style.width = `${goto.placeholder.length + 1}ch`;   // the range always readable
    strip.selectCompile({ c, k });
  }

  /** An action the controls carry out at step i of compile c: a navigation action
   * (navigation.js) through `jump(to, note, none)`, the Viewer's jump; showing the keys;
   * the cursor put in "go to step". Returns whether the action was theirs. */
  function act(action, c, i, jump) {
    const nav = c ? navigate(action, c, i) : undefined;
    if (nav) jump(nav.to, nav.note, nav.none);
    else if (action === "keys") {
      keys.hidden = !keys.hidden;
      pressed(b.keys, !keys.hidden);
      b.keys.setAttribute("aria-expanded", String(!keys.hidden));
      if (!keys.hidden) keys.focus({ preventScroll: true });
      else if (keys.contains(document.activeElement)) b.keys.closest(".dl-viewer")?.focus({ preventScroll: true });
    } else if (action === "goto-focus") {
      if (!goto.disabled) { goto.focus(); goto.select(); }
    } else return false;
    return true;
  }

  function paint(view) {
    menu.paint(view);
    const play = view.playing ? "pause" : "play";
    if (b.play.textContent !== play) b.play.textContent = play;
    b.play.classList.toggle("dl-playing", !!view.playing);
    pressed(b.predict, !!view.predicting);
    b.predict.classList.toggle("dl-on", !!view.predicting);
    pressed(b.fit, !!view.fit);
    const { c, i } = view;
    if (!c) return;
    slider.value = String(i);
    slider.setAttribute("aria-valuetext", stepSpoken(c, i));
    strip.paint(view);
    const atEnd = i >= lastStep(c);
    b.first.disabled = b.back.disabled = i <= 0;
    b.forward.disabled = b.last.disabled = b.line.disabled = atEnd;
    b.play.disabled = !c.steps.length;
    b.node.disabled = nextNode(c, i) == null;
    b.guard.disabled = nextGuard(c, i) == null;
    b.break.disabled = breakStep(c) == null;
    b.over.disabled = stepOver(c, i) == null;
    b.out.disabled = stepOut(c, i) == null;
    b.return.disabled = !view.returnable;
  }

  /** Nothing to control: a recording with no compiles. */
  function disable() {
    for (const el of [...Object.values(buttons), selector, slider, speed, goto]) el.disabled = true;
    b.keys.disabled = false;
    strip.el.hidden = true;
    menu.disable();
  }

  return { bar, menu, steps, jumps, buttons, selector, slider, speed, goto, selectCompile, paint, disable, act };
}

// ---- js/guards.js ----------------------------------------------------------------------------

// Guards as a person reads them: the value a guard is about (its group), its check with
// object ids named as what they identify, module paths as a program writes them, one kind
// name for it everywhere (the kind Dynamo installed), and whether it matches a filter.
// Pure functions of the recording (no DOM): the guards pane, search and the linked panes
// read guards through them.

// -- a source as a person reads it ---------------------------------------------------------

/** `G['__import_torch_dot_nn']` -> `torch.nn`, `G['__builtins_dict___0']['len']` ->
 * `builtins.len`, `._modules['fc1']` -> `.fc1`, `._modules['0']` -> `[0]` (and the same for
 * parameters and buffers): the module paths a program writes. */
export function readableSource(text) {
  return String(text)
    .replace(/G\['__import_([A-Za-z0-9_]+?)'\]/g, (_, name) => name.replace(/_dot_/g, "."))
    .replace(/G\['__builtins_dict___\d+'\]\['([A-Za-z_]\w*)'\]/g, "builtins.$1")
    .replace(/\._(?:modules|parameters|buffers)\['(\d+)'\]/g, "[$1]")
    .replace(/\._(?:modules|parameters|buffers)\['([A-Za-z_]\w*)'\]/g, ".$1");
}

/** The steps of the first source in `text` (`L[...]` or `G[...]`, perhaps inside
 * `type(...)`): {root, steps: [{raw, nav, private}]}, or null when there is none. */
export function sourceSteps(text) {
  const s = String(text);
  const m = /(?:^|[^\w.'"\]])([LG])\[('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")\]/.exec(s);
  if (!m) return null;
  const root = `${m[1]}[${m[2]}]`;
  let at = m.index + m[0].length;
  const steps = [];
  for (;;) {
    const rest = s.slice(at);
    let t = /^\._(modules|parameters|buffers)\[('(?:[^'\\]|\\.)*')\]/.exec(rest);
    if (t) { steps.push({ raw: t[0], nav: t[1] === "modules", param: t[1] !== "modules", private: false }); at += t[0].length; continue; }
    t = /^\.([A-Za-z_]\w*)/.exec(rest);
    if (t) { steps.push({ raw: t[0], nav: false, private: t[1].startsWith("_") }); at += t[0].length; continue; }
    t = /^\[('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|-?\d+)\]/.exec(rest);
    if (t) { steps.push({ raw: t[0], nav: false, private: false }); at += t[0].length; continue; }
    break;
  }
  return { root, steps };
}

/** The value a guard is about, as its group: the source's root and the submodules it
 * walks through, then a parameter or buffer, or (outside a tree of modules) one public
 * attribute or item: a module's hooks, dicts and constants, a function's closure and
 * code, sit with the module or function.
 * {key (Dynamo's spelling), label (readable), scope: "local" | "global"} or null. */
export function sourceGroup(text) {
  const path = sourceSteps(text);
  if (!path) return null;
  let key = path.root, walked = false;
  for (const st of path.steps) {
    if (st.nav) { key += st.raw; walked = true; continue; }
    // In a tree of modules only a parameter or buffer is a value of its own.
    if ((st.private && !st.param) || (walked && !st.param)) break;
    key += st.raw;
    break;
  }
  return { key, label: readableSource(key), scope: key.startsWith("G[") ? "global" : "local" };
}

// -- a guard as a person reads it -----------------------------------------------------------

const CHECK_ID = /___check_(obj|type)_id\((.+?), (\d+)\)(?:, type=<class '([^']+)'>)?/;

/** The tracker the recording holds for a source (realized, with words of its own). */
function trackerOf(c, src) {
  const bySource = memo(c, "trackerBySource", () => {
    const m = new Map();
    for (const v of c.vars) {
      if (!v.source || (v.lazy && !v.realized)) continue;
      const was = m.get(v.source);
      if (!was || (!was.detail && v.detail)) m.set(v.source, v);
    }
    return m;
  });
  return bySource.get(src) || null;
}

const shortType = (t) => String(t).split(".").pop();

/** What an ID_MATCH's id names, from what the recording knows of its source. */
export function objectName(c, src, type) {
  const v = trackerOf(c, src);
  const d = v && v.detail;
  if (d) {
    if (v.kind === "PythonModuleVariable") return `module ${d}`;
    if (v.kind === "UserDefinedClassVariable") return `class ${d}`;
    if (/BuiltinVariable$/.test(v.kind)) return `builtin ${d}`;
    if (!/ object$|^unrealized /.test(d)) return d;
  }
  let m;
  if ((m = /^G\['__import_(\w+)'\]$/.exec(src))) return `module ${m[1].replace(/_dot_/g, ".")}`;
  if ((m = /^G\['__builtins_dict___\d+'\]\['(\w+)'\]$/.exec(src))) return `builtin ${m[1]}`;
  return type ? `the same ${shortType(type)} object` : "the same object";
}

/** Guard k as read: {kind (one name for it everywhere), parts (strings and {chip, title}
 * for what an id names), text (parts as plain text), raw (Dynamo's text), group}. */
export function guardReading(c, k) {
  const all = memo(c, "guardReadings", () => new Array(c.guard_details.length));
  if (all[k]) return all[k];
  const g = c.guard_details[k];
  const kind = g.kind;
  let body = g.text;
  for (const prefix of [g.tree_kind, g.kind]) {
    if (!prefix) continue;
    if (body === prefix) { body = ""; break; }
    if (body.startsWith(`${prefix}: `)) { body = body.slice(prefix.length + 2); break; }
  }
  const parts = [];
  const m = CHECK_ID.exec(body);
  if (m) {
    const [whole, what, src, id, type] = m;
    const before = body.slice(0, m.index), after = body.slice(m.index + whole.length);
    if (before) parts.push(readableSource(before));
    if (what === "obj") {
      parts.push(`${readableSource(src)} is `, { chip: objectName(c, src, type), title: `id ${id}${type ? `, a ${type}` : ""}: only that very object passes` });
    } else {
      parts.push(`type(${readableSource(src)}) is `, { chip: type ? shortType(type) : "the same type", title: `id ${id}${type ? ` of the class ${type}` : ""}` });
    }
    if (after) parts.push(readableSource(after));
  } else if (body) {
    parts.push(readableSource(body));
  }
  const group = g.ambient ? { key: "ambient", label: "ambient state", scope: "ambient" } :
    sourceGroup(g.source || g.text) || { key: "other", label: "no source", scope: "other" };
  const text = parts.map((p) => (typeof p === "string" ? p : p.chip)).join("");
  return (all[k] = { kind, parts, text, raw: g.text, group });
}

/** Whether guard k matches every word of a filter (its kind, source, check, Dynamo's text
 * or its line), case-insensitive. */
export function guardMatches(c, k, words) {
  if (!words.length) return true;
  const hay = memo(c, "guardHay", () => new Array(c.guard_details.length));
  if (hay[k] == null) {
    const g = c.guard_details[k], r = guardReading(c, k);
    hay[k] = [r.kind, r.group.label, r.group.key, r.text, r.raw, g.source || "", g.line || "", g.code_name || ""].join("\n").toLowerCase();
  }
  return words.every((w) => hay[k].includes(w));
}

export function filterWords(filter) {
  return String(filter || "").toLowerCase().split(/\s+/).filter(Boolean);
}

// ---- js/bytecode.js --------------------------------------------------------------------------

// Bytecode as the viewer lists it: the instructions Dynamo walks (its cleaned copy) beside
// the original `dis`, aligned row by row, and one instruction as a line of a listing.
// Pure functions (no DOM).

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

/** A code's listings, made once: the walked and original lines, the walked index of each
 * offset, and the aligned rows where Dynamo cleaned the code. */
export function codeListing(code) {
  return memo(code, "listing", () => {
    const walked = walkedOf(code);
    const at = new Map(walked.map((ins, k) => [ins.offset, k]));
    return {
      walked: listingLines(walked), original: listingLines(code.instructions), at,
      rows: code.walked && code.cleaned ? alignBytecode(code) : null,
    };
  });
}

// ---- js/scroll.js ----------------------------------------------------------------------------

// Keeping what a step changed in view: each pane scrolls inside itself (never the page,
// never the notebook around it) to its current row or what the step added, and where
// not all of it fits, a badge in the pane says how much more is below ("3 new guards ↓").
//
// The Viewer paints every pane first and only then asks each to `reveal`, so the page is
// laid out once per step: every read here comes after every write of the paint.

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

// ---- js/provenance.js ------------------------------------------------------------------------

// Provenance: where a link leads, and what belongs together. A guard, a graph node, a
// tracker's source, a local found by search and a recompile reason each lead to the step
// that made it; the note says so where the jump lands. And the linked panes: hovering or
// focusing a graph node, a guard or a stack entry marks its counterparts in the other
// panes (the node, the stack and locals entries holding it, the guards on its source, the
// instruction and line that made it), so what the learner points at is found everywhere.

/** The next step after i (else the first from the start) running the code of step i
 * that `matches`, or null: where a click on a source line or a bytecode row leads. */
export function nextRun(c, i, matches) {
  const here = c.steps[i];
  if (!here) return null;
  const runs = (s) => s.code === here.code && matches(s);
  for (let j = i + 1; j < c.steps.length; j++) if (runs(c.steps[j])) return j;
  for (let j = 0; j <= i; j++) if (runs(c.steps[j])) return j;
  return null;
}

/** Where a click on element `t` of compile k, shown at step i, leads: {compile, step,
 * flash, note} (the note as page content; `flash` marks what was followed), or null. */
export function linkTarget(rec, k, t, i = 0) {
  const c = rec.compiles[k];
  const line = t.closest(".dl-source [data-line]");
  const row = t.closest(".dl-bytecode [data-offset]");
  if (line || row) {
    const n = Number(line ? line.dataset.line : row.dataset.offset);
    const to = nextRun(c, i, line ? (s) => s.lineno === n : (s) => s.offset === n);
    const what = line ? `line ${n}` : `the instruction at offset ${n}`;
    if (to == null) return { compile: k, step: i, note: `No step of this code runs ${what}.` };
    return { compile: k, step: to, note: to > i ? `The next step that runs ${what}.` :
      `No later step runs ${what}: this is the first that does.` };
  }
  const graphCall = t.closest("[data-graph-call]");
  const resume = t.closest("[data-resume]");
  if ((graphCall || resume) && c.steps.length) {   // rows of the installed code (panes/details.js)
    const at = breakStep(c);
    if (resume) {
      const r = c.resume_functions[Number(resume.dataset.resume)];
      return { compile: k, step: at ?? lastStep(c), note: at == null ? ["The recording has no step of the graph break that made ", code(r.code_name)] :
        ["The graph break at this step made the resume function ", code(r.code_name), ", which the installed code calls after the graph"] };
    }
    return { compile: k, step: at ?? lastStep(c), note: at == null ?
      `Dynamo stopped tracing at the end of the frame, here, and compiled the graph this row calls (${c.nodes.length} nodes).` :
      `Dynamo stopped tracing at this graph break and compiled the graph the installed code calls (${c.nodes.length} nodes).` };
  }
  const reason = t.closest("[data-reason]");
  const guard = t.closest("[data-guard]");
  const node = t.closest("[data-node]");
  const source = t.closest("[data-source]");
  const local = t.closest("[data-local]");
  if (reason) {
    const target = recompileTarget(rec, k, c.recompile_reasons[Number(reason.dataset.reason)]);
    if (!target) return null;
    const was = rec.compiles[target.compile];
    const g = target.guard != null ? was.guard_details[target.guard] : null;
    return {
      compile: target.compile, step: target.step, flash: { guard: target.guard },
      note: g ? ["This guard failed and caused the recompile: ", code(g.text)] :
        "The recording names no guard of this compile that failed (it was compiled before recording began).",
    };
  }
  if (guard) {
    const g = Number(guard.dataset.guard);
    const detail = c.guard_details[g];
    const to = guardStep(c, g);
    if (to == null) {
      // Installed after tracing (a search result): listed from the last step on.
      if (!detail || !c.steps.length) return null;
      if (detail.ambient) return { compile: k, step: i, flash: { guard: g }, note: ["Dynamo installs ", code(detail.text),
        " on every compile, for the state around the frame: no step installed it"] };
      return { compile: k, step: lastStep(c), flash: { guard: g }, note: ["Dynamo installed the guard ", code(detail.text),
        " after tracing, when it compiled the graph: it is listed from the last step on"] };
    }
    return { compile: k, step: to, flash: { guard: g }, note: ["This step installed the guard ", code(detail.text)] };
  }
  if (node) {
    const n = Number(node.dataset.node);
    const to = nodeStep(c, n);
    return { compile: k, step: to, flash: { node: n }, note: ["This step made the graph node ", code(nameAt(c.nodes[n], to))] };
  }
  if (source) {
    const src = source.dataset.source;
    const to = whereRead(c, src);
    if (to == null) return null;
    const s = c.steps[to];
    return {
      compile: k, step: to, flash: { source: src },
      note: ["The source ", code(src), " was first read here, by ", code(instructionOf(s)),
        s.lineno != null ? ` on line ${s.lineno}` : ""],
    };
  }
  if (local) {
    const to = Number(local.dataset.at);
    const s = c.steps[to];
    if (!s) return null;
    const v = c.vars[s.locals[local.dataset.local]];
    return {
      compile: k, step: to, flash: v && v.source ? { source: v.source } : null,
      note: ["The local ", code(local.dataset.local), ` of ${s.code_name} first holds a value after this step, `,
        code(instructionOf(s)), s.lineno != null ? ` on line ${s.lineno}` : ""],
    };
  }
  return null;
}

// -- what belongs together (pure) -------------------------------------------------------------

/** The guards of compile c by the source they guard (Dynamo's spelling), made once. */
function guardsBySource(c) {
  return memo(c, "guardsBySource", () => {
    const m = new Map();
    c.guard_details.forEach((g, k) => {
      const src = g.source || (g.ambient ? null : guardReading(c, k).group.key);
      if (!src) return;
      if (!m.has(src)) m.set(src, []);
      m.get(src).push(k);
    });
    return m;
  });
}

/** The node of compile c a tracker's `node` name names (either of a renamed node's names). */
function nodeNamed(c, name) {
  const byName = memo(c, "nodeByName", () => {
    const m = new Map();
    c.nodes.forEach((n, k) => {
      if (n.created_name && !m.has(n.created_name)) m.set(n.created_name, k);
      m.set(n.name, k);
    });
    return m;
  });
  return name != null && byName.has(name) ? byName.get(name) : null;
}

/** Every tracker reading of compile c holding node k, or read from a source. */
function varsWhere(c, test) {
  const out = [];
  c.vars.forEach((v, id) => { if (test(v)) out.push(id); });
  return out;
}

/** What belongs with a thing at step i of compile c: `what` is {node: k}, {guard: k} or
 * {var: id}. Returns {nodes, guards, vars (reading ids), groups (guard group keys), step
 * (the step that made it, or null)}: arrays of what to mark. */
export function peersOf(c, i, what) {
  const nodes = new Set(), guards = new Set(), vars = new Set(), groups = new Set();
  let step = null;
  const bySource = guardsBySource(c);
  const addSource = (src) => {
    if (!src) return;
    for (const g of bySource.get(src) || []) guards.add(g);
    groups.add(src);
  };
  if (what.node != null) {
    const k = what.node, n = c.nodes[k];
    nodes.add(k);
    step = nodeStep(c, k);
    for (const id of varsWhere(c, (v) => v.node != null && nodeNamed(c, v.node) === k)) {
      vars.add(id);
      addSource(c.vars[id].source);
    }
    if (!n) return { nodes: [], guards: [], vars: [], groups: [], step: null };
  } else if (what.guard != null) {
    const g = c.guard_details[what.guard];
    if (!g) return { nodes: [], guards: [], vars: [], groups: [], step: null };
    guards.add(what.guard);
    step = guardStep(c, what.guard);
    const src = g.source;
    groups.add(guardReading(c, what.guard).group.key);
    if (src) {
      for (const id of varsWhere(c, (v) => v.source === src)) {
        vars.add(id);
        const k = nodeNamed(c, c.vars[id].node);
        if (k != null) nodes.add(k);
      }
    }
  } else if (what.var != null) {
    const v = c.vars[what.var];
    if (!v) return { nodes: [], guards: [], vars: [], groups: [], step: null };
    vars.add(what.var);
    const k = nodeNamed(c, v.node);
    if (k != null) {
      nodes.add(k);
      step = nodeStep(c, k);
      // The same node held by other readings (a stack entry and the local it was stored in).
      for (const id of varsWhere(c, (w) => w.node != null && nodeNamed(c, w.node) === k)) vars.add(id);
    }
    addSource(v.source);
  }
  return { nodes: [...nodes], guards: [...guards], vars: [...vars], groups: [...groups], step };
}

// -- the linked panes (DOM) ------------------------------------------------------------------

const POINTABLE = "[data-node], [data-guard-row], [data-var], .dl-source [data-line]";

/** What a pointed-at element is: {node}, {guard} or {var}, or null. */
function pointed(el) {
  const t = el && el.closest ? el.closest(POINTABLE) : null;
  if (!t) return null;
  if (t.dataset.guardRow != null) return { el: t, what: { guard: Number(t.dataset.guardRow) } };
  if (t.dataset.var != null) return { el: t, what: { var: Number(t.dataset.var) } };
  if (t.dataset.line != null) return { el: t, what: { line: Number(t.dataset.line) } };
  return { el: t, what: { node: Number(t.dataset.node) } };
}

/** The linked panes of a viewer's root, painted like a pane (last): hovering or focusing a
 * node, guard or stack entry marks (`dl-peer`) every counterpart on the page, and the step
 * that made it where the bytecode and source panes show its code. */
export function linkedPanes(root) {
  let view = null, target = null, marked = [];

  function clear() {
    for (const el of marked) el.classList.remove("dl-peer");
    marked = [];
  }

  function mark() {
    clear();
    if (!target || !view || !view.c || !target.el.isConnected) { target = null; return; }
    const c = view.c;
    const add = (el) => {   // not what is pointed at, nor the graph's own marks of new and followed nodes
      if (el === target.el || el.closest(".dl-marks")) return;
      el.classList.add("dl-peer");
      marked.push(el);
    };
    if (target.what.line != null) {   // a source line: the instructions Dynamo walks for it
      const info = c.steps[view.i] && c.codes[c.steps[view.i].code];
      for (const ins of info ? walkedOf(info) : []) {
        if (ins.lineno === target.what.line) root.querySelectorAll(`.dl-bytecode [data-offset="${ins.offset}"]`).forEach(add);
      }
      return;
    }
    const p = peersOf(c, view.i, target.what);
    // the graph first: shown by module, it may draw the nodes' rows again to open their groups
    if (p.nodes.length && !target.el.closest(".dl-graph")) showNodes(root, p.nodes);
    for (const k of p.nodes) root.querySelectorAll(`[data-node="${k}"]`).forEach(add);
    for (const g of p.guards) root.querySelectorAll(`[data-guard-row="${g}"]`).forEach(add);
    for (const id of p.vars) root.querySelectorAll(`[data-var="${id}"]`).forEach(add);
    if (p.groups.length) {
      const keys = new Set(p.groups);
      root.querySelectorAll("[data-guard-group]").forEach((el) => { if (keys.has(el.dataset.guardGroup)) add(el.firstElementChild); });
    }
    const s = p.step != null ? c.steps[p.step] : null, here = c.steps[view.i];
    if (s && here && s.code === here.code) {
      root.querySelectorAll(`.dl-bytecode [data-offset="${s.offset}"]`).forEach(add);
      if (s.lineno != null) root.querySelectorAll(`.dl-source [data-line="${s.lineno}"]`).forEach(add);
    }
  }

  function point(e) {
    const t = pointed(e.target);
    if (!t || (target && t.el === target.el)) return;
    target = t;
    mark();
  }
  function leave(e) {
    if (!target) return;
    const to = pointed(e.relatedTarget);
    if (to && to.el === target.el) return;
    if (e.type === "mouseout" && root.contains(document.activeElement) && pointed(document.activeElement)) {
      target = pointed(document.activeElement);   // the pointer went; the keyboard's focus stays
    } else target = null;
    mark();
  }
  root.addEventListener("mouseover", point);
  root.addEventListener("focusin", point);
  root.addEventListener("mouseout", leave);
  root.addEventListener("focusout", leave);

  return {
    selectCompile() { target = null; clear(); },
    paint(v) { view = v; },
    reveal() { if (target) mark(); else if (marked.length) clear(); },   // after the panes redrew
    peers: () => marked.slice(),
  };
}

// ---- js/predict.js ---------------------------------------------------------------------------

// Predict mode: before each step forward the learner says what the instruction will do,
// then sees. `question` and `grade` are pure (node tests them); `PredictMode` holds the
// question asked and the answer so far for the Viewer, and paints them.
//
// The choices carry what they choose as data-* attributes (`data-answer`, `data-kind`,
// `data-effect`, `data-action`); the Viewer turns a click on one into the answer or the
// step. Python reads the answers back (widgets' exercises, review_predictions) with the
// same effects vocabulary: a test holds the two lists together.

/** What an instruction can do besides pushing: [id, as a choice, as it is told after]. */
export const EFFECTS = [
  ["node", "adds a node to the FX graph", "added a node to the FX graph"],
  ["guard", "installs a guard", "installed a guard"],
  ["break", "breaks the graph", "broke the graph"],
  ["inline", "inlines a call (steps into it)", "inlined a call"],
  ["return", "returns from its frame", "returned from its frame"],
];

function pushedKinds(c) {   // kinds the compile pushes, most frequent first, and by opname
  return memo(c, "kinds", () => {
    const count = new Map(), byOp = new Map();
    c.steps.forEach((s, j) => {
      const kind = pushedKind(c, j);
      if (!kind) return;
      count.set(kind, (count.get(kind) || 0) + 1);
      if (!byOp.has(s.opname)) byOp.set(s.opname, new Set());
      byOp.get(s.opname).add(kind);
    });
    const top = [...count.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map((e) => e[0]);
    return { top, byOp };
  });
}

/** The key of each effect: the same in every question (the viewer's own letters for a node,
 * a guard and a break). */
export const EFFECT_KEYS = { node: "n", guard: "g", break: "b", inline: "i", return: "r" };

/** The key of each choice of what is pushed, in the order shown: 0 for nothing, then 1-9
 * for the first nine kinds; the rest have none (, and . move the choice through all). */
export function pushKeys(kinds) {
  return [null, ...kinds].map((_, j) => (j <= 9 ? String(j) : null));
}

export const COMMON_KINDS = 3;   // the compile's most pushed kinds, offered at every question

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
  // The same choices for every instruction of one opname: the compile's most pushed kinds
  // and every kind that opname pushes anywhere in it, so being offered says nothing.
  const { top, byOp } = pushedKinds(c);
  const kinds = [...new Set([...top.slice(0, COMMON_KINDS), ...(byOp.get(next.opname) || [])])];
  if (pushes && !kinds.includes(pushes)) kinds.push(pushes);
  kinds.sort();
  return {
    step: i + 1,
    instruction: shown ? instructionOf(shown) : "a call",
    lineno: shown ? shown.lineno : null,
    code_name: shown ? shown.code_name : here.code_name,
    // where the instruction asked about is, for the bytecode pane to mark it while asking
    code: shown ? shown.code : null, offset: shown ? shown.offset : null,
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

/** What predict mode keeps of an answer to q about compile c, as the `predictions` trait
 * holds it; `chosen` is {pushes, does: a Set of effect ids}. */
export function prediction(c, q, chosen) {
  const answer = { pushes: chosen.pushes, does: EFFECTS.map((e) => e[0]).filter((d) => chosen.does.has(d)) };
  return {
    compile: c.compile_id, step: q.step, instruction: q.instruction, lineno: q.lineno,
    answer, truth: q.truth, correct: grade(q, answer),
  };
}

/** Predict mode's state and its box, owned by the Viewer: `ask` before a step forward,
 * `choose` what a clicked choice carries, `settle` the answer when the step is taken. */
export class PredictMode {
  constructor() {
    this.el = h("div", { class: "dl-predict", hidden: true });
    this.on = false;
    this.asking = null;    // the question asked, or null
    this.answer = null;    // the answer so far: {pushes, does: a Set of effect ids}
    this.verdict = null;   // about the last step taken: {q, answer, correct} or {q, skipped}
  }

  /** Before stepping forward from step i: whether to ask (a bookkeeping step, and one
   * already answered in `predictions`, are taken without asking: each counts once). */
  ask(c, i, predictions = []) {
    const q = question(c, i);
    if (q && predictions.some((p) => p.compile === c.compile_id && p.step === q.step)) {
      this.verdict = null;
      return false;
    }
    if (q && q.bookkeeping) this.verdict = { q, skipped: true };
    if (!q || q.bookkeeping) return false;
    this.asking = q;
    this.answer = { pushes: undefined, does: new Set() };   // nothing chosen yet
    this.hint = null;
    this.verdict = null;
    return true;
  }

  /** A choice: what the instruction pushes (one), or an effect (ticked or not). */
  choose({ answer, kind, effect }) {
    if (!this.asking) return;
    if (answer === "pushes") {
      this.answer.pushes = kind ?? null;
      this.hint = null;
    }
    else if (this.answer.does.has(effect)) this.answer.does.delete(effect);
    else this.answer.does.add(effect);
  }

  /** Move the choice of what is pushed to the next (dir 1) or previous (-1) of nothing and
   * the kinds offered, as , and . do: every kind is reached by key, however many. */
  cycle(dir) {
    if (!this.asking) return;
    const all = [null, ...this.asking.kinds];
    const at = this.answer.pushes === undefined ? (dir > 0 ? -1 : all.length) : all.indexOf(this.answer.pushes);
    this.answer.pushes = all[(at + dir + all.length) % all.length];
    this.hint = null;
  }

  /** The answer to the question asked, as the `predictions` trait keeps it (null: none). */
  settle(c) {
    const q = this.asking;
    if (!q) return null;
    if (this.answer.pushes === undefined) {   // a bare Enter is not an answer
      this.hint = "First choose what it pushes (0 for “nothing”, 1–9, or , and . through all), then reveal (Enter); skip (S) steps without answering.";
      return null;
    }
    const record = prediction(c, q, this.answer);
    this.verdict = { q, answer: record.answer, correct: record.correct };
    return record;
  }

  /** The box: the score over `predictions` (every answer so far), the question, the verdict. */
  paint(predictions) {
    const el = this.el;
    el.hidden = !this.on;
    if (!this.on) return;
    const right = predictions.filter((p) => p.correct).length;
    const q = this.asking;
    const out = [h("div", { class: "dl-predict-head" }, h("b", null, "Predict"),
      h("span", { class: "dl-score dl-dim" }, ` · ${right} of ${predictions.length} right`),
      q ? null : h("span", { class: "dl-dim" }, " · press forward (→) to be asked about the next instruction"))];
    // What a bare reveal lacks is said first, where the box begins (it scrolls).
    if (q && this.hint) out.push(h("div", { class: "dl-verdict dl-wrong dl-hint", role: "status" }, this.hint));
    if (q) out.push(...asked(q, this.answer));
    const v = this.verdict;
    if (v && v.skipped && !q) {
      out.push(h("div", { class: "dl-verdict dl-dim" }, code(v.q.instruction),
        ": bookkeeping that changed nothing here, taken without asking."));
    } else if (v && !q) {
      const truth = [v.q.truth.pushes ? ["pushed ", code(v.q.truth.pushes)] : "pushed nothing"];
      for (const [id, , told] of EFFECTS) if (v.q.truth.does.includes(id)) truth.push(told);
      out.push(h("div", { class: `dl-verdict ${v.correct ? "dl-right" : "dl-wrong"}` },
        v.correct ? "Right: " : "Not quite. It ", truth.flatMap((t, j) => (j ? [", ", t] : [t])), ".",
        v.correct ? "" : wrongParts(v.q.truth, v.answer)));
    }
    el.replaceChildren(...out);
    if (q && this.hint) el.scrollTop = 0;
  }
}

/** Which part of a wrong answer was wrong: the kind pushed, effects missed or not made. */
function wrongParts(truth, answer) {
  const out = [];
  if ((answer.pushes ?? null) !== truth.pushes) {
    out.push([" You said it pushes ", answer.pushes ? code(answer.pushes) : "nothing", "."]);
  }
  const told = (ids) => EFFECTS.filter((e) => ids.includes(e[0])).map((e) => e[1]).join(", ");
  const missed = truth.does.filter((d) => !answer.does.includes(d));
  const extra = answer.does.filter((d) => !truth.does.includes(d));
  if (missed.length) out.push(` You missed: ${told(missed)}.`);
  if (extra.length) out.push(` It did not: ${told(extra)}.`);
  return out;
}

/** The question and its choices, each with its key: 0-9 for what it pushes (in the order
 * shown), a letter for each effect (EFFECT_KEYS, the same in every question). */
function asked(q, answer) {
  const chip = (key, label, pressed, data) => h("button", {
    class: "dl-chip", type: "button", "aria-pressed": String(pressed), "data-key": key,
    title: key ? `key ${key.toUpperCase()}` : "key , or . moves the choice here", ...data,
  }, key ? h("span", { class: "dl-key", "aria-hidden": "true" }, key.toUpperCase()) : null, label);
  const keys = pushKeys(q.kinds);
  const pushes = [null, ...q.kinds].map((kind, j) => chip(keys[j], kind ?? "nothing", answer.pushes === kind,
    { "data-answer": "pushes", "data-kind": kind }));
  const does = EFFECTS.map(([id, label]) => chip(EFFECT_KEYS[id], label, answer.does.has(id), { "data-answer": "does", "data-effect": id }));
  const more = q.kinds.length > 9 ? h("span", { class: "dl-dim" }, " , . go through all") : null;
  return [
    h("div", { class: "dl-question" }, "Next: ", code(q.instruction),
      q.lineno != null ? ` on line ${q.lineno}` : "", " in ", code(q.code_name), ". What will it do?"),
    // The effects first: five, the same in every question, always in view; then the kinds,
    // as many as the opname pushes anywhere in the compile (two dozen in a model's CALL).
    h("div", { class: "dl-choices", role: "group", "aria-label": "it (tick all that apply)" },
      h("span", { class: "dl-dim" }, "It (tick all that apply): "), does),
    h("div", { class: "dl-choices", role: "group", "aria-label": "it pushes (choose one)" },
      h("span", { class: "dl-dim" }, "It pushes: "), pushes, more),
    h("div", { class: "dl-choices" },
      h("button", { class: "dl-button dl-reveal", type: "button", title: "check your answer and take the step (Enter)", "data-action": "reveal" }, "reveal"),
      h("button", { class: "dl-button dl-skip", type: "button", title: "take the step without answering (S)", "data-action": "skip" }, "skip")),
  ];
}

// ---- js/break-card.js ------------------------------------------------------------------------

// The break card: what the viewer says at a graph break, as one block to read. Dynamo's
// message runs its explanation and hints together ("… Explanation: … Hint: … Hint: …");
// the card takes them apart: the reason with its GB id and link, the user's line, the
// explanation, each hint on its own line, and what Dynamo does next (restarts the frame,
// or compiles what it has and resumes after the line), and what `dynamo-lab explain` says
// of that break (the user's own line, the fix): the kernel's words, not the card's. Pure
// functions of the recording (no DOM): node imports this file and tests it;
// panes/caption.js paints the card.

/** A link the card may open: an https address, else null (the recording's text is data). */
export function safeLink(link) {
  return typeof link === "string" && /^https:\/\/[^\s"'<>]+$/.test(link) ? link : null;
}

/** What Dynamo does after compile k's break: {kind: "restart"} (this attempt is dropped and
 * the frame traced again, stopping before the break), {kind: "resume", functions} (the graph
 * so far is compiled, the instruction runs in Python, a resume function goes on), or
 * {kind: "stop"} (neither is recorded). */
export function afterBreak(c) {
  if (c.outcome === "restarted") return { kind: "restart" };
  if (c.resume_functions && c.resume_functions.length) {
    return { kind: "resume", functions: c.resume_functions.map((r) => r.code_name) };
  }
  return { kind: "stop" };
}

/** What explain says of compile k's graph break (capture/explain.py `viewer_answers`): its
 * entry for the break at the same line with the same reason, else the one with the same
 * reason (an attempt restarted before the break stops at its caller's line), else null. */
export function breakAnswer(rec, k) {
  const c = rec.compiles[k], a = answerOf(rec, k);
  const gb = c && c.graph_break;
  if (!gb || !a) return null;
  const same = a.graph_breaks.filter((b) => b.reason === gb.reason);
  return same.find((b) => b.lineno === gb.lineno) || same[0] || null;
}

/** The card for compile k's graph break, or null when it has none: {lineno, line, reason,
 * id, type, link, explanation, hints, general, context, also, after, answer (explain's
 * entry for it, see breakAnswer, or null)}. */
export function breakCard(rec, k) {
  const c = rec.compiles[k];
  const gb = c && c.graph_break;
  if (!gb) return null;
  const help = breakHelp(rec, k);
  return {
    lineno: gb.lineno ?? null,
    line: gb.line ? String(gb.line).trim() : null,
    reason: gb.reason || help.type,
    id: help.id,
    type: help.type,
    link: safeLink(help.link),
    explanation: help.explanation,
    hints: help.hints,
    // the registry's general form, where it says more than the message's own explanation
    general: help.general,
    context: help.context,
    also: help.also,
    after: afterBreak(c),
    answer: breakAnswer(rec, k),
  };
}

/** Whether compile c was restarted at its own graph break: then its restart reason is
 * Dynamo's message about that break, said once, by the card. Read from the outcome and
 * the break, never from the reason's words. */
export function restartedByBreak(c) {
  return !!c && c.outcome === "restarted" && !!c.restart_reason && !!c.graph_break;
}

// ---- js/panes/summary.js ---------------------------------------------------------------------

// What stays while stepping: the recording's header (how much it holds, what ended it)
// and the summary of the compile shown (its facts, why it was recompiled, restarted or
// broke). The recompile reason's link carries `data-reason`, the break's `data-action`.

/** The recording's header: compiles, steps, graph breaks, torch; what ended or capped it. */
export function recordingHeader(rec) {
  const facts = [`${rec.compiles.length} compile(s)`, `${stepCount(rec)} steps`];
  if (rec.counters && rec.counters.graph_breaks != null) facts.push(`${rec.counters.graph_breaks} graph break(s)`);
  if (rec.torch_version) facts.push(`torch ${rec.torch_version}`);
  const out = [h("div", { class: "dl-head", role: "heading", "aria-level": 2 }, h("b", null, "Recording"), h("span", { class: "dl-dim" }, ` · ${facts.join(" · ")}`))];
  if (rec.ended_by) {
    out.push(h("div", { class: "dl-banner dl-error" }, "Ended by the exception ", code(rec.ended_by),
      ": what was recorded until then is shown."));
  }
  if (rec.truncated) {
    out.push(h("div", { class: "dl-banner" }, `The step cap (max_steps=${rec.max_steps}) was reached: later steps were not stored. Record again with a larger cap to see them.`));
  }
  for (const e of rec.events || []) {
    if (["cache_limit", "error", "recorder_error"].includes(e.kind)) {
      out.push(h("div", { class: "dl-banner dl-error" }, `${e.kind}: `, e.compile_id ? `[${e.compile_id}] ` : "", e.message));
    }
  }
  if (rec.schema > 2) {
    out.push(h("div", { class: "dl-banner" }, `This recording uses schema ${rec.schema}; this viewer knows schemas 1 and 2: some of it may not show. Update dynamo-lab.`));
  }
  return h("div", { class: "dl-header" }, out);
}

/** How many nodes the compile's graph has, and, where the graph pane counts more (it draws
 * every node made while tracing), how many of those the final graph left out. */
export function nodeCount(c) {
  const kept = c.nodes.filter((n) => n.in_graph).length, made = c.nodes.length;
  return kept === made ? `${kept} graph nodes` :
    `${kept} graph nodes (${made} made while tracing: ${made - kept} not in the final graph)`;
}

/** The compile's summary, made once per compile: selectCompile({rec, titles, c, k}). */
export function compileSummary(rec) {
  const el = h("div", { class: "dl-summary" });
  if (!rec.compiles.length) el.append(h("div", { class: "dl-banner" }, "Nothing was compiled while recording."));

  function selectCompile({ titles, c, k }) {
    const name = fileLabel(c.filename);   // steps counted as the controls count them: 0 to the last
    const facts = [`${name}:${c.firstlineno}`, `outcome: ${c.outcome}`, c.steps.length ? `steps 0–${lastStep(c)}` : "no steps",
      nodeCount(c), `${c.guard_details.length} guards`];
    const out = [h("div", { class: "dl-head" }, h("b", null, compileTitle(titles, c, k)), h("span", { class: "dl-dim" }, ` · ${facts.join(" · ")}`))];
    // In the compile menu's words (the failed guard, compare.js `failedText`), Dynamo's after.
    const failed = (c.failed_guards || []).filter((fg) => fg.compile_id === c.replaces);
    c.recompile_reasons.forEach((reason, r) => {
      const target = recompileTarget(rec, k, reason);
      const said = r === 0 && failed.length ? [`Recompiled because a guard of [${c.replaces}] failed: `, failedText(failed[0]),
        failed.length > 1 ? ` (+${failed.length - 1} more)` : "", h("span", { class: "dl-dim" }, ` · Dynamo's words: ${reason} `)] :
        ["Recompiled because a guard failed: ", reason, " "];
      out.push(h("div", { class: "dl-banner" }, said,
        target ? h("button", {
          class: "dl-link dl-recompile", type: "button", "data-reason": r,
          title: `go to the guard that failed, in [${rec.compiles[target.compile].compile_id}]`,
        }, "show the guard that failed") : null));
    });
    const gb = c.graph_break;
    if (gb) {
      const at = breakStep(c);
      // One line: Dynamo's explanation and hints are read whole at the break (the caption's card).
      out.push(h("div", { class: "dl-banner dl-error" }, `Graph break${gb.lineno != null ? ` at line ${gb.lineno}` : ""}`,
        gb.line ? [": ", code(gb.line)] : "", " — ", gb.reason,
        restartedByBreak(c) ? ": Dynamo restarted the frame, to stop before it. " : " ",
        at != null ? h("button", { class: "dl-link dl-break-link", type: "button", "data-action": "break", title: `go to step ${at}, where it broke (B)` }, "go to the break: why and what to do") : null));
    }
    // A restart of another cause: Dynamo's reason as it wrote it, in its lines (viewer.css).
    if (c.restart_reason && !restartedByBreak(c)) out.push(h("div", { class: "dl-banner dl-restart" }, `Restarted: ${c.restart_reason}`));
    if (c.error) out.push(h("div", { class: "dl-banner dl-error" }, `${c.outcome}: ${c.error}`));
    if (c.truncated) {
      out.push(h("div", { class: "dl-banner" }, "Truncated: the step cap was reached during this compile, so its later steps are missing."));
    }
    el.replaceChildren(...out);
  }

  return { el, selectCompile, paint() {} };
}

// ---- js/panes/caption.js ---------------------------------------------------------------------

// The caption under the controls: what step i is and what it did (the line, the
// instruction, the nodes and guards it added, a node it renamed), a graph break or step
// cap met there, and the note a jump leaves (where it came from, and that return goes back).

/** For each step, the step of its caller that was last run before it (where an inlined
 * call was made from), or null in the frame itself. */
function callerSteps(c) {
  return memo(c, "callers", () => {
    const last = [];   // per depth, the last step seen at it
    return c.steps.map((s, j) => {
      last[s.depth] = j;
      last.length = s.depth + 1;
      return s.depth > 0 && last[s.depth - 1] != null ? last[s.depth - 1] : null;
    });
  });
}

/** The function step j runs, named as a learner knows it: its code's qualified name from
 * the last `<locals>` on (`PretrainedConfig.__getattribute__`, `times` for a function
 * defined in a function); in a recording without qualified names, a method with the class
 * of its `self` as the recording read it (`Block.forward`); else the code's name. */
export function functionName(c, j) {
  const s = c.steps[j];
  if (!s) return null;
  const qualname = c.codes && c.codes[s.code] && c.codes[s.code].qualname;
  if (qualname) return qualname.split(".<locals>.").at(-1);
  const self = s.locals && s.locals.self != null ? c.vars[s.locals.self] : null;
  const cls = self && self.python_type;
  return cls && /^[A-Za-z_][\w.]*$/.test(cls) && s.code_name !== "<module>" ? `${cls}.${s.code_name}` : s.code_name;
}

/** The caption's facts about step i (null for a compile with no steps). */
export function stepSummary(c, i) {
  const s = c.steps[i];
  if (!s) return null;
  const caller = s.depth > 0 ? callerSteps(c)[i] : null;
  return {
    label: stepLabel(c, i),
    lineno: s.lineno,
    before: lineBefore(c, i),
    code_name: functionName(c, i),
    inlinedFrom: s.inline_stack.length ?
      (caller != null ? functionName(c, caller) : s.inline_stack[s.inline_stack.length - 1][0]) : null,
    instruction: instructionOf(s),
    renamed: s.nodes_renamed || [],
    nodes: s.nodes_added,
    guards: s.guards_added.length,
    guardKinds: [...new Set(s.guards_added.map((g) => c.guard_details[g].kind))].sort(),
    breaks: !!c.graph_break && c.graph_break.step === i,
    capped: !!c.truncated && i === lastStep(c),
  };
}

/** What Dynamo does next, in a sentence. */
function afterText(after) {
  if (after.kind === "restart") {
    return ["Dynamo drops this attempt and traces the frame again (the next attempt), stopping before this instruction."];
  }
  if (after.kind === "resume") {
    return ["Dynamo compiles the graph built so far, runs this instruction in plain Python and goes on in a resume function: ",
      commaList(after.functions), "."];
  }
  return [];
}

/** What explain says of the break (its user line where it is not the card's, its fix, its
 * note), as the card's second block; null when explain says none of these. */
function answerPart(card) {
  const a = card.answer;
  if (!a) return null;
  const rows = [];
  const user = a.user && (a.user.file !== a.file || a.user.lineno !== a.lineno) ? placeText(a.user) : null;
  if (user) rows.push(h("div", { class: "dl-card-user" }, "Your line: ", code(user)));
  for (const fix of a.advice) rows.push(h("div", { class: "dl-card-fix" }, h("b", null, "Fix: "), fix));
  if (a.note) rows.push(h("div", { class: "dl-card-note" }, `Note: ${a.note}`));
  return rows.length ? h("div", { class: "dl-card-answer", title: "what dynamo-lab explain says of this break" }, rows) : null;
}

/** The break card (break-card.js `breakCard`) as one block: the reason with its GB id, the
 * user's line, Dynamo's explanation, each hint on its own line, what Dynamo does next, the
 * link and the other compiles that met the same break. Focusable, so the keyboard reaches it. */
export function breakCardElement(card) {
  const head = h("div", { class: "dl-card-head dl-gb-head" }, h("b", null, "Graph break here: "),
    card.id ? [h("span", { class: "dl-gb-id", title: "the id of this break in torch's graph-break registry" }, card.id), " "] : null,
    h("b", { class: "dl-card-reason" }, card.reason),
    card.lineno != null || card.line ? h("span", { class: "dl-card-line" }, " · ", card.lineno != null ? `line ${card.lineno}` : "",
      card.line ? [": ", code(card.line)] : "") : null);
  const out = [head];
  const said = answerPart(card);
  if (said) out.push(said);
  if (card.explanation) out.push(h("div", { class: "dl-gb-explanation" }, card.explanation));
  if (card.hints.length) {
    out.push(h("div", { class: "dl-card-hints" }, h("span", { class: "dl-gb-hints-title" }, "Dynamo's hints"),
      h("ul", { class: "dl-gb-hints" }, card.hints.map((x) => h("li", null, x)))));
  }
  const then = afterText(card.after);
  if (then.length) out.push(h("div", { class: "dl-card-then" }, then));
  const more = [];
  if (card.link) {
    more.push("More on ", card.id || "this break", ": ",
      // A button, not an <a>: the viewer makes no element that loads anything by itself.
      h("button", {
        class: "dl-link dl-gb-link", type: "button", title: "open this page in a new tab",
        onclick: () => window.open(card.link, "_blank", "noopener,noreferrer"),
      }, card.link));
  }
  if (card.also.length) {
    more.push(more.length ? " · " : "", h("span", { class: "dl-gb-also" },
      `the same break also stopped ${plural(card.also.length, "other compile")}: `,
      card.also.map((id, j) => [j ? ", " : "", `[${id}]`])));
  }
  if (more.length) out.push(h("div", { class: "dl-card-more dl-dim" }, more));
  if (card.general || card.context) {
    out.push(h("details", { class: "dl-gb-registry" }, h("summary", null, `The registry's entry for ${card.id || "this break"}, as torch ships it`),
      card.general ? h("div", null, h("b", null, "Explanation: "), card.general) : null,
      card.context ? h("div", null, h("b", null, "Context: "), card.context) : null));
  }
  return h("div", {
    class: "dl-card dl-gb", role: "note", tabindex: 0,
    "aria-label": `Dynamo on this graph break${card.id ? `, ${card.id}` : ""}`,
  }, out);
}

/** The caption. view: {c, i, note (what a jump said, or null), returnable}. */
export function captionPane() {
  const el = h("div", { class: "dl-caption-bar" });

  function paint({ c, k, i, note, returnable, rec }) {
    const d = stepSummary(c, i);
    const out = [];
    if (!d) {
      out.push(h("div", { class: "dl-caption" }, h("span", { class: "dl-stepno" }, stepLabel(c, i)), " · no steps"));
    } else {
      const did = [];
      if (d.nodes.length) did.push([`added graph node${d.nodes.length > 1 ? "s" : ""} `, commaList(d.nodes)]);
      if (d.guards) did.push(`installed ${plural(d.guards, "guard")} (${d.guardKinds.join(", ")})`);
      for (const [from, to] of d.renamed) {
        did.push(["renamed graph node ", code(from), " to ", code(to), " (Dynamo names a node after the variable it is stored in)"]);
      }
      const where = d.lineno != null ? `line ${d.lineno}` : d.before != null ? `before line ${d.before}` : "before its first line";
      out.push(h("div", { class: "dl-caption" },
        h("span", { class: "dl-stepno" }, d.label),
        ` · ${where} in `, code(d.code_name),
        d.inlinedFrom != null ? ` (inlined from ${d.inlinedFrom})` : "", " · ",
        h("code", { "data-help-op": c.steps[i].opname, tabindex: 0 }, d.instruction),
        did.length ? [" → ", did.map((x, j) => [j ? "; " : "", x])] : ""));
      const card = d.breaks && rec ? breakCard(rec, k) : null;
      if (card) out.push(breakCardElement(card));
      if (d.capped) {
        out.push(h("div", { class: "dl-banner" }, "The step cap was reached here: Dynamo went on, but its later steps were not stored."));
      }
    }
    if (note) {
      out.push(h("div", { class: "dl-note" }, "↪ ", note,
        returnable ? h("span", { class: "dl-dim" }, " · return (Backspace) goes back") : ""));
    }
    el.replaceChildren(...out);
    // The card is read whole: the caption grows to hold it and the panes give it room.
    el.classList.toggle("dl-carded", out.some((x) => x.classList && x.classList.contains("dl-card")));
  }

  return { el, selectCompile() {}, paint };
}

// ---- js/panes/source.js ----------------------------------------------------------------------

// The source pane: the code running at the step, the current line marked, and the line of
// the graph break once the break has happened; a long source shows a window around it.
// A step with no line of its own (MAKE_CELL, COPY_FREE_VARS before a function's first
// line) marks no line as current: the line it comes before is outlined instead.

export const SOURCE_WINDOW = 40;     // longer sources show this many lines around the current one

/** The source of the code running at step i: a window of rows around the current line,
 * the line of the graph break marked once the break has happened. */
export function sourceView(c, i) {
  const s = c.steps[i];
  if (!s) return null;
  const info = c.codes[s.code];
  if (!info || !info.source_lines.length) return { missing: info ? fileLabel(info.filename) : "unknown file" };
  const gb = c.graph_break;
  const breakLine = gb && gb.step != null && i >= gb.step && gb.code_name === info.name ? gb.lineno : null;
  const lines = info.source_lines;
  const before = lineBefore(c, i);
  const at = s.lineno ?? before;
  let first = 0, last = lines.length;
  if (lines.length > SOURCE_WINDOW && at != null) {
    const centre = at - info.firstlineno;
    first = Math.max(0, Math.min(centre - Math.floor(SOURCE_WINDOW / 3), lines.length - SOURCE_WINDOW));
    last = first + SOURCE_WINDOW;
  }
  const rows = [];
  for (let k = first; k < last; k++) {
    const lineno = info.firstlineno + k;
    rows.push({ lineno, text: lines[k], current: lineno === s.lineno, before: lineno === before, broke: lineno === breakLine });
  }
  return { rows, above: first, below: lines.length - last };
}

/** The pane. view: {c, k, i}. */
export function sourcePane() {
  const p = pane("dl-source", "Source");

  function paint({ c, k, i }) {
    const s = c.steps[i];
    if (!s) return noSteps(p, c, k, "Source");
    const view = sourceView(c, i);
    setTitle(p, JSON.stringify([s.code, s.inline_stack]), () => ["Source · ", crumbs(s)]);
    if (view.missing) {
      sync(p.body, [{ key: `missing:${s.code}`, make: () => h("div", { class: "dl-dim" }, `Source not available (${view.missing}).`) }]);
      return;
    }
    const pre = part(p, "pre", () => h("pre", { class: "dl-code" }));
    sync(p.body, [{ key: "pre", make: () => pre }]);
    sync(pre, [
      view.above ? textRow("dl-more", `… ${view.above} line(s) above`) : null,
      ...view.rows.map((r) => ({
        key: `${s.code}:${r.lineno}`,
        cls: `dl-row${r.broke ? " dl-break" : ""}${r.current ? " dl-current" : ""}${r.before ? " dl-before" : ""}`,
        current: r.current,
        make: () => h("span", { "data-line": r.lineno },
          `${String(r.lineno).padStart(4)} `, h("span", { class: "dl-mark" }), " ", r.text),
      })),
      view.below ? textRow("dl-more", `… ${view.below} line(s) below`) : null,
    ].filter(Boolean));
  }

  /** After every pane has painted: the current line scrolled into the pane's view. */
  function reveal() {
    scrollIntoPane(p.body, [p.body.querySelector(".dl-row.dl-current, .dl-row.dl-before")], { centre: true });
  }

  return { el: p.el, selectCompile: () => resetPane(p), paint, reveal };
}

// ---- js/panes/bytecode.js --------------------------------------------------------------------

// The bytecode pane: the code running at the step as Dynamo walks it, the current
// instruction marked; where Dynamo cleaned it, the original `dis` beside it, row by row.

// The pane scrolls to the current instruction; a long code shows a window around it.
export const BYTECODE_BEFORE = 30;   // instructions shown above the current one
export const BYTECODE_AFTER = 60;    // ... and below it

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
  const ops = walkedOf(info);   // each row's opname, for its help (help.js)
  const first = Math.max(0, here - BYTECODE_BEFORE);
  const last = Math.min(count, here + BYTECODE_AFTER + 1);
  const rows = [];
  for (let k = first; k < last; k++) {
    if (!aligned) {
      rows.push({ walked: L.walked[k], original: null, current: k === current, change: null, op: ops[k].opname, offset: ops[k].offset });
      continue;
    }
    const r = aligned[k];
    const change = !r.changed ? null : r.walked == null ? "removed" : r.original == null ? "inserted" : "changed";
    rows.push({
      walked: r.walked != null ? L.walked[r.walked] : null,
      original: r.original != null ? L.original[r.original] : null,
      current: current != null && r.walked === current, change,
      op: r.walked != null ? ops[r.walked].opname : null, offset: r.walked != null ? ops[r.walked].offset : null,
      origOp: r.original != null ? info.instructions[r.original].opname : null,
    });
  }
  return { offset: s.offset, aligned: !!aligned, rows, above: first, below: count - last };
}

/** The pane. view: {c, k, i}. */
export function bytecodePane() {
  const p = pane("dl-bytecode", "Bytecode");
  let offsetEl = null;   // the title's `· offset N`, updated in place

  function paint({ c, k, i }) {
    const s = c.steps[i];
    if (!s) return noSteps(p, c, k, "Bytecode");
    const view = bytecodeView(c, i);
    setTitle(p, JSON.stringify([s.code, s.inline_stack]), () =>
      ["Bytecode · ", crumbs(s), (offsetEl = h("span", { class: "dl-dim" }))]);
    const offset = ` · offset ${s.offset}`;
    if (offsetEl.textContent !== offset) offsetEl.textContent = offset;
    if (view.missing) {
      sync(p.body, [{ key: `missing:${s.code}`, make: () => h("div", { class: "dl-dim" }, "(unknown code)") }]);
      return;
    }
    const pre = part(p, "pre", () => h("pre", { class: "dl-code" }));
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
        current: r.current,
        // A row is focusable and explains its opcode (help.js); the original cell its own;
        // `data-offset` (the walked offset) lets the linked panes mark it (provenance.js).
        make: () => (view.aligned ?
          h("span", { tabindex: 0, "data-help-op": r.op ?? r.origOp, "data-offset": r.offset },
            h("span", { class: "dl-cell" }, r.walked ?? ""),
            h("span", { class: "dl-cell dl-orig", "data-help-op": r.origOp !== r.op ? r.origOp : null }, r.original ?? "")) :
          h("span", { tabindex: 0, "data-help-op": r.op, "data-offset": r.offset }, r.walked)),
      })),
      view.below ? textRow("dl-more", `… ${view.below} instruction(s) below`) : null,
    ].filter(Boolean));
  }

  /** After every pane has painted: the current instruction scrolled into the pane's view. */
  function reveal() {
    scrollIntoPane(p.body, [p.body.querySelector(".dl-row.dl-current")], { centre: true });
  }

  /** While predict mode asks about an instruction of this code (question q, at step i of
   * c), its row is marked, so the learner knows which one they are predicting. */
  function asked(q, c, i) {
    for (const el of p.body.querySelectorAll(".dl-row.dl-asked")) el.classList.remove("dl-asked");
    const s = c && c.steps[i];
    if (!q || !s || q.code !== s.code || q.offset == null) return;
    p.body.querySelector(`.dl-row[data-offset="${Number(q.offset)}"]`)?.classList.add("dl-asked");
  }

  return { el: p.el, selectCompile: () => resetPane(p), paint, reveal, asked };
}

// ---- js/panes/stack.js -----------------------------------------------------------------------

// The stack pane: the VariableTracker stack (top first) and the symbolic locals after the
// step, what the step pushed or stored marked. A tracker's source links (`data-source`)
// to the step that first read it.

/** The stack (top first) and the symbolic locals after step i, what changed marked. */
export function stackView(c, i) {
  const s = c.steps[i];
  if (!s) return null;
  const ch = stackChange(c, i);
  const stack = [];
  for (let pos = s.stack.length - 1; pos >= 0; pos--) {
    stack.push({ v: c.vars[s.stack[pos]], isNew: !ch.first && pos >= ch.kept });
  }
  const j = frameBefore(c, i);
  const then = j == null ? null : c.steps[j].locals;
  const locals = Object.entries(s.locals).map(([name, id]) =>
    ({ name, v: c.vars[id], isNew: !!then && then[name] !== id }));
  if (then) {
    for (const name of Object.keys(then)) if (!(name in s.locals)) locals.push({ name, gone: true });
  }
  return { stack, locals, ...ch };
}

/** One tracker as a row: its kind, its detail, its source as a link. */
function varItem(v, key, name, isNew, flashed, id) {
  const flash = flashed != null && v.source === flashed;
  return {
    key, cls: `${isNew ? "dl-new" : ""}${flash ? " dl-flash" : ""}`.trim(),
    make: () => {
      const parts = [h("span", {
        class: v.lazy && !v.realized ? "dl-kind dl-lazy" : "dl-kind", tabindex: 0, "data-help-tracker": v.kind,
      }, v.kind)];
      if (v.detail) parts.push(" ", withSymbols(v.detail));
      if (v.lazy && v.realized) parts.push(" ", h("span", { class: "dl-tag" }, "lazy, realized"));
      if (v.source) {
        parts.push(" ", h("button", {
          class: "dl-src dl-link", type: "button", "data-source": v.source,
          title: "go to the step that first read this source",
        }, `<-\u00a0${v.source}`));   // no break after the arrow: a long source wraps inside itself
      }
      return h("li", { title: v.python_type ? `models a ${v.python_type}` : null, "data-var": id },   // data-var: the linked panes
        name != null ? [h("b", null, name), " = "] : null, parts);
    },
  };
}

/** The pane. view: {c, k, i, flash ({source} when a link led here)}. */
export function stackPane() {
  const p = pane("dl-stack", "Stack");

  function paint({ c, k, i, flash }) {
    const s = c.steps[i];
    if (!s) return noSteps(p, c, k, "Stack and locals");
    const view = stackView(c, i);
    const flashed = flash ? flash.source : null;
    const change = view.first ? "" : ` · popped ${view.popped}, pushed ${view.pushed}`;
    setTitle(p, JSON.stringify([s.stack.length, change, s.code, s.inline_stack]), () =>
      ["Stack ", h("span", { class: "dl-dim" }, `(top first) · ${s.stack.length} item(s)${change}`), " · ", crumbs(s)]);
    const stack = part(p, "stack", () => h("ol", { class: "dl-list" }));
    const locals = part(p, "locals", () => h("ul", { class: "dl-list" }));
    sync(p.body, [
      view.stack.length ? { key: "stack", make: () => stack } : textRow("dl-faint", "(empty)"),
      { key: "subtitle", make: () => h("div", { class: "dl-subtitle" }, "Symbolic locals") },
      view.locals.length ? { key: "locals", make: () => locals } : textRow("dl-faint", "(none)"),
    ]);
    const depth = s.stack.length;
    sync(stack, view.stack.map((e, j) => varItem(e.v, `${depth - 1 - j}:${s.stack[depth - 1 - j]}`, null, e.isNew, flashed, s.stack[depth - 1 - j])));
    sync(locals, view.locals.map((e) => (e.gone ?
      { key: `gone:${e.name}`, cls: "dl-gone", make: () => h("li", null, h("b", null, e.name), " (deleted)") } :
      varItem(e.v, `${e.name}=${s.locals[e.name]}`, e.name, e.isNew, flashed, s.locals[e.name]))));
  }

  /** After every pane has painted: what the step pushed or stored (or a followed source)
   * scrolled into the pane's view. */
  function reveal() {
    const marked = [...p.body.querySelectorAll("li.dl-flash")];
    scrollIntoPane(p.body, marked.length ? marked : [...p.body.querySelectorAll("li.dl-new")]);
  }

  return { el: p.el, selectCompile: () => resetPane(p), paint, reveal };
}

// ---- js/zoom.js ------------------------------------------------------------------------------

// Zoom and pan of a drawing inside its pane (the FX graph): the wheel zooms about the
// pointer, a drag pans, the keys + − 0 and Shift+arrows do both (controls.js), and the
// drawing follows the node a step made. Where the drawing is larger than the pane, an
// overview in its corner shows the whole of it, the pane's part framed; a click there
// looks at that place.
//
// A drawing here is {root (the svg), view (the <g> the transform goes on), width, height,
// box(k) (node k's [x0, y0, x1, y1] in drawing units), order, shown (how many nodes, in
// order, are revealed), and for a big graph cull(view), told after every move which part
// of the drawing the pane shows}: the graph pane makes it (panes/graph.js).

const ZOOM_STEP = 1.25;        // one key press or wheel notch
const MIN_SCALE = 0.05, MAX_SCALE = 4;
const START_SCALE = 1.25;      // the scale a compile opens at: labels of about 12 px
const MINIMAP = 160;           // px: the overview's longer side

/** The camera of the drawing shown in `box` (a div that clips it). Returns {overview (an
 * element to put beside box), show(drawing), reveal(target, fit), zoom(how), holds(nodes)}. */
export function zoomable(box) {
  const canvas = h("canvas", { class: "dl-overview", width: 1, height: 1 });
  const frame = h("div", { class: "dl-overview-frame" });
  const overview = h("div", { class: "dl-overview-box", hidden: true, title: "the whole graph: click to look there" }, canvas, frame);
  let d = null, cam = { s: START_SCALE, x: 8, y: 8 };   // screen = drawing * s + (x, y)
  let moved = false, dotted = 0, target = null;
  let before = null;   // the camera before "fit graph", back when it is turned off
  let extent = null;   // the box of the nodes drawn so far: {n (how many), b}

  /** The box, in drawing units, of the nodes drawn so far (the first d.shown in order),
   * grown as steps add nodes: "fit graph" fits it, not the graph the compile ends with. */
  function drawnBox() {
    if (!extent || extent.n > d.shown) extent = { n: 0, b: null };
    for (let r = extent.n; r < d.shown; r++) {
      const x = d.box(d.order[r]);
      if (!x) continue;
      const b = extent.b;
      extent.b = b ? [Math.min(b[0], x[0]), Math.min(b[1], x[1]), Math.max(b[2], x[2]), Math.max(b[3], x[3])] : [...x];
    }
    extent.n = d.shown;
    return extent.b;
  }

  function show(drawing) {
    d = drawing;
    cam = { s: START_SCALE, x: 8, y: 8 };
    moved = false;
    dotted = 0;
    before = null;
    extent = null;
    canvas.width = canvas.height = 1;
    overview.hidden = true;
  }

  function apply() {
    if (!d) return;
    d.view.setAttribute("transform", `translate(${cam.x.toFixed(1)},${cam.y.toFixed(1)}) scale(${cam.s.toFixed(4)})`);
    if (d.cull) d.cull([-cam.x / cam.s, -cam.y / cam.s, (box.clientWidth - cam.x) / cam.s, (box.clientHeight - cam.y) / cam.s]);
    paintOverview();
  }

  function centreOn(nodes, always) {
    const bs = nodes.map((k) => d.box(k)).filter(Boolean);
    if (!bs.length) return;
    const b = [Math.min(...bs.map((x) => x[0])), Math.min(...bs.map((x) => x[1])),
      Math.max(...bs.map((x) => x[2])), Math.max(...bs.map((x) => x[3]))];
    const w = box.clientWidth, hgt = box.clientHeight;
    // Several new nodes that do not fit at this scale: zoom out until they do (or to half).
    const need = Math.min((w - 24) / (b[2] - b[0] || 1), (hgt - 24) / (b[3] - b[1] || 1));
    if (need < cam.s) {
      const s = Math.max(need, Math.min(cam.s, 0.5), MIN_SCALE);
      // keep the point at the pane's middle where it is, then centre on the nodes below
      cam.x = w / 2 - (w / 2 - cam.x) * (s / cam.s);
      cam.y = hgt / 2 - (hgt / 2 - cam.y) * (s / cam.s);
      cam.s = s;
      always = true;
    }
    const inside = b[0] * cam.s + cam.x >= 4 && b[2] * cam.s + cam.x <= w - 4 &&
      b[1] * cam.s + cam.y >= 4 && b[3] * cam.s + cam.y <= hgt - 4;
    const cx = (b[0] + b[2]) / 2 * cam.s + cam.x, cy = (b[1] + b[3]) / 2 * cam.s + cam.y;
    // Only when not well inside the pane already: small steps keep the picture still.
    if (!always && inside && cx > w * 0.15 && cx < w * 0.85 && cy > hgt * 0.15 && cy < hgt * 0.85) return;
    cam.x = w / 2 - (b[0] + b[2]) / 2 * cam.s;
    cam.y = hgt / 2 - (b[1] + b[3]) / 2 * cam.s;
  }

  /** After a step painted: the whole drawing (fit), or the nodes `nodes` (the new or the
   * followed ones) brought to the middle if they are near an edge or outside. */
  function reveal(nodes, fit) {
    if (!d || box.hidden || !box.clientWidth || !box.clientHeight) return;
    const w = box.clientWidth, hgt = box.clientHeight;
    target = nodes && nodes.length ? nodes : target;
    if (fit) {
      if (!before) before = { ...cam };
      // What is drawn so far, no larger than twice the scale a compile opens at (one node
      // alone is not blown up to fill the pane); nothing drawn yet: the whole drawing.
      const b = drawnBox() || [0, 0, d.width, d.height];
      const bw = Math.max(b[2] - b[0], 1), bh = Math.max(b[3] - b[1], 1);
      const s = Math.min(2 * START_SCALE, Math.max(MIN_SCALE, Math.min((w - 16) / bw, (hgt - 16) / bh)));
      cam = { s, x: (w - bw * s) / 2 - b[0] * s, y: Math.max(8, (hgt - bh * s) / 2) - b[1] * s };
    } else if (before) {   // fit turned off: the scale of before, on the node last followed
      cam = before;
      before = null;
      if (target) centreOn(target, true);
    } else if (nodes && nodes.length) {
      centreOn(nodes, false);
    } else if (!moved) {   // a first look: the top of the drawing, centred across
      cam.x = Math.max(8, (w - d.width * cam.s) / 2);
      moved = true;
    }
    apply();
  }

  /** Whether the pane shows any part of one of the nodes `nodes`. */
  function holds(nodes) {
    if (!d) return false;
    const w = box.clientWidth, hgt = box.clientHeight;
    return nodes.some((k) => {
      const b = d.box(k);
      return b && b[2] * cam.s + cam.x > 0 && b[0] * cam.s + cam.x < w && b[3] * cam.s + cam.y > 0 && b[1] * cam.s + cam.y < hgt;
    });
  }

  function zoomAt(factor, px, py) {
    before = null;   // a move of the learner's own ends "fit graph"
    const s = Math.min(MAX_SCALE, Math.max(MIN_SCALE, cam.s * factor));
    cam.x = px - (px - cam.x) * (s / cam.s);
    cam.y = py - (py - cam.y) * (s / cam.s);
    cam.s = s;
    moved = true;
    apply();
  }

  /** "in", "out", "reset" (the first scale, on the node last followed), or a pan:
   * "left", "right", "up", "down". */
  function zoom(how) {
    if (!d || box.hidden) return;
    before = null;
    const w = box.clientWidth, hgt = box.clientHeight, pan = Math.max(w, hgt) * 0.2;
    if (how === "in") zoomAt(ZOOM_STEP, w / 2, hgt / 2);
    else if (how === "out") zoomAt(1 / ZOOM_STEP, w / 2, hgt / 2);
    else if (how === "reset") {
      cam.s = START_SCALE;
      if (target != null) centreOn(target, true);
      else cam = { s: START_SCALE, x: Math.max(8, (w - d.width * START_SCALE) / 2), y: 8 };
      apply();
    } else {
      cam.x += how === "left" ? pan : how === "right" ? -pan : 0;
      cam.y += how === "up" ? pan : how === "down" ? -pan : 0;
      moved = true;
      apply();
    }
  }

  box.addEventListener("wheel", (e) => {
    if (!d) return;
    e.preventDefault();
    const r = box.getBoundingClientRect();
    zoomAt(e.deltaY < 0 ? ZOOM_STEP : 1 / ZOOM_STEP, e.clientX - r.left, e.clientY - r.top);
  }, { passive: false });

  let drag = null;
  box.addEventListener("pointerdown", (e) => {
    if (d && e.button === 0) drag = { x: e.clientX, y: e.clientY, cx: cam.x, cy: cam.y, far: false };
  });
  box.addEventListener("pointermove", (e) => {
    if (!drag) return;
    const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    if (!drag.far && Math.abs(dx) + Math.abs(dy) < 4) return;
    if (!drag.far && box.setPointerCapture) box.setPointerCapture(e.pointerId);
    drag.far = true;
    before = null;
    cam.x = drag.cx + dx;
    cam.y = drag.cy + dy;
    moved = true;
    apply();
  });
  const endDrag = (e) => {
    if (drag && drag.far) {
      if (box.releasePointerCapture) box.releasePointerCapture(e.pointerId);
      // The click that ends a drag is not a click on a node.
      const swallow = (ev) => { ev.stopPropagation(); ev.preventDefault(); };
      box.addEventListener("click", swallow, { capture: true, once: true });
      setTimeout(() => box.removeEventListener("click", swallow, { capture: true }), 0);
    }
    drag = null;
  };
  box.addEventListener("pointerup", endDrag);
  box.addEventListener("pointercancel", endDrag);

  /** Shown while the drawing is larger than the pane and a node is drawn: the revealed
   * nodes as dots (drawn as they appear), the pane's part of the drawing as a frame. */
  function paintOverview() {
    const w = box.clientWidth, hgt = box.clientHeight;
    const big = d.shown > 0 && (d.width * cam.s > w + 1 || d.height * cam.s > hgt + 1);
    if (overview.hidden === big) overview.hidden = !big;
    if (!big) return;
    const m = MINIMAP / Math.max(d.width, d.height, 1);
    const ow = Math.max(8, Math.round(d.width * m)), oh = Math.max(8, Math.round(d.height * m));
    if (canvas.width !== ow || canvas.height !== oh) {
      canvas.width = ow; canvas.height = oh;
      dotted = 0;
    }
    const ctx = canvas.getContext && canvas.getContext("2d");
    if (ctx && d.cull) dotBitmap(ctx, m, ow, oh);
    else if (ctx) {
      if (d.shown < dotted) { ctx.clearRect(0, 0, ow, oh); dotted = 0; }
      ctx.fillStyle = getComputedStyle(canvas).color || "#888";
      for (let r = dotted; r < d.shown; r++) {
        const b = d.box(d.order[r]);
        if (b) ctx.fillRect(b[0] * m, b[1] * m, Math.max(1.5, (b[2] - b[0]) * m), Math.max(1.5, (b[3] - b[1]) * m));
      }
      dotted = d.shown;
    }
    Object.assign(frame.style, {
      left: `${(-cam.x / cam.s * m).toFixed(1)}px`, top: `${(-cam.y / cam.s * m).toFixed(1)}px`,
      width: `${(w / cam.s * m).toFixed(1)}px`, height: `${(hgt / cam.s * m).toFixed(1)}px`,
    });
  }

  /** A big graph's dots as one bitmap: a pixel per node, put on the canvas at once. */
  let lit = null;
  function dotBitmap(ctx, m, ow, oh) {
    if (!lit || lit.width !== ow || lit.height !== oh || d.shown < dotted) {
      lit = ctx.createImageData(ow, oh);
      dotted = 0;
      const rgb = /(\d+)\D+(\d+)\D+(\d+)/.exec(getComputedStyle(canvas).color || "") || [0, 136, 136, 136];
      lit.rgb = rgb.slice(1, 4).map(Number);
    }
    if (dotted === d.shown) return;
    const px = lit.data, [cr, cg, cb] = lit.rgb;
    for (let r = dotted; r < d.shown; r++) {
      const b = d.box(d.order[r]);
      if (!b) continue;
      const x = Math.min(ow - 1, Math.max(0, Math.round((b[0] + b[2]) / 2 * m)));
      const y = Math.min(oh - 1, Math.max(0, Math.round((b[1] + b[3]) / 2 * m)));
      const at = 4 * (y * ow + x);
      px[at] = cr; px[at + 1] = cg; px[at + 2] = cb; px[at + 3] = 255;
    }
    dotted = d.shown;
    ctx.putImageData(lit, 0, 0);
  }

  overview.addEventListener("click", (e) => {
    e.stopPropagation();
    if (!d) return;
    const r = canvas.getBoundingClientRect();
    const m = MINIMAP / Math.max(d.width, d.height, 1);
    before = null;
    cam.x = box.clientWidth / 2 - (e.clientX - r.left) / m * cam.s;
    cam.y = box.clientHeight / 2 - (e.clientY - r.top) / m * cam.s;
    moved = true;
    apply();
  });

  return { overview, show, reveal, zoom, holds };
}

// ---- js/cull.js ------------------------------------------------------------------------------

// Culling a big drawing (panes/graph.js makes it; zoom.js says where the camera looks):
// only the nodes near the part of the drawing the pane shows, and their edges, are in the
// page, at most MAX_DRAWN of them, so a 20,000-node graph costs a step and a pan what a
// small one does. The rest are made when first needed and kept out of the page.

const MAX_DRAWN = 2500;

/** The culling of a big drawing: `cull([x0, y0, x1, y1])`, the part of the drawing (in its
 * units) the pane shows, keeps in the page the revealed nodes near it and their edges (an
 * edge is near where the box of its two ends is), each named as it was at step d.step. */
export function culler(d, edgesAt, edgeLayer, nodeLayer) {
  const inPage = new Uint8Array(d.order.length);
  let kept = [];   // the ranks in the page
  const near = (b, v) => b && b[2] >= v[0] && b[0] <= v[2] && b[3] >= v[1] && b[1] <= v[3];
  const ends = (e) => {
    const a = d.box(e.tail), b = d.box(e.head);
    return a && b ? [Math.min(a[0], b[0]), Math.min(a[1], b[1]), Math.max(a[2], b[2]), Math.max(a[3], b[3])] : a || b;
  };
  return (view) => {
    const mx = (view[2] - view[0]) * 0.5, my = (view[3] - view[1]) * 0.5;   // half a pane around it
    const v = [view[0] - mx, view[1] - my, view[2] + mx, view[3] + my];
    const want = [];
    for (let r = 0; r < d.shown && want.length < MAX_DRAWN; r++) {
      if (near(d.box(d.order[r]), v) || edgesAt[r].some((e) => near(ends(e), v))) want.push(r);
    }
    const wanted = new Uint8Array(d.order.length);
    for (const r of want) wanted[r] = 1;
    for (const r of kept) {
      if (wanted[r]) continue;
      inPage[r] = 0;
      const el = d.nodeEls[d.order[r]];
      if (el) el.remove();
      for (const e of d.edgeEls[r]) e.remove();
    }
    for (const r of want) {
      if (inPage[r]) continue;
      inPage[r] = 1;
      d.ensure(r);
      const el = d.nodeEls[d.order[r]];
      if (el) { el.style.display = ""; nodeLayer.append(el); }
      for (const e of d.edgeEls[r]) { e.style.display = ""; edgeLayer.append(e); }
    }
    kept = want;
    for (const r of kept) renameAt(d.renamedOf[r], d.step);
  };
}

/** A renamed node's label as it was at step i. */
export function renameAt(r, i) {
  if (!r) return;
  const name = nameAt(r.node, i);
  const text = name === r.node.name ? r.line : name;
  if (r.text.textContent !== text) {
    r.text.textContent = text;
    if (r.rest != null) r.text.parentNode.setAttribute("aria-label", text + r.rest);   // its name begins with what it shows
  }
}

/** A node's name as a label of at most `width` characters that keeps what tells it apart.
 * Dynamo names a parameter by its module path (`l_model_modules_transformer_modules_h_
 * modules_3_modules_attn_parameters_weight_`): cut from the left, every layer reads alike.
 * The path is written with dots, and what does not fit is cut from the middle, keeping the
 * layer's index with the name before it and as much of the end as fits (`h.3…c_attn.weight`). */
export function shortName(name, width) {
  const compact = name.replace(/^[lL]_/, "").replace(/_(?:modules|parameters|buffers)_/g, ".").replace(/_$/, "");
  if (compact.length <= width) return compact;
  const parts = compact.split(".");
  let layer = -1;
  parts.forEach((p, j) => { if (/^\d+$/.test(p) && j < parts.length - 1) layer = j; });
  if (layer >= 0) {
    const head = parts.slice(Math.max(0, layer - 1), layer + 1).join(".");
    for (let k = layer + 1; k < parts.length; k++) {
      const label = head + (k === layer + 1 ? "." : "…") + parts.slice(k).join(".");
      if (label.length <= width) return label;
    }
  }
  for (let k = 1; k < parts.length; k++) {
    const label = "…" + parts.slice(k).join(".");
    if (label.length <= width) return label;
  }
  return "…" + compact.slice(-(width - 1));
}

// ---- js/graph-modules.js ---------------------------------------------------------------------

// The FX graph by module (in the graph pane, panes/graph.js): the nodes made so far in nested groups, one per module a node was
// made in (`node.module`, the innermost entry of Dynamo's `nn_module_stack`, such as
// `L['self'].transformer.h.3.attn`), like the layers of Model Explorer. A group sits inside
// the group of the longest module path its own path extends (`transformer.h.3.attn` inside
// `transformer.h.3`), and its rows come in the order the nodes were made: its own nodes and,
// where their first node was made, its groups. The module of the node the step made (or
// of the node followed) is open, the others are one line with a count; a head opens or
// closes its group by hand. Nodes are buttons with `data-node`, so a click or Enter goes to
// the step that made them (provenance.js) and the other panes light them (`dl-peer`).

/** The root module's source, left out of a group's name: `L['self'].transformer` reads as
 * `transformer`, the path `named_modules()` gives it. */
const ROOT_MODULE = "L['self'].";

/** A module path as a group is named. */
export function moduleLabel(path) {
  return path.startsWith(ROOT_MODULE) ? path.slice(ROOT_MODULE.length) : path;
}

/** Whether the compile's nodes say which module made them (recordings from before the
 * field was kept, and functions that call no module, do not). */
export function hasModules(c) {
  return memo(c, "hasModules", () => c.nodes.some((n) => n.module));
}

/** The groups of a compile's nodes: `groups` (path -> {path, parent, own (ranks of its own
 * nodes), children (paths), all (ranks of its nodes and its groups', sorted)}) and `top`
 * (the paths of the outermost groups and the ranks of nodes made in no module). Ranks are
 * places in `nodeOrder(c).order`, so "made by step i" is "rank < nodesAt(c, i)". */
export function moduleTree(c) {
  return memo(c, "moduleTree", () => {
    const { order } = nodeOrder(c);
    const paths = [...new Set(c.nodes.map((n) => n.module).filter(Boolean))].sort((a, b) => a.length - b.length);
    const groups = new Map();
    for (const path of paths) {
      let parent = null;   // the longest path before it (shorter) that it extends
      for (const q of paths) {
        if (q.length >= path.length) break;
        if (path.startsWith(q) && (path[q.length] === "." || path[q.length] === "[")) parent = q;
      }
      groups.set(path, { path, parent, own: [], children: [], all: [] });
    }
    const top = { own: [], children: [] };
    for (const g of groups.values()) (g.parent ? groups.get(g.parent).children : top.children).push(g.path);
    order.forEach((k, r) => {
      const m = c.nodes[k].module;
      if (!m) { top.own.push(r); return; }
      groups.get(m).own.push(r);
      for (let g = groups.get(m); g; g = g.parent ? groups.get(g.parent) : null) g.all.push(r);
    });
    return { groups, top };
  });
}

/** The paths of module `path`'s group and of every group around it, innermost first. */
export function groupChain(tree, path) {
  const out = [];
  for (let g = path ? tree.groups.get(path) : null; g; g = g.parent ? tree.groups.get(g.parent) : null) out.push(g.path);
  return out;
}

/** How many of a sorted list of ranks are below `shown`. */
function ranksBelow(ranks, shown) {
  let lo = 0, hi = ranks.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ranks[mid] < shown) lo = mid + 1; else hi = mid;
  }
  return lo;
}

/** The rows of a group made by `shown` nodes, in the order they were made: {node: rank}
 * for its own nodes, {group: path} for its groups (at their first node). */
export function groupRows(tree, owner, shown) {
  const rows = owner.own.filter((r) => r < shown).map((r) => ({ at: r, node: r }));
  for (const p of owner.children) {
    const g = tree.groups.get(p);
    if (g.all.length && g.all[0] < shown) rows.push({ at: g.all[0], group: p });
  }
  return rows.sort((a, b) => a.at - b.at);
}

/** A node's one-line reading in a group: its name then, what it does, its dtype and shape. */
function nodeText(n, i) {
  const what = n.op === "placeholder" ? "input" : n.op === "get_attr" ? "attribute" : n.op === "output" ? "output" :
    n.op === "call_method" ? `.${n.target}()` : n.target;
  return `${nameAt(n, i)}  ${what}${n.dtype ? `  ${n.dtype}${n.shape || ""}` : ""}`;
}

/** The view by module inside the graph pane's body. `tip(k)` is a node's tooltip. Returns
 * {el, selectCompile(c), paint({c, i, shown, fresh, flashed}), reveal(), show(nodes)}. */
export function modulesView(tip) {
  const list = h("ul", { class: "dl-mod-list", "aria-label": "the FX graph by module" });
  const el = h("div", { class: "dl-modules", hidden: true }, list);
  let c = null, tree = null, last = null, key = "";
  let opened = new Set(), closed = new Set();   // by hand: kept / until the current module changes
  let current = null, peek = [];                 // the step's module; groups a link opened
  let target = [];                               // what reveal() brings into view

  function selectCompile(compile) {
    c = compile;
    tree = moduleTree(c);
    opened = new Set(); closed = new Set(); current = null; peek = []; key = ""; last = null;
    list.replaceChildren();
  }

  const isOpen = (path) => (opened.has(path) || peek.includes(path) ||
    (groupChain(tree, current).includes(path) && !closed.has(path)));

  function paint(view) {
    last = view;
    const { i, shown, fresh, flashed } = view;
    const at = flashed != null ? flashed : fresh.length ? fresh[fresh.length - 1] :
      shown ? nodeOrder(c).order[shown - 1] : null;
    const now = at != null ? c.nodes[at].module || null : current;
    if (now !== current) { current = now; closed = new Set(); peek = []; }   // what a link opened closes too
    target = flashed != null ? [flashed] : fresh;
    draw(i, shown, fresh, flashed);
  }

  function draw(i, shown, fresh, flashed) {
    const renamed = c.nodes.filter((n) => n.renamed_at != null && n.renamed_at <= i).length;
    const k = [shown, renamed, fresh.join(","), flashed, current, [...opened].join("|"),
      [...closed].join("|"), peek.join("|")].join(";");
    if (k === key) return;
    key = k;
    const isNew = new Set(fresh), order = nodeOrder(c).order;
    // Rows are kept from paint to paint (dom.js's `sync`) and brought up to date in place:
    // a row redrawn away would take the focus, and the pointer's link (provenance.js), with it.
    const setText = (el, text) => { if (el.textContent !== text) el.textContent = text; };
    const setAttr = (el, name, value) => { if (el.getAttribute(name) !== value) el.setAttribute(name, value); };
    const nodeRow = (li, j) => {
      const n = c.nodes[j], b = li.firstChild;
      setAttr(b, "class", `dl-mod-node${isNew.has(j) ? " dl-new" : ""}${j === flashed ? " dl-flash" : ""}${n.in_graph ? "" : " dl-dropped"}`);
      setText(b, nodeText(n, i));
    };
    const groupRow = (li, path) => {
      const g = tree.groups.get(path), open = isOpen(path), made = ranksBelow(g.all, shown);
      const fresher = fresh.some((j) => c.nodes[j].module && groupChain(tree, c.nodes[j].module).includes(path));
      const [head, sub] = li.children, [mark, , count] = head.children;
      setAttr(li, "class", `dl-mod${open ? " dl-mod-open" : ""}${fresher ? " dl-has-new" : ""}${path === current ? " dl-mod-current" : ""}`);
      setAttr(head, "aria-expanded", String(open));
      setAttr(head, "title", `${path}: ${open ? "close" : "open"} the group of the module's nodes`);
      setText(mark, open ? "▾" : "▸");
      setText(count, ` · ${made}${made < g.all.length ? ` of ${g.all.length}` : ""} node${g.all.length === 1 ? "" : "s"}`);
      if (!open) { if (sub) sub.remove(); return; }
      fillList(sub || li.appendChild(h("ul", { class: "dl-mod-list" })), g);
    };
    const fillList = (ul, owner) => {
      const rows = groupRows(tree, owner, shown);
      sync(ul, rows.map((x) => (x.group != null ? { key: `g${x.group}`, make: () => newGroup(x.group) } :
        { key: `n${order[x.node]}`, make: () => newNode(order[x.node]) })));
      rows.forEach((x, r) => (x.group != null ? groupRow(ul.children[r], x.group) : nodeRow(ul.children[r], order[x.node])));
    };
    if (shown) fillList(list, tree.top);
    else sync(list, [textRow("dl-faint", "(no nodes yet)", "li")]);
  }

  const newNode = (j) => h("li", null, h("button", { type: "button", class: "dl-mod-node", "data-node": j, title: tip(j) }));
  const newGroup = (path) => h("li", null, h("button", { type: "button", class: "dl-mod-head", "data-module": path },
    h("span", { class: "dl-mod-mark", "aria-hidden": "true" }), " ", h("span", { class: "dl-mod-name" }, moduleLabel(path)),
    h("span", { class: "dl-dim" })));

  function redraw() {
    if (last) draw(last.i, last.shown, last.fresh, last.flashed);
  }

  // A head opens or closes its group; the focus stays on it.
  list.addEventListener("click", (e) => {
    const head = e.target.closest && e.target.closest(".dl-mod-head");
    if (!head) return;
    e.stopPropagation();
    const path = head.dataset.module;
    if (isOpen(path)) {
      opened.delete(path);
      peek = peek.filter((p) => p !== path);
      if (groupChain(tree, current).includes(path)) closed.add(path);
    } else {
      opened.add(path);
      closed.delete(path);
    }
    redraw();
  });

  /** Bring the rows of `target` (or of `nodes`) into view, opening the groups around them. */
  function reveal(nodes = null) {
    const ks = nodes || target;
    if (!el.offsetParent || !ks.length) return;
    const body = el.closest(".dl-pane-body") || el;
    scrollIntoPane(body, ks.map((j) => list.querySelector(`button[data-node="${j}"]`)).filter(Boolean));
  }

  /** Nodes lit from another pane: their groups opened (until the next link) and in view,
   * where none of them shows already. */
  function show(nodes) {
    if (!c || !last) return;
    const made = nodes.filter((j) => nodeOrder(c).rank[j] < last.shown);
    if (!made.length) return;
    const body = el.closest(".dl-pane-body") || el;
    const box = body.getBoundingClientRect();
    const inView = made.some((j) => {
      const b = list.querySelector(`button[data-node="${j}"]`);
      if (!b) return false;
      const r = b.getBoundingClientRect();
      return r.bottom > box.top && r.top < box.bottom;
    });
    if (inView) return;
    peek = [...new Set(made.flatMap((j) => groupChain(tree, c.nodes[j].module)))];
    redraw();
    reveal(made);
  }

  return { el, selectCompile, paint, reveal: () => reveal(), show };
}

/** Where a node was made, for a tooltip: its module, or nothing. */
export function moduleOf(c, k) {
  const m = c.nodes[k].module;
  return m ? ` · in ${moduleLabel(m)}` : "";
}

// ---- js/graph-code.js ------------------------------------------------------------------------

// The graph's Python code under the FX graph pane (panes/graph.js): the code Dynamo
// generated for the graph, each node's name a link to the step that made it.

/** The graph's Python code, each node's name a link to the step that made it. */
export function codeRows(c) {
  const byName = new Map(c.nodes.map((n, k) => [n.name, k]));
  return c.graph_code.split("\n").map((line) => {
    const m = /^(\s*)([A-Za-z_]\w*)( = .*)$/.exec(line);
    if (m && byName.has(m[2])) {
      const k = byName.get(m[2]);
      return h("span", { class: "dl-row" }, m[1],
        h("button", { class: "dl-link dl-node-link", type: "button", "data-node": k, title: `go to step ${nodeStep(c, k)}, which made this node` }, m[2]),
        m[3]);
    }
    return h("span", { class: "dl-row" }, line);
  });
}

// ---- js/panes/graph.js -----------------------------------------------------------------------

// The FX graph pane: the graph as it grows. The kernel laid out every node the compile
// ever created (widgets/viewer/layout.py); the drawing is made once per compile and nodes
// and edges are revealed as the steps add them, so nothing moves while stepping. Without a
// layout (no `dot`), the nodes made so far are listed as text. A graph dot did not lay out
// in time is drawn in the kernel's own layers, and a quiet note under the drawing says so.
// Nodes link (`data-node`) to the step that made them; so do the names in the graph's
// Python code, below. A button at the title's right shows the nodes by module instead
// (graph-modules.js), where the recording says which module made them.

/** How much of the graph exists at step i and which nodes this step added. */
export function graphView(c, i) {
  const shown = nodesAt(c, i);
  const before = c.steps.length && i > 0 ? nodesAt(c, i - 1) : 0;
  const fresh = c.steps.length ? nodeOrder(c).order.slice(before, shown) : [];
  return { shown, total: c.nodes.length, fresh, names: fresh.map((k) => nameAt(c.nodes[k], i)) };
}

/** The note under a drawing not made by graphviz's dot: which layout it is and why
 * (layout.py's `engine` and `why`); "" for dot's own. */
export function layoutNote(layout) {
  if (!layout || layout.error || layout.engine !== "layered") return "";
  return `Laid out in layers, not by graphviz's dot${layout.why ? `: ${layout.why}` : ""}.`;
}

/** How many of the compile's nodes the final graph kept (the summary says why it differs). */
function keptOf(c) {
  return memo(c, "keptNodes", () => c.nodes.filter((n) => n.in_graph).length);
}

/** A node's tooltip: what it is, its name before a rename, and the step that made it. */
function nodeTip(c, k) {
  const node = c.nodes[k];
  const renamedAt = node.renamed_at != null && node.created_name && node.created_name !== node.name ?
    ` (named ${node.created_name} until step ${node.renamed_at})` : "";
  return `${node.name} = ${node.op}[${node.target}](${node.args})${renamedAt}` +
    moduleOf(c, k) + (node.in_graph ? "" : " (not in the final graph)") + ` · made at step ${nodeStep(c, k)}: click to go there`;
}

// A larger graph is culled (cull.js): each node's elements are made when it is first near
// the pane's view, and only the nodes and edges near the view are in the page.
const CULL_NODES = 1500;

/** A node's box in graph coordinates, from its outline: [x0, y0, x1, y1]. */
function boxOf(n) {
  const [kind, ...geo] = n.shape;
  if (kind === "ellipse") return [geo[0] - geo[2], geo[1] - geo[3], geo[0] + geo[2], geo[1] + geo[3]];
  const nums = String(geo[0] || "").match(/-?\d+(?:\.\d+)?/g);
  if (!nums || nums.length < 2) {
    const [x, y] = (n.text && n.text[0]) || [0, 0];
    return [x - 20, y - 10, x + 20, y + 10];
  }
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  for (let j = 0; j + 1 < nums.length; j += 2) {
    const x = Number(nums[j]), y = Number(nums[j + 1]);
    if (x < x0) x0 = x; if (x > x1) x1 = x;
    if (y < y0) y0 = y; if (y > y1) y1 = y;
  }
  return [x0, y0, x1, y1];
}

/** The drawing of a compile's graph: every node and edge hidden, made at once for a graph
 * of up to CULL_NODES nodes; a larger one is culled (`cull`). One `<g>` holds it all and
 * carries the zoom and pan as a transform. */
function makeDrawing(c, g) {
  const { order, rank } = nodeOrder(c);
  const layoutOf = new Array(c.nodes.length);
  for (const n of g.nodes) layoutOf[n.node] = n;
  const culled = order.length > CULL_NODES;
  const boxes = new Array(c.nodes.length);   // made when first asked for: box(k)
  const box = (k) => (boxes[k] === undefined ? (boxes[k] = layoutOf[k] ? boxOf(layoutOf[k]) : null) : boxes[k]);
  const nodeEls = new Array(c.nodes.length);
  const outlines = new Array(c.nodes.length);
  const renamed = [], renamedOf = [];   // the renamed nodes' first label lines; per rank
  const edgesAt = order.map(() => []);   // per rank: the edges revealed with that node
  for (const e of g.edges) edgesAt[Math.max(rank[e.tail], rank[e.head])].push(e);
  const root = svgElement("svg", { class: "dl-graph-svg", role: "group", "aria-label": "the FX graph" });
  const view = svgElement("g", { class: "dl-view" });
  const edges = svgElement("g", { class: "dl-edges" });
  const nodes = svgElement("g", { class: "dl-nodes" });
  // New and linked-to nodes are outlined on a layer of their own, above the drawing:
  // the nodes themselves never change class, so marking them restyles nothing else.
  const marks = svgElement("g", { class: "dl-marks" });
  view.append(edges, nodes, marks);
  root.append(view);
  const made = new Uint8Array(order.length);
  const edgeEls = order.map(() => []);

  function makeNode(k) {
    const n = layoutOf[k];
    const node = c.nodes[k];
    const [kind, ...geo] = n.shape;
    let outline = null;
    if (kind === "ellipse") outline = svgElement("ellipse", { cx: geo[0], cy: geo[1], rx: geo[2], ry: geo[3] });
    else if (kind === "path") outline = svgElement("path", { d: geo[0] });
    else if (kind === "polygon") outline = svgElement("polygon", { points: geo[0] });
    const small = node.op === "placeholder" || node.op === "get_attr";
    const el = svgElement("g", { class: `node dl-op-${node.op}${small ? " dl-small" : ""}${node.in_graph ? "" : " dl-dropped"}`, "data-node": k });
    const tip = svgElement("title");
    tip.textContent = nodeTip(c, k);
    el.append(tip);
    // Reached with ↓ ↑ in the pane (roving.js) and followed with Enter (help.js): keyboard-only
    // provenance. Its name begins with the words drawn in it, then says what the tooltip says.
    // A name the layout cut from the left is cut again where it keeps the layer (cull.js).
    const lines = n.lines[0] && n.lines[0].startsWith("…") && node.renamed_at == null ?
      [shortName(node.name, n.lines[0].length), ...n.lines.slice(1)] : n.lines;
    const label = `${lines.join(" ")} · ${tip.textContent}`;
    for (const [a, v] of [["tabindex", "-1"], ["role", "button"], ["aria-label", label]]) el.setAttribute(a, v);
    if (outline) el.append(outline);
    n.text.forEach(([x, y], line) => {
      const t = svgElement("text", { x, y, "text-anchor": "middle" });
      t.textContent = lines[line] ?? "";
      if (line) el.append(" ");   // the lines read as words, not run together (the name above)
      el.append(t);
      if (line === 0 && node.renamed_at != null && node.created_name && node.created_name !== node.name) {
        renamed.push((renamedOf[rank[k]] = { node, text: t, line: n.lines[0], rest: label.slice(n.lines[0].length) }));
      }
    });
    el.style.display = "none";
    nodeEls[k] = el;
    outlines[k] = outline;
    if (!culled) nodes.append(el);
  }

  /** Make the elements of the node of rank r and of the edges revealed with it. */
  function ensure(r) {
    if (made[r]) return;
    made[r] = 1;
    const k = order[r];
    if (layoutOf[k]) makeNode(k);
    for (const e of edgesAt[r]) {
      const el = svgElement("g", { class: "edge" }, svgElement("path", { d: e.path, fill: "none" }),
        e.arrow ? svgElement("polygon", { points: e.arrow }) : null);
      el.style.display = "none";
      edgeEls[r].push(el);
      if (!culled) edges.append(el);
    }
  }
  if (!culled) for (let r = 0; r < order.length; r++) ensure(r);
  const d = {
    root, view, order, rank, nodeEls, edgeEls, ensure, renamed, renamedOf, outlines, marks, box, shown: 0, step: 0,
    width: g.width, height: g.height, cull: culled ? null : undefined,
  };
  if (culled) d.cull = culler(d, edgesAt, edges, nodes);
  return d;
}

/** The pane. selectCompile({c, k, layout}); paint(view) with view {c, k, i, flash, fit};
 * reveal() after every pane painted (the new or followed node centred, zoom.js); zoom(how)
 * zooms or pans the drawing. */
export function graphPane() {
  const p = pane("dl-graph", "FX graph");
  const drawing = h("div", { class: "dl-drawing", title: "wheel: zoom · drag: pan · keys: + − 0, Shift+arrows" });
  const camera = zoomable(drawing);
  const note = h("div", { class: "dl-graph-note dl-faint" });
  const listing = h("div", { class: "dl-graph-text" });
  const graphCode = h("details", { class: "dl-graph-code" });
  const mods = modulesView((j) => nodeTip(c, j));
  const byModule = h("button", { type: "button", class: "dl-pane-switch", "aria-pressed": "false", hidden: true,
    title: "show the nodes in groups, one per module that made them" }, "by module");
  p.el.append(byModule);
  p.el.classList.add("dl-has-switch");
  p.body.replaceChildren(drawing, camera.overview, note, listing, mods.el, graphCode);
  let c = null, k = -1, layout = {}, drawn = null, codeOf = -1, fit = false, target = null, last = null;
  let grouped = false;   // the nodes shown by module, not drawn
  let lastShown = -1;   // how many nodes had been made when the pane last revealed

  function paintCode() {   // on demand: when the details are open
    if (!graphCode.open || !c.graph_code || codeOf === k) return;
    codeOf = k;
    graphCode.replaceChildren(h("summary", null, "the graph's Python code"), h("pre", { class: "dl-code" }, codeRows(c)));
  }
  graphCode.addEventListener("toggle", () => { if (c) paintCode(); });
  // Nodes lit from another pane (provenance.js's showNodes): brought into view when none shows.
  p.el.addEventListener("dl-show-nodes", (e) => {
    const ks = drawn ? e.detail.nodes.filter((j) => drawn.rank[j] < drawn.shown && drawn.box(j)) : [];
    if (grouped) mods.show(e.detail.nodes);
    else if (ks.length && !fit && !camera.holds(ks)) camera.reveal(ks, false);
  });
  byModule.addEventListener("click", () => {
    grouped = !grouped;
    byModule.setAttribute("aria-pressed", String(grouped));
    if (last) { paint(last); reveal(); }
  });

  function selectCompile(compile) {
    ({ c, k } = compile);
    layout = compile.layout || {};
    drawn = null;
    lastShown = -1;
    drawing.replaceChildren();
    drawing.hidden = !!layout.error || !layout.nodes || !c.nodes.length;
    listing.hidden = !drawing.hidden;
    note.textContent = drawing.hidden ? "" : layoutNote(layout);
    note.hidden = !note.textContent;
    if (!drawing.hidden) {
      drawn = makeDrawing(c, layout);
      drawing.append(drawn.root);
    }
    camera.show(drawn);
    mods.selectCompile(c);
    byModule.hidden = !hasModules(c);
    graphCode.replaceChildren(h("summary", null, "the graph's Python code"));
    graphCode.hidden = !c.graph_code;
    codeOf = -1;
    paintCode();
  }

  function paint(view) {
    const { i, flash, fit: fitOn } = (last = view);
    const { shown, total, fresh, names } = graphView(c, i);
    const kept = keptOf(c);
    fit = !!fitOn;
    drawing.classList.toggle("dl-fit", fit);
    p.head.replaceChildren("FX graph ", h("span", { class: "dl-dim" },
      ` · ${shown} of ${total} node(s)`, kept !== total ? ` (${kept} in the final graph)` : "", names.length ? [" · new: ", commaList(names)] : ""));
    const flashed = flash && flash.node != null ? flash.node : null;
    target = flashed != null ? [flashed] : fresh;
    const modules = grouped && !byModule.hidden;
    mods.el.hidden = !modules; p.el.classList.toggle("dl-grouped", modules);
    drawing.hidden = modules || !drawn;
    listing.hidden = modules || !!drawn;
    if (modules) mods.paint({ c, i, shown, fresh, flashed });
    else if (drawn) paintDrawing(drawn, c, i, shown, fresh, flashed);
    else paintListing(shown, fresh, i);
  }

  /** After every pane has painted: the new or followed node in view. */
  function reveal() {
    if (!mods.el.hidden) mods.reveal();
    else if (drawn) {
      camera.reveal(target, fit);
      // A jump to a step that added no node but changed the nodes made so far: the latest
      // one in view. A step that changes nothing leaves the view where the learner put it.
      const changed = drawn.shown !== lastShown;
      lastShown = drawn.shown;
      if (changed && drawn.shown && !fit && !(target && target.length)) {
        const latest = drawn.order[drawn.shown - 1];
        if (!camera.holds([latest])) camera.reveal([latest], fit);
      }
    } else if (!listing.hidden) {
      scrollIntoPane(p.body, [...listing.querySelectorAll("li.dl-new")]);
    }
  }

  function paintListing(shown, fresh, i) {
    // names change at renames, not only when nodes appear
    const renamed = c.nodes.filter((n) => n.renamed_at != null && n.renamed_at <= i).length;
    const key = `${k}|${shown}|${fresh.length}|${renamed}`;
    if (listing.dataset.key === key) return;
    listing.dataset.key = key;
    const items = nodeOrder(c).order.slice(0, shown).map((j) => {
      const n = c.nodes[j];
      const meta = n.dtype ? ` ${n.dtype}${n.shape || ""}` : "";
      const when = n.step == null ? "after tracing" : `step ${n.step}`;
      return h("li", { class: fresh.includes(j) ? "dl-new" : null, "data-node": j },
        `${nameAt(n, i)} = ${n.op}[${n.target}](${n.args})${meta}   # ${when}${n.in_graph ? "" : "   (not in the final graph)"}`);
    });
    listing.replaceChildren(
      layout.error ? h("div", { class: "dl-faint" }, `No drawing: ${layout.error}.`) : "",
      items.length ? h("ul", { class: "dl-list" }, items) : h("div", { class: "dl-faint" }, "(no nodes yet)"));
  }

  return { el: p.el, selectCompile, paint, reveal, zoom: camera.zoom };
}

/** Reveal the nodes and edges that exist at step i, outline the new and the linked-to ones,
 * and name each renamed node as it was then. */
function paintDrawing(d, c, i, shown, fresh, flashed) {
  const lo = Math.min(d.shown, shown), hi = Math.max(d.shown, shown);
  d.step = i;
  for (let r = lo; r < hi && !d.cull; r++) {   // a culled drawing is put in the page by cull()
    const display = r < shown ? "" : "none";
    if (r < shown) d.ensure(r);
    const el = d.nodeEls[d.order[r]];
    if (el) el.style.display = display;
    for (const e of d.edgeEls[r]) e.style.display = display;
  }
  d.shown = shown;
  const mark = (k, cls) => ({
    key: `${cls}${k}`,
    make: () => {
      if (d.cull) d.ensure(d.rank[k]);
      const el = d.outlines[k] ? d.outlines[k].cloneNode(false) : svgElement("g");
      el.setAttribute("class", cls);
      el.setAttribute("data-node", k);
      return el;
    },
  });
  sync(d.marks, [...fresh.map((k) => mark(k, "dl-new")), ...(flashed != null ? [mark(flashed, "dl-flash")] : [])]);
  if (!d.cull) for (const r of d.renamed) renameAt(r, i);
}

// ---- js/panes/guards.js ----------------------------------------------------------------------

// The guards pane: the guards installed so far, grouped by the value they guard (`L['x']`,
// `L['self'].fc1`, a global, the ambient state), newest first, the new ones marked and
// scrolled into view (a badge counts those below the fold), with a filter. Each guard is
// said as a person reads it: its kind once (the kind Dynamo installed, as the caption and
// a restarted attempt say it too), its check with object ids named as what they identify
// (`builtins.len is builtin len`), module paths as a program writes them; Dynamo's exact
// text is its tooltip and what "as written" shows. A guard links (`data-guard`) to the
// step that installed it; every row carries `data-guard-row` for the linked panes.

export const RECENT_GUARDS = 40;     // the newest guards, whose groups are open
export const GROUP_ROWS = 40;        // guards listed in one group; older ones counted
export const MAX_GROUPS = 150;       // groups listed; the rest are counted (the filter finds them)

// -- what the pane shows at a step ----------------------------------------------------------

/** The guards listed at step i, newest first: those added after tracing (at the last
 * step), the recent ones the code installed, how many earlier ones are only counted, and
 * the ambient ones (folded). */
export function guardsView(c, i) {
  const groups = guardGroups(c);
  const n = guardsAt(c, i);
  const atEnd = !c.steps.length || i === lastStep(c);
  const installed = groups.stepped.slice(0, n);
  const shown = installed.slice(-RECENT_GUARDS).reverse();
  // A step that installs more guards than are listed still lists every one of its own.
  let k = installed.length - shown.length - 1;
  while (k >= 0 && c.steps.length > 0 && c.guard_details[installed[k]].step === i) shown.push(installed[k--]);
  return {
    ambient: groups.ambient,
    earlier: k + 1,
    shown: shown.map((g) => ({ k: g, isNew: c.steps.length > 0 && c.guard_details[g].step === i })),
    after: atEnd ? groups.after : [],
    total: groups.ambient.length + n + (atEnd ? groups.after.length : 0),
  };
}

/** Guards (newest first) into groups by the value they guard, each group newest first,
 * the groups in order of their newest guard. */
function grouped(c, ks) {
  const byKey = new Map();
  for (const k of ks) {
    const r = guardReading(c, k);
    let grp = byKey.get(r.group.key);
    if (!grp) byKey.set(r.group.key, (grp = { ...r.group, guards: [] }));
    grp.guards.push(k);
  }
  return [...byKey.values()];
}

/** The pane's sections at step i for a filter: {after, traced, ambient} (each a list of
 * groups {key, label, scope, guards (newest first), open}), how many guards there are and
 * match, and how many groups are left out past MAX_GROUPS. `open`: the groups of the
 * recent guards (and of a followed one, `flashed`) are open; with a filter, every one. */
export function guardSections(c, i, filter = "", flashed = null) {
  const view = guardsView(c, i);
  const words = filterWords(filter);
  const groups = guardGroups(c);
  const installed = groups.stepped.slice(0, guardsAt(c, i)).reverse();
  const keep = (ks) => ks.filter((k) => guardMatches(c, k, words));
  const recent = new Set([...view.shown.map((g) => g.k), ...view.after.slice(-RECENT_GUARDS)]);
  if (flashed != null) recent.add(flashed);
  const mark = (list) => list.map((grp) => ({ ...grp, open: words.length > 0 || grp.guards.some((k) => recent.has(k)) }));
  const after = mark(grouped(c, keep([...view.after].reverse())));
  let traced = mark(grouped(c, keep(installed)));
  let left = 0;
  if (traced.length > MAX_GROUPS) {
    const cut = traced.slice(MAX_GROUPS);
    traced = traced.slice(0, MAX_GROUPS);
    // A followed guard's group is listed whatever its age.
    const followed = flashed != null ? cut.find((grp) => grp.guards.includes(flashed)) : null;
    if (followed) traced.push(followed);
    left = cut.length - (followed ? 1 : 0);
  }
  const ambient = keep(view.ambient);
  const matched = after.concat(traced).reduce((n, grp) => n + grp.guards.length, 0) + ambient.length;
  return {
    after, traced, ambient, left, total: view.total, fresh: view.shown.filter((g) => g.isNew).length,
    ambientCount: view.ambient.length, matched, filtering: words.length > 0,
    restarted: c.outcome === "restarted" || (!c.guard_tree && c.guard_details.some((g) => !g.ambient)),
  };
}

// -- painting ----------------------------------------------------------------------------------

/** One guard as a row: its kind, its check as read, and where and when it was installed. */
function guardItem(c, k, { isNew = false, flashed = null, i = 0, asWritten = false } = {}) {
  const g = c.guard_details[k];
  const r = guardReading(c, k);
  const step = guardStep(c, k);
  const linked = step != null && step !== i;
  return {
    key: `g${k}${asWritten ? "w" : ""}`,
    cls: [isNew ? "dl-new" : "", step != null ? "dl-linked" : "", flashed === k ? "dl-flash" : ""].join(" ").trim(),
    make: () => {
      const where = [];
      if (g.step != null) where.push(`step ${g.step}`);
      if (g.lineno) where.push(`line ${g.lineno}${g.line ? `: ${g.line}` : ""}${g.code_name ? ` (in ${g.code_name})` : ""}`);
      const check = asWritten ? [" ", g.text] :
        r.parts.map((p) => (typeof p === "string" ? p : h("span", { class: "dl-id", title: p.title }, p.chip)));
      // The symbols of the sizes it checks: each links to the shapes pane.
      const syms = symbolsOfText(c, g.text).map((n) => [" ", h("span", { class: "dl-sym", "data-help-symbol": n, tabindex: 0 }, n)]);
      const tip = [step != null ? `installed at step ${step}${linked ? ": click (or Enter) to go there" : ""}` : null,
        `as Dynamo wrote it: ${g.text}`].filter(Boolean).join("\n");
      // The check is cut at a few lines (all of it in the tooltip, and when focused), so a
      // new guard fits a small pane.
      return h("li", { "data-guard": step != null ? k : null, "data-guard-row": k, tabindex: 0, title: tip },
        h("span", { class: "dl-check" }, h("span", { class: "dl-guard-kind", "data-help-guard": r.kind, tabindex: 0 }, r.kind),
          asWritten ? check : [r.parts.length ? " " : "", check], syms.length ? h("span", { class: "dl-guard-syms" }, syms) : null),
        where.length ? h("span", { class: "dl-where" }, where.join(" · ")) : null);
    },
  };
}

/** The pane. view: {c, k, i, flash ({guard} when a link led here)}. */
export function guardsPane() {
  const p = pane("dl-guards", "Guards");
  const badge = belowBadge(p.el, p.body);
  const input = h("input", {
    class: "dl-guard-filter", type: "search", placeholder: "filter guards: source, kind or check",
    "aria-label": "filter the guards by source, kind or check", spellcheck: "false",
  });
  const count = h("span", { class: "dl-dim dl-guard-count", role: "status" });
  const written = h("input", { type: "checkbox", class: "dl-as-written" });
  // Why a restarted attempt's guards read otherwise than the kept attempt's, said in one line.
  const why = h("span", {
    class: "dl-tag dl-guard-why", hidden: true, tabindex: 0,
    title: "Dynamo restarted this attempt and never compiled it, so it built no guard tree: each guard here is " +
      "its kind and the source it guards. The attempt that was kept shows each as the check it runs.",
  }, "restarted: kind and source only");
  const bar = h("div", { class: "dl-guard-bar" }, input, why, count,
    h("label", { class: "dl-dim", title: "show each guard exactly as Dynamo wrote it" }, written, " as written"));
  p.el.insertBefore(bar, p.body);
  let last = null;          // the view painted last, to paint again when the filter changes
  let groupEls = new Map(); // group key -> its element, kept per compile
  const chosen = new Map(); // group key -> open or closed, as the learner chose
  let filterTimer = null;

  input.addEventListener("input", () => {
    clearTimeout(filterTimer);
    filterTimer = setTimeout(() => { if (last) { paint(last); reveal(); } }, 80);
  });
  input.addEventListener("keydown", (e) => {
    e.stopPropagation();   // typing is the filter's, not the viewer's keys (nor JupyterLab's)
    if (e.key === "Escape") {
      if (input.value) { input.value = ""; if (last) paint(last); } else p.el.closest(".dl-viewer")?.focus({ preventScroll: true });
    }
  });
  written.addEventListener("change", () => { if (last) paint(last); });   // rows are keyed by the form they show

  function groupEl(name, grp) {
    let el = groupEls.get(`${name}:${grp.key}`);
    if (!el) {
      const head = h("summary", { class: "dl-group-head", title: grp.key },
        h("code", { class: "dl-group-label" }, grp.label),
        grp.scope === "global" ? h("span", { class: "dl-tag" }, "global") : null,
        " ", h("span", { class: "dl-dim dl-group-count" }));
      const list = h("ul", { class: "dl-list" });
      el = h("details", { class: "dl-group", "data-guard-group": grp.key }, head, list);
      el.__dl = { list, count: head.lastChild, wanted: null };
      el.addEventListener("toggle", () => {
        if (el.open !== el.__dl.wanted) { chosen.set(grp.key, el.open); if (last) paint(last); }
      });
      groupEls.set(`${name}:${grp.key}`, el);
    }
    return el;
  }

  function paintGroup(el, grp, c, i, flashed, asWritten) {
    const d = el.__dl;
    const fresh = grp.guards.filter((k) => c.guard_details[k].step === i && c.steps.length > 0).length;
    const n = `· ${plural(grp.guards.length, "guard")}${fresh ? `, ${fresh} new` : ""}`;
    if (d.count.textContent !== n) d.count.textContent = n;
    el.classList.toggle("dl-has-new", fresh > 0);
    const open = chosen.has(grp.key) ? chosen.get(grp.key) : grp.open;
    d.wanted = open;
    if (el.open !== open) el.open = open;
    if (!open) return sync(d.list, []);
    let ks = grp.guards.slice(0, GROUP_ROWS);
    if (flashed != null && grp.guards.includes(flashed) && !ks.includes(flashed)) ks = [flashed, ...ks];
    const rows = ks.map((k) => guardItem(c, k, { isNew: c.steps.length > 0 && c.guard_details[k].step === i, flashed, i, asWritten }));
    const more = grp.guards.length - ks.length;
    if (more > 0) rows.push(textRow("dl-more dl-faint", `… ${plural(more, "earlier guard")} on this value`, "li"));
    sync(d.list, rows);
  }

  function paint(view) {
    last = view;
    const { c, k, i, flash } = view;
    const flashed = flash && flash.guard != null ? flash.guard : null;
    const asWritten = written.checked;
    const s = guardSections(c, i, input.value, flashed);
    setTitle(p, `${k}|${s.total}|${s.fresh}`, () =>
      ["Guards ", h("span", { class: "dl-dim" }, `· ${s.total} so far (${s.ambientCount} ambient)` +
        (s.fresh ? ` · ${s.fresh} new` : ""), " · by value, newest first")]);
    why.hidden = !s.restarted;
    const said = s.filtering ? `${s.matched} of ${s.total} match` : "";
    if (count.textContent !== said) count.textContent = said;
    const section = (name, groups) => groups.map((grp) => ({
      key: `${name}:${grp.key}`,
      make: () => groupEl(name, grp),
    }));
    const ambient = part(p, "ambient", () => h("details", { class: "dl-ambient" }, h("summary"), h("ul", { class: "dl-list" })));
    sync(p.body, [
      s.after.length ? textRow("dl-subtitle", "Installed after tracing, when the graph was compiled") : null,
      ...section("after", s.after),
      s.after.length && s.traced.length ? textRow("dl-subtitle", "Installed while tracing") : null,
      ...section("traced", s.traced),
      !s.after.length && !s.traced.length ? textRow("dl-faint", s.filtering ? "No guard installed so far matches the filter." :
        "No guards installed by the traced code yet.") : null,
      s.left ? textRow("dl-more dl-faint", `… ${plural(s.left, "more value")} with older guards: the filter finds them, the guard tree below lists them all`) : null,
      s.ambient.length ? { key: "ambient", make: () => ambient } : null,
    ].filter(Boolean));
    for (const [name, groups] of [["after", s.after], ["traced", s.traced]]) {
      for (const grp of groups) paintGroup(groupEl(name, grp), grp, c, i, flashed, asWritten);
    }
    if (s.ambient.length) {
      const summary = `${plural(s.ambient.length, "ambient guard")}: the global state every frame checks, installed before the first instruction`;
      if (ambient.firstChild.textContent !== summary) ambient.firstChild.textContent = summary;
      if (flashed != null && s.ambient.includes(flashed)) ambient.open = true;   // a guard-tree leaf led here
      sync(ambient.lastChild, ambient.open ? s.ambient.map((j) => guardItem(c, j, { i, asWritten, flashed })) : []);
      if (!ambient.__dlToggle) {
        ambient.__dlToggle = true;
        ambient.addEventListener("toggle", () => { if (last) paint(last); });
      }
    }
  }

  /** After every pane has painted: the followed guard, or the new ones, in view; the
   * badge says how many new ones stay below. With nothing new the list stays put. */
  function reveal() {
    const flashed = [...p.body.querySelectorAll("li.dl-flash")];
    const marked = flashed.length ? flashed : [...p.body.querySelectorAll("li.dl-new")];
    if (!marked.length) {
      badge(null);
      return;
    }
    // The first one's group heading comes into view with them where all of them fit.
    const head = marked[0].closest("details.dl-group");
    let below = head ? scrollIntoPane(p.body, [head.firstElementChild, ...marked]) : 1;
    if (below) below = scrollIntoPane(p.body, marked);
    badge(below && !flashed.length ? `${plural(below, "more new guard")} ↓` : null);
  }

  function selectCompile() {
    resetPane(p);
    groupEls = new Map();
    chosen.clear();
    last = null;
  }

  return { el: p.el, selectCompile, paint, reveal, filter: input };
}

// ---- js/panes/details.js ---------------------------------------------------------------------

// Below the panes, per compile and made on demand when unfolded: the original bytecode
// beside the modified bytecode Dynamo installed (with its resume functions), and the
// guard tree exactly as TORCH_LOGS=guards prints it. Rows lead back where the recording
// says they came from (provenance.js follows them): the graph call to the step where
// Dynamo stopped tracing and compiled that graph, a resume function's call to the graph
// break that made it, a frame local the installed code loads to the step that first read
// it, a guard-tree leaf to its guard (in the guards pane, and the step that installed it).
// The recording keeps no origin for the other installed rows (`Instr.original` is set for
// the listing Dynamo walks, not for the code it installs), so they lead nowhere.

// `| | +- KIND: check  # comment`: a leaf of the guard tree (capture/internals.py reads them alike)
const LEAF = /^[| ]*\+- [A-Z][A-Z0-9_]*: /;

/** Where a row of an installed listing leads: data-* attributes, or null. */
export function installedLink(c, line) {
  if (line.includes("__compiled_fn_")) return { "data-graph-call": "1" };
  const r = c.resume_functions.findIndex((f) => f.global_name && line.includes(f.global_name));
  if (r >= 0) return { "data-resume": r };
  const local = /\b(?:LOAD_FAST|LOAD_DEREF|LOAD_CLOSURE)\s+(\w+)\s*$/.exec(line);
  const source = local && `L['${local[1]}']`;
  return source && whereRead(c, source) != null ? { "data-source": source } : null;
}

/** The modified bytecode's listing, Dynamo's own bookkeeping and graph calls marked. */
function listing(c, text) {
  return h("pre", { class: "dl-code" }, text.split("\n").slice(1).map((line) => {
    let cls = "dl-row";
    if (line.includes("record_pregraph_bytecode")) cls += " dl-runtime";   // Dynamo's own bookkeeping
    else if (line.includes("__compiled_fn_") || line.includes("__resume_at_")) cls += " dl-callgraph";
    const link = cls.includes("dl-runtime") ? null : installedLink(c, line);
    return h("span", link ? { class: `${cls} dl-linked`, tabindex: 0, ...link } : { class: cls }, line);
  }));
}

/** For each line of the guard tree, the guard (index in guard_details) of its leaf, or null:
 * leaves count in order (`Compile.guards`), and a guard's `leaf` names its line. */
export function treeGuards(c) {
  const byLeaf = new Map();
  c.guard_details.forEach((g, k) => { if (g.leaf != null && !byLeaf.has(g.leaf)) byLeaf.set(g.leaf, k); });
  let leaf = 0;
  return (c.guard_tree || "").replace(/^\n+|\n+$/g, "").split("\n").map((line) => {
    if (!LEAF.test(line)) return null;
    const g = byLeaf.get(leaf++);
    return g === undefined ? null : g;
  });
}

function modifiedBody(c) {
  if (!c.modified_bytecode) {
    const why = c.outcome === "restarted" ? "this attempt was abandoned and restarted" : `outcome ${c.outcome}`;
    return ["Modified bytecode", h("div", { class: "dl-faint" }, `None: ${why}.`)];
  }
  const out = [];
  if (c.resume_functions.length) {
    out.push(h("div", { class: "dl-dim" }, "Resume functions: ", commaList(c.resume_functions.map((r) => r.code_name))));
  }
  out.push(listing(c, c.modified_bytecode));
  for (const r of c.resume_functions) {
    out.push(h("details", null, h("summary", null, "resume function ", code(r.code_name), " (global ", code(r.global_name), ")"),
      listing(c, r.bytecode)));
  }
  return ["Modified bytecode", out];
}

function originalBody(c) {
  const first = c.codes[0];
  return first ?
    [["Original bytecode · ", code(first.name)], h("pre", { class: "dl-code" },
      codeListing(first).original.map((line) => h("span", { class: "dl-row" }, line)))] :
    ["Original bytecode", h("div", { class: "dl-faint" }, "(unknown)")];
}

function treeBody(c) {
  if (c.guard_tree) {
    const guards = treeGuards(c);
    return ["Guard tree", h("pre", { class: "dl-code" },
      c.guard_tree.replace(/^\n+|\n+$/g, "").split("\n").map((line, j) => guards[j] == null ?
        h("span", { class: "dl-row" }, line) :
        h("span", { class: "dl-row dl-linked", tabindex: 0, "data-guard": guards[j], "data-guard-row": guards[j] }, line)))];
  }
  return ["Guard tree", h("div", { class: "dl-faint" }, `None: this compile produced no cache entry (outcome ${c.outcome}).`)];
}

/** A folded section of panes, filled for the compile shown whenever it is open. */
function folded(cls, summary, panes, bodies) {
  const el = h("details", { class: cls }, h("summary", null, summary),
    panes.length > 1 ? h("div", { class: "dl-grid" }, panes.map((p) => p.el)) : panes[0].el);
  let c = null, k = -1;
  const paintOpen = () => {
    if (!c || !el.open) return;
    panes.forEach((p, j) => fill(p, `${k}`, () => bodies[j](c)));
  };
  el.addEventListener("toggle", paintOpen);
  return { el, selectCompile(compile) { ({ c, k } = compile); paintOpen(); }, paint() {} };
}

/** The original and the modified bytecode, side by side. */
export function bytecodeDetails() {
  return folded("dl-details dl-compare", "Bytecode: original and modified",
    [pane("dl-original", "Original bytecode"), pane("dl-rewritten", "Modified bytecode")], [originalBody, modifiedBody]);
}

/** The guard tree. */
export function guardTreeDetails() {
  return folded("dl-details", "Guard tree", [pane("dl-guard-tree", "Guard tree")], [treeBody]);
}

// ---- js/panes/compare.js ---------------------------------------------------------------------

// Compare mode: two compiles of one frame side by side, in place of the panes. On the left
// what differs between them (the guards of the earlier that failed on the call that made
// the later, calls Dynamo refused, the first divergence, guards and graph nodes changed);
// then each compile at the same point of the alignment: the step shown and the other's
// step beside it, what differs marked. Every guard leads (`data-cmp-go`) to the step that
// installed it; the first divergence is `data-action="divergence"`.

const MAX_ROWS = 60;   // guard and node rows listed per list; the rest are counted

const more = (n) => (n > MAX_ROWS ? h("li", { class: "dl-faint" }, `… ${n - MAX_ROWS} more`) : null);

/** A link to step `step` of compile k (a guard's step, when `guard` is given). */
function goTo(k, step, label, { guard = null, note = "", title = null } = {}) {
  if (step == null) return h("span", { class: "dl-faint" }, label);
  return h("button", {
    class: "dl-link dl-cmp-go", type: "button", "data-cmp-go": `${k}:${step}`,
    "data-cmp-guard": guard, "data-cmp-note": note, title: title || `go to step ${step} of this compile`,
  }, label);
}

function kindOf(kind) {
  return kind ? h("span", { class: "dl-guard-kind", "data-help-guard": kind, tabindex: 0 }, kind) : null;
}

/** What explain says of compile k's recompile, for the pane: the causes (each with its
 * guard and the user's line), refusals, and the fixes for those; its words only. */
function explainSays(rec, k) {
  const a = answerOf(rec, k);
  if (!a || !a.causes.length) return [];
  const fixes = [...new Set([...a.causes, ...a.refusals].flatMap((x) => x.advice))];
  const lines = answerLines(rec, k).filter((x) => x.kind === "cause" || x.kind === "refused")
    .concat(fixes.map((fix) => ({ kind: "fix", text: `fix: ${fix}`, user: null })));
  return [h("div", { class: "dl-subtitle dl-cmp-explain" }, `What dynamo-lab explain says of ${compileId(rec.compiles[k])}`),
    h("ul", { class: "dl-list dl-cmp-answer" }, lines.map((x) => h("li", { class: `dl-answer-${x.kind}` },
      x.text, x.user ? [" · your line: ", code(x.user)] : null)))];
}

/** A guard that failed: what it read, expected and got, and the step and line that installed it;
 * the user's line where explain names one (`later`: the compile whose recompile it caused). */
function failedItem(rec, r, later = null) {
  const user = failedGuardUser(rec, later, { ...r, compile_id: rec.compiles[r.compile].compile_id });
  const where = [r.step != null ? `step ${r.step}` : "after tracing", r.lineno != null ? `, line ${r.lineno}` : ""];
  return h("li", { class: "dl-cmp-failed" }, kindOf(r.kind), " ", code(r.source || ""), r.what ? ` ${r.what}` : "",
    ": expected ", code(r.expected), ", got ", code(r.seen),
    h("span", { class: "dl-where" }, "installed by ",
      goTo(r.compile, r.step, [`[${rec.compiles[r.compile].compile_id}] `, where],
        { guard: r.guard, note: "failed", title: "go to the step that installed this guard" }),
      r.line ? [": ", code(r.line)] : ""),
    user ? h("span", { class: "dl-where dl-cmp-user" }, "your line: ", code(user)) : null);
}

function guardRow(sign, r, cls) {
  return h("div", { class: `dl-cmp-${cls}` }, `${sign} `,
    goTo(r.compile, r.step, r.text, { guard: r.guard, note: "installed", title: r.step != null ?
      `installed at step ${r.step}: go there` : "installed after tracing" }));
}

/** What differs between the two compiles: made once per pair. */
function whyBody(rec, d, left, right) {
  const a = rec.compiles[left], b = rec.compiles[right];
  const ia = compileId(a), ib = compileId(b);
  const out = [];
  const failed = failedGuards(rec, left, right);
  if (left !== right) out.push(...explainSays(rec, right));
  out.push(h("div", { class: "dl-subtitle" }, `Guards of ${ia} that failed on the call that made ${ib}`));
  const none = failed.length ? null : noFailedGuards(a, b);   // a log keeps Dynamo's first reason only
  out.push(none ? h("div", { class: "dl-faint" }, none.text) : h("ul", { class: "dl-list" }, failed.map((r) => failedItem(rec, r, right))));
  if (none && none.reasons.length) out.push(h("ul", { class: "dl-list dl-cmp-reasons" }, none.reasons.map((r) => h("li", null, code(r)))));
  for (const r of refusals(rec, [left, right])) {
    out.push(h("div", { class: "dl-subtitle dl-cmp-refused" }, `A later call was refused (${r.kind.replace(/_/g, " ")})`,
      r.compile_id ? ` at [${r.compile_id}]` : "", ": guards that failed"),
    h("ul", { class: "dl-list" }, r.rows.map((x) => failedItem(rec, x))));
  }
  if (!d) return out;
  const dv = d.divergence;
  out.push(h("div", { class: "dl-subtitle" }, "First divergence"));
  const stepless = steplessNote(a, b);
  if (stepless) out.push(h("div", { class: "dl-faint dl-cmp-stepless" }, stepless));
  else if (!dv) out.push(h("div", { class: "dl-faint" }, "None: the same instructions left the same trackers."));
  else {
    const at = divergenceSteps(d);
    out.push(h("div", { class: "dl-cmp-divergence" },
      `line ${dv.lineno ?? "?"} · ${ia} step ${dv.a ?? "—"} / ${ib} step ${dv.b ?? "—"} · `, code(dv.instruction), `: ${dv.why} `,
      at ? h("button", { class: "dl-link", type: "button", "data-cmp-action": "divergence", title: "go to the first divergence (D)" }, "go there") : null,
      h("div", { class: "dl-cmp-removed" }, `− ${ia} `, code(dv.was)),
      h("div", { class: "dl-cmp-added" }, `+ ${ib} `, code(dv.now))));
  }
  const g = guardChanges(rec, d);
  out.push(h("div", { class: "dl-subtitle" }, `Guards: ${g.changed.length} changed, ${g.onlyLeft.length} only in ${ia}, ${g.onlyRight.length} only in ${ib}`));
  if (d.guard_checks_compared === false) {
    out.push(h("div", { class: "dl-faint dl-cmp-unchecked" }, "One of the two is a restarted attempt: it built no guard tree, so its guards are " +
      "a kind and a source each. Guards are paired by those; whether their checks differ is not known (compare the attempt that was kept)."));
  }
  const rows = [
    ...g.changed.map((x) => h("li", null, "~ ", kindOf(x.kind), " ", x.source ? code(x.source) : "",
      guardRow("−", x.was, "removed"), guardRow("+", x.now, "added"))),
    ...g.onlyLeft.map((r) => h("li", null, guardRow("−", r, "removed"))),
    ...g.onlyRight.map((r) => h("li", null, guardRow("+", r, "added"))),
  ];
  if (rows.length) out.push(h("ul", { class: "dl-list dl-cmp-guards" }, rows.slice(0, MAX_ROWS), more(rows.length)));
  const nodes = [
    ...d.nodes_changed.map((n) => h("li", null, `~ ${n.name}: `, code(n.was), " → ", code(n.now), ` (${n.what.join(", ")})`)),
    ...d.nodes_removed.map((n) => h("li", { class: "dl-cmp-removed" }, `− ${n}`)),
    ...d.nodes_added.map((n) => h("li", { class: "dl-cmp-added" }, `+ ${n}`)),
  ];
  out.push(h("div", { class: "dl-subtitle" }, `Graph: ${plural(d.nodes_changed.length, "node")} changed, ${d.nodes_removed.length} only in ${ia}, ${d.nodes_added.length} only in ${ib}`));
  if (nodes.length) out.push(h("ul", { class: "dl-list" }, nodes.slice(0, MAX_ROWS), more(nodes.length)));
  return out;
}

function trackerItem(e, name, flashed) {
  const v = e.v;
  return h("li", { class: e.differs ? "dl-cmp-differs" : null, title: e.differs ? "differs from the other compile here" : null },
    name != null ? [h("b", null, name), " = "] : null,
    h("span", { class: "dl-kind", "data-help-tracker": v.kind, tabindex: 0 }, v.kind),
    v.detail ? ` ${v.detail}` : "", v.source ? h("span", { class: "dl-dim" }, `  <- ${v.source}`) : "");
}

/** One side at one point of the alignment: a pane's title and body. */
function sideBody(rec, k, c, i, o, j, { shown, exact, flashed }) {
  const title = [h("span", { class: "dl-cmp-id" }, compileTitle(null, c, k)), " ",
    h("span", { class: "dl-dim" }, shown ? "· shown" : "· beside it")];
  const stepless = [title, h("div", { class: "dl-faint" }, "This compile was kept without steps: its guards and graph are compared below.")];
  if (!c.steps.length) return stepless;   // a TORCH_TRACE log, record(only=...)
  if (i == null) return [title, h("div", { class: "dl-faint" }, "No step of this compile lines up here.")];
  const s = stepBeside(c, i, o, j);
  if (!s) return stepless;
  const head = h("div", { class: s.sameInstruction || j == null ? "dl-cmp-step" : "dl-cmp-step dl-cmp-differs" },
    shown ? `step ${i} / ${lastStep(c)} ` : goTo(k, i, `step ${i} / ${lastStep(c)}`, { title: "show this compile at this step" }), " ",
    code(s.instruction), s.lineno != null ? ` · line ${s.lineno}` : "", s.depth ? ` · in ${s.code_name}` : "");
  const out = [title, head];
  if (!exact) out.push(h("div", { class: "dl-cmp-note" }, "This compile ran nothing beside the other's step: its step before is shown."));
  if (s.line) out.push(h("div", { class: "dl-cmp-line" }, code(s.line)));
  out.push(h("div", { class: "dl-subtitle" }, `Stack (top first) · ${s.stack.length}`),
    s.stack.length ? h("ol", { class: "dl-list" }, s.stack.map((e) => trackerItem(e, null))) : h("div", { class: "dl-faint" }, "(empty)"),
    h("div", { class: "dl-subtitle" }, "Symbolic locals"),
    s.locals.length ? h("ul", { class: "dl-list" }, s.locals.map((e) => trackerItem(e, e.name))) : h("div", { class: "dl-faint" }, "(none)"));
  if (s.guards.length) {
    out.push(h("div", { class: "dl-subtitle" }, `Guards installed here · ${s.guards.length}`),
      h("ul", { class: "dl-list" }, s.guards.map((g) => h("li", { class: g === flashed ? "dl-flash" : null },
        c.guard_details[g] ? c.guard_details[g].text : `guard ${g}`))));
  }
  return out;
}

/** The pane, for compare mode `mode` (its `on`, `partner`, `comparisons`). view: {rec, c, k, i, flash}. */
function comparePane(mode) {
  const el = h("div", { class: "dl-cmp", hidden: true, role: "region", "aria-label": "compare two compiles" });
  const head = h("div", { class: "dl-cmp-head" });
  const why = pane("dl-cmp-why", "Why they differ");
  const sides = [pane("dl-cmp-side dl-cmp-left", ""), pane("dl-cmp-side dl-cmp-right", "")];
  el.append(head, h("div", { class: "dl-cmp-grid" }, why.el, sides[0].el, sides[1].el));
  let pairKey = null, stepKey = null;

  function fillPane(p, [title, ...body]) {
    p.head.replaceChildren(...[title].flat(Infinity).filter((x) => x != null));
    p.body.replaceChildren(...body.flat(Infinity).filter((x) => x != null));
  }

  function paint({ rec, k, i, flash }) {
    el.hidden = !mode.on;
    if (!mode.on) return;
    const { comparisons, partner: other } = mode;
    const pair = other == null ? null : pairOf(comparisons, k, other);
    const left = pair ? pair.left : Math.min(k, other ?? k), right = pair ? pair.right : Math.max(k, other ?? k);
    const key = `${left}|${right}|${comparisons.length}`;   // the pairs may arrive after the first paint
    if (key !== pairKey) {
      pairKey = key;
      stepKey = null;
      const c = rec.compiles[k];
      if (other == null) {
        head.replaceChildren(`Compare: [${c.compile_id}] ${c.code_name} is the only compile of its frame in this recording.`);
      } else {
        const a = rec.compiles[left], b = rec.compiles[right];
        head.replaceChildren(h("b", null, "Compare "), code(compileId(a)), " with ", code(compileId(b)),
          ` · ${a.code_name} (${fileLabel(a.filename)}:${a.firstlineno})`,
          h("span", { class: "dl-dim" }, " · stepping moves both along the alignment (D: first divergence, C: leave)"));
      }
      const d = pair ? pair.d : null;
      const body = other == null ? whyBody(rec, null, k, k).slice(2) : whyBody(rec, d, left, right);
      if (other != null && !d) {
        body.push(h("div", { class: "dl-faint" },
          `These two were not compared when the viewer was made: capture.compare(recording, "${rec.compiles[left].compile_id}", "${rec.compiles[right].compile_id}") prints the comparison.`));
      }
      fillPane(why, ["Why they differ", body]);
    }
    const d = pair ? pair.d : null;
    const flashed = flash && flash.guard != null ? flash.guard : null;
    const side = k === left ? "a" : "b";
    const beside = d && other != null ? partnerStep(d, side, i) : null;
    const j = beside ? beside.step : null;
    const skey = `${k}|${i}|${j}|${flashed}`;
    if (skey === stepKey) return;
    stepKey = skey;
    const c = rec.compiles[k];
    const mine = sideBody(rec, k, c, i, other != null ? rec.compiles[other] : null, j, { shown: true, exact: true, flashed });
    const theirs = other == null ? ["", h("div", { class: "dl-faint" }, "No other compile of this frame to set beside it.")] :
      sideBody(rec, other, rec.compiles[other], j, c, i, { shown: false, exact: !beside || beside.exact, flashed: null });
    const [l, r] = side === "a" ? [mine, theirs] : [theirs, mine];
    fillPane(sides[0], l);
    fillPane(sides[1], r);
  }

  function reveal() {
    if (el.hidden) return;
    // The step's instruction and the first reading that differs (or the guard followed), together.
    for (const p of sides) {
      const marked = p.body.querySelector(".dl-flash") || p.body.querySelector("li.dl-cmp-differs");
      scrollIntoPane(p.body, [p.body.querySelector(".dl-cmp-step"), marked].filter(Boolean));
    }
  }

  function selectCompile({ rec, k }) {
    mode.moved(rec, k);
    stepKey = null;
  }

  return { el, selectCompile, paint, reveal };
}

/** Compare mode: on or off, the compile set beside the one shown (`partner`), and the pairs
 * shipped (`comparisons`, decoded from the model). The Viewer owns one and asks it about
 * links (`link`); what compare mode does by itself (its button, its keys C and D, the
 * second selector) ends in `go(target)`: the Viewer's jump to a step, or with no target a
 * paint. */
export class CompareMode {
  constructor(model, go) {
    this.on = false;
    this.partner = null;
    this.shown = 0;
    this.go = go;
    this.comparisons = [];
    this.ready = comparisonsOf(model).then((x) => { this.comparisons = x; }, () => {});
    this.pane = comparePane(this);
    this.keys = null;
  }

  /** The viewer moved to compile k: the partner follows (see keptPartner). */
  moved(rec, k) {
    this.rec = rec;
    if (this.on && k !== this.shown) this.partner = keptPartner(rec, this.partner, this.shown, k);
    this.shown = k;
    this.listen();
  }

  listen() {   // the keys C and D, on the viewer's root once the pane is in it
    const root = this.keys || !this.pane.el.closest ? null : this.pane.el.closest(".dl-viewer");
    if (!root) return;
    this.keys = root;
    root.addEventListener("keydown", (e) => {
      const tag = e.target && e.target.tagName;
      if (e.ctrlKey || e.metaKey || e.altKey || tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;
      const action = { c: "compare", d: "divergence" }[e.key.toLowerCase()];
      if (!action) return;
      e.preventDefault();
      e.stopPropagation();
      this.act(action);
    });
  }

  /** "compare" turns compare mode on or off; "divergence" goes to the first divergence. */
  act(action) {
    if (!this.rec) return;
    if (action === "compare") {
      this.on = !this.on;
      this.partner = this.on ? defaultPartner(this.rec, this.shown) : null;
      return this.go(null);
    }
    if (action === "divergence" && this.on) {
      const to = divergenceTarget(this.rec, this.comparisons, this.shown, this.partner);
      if (to) this.go(to);
    }
  }

  /** The second selector chose compile j. */
  choose(j) {
    this.partner = Number.isInteger(j) ? j : null;
    this.go(null);
  }

  /** Where a click on `t` leads when it is one of compare mode's links (null otherwise);
   * its buttons act at once. */
  link(rec, t) {
    this.rec = rec;
    const act = t.closest("[data-cmp-action]");
    if (act) return this.act(act.dataset.cmpAction) ?? null;
    const go = t.closest("[data-cmp-go]");
    return go ? compareTarget(rec, go.dataset) : null;
  }
}

// ---- js/search.js ----------------------------------------------------------------------------

// Search: find a guard by the source it guards, a graph node by its name, a local by its
// name, in the compile shown, and jump to the step that made it. The results are links
// of provenance.js (`data-guard`, `data-node`, `data-local`), so a jump reads like any
// other: a note where it lands, the thing followed marked, return goes back. Keyboard:
// "/" puts the cursor in the box, arrows choose, Enter goes, Escape leaves.
//
// searchIndex and searchCompile are pure (node tests them, tests/js/search.test.mjs).

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

// ---- js/stages.js ----------------------------------------------------------------------------

// The stages after Dynamo as the front end reads them: which Dynamo node a stage's unit (an
// AOTAutograd node, an Inductor post-grad node or kernel) came from, what a Dynamo node
// became, and which lines of a stage's printed code show a unit. Pure functions of the
// recording (no DOM), so node imports this file and tests it directly.
//
// A compile's `stages` are exactly what `Compile.to_dict()` wrote (capture/recording.py
// shows one stage as JSON): each has `name`, `graph`, `code`, `from_cache` and `units`,
// each unit `name`, `op`, `target`, `dynamo_nodes` (names as `Compile.nodes` has them),
// `invented`, `via` and `lines` (1-based lines of `code`).

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

// ---- js/panes/stages.js ----------------------------------------------------------------------

// The after-Dynamo view: for the compile shown, AOTAutograd's graphs (joint, forward,
// backward, with what the partitioner saved and recomputed) and Inductor's post-grad graphs
// and output code, one stage at a time, each unit (a node, a kernel) linked back to the
// Dynamo nodes it came from. Hovering or focusing a unit lights those nodes in the FX graph
// and says the steps that made them; a click or Enter (`data-node`) goes to the step of the
// first; a Dynamo node hovered anywhere else lights what it became; at each step, what the
// step's new nodes became is marked. Absent for a compile without stages.

/** One unit as a row: name, kind, the Dynamo nodes it came from (each a link to the step
 * that made it) and the steps; invented units say so. */
function unitRow(c, stage, u, v, chosen) {
  const origins = unitOrigins(c, u);
  const linked = origins.filter((o) => o.k != null);
  const badges = [];
  if (chosen.saved.has(u.name)) badges.push(h("span", { class: "dl-tag dl-saved", title: "the partitioner keeps this value for the backward" }, "saved"));
  if (chosen.recomputed.has(u.name)) badges.push(h("span", { class: "dl-tag dl-recomputed", title: "a forward op the backward computes again rather than saving it" }, "recomputed"));
  let from;
  if (u.invented || !linked.length) {
    from = h("span", { class: "dl-faint" }, " · invented: no Dynamo node (made by ",
      stage.name.startsWith("aot_") ? "AOTAutograd" : "Inductor", ")");
  } else {
    const steps = [...new Set(linked.map((o) => o.step))];
    from = [" ← ", linked.length === 1 ? code(linked[0].name) : commaList(linked, (o) =>
      h("button", { class: "dl-link", type: "button", "data-node": o.k, title: `go to step ${o.step}, which made ${o.name}` }, o.name)),
    h("span", { class: "dl-dim" }, ` · ${steps.length === 1 ? "step" : "steps"} ${steps.join(", ")}`)];
  }
  const first = linked[0];
  return h("li", {
    class: `dl-unit${u.invented ? " dl-invented" : " dl-linked"}`, "data-unit": v, tabindex: 0, "data-node": first ? first.k : null,
    title: first ? `made from ${linked.map((o) => o.name).join(", ")}: click (or Enter) to go to step ${first.step}` :
      "invented: no Dynamo node to go back to",
  }, code(u.name), " ", h("span", { class: "dl-tag" }, unitKind(u)), badges.length ? [" ", badges] : "", from);
}

/** The partitioner's choice and the stage's inputs and outputs, each name a hoverable chip. */
function facts(stage) {
  if (stage.from_cache) {
    const { cache, off } = cacheOf(stage);
    return [h("div", { class: "dl-banner" }, `Links unavailable: this stage came from ${cache}. `,
      "Torch replayed the text it had stored and built no graph while recording, so nothing here can be " +
      "traced back to Dynamo's nodes or steps. Record it again: a recording made with after_dynamo=True " +
      "now compiles past this cache while it records (in effect ", code(off), ").")];
  }
  const parts = partition(stage);
  const chips = (list) => list.map((x, j) => [j ? " " : "", h("span", {
    class: "dl-chip dl-stage-chip", "data-unit": x.unit, tabindex: x.unit == null ? null : 0,
  }, x.name)]);
  const out = [];
  for (const [key, words, why] of [
    ["inputs", "inputs", null], ["outputs", "outputs", null],
    ["saved", "saved for the backward", "the partitioner keeps these forward values for the backward"],
    ["recomputed", "recomputed in the backward", "forward ops the backward computes again (cheaper than saving them)"],
  ]) {
    if (parts[key].length) out.push(h("span", { class: `dl-stage-fact dl-${key}`, title: why }, h("span", { class: "dl-dim" }, `${words}: `), chips(parts[key])));
  }
  const { invented } = linkCounts(stage);
  if (invented) out.push(h("div", { class: "dl-faint" }, `${plural(invented, "unit")} invented: AOTAutograd or Inductor made them, no Dynamo node to link.`));
  return out;
}

/** The pane. `root` is the viewer's root: a Dynamo node hovered in another pane lights what
 * it became here, and what a unit came from is lit there. */
export function stagesPane(root) {
  const toggle = h("button", { class: "dl-stages-toggle", type: "button", "aria-expanded": "false",
    title: "show or hide AOTAutograd's graphs and Inductor's code" }, "After Dynamo");
  const summary = h("span", { class: "dl-stages-summary" });
  const tabs = h("div", { class: "dl-stage-tabs", role: "tablist", "aria-label": "stages after Dynamo" });
  const factsEl = h("div", { class: "dl-stage-facts" });
  const units = h("ul", { class: "dl-list dl-stage-units", "aria-label": "units and the Dynamo nodes they came from" });
  const codeEl = h("pre", { class: "dl-code dl-stage-code" });
  const info = h("div", { class: "dl-stage-info dl-dim", "aria-live": "off" });
  const box = h("div", { class: "dl-stage-box", role: "tabpanel" },
    h("div", { class: "dl-stage-split" }, h("div", { class: "dl-stage-side" }, factsEl, units), h("div", { class: "dl-stage-side" }, codeEl)), info);
  // Folded at first, like the sections above it; open, the viewer grows by its height (viewer.css).
  const el = h("div", { class: "dl-stages", role: "region", "aria-label": "after Dynamo" },
    h("div", { class: "dl-stages-head", role: "heading", "aria-level": 3 }, toggle, summary), tabs, box);
  let c = null, k = -1, j = -1, view = null, rows = [], lines = [], marked = "", lit = [], litFrom = null, pending = false, fresh = false;
  const chosen = new Map();   // compile index -> the stage the learner chose there

  const stage = () => stagesOf(c)[j];
  const say = (...parts) => info.replaceChildren(...parts.flat(Infinity).filter((x) => x != null && x !== false && x !== ""));

  function selectCompile(compile) {
    ({ c, k } = compile);
    unlight();
    el.hidden = !stagesOf(c).length;
    j = -1; marked = "";
    tabs.replaceChildren(...stageGroups(c).map((g) => h("span", { class: "dl-stage-group" },
      h("span", { class: "dl-dim" }, `${g.title}: `),
      g.stages.map((s) => {
        const st = stagesOf(c)[s];
        return h("button", {
          class: "dl-chip dl-stage-tab", type: "button", role: "tab", "data-stage": s, "aria-selected": "false",
          title: `${st.name} (${st.graph}): ${st.from_cache ? "from the cache, no links" : unitWord(st, st.units.length)}`,
        }, stageLabel(st), st.from_cache ? " (cache)" : "");
      }))));
    if (!el.hidden) show(chosen.has(k) ? chosen.get(k) : firstStage(c));
  }

  /** Show stage s of the compile: its facts, units and code (made once per choice). */
  function show(s) {
    j = s;
    chosen.set(k, s);
    unlight(); marked = "";
    for (const t of tabs.querySelectorAll("[data-stage]")) t.setAttribute("aria-selected", String(Number(t.dataset.stage) === s));
    const st = stage();
    factsEl.replaceChildren(...facts(st));
    const choice = { saved: new Set(st.saved || []), recomputed: new Set(st.recomputed || []) };
    rows = st.units.map((u, v) => unitRow(c, st, u, v, choice));
    units.replaceChildren(...(rows.length ? rows : [h("li", { class: "dl-faint" },
      st.from_cache ? "No units: nothing was built to link." : "No units.")]));
    const at = lineUnits(st);
    const width = String(stageLines(st).length).length;
    // A line shows its unit (`data-unit`: hovered, it lights what the unit came from); only the
    // unit's row links to a step, so the linked panes never take a line for the node itself.
    lines = stageLines(st).map((text, n) => h("span", { class: `dl-row${at.has(n + 1) ? " dl-unit-line" : ""}`, "data-unit": at.has(n + 1) ? at.get(n + 1)[0] : null },
      h("span", { class: "dl-lineno" }, String(n + 1).padStart(width)), " ", text));
    codeEl.replaceChildren(...lines);
    codeEl.parentElement.scrollTop = units.parentElement.scrollTop = 0;
    say(hint());
    fresh = true;
    if (view) paint(view);
  }

  const hint = () => (stage().from_cache ? "This stage has no links: it came from the cache." :
    "Hover or focus a unit: the Dynamo nodes it came from light up in the FX graph. Click or Enter: go to the step that made it.");

  function paint(v) {
    view = v;
    if (el.hidden) return;
    const { made, units: now } = stepMarks(c, v.i);
    const flashed = v.flash && v.flash.node != null ? unitsOfNodes(c, [v.flash.node]) : new Map();
    const all = stagesOf(c);
    const kernels = all.filter((s) => s.name === "inductor_output_code").reduce((n, s) => n + s.units.length, 0);
    summary.replaceChildren(` · ${plural(all.length, "stage")}` + (kernels ? ` · ${plural(kernels, "kernel")}` : ""),
      made.length && now.size ? h("span", { class: "dl-stages-now" }, " · this step made ", commaList(made.map((m) => nameAt(c.nodes[m.k], v.i))),
        `: what it became is marked in ${plural(now.size, "stage")}`) : "");
    for (const t of tabs.querySelectorAll("[data-stage]")) t.classList.toggle("dl-now", now.has(Number(t.dataset.stage)));
    const nowHere = now.get(j) || new Set(), flashHere = flashed.get(j) || new Set();
    const key = `${j}|${[...nowHere]}|${[...flashHere]}`;
    if (key === marked) return relight();
    marked = key;
    const st = stage();
    rows.forEach((row, u) => {
      row.classList.toggle("dl-new", nowHere.has(u));
      row.classList.toggle("dl-flash", flashHere.has(u));
    });
    const newLines = new Set(), flashLines = new Set();
    for (const u of nowHere) for (const n of unitLines(st, st.units[u])) newLines.add(n);
    for (const u of flashHere) for (const n of unitLines(st, st.units[u])) flashLines.add(n);
    lines.forEach((line, n) => {
      line.classList.toggle("dl-new", newLines.has(n + 1));
      line.classList.toggle("dl-flash", flashLines.has(n + 1));
    });
    pending = true;
    relight();
  }

  /** After every pane has painted: the units this step (or the link followed) marked, in view. */
  function reveal() {
    if (!(pending || fresh) || el.hidden || !el.classList.contains("dl-open")) return;
    pending = false;
    const rowsMarked = rows.filter((r) => r.classList.contains("dl-flash"));
    const target = rowsMarked.length ? rowsMarked : rows.filter((r) => r.classList.contains("dl-new"));
    const cls = rowsMarked.length ? "dl-flash" : "dl-new";
    const first = stage().units.find((u) => u.op === "kernel" && u.lines.length);   // output code opens on its first kernel
    if (target.length) scrollIntoPane(units.parentElement, target);
    if (target.length) scrollIntoPane(codeEl.parentElement, lines.filter((l) => l.classList.contains(cls)).slice(0, 40));
    else if (fresh && first) scrollIntoPane(codeEl.parentElement, [lines[first.lines[0] - 1]]);
    fresh = false;
  }

  /** The lit lines of the code (and rows of the list) in view, when what was hovered is elsewhere. */
  function showLit(list) {
    if (list) scrollIntoPane(units.parentElement, rows.filter((r) => r.classList.contains("dl-lit")));
    scrollIntoPane(codeEl.parentElement, lines.filter((l) => l.classList.contains("dl-lit")).slice(0, 40));
  }

  // -- lighting, both ways ------------------------------------------------------------------

  function unlight() {
    for (const x of lit) x.classList.remove("dl-lit");
    lit = [];
    litFrom = null;
  }

  function lightEls(els) {
    for (const x of els) if (x && !x.classList.contains("dl-lit")) { x.classList.add("dl-lit"); lit.push(x); }
  }

  /** Unit u of the stage shown: its row and lines, its Dynamo nodes (and the source lines
   * that made them, when the source pane shows that code) elsewhere; the info says the steps. */
  function lightUnit(u) {
    unlight();
    litFrom = { unit: u };
    const st = stage(), unit = st.units[u];
    if (!unit) return;
    lightEls([rows[u], ...unitLines(st, unit).map((n) => lines[n - 1])]);
    const origins = unitOrigins(c, unit).filter((o) => o.k != null);
    const here = view && c.steps[view.i];
    for (const o of origins) {
      lightEls(outside(`[data-node="${o.k}"]`));
      const made = c.steps[o.step];
      if (here && made && made.code === here.code && made.lineno != null) lightEls(outside(`.dl-source [data-line="${made.lineno}"]`));
    }
    if (origins.length) showNodes(root, origins.map((o) => o.k));   // into the graph pane's view
    if (!origins.length) {
      say(code(unit.name), ` (${unitKind(unit)}) is invented: no Dynamo node made it; `,
        st.name.startsWith("aot_") ? "AOTAutograd" : "Inductor", " added it, so it has no step to go back to.");
      return;
    }
    say(code(unit.name), ` (${unitKind(unit)}) came from `, origins.map((o, n) => {
      const where = madeWhere(c, o.step);
      return [n ? "; " : "", code(o.name), `, made at step ${o.step}`, where ? [` on line ${where.lineno}`, where.line ? [": ", code(where.line)] : ""] : "",
        view && view.i < o.step ? " (not made yet at this step)" : ""];
    }), ` · click or Enter: go to step ${origins[0].step}`);
  }

  /** Dynamo node k, hovered in another pane: every unit it became, here and in the tabs. */
  function lightNode(n) {
    unlight();
    litFrom = { node: n };
    const into = unitsOfNodes(c, [n]);
    const here = into.get(j) || new Set();
    const st = stage();
    for (const u of here) lightEls([rows[u], ...unitLines(st, st.units[u]).map((m) => lines[m - 1])]);
    lightEls([...tabs.querySelectorAll("[data-stage]")].filter((t) => into.has(Number(t.dataset.stage))));
    const name = c.nodes[n] ? c.nodes[n].name : String(n);
    say("Dynamo node ", code(name), into.size ?
      [` became ${plural([...into.values()].reduce((m, s) => m + s.size, 0), "unit")} in ${plural(into.size, "stage")}`,
        here.size ? [", here: ", commaList([...here].map((u) => st.units[u].name))] : " (none in this one; the lit tabs have them)"] :
      ": no unit of the stages names it as where it came from");
  }

  function relight() {
    if (!litFrom) return;
    if (litFrom.unit != null) lightUnit(litFrom.unit); else lightNode(litFrom.node);
  }

  const outside = (sel) => [...root.querySelectorAll(sel)].filter((x) => !el.contains(x) && !x.closest(".dl-marks"));

  function unitOf(t) {
    const x = t && t.closest ? t.closest("[data-unit]") : null;
    return x && el.contains(x) ? Number(x.dataset.unit) : null;
  }

  function enter(e) {
    if (el.hidden || !c) return;
    if (el.contains(e.target)) {
      const u = unitOf(e.target);
      if (u != null && !(litFrom && litFrom.unit === u)) {
        lightUnit(u);
        if (!e.target.closest(".dl-stage-code")) showLit(false);   // never scroll what is under the pointer
      }
      return;
    }
    const node = e.target.closest ? e.target.closest("[data-node]") : null;
    if (node && !node.closest(".dl-marks")) {
      const n = Number(node.dataset.node);
      if (!(litFrom && litFrom.node === n)) { lightNode(n); showLit(true); }
    }
  }

  function leave(e) {
    if (!litFrom) return;
    const to = e.relatedTarget;
    if (to && to.closest && (el.contains(to) ? unitOf(to) === litFrom.unit : to.closest("[data-node]"))) return;
    unlight();
    say(hint());
  }

  for (const [name, f] of [["mouseover", enter], ["focusin", enter], ["mouseout", leave], ["focusout", leave]]) root.addEventListener(name, f);
  tabs.addEventListener("click", (e) => {
    const t = e.target.closest("[data-stage]");
    if (t) { show(Number(t.dataset.stage)); reveal(); }
  });
  toggle.addEventListener("click", () => {
    const open = !el.classList.contains("dl-open");
    el.classList.toggle("dl-open", open);
    toggle.setAttribute("aria-expanded", String(open));
    if (!open) return;
    pending = true;
    reveal();
    el.scrollIntoView({ block: "nearest" });   // what the learner opened, in view
  });

  return { el, selectCompile, paint, reveal };
}

// ---- js/panes/shapes.js ----------------------------------------------------------------------

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

// ---- js/sync.js ------------------------------------------------------------------------------

// Where the viewer is, kept in the widget's model (`compile`, `step`): sent to the kernel
// once stepping pauses, so that a learner's quick steps make one message, not one each.

const SAVE_DELAY = 60;   // ms: the step is sent to the kernel once stepping pauses

export class ModelSync {
  /** `where()`: the viewer's {compile, step} when the message goes (null: it is gone). */
  constructor(model, where) {
    this.model = model;
    this.where = where;
    this.timer = null;
    this.saving = false;   // true while our own change events run: the model is half set
  }

  /** Send where the viewer is once stepping pauses (each call puts the message off). */
  save() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      const at = this.where();
      const m = this.model;
      if (!at || (m.get("compile") === at.compile && m.get("step") === at.step)) return;
      this.saving = true;
      try {
        m.set("compile", at.compile);
        m.set("step", at.step);
      } finally {
        this.saving = false;
      }
      m.save_changes();
    }, SAVE_DELAY);
  }

  stop() {
    clearTimeout(this.timer);
    this.timer = null;
  }
}

// ---- js/roving.js ----------------------------------------------------------------------------

// One tab stop per pane. A pane's body (dom.js's `pane`) is the stop: Tab reaches it once,
// whatever it holds (a bytecode row per instruction, a guard per line, a graph node per
// node), and ↓ ↑ move the focus between the things inside it that can be focused; Enter
// follows the one focused (viewer.js), Tab goes on to the next pane. Everything focusable
// inside a body is taken out of the tab order as it is put in the page (panes add rows
// at every step), so no pane has to remember to.

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

// ---- js/viewer.js ----------------------------------------------------------------------------

// The Viewer: the one stepper that owns the panes (Python Tutor's ExecutionVisualizer). It
// holds the state (the compile and step shown, the history of jumps, predict mode), builds
// a plain view of it per paint and hands it to the panes and the controls, none of which
// calls back: what the learner clicks says what it means in data-* attributes, which
// `follow` turns into a step (`data-action`, `data-answer`, the links of provenance.js).
// The model is read and written only here: `compile`, `step`, `predict`, `predictions`.

const PLAY_INTERVAL = 400;           // ms between two steps while playing

export class Viewer {
  /** `recording`: a promise of {rec, graphs}, decoded once per widget (index.js). */
  constructor(model, el, recording) {
    this.model = model;
    this.compile = 0;   // the index of the compile shown
    this.step = 0;      // the index of the step shown
    this.history = [];  // where each jump came from: {compile, step}
    this.predict = new PredictMode();
    this.note = null; this.flash = null;   // what the last jump said, and what it led to
    this.fit = false; this.cmp = new CompareMode(model, (to) => (to ? this.go(to.compile, to.step, { jump: true, flash: to.flash, note: to.note }) : this.paint()));
    this.firstPaint = null;   // when the first frame with the viewer in it was painted
    this.sync = new ModelSync(model, () => (this.dead ? null : { compile: this.compile, step: this.step }));
    this.root = h("div", { class: "dl-viewer", tabindex: 0 },
      h("div", { class: "dl-loading dl-dim" }, "Loading the recording…"));
    el.replaceChildren(this.root);
    this.listeners = Object.entries({
      "change:step": () => this.fromModel(),
      "change:compile": () => this.fromModel(),
      "change:predict": () => this.setPredict(!!model.get("predict"), false),
      "change:predictions": () => this.paintPredict(),
    });
    for (const [name, cb] of this.listeners) model.on(name, cb);
    this.ready = this.load(recording);
  }

  destroy() {
    for (const [name, cb] of this.listeners) this.model.off(name, cb);
    this.stopPlay();
    this.sync.stop();
    if (this.roving) this.roving.stop();
    this.dead = true;
  }

  async load(recording) {
    try {
      const { rec, graphs } = await recording;
      if (this.dead) return;
      this.rec = rec;
      this.graphs = graphs;
      this.build();
      this.fromModel(true);
      this.root.dataset.ready = "1";
      // The timeout runs once the frame after this callback is done (wall-clock ms).
      requestAnimationFrame(() => setTimeout(() => {
        this.firstPaint = performance.timeOrigin + performance.now();
      }, 0));
    } catch (e) {
      this.root.replaceChildren(h("div", { class: "dl-banner dl-error" },
        `The recording could not be read (${e && e.message ? e.message : e}): run the cell again.`));
      throw e;
    }
  }

  /** The compile shown (undefined for a recording with no compiles). */
  get current() { return this.rec.compiles[this.compile]; }

  // -- building, once -----------------------------------------------------------------------

  build() {
    const rec = this.rec;
    this.titles = this.model.get("titles") || [];
    this.controls = controls(rec, this.titles, this.cmp);
    // Every pane, in the order they paint: each has selectCompile(compile) and paint(view).
    const p = this.panes = {
      aids: helpAids(this), summary: compileSummary(rec), caption: captionPane(), source: sourcePane(), bytecode: bytecodePane(),
      stack: stackPane(), graph: graphPane(), guards: guardsPane(), compare: bytecodeDetails(), tree: guardTreeDetails(), pair: this.cmp.pane,
      stages: stagesPane(this.root),
    };
    p.shapes = shapesPane(this.root, p.guards.el);   // in the guards' place, a button away
    p.search = searchBox(this.root); p.links = linkedPanes(this.root); this.controls.bar.append(p.search.el);   // painted last
    const ctl = this.controls;
    this.root.replaceChildren(recordingHeader(rec), ctl.bar, p.summary.el, ctl.steps, ctl.jumps,
      this.predict.el, p.caption.el, p.pair.el,
      h("div", { class: "dl-grid dl-panes" }, h("div", { class: "dl-column" }, p.source.el, p.bytecode.el),
        p.stack.el, p.graph.el, p.guards.el, p.shapes.el),
      p.compare.el, p.tree.el, p.stages.el);
    this.roving = rovingPanes(this.root);
    this.root.addEventListener("keydown", (e) => this.key(e));
    this.root.addEventListener("click", (e) => this.link(e));
    ctl.selector.addEventListener("change", () => this.go(Number(ctl.selector.value), 0));
    ctl.slider.addEventListener("input", () => this.go(this.compile, Number(ctl.slider.value)));
    if (!rec.compiles.length) ctl.disable();
    this.setPredict(!!this.model.get("predict"), false);
  }

  /** Another compile: every pane forgets the last one and sets up for this one. */
  selectCompile(k) {
    this.compile = k;
    const c = this.current;
    const compile = { rec: this.rec, titles: this.titles, c, k, layout: this.graphs[k] };
    this.controls.selectCompile(c, k);
    for (const pane of Object.values(this.panes)) pane.selectCompile(compile);
  }

  // -- navigation ------------------------------------------------------------------------------

  /** Show compile k at step i. A jump (`jump: true`) can be returned from. */
  go(k, i, { jump = false, note = null, flash = null, save = true } = {}) {
    if (!this.rec || !this.rec.compiles.length) return;
    k = Math.max(0, Math.min(k, this.rec.compiles.length - 1));
    i = Math.max(0, Math.min(i, lastStep(this.rec.compiles[k])));
    const moves = k !== this.compile || i !== this.step;
    if (jump && moves) this.history.push({ compile: this.compile, step: this.step });
    if (!jump || moves || note) {
      this.note = note;
      this.flash = flash;
    }
    if (k !== this.compile || !this.built) {
      this.built = true;
      this.selectCompile(k);
    }
    this.step = i;
    this.predict.asking = null;
    this.paint();
    if (save) this.sync.save();
  }

  fromModel(first = false) {
    if (!this.rec || !this.rec.compiles.length || this.sync.saving) return;
    const k = Number(this.model.get("compile")) || 0, i = Number(this.model.get("step")) || 0;
    if (!first && k === this.compile && i === this.step) return;
    this.go(k, i, { save: false });
  }

  act(action) {
    if (!this.rec || !this.rec.compiles.length) return;
    const c = this.current, i = this.step, k = this.compile;
    const jump = (to, note, none) => (to != null ? this.go(k, to, { jump: true, note }) : none && this.go(k, i, { note: none, save: false }));
    switch (this.controls.act(action, c, i, jump) ? null : action) {   // over, out, goto:N, keys: the controls'
      case "first": this.go(k, 0); break;
      case "back": this.go(k, i - 1); break;
      case "forward": this.forward(); break;
      case "last": this.go(k, lastStep(c)); break;
      case "line": jump(nextLine(c, i) ?? lastStep(c)); break;
      case "node": jump(nextNode(c, i), null, "No step after this one adds a graph node."); break;
      case "guard": jump(nextGuard(c, i), null, "No step after this one installs a guard."); break;
      case "break": jump(breakStep(c), "The graph break happened at this step.", "This compile has no graph break."); break;
      case "return": this.back(); break;
      case "play": this.playing ? this.stopPlay() : this.play(); break;
      case "predict": this.setPredict(!this.predict.on, true); break;
      case "fit": this.fit = !this.fit; this.paintControls(); this.panes.graph.paint(this.view()); this.panes.graph.reveal(); break;
      case "reveal": this.reveal(); break;
      case "skip": this.go(k, i + 1); break;
      default: if (/^(zoom|pan)-/.test(action)) { this.fit = false; this.paintControls(); this.panes.graph.zoom(action.slice(action.indexOf("-") + 1)); } break;
    }
  }

  back() {
    const to = this.history.pop();
    if (to) this.go(to.compile, to.step); else this.paintControls();
  }

  forward() {
    if (this.step >= lastStep(this.current)) return;
    if (this.predict.on && this.predict.asking) return this.reveal();
    if (this.predict.on && this.predict.ask(this.current, this.step, this.model.get("predictions") || [])) {
      this.stopPlay();
      this.paintPredict();
      this.paintControls();
      return;
    }
    this.go(this.compile, this.step + 1);
  }

  play() {
    if (this.step >= lastStep(this.current)) this.go(this.compile, 0);
    this.playing = setInterval(() => {
      if (this.dead || this.step >= lastStep(this.current) || this.predict.asking) return this.stopPlay();
      this.forward();
    }, PLAY_INTERVAL / (Number(this.controls.speed.value) || 1));
    this.paintControls();
  }

  stopPlay() {
    if (this.playing) clearInterval(this.playing);
    this.playing = null;
    if (this.controls) this.paintControls();
  }

  key(e) {
    const action = keyPress(e, this.predict.asking);
    if (action && action.choose) {   // predict mode's key for a choice, else the key's own action
      const chip = this.predict.el.querySelector(`.dl-chip[data-key="${action.choose}"]`);
      if (chip) chip.click(); else if (action.or) this.act(action.or);
    } else if (action && action.cycle) {
      this.predict.cycle(action.cycle);
      this.paintPredict();
    } else if (action) this.act(action);
  }

  // -- what a click means ----------------------------------------------------------------------

  link(e) {
    const t = e.target.closest ? e.target : e.target.parentElement;
    if (!t || !this.rec) return;
    this.follow(t);
    // What was clicked may have been redrawn away: keep the keys working.
    if (!t.isConnected) this.root.focus({ preventScroll: true });
  }

  follow(t) {
    const answer = t.closest("[data-answer]");
    const action = t.closest("[data-action]");
    if (answer) {
      this.predict.choose(answer.dataset);
      this.paintPredict();
    } else if (action) {
      this.act(action.dataset.action);
    } else {
      const to = this.cmp.link(this.rec, t) || shapeLink(this.rec, this.compile, t) || linkTarget(this.rec, this.compile, t, this.step);
      if (to) this.go(to.compile, to.step, { jump: true, flash: to.flash, note: to.note });
    }
  }

  // -- predict mode ---------------------------------------------------------------------------

  setPredict(on, save) {
    this.predict.on = on;
    if (!this.controls) return;
    if (!on) this.predict.asking = null;
    if (save && this.model.get("predict") !== on) {
      this.model.set("predict", on);
      this.model.save_changes();
    }
    this.paintPredict();
    this.paintControls();
  }

  reveal() {
    const record = this.predict.settle(this.current);
    if (!record) return this.paintPredict();
    this.model.set("predictions", [...(this.model.get("predictions") || []), record]);
    this.model.save_changes();
    this.go(this.compile, record.step);
  }

  // -- painting a step ------------------------------------------------------------------------

  /** What every pane paints from: plain values, nothing to call back. */
  view() {
    return {
      c: this.current, k: this.compile, i: this.step, flash: this.flash, note: this.note, rec: this.rec,
      returnable: this.history.length > 0, playing: !!this.playing, predicting: this.predict.on, fit: this.fit,
    };
  }

  paint() {
    this.roving.before();
    const view = this.view();
    this.controls.paint(view);
    for (const pane of Object.values(this.panes)) pane.paint(view);
    this.paintPredict();
    for (const pane of Object.values(this.panes)) if (pane.reveal) pane.reveal();   // writes done: scroll into view
    this.roving.after();
  }

  paintControls() { this.controls.paint(this.view()); }

  paintPredict() {
    if (!this.controls) return;
    this.predict.paint(this.model.get("predictions") || []);
    this.panes.bytecode.asked(this.predict.asking, this.current, this.step);   // its row marked
  }
}

// ---- js/index.js -----------------------------------------------------------------------------

/* Dynamo Lab's trace viewer: plain ES modules (no framework), joined into one module,
widgets/viewer/viewer.js, by `python -m widgets.viewer.join`.

The contract with whoever hosts it (anywidget in JupyterLab; the standalone page, whose
host is page-host.js):

  export default { initialize, render }
  initialize({ model })      once per widget: starts decoding the recording, which every
                             view of the widget then shares
  render({ model, el })  -> cleanup function

  `model` is used only through get(name), set(name, value), save_changes(),
  on("change:NAME", cb) and off("change:NAME", cb). The names (all made by
  widgets/viewer/state.py `viewer_state(recording, compile, step)`):

    data         the recording's JSON (Recording.to_json(), the engine's format),
                 gzip-compressed: a DataView (anywidget), an ArrayBuffer or a Uint8Array
    graphs       the graph layout of every compile (widgets/viewer/layout.py), gzip-compressed
                 JSON, same kinds of bytes
    titles       each compile's title, as the engine writes it
    answers      what `dynamo-lab explain` says about each compile (capture/explain.py
                 `viewer_answers`), one entry per compile; kept beside the recording
                 (answers.js `answerOf`); absent, the views say nothing of explain
    help         what the recording's opcodes, tracker classes, guard kinds and symbols
                 mean (capture/help.py `for_recording`); absent, words show no help
    compile      the index of the compile shown            (read and written)
    step         the index of the step shown                (read and written)
    predict      predict mode on or off                     (read and written)
    predictions  the learner's answers in predict mode      (read and written)

Everything is rendered here, from the recording: stepping never calls the kernel.

For tests, benchmarks and the console, one handle on the element rendered into:
`el.dynamoLab` = { model, viewer }, where `viewer.rec` is the decoded recording and
`viewer.firstPaint` the wall-clock time (ms) of the first frame painted with the viewer
in it, null until then. `.dl-viewer[data-ready='1']` says the recording was read.

The modules, each importing only those below it:
  index      this file
  viewer     the Viewer: state, navigation, history; the one stepper that owns the rest
  panes/     one module per pane (summary, caption, source, bytecode, stack, graph,
             guards, details); controls, predict (predict mode), provenance (links),
             help (the words' tooltips, the graph break's registry entry, the live region)
  recording  decoding and the per-compile queries; bytecode (listings); dom (elements)
*/

// The `data` bytes of a widget -> the promise of its decoded recording and layouts. Keyed
// by the bytes, not the model: anywidget hands initialize and each view a proxy of its own.
const decoded = new WeakMap();

/** The decoded recording and layouts of a widget, decoded once for all its views. */
export function recordingOf(model) {
  const data = model.get("data");
  const known = data !== null && typeof data === "object" ? decoded.get(data) : undefined;
  if (known) return known;
  const graphs = model.get("graphs");
  const both = Promise.all([decode(data), graphs ? decode(graphs) : []])
    .then(([rec, layouts]) => {
      setAnswers(rec, model.get("answers"));   // explain's words, per compile
      return { rec, graphs: layouts };
    });
  if (data !== null && typeof data === "object") decoded.set(data, both);
  return both;
}

function initialize({ model }) {
  // Not awaited by the host: the first view shows "Loading" meanwhile. A failure is
  // reported by the views, which await the same promise.
  recordingOf(model).catch(() => {});
}

function render({ model, el }) {
  const viewer = new Viewer(model, el, recordingOf(model));
  el.dynamoLab = { model, viewer };
  return () => viewer.destroy();
}

export default { initialize, render };
