"""The results of ktune as Python objects: a Tuning per problem (or per tuning-cache record) with
every candidate's outcome."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional


@dataclass(frozen=True)
class Candidate:
    """One candidate of a tuning: its outcome ("ok", "compile_error", "wrong_result", ...), the
    message of a failure, its times in seconds (None where it was not measured) and its
    parameters (name -> value as text; empty for library calls)."""

    name: str
    outcome: str
    message: str
    median_s: Optional[float]
    min_s: Optional[float]
    max_s: Optional[float]
    mad_s: Optional[float]
    runs: int
    compile_s: float
    info: str
    params: Dict[str, str] = field(default_factory=dict)
    metrics: Dict[str, float] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"


@dataclass(frozen=True)
class Tuning:
    """The tuning of one problem: its pick and every candidate. From ktune.tune() and
    ktune.gemm(), `problem` is the spec's problem name (gemm: "MxNxK") and `from_cache` says
    whether the tuning cache answered; from ktune.cache.records(), both are None."""

    problem: Optional[str]
    # Problem::name: the spec's problem name, else its sizes ("M=16,N=32,K=64"), with ",<epilogue>"
    problem_name: Optional[str]
    pick: str
    from_cache: Optional[bool]
    candidates: List[Candidate]
    digest: str
    op: str
    problem_key: str
    device: str
    toolchain: str
    version: str
    created_unix: int
    compile_s: float
    bench_s: float
    select_s: Optional[float] = None
    confidence: Optional[Dict[str, Any]] = None
    stand_in: Optional[str] = None

    @property
    def pick_candidate(self) -> Candidate:
        return next(c for c in self.candidates if c.name == self.pick)


def _tuning(d: Dict[str, Any]) -> Tuning:
    return Tuning(
        problem=d.get("problem"),
        problem_name=d.get("problem_name"),
        pick=d["pick"],
        from_cache=d.get("from_cache"),
        candidates=[Candidate(**c) for c in d["candidates"]],
        digest=d["digest"],
        op=d["op"],
        problem_key=d["problem_key"],
        device=d["device"],
        toolchain=d["toolchain"],
        version=d["version"],
        created_unix=d["created_unix"],
        compile_s=d["compile_s"],
        bench_s=d["bench_s"],
        select_s=d.get("select_s"),
        confidence=d["confidence"],
        stand_in=d["stand_in"],
    )
