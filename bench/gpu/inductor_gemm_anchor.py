# Copied unchanged from shared/gpu/inductor_gemm_anchor.py (the anchor the issues name), so that
# it travels to the GPU machine with the repo.
# Anchor, kernel-only: Inductor max-autotune vs cuBLAS on bf16 GEMM (and GEMM+bias+ReLU),
# timed by replaying CUDA graphs (triton do_bench_cudagraph, median) so host launch overhead
# does not pollute the comparison. Also records Inductor's compile-and-tune wall time.
import os, sys, time, json
os.environ.setdefault("TORCHINDUCTOR_FORCE_DISABLE_CACHES", "1")
import torch
from triton.testing import do_bench_cudagraph
shapes = [tuple(int(x) for x in s.split("x")) for s in sys.argv[1:]]
def bench(fn):
    return do_bench_cudagraph(fn, rep=200, return_mode="median")
for (M, N, K) in shapes:
    for fused in (False, True):
        torch._dynamo.reset()
        torch.manual_seed(0)
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
        bias = torch.randn(N, device="cuda", dtype=torch.bfloat16)
        eager = (lambda x, y: torch.relu(x @ y + bias)) if fused else (lambda x, y: x @ y)
        f = torch.compile(eager, mode="max-autotune-no-cudagraphs", dynamic=False)
        torch.cuda.synchronize(); t0 = time.time(); f(a, b); torch.cuda.synchronize(); tune = time.time() - t0
        ti = bench(lambda: f(a, b)); te = bench(lambda: eager(a, b))
        print(json.dumps(dict(M=M, N=N, K=K, fused=fused, inductor_tune_s=round(tune, 2), inductor_ms=round(ti, 5),
                              eager_cublas_ms=round(te, 5), inductor_over_eager=round(ti / te, 3))), flush=True)
