"""The tuning cache, read from Python (what `ktune cache list` and `ktune cache show` print)."""

from __future__ import annotations

import os
from typing import List, Optional, Union

from . import _ktune
from ._types import Tuning, _tuning

__all__ = ["records"]


def records(
    cache_dir: Optional[Union[str, os.PathLike]] = None,
    *,
    allow_shared_cache_dir: bool = False,
    cache: Optional[str] = None,
) -> List[Tuning]:
    """Every record of the tuning cache, newest first, each with every candidate's outcome: the
    shared cache `cache` names (redis://HOST:PORT/DB; default $KTUNE_CACHE_URL), else the SQLite
    tuning cache in `cache_dir` (default: $KTUNE_CACHE_DIR, else ~/.cache/ktune), which also
    answers when that Redis server cannot be reached (with one warning)."""
    folder = None if cache_dir is None else os.fspath(cache_dir)
    if cache is not None and not isinstance(cache, str):
        raise TypeError(f"cache: expected a URL (str), got {type(cache).__name__}")
    return [_tuning(d) for d in _ktune.records(folder, allow_shared_cache_dir, cache)]
