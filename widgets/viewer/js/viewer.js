// The Viewer: the one stepper that owns the panes (Python Tutor's ExecutionVisualizer). It
// holds the state (the compile and step shown, the history of jumps, predict mode), builds
// a plain view of it per paint and hands it to the panes and the controls, none of which
// calls back: what the learner clicks says what it means in data-* attributes, which
// `follow` turns into a step (`data-action`, `data-answer`, the links of provenance.js).
// The model is read and written only here: `compile`, `step`, `predict`, `predictions`.

import { breakStep, lastStep, nextGuard, nextLine, nextNode } from "./recording.js";
import { h } from "./dom.js";
import { controls, keyPress } from "./controls.js";
import { linkTarget, linkedPanes } from "./provenance.js";
import { PredictMode } from "./predict.js";
import { compileSummary, recordingHeader } from "./panes/summary.js";
import { captionPane } from "./panes/caption.js";
import { sourcePane } from "./panes/source.js";
import { bytecodePane } from "./panes/bytecode.js";
import { stackPane } from "./panes/stack.js";
import { graphPane } from "./panes/graph.js";
import { guardsPane } from "./panes/guards.js";
import { bytecodeDetails, guardTreeDetails } from "./panes/details.js";
import { helpAids } from "./help.js";
import { CompareMode } from "./panes/compare.js";
import { searchBox } from "./search.js";
import { stagesPane } from "./panes/stages.js";
import { shapesPane } from "./panes/shapes.js";
import { shapeLink } from "./shapes.js";
import { ModelSync } from "./sync.js";
import { rovingPanes } from "./roving.js";

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
