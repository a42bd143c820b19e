"""How long the viewer takes, in Python, to show another step of a big recording.

Records a 12-layer GPT-style model (a few thousand steps, hundreds of graph
nodes, a couple of thousand guards) with the eager backend, builds a
`TraceViewer`, then times `viewer.step = i` (every pane brought up to date) at
positions spread across the compile, each reached by a jump from elsewhere so
no pane can reuse its previous content.

    .venv/bin/python bench/viewer_latency.py [--layers 12] [--positions 20] [--json]

Targets: median under 30 ms, worst under 100 ms. This is a benchmark, not a test.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import comm  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

import capture  # noqa: E402
from widgets import TraceViewer  # noqa: E402


class Block(nn.Module):
    """A pre-norm transformer block: attention, then an MLP, each with a residual."""

    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.fc = nn.Linear(width, 4 * width)
        self.out = nn.Linear(4 * width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q = q.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        att = ((q @ k.transpose(-2, -1)) * (c // self.heads) ** -0.5).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, c)
        x = x + self.proj(y)
        return x + self.out(torch.nn.functional.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, layers: int, width: int = 32, heads: int = 4, vocab: int = 64) -> None:
        super().__init__()
        self.tok = nn.Embedding(vocab, width)
        self.blocks = nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        x = self.tok(idx)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


class WireComm(comm.DummyComm):
    """A comm that serialises every message to JSON, as a kernel would, and counts bytes."""

    sent = 0

    def publish_msg(self, msg_type, data=None, metadata=None, buffers=None, **keys):  # noqa: ANN001
        WireComm.sent += len(json.dumps({"data": data, "metadata": metadata}))


def record_gpt(layers: int = 12) -> capture.Recording:
    torch.manual_seed(0)
    model = GPT(layers)
    return capture.trace(model, torch.randint(0, 64, (2, 8)), backend="eager")


def measure(recording: capture.Recording, positions: int = 20) -> dict[str, object]:
    """Time `viewer.step = i` at `positions` steps spread over the biggest compile."""
    k = max(range(len(recording.compiles)), key=lambda j: len(recording.compiles[j].steps))
    c = recording.compiles[k]
    n = len(c.steps)
    comm.create_comm = WireComm  # widgets made from here on pay for serialising their state
    t0 = time.perf_counter()
    viewer = TraceViewer(recording, compile=k)   # includes laying out the whole graph once
    build = time.perf_counter() - t0
    drawing = viewer._layout()
    targets = sorted({round(j * (n - 1) / (positions - 1)) for j in range(positions)})
    times, sizes = [], []
    for j, i in enumerate(targets):
        viewer.step = targets[-1 - j] if targets[-1 - j] != i else 0  # arrive from afar
        WireComm.sent = 0
        start = time.perf_counter()
        viewer.step = i
        times.append(time.perf_counter() - start)
        sizes.append(WireComm.sent)
    # Neighbouring steps, as the forward button and Play produce them.
    walk = []
    for i in range(n // 2, min(n // 2 + 200, n)):
        start = time.perf_counter()
        viewer.step = i
        walk.append(time.perf_counter() - start)
    ms = [t * 1000 for t in times]
    walk_ms = [t * 1000 for t in walk]
    return {
        "compile": c.compile_id, "steps": n, "graph_nodes": len(c.nodes),
        "guards": len(c.guard_details), "positions": len(targets),
        "viewer_build_s": round(build, 3),
        "graph_drawn": drawing.svg is not None, "svg_kb": round(len(drawing.svg or "") / 1024),
        "jump_median_ms": round(statistics.median(ms), 2), "jump_worst_ms": round(max(ms), 2),
        "jump_median_bytes": int(statistics.median(sizes)),
        "walk_median_ms": round(statistics.median(walk_ms), 3),
        "walk_worst_ms": round(max(walk_ms), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--positions", type=int, default=20)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    t0 = time.perf_counter()
    recording = record_gpt(args.layers)
    result = {"layers": args.layers, "record_s": round(time.perf_counter() - t0, 2),
              **measure(recording, args.positions)}
    if args.json:
        print(json.dumps(result))
        return
    for key, value in result.items():
        print(f"{key:>16}: {value}")
    ok = result["jump_median_ms"] < 30 and result["jump_worst_ms"] < 100
    print("targets (median < 30 ms, worst < 100 ms):", "met" if ok else "NOT met")


if __name__ == "__main__":
    main()
