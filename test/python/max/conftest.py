"""Fixtures of the MAX backend tests.

Every test module here starts with ``pytest.importorskip("max.graph", ...)``:
skipped, with the reason, when ``max`` does not import.
Compiling takes minutes on a small CPU, so the compiled models of one test
run are shared: ``PYFLAME_CACHE_DIR`` points at one temporary directory for
the whole run, shared by the pytest-xdist workers too, and the tests that
compile (``@pytest.mark.slow``) hold a cross-process lock so only one compile
runs at a time. MAX's own kernel cache (``MODULAR_CACHE_DIR``) stays in the
user's project cache, as outside tests.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # ``import _graphs``

@pytest.fixture(scope="session")
def shared_tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory shared by all xdist workers of this run."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    d = base / "pyflame-max"
    d.mkdir(exist_ok=True)
    return d


@pytest.fixture(scope="session")
def max_cache_dir(shared_tmp: Path) -> Path:
    from pyflame_mlir.runtime import max_backend  # sets MODULAR_CACHE_DIR first

    assert max_backend.INSTALL_HINT
    return shared_tmp / "cache"


@pytest.fixture
def max_cache(max_cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``PYFLAME_CACHE_DIR`` of the run, set for one test (MAX's kernel cache
    is left where it is)."""
    monkeypatch.setenv("PYFLAME_CACHE_DIR", str(max_cache_dir))
    return max_cache_dir


@pytest.fixture
def one_compile_at_a_time(shared_tmp: Path) -> Iterator[None]:
    """Serialize the compiling tests across xdist workers (2 cores here)."""
    import fcntl

    with open(shared_tmp / "compile.lock", "a+b") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@pytest.fixture
def on_max(max_cache: Path, one_compile_at_a_time: None) -> Iterator[Path]:
    """Run the test with the MAX backend selected and the run's shared cache."""
    import pyflame_mlir as pf

    with pf.backend("max"):
        yield max_cache
