"""Hostile text through every view: nothing a program contains becomes markup or breaks the page.

The recordings come from real programs (`hostile.py`): string constants, docstrings,
dict keys, `setattr` attribute names, file names, exception messages and code, file
and local names full of HTML, quotes, lone surrogates, NUL, a right-to-left override
and 100 000-character lines. Every pane, the whole viewer, the text view and the
JSON export are read back the way a browser or a terminal would read them.
"""

from __future__ import annotations

import json
import warnings

import pytest

import capture
from hostile import LONG, TEXT, UNSAFE, markup_of, problems, recordings

widgets = pytest.importorskip("widgets")
from widgets import TraceViewer, exercises, graphview, panes  # noqa: E402

PANE_KB_LIMIT = 200  # one pane for one step, in kilobytes of HTML
BIDI_CONTROLS = {chr(c) for c in [*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F]}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    return recordings(tmp_path_factory.mktemp("hostile"))


def per_step_panes(c, i, ix, layout):
    return {
        "caption_html": panes.caption_html(c, i),
        "source_html": panes.source_html(c, i, ix),
        "bytecode_html": panes.bytecode_html(c, i, ix),
        "stack_html": panes.stack_html(c, i, ix),
        "guards_html": panes.guards_html(c, i, ix),
        "graphview.pane_html": graphview.pane_html(layout, i, c, "dl-gT"),
        "step_label": panes.step_label(c, i),
    }


def per_compile_panes(c, ix, layout):
    return {
        "compile_html": panes.compile_html(c),
        "original_bytecode_html": panes.original_bytecode_html(c, ix),
        "rewritten_bytecode_html": panes.rewritten_bytecode_html(c),
        "guard_tree_html": panes.guard_tree_html(c),
        "graphview.svg_html": graphview.svg_html(layout, "dl-gT"),
    }


def every_pane(recording):
    """(where, pane name, html) for every pane function, every compile, every step."""
    yield "recording", "recording_html", panes.recording_html(recording)
    for c in recording.compiles:
        ix = panes.CompileIndex(c)
        layout = graphview.layout(c)
        for name, html in per_compile_panes(c, ix, layout).items():
            yield c.compile_id, name, html
        for i in range(max(len(c.steps), 1)):
            for name, html in per_step_panes(c, i, ix, layout).items():
                yield f"{c.compile_id} step {i}", name, html


def widget_tree(widget):
    yield widget
    for child in getattr(widget, "children", ()) or ():
        yield from widget_tree(child)


def viewer_html(recording):
    """Every HTML value the viewer puts on the page, for every compile and every step."""
    viewer = TraceViewer(recording)
    for k, c in enumerate(recording.compiles):
        viewer.compile_index = k
        for i in range(max(len(c.steps), 1)):
            viewer.step = i
            for w in widget_tree(viewer):
                value = getattr(w, "value", None)
                if type(w).__name__ == "HTML" and isinstance(value, str):
                    yield f"{c.compile_id} step {i}", value


SAFE_KINDS = ["file program", "exception message", "code names", "unsafe characters"]


@pytest.mark.parametrize("kind", SAFE_KINDS)
def test_no_pane_turns_hostile_text_into_markup(hostile, kind):
    found = [f"{where} {name}: {p}" for where, name, html in every_pane(hostile[kind])
             for p in problems(html)]
    assert found == [], "\n".join(found[:20])


@pytest.mark.parametrize("kind", SAFE_KINDS)
def test_the_whole_viewer_turns_no_hostile_text_into_markup(hostile, kind):
    found = [f"{where}: {p}" for where, html in viewer_html(hostile[kind]) for p in problems(html)]
    assert found == [], "\n".join(found[:20])


def visible_text(recording):
    return "\n".join(markup_of(html)[2] for _, _, html in every_pane(recording))


def test_hostile_text_is_shown_to_the_learner_as_text_exactly(hostile):
    program = hostile["file program"]
    shown = visible_text(program)
    assert TEXT in shown  # the string constant, in the source pane, character for character
    assert f"d[{TEXT!r}]" in shown  # the dict-key guard
    # the raw HTML holds it escaped: &lt; for <, &amp;amp; for the literal "&amp;"
    raw = "".join(html for _, _, html in every_pane(program))
    assert "&lt;script&gt;" in raw and "&amp;amp;" in raw
    # the file name, in each compile's summary
    (first,) = [html for where, name, html in every_pane(program) if name == "compile_html"][:1]
    assert program.compiles[0].filename.rsplit("/", 1)[-1] in markup_of(first)[2]
    # the exception message that ended a recording, in its header
    failed = hostile["exception message"]
    assert failed.ended_by == f"ValueError: {TEXT}"[:len(failed.ended_by)]
    assert failed.ended_by in markup_of(panes.recording_html(failed))[2]
    # a code name, in the caption of every step
    named = hostile["code names"]
    c = named.compiles[0]
    assert all(TEXT in markup_of(panes.caption_html(c, i))[2] for i in range(len(c.steps)))


@pytest.mark.parametrize("kind", SAFE_KINDS[:3])
def test_the_text_view_and_json_keep_hostile_text_verbatim(hostile, kind):
    recording = hostile[kind]
    text = str(recording)
    assert TEXT in text  # plain text: nothing to escape, nothing lost
    exported = recording.to_json()
    again = capture.Recording.from_json(exported)
    assert again.to_json() == exported
    assert TEXT in str(again)


def test_a_recording_read_back_from_json_has_the_same_text_view(hostile):
    recording = hostile["code names"]
    assert str(capture.Recording.from_json(recording.to_json())) == str(recording)


def test_unsafe_characters_survive_the_json_export_exactly(hostile):
    recording = hostile["unsafe characters"]
    exported = recording.to_json()
    exported.encode("ascii")  # lone surrogates and NUL travel as \\u escapes
    json.loads(exported)
    again = capture.Recording.from_json(exported)
    c, c2 = recording.compiles[0], again.compiles[0]
    assert c2.code_name == c.code_name == f"f{UNSAFE}"
    assert c2.steps[0].locals.keys() == c.steps[0].locals.keys()
    assert any(UNSAFE in name for name in c2.steps[0].locals)
    assert again.to_json() == exported


def test_unsafe_characters_do_not_break_any_pane(hostile):
    recording = hostile["unsafe characters"]
    for where, name, html in every_pane(recording):
        assert problems(html) == [], (where, name)
    list(viewer_html(recording))


def test_the_text_view_of_unsafe_characters_can_be_printed(hostile):
    text = str(hostile["unsafe characters"])
    text.encode("utf-8")
    assert "\\ud800" in text or "\\udcff" in text  # visible, not silently dropped


def test_every_widget_of_the_viewer_can_be_sent_to_the_browser(hostile):
    from jupyter_client.session import json_packer

    viewer = TraceViewer(hostile["unsafe characters"])
    failed = []
    for w in widget_tree(viewer):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # json_packer's fallback only warns
                json_packer(w.get_state()).decode("utf-8")
        except (UnicodeError, ValueError, Warning) as e:
            failed.append(f"{type(w).__name__}: {type(e).__name__}: {str(e)[:80]}")
    assert failed == [], "\n".join(failed)


def test_bidirectional_controls_in_names_cannot_reorder_what_the_panes_show(hostile):
    recording = hostile["unsafe characters"]
    raw = [(where, name) for where, name, html in every_pane(recording)
           if BIDI_CONTROLS & set(html) and "<bdi" not in html and "isolate" not in html]
    assert raw == [], raw[:10]


# -- long lines --------------------------------------------------------------------------------

PER_STEP = ["caption_html", "source_html", "bytecode_html", "stack_html", "guards_html",
            "graphview.pane_html"]
PER_COMPILE = ["compile_html", "original_bytecode_html", "rewritten_bytecode_html",
               "guard_tree_html", "graphview.svg_html"]
LONG_LINE_BUGS: dict[str, str] = {}  # pane -> why it is still too big (none now)


def long_line_pane_params(names):
    return [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=LONG_LINE_BUGS[n]))
            if n in LONG_LINE_BUGS else n for n in names]


@pytest.mark.parametrize("pane", long_line_pane_params(PER_STEP))
def test_a_pane_stays_small_for_every_step_of_a_program_with_100k_character_lines(
        hostile, pane):
    recording = hostile["long lines"]
    c = recording.compiles[0]
    assert max(len(line) for line in c.source_lines) > LONG
    ix = panes.CompileIndex(c)
    layout = graphview.layout(c)
    sizes = [len(per_step_panes(c, i, ix, layout)[pane].encode("utf-8", "replace"))
             for i in range(len(c.steps))]
    assert max(sizes) < PANE_KB_LIMIT * 1000, f"largest {max(sizes)} bytes"


@pytest.mark.parametrize("pane", long_line_pane_params(PER_COMPILE))
def test_a_compile_pane_stays_small_for_a_program_with_100k_character_lines(hostile, pane):
    c = hostile["long lines"].compiles[0]
    html = per_compile_panes(c, panes.CompileIndex(c), graphview.layout(c))[pane]
    assert len(html.encode("utf-8", "replace")) < PANE_KB_LIMIT * 1000


def test_long_lines_are_kept_whole_in_the_text_view_and_json(hostile):
    recording = hostile["long lines"]
    long_source = max(recording.compiles[0].source_lines, key=len)
    assert long_source in str(recording)
    again = capture.Recording.from_json(recording.to_json())
    assert long_source in again.compiles[0].source_lines


def test_long_lines_make_no_markup_either(hostile):
    found = [f"{where} {name}: {p}" for where, name, html in every_pane(hostile["long lines"])
             for p in problems(html)]
    assert found == []


# -- exercises ---------------------------------------------------------------------------------

def test_exercises_over_a_hostile_recording_escape_what_they_show(hostile):
    recording = hostile["code names"]
    c = recording.compiles[0]
    step = next(s.index for s in c.steps if s.stack)
    ex = exercises.predict_stack(recording, step)
    html = ex._repr_html_()
    assert problems(html) == [] and TEXT in markup_of(html)[2]
    for answer in [TEXT, [TEXT], ["TensorVariable"] * len(c.steps[step].stack)]:
        result = ex.grade(answer)
        assert problems(result.html()) == []
    revealed = ex.grade([v.kind for v in c.steps[step].stack])
    assert revealed.ok and problems(revealed.html()) == []
