"""Hostile text through the Python side of every view: kept as text, bounded once, sent intact.

The recordings come from real programs (`hostile.py`): string constants, docstrings,
dict keys, `setattr` attribute names, file names, exception messages and code, file
and local names full of HTML, quotes, lone surrogates, NUL, a right-to-left override
and 100 000-character lines. The engine bounds and escapes that text once, when it
records (capture/text.py); here: the text view and the JSON keep it as that text, the
viewer sends it to the browser intact, and exercises escape what they show. That the
browser shows all of it as inert text, at every step, is tests/test_browser.py's
`test_every_hostile_program_shows_as_inert_text_at_every_step`.
"""

from __future__ import annotations

import gzip
import json
import warnings

import pytest

import capture
from capture.text import LINE_LIMIT
from hostile import LONG, TEXT, markup_of, problems, recordings

widgets = pytest.importorskip("widgets")
from widgets import TraceViewer  # noqa: E402
from widgets.course import exercises  # noqa: E402
from widgets.viewer import layout  # noqa: E402
from widgets.viewer import viewer_state  # noqa: E402

BIDI_CONTROLS = {chr(c) for c in [*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F]}
SENT_KB_LIMIT = 200   # what the viewer sends for a whole recording with 100 000-character lines


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    return recordings(tmp_path_factory.mktemp("hostile"))


def strings(value):
    """Every string inside a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


# -- the text view and the JSON ------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["file program", "exception message", "code names"])
def test_the_text_view_and_json_keep_hostile_text_verbatim(hostile, kind):
    recording = hostile[kind]
    assert TEXT in str(recording)   # plain text: nothing to escape, nothing lost
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
    exported.encode("ascii")   # whatever is left travels as \\u escapes
    assert recording.compiles[0].code_name == "f\\udcff\\ud800\\x00\\u202e"   # shown, not obeyed
    assert capture.Recording.from_json(exported).to_json() == exported


def test_no_string_of_the_recording_holds_a_raw_unsafe_character(hostile):
    exported = json.loads(hostile["unsafe characters"].to_json())
    found = [s for s in strings(exported)
             if BIDI_CONTROLS & set(s) or any(0xD800 <= ord(ch) <= 0xDFFF or ord(ch) < 0x09 for ch in s)]
    assert found == [], found[:5]


def test_the_text_view_of_unsafe_characters_can_be_printed(hostile):
    text = str(hostile["unsafe characters"])
    text.encode("utf-8")
    assert "\\ud800" in text and "\\u202e" in text   # visible, not silently dropped
    assert not BIDI_CONTROLS & set(text)


def test_long_lines_are_cut_once_with_the_cut_marked_in_the_text_view_and_json_alike(hostile):
    recording = hostile["long lines"]
    c = recording.compiles[0]
    longest = max(c.source_lines, key=len)
    assert LONG > len(longest) > LINE_LIMIT, "cut, with a marker after the limit"
    assert "more characters" in longest
    assert longest in str(recording)
    assert longest in capture.Recording.from_json(recording.to_json()).compiles[0].source_lines


# -- what the viewer sends -------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["file program", "exception message", "code names",
                                  "unsafe characters", "long lines"])
def test_the_viewer_sends_each_hostile_recording_intact_and_sendable(hostile, kind):
    from ipywidgets.widgets.widget import _remove_buffers
    from jupyter_client.session import json_packer

    recording = hostile[kind]
    state = viewer_state(recording)
    again = capture.Recording.from_json(gzip.decompress(state["data"]).decode("utf-8"))
    assert again.to_json() == recording.to_json()
    sent, _, buffers = _remove_buffers(TraceViewer(recording).get_state())
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # json_packer's fallback for unencodable text only warns
        json_packer(sent).decode("utf-8")
    assert sum(len(b) for b in buffers) < SENT_KB_LIMIT * 1000


def test_graph_labels_of_hostile_programs_are_plain_strings_beside_the_geometry(hostile):
    for recording in hostile.values():
        for c in recording.compiles:
            drawn = layout.layout(c)
            for n in drawn.get("nodes", []):
                assert n["lines"] == layout.label_lines(c.nodes[n["node"]])
            geometry = json.dumps([[n["shape"], n["text"]] for n in drawn.get("nodes", [])]
                                  + [[e["path"], e["arrow"]] for e in drawn.get("edges", [])])
            assert "<" not in geometry and "&" not in geometry


def test_the_titles_the_selector_shows_are_the_engines_and_carry_no_raw_controls(hostile):
    for recording in hostile.values():
        titles = viewer_state(recording)["titles"]
        assert titles == [c.title() for c in recording.compiles]
        assert not any(BIDI_CONTROLS & set(t) for t in titles)
    assert any(TEXT in t for t in viewer_state(hostile["code names"])["titles"])


# -- exercises -------------------------------------------------------------------------------------

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

