"""Write the step's fields, as capture declares them, for the viewer's decoder (js/stepfields.js).

    python -m widgets.viewer.stepfields            # rewrite js/stepfields.js if the declaration changed
    python -m widgets.viewer.stepfields --check    # exit 1 if it is not what the declaration makes

`capture.steps.STEP_FIELDS` is the one declaration of a step. The viewer decodes the steps
sent as columns (js/decode.js, `stepRows`) by reading each field's name, column and default
from the module written here; tests/test_step_fields.py checks it is fresh, and the node
tests decode real recordings with it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from capture.steps import REQUIRED, STEP_FIELDS, json_default

OUT = Path(__file__).resolve().parent / "js" / "stepfields.js"


def source() -> str:
    """The module's text: one entry a field, in the declared order."""
    fields = []
    for f in STEP_FIELDS:
        entry = {"name": f.name, "column": f.column}
        if f.table:
            entry["table"] = f.table
        if f.default is not REQUIRED:
            entry["default"] = json_default(f)
        fields.append("  " + json.dumps(entry) + ",")
    return ("// A step's fields as capture declares them (capture/steps.py, STEP_FIELDS): written by\n"
            "// `python -m widgets.viewer.stepfields`, never by hand. `column` says how a field is\n"
            "// sent as columns: place, plain, text (an index into `strings`), table (an index into\n"
            "// `table`), sparse ([step, value] pairs where not empty); `default` is read where a\n"
            "// recording made before the field existed has no column for it.\n"
            "export const STEP_FIELDS = [\n" + "\n".join(fields) + "\n];\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if js/stepfields.js is stale")
    args = parser.parse_args(argv)
    text = source()
    current = OUT.read_text(encoding="utf-8") if OUT.exists() else None
    if args.check:
        if current != text:
            print(f"{OUT} is stale: run python -m widgets.viewer.stepfields", file=sys.stderr)
            return 1
        return 0
    if current != text:
        OUT.write_text(text, encoding="utf-8")
        print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
