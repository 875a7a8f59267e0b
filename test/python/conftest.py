"""Shared pytest fixtures for test/python (helpers for the op tests live in
``_oracles.py``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # ``import _oracles`` from any rootdir

from pyflame_mlir.dialects import native_kernels  # noqa: E402

import pyflame_mlir as pf  # noqa: E402


@pytest.fixture
def eager():
    """PYFLAME_EAGER mode for one test: every recorded op evaluates at once."""
    prev = pf.CONFIG.eager
    pf.CONFIG.eager = True
    try:
        yield
    finally:
        pf.CONFIG.eager = prev


@pytest.fixture
def lazy():
    """Force lazy mode for one test (even when PYFLAME_EAGER=1 is set)."""
    prev = pf.CONFIG.eager
    pf.CONFIG.eager = False
    try:
        yield
    finally:
        pf.CONFIG.eager = prev


def _in_mode(request):
    prev = pf.CONFIG.eager
    pf.CONFIG.eager = request.param == "eager"
    try:
        yield request.param
    finally:
        pf.CONFIG.eager = prev


@pytest.fixture(params=["lazy", "eager"])
def mode(request):
    """Run the test twice: lazily and in PYFLAME_EAGER mode (the param)."""
    yield from _in_mode(request)


@pytest.fixture(params=["lazy", "eager"])
def both_modes(request):
    """The same as ``mode`` (the name issue 13's tests use)."""
    yield from _in_mode(request)


_NATIVE_KERNELS = native_kernels.KERNELS


@pytest.fixture(params=["numpy", "C baseline", "C AVX2", "C AVX-512"])
def kernel_path(request, monkeypatch):
    """Which body the kernels with C loops (``dialects/_kernels.c``: GELU,
    softmax rows, max pooling) run: numpy's, or the loops' copy compiled for
    the given instruction set (skipped without the build or the CPU)."""
    if request.param == "numpy":
        monkeypatch.setattr(native_kernels, "KERNELS", None)
        yield request.param
        return
    if _NATIVE_KERNELS is None:
        pytest.skip("dialects/_kernels.c is not built (or PYFLAME_NO_NATIVE=1)")
    level = ["C baseline", "C AVX2", "C AVX-512"].index(request.param)
    monkeypatch.setattr(native_kernels, "KERNELS", _NATIVE_KERNELS)
    try:
        if _NATIVE_KERNELS.set_simd(level) != level:
            pytest.skip(f"this CPU does not run the {request.param} copy")
        yield request.param
    finally:
        _NATIVE_KERNELS.set_simd(2)
