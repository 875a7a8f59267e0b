"""``pf.func.linearize`` against ``torch.func.linearize`` (float64, lazy and
eager): outputs and tangents of pytrees, torch's errors for mismatched
tangents, and one trace for every call of ``jvp_fn``."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.func

import pyflame_mlir as pf

X = np.array([0.3, 1.7, 2.5])


def _run(L):  # noqa: N802
    x = L.tensor(X, dtype=L.float64)
    ones = L.ones(3, dtype=L.float64)
    got = []
    out, fn = L.func.linearize(lambda x: (x.sin() * x, x.sum()), x)
    got += [*out, *fn(ones), *fn(x * 2)]
    out, fn = L.func.linearize(lambda x, y: (x * y).exp(), x, x * 2)
    got += [out, fn(ones, L.zeros(3, dtype=L.float64)), fn(x, ones)]
    out, fn = L.func.linearize(lambda d: d["a"] * d["b"].tanh(), {"a": x, "b": x / 3})
    got += [out, fn({"a": x, "b": ones})]
    return [np.asarray(g.detach().numpy() if L is torch else g.numpy()) for g in got]


def test_linearize_gives_torchs_outputs_and_tangents(mode) -> None:
    for g, w in zip(_run(pf), _run(torch), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12)


def test_linearize_refuses_tangents_unlike_the_primals() -> None:
    x = pf.tensor(X)
    _, fn = pf.func.linearize(lambda x, y: x * y, x, x)
    with pytest.raises(RuntimeError, match="same argspec"):
        fn(x)
    with pytest.raises(RuntimeError, match="doesn't match the shape"):
        fn(pf.ones(4, dtype=pf.float64), x)


def test_linearize_traces_once() -> None:
    calls = []

    def f(x):
        calls.append(1)
        return x * x
    x = pf.tensor(X)
    _, fn = pf.func.linearize(f, x)
    np.testing.assert_allclose(fn(pf.ones(3, dtype=pf.float64)).numpy(), 2 * X)
    np.testing.assert_allclose(fn(x).numpy(), 2 * X * X)
    assert len(calls) == 1
