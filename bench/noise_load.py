#!/usr/bin/env python3
"""A bursty competing load for bench/noise_agreement.sh: one process that alternates busy spells
and idle spells of random length (uniform in [0.1, 1.0] s each), like builds and other jobs
sharing a machine; it averages about half a core. Runs until killed or --seconds pass."""
import argparse
import random
import time

parser = argparse.ArgumentParser()
parser.add_argument("--seconds", type=float, default=600)
parser.add_argument("--seed", type=int, default=0)
args = parser.parse_args()
rng = random.Random(args.seed)
end = time.monotonic() + args.seconds
while time.monotonic() < end:
    busy_until = time.monotonic() + rng.uniform(0.1, 1.0)
    while time.monotonic() < busy_until:
        pass
    time.sleep(rng.uniform(0.1, 1.0))
