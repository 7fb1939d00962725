#!/usr/bin/env python3
"""How far cuBLAS's half-precision GEMMs are from an fp32-accumulated reference, in units of the
reference output's RMS (what Tolerance::rms_atol allows; docs/architecture.md, "Half-type GEMM
outputs"). For the shapes of bench/gpu/shape_sweep.sh (its problems.txt lines: M N K DTYPE EPI,
bf16 and f16 only), inputs uniform in [-1, 1) as ktune fills them: torch.mm in the dtype (cuBLAS,
reduced-precision reductions allowed, PyTorch's default) against torch.mm in fp32 of the same
inputs, its output rounded to the dtype as ktune's reference output is. Prints each shape's
largest |difference| / RMS, and the rms_atol it needs beside the dtype's default rtol 2e-2 and
atol 1e-2 (the largest (|difference| - atol - rtol |expected|) / RMS); at the end the largest of
each over all shapes, next to the allowance (bf16 2^-5, f16 2^-8).

    python3 bench/gpu/half_gemm_error.py PROBLEMS.txt [PROBLEMS.txt ...]"""
import sys

import torch


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    torch.manual_seed(0)
    allowance = {"bf16": 2.0**-5, "f16": 2.0**-8}
    dtypes = {"bf16": torch.bfloat16, "f16": torch.float16}
    worst = {}
    for path in sys.argv[1:]:
        for line in open(path):
            m, n, k, dtype, _ = line.split()
            if dtype not in dtypes:
                continue
            m, n, k = int(m), int(n), int(k)
            a = (torch.rand(m, k, device="cuda") * 2 - 1).to(dtypes[dtype])
            b = (torch.rand(k, n, device="cuda") * 2 - 1).to(dtypes[dtype])
            ref = torch.mm(a.float(), b.float()).to(dtypes[dtype]).float()
            out = torch.mm(a, b).float()
            rms = ref.pow(2).mean().sqrt().item()
            if rms == 0:
                continue
            diff = (out - ref).abs()
            ratio = diff.max().item() / rms
            needed = max(0.0, (diff - 1e-2 - 2e-2 * ref.abs()).max().item() / rms)
            w = worst.setdefault(dtype, [0.0, 0.0])
            w[0], w[1] = max(w[0], ratio), max(w[1], needed)
            print(f"{m}x{n}x{k} {dtype}: max |diff| / RMS {ratio:.5f}, rms_atol needed {needed:.5f} "
                  f"({needed / allowance[dtype]:.2f} of the allowance)")
    for dtype, (ratio, needed) in sorted(worst.items()):
        print(f"largest, {dtype}: |diff| / RMS {ratio:.5f}; rms_atol needed {needed:.5f} against "
              f"{allowance[dtype]:.5f} ({needed / allowance[dtype]:.2f} of it)")


if __name__ == "__main__":
    main()
