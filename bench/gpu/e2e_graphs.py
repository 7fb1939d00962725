# The two blocks of examples/ (mlp_block, transformer_block) for bench/gpu/e2e_blocks.py: their
# graph files rewritten to a size and dtype, one set of seeded weights, the blocks written in
# PyTorch as a user would (nn.Module with F.layer_norm, F.gelu, torch.softmax), an interpreter of
# the graph file's ops spelled out from their definitions in examples/mlp_block/README.md (the
# fp32 reference), and the C structs of the programs `ktune compile` emits.
import ctypes
import json
import math
import re
from pathlib import Path

import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[2]
BLOCKS = ("mlp_block", "transformer_block")
TORCH_DTYPE = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
DTYPE_CODE = {"f32": 0, "f16": 1, "bf16": 2}  # KtuneCudaTensor::dtype
# Relative tolerance per dtype, 8 units of the dtype's epsilon for bf16 and f16 (a chain of
# roundings through K-long reductions); an element passes when |y - ref| <= rtol * (|ref| +
# rms(ref)), i.e. atol = rtol * rms(ref), so that the bound scales with the values.
RTOL = {"bf16": 2.0**-4, "f16": 2.0**-7, "f32": 1e-4}


def compare(y, ref, dtype):
    """Max abs error of y against the fp32 reference, and pass/fail within the dtype's bound."""
    y, ref = y.float(), ref.float()
    rtol = RTOL[dtype]
    rms = ref.pow(2).mean().sqrt().item()
    err = (y - ref).abs()
    worst = (err / (rtol * (ref.abs() + rms))).max().item()
    return {"max_abs_err": err.max().item(), "worst_over_bound": worst, "pass": bool(worst <= 1.0)
            and bool(torch.isfinite(y).all())}


def _flow_yaml(text):
    # The examples' subset of YAML, for a Python without PyYAML: top-level `key: scalar`,
    # `key: [a, b]` and `key:` followed by `  - {flow mapping}` lines.
    def to_json(s):
        s = re.sub(r"(?<![\w.\-])([A-Za-z_][\w./\-]*)", r'"\1"', s)
        return json.loads(s)

    doc, key = {}, None
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if not line:
            continue
        if line.lstrip().startswith("- "):
            doc[key].append(to_json(line.lstrip()[2:]))
            continue
        key, _, value = line.partition(":")
        value = value.strip()
        doc[key] = [] if not value else to_json(value) if value[0] in "[{" else value
    return doc


def load_yaml(path):
    text = Path(path).read_text()
    try:
        import yaml
    except ImportError:
        return _flow_yaml(text)
    return yaml.safe_load(text)


def _input_shape(name, T, H, Fw):
    # Every input of both examples by name; an unknown name (the example changed) is an error
    # rather than a guess.
    shapes = {"x": [T, H], "w1": [H, Fw], "b1": [Fw], "w2": [Fw, H], "b2": [H]}
    shapes.update({w: [H, H] for w in ("wq", "wk", "wv", "wo")})
    shapes.update({n: [H] for n in ("ln1_g", "ln1_b", "ln2_g", "ln2_b")})
    if name not in shapes:
        raise SystemExit(f"e2e: unknown input '{name}' in an example graph; update _input_shape")
    return shapes[name]


def make_graph(block, T, H, Fw, dtype):
    """The example's graph at tokens T, hidden H, MLP width Fw, every tensor in `dtype`, the
    attention scale 1/sqrt(H); no gemm_spec (the CUDA compiler has its own candidates)."""
    g = load_yaml(ROOT / "examples" / block / "graph.yaml")
    g.pop("gemm_spec", None)
    for inp in g["inputs"]:
        inp["dtype"] = dtype
        inp["shape"] = _input_shape(inp["name"], T, H, Fw)
        inp.pop("strides", None)
    for node in g["nodes"]:
        if node["op"] == "scale":
            node["alpha"] = 1.0 / math.sqrt(H)
    return g


def make_tensors(graph, dtype, device, seed=0):
    """One set of weights for every side, drawn in fp32 on the CPU from `seed` (the same values
    on every machine), then rounded to `dtype`. Matrices are randn / sqrt(fan_in) so that every
    gemm's output stays O(1); gammas 1 + 0.1 randn, biases and betas 0.1 randn."""
    gen = torch.Generator().manual_seed(seed)
    out = {}
    for inp in graph["inputs"]:
        name, shape = inp["name"], inp["shape"]
        t = torch.randn(*shape, generator=gen, dtype=torch.float32)
        if name == "x":
            pass
        elif len(shape) == 2:
            t /= math.sqrt(shape[0])
        elif name.endswith("_g"):
            t = 1.0 + 0.1 * t
        else:
            t *= 0.1
        out[name] = t.to(TORCH_DTYPE[dtype]).to(device).contiguous()
    return out


def _eps(graph, node_name):
    node = next(n for n in graph["nodes"] if n["name"] == node_name)
    return float(node.get("eps", 1e-5))


class MlpBlock(torch.nn.Module):
    # y = relu(x W1 + b1) W2 + b2
    def __init__(self, graph, w):
        super().__init__()
        for n in ("w1", "b1", "w2", "b2"):
            self.register_parameter(n, torch.nn.Parameter(w[n], requires_grad=False))

    def forward(self, x):
        return F.relu(x @ self.w1 + self.b1) @ self.w2 + self.b2


class TransformerBlock(torch.nn.Module):
    # Single-head pre-LN: h = softmax((LN1(x) Wq)(LN1(x) Wk)^T alpha)(LN1(x) Wv) Wo + x;
    # y = gelu(LN2(h) W1 + b1) W2 + b2 + h (erf GELU, biased-variance layer norm).
    def __init__(self, graph, w):
        super().__init__()
        for n in ("wq", "wk", "wv", "wo", "w1", "b1", "w2", "b2", "ln1_g", "ln1_b", "ln2_g",
                  "ln2_b"):
            self.register_parameter(n, torch.nn.Parameter(w[n], requires_grad=False))
        self.alpha = next(n["alpha"] for n in graph["nodes"] if n["op"] == "scale")
        self.eps1, self.eps2 = _eps(graph, "a"), _eps(graph, "hn")

    def forward(self, x):
        H = x.shape[-1]
        a = F.layer_norm(x, (H,), self.ln1_g, self.ln1_b, self.eps1)
        q, k, v = a @ self.wq, a @ self.wk, a @ self.wv
        p = torch.softmax((q @ k.t()) * self.alpha, dim=-1)
        h = (p @ v) @ self.wo + x
        hn = F.layer_norm(h, (H,), self.ln2_g, self.ln2_b, self.eps2)
        return F.gelu(hn @ self.w1 + self.b1) @ self.w2 + self.b2 + h


def make_module(block, graph, w):
    return {"mlp_block": MlpBlock, "transformer_block": TransformerBlock}[block](graph, w).eval()


def run_graph(graph, tensors):
    """The graph's outputs computed node by node from the ops' definitions (README of
    examples/mlp_block), not through the library functions the modules call."""
    v = dict(tensors)
    for n in graph["nodes"]:
        a = [v[i] for i in n["inputs"]]
        x, op = a[0], n["op"]
        if op == "gemm":
            r = x @ a[1]
        elif op in ("bias_add", "add"):
            r = x + a[1]  # bias_add: b[N] broadcast over every row
        elif op == "relu":
            r = torch.where(x > 0, x, torch.zeros_like(x))
        elif op == "gelu":
            r = 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))
        elif op == "silu":
            r = x / (1.0 + torch.exp(-x))
        elif op == "scale":
            r = n["alpha"] * x
        elif op == "transpose":
            r = x.t()
        elif op == "row_softmax":
            e = torch.exp(x - x.max(dim=-1, keepdim=True).values)
            r = e / e.sum(dim=-1, keepdim=True)
        elif op == "row_sum":
            r = x.sum(dim=-1)
        elif op == "layer_norm":
            mean = x.mean(dim=-1, keepdim=True)
            var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)  # biased, as PyTorch's
            r = (x - mean) / torch.sqrt(var + n.get("eps", 1e-5)) * a[1] + a[2]
        else:
            raise SystemExit(f"e2e: op '{op}' has no reference here")
        v[n["name"]] = r
    return [v[o] for o in graph["outputs"]]


class KtuneCudaTensor(ctypes.Structure):
    # The CUDA program's tensor: device memory, row-major; sizes and strides in elements.
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int), ("device", ctypes.c_int),
                ("ndim", ctypes.c_int), ("sizes", ctypes.c_int64 * 8),
                ("strides", ctypes.c_int64 * 8)]


class KtuneTensor(ctypes.Structure):
    # The CPU program's tensor (src/codegen/wrapper_snippets.cpp).
    _fields_ = [("data", ctypes.c_void_p), ("ndim", ctypes.c_int),
                ("sizes", ctypes.c_int64 * 8), ("strides", ctypes.c_int64 * 8)]


def _fill(s, t):
    s.data, s.ndim = t.data_ptr(), t.dim()
    for i in range(t.dim()):
        s.sizes[i], s.strides[i] = t.shape[i], t.stride(i)
    return s


def cuda_tensors(ts, dtype):
    arr = (KtuneCudaTensor * len(ts))()
    for s, t in zip(arr, ts):
        _fill(s, t)
        s.dtype, s.device = DTYPE_CODE[dtype], t.device.index or 0
    return arr


def cpu_tensors(ts):
    arr = (KtuneTensor * len(ts))()
    for s, t in zip(arr, ts):
        _fill(s, t)
    return arr


def struct_layout_c():
    """The C declaration of KtuneCudaTensor, for the layout check in --check-cpu."""
    return ("#include <stdint.h>\nstruct KtuneCudaTensor { void* data; int dtype; int device;"
            " int ndim; int64_t sizes[8]; int64_t strides[8]; };\n")
