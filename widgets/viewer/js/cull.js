// Culling a big drawing (panes/graph.js makes it; zoom.js says where the camera looks):
// only the nodes near the part of the drawing the pane shows, and their edges, are in the
// page, at most MAX_DRAWN of them, so a 20,000-node graph costs a step and a pan what a
// small one does. The rest are made when first needed and kept out of the page.

import { nameAt } from "./recording.js";

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
