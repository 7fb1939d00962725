#!/usr/bin/env python3
"""One recorded space's comparison for bench/search_strategies.sh, as a markdown subsection.

    compare.py SPACE.t4.json --ktune BIN [--seeds 50]

ktune's strategies through `ktune simulate --t4` (library calls left out: Kernel Tuner cannot
propose them), each with a budget of a fifth of the configs, and `auto` with its own budget;
Kernel Tuner's strategies through kt_simulate.py with the same budget. Then the issue's target
for the default: within 2% of the optimum with at most 10% of the evaluations (median of the
seeds), and fewer than Kernel Tuner's best strategy.
"""
import argparse
import json
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kt_simulate  # noqa: E402


def simulate(ktune, t4, seeds, strategies, max_evals=None):
    cmd = [ktune, "simulate", "--t4", t4, "--no-library", "--json", "--seeds", str(seeds),
           "--strategy", ",".join(strategies)]
    if max_evals:
        cmd += ["--max-evals", str(max_evals)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def fmt(v, digits=0):
    return "-" if v is None else f"{v:.{digits}f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("t4")
    ap.add_argument("--ktune", required=True)
    ap.add_argument("--seeds", type=int, default=50)
    ap.add_argument("--kt-strategies", default=",".join(kt_simulate.DEFAULT_STRATEGIES))
    a = ap.parse_args()
    space = os.path.basename(a.t4).split(".")[0]

    names = ["random", "hill_climbing", "annealing", "genetic", "model"]
    probe = simulate(a.ktune, a.t4, 1, ["exhaustive"])
    n = probe["candidates"]
    cap = max(1, n // 5)
    ours = simulate(a.ktune, a.t4, a.seeds, names, cap)
    auto = simulate(a.ktune, a.t4, a.seeds, ["auto"])

    # Kernel Tuner in this process (its imports are slow once, not per strategy).
    with open(a.t4) as f:
        doc, best = kt_simulate.t4_to_kt_cache(json.load(f), space)
    kt_rows = [(r["strategy"], r["error"], r.get("evals_median"), r.get("time_s_median"),
                r.get("reached_fraction", 0))
               for r in kt_simulate.score_strategies(doc, space, a.kt_strategies.split(","),
                                                     a.seeds, cap, best * 1.02)]

    print(f"\n#### {space}: {n} configs, {probe['candidates_within']} within 2% of the optimum "
          f"({probe['optimum_ns'] / 1e3:.1f} us)\n")
    print(f"Budget per run: {cap} evaluations (a fifth), `auto`: its own. Median over "
          f"{a.seeds} seeds of the evaluations (and simulated seconds: compile + timed runs) "
          "until a config within 2% of the optimum; reached: the seeds that got there within "
          "the budget (a median is `-` when half or more did not).\n")
    print("| tuner | strategy | evaluations | % of space | simulated s | reached |")
    print("|---|---|---:|---:|---:|---:|")

    def row(tuner, name, ev, t, frac):
        pct = "-" if ev is None else f"{100 * ev / n:.1f}%"
        print(f"| {tuner} | {name} | {fmt(ev)} | {pct} | {fmt(t, 1)} | {100 * frac:.0f}% |")

    def med(s, key):
        v = s[key]["median"]
        return None if v is None else v

    a_s = auto["strategies"][0]
    row("ktune", "auto (default)", med(a_s, "evals"), med(a_s, "time_s"), a_s["reached_fraction"])
    for s in ours["strategies"]:
        row("ktune", s["strategy"], med(s, "evals"), med(s, "time_s"), s["reached_fraction"])
    kt_best = None
    for strategy, error, ev, t, frac in kt_rows:
        if error:
            print(f"| Kernel Tuner | {strategy} | did not run: {error} | | | |")
            continue
        row("Kernel Tuner", strategy, ev, t, frac)
        if ev is not None and (kt_best is None or ev < kt_best[1]):
            kt_best = (strategy, ev)
    ev = med(a_s, "evals")
    tenth = ev is not None and ev <= n / 10
    fewer = ev is not None and (kt_best is None or ev < kt_best[1])
    best_text = f"{kt_best[0]}, {kt_best[1]:.0f}" if kt_best else "none reached"
    print(f"\nTarget for the default on {space}: median {fmt(ev)} evaluations "
          f"({'-' if ev is None else f'{100 * ev / n:.1f}%'} of {n}; <= 10%: "
          f"{'yes' if tenth else 'no'}), Kernel Tuner's best {best_text} (fewer: "
          f"{'yes' if fewer else 'no'}): **{'met' if tenth and fewer else 'not met'}**.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
