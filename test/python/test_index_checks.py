"""An out-of-range index computed in the graph raises ``IndexError`` naming the
op, on every backend: the reference kernels check it themselves; the others
run the ``check-indices`` pass, whose counts the compile driver checks after
the run. One compiled graph serves the good and the bad data (the indices are
leaves), so the check costs no recompilation and no stale result."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import pyflame_mlir as pf
from pyflame_mlir.compiler import COUNTERS

sys.path.insert(0, str(Path(__file__).parent / "max"))
from _graphs import expected_lazy_indexing, lazy_indexing  # noqa: E402

GOOD = ([3, 0, 1], [2, 2], [0, 3, 3])
BAD = {  # which op gets the bad index -> the op named by the error
    "gather": (([3, 4, 1], [2, 2], [0, 3, 3]), "gather"),
    "gather, negative": (([3, -5, 1], [2, 2], [0, 3, 3]), "gather"),
    "embedding": (([3, 0, 1], [2, 9], [0, 3, 3]), "gather"),
    "scatter_add": (([3, 0, 1], [2, 2], [0, 7, 3]), "scatter_add"),
}


def _backends() -> list:
    from pyflame_mlir.compiler import BACKENDS

    why = BACKENDS["mlir"].available()
    return ["reference", pytest.param("mlir", marks=pytest.mark.skipif(
        why is not None, reason=f"the mlir backend is not available: {why}"))]


@pytest.mark.parametrize("backend", _backends())
def test_out_of_range_lazy_indices_raise_on_every_backend(backend: str, lazy: None) -> None:
    """Lazy-only: the indices must be computed in the graph, which only lazy
    mode records (in eager mode they are realized first and the record-time
    check raises, ``gather: index 4 is out of bounds ...``, before any graph)."""
    with pf.backend(backend):
        got = pf.eval(*lazy_indexing(*GOOD))
        for g, want in zip(got, expected_lazy_indexing(*GOOD)):
            np.testing.assert_array_equal(g.numpy(), want)
        compiles = COUNTERS.compiles
        for data, op in BAD.values():
            with pytest.raises(IndexError, match=rf"pyflame\.{op}: .*out of bounds"):
                pf.eval(*lazy_indexing(*data))
        # the good data again: same graph, still right after the errors
        got = pf.eval(*lazy_indexing(*GOOD))
        for g, want in zip(got, expected_lazy_indexing(*GOOD)):
            np.testing.assert_array_equal(g.numpy(), want)
        assert COUNTERS.compiles == compiles, "bad data must not recompile the graph"
