#!/usr/bin/env python3
"""Times NVRTC on the GEMM templates' generated sources: each one alone, then all of them as
threads of one process (as ktune compiles them) and as separate processes, with an empty CUDA
compute cache (CUDA_CACHE_DISABLE=1). Needs no GPU.

The sources are the ones `ktune gemm --compile-only` writes into a scratch code cache; --match
keeps those whose kernel name matches (a regular expression), --extra adds NVRTC options (say
--minimal) for a second, alternated timing of each. --beside-cuda (a GPU needed) times all of
them at once as threads again while CUDA starts beside them, as in a cold `ktune gemm`: alone,
while another process opens CUDA and cuBLASLt (the worker's start), with cuInit in the same
process (the parent's), and both; each in a fresh process, --repeats times.

Usage: bench/gpu/nvrtc_compiles.py --ktune gpu-bundle/bin/ktune [--match REGEX] [--arch sm_90a]
           [--extra=OPTION ...] [--repeats N] [--beside-cuda]"""
import argparse, ctypes, ctypes.util, glob, os, re, statistics, subprocess, sys, tempfile, time
from concurrent.futures import ThreadPoolExecutor

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--ktune", help="the ktune binary that writes the sources")
ap.add_argument("--match", default="cuda_gemm_tma", help="kernel names to keep (regex)")
ap.add_argument("--arch", default="sm_90a")
ap.add_argument("--extra", action="append", default=[],
                help="an NVRTC option for the second timing (--extra=--minimal); repeatable")
ap.add_argument("--repeats", type=int, default=2)
ap.add_argument("--beside-cuda", action="store_true",
                help="also time the compiles at once while CUDA starts beside them")
ap.add_argument("--one", help=argparse.SUPPRESS)  # internal: FILE, options in the environment
ap.add_argument("--batch", help=argparse.SUPPRESS)  # internal: MODE, files in the environment
ap.add_argument("--start-cuda", action="store_true", help=argparse.SUPPRESS)  # internal
args = ap.parse_args()
os.environ["CUDA_CACHE_DISABLE"] = "1"


def nvrtc():
    for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") + ["/usr/local/cuda/lib64",
                                                                 "/usr/local/cuda/lib"]:
        found = sorted(glob.glob(os.path.join(d, "libnvrtc.so.1[0-9]*"))) if d else []
        if found:
            return ctypes.CDLL(found[0])
    name = ctypes.util.find_library("nvrtc")
    if not name:
        sys.exit("error: no libnvrtc found (set LD_LIBRARY_PATH)")
    return ctypes.CDLL(name)


nv = nvrtc()
# The options ktune gives its GEMM templates (`ktune gemm --verbose` prints them).
base = [f"--gpu-architecture={args.arch}", "-std=c++17", "-default-device"]


def compile_once(src, options):
    prog = ctypes.c_void_p()
    if nv.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), b"k.cu", 0, None, None):
        sys.exit("error: nvrtcCreateProgram failed")
    opts = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
    start = time.perf_counter()
    rc = nv.nvrtcCompileProgram(prog, len(options), opts)
    seconds = time.perf_counter() - start
    nv.nvrtcDestroyProgram(ctypes.byref(prog))
    if rc:
        sys.exit(f"error: NVRTC failed ({rc}) with {' '.join(options)}")
    return seconds


def lib(pattern):
    for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") + ["/usr/local/cuda/lib64"]:
        found = sorted(glob.glob(os.path.join(d, pattern))) if d else []
        if found:
            return ctypes.CDLL(found[0])
    sys.exit(f"error: no {pattern} found (set LD_LIBRARY_PATH)")


def start_cuda(with_cublaslt):
    """cuInit and device 0's primary context (and cuBLASLt's handle): what a process does to open
    the GPU; its seconds."""
    start = time.perf_counter()
    cu = ctypes.CDLL("libcuda.so.1")
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    if (cu.cuInit(0) or cu.cuDeviceGet(ctypes.byref(dev), 0)
            or cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) or cu.cuCtxSetCurrent(ctx)):
        sys.exit("error: the CUDA driver did not start")
    if with_cublaslt:
        handle = ctypes.c_void_p()
        if lib("libcublasLt.so.1[0-9]*").cublasLtCreate(ctypes.byref(handle)):
            sys.exit("error: cublasLtCreate failed")
    return time.perf_counter() - start


if args.start_cuda:  # another process opening the GPU, as the worker does
    print(f"{start_cuda(True):.3f}")
    sys.exit()
if args.batch:  # every file at once as threads, CUDA starting beside them as args.batch says
    paths = os.environ["KTUNE_NVRTC_FILES"].split("\x1f")
    compile_once(open(paths[0]).read(), base)  # NVRTC's one-time start
    start = time.perf_counter()
    child = (subprocess.Popen([sys.executable, __file__, "--start-cuda"], stdout=subprocess.PIPE,
                              text=True) if "process" in args.batch else None)
    with ThreadPoolExecutor(len(paths) + 1) as pool:
        cuinit = pool.submit(start_cuda, False) if "cuInit" in args.batch else None
        seconds = list(pool.map(lambda f: compile_once(open(f).read(), base), paths))
        wall = time.perf_counter() - start
        beside = [f"cuInit here {cuinit.result():.3f} s"] if cuinit else []
    if child:
        out, _ = child.communicate()
        beside.append(f"CUDA and cuBLASLt in another process {out.strip()} s")
    print(f"{args.batch:<30} all {len(paths)}: {wall:.3f} s (slowest {max(seconds):.3f}, "
          f"mean {statistics.mean(seconds):.3f})" + (f"; {', '.join(beside)}" if beside else ""))
    sys.exit()
if args.one:  # one compile in this process, its seconds on stdout
    print(compile_once(open(args.one).read(), os.environ["KTUNE_NVRTC_OPTIONS"].split("\x1f")))
    sys.exit()
if not args.ktune:
    sys.exit("error: --ktune is required")

cache = tempfile.mkdtemp()
subprocess.run([args.ktune, "--cache-dir", cache, "gemm", "--m", "4096", "--n", "4096", "--k",
                "4096", "--dtype", "bf16", "--compile-only", "--arch", args.arch, "-q"], check=True)
files = {}
for f in sorted(glob.glob(os.path.join(cache, "code", "*", "*.cu"))):
    name = open(f).readline().removeprefix("// generated by ktune: ").strip()
    if re.search(args.match, name):
        files[name] = f
if not files:
    sys.exit(f"error: no generated source matches {args.match!r}")
compile_once(open(next(iter(files.values()))).read(), base)  # NVRTC's one-time start

variants = [("plain", base)] + ([(" ".join(args.extra), base + args.extra)] if args.extra else [])
print(f"{len(files)} sources; seconds, best of {args.repeats}")
print(f"{'kernel':<90} " + " ".join(f"{v:>10}" for v, _ in variants))
totals = {v: 0.0 for v, _ in variants}
for name, f in files.items():
    src = open(f).read()
    best = {v: min(compile_once(src, o) for _ in range(args.repeats)) for v, o in variants}
    for v in best:
        totals[v] += best[v]
    print(f"{name[:90]:<90} " + " ".join(f"{best[v]:10.3f}" for v, _ in variants), flush=True)
print(f"{'sum':<90} " + " ".join(f"{totals[v]:10.3f}" for v, _ in variants))
for v, options in variants:
    start = time.perf_counter()
    with ThreadPoolExecutor(len(files)) as pool:
        list(pool.map(lambda f: compile_once(open(f).read(), options), files.values()))
    threads = time.perf_counter() - start
    start = time.perf_counter()
    env = dict(os.environ, KTUNE_NVRTC_OPTIONS="\x1f".join(options))
    procs = [subprocess.Popen([sys.executable, __file__, f"--one={f}"], env=env,
                              stdout=subprocess.DEVNULL) for f in files.values()]
    for p in procs:
        if p.wait():
            sys.exit("error: a compile process failed")
    processes = time.perf_counter() - start
    print(f"{v}: all {len(files)} at once: {threads:.3f} s as threads of one process, "
          f"{processes:.3f} s as processes")
if args.beside_cuda:
    env = dict(os.environ, KTUNE_NVRTC_FILES="\x1f".join(files.values()))
    for _ in range(args.repeats):
        for mode in ("alone", "beside another process", "beside cuInit", "beside cuInit+process"):
            subprocess.run([sys.executable, __file__, f"--batch={mode}"], env=env, check=True)
