"""Models the benchmarks compile: a small 12-layer GPT written here, and real ones."""

from __future__ import annotations

import math

import torch
from torch import nn


class Block(nn.Module):
    """Pre-norm transformer block: attention then MLP, each with a residual."""

    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.ln2 = nn.LayerNorm(width)
        self.fc = nn.Linear(width, 4 * width)
        self.out = nn.Linear(4 * width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q = q.view(b, t, self.heads, c // self.heads).transpose(1, 2)   # (b, h, t, d)
        k = k.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1))
        mask = torch.ones(t, t, dtype=torch.bool).tril()
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
        x = x + self.proj(y)
        return x + self.out(torch.nn.functional.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    """Token + position embeddings, `layers` blocks, a tied-free head."""

    def __init__(self, layers: int = 12, width: int = 32, heads: int = 4, vocab: int = 64,
                 context: int = 16) -> None:
        super().__init__()
        self.tok = nn.Embedding(vocab, width)
        self.pos = nn.Embedding(context, width)
        self.blocks = nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        t = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(t))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


def gpt_input(batch: int = 2, t: int = 16, vocab: int = 64) -> torch.Tensor:
    return torch.randint(0, vocab, (batch, t))


# -- real models from a package nobody here wrote: small configs, random weights -----------

VOCAB = 1000


def _quiet_transformers() -> None:
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # built from configs: nothing to download
    import transformers

    transformers.logging.set_verbosity_error()


def hf_gpt2(layers: int = 4, width: int = 64, heads: int = 4) -> nn.Module:
    """transformers' GPT2LMHeadModel from a small config, random weights, eval mode."""
    _quiet_transformers()
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(n_layer=layers, n_embd=width, n_head=heads, vocab_size=VOCAB,
                        n_positions=64, bos_token_id=0, eos_token_id=0)
    return GPT2LMHeadModel(config).eval()


def hf_bert(layers: int = 4, width: int = 64, heads: int = 4) -> nn.Module:
    """transformers' BertModel from a small config, random weights, eval mode."""
    _quiet_transformers()
    from transformers import BertConfig, BertModel

    config = BertConfig(num_hidden_layers=layers, hidden_size=width, num_attention_heads=heads,
                        intermediate_size=4 * width, vocab_size=VOCAB,
                        max_position_embeddings=64, pad_token_id=0)
    return BertModel(config).eval()


def build(name: str) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """A model and its input from a name such as `gpt-12`, `gpt2-4` or `bert-4` (family-layers)."""
    family, _, layers = name.rpartition("-")
    if not family or not layers.isdigit():
        raise ValueError(f"model names look like gpt-12, gpt2-4 or bert-4 (got {name!r})")
    torch.manual_seed(0)
    n = int(layers)
    if family == "gpt":
        return GPT(layers=n).eval(), (gpt_input(),)
    if family == "gpt2":
        return hf_gpt2(n), (torch.randint(0, VOCAB, (2, 16)),)
    if family == "bert":
        return hf_bert(n), (torch.randint(0, VOCAB, (2, 16)),)
    raise ValueError(f"unknown model family {family!r}: use gpt, gpt2 or bert")
