#!/usr/bin/env python3
"""ktune and Kernel Tuner side by side on the CUDA examples (issue 18, item 8).

For each example (examples/cuda_conv2d, examples/cuda_reduction) and problem:
  1. Kernel Tuner (tune_kernel, cupy backend, brute force) on the same source, space, restrictions
     and problem, in a child process with an empty cupy kernel cache (a cold tuning);
  2. `ktune tune <spec> --problem P --json-log F --no-cache`, timed around the subprocess;
  3. both winners compiled here with cupy.RawModule (same options) and timed in alternating
     rounds (CUDA events around each launch, the median per round, the ratio per round).
Then the fault run (bench/gpu/conv2d_faults.*): ktune once; Kernel Tuner once with the wrong-result
config and once with the illegal-address config, each in its own process.

The spaces, restrictions, launch geometry and problems are read from the specs, so both tools
tune exactly what the spec says. Writes results.json and results.md into the output folder
(merging with earlier parts, so the runs can be split: --examples, --problems, --skip-*).

Runs on the GPU machine (cupy, numpy; Kernel Tuner from its wheel):
  python3 bench/gpu/kernel_tuner_side_by_side.py --ktune build/bin/ktune --out OUT
"""
import argparse, json, math, os, re, subprocess, sys, tempfile, time
from pathlib import Path

import yaml  # PyYAML (a wheel in .whl/ where the machine lacks it)

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = {"conv2d": REPO / "examples/cuda_conv2d/spec.yaml",
            "reduction": REPO / "examples/cuda_reduction/spec.yaml"}
FAULTS = REPO / "bench/gpu/conv2d_faults.yaml"


# ---- the spec: space, expressions, launch geometry ----

def load_spec(path):
    spec = yaml.safe_load(Path(path).read_text())
    spec["_dir"] = Path(path).resolve().parent
    return spec

def py_expr(e):
    """A spec expression (muparser syntax, docs/spec.md) as Python."""
    e = str(e).replace("&&", " and ").replace("||", " or ").replace("^", "**")
    return re.sub(r"!(?!=)", " not ", e)

def ev(expr, names):
    env = {"min": min, "max": max, "floor": math.floor, "ceil": math.ceil, "abs": abs,
           "ceil_div": lambda a, b: -(-int(a) // int(b))}
    return eval(py_expr(expr), env, dict(names))  # the spec's own expressions, nothing else

def device_limits():
    import cupy as cp
    dev = cp.cuda.Device()
    a = dev.attributes
    cc = str(dev.compute_capability)  # "90"
    # ktune's max_shared_bytes_per_block is the opt-in size (CudaDeviceInfo).
    shared = a.get("MaxSharedMemoryPerBlockOptin", a["MaxSharedMemoryPerBlock"])
    return {"max_threads_per_block": a["MaxThreadsPerBlock"], "warp_size": a["WarpSize"],
            "max_shared_bytes_per_block": shared, "sm_count": a["MultiProcessorCount"],
            "cc_major": int(cc[:-1]), "cc_minor": int(cc[-1])}

def sizes(spec, problem):
    p = next(p for p in spec["problems"] if p.get("name") == problem)
    return {k: v for k, v in p.items() if k != "name"}

def valid(spec, names):
    return all(ev(r, names) for r in spec.get("restrictions", []))

def configs(spec):
    """Every combination of the parameters' values (the last varies fastest, as in ktune)."""
    import itertools
    names = list(spec["params"])
    return [dict(zip(names, v)) for v in itertools.product(*spec["params"].values())]

def steps(spec):
    """The launch steps: [{entry, grid, block, shared_bytes}], one for a single launch."""
    launch = spec["kernel"]["launch"]
    if isinstance(launch, dict):
        return [dict(launch, entry=spec["kernel"]["entry"])]
    return launch

def render(entry, cfg):
    return re.sub(r"\{\{\{?(\w+)\}?\}\}", lambda m: str(cfg[m.group(1)]), entry)

def options(spec, sz, extra=()):
    return ["-std=c++17"] + [f for f in spec["kernel"].get("flags", []) if not f.startswith("-std")] \
        + [f"-D{n}={sz[n]}" for n in spec["kernel"].get("size_defines", [])] + list(extra)

def source(spec, cfg):
    """The source as ktune and Kernel Tuner both compile it: a #define per parameter first."""
    text = (spec["_dir"] / spec["kernel"]["source"]).read_text()
    return "".join(f"#define {k} {v}\n" for k, v in cfg.items()) + "#line 1\n" + text


# ---- data and reference (the spec's inits; checks use the spec's tolerance) ----

def make_args(spec, sz, seed=0):
    """Host arguments in spec order: numpy arrays for buffers, numpy scalars for scalars."""
    import numpy as np
    rng, out = np.random.default_rng(seed), []
    for a in spec["args"]:
        dt = {"f32": np.float32, "i32": np.int32, "f64": np.float64}[a["dtype"]]
        if "value" in a:
            out.append(dt(ev(a["value"], sz)))
            continue
        shape = tuple(int(ev(s, sz)) for s in a["shape"])
        u = (a.get("init") or {}).get("uniform")
        out.append(rng.uniform(float(u["low"]), float(u["high"]), shape).astype(dt) if u else np.zeros(shape, dt))
    return out

def out_index(spec):
    return next(i for i, a in enumerate(spec["args"]) if a.get("role") in ("out", "inout"))

def tolerance(spec):
    t = dict(spec.get("tolerance") or {})
    t.update(spec["args"][out_index(spec)].get("tolerance") or {})
    return float(t.get("rtol", 1e-4)), float(t.get("atol", 1e-5))  # PyYAML reads 1e-4 as a string

def reference(spec, sz, host):
    """The expected output, from the spec's reference kernel (run through cupy)."""
    import cupy as cp
    ref = spec["reference"]["kernel"]
    rs = dict(spec, kernel=dict(ref, flags=ref.get("flags", [])), _dir=spec["_dir"])
    mod = cp.RawModule(code=(spec["_dir"] / ref["source"]).read_text(),
                       options=tuple(options(rs, sz)), name_expressions=[ref["entry"]])
    dev = [cp.asarray(h) if hasattr(h, "shape") and h.shape else h for h in host]
    launch(mod, [dict(ref["launch"], entry=ref["entry"])], {}, sz, dev)
    return cp.asnumpy(dev[out_index(spec)])

def launch(mod, stps, cfg, sz, dev):
    for s in stps:
        names = {**sz, **cfg}
        grid = tuple(int(ev(g, names)) for g in s["grid"])
        block = tuple(int(ev(b, names)) for b in s["block"])
        shmem = int(ev(s["shared_bytes"], names)) if "shared_bytes" in s else 0
        mod.get_function(render(s["entry"], cfg))(grid, block, tuple(dev), shared_mem=shmem)


# ---- Kernel Tuner (in a child process: a crash spoils the process's CUDA context) ----

def patch_kt_cupy_uuid():
    """Kernel Tuner 1.5.0's cupy backend reads the device's UUID as 16 bytes (uuid.UUID(bytes=...)),
    which cupy 14's device properties no longer give: it raises before tuning anything. Only the
    UUID's text in Kernel Tuner's environment record changes here."""
    import types
    import uuid
    import kernel_tuner.backends.cupy as ktc

    def lenient(bytes=None, **kw):
        raw = bytes.encode() if isinstance(bytes, str) else builtins_bytes(bytes or b"")
        return uuid.UUID(bytes=raw[:16].ljust(16, b"\0"))
    builtins_bytes = __builtins__["bytes"] if isinstance(__builtins__, dict) else __builtins__.bytes
    ktc.uuid = types.SimpleNamespace(UUID=lenient)

def kt_child(a):
    import numpy as np
    import kernel_tuner
    patch_kt_cupy_uuid()
    spec = load_spec(a.spec)
    sz, lim = sizes(spec, a.problem), device_limits()
    host = make_args(spec, sz)
    o, (rtol, atol) = out_index(spec), tolerance(spec)
    expected = reference(spec, sz, host)
    stp = steps(spec)[0]  # Kernel Tuner tunes one kernel: a launch list's first step
    params = {k: list(v) for k, v in spec["params"].items()}
    # Kernel Tuner computes grid = ceil(problem_size / divisor): the problem size is the spec's
    # grid itself and the divisors 1, so the geometry is the spec's, expression for expression.
    grid = lambda p: tuple(int(ev(g, {**sz, **p})) for g in stp["grid"])
    answer = [None] * len(host)
    answer[o] = expected
    verify = None
    if len(steps(spec)) > 1:  # step 1 writes partial sums into the scratch arg: check their sum
        sc = next(i for i, x in enumerate(spec["args"]) if x.get("role") == "scratch")
        answer = [None] * len(host)
        answer[sc] = host[sc]  # not compared (verify is), but makes Kernel Tuner copy it back
        want = float(expected.reshape(-1)[0])

        def verify(ans, res, atol=None):
            return abs(float(np.sum(res[sc], dtype=np.float64)) - want) <= atol_abs + rtol * abs(want)
        atol_abs = atol
    names = list(params)

    # Kernel Tuner calls a restriction with every parameter's value in order (python-constraint),
    # or with a dict when it is the only one: the spec's restrictions, constants bound.
    def kt_valid(*vals):
        p = vals[0] if len(vals) == 1 and isinstance(vals[0], dict) else dict(zip(names, vals))
        return bool(valid(spec, {**sz, **lim, **p}))
    t0 = time.perf_counter()
    rec = {"tool": "kernel_tuner", "version": kernel_tuner.__version__}
    try:
        one = lambda p: 1
        res, env = kernel_tuner.tune_kernel(
            render(stp["entry"], {k: k for k in params}),  # Kernel Tuner substitutes the values
            str(spec["_dir"] / spec["kernel"]["source"]), grid, host, params,
            grid_div_x=one, grid_div_y=one, grid_div_z=one,
            block_size_names=[str(b) for b in stp["block"]],
            restrictions=[kt_valid],
            answer=answer, verify=verify, atol=atol + rtol * float(np.max(np.abs(expected))),
            lang="cupy", compiler_options=options(spec, sz, a.extra), strategy="brute_force",
            quiet=True, cache=None)
        ok = [r for r in res if isinstance(r.get("time"), (int, float))]
        best = min(ok, key=lambda r: r["time"])
        failed = {}
        for r in res:  # compile or run failures Kernel Tuner skipped (it records their kind)
            if r not in ok:
                failed[str(r["time"])] = failed.get(str(r["time"]), 0) + 1
        rec.update(completed=True, configs=len(res), measured=len(ok), failed=failed,
                   best={k: best[k].item() if hasattr(best[k], "item") else best[k] for k in params},
                   best_ms=float(best["time"]))
    except BaseException as e:  # Kernel Tuner stops at the first fault it does not expect
        rec.update(completed=False, error=f"{type(e).__name__}: {str(e)[:400]}")
    rec["wall_s"] = time.perf_counter() - t0
    Path(a.result).write_text(json.dumps(rec))

def run_kt(spec_path, problem, extra=()):
    with tempfile.TemporaryDirectory() as d:
        res = Path(d) / "kt.json"
        env = dict(os.environ, CUPY_CACHE_DIR=str(Path(d) / "cupy"), CUDA_CACHE_DISABLE="1")  # cold
        cmd = [sys.executable, __file__, "--kt-child", str(spec_path), "--problem", problem,
               "--result", str(res)] + [f"--extra={x}" for x in extra]
        t0 = time.perf_counter()
        p = subprocess.run(cmd, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        rec = json.loads(res.read_text()) if res.exists() else {
            "tool": "kernel_tuner", "completed": False,
            "error": f"process exited {p.returncode}: {p.stderr[-400:]}"}
        rec["process_wall_s"] = wall
        return rec


# ---- ktune ----

def parse_ktune_log(path, problem):
    """The pick and the candidates of one problem from a `ktune tune --json-log` file."""
    cands, sel = [], None
    for line in Path(path).read_text().splitlines():
        j = json.loads(line)
        if not j.get("problem", "").endswith(f"({problem})"):
            continue
        if j["event"] == "candidate":
            cands.append(j)
        elif j["event"] == "selection":
            sel = j
    outcomes = {}
    for c in cands:
        outcomes[c["outcome"]] = outcomes.get(c["outcome"], 0) + 1
    rec = {"tool": "ktune", "configs": len(cands), "measured": outcomes.get("ok", 0),
           "outcomes": outcomes, "completed": sel is not None}
    if sel:
        win = next(c for c in cands if c["name"] == sel["winner"])
        rec.update(winner=sel["winner"], best_ms=win.get("median_ns", 0) / 1e6,
                   best={k: int(v) if re.fullmatch(r"-?\d+", v) else v
                         for k, v in (kv.split("=", 1) for kv in win["info"].split())},
                   compile_s=sel["compile_s"], bench_s=sel["bench_s"], select_s=sel["select_s"])
    return rec

def run_ktune(ktune, spec_path, problem):
    with tempfile.TemporaryDirectory() as d:
        log = Path(d) / "log.jsonl"
        t0 = time.perf_counter()
        # cold: --no-cache leaves out the tuning cache, a fresh folder the code cache
        env = dict(os.environ, KTUNE_CACHE_DIR=str(Path(d) / "cache"), CUDA_CACHE_DISABLE="1")
        p = subprocess.run([ktune, "tune", str(spec_path), "--problem", problem, "--json-log", str(log),
                            "--no-cache"], capture_output=True, text=True, env=env)
        rec = parse_ktune_log(log, problem) if log.exists() else {"tool": "ktune", "completed": False}
        rec.update(process_wall_s=time.perf_counter() - t0, exit=p.returncode,
                   output_tail=(p.stdout + p.stderr)[-600:])
        return rec


# ---- one harness, both winners, alternating rounds ----

def remeasure(spec, problem, cfgs, rounds, launches):
    import cupy as cp, numpy as np
    sz = sizes(spec, problem)
    host = make_args(spec, sz)
    dev = [cp.asarray(h) if hasattr(h, "shape") and h.shape else h for h in host]
    expected, (rtol, atol), o = reference(spec, sz, host), tolerance(spec), out_index(spec)
    mods, verified = [], []
    for cfg in cfgs:
        names = [render(s["entry"], cfg) for s in steps(spec)]
        mods.append(cp.RawModule(code=source(spec, cfg), options=tuple(options(spec, sz)),
                                 name_expressions=names))
        launch(mods[-1], steps(spec), cfg, sz, dev)
        verified.append(bool(np.allclose(cp.asnumpy(dev[o]), expected, rtol=rtol, atol=atol)))
    med = [[] for _ in cfgs]
    ev_ = [(cp.cuda.Event(), cp.cuda.Event()) for _ in range(launches)]
    for r in range(rounds):
        for i in (range(len(cfgs)) if r % 2 == 0 else reversed(range(len(cfgs)))):
            for s, e in ev_:
                s.record(); launch(mods[i], steps(spec), cfgs[i], sz, dev); e.record()
            ev_[-1][1].synchronize()
            med[i].append(float(np.median([cp.cuda.get_elapsed_time(s, e) for s, e in ev_])))
    ratios = sorted(a / b for a, b in zip(med[0], med[1]))
    return {"median_ms": [float(np.median(m)) for m in med], "ratio_median": ratios[len(ratios) // 2],
            "ratio_min": ratios[0], "ratio_max": ratios[-1], "rounds": rounds, "launches": launches,
            "verified": verified}


# ---- driver ----

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ktune", help="path of the ktune binary")
    ap.add_argument("--out", help="folder for results.json and results.md")
    ap.add_argument("--examples", default="conv2d,reduction")
    ap.add_argument("--problems", default="", help="comma-separated problem names (default: all)")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--launches", type=int, default=50)
    ap.add_argument("--skip-kt", action="store_true")
    ap.add_argument("--skip-faults", action="store_true")
    ap.add_argument("--only-faults", action="store_true")
    ap.add_argument("--parse-log", nargs=2, metavar=("LOG", "PROBLEM"),
                    help="print what a ktune JSON log says about PROBLEM and exit")
    ap.add_argument("--count-space", metavar="SPEC", help="print the valid configs of each of SPEC's "
                    "problems under --limits (a JSON object of device limits) and exit")
    ap.add_argument("--limits", help="device limits for --count-space (default: this GPU's)")
    ap.add_argument("--kt-child", help=argparse.SUPPRESS)
    ap.add_argument("--problem", help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    ap.add_argument("--extra", action="append", default=[], help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.parse_log:
        print(json.dumps(parse_ktune_log(*a.parse_log), indent=1))
        return 0
    if a.count_space:
        spec = load_spec(a.count_space)
        lim = json.loads(a.limits) if a.limits else device_limits()
        for pr in spec["problems"]:
            print(pr["name"], sum(1 for c in configs(spec) if valid(spec, {**sizes(spec, pr["name"]), **lim, **c})))
        return 0
    if a.kt_child:
        a.spec = a.kt_child
        kt_child(a)
        return 0
    if not a.ktune or not a.out:
        ap.error("--ktune and --out are required")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    res_path = out / "results.json"
    results = json.loads(res_path.read_text()) if res_path.exists() else {}
    results.setdefault("runs", {})
    for ex in ([] if a.only_faults else [e for e in a.examples.split(",") if e]):
        spec = load_spec(EXAMPLES[ex])
        for pr in [p["name"] for p in spec["problems"]]:
            if a.problems and pr not in a.problems.split(","):
                continue
            key, row = f"{ex}/{pr}", {"date": time.strftime("%Y-%m-%d %H:%M:%S")}
            print(f"== {key}", flush=True)
            row["kernel_tuner"] = None if a.skip_kt else run_kt(EXAMPLES[ex], pr)
            row["ktune"] = run_ktune(a.ktune, EXAMPLES[ex], pr)
            cfgs = [row[t]["best"] for t in ("ktune", "kernel_tuner") if row[t] and row[t].get("best")]
            if len(cfgs) == 2:
                row["harness"] = remeasure(spec, pr, cfgs, a.rounds, a.launches)
            print(json.dumps(row, indent=1), flush=True)
            results["runs"][key] = row
            res_path.write_text(json.dumps(results, indent=1))
    if not a.skip_faults:
        f = {"ktune": run_ktune(a.ktune, FAULTS, "f7")}
        if not a.skip_kt:
            f["kernel_tuner_wrong"] = run_kt(FAULTS, "f7", ["-DNO_CRASH_FAULT"])
            f["kernel_tuner_crash"] = run_kt(FAULTS, "f7", ["-DNO_WRONG_FAULT"])
        print(json.dumps(f, indent=1), flush=True)
        results["faults"] = f
        res_path.write_text(json.dumps(results, indent=1))
    (out / "results.md").write_text(markdown(results))
    print((out / "results.md").read_text())
    return 0

def markdown(results):
    def cfg(c):
        return " ".join(f"{k}={v}" for k, v in c.items()) if c else "-"
    def t(r, k, fmt="{:.1f}"):
        return fmt.format(r[k]) if r and k in r else "-"
    lines = ["| kernel/problem | tool | cold tuning (s) | configs measured | best config | best (ms) |",
             "|---|---|---|---|---|---|"]
    for key, row in results.get("runs", {}).items():
        for tool in ("ktune", "kernel_tuner"):
            r = row.get(tool)
            lines.append(f"| {key} | {tool} | {t(r, 'process_wall_s')} | {t(r, 'measured', '{}')} | "
                         f"{cfg(r and r.get('best'))} | {t(r, 'best_ms', '{:.4f}')} |")
        h = row.get("harness")
        if h:
            lines.append(f"| {key} | one harness | | | ktune / Kernel Tuner time: {h['ratio_median']:.3f} "
                         f"[{h['ratio_min']:.3f}, {h['ratio_max']:.3f}] over {h['rounds']} rounds | "
                         f"{h['median_ms'][0]:.4f} / {h['median_ms'][1]:.4f} |")
    for name, r in (results.get("faults") or {}).items():
        what = r.get("outcomes") or r.get("failed") or {}
        lines.append(f"\nFault run, {name}: completed={r.get('completed')} measured={r.get('measured')} "
                     f"other outcomes={what} {r.get('error', '')}")
    lines.append("\nCold tuning: the tool's process, wall clock, nothing cached. Kernel Tuner tunes one kernel: "
                 "for a launch list (the reduction) it tunes the first step and checks the sum of its "
                 "partial sums; the harness times both steps for both winners.")
    return "\n".join(lines) + "\n"

if __name__ == "__main__":
    sys.exit(main())
