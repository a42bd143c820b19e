"""https://github.com/samvanstroud/hepattn/issues/57 — "Avoid recompilations in mask
attention": `attn_mask[torch.where(attn_mask.sum(-1) == 0)] = True` hits the recompile
limit in `torch_dynamo_resume_in_forward_at_50`, on `2 <= ___stack2[0].size()[0]`.

Mechanism: one-argument `torch.where` is `nonzero`, whose output size depends on the data:
a graph break; the code after it is a resume function whose input is that index tensor,
and its size (how many rows are empty: 0, 1, 2, ...) is specialized at 0 and 1.
A right answer says: the break at the `torch.where` line; recompiles of forward's resume
function on the size of a value Dynamo made (not an argument the user can mark); the fix
keeps the shape fixed: `attn_mask | (attn_mask.sum(-1, keepdim=True) == 0)`.
"""
import torch


def forward(q, attn_mask):
    attn_mask = attn_mask.clone()
    attn_mask[torch.where(attn_mask.sum(-1) == 0)] = True  # user line
    return q.masked_fill(attn_mask, 0.0)


compiled = torch.compile(forward, backend="eager")
q = torch.randn(6, 4)
for empty in range(4):   # 0, 1, 2, 3 rows with no key to attend
    mask = torch.ones(6, 4, dtype=torch.bool)
    mask[:empty] = False
    compiled(q, mask)
