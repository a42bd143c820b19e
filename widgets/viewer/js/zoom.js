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

import { h } from "./dom.js";

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
