"""scatter_reduce with "prod", "amax" and "amin" (and "sum", "mean") against
torch: values over hypothesis-drawn shapes, dims and indices with many ties,
zeros and NaN, float64 gradients (torch's: amax/amin share among ties, prod
exact with zeros), the forward mode, integer dtypes, lazy and eager."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import pyflame_mlir as pf

_SCALE = float(os.environ.get("PYFLAME_TEST_SCALE", "1"))
EXAMPLES = max(3, round(8 * _SCALE))
REDUCES = ["prod", "amax", "amin", "sum", "mean"]


@st.composite
def problems(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim)))
    dim = draw(st.integers(0, ndim - 1))
    # index: at most the input's size off dim, any size along it (duplicates)
    ishape = tuple(draw(st.integers(0 if d != dim else 1, n if d != dim else 6))
                   for d, n in enumerate(shape))
    seed = draw(st.integers(0, 2**31 - 1))
    return shape, dim, ishape, seed


def _arrays(shape, dim, ishape, seed, nan: bool):
    rng = np.random.default_rng(seed)
    x = rng.integers(-2, 3, shape).astype(np.float64)  # small integers: ties and zeros
    src = rng.integers(-2, 3, ishape).astype(np.float64)
    if nan and src.size:
        src.reshape(-1)[rng.integers(0, src.size)] = np.nan
    index = rng.integers(0, shape[dim], ishape)
    return x, src, index


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", REDUCES)
@settings(max_examples=EXAMPLES, deadline=None)
@given(problem=problems(), nan=st.booleans())
def test_values_and_gradients_match_torch(reduce, include_self, problem, nan):
    shape, dim, ishape, seed = problem
    x, src, index = _arrays(shape, dim, ishape, seed, nan)
    tx, ts = torch.tensor(x, requires_grad=True), torch.tensor(src, requires_grad=True)
    ty = tx.scatter_reduce(dim, torch.tensor(index), ts, reduce, include_self=include_self)
    y = pf.scatter_reduce(pf.from_numpy(x), dim, pf.from_numpy(index), pf.from_numpy(src),
                          reduce, include_self=include_self)
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), rtol=1e-12, equal_nan=True)
    if nan:  # gradients through NaN are not compared (torch's hold NaN products)
        return
    ct = np.random.default_rng(seed + 1).standard_normal(shape)
    ty.backward(torch.tensor(ct))

    def loss(a, b):
        out = pf.scatter_reduce(a, dim, pf.from_numpy(index), b, reduce,
                                include_self=include_self)
        return (out * pf.from_numpy(ct)).sum()

    gx, gs = pf.grad(loss, argnums=(0, 1))(pf.from_numpy(x), pf.from_numpy(src))
    np.testing.assert_allclose(gx.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gs.numpy(), ts.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("reduce", ["prod", "amax", "amin"])
def test_forward_mode_matches_torch_gradient(reduce, mode):
    """The JVP along a tangent is torch's Jacobian (by reverse mode) times it (no
    ties here, where the directional derivative is defined; torch.func.jvp of
    scatter_reduce gives zeros in torch 2.13, so it is not the oracle)."""
    rng = np.random.default_rng(3)
    x = rng.permutation(12).reshape(3, 4).astype(np.float64) - 5.0  # distinct, one zero
    src = rng.permutation(20).reshape(5, 4).astype(np.float64) / 3 - 3.0
    index = rng.integers(0, 3, (5, 4))
    tx, ts = rng.standard_normal(x.shape), rng.standard_normal(src.shape)

    def f(a, b):
        return pf.scatter_reduce(a, 0, pf.from_numpy(index), b, reduce)

    _, tangent = pf.jvp(f, (pf.from_numpy(x), pf.from_numpy(src)),
                        (pf.from_numpy(tx), pf.from_numpy(ts)))
    jx, js = torch.autograd.functional.jacobian(
        lambda a, b: a.scatter_reduce(0, torch.tensor(index), b, reduce),
        (torch.tensor(x), torch.tensor(src)))
    ttangent = (jx.reshape(12, 12).numpy() @ tx.reshape(-1)
                + js.reshape(12, 20).numpy() @ ts.reshape(-1)).reshape(3, 4)
    np.testing.assert_allclose(tangent.numpy(), ttangent, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["prod", "amax", "amin", "sum"])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32])
def test_dtypes_match_torch(reduce, include_self, dtype, mode):
    rng = np.random.default_rng(5)
    x = rng.integers(-3, 4, (4, 3)).astype(dtype)
    src = rng.integers(-3, 4, (7, 3)).astype(dtype)
    index = rng.integers(0, 4, (7, 3))
    exp = torch.tensor(x).scatter_reduce(0, torch.tensor(index), torch.tensor(src), reduce,
                                         include_self=include_self).numpy()
    got = pf.scatter_reduce(pf.from_numpy(x), 0, pf.from_numpy(index), pf.from_numpy(src),
                            reduce, include_self=include_self).numpy()
    assert got.dtype == exp.dtype
    np.testing.assert_allclose(got, exp, rtol=1e-6)


def test_in_place_method_lazy_index_and_errors():
    x = np.arange(6, dtype=np.float64).reshape(2, 3)
    index = pf.from_numpy(np.array([[1, 1, 0]])) * 1  # a lazy index is evaluated
    t = pf.from_numpy(x.copy())
    t.scatter_reduce_(0, index, pf.from_numpy(np.array([[9.0, -1.0, 4.0]])), "amin")
    exp = torch.tensor(x).scatter_reduce_(0, torch.tensor([[1, 1, 0]]),
                                          torch.tensor([[9.0, -1.0, 4.0]], dtype=torch.float64),
                                          "amin")
    np.testing.assert_array_equal(t.numpy(), exp.numpy())
    with pytest.raises(RuntimeError, match="reduce argument must be either"):
        pf.scatter_reduce(t, 0, index, t[:1], "max")
    with pytest.raises(IndexError, match="out of bounds"):
        pf.scatter_reduce(t, 0, pf.from_numpy(np.array([[2, 0, 0]])), t[:1], "prod")


@pytest.mark.parametrize("dtype", ["float64", "int64"])
def test_scatter_reduce_multiply_and_add_match_torch(dtype) -> None:
    """``scatter(..., reduce="multiply")`` (torch's older form): the input's
    values times every source value written there, duplicates included; a
    scalar source too; an unknown reduce raises torch's message."""
    idx = [[0, 1], [2, 2], [3, 0]]
    src = np.array([[2, 3], [4, 5], [6, 7]], dtype=dtype)
    base = np.arange(1, 13, dtype=dtype).reshape(3, 4)
    for reduce in ("multiply", "add"):
        want = torch.tensor(base).scatter(1, torch.tensor(idx), torch.tensor(src), reduce=reduce)
        got = pf.tensor(base).scatter(1, pf.tensor(idx), pf.tensor(src), reduce=reduce)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        want = torch.tensor(base).scatter_(1, torch.tensor(idx), 3, reduce=reduce)
        got = pf.tensor(base).scatter_(1, pf.tensor(idx), 3, reduce=reduce)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    with pytest.raises(RuntimeError, match="reduce argument must be either add or multiply"):
        pf.zeros(3).scatter(0, pf.tensor([0]), 1.0, reduce="max")
