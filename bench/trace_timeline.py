#!/usr/bin/env python3
"""Prints a ktune --trace file (Chrome trace events) as a timeline: one line per span, sorted by
start, with its process, thread, start and duration in milliseconds from the trace's first
event. The quickest way to find a run's critical path (what the last span waited on).

Usage: bench/trace_timeline.py TRACE.json [--min-ms X] [--name SUBSTRING]"""
import argparse, json

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("trace")
ap.add_argument("--min-ms", type=float, default=0.0, help="leave out spans shorter than this")
ap.add_argument("--name", default="", help="only spans whose name or detail contains this")
args = ap.parse_args()
text = open(args.trace).read().rstrip()
events = json.loads(text.rstrip(",") + ("" if text.endswith("]") else "]"))
if not events:
    raise SystemExit("no events")
t0 = min(e["ts"] for e in events)
pids = {}
for e in sorted(events, key=lambda e: e["ts"]):
    pids.setdefault(e["pid"], len(pids))
print(f"{'start':>9} {'dur':>9} {'end':>9}  p.t  name")
for e in sorted(events, key=lambda e: (e["ts"], -e["dur"])):
    dur = e["dur"] / 1e3
    if dur < args.min_ms:
        continue
    detail = e.get("args", {})
    label = e["name"] + (f" {json.dumps(detail, separators=(',', ':'))}" if detail else "")
    if args.name and args.name not in label:
        continue
    start = (e["ts"] - t0) / 1e3
    print(f"{start:9.1f} {dur:9.1f} {start + dur:9.1f}  {pids[e['pid']]}.{e.get('tid', 0):<3} "
          f"{label[:140]}")
