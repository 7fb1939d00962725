#!/usr/bin/env python3
"""Prints, for one ncu_gemm.sh CSV, a line per distinct GEMM kernel launch (ktune's `gemm` and
`gemm_epilogue`, cuBLAS's nvjet/xmma/cutlass kernels): its launch shape and the metrics that set
a template against cuBLAS (duration, SM clock, compute and L2 throughput, the sectors written
into L2 (ncu's "L2 Compression Input Sectors"), issued IPC, DRAM throughput).

    python3 bench/gpu/ncu_summary.py OUTDIR/<problem>.csv
"""
import collections
import csv
import sys

METRICS = [("Duration", "us"), ("SM Frequency", "GHz"), ("Compute (SM) Throughput", "SM%"),
           ("L2 Cache Throughput", "L2%"), ("L2 Compression Input Sectors", "L2 wr sectors"),
           ("Issued Ipc Active", "IPC"), ("DRAM Throughput", "DRAM%"),
           ("Dynamic Shared Memory Per Block", "smem KB"), ("Cluster Size", "cluster")]
KERNELS = ("gemm", "nvjet", "sm90_xmma", "cutlass")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    launches = collections.OrderedDict()
    with open(sys.argv[1]) as f:
        for r in csv.DictReader(f):
            key = (r["ID"], r["Kernel Name"], r["Block Size"], r["Grid Size"])
            launches.setdefault(key, {})[r["Metric Name"]] = r["Metric Value"]
    seen = set()
    print("| kernel | block | grid | " + " | ".join(h for _, h in METRICS) + " |")
    print("|---|---|---|" + "---:|" * len(METRICS))
    for (_, name, block, grid), m in launches.items():
        if not name.startswith(KERNELS):
            continue
        sig = (name, block, grid, m.get("Dynamic Shared Memory Per Block"), m.get("Cluster Size"))
        if sig in seen:
            continue
        seen.add(sig)
        print(f"| {name[:48]} | {block} | {grid} | " +
              " | ".join(m.get(k, "-") for k, _ in METRICS) + " |")


if __name__ == "__main__":
    main()
