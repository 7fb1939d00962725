#!/usr/bin/env python3
"""What torch reaches over a decode GEMM's B (4096 x 14336 bf16, 117 MB) on this GPU, timed by
replaying a CUDA graph of 10 calls (30 replays, median): a read-only reduction, a copy (reads and
writes), and the GEMM at 128x14336x4096 through torch (cuBLAS) with B as K x N (ktune gemm's
layout) and as N x K (nn.Linear's). Used by bench/gpu/decode_bytes.sh."""
import statistics

import torch


def graph_us(f):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(10):
        f()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(10):
            f()
    times = []
    for _ in range(30):
        start.record()
        graph.replay()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 10 * 1e3)
    return statistics.median(times)


def main():
    m, n, k = 128, 14336, 4096
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    w = b.t().contiguous()
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    row = b.view(1, -1)
    total = torch.empty((1,), device="cuda", dtype=torch.float32)
    nbytes = b.numel() * 2
    cases = [
        ("read-only reduction of B", 1, lambda: torch.sum(row, dim=(1,), dtype=torch.float32, out=total)),
        ("copy of B (read + write)", 2, lambda: w.view(-1).copy_(b.view(-1))),
        ("torch.mm, B as K x N", 1, lambda: torch.mm(a, b, out=c)),
        ("torch.mm, B as N x K (nn.Linear)", 1, lambda: torch.mm(a, w.t(), out=c)),
    ]
    for name, passes, f in cases:
        us = graph_us(f)
        print(f"{name}: {us:.1f} us, {passes * nbytes / us / 1e6:.2f} TB/s")


if __name__ == "__main__":
    main()
