"""Sort, topk and the scans over 4096 elements per slice on MAX, against
numpy and torch (``_sort_scan_large``): one compiled graph (minutes here)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("max.graph", reason="the MAX backend needs `max`: "
                                        "pip install 'pyflame-mlir[max]'")

import _sort_scan_large as large  # noqa: E402

import pyflame_mlir as pf  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    "PYFLAME_LARGE_SORT_N" not in os.environ,
    reason="one MAX graph of sorts and scans compiles for 10-30 minutes on these 2 cores "
           "(the every-op graph covers the same rules): set PYFLAME_LARGE_SORT_N=4096 to run it")]


def test_sorts_and_scans_of_4096_elements(on_max: Path) -> None:
    outs, want, names = large.graph(large.data())
    pf.eval(*outs)
    large.check(outs, want, names)
