#!/usr/bin/env python3
"""Compares the two builds of an ab_gemm.sh run: per problem and repetition, the best template of
each (median us, its name) and the best library GEMM (+ separate epilogue), then with --configs
every template config's median in both builds.

    python3 bench/gpu/ab_summary.py OUTDIR [--configs]
"""
import glob
import json
import re
import sys
from collections import defaultdict


def medians(path):
    out = {}
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if r.get("event") == "candidate" and "median_ns" in r:
                out[r["name"]] = r["median_ns"] / 1e3
    return out


def is_template(name):
    return name.startswith(("cuda_", "restride+"))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    runs = defaultdict(dict)
    for path in sorted(glob.glob(f"{sys.argv[1]}/*.jsonl")):
        m = re.search(r"/(ktune-base|ktune)-(.+)-(\d+)\.jsonl$", path)
        if m:
            runs[m.group(2)][(m.group(1), m.group(3))] = medians(path)
    print("| problem | rep | base: best template us | new: best template us | new / base | "
          "best library us (base, new) | library / new template |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for problem, by in sorted(runs.items()):
        for rep in sorted({r for _, r in by}):
            base, new = by.get(("ktune-base", rep)), by.get(("ktune", rep))
            if not base or not new:
                continue
            bt = min((v, k) for k, v in base.items() if is_template(k))
            nt = min((v, k) for k, v in new.items() if is_template(k))
            bl = min(v for k, v in base.items() if not is_template(k))
            nl = min(v for k, v in new.items() if not is_template(k))
            print(f"| {problem} | {rep} | {bt[0]:.1f} ({bt[1]}) | {nt[0]:.1f} ({nt[1]}) | "
                  f"{nt[0] / bt[0]:.3f} | {bl:.1f}, {nl:.1f} | {nl / nt[0]:.3f} |")
    if "--configs" in sys.argv:
        for problem, by in sorted(runs.items()):
            print(f"\n{problem}: config, base us per rep -> new us per rep")
            reps = sorted({r for _, r in by})
            names = sorted({k for d in by.values() for k in d if is_template(k)},
                           key=lambda k: by.get(("ktune-base", reps[0]), {}).get(k, 1e18))
            for name in names:
                b = " ".join(f"{by.get(('ktune-base', r), {}).get(name, float('nan')):8.1f}" for r in reps)
                n = " ".join(f"{by.get(('ktune', r), {}).get(name, float('nan')):8.1f}" for r in reps)
                print(f"  {b} -> {n}  {name}")


if __name__ == "__main__":
    main()
