"""Fixtures of the ktune package's tests. They run against the installed package (the built
wheel in a virtual environment), never the sources in python/ktune."""

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def repo() -> Path:
    return REPO


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    return folder


@pytest.fixture(autouse=True)
def own_worker(monkeypatch):
    # The worker the package carries, not one named by the environment.
    monkeypatch.delenv("KTUNE_WORKER", raising=False)
