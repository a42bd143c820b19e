// Guards as a person reads them: the value a guard is about (its group), its check with
// object ids named as what they identify, module paths as a program writes them, one kind
// name for it everywhere (the kind Dynamo installed), and whether it matches a filter.
// Pure functions of the recording (no DOM): the guards pane, search and the linked panes
// read guards through them.

import { memo } from "./recording.js";

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
