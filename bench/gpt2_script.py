"""A 12-layer Hugging Face GPT-2 behind a compiled wrapper with a print: a page at full size.

`GPT2Config(n_layer=12)` (GPT-2 small's shape, 124 M parameters) with random weights,
nothing downloaded; a compiled wrapper that calls the model and prints (a graph break),
called with sequence lengths 16 then 24 (a recompile). Six compiles, 165,670 steps; its
two biggest graphs have 1,413 and 1,414 nodes. graphviz 2.43's `dot` lays out the first
in about a second (4 s on a loaded machine) and had not finished the second after 5 minutes
(37 in another run), which is why layout.py gives dot a time limit and draws that graph
in layers.

    .venv/bin/dynamo-lab record bench/gpt2_script.py -o trace.html

took 38 to 63 s on the 2-core machine (load 3.4 to 4.5): recording about 25 s, the page
about 13 s (dot 11 s, 9 of them waiting on the graph it cannot finish), the rest
loading torch and transformers. The same text in a `%%capture_trace` cell shows the
viewer (49 s). Run as a plain script it records nothing.
"""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")   # built from a config: nothing to download

import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
model = GPT2LMHeadModel(GPT2Config(n_layer=12)).eval()


@torch.compile(backend="eager")
def last_token(ids):
    logits = model(ids).logits
    print("logits", tuple(logits.shape))
    return logits[:, -1].argmax(dim=-1)


with torch.no_grad():
    for length in (16, 24):
        last_token(torch.randint(0, model.config.vocab_size, (1, length)))
