"""Fixtures of the ``mlir`` backend tests: skipped, with the reason, when the
upstream MLIR bindings (extra ``[mlir]``) are missing. Each test gets its own
``PYFLAME_CACHE_DIR`` and a clean in-memory compile cache."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# the op-coverage graph, demo MLP and training step the MAX tests use (one suite)
sys.path.insert(0, str(Path(__file__).parent.parent / "max"))


@pytest.fixture
def on_mlir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    import pyflame_mlir as pf
    from pyflame_mlir.compiler import CACHE
    from pyflame_mlir.runtime import mlir_backend

    cache = tmp_path / "cache"
    monkeypatch.setenv("PYFLAME_CACHE_DIR", str(cache))
    CACHE.clear()
    mlir_backend.STATS.reset()
    with pf.backend("mlir"):
        yield cache
    CACHE.clear()
