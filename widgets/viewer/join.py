"""Join the viewer's ES modules (js/) into the one module anywidget and the page load (viewer.js).

    python -m widgets.viewer.join            # rewrite viewer.js if the sources changed
    python -m widgets.viewer.join --check    # exit 1 if viewer.js is not what they make

anywidget serves one ES module per widget, and a page opened from file:// cannot import a
second file, so the sources are joined: starting from js/index.js, every module comes
after the modules it imports, each once, with its `import` statements taken out. Their
`export` keywords stay, so the joined module exports every name a source exports (the
node tests and the exercises' checks call its pure functions), and index.js's
`export default { initialize, render }` is the widget.

What the join relies on, and refuses otherwise (with the file and the reason):

- imports are `import { a, b } from "./x.js";` (one or several lines) of a relative path,
  no default, namespace or renamed (`as`) import, and every name imported is exported there;
- no module imports itself back, directly or through others;
- a top-level declaration (function, class, const, let, var) starts at column 0, and no
  top-level name is declared by two modules (in one module scope they would collide).

js/page-host.js, the standalone page's host, is not imported by index.js and so not joined:
page.py inlines it beside the joined module.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "js"
ENTRY = SOURCES / "index.js"
OUT = HERE / "viewer.js"

_IMPORT = re.compile(r'^import\b[^;]*?;[ \t]*\n?', re.MULTILINE | re.DOTALL)
_NAMED = re.compile(r'^import\s*\{([^}]*)\}\s*from\s*"(\.{1,2}/[^"]+\.js)"\s*;', re.DOTALL)
_DECLARED = re.compile(r"^(export\s+)?(?:async\s+)?(?:function\*?|class|const|let|var)\s+([A-Za-z_$][\w$]*)",
                       re.MULTILINE)

BANNER = ("// Dynamo Lab's trace viewer, joined from widgets/viewer/js/ by `python -m widgets.viewer.join`:\n"
          "// edit those sources, then run it. The contract with the host is in js/index.js, below.\n")


class JoinError(Exception):
    """The sources cannot be joined; the message names the file and the reason."""


def _name(path: Path) -> str:
    return path.relative_to(SOURCES.parent).as_posix() if path.is_relative_to(SOURCES.parent) else str(path)


def _imports(path: Path, text: str) -> list[tuple[Path, list[str]]]:
    """The (module, names) a source imports, in order."""
    found = []
    for m in _IMPORT.finditer(text):
        named = _NAMED.match(m.group(0))
        if not named:
            raise JoinError(f"{_name(path)}: only `import {{ a, b }} from \"./x.js\";` can be joined, "
                            f"not {m.group(0).strip()!r}")
        names = [n.strip() for n in named.group(1).split(",") if n.strip()]
        if any(not re.fullmatch(r"[A-Za-z_$][\w$]*", n) for n in names):
            raise JoinError(f"{_name(path)}: a renamed import (`as`) cannot be joined: {m.group(0).strip()!r}")
        found.append(((path.parent / named.group(2)).resolve(), names))
    return found


def _order(entry: Path) -> list[Path]:
    """Every module the entry reaches, each after the modules it imports."""
    order: list[Path] = []
    visiting: list[Path] = []

    def visit(path: Path) -> None:
        if path in order:
            return
        if path in visiting:
            ring = " -> ".join(_name(p) for p in [*visiting[visiting.index(path):], path])
            raise JoinError(f"modules import each other in a circle: {ring}")
        if not path.is_file():
            raise JoinError(f"{_name(visiting[-1]) if visiting else '?'} imports {_name(path)}, which does not exist")
        visiting.append(path)
        text = path.read_text(encoding="utf-8")
        for dep, names in _imports(path, text):
            visit(dep)
            exported = {m.group(2) for m in _DECLARED.finditer(dep.read_text(encoding="utf-8")) if m.group(1)}
            missing = [n for n in names if n not in exported]
            if missing:
                raise JoinError(f"{_name(path)} imports {', '.join(missing)} from {_name(dep)}, which does not export it")
        visiting.pop()
        order.append(path)

    visit(entry.resolve())
    return order


def joined(entry: Path = ENTRY) -> str:
    """The one module: each source after those it imports, without its imports."""
    declared: dict[str, Path] = {}
    parts = [BANNER]
    for path in _order(entry):
        text = path.read_text(encoding="utf-8")
        for m in _DECLARED.finditer(text):
            name = m.group(2)
            if name in declared:
                raise JoinError(f"the top-level name {name!r} is declared in both {_name(declared[name])} "
                                f"and {_name(path)}: rename one")
            declared[name] = path
        if "export default" in text and path != entry.resolve():
            raise JoinError(f"{_name(path)}: only {_name(entry)} may `export default`")
        body = re.sub(r"\n{3,}", "\n\n", _IMPORT.sub("", text)).strip("\n")
        parts.append(f"\n// ---- {_name(path)} " + "-" * max(4, 88 - len(_name(path))) + "\n\n" + body + "\n")
    return "".join(parts)


def write(out: Path = OUT) -> bool:
    """Rewrite `out` if the sources make something else; whether it changed."""
    text = joined()
    if out.exists() and out.read_text(encoding="utf-8") == text:
        return False
    out.write_text(text, encoding="utf-8")
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m widgets.viewer.join", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if viewer.js is stale; write nothing")
    args = parser.parse_args(argv)
    try:
        if args.check:
            fresh = OUT.exists() and OUT.read_text(encoding="utf-8") == joined()
            if not fresh:
                print(f"{_name(OUT)} is stale: run python -m widgets.viewer.join", file=sys.stderr)
            return 0 if fresh else 1
        if write():
            print(f"wrote {_name(OUT)}", file=sys.stderr)
    except JoinError as e:
        print(f"python -m widgets.viewer.join: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
