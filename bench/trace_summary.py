#!/usr/bin/env python3
"""Sums a ktune --trace file (Chrome trace events) by process and event name: count, total and
mean milliseconds, and the process's span from its first event to its last.

Usage: bench/trace_summary.py TRACE.json [--top N]"""
import argparse, collections, json

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("trace")
ap.add_argument("--top", type=int, default=25, help="rows per process (default 25)")
args = ap.parse_args()
text = open(args.trace).read().rstrip()
events = json.loads(text.rstrip(",") + ("" if text.endswith("]") else "]"))
by_pid = collections.defaultdict(list)
for e in events:
    by_pid[e["pid"]].append(e)
for pid, evs in sorted(by_pid.items(), key=lambda kv: min(e["ts"] for e in kv[1])):
    start = min(e["ts"] for e in evs)
    end = max(e["ts"] + e["dur"] for e in evs)
    cats = sorted({e["cat"] for e in evs})
    print(f"process {pid} ({', '.join(cats)}): {len(evs)} events over {(end - start) / 1e3:.1f} ms")
    agg = collections.defaultdict(lambda: [0, 0])
    for e in evs:
        a = agg[e["name"]]
        a[0] += 1
        a[1] += e["dur"]
    rows = sorted(agg.items(), key=lambda kv: -kv[1][1])[: args.top]
    for name, (n, total) in rows:
        print(f"  {name:<18} {n:>6} x  {total / 1e3:>10.1f} ms  (mean {total / n / 1e3:.2f} ms)")
