"""Two ranks compile the same two functions and trace them differently.

Run with: torchrun --standalone --nproc-per-node 2 rank_branch.py
`branchy` takes another branch on rank 1 (a test of the rank, which Dynamo reads as a
constant); `sized` is called with 4 rows on rank 0 and 6 on rank 1, then once more on
rank 1 only, with 8 rows (a recompile there). Each rank prints `RANK <r> graphs=<g>
nodes=<n>`: the graphs Dynamo compiled (torch._dynamo's counters) and the nodes of each
graph as its own backend saw them, in order.
"""

import sys

import torch
import torch.distributed as dist

graphs = []


def backend(gm, example_inputs):
    graphs.append(sum(1 for n in gm.graph.nodes if n.op not in ("placeholder", "output")))
    return gm.forward


def branchy(x):
    y = x.sin()
    if dist.get_rank() == 1:
        y = y * 2
    return y.cos()


def sized(x):
    return (x * 3).sum(0)


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.compile(branchy, backend=backend)(torch.ones(4))
    compiled = torch.compile(sized, backend=backend)
    compiled(torch.ones(4 + 2 * rank, 3))
    if rank == 1:
        compiled(torch.ones(8, 3))   # a recompile on rank 1 only
    count = torch._dynamo.utils.counters["stats"]["unique_graphs"]
    line = f"RANK {rank} graphs={count} nodes={','.join(map(str, graphs))}\n"
    sys.stdout.write(line)  # one write: the ranks share one pipe
    sys.stdout.flush()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
