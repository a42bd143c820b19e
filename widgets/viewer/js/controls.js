// The controls: the compile selector, play / slider / previous / next, the jumps, and the
// keys. They show where the viewer stands (`paint(view)`) and carry what they do as
// `data-action`; the Viewer listens on its root and turns a click, a key, a choice of
// compile or a move of the slider into a step.

import { compileTitle, lastStep, nextGuard, nextNode, breakStep, stepLabel } from "./recording.js";
import { h } from "./dom.js";
import { stepSpoken } from "./help.js";

/** Key -> action (a letter in either case). */
export const KEYS = {
  ArrowRight: "forward", ArrowLeft: "back", Home: "first", End: "last",
  l: "line", n: "node", g: "guard", b: "break", Backspace: "return", p: "predict", " ": "play",
  "+": "zoom-in", "=": "zoom-in", "-": "zoom-out", "0": "zoom-reset",
};

/** Shift+arrow pans the graph (a plain arrow steps). */
const PAN_KEYS = { ArrowLeft: "pan-left", ArrowRight: "pan-right", ArrowUp: "pan-up", ArrowDown: "pan-down" };

/** What a key press on the viewer asks for: an action, {chip: n} (the n-th choice of the
 * question, keys 1-9), or null. A key the viewer uses is kept from JupyterLab (an arrow
 * would move its active cell); in the selector and the slider they are the element's. */
export function keyPress(e, asking) {
  if (e.ctrlKey || e.metaKey || e.altKey) return null;
  const tag = e.target && e.target.tagName;
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

/** The action of a key, or null; in predict mode Enter reveals, S skips, 1-9 choose. */
export function keyAction(e, asking) {
  if (asking) {
    if (e.key === "Enter") return "reveal";
    if (e.key === "s" || e.key === "S") return "skip";
    if (/^[1-9]$/.test(e.key)) return { chip: Number(e.key) };
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
  ["return", "return", "return to where you were before the last jump (Backspace)", "dl-return"],
  ["predict", "predict", "predict mode: before each step forward, say what the instruction will do (P)", "dl-predict-toggle"],
  ["fit", "fit graph", "show the whole FX graph in its pane; off, the graph follows each new node (+ − 0 zoom, Shift+arrows pan)", "dl-fit-graph"],
];

function pressed(button, on) {   // a toggle's state, written only when it changes
  if (button.getAttribute("aria-pressed") !== String(on)) button.setAttribute("aria-pressed", String(on));
}

/** The controls of a recording: `bar` (the compile selector), `steps` and `jumps` (the two
 * rows of buttons), and `paint(view)` with view {c, i, returnable, playing, predicting, fit}. */
export function controls(rec, titles) {
  const buttons = {};
  for (const [action, label, title, cls] of BUTTONS) {
    buttons[action] = h("button", { class: `dl-button ${cls}`, title, type: "button", "data-action": action }, label);
  }
  buttons.predict.setAttribute("aria-pressed", "false");
  buttons.fit.setAttribute("aria-pressed", "false");
  const selector = h("select", { class: "dl-compile", title: "the compile shown" },
    rec.compiles.map((c, k) => h("option", { value: k }, compileTitle(titles, c, k))));
  const slider = h("input", { class: "dl-slider", type: "range", min: 0, max: 0, value: 0, title: "step", "aria-label": "step" });
  const position = h("span", { class: "dl-position dl-stepno" });
  const b = buttons;
  const bar = h("div", { class: "dl-bar" }, selector);
  const speed = h("select", { class: "dl-speed", title: "how fast play steps" },
    [1, 2, 4, 8, 16].map((x) => h("option", { value: x }, `${x}×`)));
  const steps = h("div", { class: "dl-controls" }, b.first, b.back, b.play, speed, b.forward, b.last, slider, position);
  const jumps = h("div", { class: "dl-jumps" }, b.line, b.node, b.guard, b.break, b.return, b.predict, b.fit);

  function selectCompile(c, k) {
    selector.value = String(k);
    slider.max = String(lastStep(c));
    slider.disabled = !c.steps.length;
  }

  function paint(view) {
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
    position.textContent = stepLabel(c, i);
    const atEnd = i >= lastStep(c);
    b.first.disabled = b.back.disabled = i <= 0;
    b.forward.disabled = b.last.disabled = b.line.disabled = atEnd;
    b.play.disabled = !c.steps.length;
    b.node.disabled = nextNode(c, i) == null;
    b.guard.disabled = nextGuard(c, i) == null;
    b.break.disabled = breakStep(c) == null;
    b.return.disabled = !view.returnable;
  }

  /** Nothing to control: a recording with no compiles. */
  function disable() {
    for (const el of [...Object.values(buttons), selector, slider, speed]) el.disabled = true;
    position.textContent = stepLabel(null, 0);
  }

  return { bar, steps, jumps, buttons, selector, slider, speed, selectCompile, paint, disable };
}
