"""One graph of sorts and scans over 4096 elements per slice, for the MAX
and mlir backends (whose O(n^2) rules would have built 4096 x 4096 grids:
16M elements per slice and op), with its expected results computed by numpy
and torch, never by our reference backend.

Ties are many (integer-valued data in [0, 8)) and NaNs present, so the
stable order and NaN placement are checked, not just the sorted values. Kept
to three sorts and five scans: each sort is 78 compare-exchange stages in
linalg, and compiles dominate these tests' time (topk and cummin share the
rules, and the every-op graph has them).
"""

from __future__ import annotations

import os

import numpy as np
import torch

import pyflame_mlir as pf

# 4096 on demand (PYFLAME_LARGE_SORT_N=4096: the MAX graph then compiles for
# many minutes here); by default 256, past what the old rules made practical
# in one test and already eight bitonic merge levels deep
N = int(os.environ.get("PYFLAME_LARGE_SORT_N", "256"))


def _stable_descending(x: np.ndarray, axis: int) -> np.ndarray:
    """torch's stable descending order: NaN first, equal values in input order."""
    return torch.sort(torch.from_numpy(x), dim=axis, descending=True, stable=True
                      ).indices.numpy()


def data(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    ties = rng.integers(0, 8, (2, N)).astype(np.float32)
    ties[rng.random(ties.shape) < 0.05] = np.nan
    ties[0, :3] = [-0.0, 0.0, -0.0]  # equal values: their order is the input's
    return {
        "ties": ties,
        "ints": rng.integers(-50, 50, (N, 2)).astype(np.int32),
        "near_one": (1 + rng.standard_normal((2, N)) * 1e-3).astype(np.float64),
        "wide": (rng.standard_normal((2, N)) * 30).astype(np.float32),
    }


def graph(arrays: dict[str, np.ndarray]) -> tuple[list[pf.Tensor], list[np.ndarray], list[str]]:
    """The recorded outputs, their expected values, and names for messages."""
    t = {k: pf.from_numpy(v.copy()) for k, v in arrays.items()}
    ties, ints, near_one, wide = (arrays[k] for k in ("ties", "ints", "near_one", "wide"))
    asc = np.argsort(ties, axis=1, kind="stable")  # NaN last, as torch
    desc = _stable_descending(ties, 1)
    iasc = np.argsort(ints, axis=0, kind="stable")
    cmax = torch.cummax(torch.from_numpy(ties), 1)
    named = [
        ("sort values", pf.sort(t["ties"], 1).values, np.take_along_axis(ties, asc, 1)),
        ("sort indices", pf.sort(t["ties"], 1).indices, asc),
        ("sort descending indices", pf.sort(t["ties"], 1, descending=True).indices, desc),
        ("int sort dim 0 indices", pf.argsort(t["ints"], 0), iasc),
        ("cumsum", pf.cumsum(t["wide"], 1), np.cumsum(wide.astype(np.float64), 1)),
        ("int cumsum", pf.cumsum(t["ints"], 0), np.cumsum(ints.astype(np.int64), 0)),
        ("cumprod", pf.cumprod(t["near_one"], 1), np.cumprod(near_one, 1)),
        ("logcumsumexp", pf.logcumsumexp(t["wide"], 1),
         np.logaddexp.accumulate(wide.astype(np.float64), 1)),
        ("cummax values", pf.cummax(t["ties"], 1).values, cmax.values.numpy()),
        ("cummax indices", pf.cummax(t["ties"], 1).indices, cmax.indices.numpy()),
    ]
    return [o for _, o, _ in named], [e for _, _, e in named], [n for n, _, _ in named]


def check(outs: list[pf.Tensor], want: list[np.ndarray], names: list[str]) -> None:
    for out, w, name in zip(outs, want, names):
        got = out.numpy()
        assert got.shape == w.shape, f"{name}: shape {got.shape} vs {w.shape}"
        if w.dtype.kind in "biu":
            np.testing.assert_array_equal(got, w, err_msg=name)
        else:
            # float32 sums of 4096 terms in another order: errors scale with the
            # largest partial sum, not with each (possibly small) result
            scale = float(np.nanmax(np.abs(w))) if np.isfinite(w).any() else 1.0
            np.testing.assert_allclose(got.astype(np.float64), w.astype(np.float64),
                                       rtol=1e-4, atol=1e-5 * scale, equal_nan=True,
                                       err_msg=name)
