#!/usr/bin/env python3
"""Kernel Tuner's side of bench/space_build.sh: builds each space of spaces.json with
kernel_tuner.searchspace.Searchspace (its default python-constraint solver) and prints, per space,
one JSON line: name, valid count, wall and CPU seconds (best of --repeats)."""
import argparse
import json
import sys
import time

from kernel_tuner.searchspace import Searchspace


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("spaces")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    for s in json.load(open(a.spaces)):
        if a.only and s["name"] != a.only:
            continue
        times, cpu, valid = [], [], None
        for _ in range(a.repeats):
            t0, c0 = time.perf_counter(), time.process_time()
            # No block_size_names among the parameters: Kernel Tuner adds no restriction of its
            # own, so both tools build exactly the restrictions in spaces.json.
            ss = Searchspace(s["params"], list(s["restrictions"]), max_threads=1 << 30)
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
            valid = ss.size
        print(json.dumps({"name": s["name"], "valid": valid, "seconds": min(times), "cpu_seconds": min(cpu),
                          "all_seconds": times, "all_cpu_seconds": cpu}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
