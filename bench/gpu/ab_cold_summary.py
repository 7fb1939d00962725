#!/usr/bin/env python3
"""Summarises bench/gpu/ab_cold.sh: per shape and build, the cold tuning times over the repeats
(median, min-max): the process's wall time where the log has it, and "Tuned ... in" (which ends
before the process's exit); the pick's time against cuBLAS, and the phases of the traces (the
search, the decide stage, the worker's checks).

Usage: bench/gpu/ab_cold_summary.py OUTDIR"""
import argparse, collections, glob, os, re, statistics

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("out")
args = ap.parse_args()

rows = collections.defaultdict(lambda: collections.defaultdict(list))
for log in sorted(glob.glob(os.path.join(args.out, "*.log"))):
    m = re.match(r"(base|new)-(\d+x\d+x\d+)-(\d+)\.log$", os.path.basename(log))
    if not m:
        continue
    build, shape, _ = m.groups()
    text = open(log).read()
    r = rows[shape][build]
    t = re.search(r"^Tuned gemm \S+ \S+ in ([\d.]+) s", text, re.M)
    w = re.search(r"^wall (\d+) ms", text, re.M)
    if t:
        r.append({"tuned": float(t.group(1)), "wall": int(w.group(1)) / 1e3 if w else None})
    else:
        r.append({"tuned": None})
        continue
    d = r[-1]
    p = re.search(r"^Pick: (\S+) at [\d.]+ TFLOP/s \(([\d.]+) ms\)", text, re.M)
    c = re.search(r"^cuBLAS: .*pick / cuBLAS time: ([\d.]+)", text, re.M)
    d["pick"] = p.group(1) if p else "?"
    d["over_cublas"] = float(c.group(1)) if c else None
    for name in ("search", "decide", "check", "measure"):
        s = re.search(rf"^  {name}\s+(\d+) x\s+([\d.]+) ms", text, re.M)
        d[name] = (int(s.group(1)), float(s.group(2))) if s else (0, 0.0)


def spread(values):
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    return f"{statistics.median(values):.3f} [{min(values):.3f}, {max(values):.3f}]"


print("| shape | build | cold wall s, median [min, max] | \"Tuned in\" s | pick / cuBLAS "
      "| search ms | decide ms | checks (mean ms) | runs |")
print("|---|---|---|---|---|---:|---:|---|---:|")
for shape in rows:
    for build in ("base", "new"):
        runs = rows[shape][build]
        ok = [d for d in runs if d["tuned"] is not None]
        if not ok:
            print(f"| {shape} | {build} | failed | | | | | | {len(runs)} |")
            continue
        checks = sum(d["check"][0] for d in ok) / len(ok)
        check_ms = sum(d["check"][1] for d in ok) / max(1, sum(d["check"][0] for d in ok))
        print(f"| {shape} | {build} | {spread([d['wall'] for d in ok])} "
              f"| {spread([d['tuned'] for d in ok])} "
              f"| {spread([d['over_cublas'] for d in ok])} "
              f"| {statistics.median(d['search'][1] for d in ok):.0f} "
              f"| {statistics.median(d['decide'][1] for d in ok):.0f} "
              f"| {checks:.0f} ({check_ms:.2f}) | {len(runs)} |")
