"""Sort, topk and the scans over 4096 elements per slice on the mlir
backend (a bitonic network and Hillis-Steele scans), against numpy and torch
(``max/_sort_scan_large.py``), and the reference backend on the same graph."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("mlir.ir", reason="the mlir backend needs the MLIR Python bindings")

import _sort_scan_large as large  # noqa: E402

import pyflame_mlir as pf  # noqa: E402


def test_sorts_and_scans_of_4096_elements(on_mlir: Path) -> None:
    outs, want, names = large.graph(large.data())
    pf.eval(*outs)
    large.check(outs, want, names)


def test_the_reference_backend_agrees_with_the_oracles() -> None:
    with pf.backend("reference"):
        outs, want, names = large.graph(large.data(seed=1))
        pf.eval(*outs)
        large.check(outs, want, names)
