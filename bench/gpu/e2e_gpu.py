# One block on the GPU for bench/gpu/e2e_blocks.py (a child process of it, with cold Inductor
# caches in its environment): the fp32 reference, ktune's compiled program through its C ABI,
# eager PyTorch, torch.compile(mode="max-autotune"); writes OUTDIR/<block>.json.
import ctypes
import json
import statistics
import tempfile
import time
import traceback
from pathlib import Path

import torch
from torch._dynamo.utils import counters

import e2e_graphs as eg

DEVICE = "cuda"  # a dry run of this file's logic on the CPU sets "cpu" (and fakes torch.cuda)

def cuda_time_ms(fn, args):
    """Per-call time: after warm-up, CUDA events around a loop of `iters` calls on the current
    stream, `repeats` loops; the median loop's mean, and every loop's."""
    for _ in range(args.warmup):
        fn()
    torch.cuda.synchronize()
    per = []
    for _ in range(args.repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(args.iters):
            fn()
        end.record()
        end.synchronize()
        per.append(start.elapsed_time(end) / args.iters)
    return statistics.median(per), per


class Program:
    """DIR/lib<graph>.so of `ktune compile --device cuda`: <graph>_create/_run/_last_error/
    _destroy/_arena_bytes."""

    def __init__(self, so, name):
        P, I = ctypes.c_void_p, ctypes.c_int
        lib = ctypes.CDLL(str(so))
        self.name = name

        def fn(suffix, restype, argtypes):
            f = getattr(lib, f"{name}_{suffix}")
            f.restype, f.argtypes = restype, argtypes
            return f
        self._create = fn("create", I, [ctypes.POINTER(P)])
        self._run = fn("run", I, [P, P, I, P, I, P])
        self._last_error = fn("last_error", ctypes.c_char_p, [P])
        self._destroy = fn("destroy", None, [P])
        self.arena_bytes = fn("arena_bytes", ctypes.c_size_t, [])()
        self.workspace_bytes = fn("workspace_bytes", ctypes.c_size_t, [])()
        self.p = P()
        if (rc := self._create(ctypes.byref(self.p))) != 0:
            raise RuntimeError(f"{name}_create returned {rc}" + self._error())

    def _error(self):
        msg = self._last_error(self.p) if self.p else None
        return f": {msg.decode(errors='replace')}" if msg else ""

    def run(self, cin, n_in, cout, n_out, stream):
        if (rc := self._run(self.p, cin, n_in, cout, n_out, stream)) != 0:
            raise RuntimeError(f"{self.name}_run returned {rc}" + self._error())

    def destroy(self):
        self._destroy(self.p)
        self.p = ctypes.c_void_p()


def profile_table(fn, label, calls=10):
    """Each kernel's device time over `calls` calls of fn, as torch.profiler (CUPTI) sees them:
    the kernels of ktune's CUDA-graph replays are recorded like Inductor's."""
    from torch.profiler import ProfilerActivity, profile
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    table = prof.key_averages().table(sort_by="cuda_time_total", row_limit=40, max_name_column_width=90)
    return f"== {label}: {calls} calls\n{table}\n"


def ktune_side(args, g, gf, w, ref, compile_ktune, out):
    block, dtype = g["name"], args.dtype
    res = {}
    with tempfile.TemporaryDirectory() as cache:  # cold code and tuning caches
        wall, err = compile_ktune(args, gf, out / f"{block}-ktune", cache, "cuda",
                                  out / f"{block}-ktune-compile.log")
    if err:
        return err
    res["compile_s"] = wall
    ins = [w[i["name"]] for i in g["inputs"]]
    y = torch.empty(ref.shape, dtype=eg.TORCH_DTYPE[dtype], device=ref.device)
    cin, cout = eg.cuda_tensors(ins, dtype), eg.cuda_tensors([y], dtype)
    stream = torch.cuda.current_stream().cuda_stream
    torch.cuda.synchronize()
    free0 = torch.cuda.mem_get_info()[0]
    t0 = time.perf_counter()
    prog = Program(out / f"{block}-ktune" / f"lib{block}.so", block)
    prog.run(cin, len(ins), cout, 1, stream)
    torch.cuda.synchronize()
    res["create_and_first_run_s"] = time.perf_counter() - t0
    # What the driver reports gone after _create and the first run: the arena, plus what the
    # program's libraries and its CUDA graph take (modules, cuBLAS handles, the graph itself).
    res["driver_bytes_after_first_run"] = free0 - torch.cuda.mem_get_info()[0]
    res.update(eg.compare(y, ref, dtype))
    y_first = y.clone()
    res["fwd_ms"], res["fwd_ms_loops"] = cuda_time_ms(
        lambda: prog.run(cin, len(ins), cout, 1, stream), args)
    res["arena_bytes"] = prog.arena_bytes
    res["workspace_bytes"] = prog.workspace_bytes
    res["output_bytes"] = y.numel() * y.element_size()
    # As torch's peak counts: the activations and the output, not the libraries' workspace
    # (torch's cuBLAS workspace is allocated by its first GEMM, before the peak is reset).
    res["bytes"] = res["arena_bytes"] - res["workspace_bytes"] + res["output_bytes"]
    res["same_output_after_timing"] = bool(torch.equal(y, y_first))
    if args.profile:
        with open(out / f"{block}-profile.txt", "a") as f:
            f.write(profile_table(lambda: prog.run(cin, len(ins), cout, 1, stream), "ktune"))
    prog.destroy()
    return res, y_first


def torch_sides(args, g, w, ref):
    module = eg.make_module(g["name"], g, w)
    x = w["x"]
    eager, ind = {}, {}
    with torch.no_grad():
        y_eager = module(x)
        eager.update(eg.compare(y_eager, ref, args.dtype))
        del y_eager
        eager["fwd_ms"], eager["fwd_ms_loops"] = cuda_time_ms(lambda: module(x), args)

        torch._dynamo.reset()
        # x keeps its address across calls, as the weights do: no copy into the CUDA graph's own
        # input buffer on every replay (ktune's program reads the caller's x in place too).
        torch._dynamo.mark_static_address(x)
        compiled = torch.compile(module, mode="max-autotune", dynamic=False)
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        t0 = time.perf_counter()
        y1 = compiled(x)
        torch.cuda.synchronize()
        ind["compile_s"] = time.perf_counter() - t0  # compile + autotune + the first run
        ind["peak_first_call_bytes"] = torch.cuda.max_memory_allocated() - base
        del y1
        # The calls after it record the CUDA graph: every buffer of Inductor's program is
        # allocated then (from the graph's private pool), the output included; a replay
        # allocates nothing, so the peak over these calls is the forward's working set.
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        t0 = time.perf_counter()
        for _ in range(3):
            torch.compiler.cudagraph_mark_step_begin()
            y2 = compiled(x)
        torch.cuda.synchronize()
        ind["next_3_calls_s"] = time.perf_counter() - t0
        ind["peak_bytes"] = torch.cuda.max_memory_allocated() - base
        ind["reserved_bytes_after"] = torch.cuda.memory_reserved()
        # Nonzero when Inductor fell back to running without CUDA graphs (its log says why).
        ind["cudagraph_skips"] = counters["inductor"]["cudagraph_skips"]
        del y2

        def step():
            torch.compiler.cudagraph_mark_step_begin()
            compiled(x)
        ind["fwd_ms"], ind["fwd_ms_loops"] = cuda_time_ms(step, args)
        if args.profile:
            with open(Path(args.outdir) / f"{g['name']}-profile.txt", "a") as f:
                f.write(profile_table(step, "inductor (max-autotune)"))
        torch.compiler.cudagraph_mark_step_begin()
        y_ind = compiled(x).clone()
        ind.update(eg.compare(y_ind, ref, args.dtype))
    return eager, ind, y_ind


def run_block(args, compile_ktune):
    block, out = args.block, Path(args.outdir)
    dev = torch.device(DEVICE, torch.cuda.current_device())
    torch.backends.cuda.matmul.allow_tf32 = False  # the fp32 reference in fp32
    torch.backends.cudnn.allow_tf32 = False
    g = eg.make_graph(block, args.tokens, args.hidden, args.ffn, args.dtype)
    gf = out / f"{block}.graph.json"
    gf.write_text(json.dumps(g, indent=2) + "\n")
    res = {"block": block, "shape": f"T={args.tokens} H={args.hidden} F={args.ffn} {args.dtype}",
           "gpu": torch.cuda.get_device_name(dev), "torch": torch.__version__,
           "rtol": eg.RTOL[args.dtype],
           "timing": {"iters": args.iters, "repeats": args.repeats, "warmup": args.warmup}}
    w = eg.make_tensors(g, args.dtype, dev)
    with torch.no_grad():
        ref = eg.run_graph(g, {k: v.float() for k, v in w.items()})[0]
    res["ref_rms"] = ref.pow(2).mean().sqrt().item()
    res["ref_max_abs"] = ref.abs().max().item()
    y_k = y_i = None
    try:
        r = ktune_side(args, g, gf, w, ref, compile_ktune, out)
        res["ktune"], y_k = r if isinstance(r, tuple) else (r, None)
    except Exception as e:  # the ABI's failures and ctypes' (a missing symbol): on the record
        res["ktune"] = {"error": f"{type(e).__name__}: {e}"}
        traceback.print_exc()
    res["ok"] = False
    result = out / f"{block}.json"
    result.write_text(json.dumps(res, indent=2) + "\n")  # kept if the torch side never returns
    torch.cuda.empty_cache()
    try:
        res["eager"], res["inductor"], y_i = torch_sides(args, g, w, ref)
    except Exception as e:
        res.setdefault("eager", {})
        res["inductor"] = {"error": f"{type(e).__name__}: {e}"}
        traceback.print_exc()
    if y_k is not None and y_i is not None:
        res["ktune_vs_inductor_max_abs_diff"] = (y_k.float() - y_i.float()).abs().max().item()
    res["ok"] = all(res.get(s, {}).get("pass") for s in ("ktune", "inductor"))
    result.write_text(json.dumps(res, indent=2) + "\n")
    print(json.dumps({k: v for k, v in res.items() if k in ("block", "shape", "ok")}), flush=True)
    return 0 if res["ok"] else 1
