"""Two ranks train a DDP model under torch.compile; DDPOptimizer splits its graph by bucket.

Run with: torchrun --standalone --nproc-per-node 2 ddp_buckets.py
Each rank prints one line `RANK <r> buckets=<n> nodes=<a,b,...> graphs=<g>`: the buckets
DDPOptimizer made (read from its own backend, independently of any recording) and the
number of graphs Dynamo compiled (torch._dynamo's counters).
"""

import sys

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Tower(nn.Module):
    def __init__(self):
        super().__init__()
        self.l0 = nn.Linear(1024, 1024)
        self.l1 = nn.Linear(1024, 1024)
        self.l2 = nn.Linear(1024, 1024)
        self.l3 = nn.Linear(1024, 1024)
        self.l4 = nn.Linear(1024, 1024)
        self.l5 = nn.Linear(1024, 1024)

    def forward(self, x):
        x = torch.relu(self.l0(x))
        x = torch.relu(self.l1(x))
        x = torch.relu(self.l2(x))
        x = torch.relu(self.l3(x))
        x = torch.relu(self.l4(x))
        return self.l5(x)


seen = []


def backend(gm, example_inputs):
    # DDPOptimizer calls this once per bucket's subgraph: count each one's call nodes
    seen.append(sum(1 for n in gm.graph.nodes if n.op not in ("placeholder", "output")))
    return gm.forward


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = DDP(Tower(), bucket_cap_mb=5)
    compiled = torch.compile(model, backend=backend)
    compiled(torch.randn(8, 1024)).sum().backward()
    graphs = torch._dynamo.utils.counters["stats"]["unique_graphs"]
    line = f"RANK {rank} buckets={len(seen)} nodes={','.join(map(str, seen))} graphs={graphs}\n"
    sys.stdout.write(line)  # one write: the ranks share one pipe
    sys.stdout.flush()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
