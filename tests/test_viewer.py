"""TraceViewer as widget objects: what each control does and what each pane shows after it."""

from __future__ import annotations

import re

import ipywidgets as W
import pytest

from capture import Compile, Recording, Step
from widgets import TraceViewer
from widgets.viewer import break_step, next_line


def titles(viewer: TraceViewer) -> list[str]:
    return [label for label, _ in viewer.selector.options]


def sin_step(c) -> int:
    return next(n.step for n in c.nodes if n.target == "torch.sin")


def test_the_selector_lists_every_compile_with_its_id_name_and_outcome(viewer_recording):
    v = TraceViewer(viewer_recording)
    assert titles(v) == [c.title() for c in viewer_recording.compiles]
    first, second, resume, tagged = titles(v)
    line = viewer_recording.compiles[0].graph_break.lineno
    assert first == f"[0/0] _broken — graph break at line {line}, restarted"
    assert second.startswith("[0/0_1] _broken")
    assert re.fullmatch(r"\[1/0\] torch_dynamo_resume_in__broken_at_\d+", resume)
    assert tagged == "[2/0] _tagged"


def test_the_position_reads_step_i_of_n_at_every_step(viewer_recording):
    v = TraceViewer(viewer_recording)
    for k, c in enumerate(viewer_recording.compiles):
        v.compile_index = k
        for i in (0, len(c.steps) // 2, len(c.steps) - 1):
            v.step = i
            assert f"step {i} / {len(c.steps) - 1}" in v.position.value
            assert f"step {i} / {len(c.steps) - 1}" in v.caption.value


def test_stepping_onto_the_call_of_torch_sin_updates_graph_stack_and_caption(viewer_recording):
    v = TraceViewer(viewer_recording, compile="0/0_1")
    c = v.compile
    i = sin_step(c)
    name = next(n.name for n in c.nodes if n.target == "torch.sin")
    v.step = i - 1
    graph, stack, caption = v.graph.value, v.stack.value, v.caption.value
    assert f"<code>{name}</code>" not in graph
    v.forward.click()
    assert v.step == i
    assert v.graph.value != graph
    assert f"<code>{name}</code>" in v.graph.value.split("new:")[1]
    assert v.stack.value != stack
    assert re.search(r'<li class="dl-new"><span class="dl-kind">TensorVariable</span>',
                     v.stack.value)
    assert "CALL" in v.caption.value and v.caption.value != caption
    assert "y = torch.sin(x)" in v.source.value


def test_the_drawing_is_set_once_per_compile_and_only_the_style_changes_per_step(
        viewer_recording):
    v = TraceViewer(viewer_recording, compile="0/0_1")
    drawing = v.drawing.value
    assert "<svg" in drawing
    changes = []
    v.drawing.observe(changes.append, "value")
    for i in range(len(v.compile.steps)):
        v.step = i
    assert changes == []
    v.compile_index = 2
    assert len(changes) == 1 and v.drawing.value != drawing


def test_a_pane_is_written_only_when_its_content_changes(viewer_recording):
    v = TraceViewer(viewer_recording, compile="0/0_1")
    c = v.compile
    # Steps on one line, in one frame: the source pane has nothing new to say.
    same_line = [s.index for s in c.steps if s.lineno == c.steps[1].lineno and s.depth == 0]
    v.step = same_line[0]
    writes = []
    v.source.observe(writes.append, "value")
    for i in same_line[1:]:
        v.step = i
    assert writes == []
    v.step = same_line[-1] + 1
    assert len(writes) == 1


def test_first_back_forward_last_buttons(viewer_recording):
    v = TraceViewer(viewer_recording, compile="0/0_1")
    last = len(v.compile.steps) - 1
    assert v.first.disabled and v.back.disabled and not v.forward.disabled
    v.forward.click()
    v.forward.click()
    assert v.step == 2
    v.back.click()
    assert v.step == 1
    v.last.click()
    assert v.step == last and v.forward.disabled and v.last.disabled
    v.first.click()
    assert v.step == 0
    v.step = 10_000
    assert v.step == last  # clamped, never an error


def test_jumps_go_to_the_next_line_node_guard_and_the_graph_break(viewer_recording):
    v = TraceViewer(viewer_recording, compile="0/0_1")
    c = v.compile
    v.to_node.click()
    assert v.step == min(s.index for s in c.steps if s.nodes_added)
    v.step = 0
    v.to_guard.click()
    assert v.step == min(s.index for s in c.steps if s.guards_added)
    v.step = 0
    v.to_line.click()
    assert c.steps[v.step].lineno != c.steps[0].lineno
    assert all(c.steps[j].lineno == c.steps[0].lineno for j in range(v.step))
    v.step = 0
    v.to_break.click()
    assert v.step == c.graph_break.step
    assert "Graph break here" in v.caption.value


def test_next_line_steps_over_an_inlined_call():
    # line 1 calls a function (depth 1, lines 5-6), finishes line 1, then runs line 2
    shape = [(1, 0), (1, 0), (5, 1), (6, 1), (1, 0), (2, 0), (2, 0)]
    steps = [Step.of(index=k, offset=2 * k, opname="NOP", argrepr="", lineno=line, depth=depth,
                  code=depth, stack=[], locals={}, graph_size=0, code_name="f")
             for k, (line, depth) in enumerate(shape)]
    c = Compile(compile_id="0/0", code_name="f", filename="f.py", firstlineno=1, steps=steps)
    assert next_line(c, 0) == 5
    assert next_line(c, 2) == 3      # inside the callee: its own next line
    assert next_line(c, 3) == 4      # leaving the callee: back in the caller
    assert next_line(c, 5) is None   # no line after the last one


def test_next_line_on_the_last_line_goes_to_the_last_step(viewer_recording):
    v = TraceViewer(viewer_recording, compile="1/0")
    v.step = len(v.compile.steps) - 3
    v.to_line.click()
    assert v.step == len(v.compile.steps) - 1


def test_buttons_that_have_nowhere_to_go_are_disabled(viewer_recording):
    v = TraceViewer(viewer_recording, compile="2/0")
    assert break_step(v.compile) is None and v.to_break.disabled
    v.last.click()
    assert v.to_node.disabled and v.to_guard.disabled and v.to_line.disabled


def test_choosing_another_compile_starts_it_at_step_0(viewer_recording):
    v = TraceViewer(viewer_recording)
    v.step = 5
    v.selector.value = 2
    c = viewer_recording.compiles[2]
    assert v.compile is c and v.step == 0
    assert v.slider.max == len(c.steps) - 1 == v.play.max
    assert c.title() in v.summary.value
    assert "torch_dynamo_resume_in__broken" in v.source.value


def test_opening_at_a_compile_and_a_step(viewer_recording):
    v = TraceViewer(viewer_recording, compile="1/0", step=3)
    assert v.compile.compile_id == "1/0" and v.step == 3 and v.slider.value == 3
    v.show("0/0", 4)
    assert v.compile.compile_id == "0/0" and v.step == 4
    with pytest.raises(KeyError, match="it has: 0/0, 0/0_1, 1/0, 2/0"):
        v.show("7/0")


def test_rewritten_bytecode_and_resume_functions_sit_beside_the_original(viewer_recording):
    v = TraceViewer(viewer_recording, compile="0/0_1")
    compare = v.details.children[0]
    assert compare.children == (v.original, v.rewritten)
    assert "LOAD_GLOBAL" in v.original.value
    assert "__compiled_fn_" in v.rewritten.value
    assert "torch_dynamo_resume_in__broken" in v.rewritten.value
    assert "RootGuardManager" in v.guard_tree.value
    v.compile_index = 0  # the abandoned attempt has none
    assert "abandoned" in v.rewritten.value


def test_play_drives_the_slider_in_the_browser_and_the_slider_drives_the_step(viewer_recording):
    v = TraceViewer(viewer_recording)
    assert v.play_link.source == (v.play, "value")
    assert v.play_link.target == (v.slider, "value")
    v.slider.value = 3
    assert v.step == 3 and "step 3 /" in v.position.value


def test_the_panes_sit_in_a_two_column_grid_that_cannot_overflow(viewer_recording):
    v = TraceViewer(viewer_recording)
    grids = [w for w in v.children if isinstance(w, W.GridBox)]
    assert grids and grids[0].layout.grid_template_columns == "repeat(2, minmax(0, 1fr))"
    assert "dl-viewer" in v._dom_classes
    assert "--jp-" in v.css.value


def test_the_text_repr_is_stable_and_names_every_compile(viewer_recording):
    v = TraceViewer(viewer_recording)
    expected = ("TraceViewer(4 compile(s): "
                + "; ".join(c.title() for c in viewer_recording.compiles)
                + f"; {viewer_recording.steps} steps)")
    assert repr(v) == expected
    assert v._repr_mimebundle_()["text/plain"] == expected  # not cut at 110 characters
    v.step = 3
    assert repr(v) == expected
    assert repr(TraceViewer(viewer_recording)) == expected  # no ids, no addresses


def test_a_recording_read_back_from_json_shows_the_same_panes(viewer_recording):
    again = Recording.from_json(viewer_recording.to_json())
    a, b = TraceViewer(viewer_recording, compile="1/0"), TraceViewer(again, compile="1/0")
    for i in range(len(a.compile.steps)):
        a.step = b.step = i
        for pane in ("source", "bytecode", "stack", "guards", "caption"):
            assert getattr(a, pane).value == getattr(b, pane).value, (pane, i)


def test_an_empty_recording_says_nothing_was_compiled():
    v = TraceViewer(Recording())
    assert "Nothing was compiled" in v.summary.value
    assert v.forward.disabled and v.selector.disabled
    assert repr(v) == "TraceViewer(0 compile(s); 0 steps)"


def test_an_exception_that_ended_the_recording_is_shown_in_the_header(viewer_recording):
    r = Recording.from_json(viewer_recording.to_json())
    r.ended_by = "ZeroDivisionError: division by zero"
    v = TraceViewer(r)
    assert "ZeroDivisionError: division by zero" in v.header.value
    assert "dl-error" in v.header.value


def test_importing_widgets_imports_neither_torch_nor_is_imported_by_capture():
    import subprocess
    import sys

    code = ("import sys, widgets, widgets.panes, widgets.graphview, widgets.viewer; "
            "print('torch' in sys.modules); "
            "[sys.modules.pop(m) for m in list(sys.modules) if m.split('.')[0] == 'widgets']; "
            "import capture, capture.recorder; print('widgets' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "False"]


def test_fit_graph_toggles_a_class_without_sending_the_drawing_again(viewer_recording):
    v = TraceViewer(viewer_recording, compile="0/0_1")
    sent = []
    v.drawing.observe(sent.append, "value")
    v.fit.value = True
    assert "dl-fit" in v.drawing._dom_classes
    v.fit.value = False
    assert "dl-fit" not in v.drawing._dom_classes and sent == []
