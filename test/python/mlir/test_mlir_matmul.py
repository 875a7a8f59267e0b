"""matmul on the ``mlir`` backend, where contractions go to BLAS
(``runtime/mlir_blas.py``) or stay JITed loops, against numpy in float64:
f32 and f64, sizes that are no multiple of anything, transposed and sliced
operands, batched and batch-broadcast products, vectors, tiny products; one
compiled graph per dtype, so the test stays fast."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mlir.execution_engine", reason="the mlir backend needs the upstream MLIR "
                    "Python bindings: pip install 'pyflame-mlir[mlir]'")

import pyflame_mlir as pf  # noqa: E402
from pyflame_mlir.runtime import mlir_backend, mlir_blas  # noqa: E402

# (lhs shape, rhs shape, lhs transposed before the product, rhs transposed)
CASES = [
    ((67, 129), (129, 33), False, False),  # odd sizes
    ((129, 67), (129, 33), True, False),  # lhs^T (the backward's x^T @ dy)
    ((67, 129), (33, 129), False, True),  # rhs^T (dy @ w^T)
    ((5, 31, 17), (5, 17, 23), False, False),  # batched
    ((1, 31, 17), (4, 17, 23), False, False),  # size-1 batch dim broadcast
    ((3, 31, 17), (17, 23), False, False),  # rhs without batch dims
    ((2, 1, 31, 17), (3, 17, 23), False, False),  # both broadcast, rank 4
    ((17,), (17, 23), False, False),  # vector @ matrix: loops
    ((31, 17), (17,), False, False),  # matrix @ vector: loops
    ((3, 4), (4, 5), False, False),  # below the BLAS threshold: loops
]


def _graph(dtype: type) -> tuple[list[pf.Tensor], list[np.ndarray]]:
    rng = np.random.default_rng(7)
    outs, expect = [], []
    for sa, sb, ta, tb in CASES:
        a = rng.standard_normal(sa).astype(dtype)
        b = rng.standard_normal(sb).astype(dtype)
        x, y = pf.from_numpy(a), pf.from_numpy(b)
        if ta:
            x, a = x.transpose(-1, -2), a.swapaxes(-1, -2)
        if tb:
            y, b = y.transpose(-1, -2), b.swapaxes(-1, -2)
        outs.append(x @ y)
        expect.append(a.astype(np.float64) @ b.astype(np.float64))
    # a sliced operand: rows of a larger array (a strided view after bufferization)
    big = rng.standard_normal((90, 40)).astype(dtype)
    w = rng.standard_normal((30, 50)).astype(dtype)
    outs.append(pf.from_numpy(big)[10:80, 5:35] @ pf.from_numpy(w))
    expect.append(big[10:80, 5:35].astype(np.float64) @ w.astype(np.float64))
    return outs, expect


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matmuls_match_numpy(on_mlir: Path, dtype: type) -> None:
    outs, expect = _graph(dtype)
    pf.eval(*outs)
    assert mlir_backend.STATS.compiles == 1
    if mlir_blas.blas_library() is not None:
        # the 2-D, transposed, batched and broadcast cases (not vectors, not 3x4x5)
        assert mlir_backend.STATS.blas_matmuls >= 7
    tol = 1e-4 if dtype == np.float32 else 1e-11
    for k, (t, e) in enumerate(zip(outs, expect)):
        got = t.numpy()
        assert got.dtype == dtype and got.shape == e.shape, (k, got.dtype, got.shape)
        np.testing.assert_allclose(got, e, rtol=tol, atol=tol, err_msg=f"case #{k}")


def test_blas_is_off_when_numpy_has_none(on_mlir: Path, monkeypatch: pytest.MonkeyPatch
                                         ) -> None:
    monkeypatch.setattr(mlir_blas, "blas_library", lambda: None)
    a = np.arange(64 * 48, dtype=np.float32).reshape(64, 48) / 1000
    b = np.ones((48, 32), np.float32)
    got = (pf.from_numpy(a) @ pf.from_numpy(b)).numpy()
    assert mlir_backend.STATS.blas_matmuls == 0
    np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=1e-5)


PROCESS = """
import json
import numpy as np
import pyflame_mlir as pf
from pyflame_mlir.runtime import mlir_backend
pf.set_backend("mlir")
rng = np.random.default_rng(3)
a, b = rng.standard_normal((40, 50)), rng.standard_normal((50, 30))
y = (pf.from_numpy(a) @ pf.from_numpy(b)).numpy()
s = mlir_backend.STATS
print(json.dumps({"err": float(np.abs(y - a @ b).max()), "compiles": s.compiles,
                  "hits": s.disk_hits, "blas": s.blas_matmuls}))
"""


def test_disk_cache_entry_with_blas_calls_loads_in_a_second_process(tmp_path: Path) -> None:
    env = dict(os.environ, PYFLAME_CACHE_DIR=str(tmp_path / "cache"))
    runs = [json.loads(subprocess.run([sys.executable, "-c", PROCESS], env=env, check=True,
                                      capture_output=True, text=True).stdout.splitlines()[-1])
            for _ in range(2)]
    assert [r["compiles"] for r in runs] == [1, 0] and runs[1]["hits"] == 1
    if mlir_blas.blas_library() is not None:
        assert runs[0]["blas"] == 1
    assert all(r["err"] < 1e-10 for r in runs)
