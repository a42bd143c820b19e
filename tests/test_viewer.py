"""TraceViewer's Python side: what it sends once, the traits Python drives and reads, the layout.

What the panes show and where the buttons go is the front end's (tests/js/ under node,
tests/test_browser.py in JupyterLab); here: the state handed to any front end
(`viewer_state`), the synced traits as a lesson uses them, the graph layout graphviz
makes in the kernel, and the stylesheet's rules.
"""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from capture import Recording
from widgets import TraceViewer
from widgets.viewer import layout
from widgets.viewer import HERE, viewer_state
from viewer_data import expanded

CSS = (HERE / "viewer.css").read_text(encoding="utf-8")


# -- what the front end receives --------------------------------------------------------------

def test_the_state_holds_the_recording_once_as_gzip_compressed_engine_json(viewer_recording):
    state = viewer_state(viewer_recording)
    assert set(state) == {"data", "graphs", "titles", "comparisons", "answers", "help", "compile", "step", "predict",
                          "predictions"}
    text = gzip.decompress(state["data"]).decode("utf-8")
    assert text == viewer_recording.to_json(columns=True, separators=(",", ":"))
    assert expanded(json.loads(text)) == json.loads(viewer_recording.to_json())
    assert state["data"] == viewer_state(viewer_recording)["data"], "the same bytes every time"
    assert len(state["data"]) < len(viewer_recording.to_json()) / 3


def test_the_state_names_every_compile_with_its_title_and_lays_out_each_graph(viewer_recording):
    state = viewer_state(viewer_recording)
    assert state["titles"] == [c.title() for c in viewer_recording.compiles]
    first, second, resume, tagged = state["titles"]
    line = viewer_recording.compiles[0].graph_break.lineno
    assert first == f"[0/0] _broken — graph break at line {line}, restarted"
    assert second.startswith("[0/0_1] _broken")
    assert re.fullmatch(r"\[1/0\] torch_dynamo_resume_in__broken_at_\d+", resume)
    assert tagged == "[2/0] _tagged"
    layouts = json.loads(gzip.decompress(state["graphs"]))
    assert [len(g["nodes"]) for g in layouts] == [len(c.nodes) for c in viewer_recording.compiles]


def test_the_state_opens_at_a_compile_by_index_or_id_and_a_step_within_it(viewer_recording):
    state = viewer_state(viewer_recording, "1/0", 3)
    assert (state["compile"], state["step"]) == (2, 3)
    assert viewer_state(viewer_recording, 3, 10_000)["step"] == len(viewer_recording.compiles[3].steps) - 1
    with pytest.raises(KeyError, match="it has: 0/0, 0/0_1, 1/0, 2/0"):
        viewer_state(viewer_recording, "7/0")
    with pytest.raises(IndexError, match="4 compile"):
        viewer_state(viewer_recording, 9)


def test_a_recording_with_no_compiles_still_makes_a_state_and_a_viewer():
    state = viewer_state(Recording())
    assert state["titles"] == [] and state["step"] == 0
    v = TraceViewer(Recording())
    assert repr(v) == "TraceViewer(0 compile(s); 0 steps)" and v.current is None


# -- the traits Python drives and reads ---------------------------------------------------------

def test_step_and_compile_are_synced_traits_and_compile_takes_an_id(viewer_recording):
    v = TraceViewer(viewer_recording, compile="1/0", step=3)
    synced = set(v.keys)
    assert {"data", "graphs", "titles", "compile", "step", "predict", "predictions"} <= synced
    assert (v.compile, v.step) == (2, 3) and v.current.compile_id == "1/0"
    v.compile = "2/0"
    assert v.compile == 3 and v.step == 0, "another compile opens at its first step"
    v.step = 4
    assert v.step == 4
    v.step = 10_000
    assert v.step == len(viewer_recording.compiles[3].steps) - 1   # clamped, never an error
    v.step = -3
    assert v.step == 0


def test_the_front_end_sends_a_compile_and_a_step_together_and_both_hold(viewer_recording):
    # A jump to a guard of another compile: the browser sends both in one message.
    v = TraceViewer(viewer_recording)
    v.set_state({"compile": 1, "step": 7})
    assert (v.compile, v.step) == (1, 7)
    v.set_state({"step": 2})
    assert (v.compile, v.step) == (1, 2)


def test_show_opens_at_a_compile_and_a_step(viewer_recording):
    v = TraceViewer(viewer_recording)
    assert v.show("1/0", 3) is v
    assert (v.current.compile_id, v.step) == ("1/0", 3)
    v.show(step=5)
    assert (v.compile, v.step) == (2, 5)
    with pytest.raises(KeyError, match="it has: 0/0, 0/0_1, 1/0, 2/0"):
        v.show("7/0")


def test_predictions_are_a_list_of_dicts_python_can_read_and_reset(viewer_recording):
    v = TraceViewer(viewer_recording)
    assert v.predictions == [] and v.predict is False
    answer = {"compile": "0/0", "step": 1, "instruction": "LOAD_GLOBAL NULL + torch",
              "answer": {"pushes": "LazyVariableTracker", "does": []},
              "truth": {"pushes": "LazyVariableTracker", "does": []}, "correct": True}
    v.set_state({"predictions": [answer], "predict": True})
    assert v.predictions == [answer] and v.predict
    v.predictions = []
    assert v.get_state("predictions") == {"predictions": []}


def test_the_text_repr_is_stable_and_names_every_compile(viewer_recording):
    v = TraceViewer(viewer_recording)
    expected = ("TraceViewer(4 compile(s): "
                + "; ".join(c.title() for c in viewer_recording.compiles)
                + f"; {viewer_recording.step_count} steps)")
    assert repr(v) == expected
    bundle = v._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    assert data["text/plain"] == expected  # not cut at 110 characters
    assert "application/vnd.jupyter.widget-view+json" in data
    v.step = 3
    assert repr(v) == expected
    assert repr(TraceViewer(viewer_recording)) == expected  # no ids, no addresses


def test_the_front_end_is_the_package_module_and_stylesheet(viewer_recording):
    v = TraceViewer(viewer_recording)
    assert v._esm == (HERE / "viewer.js").read_text(encoding="utf-8")
    assert v._css == CSS
    assert "export default { initialize, render }" in v._esm
    pyproject = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    assert '"*.js"' in pyproject and '"*.css"' in pyproject   # shipped as package data
    assert re.search(r'"anywidget[<>=.,\d]*"', pyproject)


def test_every_synced_value_can_be_sent_as_a_kernel_message(viewer_recording):
    from ipywidgets.widgets.widget import _remove_buffers
    from jupyter_client.session import json_packer

    state, paths, buffers = _remove_buffers(TraceViewer(viewer_recording).get_state())
    json_packer(state)
    assert sorted(paths) == [["comparisons"], ["data"], ["graphs"]] and all(len(b) for b in buffers)


def test_importing_widgets_imports_neither_torch_nor_is_imported_by_capture():
    code = ("import sys, widgets, widgets.viewer.layout, widgets.viewer; "
            "print('torch' in sys.modules); "
            "[sys.modules.pop(m) for m in list(sys.modules) if m.split('.')[0] == 'widgets']; "
            "import capture, capture.recorder; print('widgets' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120).stdout.split()
    assert out == ["False", "False"]


# -- the graph's layout ---------------------------------------------------------------------------

def test_the_layout_places_every_node_the_compile_made_and_every_edge_between_them(viewer_recording):
    for c in viewer_recording.compiles:
        g = layout.layout(c)
        assert "error" not in g, "needs graphviz's dot (apt-get install graphviz)"
        assert sorted(n["node"] for n in g["nodes"]) == list(range(len(c.nodes)))
        for n in g["nodes"]:
            node = c.nodes[n["node"]]
            assert n["lines"] == layout.label_lines(node)
            assert len(n["text"]) == len(n["lines"])
            for x, y in n["text"]:
                assert 0 <= x <= g["width"] and 0 <= y <= g["height"]
        expected = {(c.nodes.index(next(m for m in c.nodes if m.name == i)), k)
                    for k, n in enumerate(c.nodes) for i in n.inputs
                    if any(m.name == i for m in c.nodes)}
        assert {(e["tail"], e["head"]) for e in g["edges"]} == expected


def test_the_layout_is_numbers_and_paths_with_the_labels_as_plain_strings(viewer_recording):
    g = layout.layout(viewer_recording.compile("0/0_1"))
    for n in g["nodes"]:
        kind, *geometry = n["shape"]
        assert kind in ("ellipse", "path", "polygon")
        if kind != "ellipse":
            assert re.fullmatch(r"[MC0-9., -]+", geometry[0])
    for e in g["edges"]:
        assert re.fullmatch(r"M[C0-9., -]+", e["path"]) and re.fullmatch(r"[0-9., -]+", e["arrow"])


def test_a_node_renamed_by_a_store_gets_a_box_wide_enough_for_both_names(viewer_recording):
    c = viewer_recording.compile("0/0_1")
    renamed = next(n for n in c.nodes if n.created_name and n.created_name != n.name)
    assert (renamed.created_name, renamed.name) == ("sin", "y")
    assert f'"{renamed.created_name}\\n' in layout.dot_source(c)


def test_without_the_dot_program_the_layout_says_what_to_install(viewer_recording, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    g = layout.layout(viewer_recording.compile("2/0"))
    assert g == {"error": "the `dot` program is missing (Debian: apt-get install graphviz)"}
    state = viewer_state(viewer_recording)   # the viewer then lists the nodes as text
    assert all("error" in g for g in json.loads(gzip.decompress(state["graphs"])))


def test_dot_reads_quotes_and_backslashes_in_labels_as_themselves():
    from capture import Compile, Node

    odd = 'a"b\\"c\\'
    c = Compile(compile_id="0/0", code_name="f", filename="f.py", firstlineno=1,
                nodes=[Node(name="x", op="call_function", target=odd)])
    g = layout.layout(c)
    assert g["nodes"][0]["lines"] == ["x", odd]


# -- the stylesheet ---------------------------------------------------------------------------------

def _rules(css: str) -> list[tuple[str, str]]:
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    return re.findall(r"([^{}]+)\{([^{}]*)\}", css)


def test_every_rule_is_scoped_to_the_viewer_and_every_class_is_prefixed():
    for selector, _ in _rules(CSS):
        for part in selector.split(","):
            assert part.strip().startswith(".dl-viewer"), part
        for cls in re.findall(r"\.([-\w]+)", selector):
            assert cls.startswith("dl-") or cls in ("node", "edge"), cls   # graphviz's own


def test_colours_are_jupyterlab_theme_variables_each_with_a_fallback():
    for _, body in _rules(CSS):
        for prop, value in re.findall(r"(?<![-\w])(color|background|fill|stroke|border[-\w]*|outline|accent-color)\s*:\s*([^;]+);", body):
            value = value.strip()
            if re.search(r"-(radius|width|style|offset)$", prop):
                continue
            if value in ("none", "transparent", "inherit") or re.fullmatch(r"[\d.]+px( solid| dotted| dashed)? transparent", value):
                continue
            uses = re.findall(r"var\((--[-\w]+)(,\s*[^()]+)?\)", value)
            assert uses, (prop, value)
            for name, fallback in uses:
                assert name.startswith("--jp-") and fallback, (prop, value)
            bare = re.sub(r"var\([^()]*\)|color-mix\(|in srgb|\d+%|[\d.]+px|solid|dotted|dashed|transparent|[,)]", "", value)
            assert not bare.strip(), (prop, value)


def test_long_lines_wrap_or_scroll_inside_their_pane():
    rules = dict((s.strip(), b) for s, b in _rules(CSS))
    assert "overflow: auto" in rules[".dl-viewer .dl-pane-body"]
    assert "overflow-wrap: anywhere" in rules[".dl-viewer .dl-list li"]
    grids = [b for s, b in _rules(CSS) if s.strip() == ".dl-viewer .dl-grid"]
    assert "repeat(2, minmax(0, 1fr))" in grids[0]  # two panes side by side ...
    assert "@container (max-width: 640px)" in CSS and "minmax(0, 1fr);" in grids[-1]  # ... or one
