// The controls: the compile selector, play / slider / previous / next, the timeline, the
// jumps, "go to step", and the keys (with the list of them that "keys" shows). They show
// where the viewer stands (`paint(view)`) and carry what they do as `data-action`; the
// Viewer listens on its root and turns a click, a key, a choice of compile, a move of the
// slider or a typed step into a step.

import { lastStep, nextGuard, nextNode, breakStep } from "./recording.js";
import { h } from "./dom.js";
import { stepSpoken } from "./help.js";
import { compileMenu } from "./compile-menu.js";
import { navigate, stepOut, stepOver } from "./navigation.js";
import { timeline } from "./timeline.js";

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
