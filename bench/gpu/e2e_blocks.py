#!/usr/bin/env python3
# End to end against torch.compile (issue 20, item 4): the MLP block and the transformer block of
# examples/, at a realistic size, compiled by `ktune compile --device cuda` and by
# torch.compile(mode="max-autotune") (CUDA graphs on), with the same weights: forward time, compile
# + tune wall time (cold caches on both sides), device memory, and the outputs against an fp32
# eager reference. Each block runs in its own process (Inductor's in-process caches cold too);
# this process prints the markdown table and writes OUTDIR/results.json.
#
#   python3 bench/gpu/e2e_blocks.py OUTDIR --ktune gpu-bundle/bin/ktune   (bench/gpu/e2e_blocks.sh)
#   python3 bench/gpu/e2e_blocks.py OUTDIR --tokens 256 --hidden 128 --ffn 512   # a smoke run
#   python3 bench/gpu/e2e_blocks.py --check-cpu --ktune build/bin/ktune   # no GPU: the torch
#       modules against ktune's CPU program of the same graph, f32, tiny sizes
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BLOCK_NAMES = ("mlp_block", "transformer_block")


def positive(text):
    v = int(text)
    if v <= 0:
        raise argparse.ArgumentTypeError(f"expected a whole number above 0; got {text}")
    return v


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="ktune's compiled blocks against torch.compile(mode='max-autotune') on the GPU")
    p.add_argument("outdir", nargs="?", help="results folder (required unless --check-cpu)")
    p.add_argument("--ktune", default=str(HERE.parents[1] / "gpu-bundle/bin/ktune"))
    p.add_argument("--tokens", type=positive, default=None,
                   help="T (default 4096; 12 with --check-cpu)")
    p.add_argument("--hidden", type=positive, default=None, help="H (default 2048; 16)")
    p.add_argument("--ffn", type=positive, default=None, help="MLP width (default 4H)")
    p.add_argument("--dtype", choices=("bf16", "f16", "f32"), default=None,
                   help="default bf16 (f32 with --check-cpu)")
    p.add_argument("--blocks", default=",".join(BLOCK_NAMES))
    p.add_argument("--iters", type=positive, default=20, help="calls per timed loop")
    p.add_argument("--repeats", type=positive, default=15, help="timed loops; the median is kept")
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--ktune-arg", action="append", default=[],
                   help="one more argument to `ktune compile` (repeatable)")
    p.add_argument("--block-timeout", type=float, default=None,
                   help="seconds each block's process may run (what it wrote by then is kept)")
    p.add_argument("--profile", action="store_true",
                   help="also write OUTDIR/<block>-profile.txt: each side's kernels and their "
                        "device time over 10 calls (torch.profiler, CUPTI)")
    p.add_argument("--check-cpu", action="store_true")
    p.add_argument("--block", help=argparse.SUPPRESS)  # a child process: this one block
    a = p.parse_args(argv)
    a.tokens = a.tokens or (12 if a.check_cpu else 4096)
    a.hidden = a.hidden or (16 if a.check_cpu else 2048)
    a.ffn = a.ffn or 4 * a.hidden
    a.dtype = a.dtype or ("f32" if a.check_cpu else "bf16")
    a.blocks = [b for b in a.blocks.split(",") if b]
    if any(b not in BLOCK_NAMES for b in a.blocks):
        p.error(f"--blocks: each one of {', '.join(BLOCK_NAMES)}")
    if not a.check_cpu and not a.outdir:
        p.error("OUTDIR is required")
    if a.check_cpu and a.dtype != "f32":
        p.error("--check-cpu compiles for the CPU, which is f32 only")
    return a


def compile_ktune(args, graph_file, out, cache, device, log):
    cmd = [args.ktune, "--cache-dir", str(cache), "compile", str(graph_file), "-o", str(out)]
    cmd += (["--device", device] if device == "cuda" else []) + args.ktune_arg
    t0 = time.perf_counter()
    with open(log, "w") as f:
        rc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT).returncode
    wall = time.perf_counter() - t0
    if rc != 0:
        tail = Path(log).read_text().strip().splitlines()[-5:]
        return None, {"error": f"`{' '.join(cmd)}` exited {rc}: " + " | ".join(tail)}
    return wall, {}


def check_cpu(args):
    """The torch modules, the graph interpreter and ktune's CPU program of the same graph agree."""
    import ctypes
    import shutil
    import torch
    import e2e_graphs as eg
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        # The ctypes struct against the C compiler's layout of the ABI's KtuneCudaTensor.
        cc = shutil.which("cc") or shutil.which("gcc")
        if cc:
            (tmp / "l.c").write_text(
                eg.struct_layout_c() + "#include <stdio.h>\n#include <stddef.h>\n"
                "int main(void) { printf(\"%zu %zu %zu %zu\", sizeof(struct KtuneCudaTensor), "
                "offsetof(struct KtuneCudaTensor, ndim), offsetof(struct KtuneCudaTensor, sizes), "
                "offsetof(struct KtuneCudaTensor, strides)); return 0; }\n")
            subprocess.run([cc, str(tmp / "l.c"), "-o", str(tmp / "l")], check=True)
            c = subprocess.run([str(tmp / "l")], capture_output=True, text=True).stdout
            T = eg.KtuneCudaTensor
            py = f"{ctypes.sizeof(T)} {T.ndim.offset} {T.sizes.offset} {T.strides.offset}"
            print(f"KtuneCudaTensor layout: C {c}, ctypes {py}: {'ok' if c == py else 'DIFFERENT'}")
            ok &= c == py
        # The examples' CPU candidates (the CUDA graphs carry no gemm_spec).
        if not any(a.startswith("--gemm-spec") for a in args.ktune_arg):
            args.ktune_arg += ["--gemm-spec", str(eg.ROOT / "examples/matmul_cpu/matmul.yaml")]
        for block in args.blocks:
            g = eg.make_graph(block, args.tokens, args.hidden, args.ffn, "f32")
            gf = tmp / f"{block}.json"
            gf.write_text(json.dumps(g, indent=2))
            out = tmp / f"{block}-out"
            wall, err = compile_ktune(args, gf, out, tmp / f"{block}-cache", "cpu",
                                      tmp / f"{block}.log")
            if err:
                print(f"{block}: {err['error']}")
                ok = False
                continue
            w = eg.make_tensors(g, "f32", "cpu")
            ins = [w[i["name"]] for i in g["inputs"]]
            lib = ctypes.CDLL(str(out / f"lib{block}.so"))
            run = getattr(lib, f"{block}_run")
            run.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
            free = getattr(lib, f"{block}_free_outputs")
            free.argtypes = [ctypes.c_void_p, ctypes.c_int]
            cin, cout = eg.cpu_tensors(ins), (eg.KtuneTensor * 1)()
            if run(cin, len(ins), cout, 1) != 0:
                print(f"{block}: {block}_run failed")
                ok = False
                continue
            o = cout[0]
            n = o.sizes[0] * o.sizes[1]
            y_ktune = torch.frombuffer((ctypes.c_float * n).from_address(o.data),
                                       dtype=torch.float32).reshape(o.sizes[0], o.sizes[1]).clone()
            free(cout, 1)
            with torch.no_grad():
                y_mod = eg.make_module(block, g, w)(w["x"])
                y_ref = eg.run_graph(g, {k: v.double() for k, v in w.items()})[0]
            for label, y in (("ktune CPU program", y_ktune), ("torch module", y_mod)):
                c = eg.compare(y, y_ref, "f32")
                ok &= c["pass"]
                print(f"{block} [{args.tokens}x{args.hidden}, ffn {args.ffn}]: {label} vs the "
                      f"graph's ops in f64: max abs err {c['max_abs_err']:.3g} "
                      f"({c['worst_over_bound']:.3f} of the bound): "
                      f"{'pass' if c['pass'] else 'FAIL'}")
            print(f"{block}: ktune CPU compile {wall:.1f} s")
    print("check-cpu:", "pass" if ok else "FAIL")
    return 0 if ok else 1


def report_table(results):
    """The markdown table of docs/benchmarks.md from the blocks' results."""
    def num(d, key, fmt):
        v = (d or {}).get(key)
        return "failed" if v is None else fmt.format(v)

    def ratio(a, b):
        return "-" if a is None or b is None or b == 0 else f"{a / b:.2f}"

    rows = ["| block | ktune fwd ms | inductor fwd ms | eager ms | ktune / inductor fwd | "
            "ktune compile+tune s | inductor compile+tune s | inductor / ktune compile | "
            "ktune bytes | ktune workspace | torch peak bytes | max err ktune / inductor | "
            "within tol |",
            "|" + "---|" * 13]
    for r in results:
        k, i, e = r.get("ktune", {}), r.get("inductor", {}), r.get("eager", {})
        err = f"{num(k, 'max_abs_err', '{:.3g}')} / {num(i, 'max_abs_err', '{:.3g}')}"
        within = "/".join("yes" if d.get("pass") else "NO" if "pass" in d else "-" for d in (k, i))
        rows.append(
            f"| {r['block']} {r.get('shape', '')} | {num(k, 'fwd_ms', '{:.3f}')} | "
            f"{num(i, 'fwd_ms', '{:.3f}')} | {num(e, 'fwd_ms', '{:.3f}')} | "
            f"{ratio(k.get('fwd_ms'), i.get('fwd_ms'))} | {num(k, 'compile_s', '{:.1f}')} | "
            f"{num(i, 'compile_s', '{:.1f}')} | {ratio(i.get('compile_s'), k.get('compile_s'))} | "
            f"{num(k, 'bytes', '{:,}')} | {num(k, 'workspace_bytes', '{:,}')} | "
            f"{num(i, 'peak_bytes', '{:,}')} | {err} | {within} |")
    notes = [f"{r['block']}: {side}: {r[side]['error']}" for r in results
             for side in ("ktune", "inductor") if r.get(side, {}).get("error")]
    notes += [f"{r['block']}: {r['error']}" for r in results if r.get("error")]
    return "\n".join(rows + [""] + notes if notes else rows)


def run_children(args, argv):
    """One process per block (cold caches for both sides), then the table of every block with a
    result in OUTDIR (so that the blocks can be run by separate commands into one OUTDIR)."""
    outdir = Path(args.outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    died = {}
    for block in args.blocks:
        res = outdir / f"{block}.json"
        res.unlink(missing_ok=True)
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, TORCHINDUCTOR_FORCE_DISABLE_CACHES="1",
                       TORCHINDUCTOR_CACHE_DIR=f"{cache}/inductor",
                       TRITON_CACHE_DIR=f"{cache}/triton")
            # Its own process group, so that a timeout also ends what it started (ktune, nvcc,
            # Inductor's compile workers).
            child = subprocess.Popen([sys.executable, __file__, *argv, "--block", block], env=env,
                                     start_new_session=True)
            try:
                rc = f"exited {child.wait(timeout=args.block_timeout)}"
            except subprocess.TimeoutExpired:
                os.killpg(child.pid, signal.SIGKILL)
                child.wait()
                rc = f"was killed after --block-timeout {args.block_timeout} s"
        if not res.exists():
            died[block] = f"the block's process {rc} with no result"
        elif rc not in ("exited 0", "exited 1"):  # 1: outside the tolerance or a side failed
            died[block] = f"the block's process {rc}; its result is partial"
    results = []
    for block in BLOCK_NAMES:
        res = outdir / f"{block}.json"
        if res.exists():
            results.append(json.loads(res.read_text()))
        if block in died:
            if not res.exists():
                results.append({"block": block})
            results[-1]["error"] = died[block]
            results[-1]["ok"] = False
    (outdir / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    table = report_table(results)
    print(table)
    (outdir / "table.md").write_text(table + "\n")
    return 0 if results and all(r.get("ok") for r in results) else 1


def main(argv):
    args = parse_args(argv)
    sys.path.insert(0, str(HERE))
    if args.check_cpu:
        return check_cpu(args)
    if args.block:
        import e2e_gpu
        try:
            return e2e_gpu.run_block(args, compile_ktune)
        except Exception:  # before or after its sides: not a result (exit 1 is one)
            import traceback
            traceback.print_exc()
            return 3
    return run_children(args, argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
