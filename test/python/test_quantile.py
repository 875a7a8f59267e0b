"""quantile / nanquantile against torch: every interpolation mode, scalar and
1-D q (float and tensor), dim None / each dim, keepdim, NaN slices, 0-d
input; float64 gradients (reverse and forward mode) vs torch; torch's errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

import pyflame_mlir as pf

MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _input() -> np.ndarray:
    x = np.random.default_rng(0).standard_normal((3, 5, 4))
    x[1, 2, 0] = np.nan  # one NaN: its slices give NaN (quantile) or skip it
    x[2, :, 3] = np.nan  # an all-NaN slice along dim 1
    x[0, 1, 1] = x[0, 3, 1]  # a tie
    return x


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
@pytest.mark.parametrize("interpolation", MODES)
def test_values_match_torch(mode, name, interpolation) -> None:
    x = _input()
    for q, dim, keepdim in itertools.product((0.3, 0.5, [0.0, 0.25, 0.5, 0.7, 1.0]),
                                             (None, 0, 1, -1), (False, True)):
        tq = torch.tensor(q, dtype=torch.float64) if isinstance(q, list) else q
        ref = getattr(torch, name)(torch.tensor(x), tq, dim=dim, keepdim=keepdim,
                                   interpolation=interpolation)
        got = getattr(pf, name)(pf.tensor(x), q, dim=dim, keepdim=keepdim,
                                interpolation=interpolation).numpy()
        assert got.shape == tuple(ref.shape), (q, dim, keepdim)
        np.testing.assert_allclose(got, ref.numpy(), rtol=1e-12, atol=1e-12, equal_nan=True)


def test_tensor_q_method_0d_and_float32() -> None:
    x = np.random.default_rng(1).standard_normal((4, 6)).astype(np.float32)
    q = np.array([0.1, 0.9], np.float32)
    got = pf.tensor(x).quantile(pf.tensor(q), dim=1)
    np.testing.assert_allclose(got.numpy(), torch.tensor(x).quantile(torch.tensor(q), dim=1),
                               rtol=1e-6)
    assert got.dtype is pf.float32
    z = pf.tensor(np.float64(2.5))
    assert pf.quantile(z, 0.5).numpy() == 2.5 and pf.quantile(z, 0.5, dim=0).shape == ()
    assert pf.nanquantile(z, [0.5], dim=0, keepdim=True).shape == \
        torch.nanquantile(torch.tensor(2.5), torch.tensor([0.5]), dim=0, keepdim=True).shape


@pytest.mark.parametrize("interpolation", ["linear", "midpoint", "nearest"])
def test_gradients_match_torch(interpolation) -> None:
    x = np.random.default_rng(2).standard_normal((3, 7))
    q = [0.2, 0.5, 0.95]

    def f(lib, v):
        return lib.quantile(v, lib.tensor(q, dtype=lib.float64), dim=1,
                            interpolation=interpolation) * lib.tensor([[1.0], [2.0], [3.0]])
    g = pf.grad(lambda v: f(pf, v).sum())(pf.tensor(x))
    t = torch.tensor(x, requires_grad=True)
    f(torch, t).sum().backward()
    np.testing.assert_allclose(g.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-12)
    tangent = np.random.default_rng(3).standard_normal(x.shape)
    _, ours = pf.jvp(lambda v: f(pf, v), (pf.tensor(x),), (pf.tensor(tangent),))
    _, theirs = torch.func.jvp(lambda v: f(torch, v), (torch.tensor(x),),
                               (torch.tensor(tangent),))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-12)


def test_errors_as_torch() -> None:
    x = pf.tensor(np.ones((2, 3)))
    with pytest.raises(pf.ShapeError, match="float or double"):
        pf.quantile(pf.tensor(np.ones(3, np.int64)), 0.5)
    with pytest.raises(ValueError, match=r"range \[0, 1\]"):
        pf.quantile(x, 1.5)
    with pytest.raises(ValueError, match=r"range \[0, 1\]"):
        pf.nanquantile(x, pf.tensor(np.array([0.5, -0.1])))
    with pytest.raises(pf.ShapeError, match="scalar or 1D"):
        pf.quantile(x, [[0.5]])
    with pytest.raises(pf.ShapeError, match="same dtype"):
        pf.quantile(x, pf.tensor(np.array([0.5], np.float32)))
    with pytest.raises(pf.ShapeError, match="non-empty"):
        pf.quantile(pf.tensor(np.ones((0, 2))), 0.5)
    with pytest.raises(ValueError, match="interpolation"):
        pf.quantile(x, 0.5, interpolation="cubic")
