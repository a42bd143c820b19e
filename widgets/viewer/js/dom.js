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
