"""The viewer's front end as sources: the joined module is fresh, the modules stay small and
import one way, the join refuses what it cannot join, and predict mode's words agree with
the words Python reads its answers back with.

    .venv/bin/python -m pytest tests/test_viewer_module.py
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from widgets.viewer import join, page

SOURCES = join.SOURCES
NODE = shutil.which("node")
MAX_LINES = 300

# Each module imports only modules of a lower layer; the bottom layer's modules may import
# each other (without a circle: the join refuses one).
LAYERS = {
    "index.js": 4,
    "viewer.js": 3,
    "controls.js": 2, "predict.js": 2, "provenance.js": 2,
    "decode.js": 1, "recording.js": 1, "bytecode.js": 1, "dom.js": 1, "help.js": 1, "scroll.js": 1, "zoom.js": 1,
    "navigation.js": 1, "timeline.js": 1, "cull.js": 1, "stages.js": 1,
    "compare.js": 1, "compile-menu.js": 1, "sync.js": 1,
    "guards.js": 1, "search.js": 2, "stepfields.js": 1, "break-card.js": 1, "answers.js": 1, "roving.js": 1,
    "shapes.js": 1, "graph-modules.js": 1, "graph-code.js": 1,
}


def _layer(name: str) -> int:
    return 2 if name.startswith("panes/") else LAYERS[name]


def _sources() -> list[Path]:
    return sorted(SOURCES.rglob("*.js"))


def _imports(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return [(path.parent / m).resolve().relative_to(SOURCES).as_posix()
            for m in re.findall(r'^import\s*\{[^}]*\}\s*from\s*"([^"]+)"', text, re.MULTILINE)]


def test_the_committed_module_is_the_join_of_its_sources():
    assert join.OUT.read_text(encoding="utf-8") == join.joined(), \
        "widgets/viewer/viewer.js is stale: run python -m widgets.viewer.join"


def test_the_joined_module_has_every_source_once_and_no_import():
    text = join.OUT.read_text(encoding="utf-8")
    joined = re.findall(r"^// ---- (js/\S+) ", text, re.MULTILINE)
    expected = sorted(f"js/{p.relative_to(SOURCES).as_posix()}" for p in _sources()
                      if p.name != "page-host.js")
    assert sorted(joined) == expected and len(set(joined)) == len(joined)
    assert joined[-1] == "js/index.js"
    assert not re.search(r"^import\b", text, re.MULTILINE)
    assert re.findall(r"^export default .*$", text, re.MULTILINE) == ["export default { initialize, render };"]


def test_no_source_is_over_300_lines():
    long = {p.relative_to(SOURCES).as_posix(): n for p in _sources()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}


def test_modules_import_one_way_and_no_pane_knows_the_viewer():
    for path in _sources():
        name = path.relative_to(SOURCES).as_posix()
        if name == "page-host.js":
            assert _imports(path) == [], "the page's host is inlined alone: it imports nothing"
            continue
        for dep in _imports(path):
            assert dep in LAYERS or dep.startswith("panes/"), f"{name} imports {dep}"
            below = _layer(dep) < _layer(name) or _layer(dep) == _layer(name) == 1
            assert below, f"{name} imports {dep}: arrows run index -> viewer -> panes -> recording"
            if name.startswith("panes/"):
                assert not dep.startswith("panes/") and dep not in ("viewer.js", "index.js")


def _write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder / "index.js"


@pytest.mark.parametrize("files, reason", [
    ({"index.js": 'import { a } from "./a.js";\nimport { b } from "./b.js";\nexport default { a, b };\n',
      "a.js": "export function a() {}\nfunction helper() {}\n",
      "b.js": "export function b() {}\nconst helper = 1;\n"},
     "the top-level name 'helper' is declared in both"),
    ({"index.js": 'import { a as x } from "./a.js";\nexport default { x };\n', "a.js": "export const a = 1;\n"},
     "a renamed import"),
    ({"index.js": 'import * as a from "./a.js";\nexport default { a };\n', "a.js": "export const a = 1;\n"},
     "can be joined"),
    ({"index.js": 'import { a } from "./a.js";\nexport default { a };\n',
      "a.js": 'import { b } from "./b.js";\nexport const a = 1;\n',
      "b.js": 'import { a } from "./a.js";\nexport const b = 2;\n'},
     "in a circle"),
    ({"index.js": 'import { a } from "./a.js";\nexport default { a };\n', "a.js": "const a = 1;\n"},
     "does not export it"),
])
def test_the_join_refuses_what_one_module_cannot_hold(tmp_path, files, reason):
    with pytest.raises(join.JoinError, match=reason):
        join.joined(_write(tmp_path, files))


def test_the_join_puts_each_module_after_those_it_imports(tmp_path):
    entry = _write(tmp_path, {
        "index.js": 'import { b } from "./b.js";\nimport { a } from "./a.js";\nexport default { a, b };\n',
        "a.js": "export const a = 1;\n",
        "b.js": 'import {\n  a,\n} from "./a.js";\nexport const b = a + 1;\n'})
    text = join.joined(entry)
    assert text.index("export const a") < text.index("export const b") < text.index("export default")
    assert "import" not in text.replace("the modules it imports", "")


def test_the_page_inlines_its_host_beside_the_module():
    host = page.host_source()
    assert "export class PageModel" in host and "startPage(document)" in host
    assert "PageModel" not in page.module_source()   # the widget's module has no page in it
    assert f'<script type="module" nonce="n">{host}</script>' in page.module_html("n")


def test_predict_mode_and_python_say_the_same_effects():
    """The effects predict mode offers (predict.js, EFFECTS) are the ones Python reads the
    answers back with, in the same order and the same words (a chip may add a hint)."""
    from widgets.course.review import _EFFECTS

    if NODE is None:
        pytest.fail("node is not installed: ./lab test installs it (apt-get install nodejs)")
    script = (f'const m = await import({json.dumps((SOURCES / "predict.js").as_uri())});'
              "console.log(JSON.stringify(m.EFFECTS));")
    out = subprocess.run([NODE, "--input-type=module", "-e", script], capture_output=True,
                         text=True, check=True, timeout=60).stdout
    effects = json.loads(out)
    assert [e[0] for e in effects] == list(_EFFECTS)
    for key, choice, told in effects:
        said, done = _EFFECTS[key][:2]
        assert told == done
        assert choice == said or choice.startswith(said + " ("), (key, choice, said)


def test_the_page_export_imports_no_widget_library_until_a_viewer_is_made():
    code = ("import sys, widgets.viewer.page, widgets.viewer.state; "
            "print('anywidget' in sys.modules, 'ipywidgets' in sys.modules); "
            "from widgets.viewer import TraceViewer; "
            "print('anywidget' in sys.modules, TraceViewer.__module__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120).stdout.split("\n")
    assert out[:2] == ["False False", "True widgets.viewer"]   # anywidget's id for stored lessons
