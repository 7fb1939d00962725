#!/usr/bin/env python3
"""Reads what bench/noise_agreement.sh wrote (LABEL-N.jsonl: ktune's JSON log of one tuning;
times.txt: LABEL N seconds) and prints, per label: the picks, the agreement (fraction of runs
that picked the modal winner), the Spearman rank correlation of the candidates' medians between
every two runs (mean, min, max), each pick's slowdown against a neutral ranking (every
candidate's median over all runs of all labels), and the tuning time (mean, sd, min, max)."""
import collections
import glob
import itertools
import json
import os
import statistics
import sys

out = sys.argv[1]


def ranks(values):
    """Average ranks (1-based), ties sharing the mean of their positions."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    r = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(a, b):
    common = sorted(set(a) & set(b))
    ra = ranks([a[n] for n in common])
    rb = ranks([b[n] for n in common])
    return statistics.correlation(ra, rb)


runs = collections.defaultdict(list)  # label -> [(winner, {name: median_ns})]
for path in sorted(glob.glob(os.path.join(out, "*.jsonl"))):
    label = os.path.basename(path).rsplit("-", 1)[0]
    medians, winner = {}, None
    with open(path) as f:
        for line in f:
            e = json.loads(line)
            if e["event"] == "candidate" and e["outcome"] == "ok" and "median_ns" in e:
                medians[e["name"]] = e["median_ns"]
            elif e["event"] == "selection":
                winner = e["winner"]
    runs[label].append((winner, medians))

times = collections.defaultdict(list)
with open(os.path.join(out, "times.txt")) as f:
    for line in f:
        label, _, seconds = line.split()
        times[label].append(float(seconds))

everything = collections.defaultdict(list)
for label_runs in runs.values():
    for _, medians in label_runs:
        for name, ns in medians.items():
            everything[name].append(ns)
neutral = {name: statistics.median(v) for name, v in everything.items()}
best = min(neutral.values())

for label, label_runs in runs.items():
    winners = [w for w, _ in label_runs]
    modal, count = collections.Counter(winners).most_common(1)[0]
    rhos = [spearman(a, b) for (_, a), (_, b) in itertools.combinations(label_runs, 2)]
    slow = [neutral[w] / best for w in winners]
    t = times[label]
    print(f"{label}: {len(winners)} runs")
    print(f"  agreement {count}/{len(winners)} = {count / len(winners):.2f} (modal pick {modal})")
    for w in sorted(set(winners)):
        print(f"    {winners.count(w)}x {w}  ({neutral[w] / best:.3f}x the neutral best)")
    if rhos:
        print(f"  spearman mean {statistics.mean(rhos):.3f} min {min(rhos):.3f} "
              f"max {max(rhos):.3f} over {len(rhos)} pairs")
    print(f"  pick slowdown vs neutral best: mean {statistics.mean(slow):.3f} max {max(slow):.3f}")
    sd = statistics.stdev(t) if len(t) > 1 else 0
    print(f"  tuning time: mean {statistics.mean(t):.1f} s sd {sd:.1f} min {min(t):.1f} "
          f"max {max(t):.1f}")
