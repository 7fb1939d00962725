# From shared/gpu/inductor_gemm_anchor.py (the anchor the issues name), so that it travels to the
# GPU machine with the repo; issue 21 added the epilogues ktune's templates fuse and cuBLASLt
# does not (--epilogues gelu,silu,bias_residual). Without --epilogues it runs what it always
# ran: plain and bias+ReLU, one JSON line each (bench/gpu/run.sh and epilogue.sh read them).
# Anchor, kernel-only: Inductor max-autotune vs cuBLAS on bf16 GEMM (and fused epilogues),
# timed by replaying CUDA graphs (triton do_bench_cudagraph, median) so host launch overhead
# does not pollute the comparison. Also records Inductor's compile-and-tune wall time.
#
#   python3 inductor_gemm_anchor.py [--epilogues plain,bias_relu,gelu,silu,bias_residual] MxNxK...
import argparse, os, sys, time, json
os.environ.setdefault("TORCHINDUCTOR_FORCE_DISABLE_CACHES", "1")

# Each epilogue as eager PyTorch over x @ w (bias: [N]; residual: [M, N]); gelu is the exact
# (erf) one, as ktune's gelu.
EPILOGUES = {
    "plain": lambda x, w, bias, res, F: x @ w,
    "bias_relu": lambda x, w, bias, res, F: F.relu(x @ w + bias),
    "gelu": lambda x, w, bias, res, F: F.gelu(x @ w),
    "silu": lambda x, w, bias, res, F: F.silu(x @ w),
    "bias_residual": lambda x, w, bias, res, F: x @ w + bias + res,
}


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Inductor max-autotune vs cuBLAS, bf16 GEMM and fused epilogues")
    p.add_argument("--epilogues", default="plain,bias_relu",
                   help="comma-separated, of: " + ", ".join(EPILOGUES))
    p.add_argument("shapes", nargs="*", help="MxNxK")
    args = p.parse_args(argv)
    args.epilogues = [e for e in args.epilogues.split(",") if e]
    unknown = [e for e in args.epilogues if e not in EPILOGUES]
    if unknown:
        p.error("unknown epilogue(s) %s; known: %s" % (", ".join(unknown), ", ".join(EPILOGUES)))
    try:
        args.shapes = [tuple(int(x) for x in s.split("x")) for s in args.shapes]
    except ValueError:
        p.error("shapes are MxNxK")
    if any(len(s) != 3 for s in args.shapes):
        p.error("shapes are MxNxK")
    return args


def main(argv):
    args = parse_args(argv)
    import torch
    import torch.nn.functional as F
    from triton.testing import do_bench_cudagraph

    def bench(fn):
        return do_bench_cudagraph(fn, rep=200, return_mode="median")

    for (M, N, K) in args.shapes:
        for epilogue in args.epilogues:
            row = dict(M=M, N=N, K=K, fused=epilogue != "plain", epilogue=epilogue)
            # One problem failing (out of memory, a Triton compile error) leaves the others.
            try:
                torch._dynamo.reset()
                torch.manual_seed(0)
                a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
                b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
                bias = torch.randn(N, device="cuda", dtype=torch.bfloat16)
                res = torch.randn(M, N, device="cuda", dtype=torch.bfloat16)
                body = EPILOGUES[epilogue]
                eager = lambda x, y: body(x, y, bias, res, F)
                f = torch.compile(eager, mode="max-autotune-no-cudagraphs", dynamic=False)
                torch.cuda.synchronize(); t0 = time.time(); f(a, b); torch.cuda.synchronize()
                tune = time.time() - t0
                ti = bench(lambda: f(a, b)); te = bench(lambda: eager(a, b))
                row.update(inductor_tune_s=round(tune, 2), inductor_ms=round(ti, 5),
                           eager_cublas_ms=round(te, 5), inductor_over_eager=round(ti / te, 3))
            except Exception as e:  # noqa: BLE001 - reported in the row, the run goes on
                first = str(e).splitlines()[0] if str(e) else ""
                row["error"] = "%s: %s" % (type(e).__name__, first)
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
