"""The panes are pure functions of (compile, step): checked here without a kernel or a widget."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from capture import CodeInfo, Compile, Guard, Instr, Node, Recording, Step, Var
from widgets import graphview, panes


class _Elements(HTMLParser):
    """Every element with its tag, classes and text (text of nested elements included)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[dict] = []
        self._open: list[dict] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        el = {"tag": tag, "classes": set((attrs.get("class") or "").split()), "text": "",
              "attrs": attrs}
        self.found.append(el)
        if tag not in ("br", "img", "input", "meta", "link", "path", "polygon", "ellipse"):
            self._open.append(el)

    def handle_endtag(self, tag):
        for k in range(len(self._open) - 1, -1, -1):
            if self._open[k]["tag"] == tag:
                del self._open[k:]
                break

    def handle_data(self, data):
        for el in self._open:
            el["text"] += data


def elements(html: str) -> list[dict]:
    p = _Elements()
    p.feed(html)
    p.close()
    return p.found


def with_class(html: str, cls: str) -> list[str]:
    return [el["text"] for el in elements(html) if cls in el["classes"]]


def text_of(html: str) -> str:
    return "".join(el["text"] for el in elements(html) if el["tag"] == "div")


def sin_step(c: Compile) -> int:
    """The step whose CALL made the torch.sin node: read from the recording's own nodes."""
    node = next(n for n in c.nodes if n.target == "torch.sin")
    assert c.steps[node.step].opname == "CALL"
    return node.step


# -- source, bytecode, stack -------------------------------------------------------------

def test_source_pane_marks_the_line_being_traced(viewer_recording):
    c = viewer_recording.compile("0/0_1")
    i = sin_step(c)
    current = with_class(panes.source_html(c, i), "dl-current")
    assert len(current) == 1
    assert "y = torch.sin(x)" in current[0]
    assert str(c.steps[i].lineno) in current[0]
    later = with_class(panes.source_html(c, i + 2), "dl-current")
    assert 'print("a graph break")' in later[0]


def test_source_pane_marks_the_break_line_once_the_break_happened(viewer_recording):
    c = viewer_recording.compile("0/0")
    gb = c.graph_break
    before = panes.source_html(c, gb.step - 1)
    at = panes.source_html(c, gb.step)
    assert with_class(before, "dl-break") == []
    assert gb.line in with_class(at, "dl-break")[0]


def test_bytecode_pane_marks_the_instruction_at_the_step_offset(viewer_recording):
    c = viewer_recording.compile("0/0_1")
    for s in c.steps:
        current = with_class(panes.bytecode_html(c, s.index), "dl-current")
        assert len(current) == 1
        assert re.search(rf"\b{s.offset}\s+{s.opname}\b", current[0]), (s, current)


def test_stack_pane_shows_the_tensor_variable_pushed_by_the_call_of_torch_sin(viewer_recording):
    c = viewer_recording.compile("0/0_1")
    i = sin_step(c)
    top = c.steps[i].stack[-1]
    assert top.kind == "TensorVariable"
    html = panes.stack_html(c, i)
    items = [el for el in elements(html) if el["tag"] == "li"]
    assert items[0]["text"].startswith("TensorVariable")
    assert f"node={top.node}" in items[0]["text"]
    assert "dl-new" in items[0]["classes"]            # pushed by this very step
    assert "popped" in text_of(html) and "pushed 1" in text_of(html)
    before = panes.stack_html(c, i - 1)
    assert "TensorVariable" not in "".join(el["text"] for el in elements(before)
                                           if el["tag"] == "ol")


def test_stack_pane_marks_a_local_when_a_store_changes_it(viewer_recording):
    c = viewer_recording.compile("0/0_1")
    store = next(s for s in c.steps if s.opname == "STORE_FAST" and s.argrepr == "y")
    marked = with_class(panes.stack_html(c, store.index), "dl-new")
    assert any(text.startswith("y = TensorVariable") for text in marked)
    unchanged = with_class(panes.stack_html(c, store.index + 1), "dl-new")
    assert not any(text.startswith("y =") for text in unchanged)


def test_inside_an_inlined_call_panes_show_the_callee_and_the_chain_of_callers(viewer_recording):
    c = viewer_recording.compile("1/0")
    s = next(s for s in c.steps if s.code_name == "_helper" and s.opname == "BINARY_OP")
    caller, line = s.inline_stack[-1]
    source = panes.source_html(c, s.index)
    assert "return a * 2" in with_class(source, "dl-current")[0]
    crumbs = with_class(source, "dl-crumbs")[0]
    assert caller in crumbs and f"line {line}" in crumbs and "_helper" in crumbs
    bytecode = panes.bytecode_html(c, s.index)
    assert "_helper" in with_class(bytecode, "dl-crumbs")[0]
    assert "BINARY_OP" in with_class(bytecode, "dl-current")[0]


# -- guards -------------------------------------------------------------------------------

def test_guards_pane_shows_each_guard_from_its_step_on_with_the_line_that_installed_it(
        viewer_recording):
    c = viewer_recording.compile("0/0_1")
    k = next(k for k, g in enumerate(c.guard_details) if g.kind == "TENSOR_MATCH")
    g = c.guard_details[k]
    before = panes.guards_html(c, g.step - 1)
    at = panes.guards_html(c, g.step)
    after = panes.guards_html(c, g.step + 1)
    assert "TENSOR_MATCH" not in text_of(before)
    new = with_class(at, "dl-new")
    assert any("TENSOR_MATCH" in t and g.line in t for t in new)
    assert "TENSOR_MATCH" in text_of(after)
    assert not any("TENSOR_MATCH" in t for t in with_class(after, "dl-new"))


def test_guards_installed_after_tracing_appear_at_the_last_step(viewer_recording):
    c = viewer_recording.compile("0/0_1")
    late = [g for g in c.guard_details if not g.ambient and g.step is None]
    assert late, "Dynamo adds guards when it compiles the graph"
    assert late[0].text not in text_of(panes.guards_html(c, len(c.steps) - 2))
    assert late[0].text in text_of(panes.guards_html(c, len(c.steps) - 1))


def test_guards_pane_counts_old_guards_instead_of_listing_thousands():
    details = [Guard(text=f"TENSOR_MATCH: L['x{k}']", kind="TENSOR_MATCH", step=k, lineno=1,
                     line="x") for k in range(100)]
    c = _compile(steps=100, guard_details=details)
    html = panes.guards_html(c, 99)
    items = [el for el in elements(html) if el["tag"] == "li"]
    assert len(items) == panes.RECENT_GUARDS
    assert "60 earlier" in text_of(html)
    assert "L['x99']" in items[-1]["text"] and "dl-new" in items[-1]["classes"]


# -- escaping -------------------------------------------------------------------------------

def _all_panes(c: Compile, i: int) -> list[str]:
    g = graphview.layout(c)
    return [panes.caption_html(c, i), panes.source_html(c, i), panes.bytecode_html(c, i),
            panes.stack_html(c, i), panes.guards_html(c, i), panes.compile_html(c),
            panes.original_bytecode_html(c), panes.rewritten_bytecode_html(c),
            panes.guard_tree_html(c), graphview.pane_html(g, i, c, "dl-gT"),
            graphview.svg_html(g, "dl-gT")]


def test_a_string_constant_that_looks_like_html_is_shown_as_text(viewer_recording):
    c = viewer_recording.compile("2/0")
    seen = ""
    for s in c.steps:
        for html in _all_panes(c, s.index):
            tags = {el["tag"] for el in elements(html)}
            assert "script" not in tags, html
            seen += "".join(el["text"] for el in elements(html))
    assert "<script>alert(1)</script>" in seen  # the text itself, visible to the learner


def test_every_user_derived_field_is_escaped():
    evil = "<img src=x onerror=alert(1)>"
    v = Var(kind=evil, python_type=evil, source=evil, detail=evil)
    step = Step.of(index=0, offset=0, opname=evil, argrepr=evil, lineno=1, depth=1, code=0,
                stack=[v], locals={evil: v}, graph_size=1, nodes_added=[evil], guards_added=[0],
                inline_stack=((evil, 1),), code_name=evil)
    c = Compile(compile_id="0/0", code_name=evil, filename=evil, firstlineno=1,
                source_lines=[evil],
                codes=[CodeInfo(name=evil, filename=evil, firstlineno=1, source_lines=(evil,),
                                instructions=(Instr(0, evil, evil, 1),))],
                steps=[step], nodes=[Node(name=evil, op="call_function", target=evil, args=evil)],
                graph_code=evil, guards=[evil],
                guard_details=[Guard(text=evil, kind=evil, source=evil, step=0, lineno=1,
                                     line=evil, code_name=evil)],
                guard_tree=evil, modified_bytecode=f"{evil}\n{evil}", outcome=evil, error=evil,
                recompile_reasons=[evil])
    r = Recording(compiles=[c], ended_by=evil, torch_version=evil)
    for html in _all_panes(c, 0) + [panes.recording_html(r)]:
        assert "img" not in {el["tag"] for el in elements(html)}, html


# -- windows over long code -----------------------------------------------------------------

def test_long_bytecode_shows_a_window_around_the_current_instruction():
    c = _compile(steps=200)
    html = panes.bytecode_html(c, 150)
    rows = with_class(html, "dl-row")
    assert len(rows) == panes.BYTECODE_BEFORE + panes.BYTECODE_AFTER + 1
    assert "300 NOP" in with_class(html, "dl-current")[0]
    assert "142 instruction(s) above" in text_of(html)


# -- the graph -------------------------------------------------------------------------------

def hidden_nodes(g: graphview.GraphLayout, i: int) -> set[str]:
    """Names of the drawn nodes the step's <style> hides: read from the SVG and the CSS."""
    style = graphview.step_style(g, i, "dl-gT")
    hide_rule = next((r for r in style.split("\n") if "display: none" in r), "")
    hidden_classes = set(re.findall(r"\.dl-gT \.(r\d+)", hide_rule))
    out = set()
    for el in elements(g.svg):
        if el["tag"] == "g" and "node" in el["classes"] and el["classes"] & hidden_classes:
            k = int(el["text"].strip().split()[0][1:])  # the <title> is n<rank>
            out.add(g.names[k])
    return out


def test_graph_pane_gains_the_sin_node_at_the_call_of_torch_sin(viewer_recording):
    c = viewer_recording.compile("0/0_1")
    i = sin_step(c)
    name = next(n.name for n in c.nodes if n.target == "torch.sin")
    g = graphview.layout(c)
    assert g.svg is not None, "needs graphviz's dot (apt-get install graphviz)"
    assert name in hidden_nodes(g, i - 1)
    assert name not in hidden_nodes(g, i)
    assert name in with_class(graphview.caption_html(g, i, c), "dl-title")[0]
    assert f".node.r{g.rank_of(name)}" in graphview.step_style(g, i, "dl-gT")  # outlined as new


def test_graph_reveals_exactly_the_nodes_made_so_far_at_every_step(viewer_recording):
    for c in viewer_recording.compiles:
        g = graphview.layout(c)
        last = len(c.steps) - 1
        for s in c.steps:
            made = {n.name for n in c.nodes
                    if (n.step if n.step is not None else last) <= s.index}
            shown = set(g.names) - hidden_nodes(g, s.index)
            assert shown == made, (c.compile_id, s.index)


@pytest.mark.parametrize("total", [1, 7, 10, 11, 100, 347, 1000])
def test_rank_classes_hide_every_later_node_and_no_earlier_one(total):
    g = graphview.GraphLayout(svg=None, labels=("",) * total, names=("",) * total,
                              reveal=tuple(range(total)), digits=len(str(total - 1)), text="")
    classes = [set(graphview._rank_classes(k, g.digits).split()) for k in range(total)]
    for visible in range(total + 1):
        hidden = set(graphview.hidden_selectors(g, visible))
        assert len(hidden) <= 9 * g.digits + 1
        assert [bool(c & hidden) for c in classes] == [k >= visible for k in range(total)]


def test_without_the_dot_program_the_graph_pane_lists_the_nodes_as_text(
        viewer_recording, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    c = viewer_recording.compile("2/0")
    g = graphview.layout(c)
    assert g.svg is None and "graphviz" in g.error
    cos = next(n for n in c.nodes if n.target == "cos")
    before = graphview.pane_html(g, cos.step - 1, c, "dl-gT")
    at = graphview.pane_html(g, cos.step, c, "dl-gT")
    assert "cos" not in " ".join(with_class(before, "dl-pane-body"))
    assert any(t.startswith("cos = call_method[cos]") for t in with_class(at, "dl-new"))
    end = graphview.pane_html(g, len(c.steps) - 1, c, "dl-gT")
    assert "def forward" in text_of(end) or "def forward" in end  # the graph's code


# -- text and style ---------------------------------------------------------------------------

def test_step_text_reads_like_the_panes(viewer_recording):
    c = viewer_recording.compile("0/0_1")
    i = sin_step(c)
    text = panes.step_text(c, i)
    assert text.splitlines()[0].endswith(f"step {i} / {len(c.steps) - 1}")
    assert "line 17: y = torch.sin(x)" in text or f"line {c.steps[i].lineno}: y = torch.sin(x)" in text
    assert "stack (top first):\n    TensorVariable" in text


def test_colours_come_only_from_jupyterlab_theme_variables():
    css = (Path(panes.__file__).parent / "style.css").read_text()
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    assert not re.search(r"#[0-9a-fA-F]{3,8}\b|\brgba?\(|\bhsla?\(", css)
    for prop, value in re.findall(r"(?<![-\w])(color|background|fill|stroke|border[-\w]*)\s*:\s*([^;]+);", css):
        colours = [w for w in re.split(r"[\s,()]+", value) if w and not re.match(
            r"^(var|--jp-[-\w]+|\d[\w.%]*|solid|transparent|none|inherit|color-mix|in|srgb)$",
            w)]
        assert not colours, (prop, value)


def test_long_lines_wrap_or_scroll_inside_their_pane():
    css = (Path(panes.__file__).parent / "style.css").read_text()
    body = css[css.index(".dl-viewer .dl-pane-body"):]
    assert "overflow: auto" in body[:body.index("}")]
    lists = css[css.index(".dl-viewer .dl-list li {"):]
    assert "overflow-wrap: anywhere" in lists[:lists.index("}")]


# -- a synthetic compile, for sizes the small program does not reach ---------------------------

def _compile(steps: int, guard_details: list[Guard] | None = None) -> Compile:
    instrs = tuple(Instr(offset=2 * k, opname="NOP", lineno=1) for k in range(steps))
    code = CodeInfo(name="f", filename="f.py", firstlineno=1, source_lines=("pass",),
                    instructions=instrs)
    shared: dict[str, Var] = {}
    return Compile(
        compile_id="0/0", code_name="f", filename="f.py", firstlineno=1, codes=[code],
        steps=[Step.of(index=k, offset=2 * k, opname="NOP", argrepr="", lineno=1, depth=0, code=0,
                    stack=[], locals=shared, graph_size=0,
                    guards_added=[k] if guard_details else [], code_name="f")
               for k in range(steps)],
        guard_details=guard_details or [])
