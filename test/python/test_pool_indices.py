"""max_pool1d/2d(return_indices=True), MaxPool2d(return_indices=True),
max_unpool1d/2d and MaxUnpool2d against torch: values, flat per-plane
indices (ties: the first maximum; NaN: the last; all -inf: the first element
inside the input) and float64 gradients, over hypothesis-drawn geometries
with many ties and overlapping windows (repeated indices when unpooling)."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from hypothesis import given, settings
from hypothesis import strategies as st

import pyflame_mlir as pf

F = pf.nn.functional
_SCALE = float(os.environ.get("PYFLAME_TEST_SCALE", "1"))
EXAMPLES = max(3, round(8 * _SCALE))


@st.composite
def geometries(draw, nsp: int):
    k = tuple(draw(st.integers(1, 3)) for _ in range(nsp))
    s = tuple(draw(st.integers(1, 3)) for _ in range(nsp))
    p = tuple(draw(st.integers(0, kk // 2)) for kk in k)
    d = tuple(draw(st.integers(1, 2)) for _ in range(nsp))
    size = tuple(draw(st.integers(dd * (kk - 1) + 1, 6)) for kk, dd in zip(k, d))
    lead = draw(st.sampled_from([(2,), (1, 2), (2, 1)]))
    return lead + size, k, s, p, d, draw(st.booleans()), draw(st.integers(0, 2**31 - 1))


def _input(shape, seed, special: bool) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.integers(-2, 3, shape).astype(np.float64)  # ties
    if special:
        flat = x.reshape(-1)
        flat[rng.integers(0, flat.size, 2)] = [np.nan, -np.inf]
    return x


@pytest.mark.parametrize("nsp", [1, 2])
@settings(max_examples=EXAMPLES, deadline=None)
@given(data=st.data(), special=st.booleans())
def test_max_pool_indices_and_unpool_match_torch(nsp, data, special):
    shape, k, s, p, d, ceil, seed = data.draw(geometries(nsp))
    x = _input(shape, seed, special)
    pool, tpool = ((F.max_pool1d, TF.max_pool1d) if nsp == 1 else (F.max_pool2d, TF.max_pool2d))
    unpool, tunpool = ((F.max_unpool1d, TF.max_unpool1d) if nsp == 1
                       else (F.max_unpool2d, TF.max_unpool2d))
    tx = torch.tensor(x, requires_grad=True)
    tv, ti = tpool(tx, k, s, p, d, ceil_mode=ceil, return_indices=True)
    v, i = pool(pf.from_numpy(x), k, s, p, d, ceil_mode=ceil, return_indices=True)
    np.testing.assert_array_equal(v.numpy(), tv.detach().numpy())
    np.testing.assert_array_equal(i.numpy(), ti.numpy())
    assert i.dtype == pf.int64
    if special:
        return
    rng = np.random.default_rng(seed + 1)
    ct = rng.standard_normal(tv.shape)
    tv.backward(torch.tensor(ct))
    g = pf.grad(lambda a: (pool(a, k, s, p, d, ceil_mode=ceil, return_indices=True)[0]
                           * pf.from_numpy(ct)).sum())(pf.from_numpy(x))
    np.testing.assert_allclose(g.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-12)
    # unpool into the input's size (always valid for stride <= its default range)
    out = x.shape[-nsp:]
    default = [(n - 1) * ss + kk - 2 * pp for n, ss, kk, pp in zip(tv.shape[-nsp:], s, k, p)]
    if not all(dd - ss < o < dd + ss for dd, ss, o in zip(default, s, out)):
        out = None  # torch would refuse it: the default size
    if int(ti.max()) >= int(np.prod(out or default)):
        return  # torch raises (an index past the unpooled plane); tested below
    tw = torch.tensor(tv.detach().numpy(), requires_grad=True)
    ty = tunpool(tw, ti, k, s, p, output_size=out)
    y = unpool(pf.from_numpy(tv.detach().numpy()), i, k, s, p, output_size=out)
    np.testing.assert_array_equal(y.numpy(), ty.detach().numpy())
    uct = rng.standard_normal(ty.shape)
    ty.backward(torch.tensor(uct))
    gu = pf.grad(lambda a: (unpool(a, i, k, s, p, output_size=out) * pf.from_numpy(uct)).sum())(
        pf.from_numpy(tv.detach().numpy()))
    np.testing.assert_allclose(gu.numpy(), tw.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_modules_round_trip_like_torch(mode):
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 7))
    v, i = pf.nn.MaxPool2d(3, stride=2, padding=1, return_indices=True)(pf.from_numpy(x))
    tv, ti = torch.nn.MaxPool2d(3, stride=2, padding=1, return_indices=True)(torch.tensor(x))
    np.testing.assert_array_equal(i.numpy(), ti.numpy())
    y = pf.nn.MaxUnpool2d(3, stride=2, padding=1)(v, i, output_size=[2, 3, 5, 7])
    ty = torch.nn.MaxUnpool2d(3, stride=2, padding=1)(tv, ti, output_size=[2, 3, 5, 7])
    np.testing.assert_array_equal(y.numpy(), ty.numpy())
    v1, i1 = pf.nn.MaxPool1d(2, return_indices=True)(pf.from_numpy(x[0]))
    y1 = pf.nn.MaxUnpool1d(2)(v1, i1)
    ty1 = torch.nn.MaxUnpool1d(2)(*torch.nn.MaxPool1d(2, return_indices=True)(
        torch.tensor(x[0])))
    np.testing.assert_array_equal(y1.numpy(), ty1.numpy())


def test_unpool_errors_like_torch():
    v = pf.from_numpy(np.ones((1, 1, 2, 2)))
    i = pf.from_numpy(np.array([[[[0, 1], [4, 99]]]]))
    with pytest.raises(IndexError, match="invalid max index"):
        F.max_unpool2d(v, i, 2)
    with pytest.raises(ValueError, match="invalid output_size"):
        F.max_unpool2d(v, pf.from_numpy(np.zeros((1, 1, 2, 2), np.int64)), 2,
                       output_size=(9, 9))


@pytest.mark.parametrize("nsp", [1, 2])
@settings(max_examples=EXAMPLES, deadline=None)
@given(data=st.data())
def test_max_pool_gradient_goes_to_one_element_of_a_tie_as_torch(nsp, data):
    """Without return_indices too, the gradient of each window goes to the
    element torch picks (the first maximum), not shared among equal ones."""
    shape, k, s, p, d, ceil, seed = data.draw(geometries(nsp))
    x = _input(shape, seed, False)
    pool, tpool = ((F.max_pool1d, TF.max_pool1d) if nsp == 1 else (F.max_pool2d, TF.max_pool2d))
    tx = torch.tensor(x, requires_grad=True)
    tv = tpool(tx, k, s, p, d, ceil_mode=ceil)
    ct = np.random.default_rng(seed + 2).standard_normal(tv.shape)
    tv.backward(torch.tensor(ct))
    g = pf.grad(lambda a: (pool(a, k, s, p, d, ceil_mode=ceil) * pf.from_numpy(ct)).sum())(
        pf.from_numpy(x))
    np.testing.assert_allclose(g.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("output_size", [(3, 2), (4, 5), (1, 1), (9, 7)])
def test_adaptive_max_pool_gradient_with_ties_as_torch(mode, output_size):
    x = np.random.default_rng(0).integers(0, 3, (2, 3, 9, 7)).astype(np.float64)
    tx = torch.tensor(x, requires_grad=True)
    ty = TF.adaptive_max_pool2d(tx, output_size)
    ct = np.random.default_rng(1).standard_normal(ty.shape)
    ty.backward(torch.tensor(ct))
    px = pf.tensor(x, requires_grad=True)
    py = F.adaptive_max_pool2d(px, output_size)
    (py * pf.from_numpy(ct)).sum().backward()
    np.testing.assert_array_equal(py.numpy(), ty.detach().numpy())
    np.testing.assert_allclose(px.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-12)
