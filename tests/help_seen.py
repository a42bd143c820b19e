"""What the test suite's recordings contain, for the help data's coverage test (test_help.py).

Records the suite's programs (tests/scenarios.py, the large cases of tests/dynamo_oracle.py,
a TransformerEncoderLayer and, where transformers is installed, a two-layer GPT-2 made from
a config) and writes, for the Python it runs on, every opname Dynamo walked, every
VariableTracker class and guard kind the recordings hold, and every opname of that Python's
`dis.opmap`, to tests/data/help_seen/<major.minor>.json. Run it again on purpose, with each
Python's venv, when torch or the programs change:

    flock /tmp/dynamo-lab-heavy.lock .venv/bin/python tests/help_seen.py
    flock /tmp/dynamo-lab-heavy.lock .venv-py3.12-torch2.14.1/bin/python tests/help_seen.py
"""

from __future__ import annotations

import dis
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]
OUT = HERE / "data" / "help_seen"


def programs():
    """(name, make_calls) for every program recorded."""
    import torch
    from torch import nn

    import dynamo_oracle
    import scenarios

    yield from scenarios.SCENARIOS.items()
    yield from dynamo_oracle.LARGE_CASES.items()

    def encoder_layer():
        torch.manual_seed(0)
        layer = nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32,
                                           batch_first=True).train()
        return [(layer, (torch.randn(2, 5, 16),))]

    yield "encoder_layer_train", encoder_layer
    try:
        import transformers
    except ImportError:
        return

    def gpt2():
        torch.manual_seed(0)
        config = transformers.GPT2Config(n_layer=2, n_head=2, n_embd=32, vocab_size=64,
                                         n_positions=16)
        model = transformers.GPT2LMHeadModel(config).eval()
        return [(model, (torch.randint(0, 64, (1, 8)),))]

    yield "gpt2_2_layers", gpt2


def collect() -> dict:
    import torch

    import capture

    walked, trackers, guards = set(), set(), set()
    for name, make in programs():
        torch._dynamo.reset()
        calls = make()
        try:
            with capture.record() as rec:
                for fn, args in calls:
                    torch.compile(fn, backend="eager")(*args)
        except Exception as e:  # a program this torch cannot compile still counts what it walked
            print(f"{name}: {type(e).__name__}: {e}"[:200], file=sys.stderr)
        for c in rec.compiles:
            walked.update(s.opname for s in c.steps)
            trackers.update(v.kind for v in c.vars)
            for g in c.guard_details:
                guards.add(g.kind)
                if g.tree_kind:
                    guards.add(g.tree_kind)
        print(f"{name}: {len(rec.compiles)} compile(s)", file=sys.stderr)
    return {"python": f"{sys.version_info[0]}.{sys.version_info[1]}", "torch": torch.__version__,
            "opmap": sorted(dis.opmap), "walked": sorted(walked),
            "trackers": sorted(trackers), "guards": sorted(guards)}


def main() -> None:
    data = collect()
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{data['python']}.json"
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path}: {len(data['walked'])} opnames walked, {len(data['trackers'])} trackers, "
          f"{len(data['guards'])} guard kinds")


if __name__ == "__main__":
    main()
