"""The course as a static site: every lesson a page, its viewers working, no kernel, no network.

    python -m widgets.course.site [--out site] [--execute] [--binder OWNER/REPO]  # ./lab site

Each notebook in notebooks/ becomes one page through nbconvert's JupyterLab template
(widgets/course/templates/dynamo_lab_site extends it): prose, code and stored outputs as
JupyterLab shows them. START.ipynb becomes index.html; a Markdown document beside the
lessons (a glossary) becomes a page too. What nbconvert would load from
CDNs (require.js, the widget manager, MathJax, Mermaid) is left out; instead each
viewer a lesson stored is replaced by a standalone viewer (widgets/viewer/page.py) made from
the widget state the notebook saved, which carries the recording. Links between
lessons point at their pages, a bar at the top and bottom leads from lesson to
lesson, and every exercise (a cell that calls `.check(`) says where to run it. A cell stored
with its output or its code folded (an exercise's evidence, its check's code:
widgets/course/evidence.py) is shown closed, to be opened once the reader has answered.

A notebook stores its viewers' state when it is executed by `python -m
widgets.course.stored --execute` (or nbclient, or `jupyter nbconvert --to notebook
--execute`), or saved from JupyterLab with widget state saving on; it stores their
recordings, not the viewer's module (widgets/course/stored.py), so every page runs the
package's module. `--execute` runs every lesson first (in a copy; the notebooks are
not changed).
"""

from __future__ import annotations

import argparse
import html
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..viewer import page
from .evidence import (
    CHECK_SUMMARY, CODE_SUMMARY, EVIDENCE_SUMMARY, FOLDED_SUMMARY, evidence_cells, is_check,
)
from .stored import stored_viewers

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
TEMPLATE = "dynamo_lab_site"
SITE_CSS = TEMPLATES / TEMPLATE / "site.css"
ROOT = HERE.parent.parent
START = "START"

@dataclass(frozen=True)
class Lesson:
    """One notebook and the page it becomes."""

    path: Path
    page: str       # file name of the page: index.html for START
    title: str
    in_course: bool = True   # False for a Markdown document (a glossary): no prev/next


@dataclass
class Report:
    """What a build wrote, and what it could not do (one line each)."""

    out: Path
    pages: list[Path] = field(default_factory=list)
    viewers: int = 0
    notes: list[str] = field(default_factory=list)


class SiteError(Exception):
    """A one-line reason the site could not be built."""


# -- the lessons --------------------------------------------------------------------------

def _title(nb: Any, fallback: str) -> str:
    """The text of the first Markdown heading, markup left out."""
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        m = re.search(r"^#{1,3}\s+(.+?)\s*#*\s*$", cell.source, re.MULTILINE)
        if m:
            text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", lambda x: x.group(1) or "", m.group(1))
            return text.strip() or fallback
    return fallback


def lessons(folder: Path) -> list[tuple[Lesson, Any]]:
    """The notebooks of `folder`, START first, then by name, each with its notebook; then
    its Markdown documents (a glossary the lessons link to), each as a one-cell notebook."""
    import nbformat

    paths = sorted(p for p in folder.glob("*.ipynb") if not p.name.startswith("."))
    paths.sort(key=lambda p: (p.stem != START, p.name))
    out = []
    for path in paths:
        try:
            nb = nbformat.read(path, as_version=4)
        except Exception as e:  # a damaged notebook: say which, do not build half a site
            raise SiteError(f"cannot read {path}: {type(e).__name__}: {e}") from None
        name = "index.html" if path.stem == START else f"{path.stem}.html"
        out.append((Lesson(path, name, _title(nb, path.stem)), nb))
    for path in sorted(folder.glob("*.md")):
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(
            path.read_text(encoding="utf-8"))])
        out.append((Lesson(path, f"{path.stem}.html", _title(nb, path.stem), in_course=False), nb))
    return out


def execute(nb: Any, folder: Path, timeout: int = 600) -> Any:
    """Run a notebook top to bottom in a fresh kernel (in memory); it keeps its widget state."""
    from nbclient import NotebookClient

    NotebookClient(nb, timeout=timeout, kernel_name="python3", store_widget_state=True,
                   resources={"metadata": {"path": str(folder)}}).execute()
    return nb


# -- the stored viewers ---------------------------------------------------------------------

def _missing_viewer(text: str) -> str:
    shown = f" ({html.escape(text)})" if text else ""
    return ('<div class="dl-missing-viewer">A viewer was shown here' + shown + ", but the "
            "notebook did not store its recording. Run the lesson in JupyterLab to see it, "
            "or build the site with <code>./lab site --execute</code>.</div>")


# -- one page -------------------------------------------------------------------------------

def _binder_repo() -> str | None:
    """OWNER/REPO of the GitHub remote this checkout came from, if any."""
    try:
        url = subprocess.run(["git", "-C", str(ROOT), "remote", "get-url", "origin"],
                             capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"github\.com[:/]([\w.-]+/[\w.-]+?)(?:\.git)?/?$", url)
    return m.group(1) if m else None


def _exercise_html(lesson: Lesson, binder: str | None) -> str:
    where = f"notebooks/{lesson.path.name}"
    text = ("<b>Exercise</b>: answering needs a kernel. Run it in JupyterLab: "
            f"<code>./lab</code> in the project folder, then open <code>{html.escape(where)}"
            "</code>")
    if binder:
        url = (f"https://mybinder.org/v2/gh/{binder}/HEAD?urlpath=lab/tree/"
               f"{where}")
        text += f', or <a href="{html.escape(url)}">on Binder</a>'
    else:
        text += ", or on Binder (the README's Binder section has the link)"
    return f'<div class="dl-exercise">{text}.</div>'


def _nav(all_lessons: list[Lesson], lesson: Lesson) -> str:
    def link(lesson: Lesson, cls: str, text: str) -> str:
        return f'<a class="{cls}" href="{html.escape(lesson.page)}">{html.escape(text)}</a>'

    parts = [link(all_lessons[0], "dl-site-home", "Dynamo Lab")]
    course = [item for item in all_lessons if item.in_course]
    if lesson not in course:
        return parts[0]
    all_lessons, k = course, course.index(lesson)
    if k > 0:
        prev = all_lessons[k - 1]
        parts.append(link(prev, "dl-site-prev", f"← {prev.title}"))
    if k + 1 < len(all_lessons):
        nxt = all_lessons[k + 1]
        parts.append(link(nxt, "dl-site-next", f"{nxt.title} →"))
    return " ".join(parts)


def _relink(text: str, pages: dict[str, str]) -> str:
    """Links to a lesson's notebook (`02_x.ipynb#part`) or a document (`GLOSSARY.md`) lead
    to its page."""
    def swap(m: re.Match[str]) -> str:
        name = m.group(2)
        if name not in pages:
            return m.group(0)
        return f'{m.group(1)}{pages[name]}{m.group(3) or ""}"'

    return re.sub(r'(href=")([^"#?/:]+\.(?:ipynb|md))(#[^"]*)?"', swap, text)


def render(lesson: Lesson, nb: Any, all_lessons: list[Lesson], binder: str | None,
           report: Report) -> str:
    """One lesson as a page (HTML text)."""
    from nbconvert import HTMLExporter

    viewers = stored_viewers(nb)
    for cell in nb.cells:
        if is_check(cell):
            cell.metadata["dynamo_lab_exercise"] = True
    for index in evidence_cells(nb):
        nb.cells[index].metadata["dynamo_lab_evidence"] = True
    nb.metadata["title"] = lesson.title
    shown = {"n": 0}

    def dl_viewer(view: Any, text: Any = "") -> str:
        text = "".join(text) if isinstance(text, list) else str(text or "")
        model_id = view.get("model_id") if isinstance(view, dict) else None
        if model_id not in viewers:
            report.notes.append(f"{lesson.path.name}: a viewer's recording was not stored "
                                "(the notebook holds no widget state for it)")
            return _missing_viewer(text)
        shown["n"] += 1
        return page.viewer_html(viewers[model_id], f"v{shown['n']}")

    nonce = page.new_nonce()
    exporter = HTMLExporter(template_name=TEMPLATE, extra_template_basedirs=[str(TEMPLATES)])
    exporter.register_filter("dl_viewer", dl_viewer)
    resources = {"dl": {
        "csp": page.csp(nonce),
        "style": page.style_html() + f"<style>{SITE_CSS.read_text(encoding='utf-8')}</style>",
        "nav": _nav(all_lessons, lesson),
        "exercise": _exercise_html(lesson, binder),
        "folded": lambda cell: html.escape(EVIDENCE_SUMMARY if cell.metadata.get(
            "dynamo_lab_evidence") else FOLDED_SUMMARY),
        "folded_code": lambda cell: html.escape(CHECK_SUMMARY if cell.metadata.get(
            "dynamo_lab_exercise") else CODE_SUMMARY),
        "module": "",   # set below once we know whether the page has a viewer
    }, "metadata": {"name": lesson.title, "path": str(lesson.path.parent)}}
    # The module goes after the viewers: rendered last, it can see whether any was shown.
    resources["dl"]["module"] = _Deferred(lambda: page.module_html(nonce) if shown["n"] else "")
    body, _ = exporter.from_notebook_node(nb, resources=resources)
    report.viewers += shown["n"]
    pages = {item.path.name: item.page for item in all_lessons}
    return _relink(body, pages)


class _Deferred:
    """A template value computed when the template prints it (after the cells above it)."""

    def __init__(self, make: Callable[[], str]) -> None:
        self.make = make

    def __str__(self) -> str:
        return self.make()

    def __html__(self) -> str:
        return self.make()


# -- the whole site ------------------------------------------------------------------------

def build(notebooks: Path, out: Path, *, binder: str | None = None, execute_first: bool = False,
          say: Callable[[str], None] = lambda s: None) -> Report:
    """Write every lesson in `notebooks` as a page in `out`; what was written and noted."""
    notebooks, out = Path(notebooks), Path(out)
    if not notebooks.is_dir():
        raise SiteError(f"{notebooks}: no such folder of notebooks")
    found = lessons(notebooks)
    if not found:
        raise SiteError(f"{notebooks} holds no notebooks (*.ipynb)")
    if binder is None:
        binder = _binder_repo()
    out.mkdir(parents=True, exist_ok=True)
    report = Report(out)
    all_lessons = [lesson for lesson, _ in found]
    for lesson, nb in found:
        if execute_first:
            say(f"running {lesson.path.name}")
            nb = execute(nb, notebooks)
        text = render(lesson, nb, all_lessons, binder, report)
        target = out / lesson.page
        target.write_text(text, encoding="utf-8")
        report.pages.append(target)
        say(f"wrote {target}")
    return report


def main(argv: list[str] | None = None) -> int:
    """`./lab site`: build the course site."""
    parser = argparse.ArgumentParser(
        prog="./lab site",
        description="Build the lessons as static pages (START as index.html), each stored "
                    "viewer a working standalone one; open the result from file://.")
    parser.add_argument("--notebooks", default=str(ROOT / "notebooks"), metavar="DIR",
                        help="the lessons (default: notebooks/)")
    parser.add_argument("-o", "--out", default=str(ROOT / "site"), metavar="DIR",
                        help="where to write the pages (default: site/)")
    parser.add_argument("--execute", action="store_true",
                        help="run every lesson first (in memory; notebooks/ is not changed) so "
                             "that every viewer is stored; a minute or so per lesson")
    parser.add_argument("--binder", metavar="OWNER/REPO",
                        help="the GitHub repository for the exercises' Binder links "
                             "(default: this checkout's origin, if on GitHub)")
    opts = parser.parse_args(argv)
    if opts.binder is not None and not re.fullmatch(r"[\w.-]+/[\w.-]+", opts.binder):
        parser.error(f"--binder needs OWNER/REPO, like pytorch/dynamo-lab (got {opts.binder!r})")

    def say(text: str) -> None:
        print(f"site: {text}", file=sys.stderr, flush=True)

    try:
        report = build(Path(opts.notebooks), Path(opts.out), binder=opts.binder,
                       execute_first=opts.execute, say=say)
    except SiteError as e:
        say(f"error: {e}")
        return 1
    for note in dict.fromkeys(report.notes):
        say(f"note: {note}")
    say(f"{len(report.pages)} page(s), {report.viewers} viewer(s) in {report.out}; "
        f"open {report.out / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
