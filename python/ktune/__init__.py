"""ktune from Python: tune a spec (a file or a dict), tune a CUDA GEMM, read the tuning cache and
serve tuned picks with a Dispatcher. The work is done by the ktune library in the extension
ktune._ktune; candidates run in the ktune-worker shipped beside it. README.md, "Python"."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, List, Optional, Union

from . import _ktune, cache
from ._types import Candidate, Tuning, _tuning
from .errors import (
    Error,
    InvalidArgumentError,
    NotFoundError,
    NoValidChoiceError,
    SpecError,
    UnavailableError,
    _make,
)

__all__ = [
    "tune",
    "gemm",
    "Dispatcher",
    "cache",
    "Candidate",
    "Tuning",
    "Error",
    "SpecError",
    "InvalidArgumentError",
    "NotFoundError",
    "NoValidChoiceError",
    "UnavailableError",
]
__version__ = _ktune.version()

# The worker that runs candidates in isolation: the one installed with the package, unless
# $KTUNE_WORKER names another.
_ktune.set_worker(str(Path(__file__).with_name("ktune-worker")))

SpecLike = Union[str, os.PathLike, Mapping]


def _spec_args(spec: Any, base_dir: Optional[Union[str, os.PathLike]]) -> tuple:
    """(file, text): a spec file's path, or a dict serialised to JSON (the spec reader takes JSON)
    under the name "<dict>", in `base_dir` when given (its relative paths, such as
    kernel.source, resolve there; else in the current folder). Positions in errors are lines and
    columns of that JSON, two-space indented."""
    if isinstance(spec, Mapping):
        try:
            text = json.dumps(spec, indent=2)
        except (TypeError, ValueError) as e:
            raise TypeError(f"spec: a dict of JSON values is expected: {e}") from None
        name = "<dict>" if base_dir is None else os.path.join(os.fspath(base_dir), "<dict>")
        return name, text
    if isinstance(spec, (str, os.PathLike)):
        if base_dir is not None:
            raise TypeError("base_dir applies to a dict spec; a spec file's paths are its folder's")
        return os.fspath(spec), None
    raise TypeError(f"spec: expected a path (str, os.PathLike) or a dict, got {type(spec).__name__}")


def _args(options: dict) -> Any:
    """The options as the extension takes them (typed keywords: a wrong type or an unknown name is
    a TypeError); paths may be os.PathLike."""
    for name in ("cache_dir", "json_log"):
        if isinstance(options.get(name), os.PathLike):
            options[name] = os.fspath(options[name])
    devices = options.get("devices")
    if devices is not None and not isinstance(devices, str):
        # [0, 1], or on the CPU core sets such as ["0-3", "4-7"]: the --devices list.
        if isinstance(devices, int) and not isinstance(devices, bool):
            devices = [devices]
        if not isinstance(devices, Sequence) or not all(
            isinstance(d, (str, int)) and not isinstance(d, bool) for d in devices
        ):
            raise TypeError(
                "devices: expected 'all', a list of device indices, or on the CPU of cores and "
                f"core ranges ('0-3'), got {type(devices).__name__}"
            )
        options["devices"] = ",".join(str(d) for d in devices)
    return _ktune.TuneArgs(**options)


def _problems(problem: Any) -> List[str]:
    if problem is None:
        return []
    if isinstance(problem, (str, int)) and not isinstance(problem, bool):
        return [str(problem)]
    if isinstance(problem, Sequence) and all(
        isinstance(p, (str, int)) and not isinstance(p, bool) for p in problem
    ):
        return [str(p) for p in problem]
    raise TypeError(
        "problem: expected a problem's name or 0-based index, or a list of them, got "
        f"{type(problem).__name__}"
    )


def tune(
    spec: SpecLike,
    problem: Union[None, str, int, Sequence] = None,
    *,
    base_dir: Optional[Union[str, os.PathLike]] = None,
    cxx: Optional[str] = None,
    cxxflags: Sequence[str] = (),
    device: int = 0,
    opencl_device: Optional[str] = None,
    **options: Any,
) -> List[Tuning]:
    """Tunes the problems of `spec` (a spec file, YAML or JSON, or a dict of the same content;
    docs/spec.md), all of them or `problem` (a name or 0-based index, or a list), as
    `ktune tune SPEC` does, and returns one Tuning per problem: the pick and every candidate's
    outcome. A problem the tuning cache holds is answered from it without measuring.

    Options (keywords, as `ktune tune`'s flags without the dashes): cache_dir, cache (a shared
    tuning cache, redis://HOST:PORT/DB; default $KTUNE_CACHE_URL), no_cache, retune,
    budget_ms, min_runs, max_runs, warmup_runs, close_call_band, decide_rounds, jobs, strategy,
    max_evals, time_limit_s, seed, search_seed, in_process, no_flush, no_abandon,
    no_decide_ahead, run_timeout_ms, memory_limit_mb, json_log,
    allow_shared_cache_dir, devices; table=True prints the AUTOTUNE tables on stdout,
    progress=True the progress lines on stderr. devices ("all", [0, 1], or on the CPU core sets
    such as ["0-3", "4-7"]): measure on several devices at once, one worker each (`--devices`). cxx and cxxflags (added after the defaults): the C++ compiler (of
    c++ kernels, and of a device kernel's c++ reference). device: the GPU of a cuda kernel spec
    (`--device`); opencl_device: the device of an opencl kernel spec (`--opencl-device`:
    [<platform>:]<device>, default $KTUNE_OPENCL_DEVICE, else the first).

    Kernel specs (c++, cuda, opencl) and op: cuda.gemm specs; raises UnavailableError where this
    build or machine lacks the device, SpecError for a spec that does not read
    (with its file, line and column), and, after tuning the others, the first problem's failure
    (e.g. NoValidChoiceError), whose `results` holds the problems that were tuned."""
    file, text = _spec_args(spec, base_dir)
    if isinstance(cxxflags, str) or not all(isinstance(f, str) for f in cxxflags):
        raise TypeError("cxxflags: expected a list of str (each one flag)")
    args = _args(options)
    out = _ktune.tune(file, text, _problems(problem), args, cxx, list(cxxflags), device,
                      opencl_device)
    results = [_tuning(d) for d in out["results"]]
    if out["errors"]:
        name, code, message = out["errors"][0]
        error = _make(code, message)
        error.problem = name
        error.results = results
        error.errors = [tuple(e) for e in out["errors"]]
        raise error
    if out["interrupted"]:
        raise KeyboardInterrupt("ktune: interrupted; the candidates measured are kept")
    return results


def gemm(
    m: int,
    n: int,
    k: int,
    dtype: str = "bf16",
    epilogue: Optional[str] = None,
    *,
    device: int = 0,
    cublaslt_algos: int = 8,
    simt: bool = False,
    graph_calls: int = -1,
    **options: Any,
) -> Tuning:
    """Tunes C = A B (+ epilogue, e.g. "bias+relu") of m x k by k x n in `dtype` (bf16, f16, f32)
    on CUDA GPU `device`, as `ktune gemm` does: ktune's templates against cuBLAS and cuBLASLt,
    verified against cuBLAS. Options as for tune(). Raises UnavailableError on a machine without
    a GPU or a ktune built without CUDA."""
    args = _args(options)
    return _tuning(
        _ktune.gemm(
            m, n, k, dtype, "none" if epilogue is None else epilogue, device, cublaslt_algos, simt,
            graph_calls, args,
        )
    )


class Dispatcher:
    """Serves a c++ kernel spec's tuned picks by shape (exact, else the nearest tuned shape, else
    the default candidate), as ktune::tuning::open_dispatcher does in C++: picks are read from
    the tuning cache that ktune.tune() and `ktune tune` write.

        d = ktune.Dispatcher("matmul.yaml")
        d.call({"M": 64, "N": 64, "K": 64}, C, A, B)   # numpy arrays, in the spec's order

    Scalars (the spec's `value:` arguments) are computed from the sizes; the buffers must have the
    spec's dtype, be C-contiguous and hold what the kernel addresses at those sizes. cache: a
    shared tuning cache (redis://HOST:PORT/DB; default $KTUNE_CACHE_URL, else the SQLite file of
    cache_dir) to read the picks from and store background tunings in, as tune()'s."""

    def __init__(
        self,
        spec: SpecLike,
        *,
        cache_dir: Optional[Union[str, os.PathLike]] = None,
        default: Optional[str] = None,
        tune_unseen: bool = False,
        base_dir: Optional[Union[str, os.PathLike]] = None,
        allow_shared_cache_dir: bool = False,
        cache: Optional[str] = None,
    ):
        file, text = _spec_args(spec, base_dir)
        folder = None if cache_dir is None else os.fspath(cache_dir)
        self._d = _ktune.Dispatcher(
            file, text, folder, default, tune_unseen, allow_shared_cache_dir, cache
        )

    @property
    def size_names(self) -> List[str]:
        """The sizes a call takes, in the order a sequence of sizes gives them."""
        return list(self._d.size_names)

    def _sizes(self, sizes: Any) -> list:
        if isinstance(sizes, Mapping):
            return [(str(k), v) for k, v in sizes.items()]
        if isinstance(sizes, Sequence) and not isinstance(sizes, str):
            names = self.size_names
            if len(sizes) != len(names):
                raise InvalidArgumentError(
                    f"sizes: {len(sizes)} given; expected {len(names)} ({', '.join(names)})",
                    "invalid_argument",
                )
            return list(zip(names, sizes))
        raise TypeError(
            f"sizes: expected a dict of sizes by name or a sequence in size_names order, got "
            f"{type(sizes).__name__}"
        )

    def pick(self, sizes: Any) -> tuple:
        """(candidate name, "exact" | "nearest" | "default", the tuned shape served) for these
        sizes."""
        name, source, tuned = self._d.pick(self._sizes(sizes))
        return name, source, tuple(tuned)

    def call(self, sizes: Any, *buffers: Any) -> str:
        """Runs the served kernel on `buffers` (numpy arrays, the spec's buffer arguments in
        order); returns the candidate's name."""
        return self._d.call(self._sizes(sizes), list(buffers))

    def wait(self) -> None:
        """Waits for the background tunings (tune_unseen) started so far; raises the first
        failure among them."""
        self._d.wait()

    @property
    def background_tunings(self) -> int:
        return self._d.background_tunings
