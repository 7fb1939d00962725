#!/usr/bin/env python3
"""Kernel Tuner's strategies in its simulation mode on a space ktune recorded (a T4 file).

    kt_simulate.py SPACE.t4.json [--seeds 50] [--max-fevals N] [--strategies a,b] [--json OUT]

The T4 file (`ktune cache export --format t4` of an exhaustive, non-abandoning tuning) becomes
a Kernel Tuner cache file: the header fields `util.process_cache` checks and `tune_cache` reads
(device_name, kernel_name, problem_size, tune_params_keys, tune_params, objective) and one entry
per config, keyed by its values joined with "," as the simulation runner looks them up, with
"time" in ms, compile/verification/benchmark times for the simulated clock, and an error name
("RuntimeFailedConfig" etc., as `read_cache` maps them) for a config without a valid time. Kernel
Tuner's `tune_cache` then restricts the space to the configs without an error, as in its own
simulations. Rows without parameters (library calls) are left out: Kernel Tuner cannot propose
them.

Per strategy and seed (Python's and numpy's random seeded, and Kernel Tuner's `seed`): the unique
evaluations until the first config within --within of the optimum, and the simulated seconds
(compile + benchmark times) up to then, under a budget of --max-fevals unique evaluations.
"""
import argparse
import contextlib
import io
import json
import math
import os
import random
import statistics
import sys
import tempfile
import time
import warnings

DEFAULT_STRATEGIES = [
    "random_sample", "greedy_ils", "genetic_algorithm", "simulated_annealing", "bayes_opt",
    "mls", "basinhopping", "pso", "firefly_algorithm", "dual_annealing",
]

ERROR_NAMES = {  # T4 invalidity -> Kernel Tuner's error config names
    "compile": "CompilationFailedConfig",
    "constraints": "InvalidConfig",
}


def t4_to_kt_cache(t4, name):
    """The T4 document as a Kernel Tuner cache dict, and the optimum's time in ms."""
    rows = [r for r in t4["results"] if r["configuration"]]
    keys = list(rows[0]["configuration"].keys())
    values = {k: [] for k in keys}
    for r in rows:
        for k in keys:
            v = r["configuration"][k]
            if v not in values[k]:
                values[k].append(v)
    for k in keys:  # neighbouring values next to each other, as a user writes tune_params
        if all(isinstance(v, (int, float)) for v in values[k]):
            values[k].sort()
    cache = {}
    best = math.inf
    for r in rows:
        cfg = r["configuration"]
        key = ",".join(str(cfg[k]) for k in keys)
        times = r.get("times", {})
        runtimes = times.get("runtimes", [])
        compile_ms = times.get("compilation_time", times.get("compilation", 0.0))
        entry = dict(cfg)
        ok = r["invalidity"] == "correct" and runtimes
        if ok:
            t = float(statistics.median(runtimes))
            runs = next((m["value"] for m in r.get("measurements", []) if m["name"] == "runs"),
                        len(runtimes))
            entry.update(time=t, times=list(runtimes), compile_time=compile_ms,
                         verification_time=0.0, benchmark_time=t * runs)
            best = min(best, t)
        else:
            entry.update(time=ERROR_NAMES.get(r["invalidity"], "RuntimeFailedConfig"),
                         compile_time=compile_ms, verification_time=0.0, benchmark_time=0.0)
        entry.update(strategy_time=0, framework_time=0, timestamp="")
        cache[key] = entry
    doc = {
        "device_name": t4.get("metadata", {}).get("device", "ktune-recorded"),
        "kernel_name": name,
        "problem_size": [1],
        "tune_params_keys": keys,
        "tune_params": values,
        "objective": "time",
        "cache": cache,
    }
    return doc, best


def run_one(cache_path, strategy, seed, max_fevals):
    import numpy as np
    from kernel_tuner import tune_cache

    random.seed(seed)
    np.random.seed(seed)
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        results, _ = tune_cache(cache_path, strategy=strategy, seed=seed, quiet=True,
                                strategy_options={"max_fevals": max_fevals})
    return results


def score(results, keys, target):
    """Unique evaluations and simulated seconds until a time <= target, or None."""
    seen = set()
    sim_ms = 0.0
    for r in results:
        key = ",".join(str(r[k]) for k in keys)
        if key in seen:
            continue
        seen.add(key)
        sim_ms += r.get("compile_time", 0) + r.get("benchmark_time", 0)
        t = r.get("time")
        if isinstance(t, (int, float)) and "__error__" not in r and t <= target:
            return len(seen), sim_ms / 1e3
    return None


def median_or_none(xs, n):
    """The median over n seeds where a miss counts as infinitely many (None if half miss)."""
    vals = sorted(xs) + [math.inf] * (n - len(xs))
    m = statistics.median(vals) if vals else math.inf
    return None if math.isinf(m) else m


def score_strategies(doc, name, strategies, seeds, max_fevals, target):
    """Each strategy over `seeds` seeds on the cache document `doc` (t4_to_kt_cache): a row with
    the median evaluations and simulated seconds to `target` and the fraction of seeds that
    reached it, or the error of a strategy that does not run here."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, name + "_kt_cache.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        for strategy in strategies:
            evals, secs, error = [], [], None
            t0 = time.time()
            for seed in range(seeds):
                try:
                    s = score(run_one(path, strategy, seed, max_fevals), doc["tune_params_keys"],
                              target)
                except Exception as e:  # a strategy that does not run here: say why, go on
                    error = f"{type(e).__name__}: {e}"[:200]
                    break
                if s:
                    evals.append(s[0])
                    secs.append(s[1])
            row = {"strategy": strategy, "error": error}
            if not error:
                row.update(evals_median=median_or_none(evals, seeds),
                           time_s_median=median_or_none(secs, seeds),
                           reached_fraction=len(evals) / seeds)
            print(f"{name} {strategy}: {row} ({time.time() - t0:.0f} s)", file=sys.stderr)
            rows.append(row)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("t4")
    ap.add_argument("--seeds", type=int, default=50)
    ap.add_argument("--max-fevals", type=int, default=0,
                    help="unique evaluations per run (default: a fifth of the valid configs)")
    ap.add_argument("--within", type=float, default=0.02)
    ap.add_argument("--strategies", default=",".join(DEFAULT_STRATEGIES))
    ap.add_argument("--json", help="write the scores here")
    a = ap.parse_args()

    with open(a.t4) as f:
        t4 = json.load(f)
    name = os.path.basename(a.t4).split(".")[0]
    doc, best = t4_to_kt_cache(t4, name)
    valid = sum(1 for e in doc["cache"].values() if not isinstance(e["time"], str))
    max_fevals = a.max_fevals or max(1, valid // 5)
    target = best * (1 + a.within)
    out = {"space": name, "valid": valid, "max_fevals": max_fevals, "seeds": a.seeds,
           "strategies": []}
    out["strategies"] = score_strategies(doc, name, a.strategies.split(","), a.seeds, max_fevals,
                                         target)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    else:
        json.dump(out, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
