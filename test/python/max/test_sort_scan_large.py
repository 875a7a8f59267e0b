"""Sort, topk and the scans over 4096 elements per slice on MAX, against
numpy and torch (``_sort_scan_large``): one compiled graph (minutes here)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("max.graph", reason="the MAX backend needs `max`: "
                                        "pip install 'pyflame-mlir[max]'")

import _sort_scan_large as large  # noqa: E402

import pyflame_mlir as pf  # noqa: E402

pytestmark = pytest.mark.slow


def test_sorts_and_scans_of_4096_elements(on_max: Path) -> None:
    outs, want, names = large.graph(large.data())
    pf.eval(*outs)
    large.check(outs, want, names)
