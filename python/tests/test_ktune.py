"""ktune from Python, against the installed wheel: tuning a spec file and a dict spec, the
tuning cache, errors with positions, wrong types, the Dispatcher on numpy arrays, and
ktune.gemm's error without a GPU."""

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import numpy as np
import pytest

import ktune

# Small and fast: 4 candidates (BLOCK 4, 8, 16 and OpenBLAS) at two shapes, 5 ms each.
FAST = dict(budget_ms=5, min_runs=3, max_runs=20, warmup_runs=1)


def mm_spec(repo):
    return repo / "test" / "data" / "cli" / "mm.yaml"


# The content of test/data/cli/mm.yaml as a dict (kernel.source resolved from base_dir).
MM_DICT = {
    "name": "mm_dict",
    "kernel": {"source": "mm.cpp", "entry": "mm"},
    "args": [
        {"name": "C", "role": "out", "dtype": "f32", "shape": ["M", "N"]},
        {"name": "A", "role": "in", "dtype": "f32", "shape": ["M", "K"]},
        {"name": "B", "role": "in", "dtype": "f32", "shape": ["K", "N"]},
        {"name": "M", "dtype": "i32", "value": "M"},
        {"name": "N", "dtype": "i32", "value": "N"},
        {"name": "K", "dtype": "i32", "value": "K"},
    ],
    "problems": [{"name": "small", "M": 16, "N": 32, "K": 64}],
    "params": {"BLOCK": [4, 8]},
    "externs": [
        {
            "name": "openblas",
            "kind": "openblas.gemm",
            "bind": {"c": "C", "a": "A", "b": "B", "m": "M", "n": "N", "k": "K"},
        }
    ],
    "reference": {"extern": "openblas"},
}


def test_imports_the_installed_package_with_its_worker(repo):
    package = Path(ktune.__file__).resolve().parent
    assert repo / "python" not in package.parents, f"tests must run the wheel, not {package}"
    worker = package / "ktune-worker"
    assert worker.is_file() and os.stat(worker).st_mode & stat.S_IXUSR
    assert ktune.__version__


def test_tune_spec_file_returns_picks_and_every_candidate(repo, cache_dir):
    # no_abandon: every candidate measured to its budget (else a slow one may end "abandoned").
    results = ktune.tune(mm_spec(repo), cache_dir=cache_dir, no_abandon=True, **FAST)
    assert [r.problem for r in results] == ["small", "skinny"]
    assert [r.problem_name for r in results] == ["small", "skinny"]  # Problem::name
    for r in results:
        assert r.from_cache is False
        names = sorted(c.name for c in r.candidates)
        assert names == ["mm_BLOCK16", "mm_BLOCK4", "mm_BLOCK8", "openblas"]
        assert r.pick in names
        assert r.pick_candidate.ok and r.pick_candidate.median_s > 0
        for c in r.candidates:
            assert c.outcome == "ok", (c.name, c.message)
            assert c.median_s > 0 and c.min_s <= c.median_s <= c.max_s and c.runs >= 3
        block = {c.name: c.params for c in r.candidates}
        assert block["mm_BLOCK8"] == {"BLOCK": "8"}
        assert block["openblas"] == {}
        assert len(r.digest) >= 16 and r.op == "mm"

    # The second time the tuning cache answers, with the same picks and records.
    again = ktune.tune(str(mm_spec(repo)), cache_dir=str(cache_dir), no_abandon=True, **FAST)
    assert [r.from_cache for r in again] == [True, True]
    assert [(r.pick, r.digest) for r in again] == [(r.pick, r.digest) for r in results]

    # retune measures again under the same key.
    retuned = ktune.tune(mm_spec(repo), "skinny", cache_dir=cache_dir, retune=True, **FAST)
    assert [(r.problem, r.from_cache) for r in retuned] == [("skinny", False)]
    assert retuned[0].digest == results[1].digest


def test_problem_selection(repo, cache_dir):
    by_index = ktune.tune(mm_spec(repo), problem=1, no_cache=True, cache_dir=cache_dir, **FAST)
    assert [r.problem for r in by_index] == ["skinny"]
    both = ktune.tune(mm_spec(repo), ["skinny", "small"], no_cache=True, cache_dir=cache_dir,
                      **FAST)
    assert [r.problem for r in both] == ["small", "skinny"]
    with pytest.raises(ktune.InvalidArgumentError) as e:
        ktune.tune(mm_spec(repo), problem="nope", cache_dir=cache_dir)
    assert "problem= 'nope' matches no problem; the spec's problems are: small (0), skinny (1)" in (
        str(e.value)
    )
    assert isinstance(e.value, ValueError)


def test_no_cache_writes_no_record(repo, cache_dir):
    ktune.tune(mm_spec(repo), "small", no_cache=True, cache_dir=cache_dir, **FAST)
    assert ktune.cache.records(cache_dir) == []


def test_dict_spec(repo, cache_dir):
    results = ktune.tune(MM_DICT, base_dir=repo / "test" / "data" / "cli", cache_dir=cache_dir,
                         **FAST)
    assert len(results) == 1
    r = results[0]
    assert r.problem == "small" and r.op == "mm_dict"
    assert sorted(c.name for c in r.candidates) == ["mm_dict_BLOCK4", "mm_dict_BLOCK8", "openblas"]
    assert r.pick_candidate.ok
    assert all(c.outcome in ("ok", "abandoned") for c in r.candidates)


def test_dict_spec_error_has_its_position(repo):
    bad = json.loads(json.dumps(MM_DICT))
    bad["args"][1]["dtype"] = "f33"
    with pytest.raises(ktune.SpecError) as e:
        ktune.tune(bad, base_dir=repo / "test" / "data" / "cli")
    err = e.value
    # Positions are those of the dict as two-space indented JSON.
    text = json.dumps(bad, indent=2).splitlines()
    line = next(i for i, t in enumerate(text, 1) if '"f33"' in t)
    assert err.line == line
    assert err.col == text[line - 1].index('"f33"') + 1
    assert err.file.endswith("<dict>")
    assert "args[1].dtype: unknown dtype 'f33'; expected one of f16, bf16" in err.message
    assert isinstance(err, ktune.Error) and isinstance(err, ValueError)


def test_spec_file_error_is_the_clis_message(repo):
    spec = repo / "test" / "data" / "specs" / "bad" / "unknown_dtype.yaml"
    with pytest.raises(ktune.SpecError) as e:
        ktune.tune(spec)
    err = e.value
    assert (err.file, err.line, err.col) == (str(spec), 5, 32)
    assert str(err) == (
        f"{spec}:5:32: args[1].dtype: unknown dtype 'f33'; expected one of f16, bf16, f32, f64, "
        "i8, i32, i64"
    )
    cli = os.environ.get("KTUNE_CLI")  # the CTest test passes build/bin/ktune
    if cli:
        run = subprocess.run([cli, "tune", str(spec)], capture_output=True, text=True)
        assert run.returncode == 1
        assert run.stderr.strip() == f"error: {err}"


def test_missing_spec_file(tmp_path):
    with pytest.raises(ktune.SpecError) as e:
        ktune.tune(tmp_path / "nowhere.yaml")
    assert e.value.code == "not_found" and "nowhere.yaml" in str(e.value)


def test_wrong_types_are_type_errors(repo):
    with pytest.raises(TypeError):
        ktune.tune(42)
    with pytest.raises(TypeError):
        ktune.tune(mm_spec(repo), budget_ms="fast")
    with pytest.raises(TypeError):
        ktune.tune(mm_spec(repo), jobs=-1)
    with pytest.raises(TypeError):
        ktune.tune(mm_spec(repo), no_such_option=1)
    with pytest.raises(TypeError):
        ktune.tune(mm_spec(repo), problem=2.5)
    with pytest.raises(TypeError):
        ktune.tune({"name": object()})
    with pytest.raises(TypeError):
        ktune.gemm("8", 8, 8)
    with pytest.raises(TypeError):
        ktune.cache.records(cache_dir=3)


def test_decide_options_reach_the_decide_stage(repo):
    # As --close-call-band, --decide-rounds and --no-decide-ahead: with every candidate a close
    # call (a band of 10: within 11x of the fastest), the pick's ratio to the runner-up rests on
    # the decide rounds, at most decide_rounds of them; with 0 rounds on none. The settings are
    # part of the record's measure settings, so each is a tuning of its own (no_cache here).
    common = dict(no_cache=True, no_abandon=True, close_call_band=10, **FAST)
    [r] = ktune.tune(mm_spec(repo), problem="small", decide_rounds=2, no_decide_ahead=True,
                     **common)
    assert r.confidence is not None and 1 <= r.confidence["ratio_rounds"] <= 2, r.confidence
    [r] = ktune.tune(mm_spec(repo), problem="small", decide_rounds=0, **common)
    assert r.confidence is None or r.confidence["ratio_rounds"] == 0, r.confidence


def test_bad_values_are_clear_errors(repo):
    with pytest.raises(ktune.InvalidArgumentError, match="budget_ms: expected 0.001 to"):
        ktune.tune(mm_spec(repo), budget_ms=0)
    with pytest.raises(ktune.InvalidArgumentError, match="strategy: expected one of"):
        ktune.tune(mm_spec(repo), strategy="fastest")
    with pytest.raises(ktune.InvalidArgumentError, match="min_runs 9 is above max_runs 3"):
        ktune.tune(mm_spec(repo), min_runs=9, max_runs=3)
    with pytest.raises(ktune.InvalidArgumentError, match="close_call_band: expected 0 to 10"):
        ktune.tune(mm_spec(repo), close_call_band=-0.5)
    with pytest.raises(ktune.InvalidArgumentError, match="decide_rounds: expected 0 to 1000"):
        ktune.tune(mm_spec(repo), decide_rounds=1001)
    with pytest.raises(ktune.InvalidArgumentError, match="m: expected 1 to"):
        ktune.gemm(0, 8, 8)
    with pytest.raises(ktune.InvalidArgumentError, match="dtype: 'i8': expected bf16, f16 or f32"):
        ktune.gemm(8, 8, 8, dtype="i8")


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two cores")
def test_devices_spread_the_candidates_over_pinned_workers(repo, cache_dir):
    # Two CPU devices, each a worker pinned to one core: every candidate of the planted spec is
    # right only there (test/data/devices/scale.cpp, PINNED).
    cores = sorted(os.sched_getaffinity(0))[:2]
    spec = repo / "test" / "data" / "devices" / "pinned.yaml"
    for devices in (cores, ",".join(map(str, cores))):
        [r] = ktune.tune(spec, devices=devices, no_cache=True, no_abandon=True,
                         cache_dir=cache_dir, **FAST)
        assert r.pick == "scale_pinned_WORK1_FAULT0_PINNED1"
        assert all(c.outcome == "ok" for c in r.candidates), [c.message for c in r.candidates]
    with pytest.raises(ktune.InvalidArgumentError, match=f"core {cores[0]} is in two devices"):
        ktune.tune(spec, devices=[cores[0], cores[0]], cache_dir=cache_dir)
    with pytest.raises(ktune.InvalidArgumentError, match="cannot be combined with in_process"):
        ktune.tune(spec, devices=str(cores[0]), in_process=True, cache_dir=cache_dir)
    with pytest.raises(TypeError):
        ktune.tune(spec, devices=1.5, cache_dir=cache_dir)


def test_shared_cache_dir_is_refused(repo, tmp_path):
    shared = tmp_path / "shared"
    (shared / "code").mkdir(parents=True)
    os.chmod(shared / "code", 0o777)
    with pytest.raises(ktune.InvalidArgumentError, match="writable by"):
        ktune.tune(mm_spec(repo), cache_dir=shared)


def test_cache_records_are_the_tunings(repo, cache_dir):
    tuned = ktune.tune(mm_spec(repo), cache_dir=cache_dir, **FAST)
    records = ktune.cache.records(cache_dir)
    assert sorted(r.digest for r in records) == sorted(t.digest for t in tuned)
    by_digest = {r.digest: r for r in records}
    for t in tuned:
        r = by_digest[t.digest]
        assert r.pick == t.pick and r.problem is None and r.from_cache is None
        assert [(c.name, c.outcome, c.median_s) for c in r.candidates] == [
            (c.name, c.outcome, c.median_s) for c in t.candidates
        ]
        assert isinstance(r.candidates[0], ktune.Candidate)


def test_cache_records_of_a_missing_folder_are_empty(tmp_path):
    assert ktune.cache.records(tmp_path / "none") == []


def test_dispatcher_serves_the_tuned_picks_on_numpy_arrays(repo, cache_dir):
    tuned = {t.problem: t for t in ktune.tune(mm_spec(repo), cache_dir=cache_dir, **FAST)}
    d = ktune.Dispatcher(mm_spec(repo), cache_dir=cache_dir)
    assert d.size_names == ["M", "N", "K"]
    assert d.pick({"M": 16, "N": 32, "K": 64}) == (tuned["small"].pick, "exact",
                                                  (16, 32, 64))
    assert d.pick([2, 64, 32])[1] == "exact"
    name, source, served = d.pick({"M": 20, "N": 32, "K": 64})
    assert source == "nearest" and served == (16, 32, 64)

    rng = np.random.default_rng(0)
    for m, n, k in [(16, 32, 64), (2, 64, 32), (20, 30, 40)]:
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = rng.standard_normal((k, n), dtype=np.float32)
        c = np.full((m, n), np.nan, dtype=np.float32)
        served = d.call({"M": m, "N": n, "K": k}, c, a, b)
        assert served == d.pick([m, n, k])[0]
        np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_dispatcher_refuses_bad_buffers(repo, cache_dir):
    d = ktune.Dispatcher(mm_spec(repo), cache_dir=cache_dir)
    sizes = {"M": 4, "N": 4, "K": 4}
    a = np.ones((4, 4), dtype=np.float32)
    with pytest.raises(ktune.InvalidArgumentError, match="A: expected an array of f32"):
        d.call(sizes, np.zeros((4, 4), np.float32), a.astype(np.float64), a)
    with pytest.raises(ktune.InvalidArgumentError, match="C: 8 elements given; the kernel "
                       "addresses 16"):
        d.call(sizes, np.zeros(8, np.float32), a, a)
    with pytest.raises(ktune.InvalidArgumentError, match=r"2 buffer\(s\) given; the spec's "
                       r"buffers are 3 \(C, A, B\)"):
        d.call(sizes, a, a)
    with pytest.raises(ktune.InvalidArgumentError):
        d.call({"M": 4, "N": 4}, a, a, a)
    with pytest.raises(ktune.InvalidArgumentError, match="sizes: 2 given; expected 3"):
        d.pick([4, 4])
    with pytest.raises(TypeError):
        d.call(sizes, np.zeros((4, 4), np.float32)[:, ::2], a, a)  # not C-contiguous
    with pytest.raises(TypeError):
        d.call(sizes, [0.0] * 16, a, a)
    with pytest.raises(TypeError):
        d.pick("M=4")


def test_dispatcher_default_without_tuned_shapes(repo, cache_dir):
    d = ktune.Dispatcher(MM_DICT, base_dir=repo / "test" / "data" / "cli", cache_dir=cache_dir)
    name, source, served = d.pick({"M": 8, "N": 8, "K": 8})
    assert (name, source, served) == ("mm_dict_BLOCK4", "default", ())
    with pytest.raises(ktune.Error, match="no_such_candidate"):
        ktune.Dispatcher(mm_spec(repo), cache_dir=cache_dir, default="no_such_candidate")


def has_gpu():
    return shutil.which("nvidia-smi") is not None and os.path.exists("/dev/nvidiactl")


@pytest.mark.skipif(has_gpu(), reason="this machine has a GPU")
def test_gemm_without_a_gpu_is_a_clear_error(cache_dir):
    with pytest.raises(ktune.UnavailableError) as e:
        ktune.gemm(64, 64, 64, cache_dir=cache_dir)
    msg = str(e.value)
    assert ("CUDA" in msg or "cuda" in msg or "GPU" in msg), msg
    assert e.value.code == "unavailable"


@pytest.mark.skipif(has_gpu(), reason="this machine has a GPU")
def test_op_spec_without_a_gpu_is_a_clear_error(repo, cache_dir):
    with pytest.raises(ktune.UnavailableError):
        ktune.tune(repo / "examples" / "cuda_gemm" / "gemm_bf16.yaml", cache_dir=cache_dir)


@pytest.mark.skipif(has_gpu(), reason="a GPU is there")
def test_cuda_kernel_spec_without_a_gpu_is_a_clear_error(repo, cache_dir):
    with pytest.raises(ktune.UnavailableError):
        ktune.tune(repo / "examples" / "cuda_reduction" / "spec.yaml", cache_dir=cache_dir)


def test_opencl_kernel_spec_on_pocl(repo, cache_dir):
    # The OpenCL spec of test/data/opencl_spec (scale, against expected outputs) on the first
    # OpenCL device (PoCL in CI), as `ktune tune` tunes it (ctest's opencl label runs the CLI side).
    if not ktune._ktune.has_opencl():
        pytest.skip("this build has no OpenCL support")
    spec = repo / "test" / "data" / "opencl_spec" / "expected.yaml"
    try:
        results = ktune.tune(spec, cache_dir=cache_dir, no_abandon=True, **FAST)
    except (ktune.UnavailableError, ktune.NotFoundError) as e:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(f"no OpenCL device: {e}")
    assert results and all(r.pick for r in results)
    for r in results:
        outcomes = {c.name: c.outcome for c in r.candidates}
        assert outcomes["scale_expected_WG64_ITEMS1_FAULT3"] == "wrong_result", outcomes
        assert sum(o == "ok" for o in outcomes.values()) == 4, outcomes
    # A device that is not there: the error lists those that are.
    with pytest.raises(ktune.NotFoundError, match="devices:"):
        ktune.tune(spec, cache_dir=cache_dir, opencl_device="no-such-device", **FAST)


@pytest.mark.skipif(not has_gpu(), reason="no GPU")
def test_gemm_on_a_gpu(cache_dir):
    r = ktune.gemm(256, 256, 256, dtype="bf16", cache_dir=cache_dir, budget_ms=5)
    assert r.pick_candidate.ok and any(c.name == "cublas_gemm" for c in r.candidates)


@pytest.fixture
def redis_url(tmp_path):
    """A real redis-server on a free loopback port, no persistence; skipped without one, except
    under CI=true (CI installs it)."""
    server = shutil.which("redis-server")
    if server is None:
        if os.environ.get("CI") == "true":
            pytest.fail("redis-server is not installed (CI installs it: make deps)")
        pytest.skip("redis-server is not installed")
    import socket
    import time

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", str(tmp_path)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2) as c:
                    c.sendall(b"PING\r\n")
                    if c.recv(16).startswith(b"+PONG"):
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, "redis-server did not answer PING"
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.kill()
        proc.wait()


def test_shared_redis_cache_answers_another_cache_folder(repo, tmp_path, redis_url):
    for name in ("a", "b"):
        (tmp_path / name).mkdir(mode=0o700)
    first = ktune.tune(mm_spec(repo), problem="small", cache_dir=tmp_path / "a", cache=redis_url,
                       no_abandon=True, **FAST)
    assert first[0].from_cache is False
    # Another folder (another machine's) with the same server: answered without measuring.
    again = ktune.tune(mm_spec(repo), problem="small", cache_dir=tmp_path / "b", cache=redis_url,
                       no_abandon=True, **FAST)
    assert again[0].from_cache is True and again[0].pick == first[0].pick
    listed = ktune.cache.records(tmp_path / "b", cache=redis_url)
    assert [r.digest for r in listed] == [first[0].digest]
    # Nothing went to the local SQLite file of either folder.
    assert ktune.cache.records(tmp_path / "a") == []


def test_dispatcher_serves_the_picks_of_a_shared_redis_cache(repo, tmp_path, redis_url):
    for name in ("a", "b"):
        (tmp_path / name).mkdir(mode=0o700)
    tuned = ktune.tune(mm_spec(repo), problem="small", cache_dir=tmp_path / "a",
                       cache=redis_url, **FAST)
    # Another folder (another machine's), the same server: the tuned pick is served exactly.
    d = ktune.Dispatcher(mm_spec(repo), cache_dir=tmp_path / "b", cache=redis_url)
    assert d.pick({"M": 16, "N": 32, "K": 64}) == (tuned[0].pick, "exact", (16, 32, 64))
    # Without the server, folder b's own cache has nothing tuned: the default serves.
    local = ktune.Dispatcher(mm_spec(repo), cache_dir=tmp_path / "b")
    assert local.pick({"M": 16, "N": 32, "K": 64})[1] == "default"


def test_unreachable_redis_falls_back_to_the_local_cache(repo, cache_dir, capfd):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]  # closed again when the block ends
    results = ktune.tune(mm_spec(repo), problem="small", cache_dir=cache_dir,
                         cache=f"redis://127.0.0.1:{closed}/0", no_abandon=True, **FAST)
    assert results[0].from_cache is False
    err = capfd.readouterr().err
    warnings = [line for line in err.splitlines() if line.startswith("ktune: warning: Redis at")]
    assert len(warnings) == 1 and "unreachable" in warnings[0], err
    assert [r.digest for r in ktune.cache.records(cache_dir)] == [results[0].digest]


def test_malformed_cache_url_is_a_clear_error(repo, cache_dir):
    with pytest.raises(ktune.Error, match="99999"):
        ktune.tune(mm_spec(repo), cache_dir=cache_dir, cache="redis://host:99999/0", **FAST)
    with pytest.raises(TypeError):
        ktune.cache.records(cache_dir, cache=6379)
