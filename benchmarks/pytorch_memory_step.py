"""A small PyTorch training loop for the memory analysis of a pool allocator (issue 18): a two-layer MLP, SGD,
batch 256, a few steps. Profiled with PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync, every tensor is its own
cudaMallocAsync allocation, which the collector sees (Sanitizer MEMORY_ALLOC_ASYNC), so `reuselens memory`
reports tensors; with PyTorch's default caching allocator it sees only the allocator's segments.

    PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync reuselens profile --run-dir RUN -- python3 benchmarks/pytorch_memory_step.py 3
    reuselens memory RUN
"""

from __future__ import annotations

import sys

import torch


def main(steps: int) -> float:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 10)).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    inputs = torch.randn(256, 1024, device="cuda")
    labels = torch.randint(0, 10, (256,), device="cuda")
    loss = torch.zeros((), device="cuda")
    for _ in range(steps):
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(inputs), labels)
        loss.backward()
        optimizer.step()
    torch.cuda.synchronize()
    return float(loss)


if __name__ == "__main__":
    print(f"loss {main(int(sys.argv[1]) if len(sys.argv) > 1 else 3):.4f}")
