"""The course as a static site (`./lab site`): built from the real lessons, read in Chromium.

`widgets.course.site.build` turns every notebook of notebooks/ into a page through
nbconvert's JupyterLab template; each viewer a lesson stored becomes a standalone
viewer made from the widget state the notebook saved. The pages are checked as
files (prose, code, outputs, links, exercises, nothing from outside) and then
opened from file:// in Debian's Chromium with every other request refused: a lesson
link is followed, a viewer steps, the bar leads to the next lesson.

    .venv/bin/python -m pytest tests/test_site.py      # -m "not browser" skips Chromium
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest

from bench import lab_server
from widgets.course import site, stored

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
READY = 30_000
BINDER = "example-owner/dynamo-lab"
STEP = re.compile(r"step (\d+) / (\d+)")
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

WATCH_JS = """
window.__dlRefused = [];
document.addEventListener("securitypolicyviolation",
    (e) => window.__dlRefused.push(e.violatedDirective + " " + e.blockedURI));
"""


def lesson_paths() -> list[Path]:
    return sorted(NOTEBOOKS.glob("*.ipynb"))


def viewer_outputs(nb) -> list[str]:
    """The model ids of the widget views a notebook's outputs show."""
    return [o["data"][WIDGET_VIEW]["model_id"]
            for cell in nb.cells if cell.cell_type == "code"
            for o in cell.get("outputs", []) if WIDGET_VIEW in o.get("data", {})]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    report = site.build(NOTEBOOKS, out, binder=BINDER)
    return out, report


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.srcs: list[str] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name == "href" and value:
                self.hrefs.append(value)
            if name == "src" and value:
                self.srcs.append(value)


def links(html: str) -> _Links:
    reader = _Links()
    reader.feed(html)
    return reader


# -- the files ---------------------------------------------------------------------------------

def test_every_lesson_becomes_a_page_and_start_is_the_index(built):
    out, report = built
    names = {p.name for p in report.pages}
    expected = {"index.html" if p.stem == "START" else f"{p.stem}.html" for p in lesson_paths()}
    expected |= {f"{p.stem}.html" for p in NOTEBOOKS.glob("*.md")}   # a glossary, say
    assert names == expected
    assert {p.name for p in out.iterdir()} == expected


@pytest.mark.parametrize("lesson", lesson_paths(), ids=lambda p: p.stem)
def test_a_page_holds_the_lessons_prose_code_and_stored_outputs(built, lesson):
    out, _ = built
    nb = nbformat.read(lesson, as_version=4)
    page = out / ("index.html" if lesson.stem == "START" else f"{lesson.stem}.html")
    text = page.read_text(encoding="utf-8")
    title = site._title(nb, lesson.stem)
    assert f"<title>{title}" in text.replace("&amp;", "&") or title in text
    body = re.sub(r"<[^>]+>", "", text)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            words = re.findall(r"[A-Za-z]{6,}", cell.source)
            if words:
                assert words[0] in body, f"prose missing: {words[0]!r}"
        elif cell.cell_type == "code" and cell.source.strip():
            first = re.findall(r"[A-Za-z_]{4,}", cell.source)
            if first:
                assert first[0] in body, f"code missing: {first[0]!r}"
            for o in cell.get("outputs", []):
                if o.get("output_type") == "stream":
                    words = re.findall(r"[A-Za-z]{6,}", o["text"])
                    if words:
                        assert words[0] in body, f"output missing: {words[0]!r}"


def test_no_page_loads_anything_from_outside(built):
    out, _ = built
    for page in out.glob("*.html"):
        text = page.read_text(encoding="utf-8")
        found = links(text)
        assert found.srcs == [], f"{page.name} loads {found.srcs}"
        assert "require.js" not in text and "cdnjs" not in text and "unpkg" not in text
        assert "default-src 'none'" in text
        # The notebook's whole widget state is not dumped into the page.
        assert stored.WIDGET_STATE not in text


def test_links_between_lessons_lead_to_their_pages(built):
    out, _ = built
    seen = set()
    for page in out.glob("*.html"):
        for href in links(page.read_text(encoding="utf-8")).hrefs:
            if href.startswith(("#", "http://", "https://", "mailto:")):
                continue
            target = href.split("#")[0]
            assert not target.endswith(".ipynb"), f"{page.name} links to a notebook: {href}"
            assert (out / target).is_file(), (
                f"{page.name} links to {href}, which is neither a lesson nor a document of "
                "notebooks/ (the link is broken in JupyterLab too)")
            seen.add(target)
    assert "index.html" in seen and len(seen) == len(list(out.glob("*.html")))


def test_every_exercise_points_to_jupyterlab_and_binder(built):
    out, _ = built
    checked = 0
    for lesson in lesson_paths():
        nb = nbformat.read(lesson, as_version=4)
        checks = sum(1 for c in nb.cells if c.cell_type == "code" and site.is_check(c))
        page = out / ("index.html" if lesson.stem == "START" else f"{lesson.stem}.html")
        text = page.read_text(encoding="utf-8")
        assert text.count('class="dl-exercise"') == checks, lesson.name
        if checks:
            url = (f"https://mybinder.org/v2/gh/{BINDER}/HEAD?urlpath=lab/tree/notebooks/"
                   f"{lesson.name}")
            assert url in text.replace("&amp;", "&")
            assert f"notebooks/{lesson.name}" in text and "./lab" in text
            checked += 1
    assert checked > 0, "no lesson has an exercise"


def folded_blocks(text: str) -> list[str]:
    """The inner HTML of each folded output block of a page, in order."""
    return re.findall(r'<details class="dl-folded dl-folded-output">(.*?)</details>', text,
                      flags=re.DOTALL)


def test_an_exercises_evidence_is_folded_on_its_page(built):
    """Each cell stored folded (the evidence after a check) is on the page closed, under a
    line saying it answers the exercise, and its output is inside the fold, not beside it."""
    out, _ = built
    seen = 0
    for lesson in lesson_paths():
        nb = nbformat.read(lesson, as_version=4)
        folded = [c for c in nb.cells if c.cell_type == "code"
                  and c.metadata.get("jupyter", {}).get("outputs_hidden")]
        page = out / ("index.html" if lesson.stem == "START" else f"{lesson.stem}.html")
        text = page.read_text(encoding="utf-8")
        blocks = folded_blocks(text)
        assert len(blocks) == len(folded), lesson.name
        assert re.search(r"<details[^>]*\bopen\b", text) is None, "a fold is stored open"
        for cell, block in zip(folded, blocks):
            assert "it answers the exercise above" in block.split("</summary>")[0]
            first = cell.outputs[0]["text"].strip().splitlines()[0]
            words = re.findall(r"[A-Za-z]{4,}", first)
            inside = re.sub(r"<[^>]+>", "", block.split("</summary>", 1)[1])
            if words:
                assert words[0] in inside, f"{lesson.name}: {first!r} is not inside its fold"
            seen += 1
    assert seen > 0, "no lesson stores folded evidence"


def test_an_exercises_check_shows_its_verdict_and_folds_its_code(built):
    """A check cell's code (its explanation and hints say the answer) is inside a closed fold;
    its verdict, the stored output, is not."""
    out, _ = built
    seen = 0
    for lesson in lesson_paths():
        nb = nbformat.read(lesson, as_version=4)
        checks = [c for c in nb.cells if c.cell_type == "code" and site.is_check(c)
                  and c.metadata.get("jupyter", {}).get("source_hidden")]
        page = out / ("index.html" if lesson.stem == "START" else f"{lesson.stem}.html")
        text = page.read_text(encoding="utf-8")
        blocks = re.findall(r'<details class="dl-folded dl-folded-code">(.*?)</details>', text,
                            flags=re.DOTALL)
        assert len(blocks) == len(checks), lesson.name
        for cell, block in zip(checks, blocks):
            assert "give the answer away" in block.split("</summary>")[0]
            assert "check" in re.sub(r"<[^>]+>", "", block.split("</summary>", 1)[1])
            assert "no prediction yet" not in block   # the verdict is the output, not folded
            seen += 1
        outside = re.sub(r"<[^>]+>", "", text)
        for block in blocks:
            outside = outside.replace(re.sub(r"<[^>]+>", "", block), "")
        verdicts = sum("no prediction yet" in "".join(o.get("text", "")) for c in checks
                       for o in c.outputs)
        assert outside.count("no prediction yet") >= verdicts, lesson.name
    assert seen > 0, "no lesson folds its checks' code"


def test_the_lessons_store_the_recording_of_every_viewer_they_show(built):
    _, report = built
    missing = []
    shown = 0
    for lesson in lesson_paths():
        nb = nbformat.read(lesson, as_version=4)
        kept = stored.stored_viewers(nb)
        for model_id in viewer_outputs(nb):
            shown += 1
            if model_id not in kept:
                missing.append(lesson.name)
    assert not missing, (
        f"lessons show viewers whose recording they did not store: {sorted(set(missing))}; "
        "execute them so that the widget state is saved: python -m widgets.course.stored "
        "--execute notebooks/NAME.ipynb")
    assert report.viewers == shown > 0


# -- a lesson executed here: its viewer stored and shown ------------------------------------------

LESSON = {
    "cells": [
        {"cell_type": "markdown", "id": "prose", "metadata": {}, "source": "# A tiny lesson\n\nSee [the start](START.ipynb)."},
        {"cell_type": "code", "id": "setup", "metadata": {}, "execution_count": None, "outputs": [],
         "source": "%load_ext widgets\nimport torch"},
        {"cell_type": "code", "id": "trace", "metadata": {}, "execution_count": None, "outputs": [],
         "source": "%%capture_trace\n@torch.compile(backend=\"eager\")\ndef f(x):\n"
                   "    s = \"<script>alert('dl')</script>\"\n    return x.sin() + len(s)\n"
                   "f(torch.ones(3))"},
    ],
    "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    "nbformat": 4, "nbformat_minor": 5,
}
START = {"cells": [{"cell_type": "markdown", "id": "start", "metadata": {},
                    "source": "# Start\n\n[The tiny lesson](01_tiny.ipynb)"}],
         "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


@pytest.fixture(scope="module")
def executed_site(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lessons")
    (folder / "01_tiny.ipynb").write_text(json.dumps(LESSON), encoding="utf-8")
    (folder / "START.ipynb").write_text(json.dumps(START), encoding="utf-8")
    out = tmp_path_factory.mktemp("executed-site")
    report = site.build(folder, out, execute_first=True)
    return out, report


def test_an_executed_lesson_stores_its_viewer_and_the_site_makes_it_standalone(executed_site):
    out, report = executed_site
    assert report.viewers == 1, report.notes
    text = (out / "01_tiny.html").read_text(encoding="utf-8")
    assert len(re.findall(r"<div [^>]*data-dl-viewer=", text)) == 1
    assert 'id="dl-viewer-module"' in text
    assert 'class="dl-missing-viewer"' not in text
    assert "<script>alert" not in text   # the program's string is inside the gzip, base64


# -- in the browser ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def browser():
    with lab_server.chromium() as chromium:
        yield chromium


@pytest.fixture
def tab(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    seen = {"blocked": [], "dialogs": [], "errors": []}

    def route(r):
        if r.request.url.startswith(("file:", "blob:", "data:")):
            r.continue_()
        else:
            seen["blocked"].append(r.request.url)
            r.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.add_init_script(WATCH_JS)
    page.on("dialog", lambda d: (seen["dialogs"].append(d.message), d.dismiss()))
    page.on("pageerror", lambda e: seen["errors"].append(str(e)))
    page.on("console", lambda m: seen["errors"].append(m.text) if m.type == "error" else None)
    yield page, seen
    assert seen["blocked"] == [], f"requests outside the files: {seen['blocked']}"
    assert seen["dialogs"] == [] and seen["errors"] == [], seen
    assert page.evaluate("window.__dlRefused") == []
    context.close()


def _step(root) -> tuple[int, int]:
    m = STEP.search(root.locator(".dl-stepno").first.text_content())
    assert m
    return int(m[1]), int(m[2])


@pytest.mark.browser
def test_the_site_opens_from_file_follows_lesson_links_and_steps_a_viewer(built, tab):
    out, report = built
    page, _ = tab
    page.goto((out / "index.html").as_uri())
    # A link in START's own prose leads to its lesson's page.
    first = next(h for h in links((out / "index.html").read_text(encoding="utf-8")).hrefs
                 if h.endswith(".html") and h != "index.html")
    page.locator(f"main a[href='{first}']").first.click()
    page.wait_for_url((out / first).as_uri())
    # The bar leads from lesson to lesson, to the first one that shows a viewer.
    for _ in range(len(report.pages)):
        if page.locator("[data-dl-viewer]").count():
            break
        nxt = page.locator("nav.dl-site-nav a.dl-site-next").first
        if not nxt.count():
            pytest.fail("no lesson page has a stored viewer: execute the lessons so that "
                        "their widget state is saved (see the test above)")
        target = nxt.get_attribute("href")
        nxt.click()
        page.wait_for_url((out / target).as_uri())
    page.wait_for_selector(".dl-viewer[data-ready='1']", timeout=READY)
    root = page.locator(".dl-viewer").first
    i, n = _step(root)
    assert n > 0
    root.locator("button").filter(has_text=re.compile("^forward")).first.click()
    assert _step(root) == (i + 1, n)
    # An exercise's evidence is closed: its output shows only once its fold is opened.
    fold = page.locator("details.dl-folded-output").first
    assert fold.count(), "this lesson stores no folded evidence"
    output = fold.locator(".jp-OutputArea-output").first
    assert not output.is_visible()
    fold.locator("summary").click()
    assert output.is_visible()
    # The check's code is closed too, and its verdict shows without opening anything.
    code_fold = page.locator("details.dl-folded-code").first
    assert not code_fold.locator(".jp-InputArea").first.is_visible()
    code_fold.locator("summary").click()
    assert code_fold.locator(".jp-InputArea").first.is_visible()
    page.locator("nav.dl-site-nav a.dl-site-home").first.click()
    page.wait_for_url((out / "index.html").as_uri())


@pytest.mark.browser
def test_an_executed_lessons_page_steps_with_its_program_text_shown_as_text(executed_site, tab):
    out, _ = executed_site
    page, _ = tab
    page.goto((out / "01_tiny.html").as_uri())
    page.wait_for_selector(".dl-viewer[data-ready='1']", timeout=READY)
    root = page.locator(".dl-viewer").first
    root.locator("button").filter(has_text=re.compile("^last")).first.click()
    i, n = _step(root)
    assert i == n > 0
    assert "<script>alert('dl')</script>" in root.locator(".dl-source").inner_text()
    page.locator("main a[href='index.html']").first.click()
    page.wait_for_url((out / "index.html").as_uri())
