"""interpolate(mode="bicubic") (align_corners both ways, A = -0.75, border
clamping), mode="trilinear" and mode="area" (the adaptive average pool, 1-3
spatial dims) against torch: values and float64 gradients over
hypothesis-drawn sizes and scale factors."""

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
EXAMPLES = max(4, round(15 * _SCALE))


@st.composite
def resizes(draw, nsp: int):
    spatial = tuple(draw(st.integers(1, 6)) for _ in range(nsp))
    if draw(st.booleans()):
        how = {"size": tuple(draw(st.integers(1, 9)) for _ in range(nsp))}
    else:
        factors = tuple(draw(st.sampled_from([0.5, 0.75, 1.0, 1.3, 1.7, 2.0, 2.5, 3.0]))
                        for _ in range(nsp))
        if any(int(n * f) < 1 for n, f in zip(spatial, factors)):
            factors = tuple(max(f, 1.0) for f in factors)
        how = {"scale_factor": factors}
        if draw(st.booleans()):
            how["recompute_scale_factor"] = True
    return (2, 2, *spatial), how, draw(st.integers(0, 2**31 - 1))


def _check(x: np.ndarray, kwargs: dict, seed: int) -> None:
    tx = torch.tensor(x, requires_grad=True)
    ty = TF.interpolate(tx, **kwargs)
    y = F.interpolate(pf.from_numpy(x), **kwargs)
    assert y.shape == tuple(ty.shape)
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), rtol=1e-10, atol=1e-12)
    ct = np.random.default_rng(seed).standard_normal(ty.shape)
    ty.backward(torch.tensor(ct))
    g = pf.grad(lambda a: (F.interpolate(a, **kwargs) * pf.from_numpy(ct)).sum())(
        pf.from_numpy(x))
    if np.allclose(g.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12):
        return
    # torch 2.13's bicubic backward is not the transpose of its own forward for a
    # fractional scale_factor on short sides (its backward maps coordinates with
    # the size ratio, its forward with 1/scale): there, the oracle is central
    # differences of torch's forward (the function both compute)
    def loss(a: np.ndarray) -> float:
        return float((TF.interpolate(torch.tensor(a), **kwargs).numpy() * ct).sum())
    numeric = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = 1e-6
        numeric[i] = (loss(x + e) - loss(x - e)) / 2e-6
    np.testing.assert_allclose(g.numpy(), numeric, rtol=1e-6, atol=1e-7)


@settings(max_examples=EXAMPLES, deadline=None)
@given(problem=resizes(2), align_corners=st.booleans())
def test_bicubic_matches_torch(problem, align_corners):
    shape, how, seed = problem
    x = np.random.default_rng(seed).standard_normal(shape)
    _check(x, dict(mode="bicubic", align_corners=align_corners, **how), seed + 1)


@pytest.mark.parametrize("nsp", [1, 2, 3])
@settings(max_examples=EXAMPLES, deadline=None)
@given(data=st.data())
def test_area_matches_torch(nsp, data):
    shape, how, seed = data.draw(resizes(nsp))
    x = np.random.default_rng(seed).standard_normal(shape)
    _check(x, dict(mode="area", **how), seed + 1)


@settings(max_examples=EXAMPLES, deadline=None)
@given(problem=resizes(3), align_corners=st.booleans())
def test_trilinear_matches_torch(problem, align_corners):
    shape, how, seed = problem
    x = np.random.default_rng(seed).standard_normal(shape)
    _check(x, dict(mode="trilinear", align_corners=align_corners, **how), seed + 1)


def test_float32_lazy_and_eager_and_errors(mode):
    x = np.random.default_rng(1).standard_normal((1, 3, 4, 5)).astype(np.float32)
    for kwargs in (dict(mode="bicubic", size=(7, 3)), dict(mode="area", scale_factor=0.5),
                   dict(mode="bicubic", scale_factor=2.0, align_corners=True)):
        got = F.interpolate(pf.from_numpy(x), **kwargs)
        exp = TF.interpolate(torch.tensor(x), **kwargs).numpy()
        assert got.dtype == pf.float32
        np.testing.assert_allclose(got.numpy(), exp, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="align_corners"):
        F.interpolate(pf.from_numpy(x), size=(2, 2), mode="area", align_corners=True)
    with pytest.raises(NotImplementedError, match="bicubic"):
        F.interpolate(pf.from_numpy(x[0]), size=3, mode="bicubic")
    with pytest.raises(NotImplementedError, match="Anti-alias option is restricted"):
        F.interpolate(pf.from_numpy(x), size=(2, 2), mode="nearest", antialias=True)


@pytest.mark.parametrize("mode,shape,sf", [
    ("linear", (2, 2, 2), (1.3,)),
    ("linear", (1, 1, 6), (1.1,)),
    ("bilinear", (1, 1, 4, 4), (1.1, 1.6)),
    ("trilinear", (2, 2, 2, 1, 1), (1.3, 1.0, 1.0)),
])
def test_linear_modes_copy_a_dim_whose_size_is_kept_as_torch(mode, shape, sf) -> None:
    """torch's linear kernels copy a spatial dim whose output size equals its
    input size, whatever the scale factor (bicubic and nearest do not)."""
    x = np.random.default_rng(0).standard_normal(shape)
    tx = torch.tensor(x, requires_grad=True)
    ty = TF.interpolate(tx, scale_factor=sf, mode=mode)
    px = pf.tensor(x, requires_grad=True)
    y = F.interpolate(px, scale_factor=sf, mode=mode)
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), rtol=1e-12, atol=1e-14)
    (ty * ty).sum().backward()
    (y * y).sum().backward()
    np.testing.assert_allclose(px.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-14)
