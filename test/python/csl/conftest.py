"""Fixtures for the csl backend tests: run graphs on the WSE simulator vs the reference."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import pytest

import pyflame_mlir as pf
from pyflame_mlir.runtime import csl_backend


@pytest.fixture
def on_grid() -> Iterator[Callable]:
    """``on_grid(grid, fn)``: the outputs of ``fn()`` on the reference backend and on
    the csl backend with the given grid (``None``: automatic)."""
    prev_backend = pf.get_backend()
    prev = csl_backend.configure(mode="simulator")

    def run(grid, fn: Callable) -> tuple[list[np.ndarray], list[np.ndarray]]:
        out = []
        for backend in ("reference", "csl"):
            pf.set_backend(backend)
            csl_backend.configure(grid=grid)
            ts = fn()
            ts = list(ts) if isinstance(ts, list | tuple) else [ts]
            pf.eval(*ts)
            out.append([t.numpy() for t in ts])
        return out[0], out[1]

    try:
        yield run
    finally:
        pf.set_backend(prev_backend)
        csl_backend.configure(**vars(prev))


@pytest.fixture
def csl() -> Iterator[object]:
    """The csl backend on the simulator (the backend and its options restored after)."""
    prev_backend = pf.get_backend()
    prev = csl_backend.configure(mode="simulator")
    try:
        yield csl_backend
    finally:
        pf.set_backend(prev_backend)
        csl_backend.configure(**vars(prev))
