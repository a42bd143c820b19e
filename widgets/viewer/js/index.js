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

import { decode } from "./decode.js";
import { Viewer } from "./viewer.js";
import { setAnswers } from "./answers.js";

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
