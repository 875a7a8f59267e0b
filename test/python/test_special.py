"""``pf.special`` (issue 14) against ``torch.special`` 2.13: every name
present in both over drawn values, special values (0, -0, +-inf, NaN, far
tails), float32 and float64, integer promotion, and float64 gradients of the
composites vs torch.autograd."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from _oracles import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import pyflame_mlir as pf

UNARY = ["erfcx", "ndtr", "ndtri", "log_ndtr", "entr", "expit", "gammaln", "psi", "erf",
         "erfc", "erfinv", "exp2", "expm1", "log1p", "i0", "sinc", "digamma"]
SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 3.0, -3.0, 10.0, -10.0, 27.0, -27.0, 40.0, -40.0,
                    1e-300, 0.999999, np.inf, -np.inf, np.nan])


def _check(got: pf.Tensor, want: torch.Tensor, rtol: float, what: str,
           atol: float | None = None) -> None:
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], what
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=rtol,
                               atol=rtol * 1e-3 if atol is None else atol, err_msg=what)


@pytest.mark.parametrize("name", UNARY)
def test_special_values_match_torch(name: str) -> None:
    for dt in (np.float64, np.float32):
        x = SPECIAL.astype(dt)
        if name == "ndtri":
            x = np.array([0.0, 1.0, 0.5, 1e-6, 1 - 1e-6, 0.25, -0.1, 1.1, np.nan], dt)
        with np.errstate(all="ignore"):
            got = getattr(pf.special, name)(pf.from_numpy(x))
        want = getattr(torch.special, name)(torch.from_numpy(x))
        # float32: absolute 1e-6 too (gammaln near 1 cancels in both libraries)
        _check(got, want, 1e-5 if dt == np.float32 else 1e-9, f"{name} {dt.__name__}",
               1e-6 if dt == np.float32 else None)


@pytest.mark.parametrize("name", UNARY)
@settings(max_examples=examples(5), deadline=None)
@given(x=hnp.arrays(np.float64, st.integers(0, 6),
                    elements=st.floats(-30, 30, allow_nan=False)))
def test_drawn_values_match_torch(name: str, x: np.ndarray) -> None:
    if name == "ndtri":
        x = 1 / (1 + np.exp(-np.clip(x, -15, 15)))  # into (0, 1), away from the rounding of 2p-1
    if name in ("psi", "digamma", "gammaln"):
        x = np.abs(x) + 0.05  # away from the poles (ill-conditioned in both libraries)
    want = getattr(torch.special, name)(torch.from_numpy(x))
    _check(getattr(pf.special, name)(pf.from_numpy(x)), want, 1e-8, name)


def test_binary_and_integer_inputs() -> None:
    x = np.array([0.0, 0.0, 1.0, -2.0, 3.0, np.nan, 0.0])
    y = np.array([np.nan, -1.0, 0.5, 2.0, -1.0, 1.0, 4.0])
    with np.errstate(all="ignore"):
        for name in ("xlog1py", "xlogy"):
            got = getattr(pf.special, name)(pf.from_numpy(x), pf.from_numpy(y))
            want = getattr(torch.special, name)(torch.from_numpy(x), torch.from_numpy(y))
            _check(got, want, 1e-12, name)
    for name in ("ndtr", "log_ndtr", "erfcx", "entr"):
        got = getattr(pf.special, name)(pf.tensor([0, 1, 2]))
        want = getattr(torch.special, name)(torch.tensor([0, 1, 2]))
        _check(got, want, 1e-6, f"{name} of int64")
    _check(pf.special.multigammaln(pf.tensor([2.5, 3.0]), 2),
           torch.special.multigammaln(torch.tensor([2.5, 3.0]), 2), 1e-6, "multigammaln")
    _check(pf.special.logit(pf.tensor([0.0, 0.3]), eps=1e-6),
           torch.special.logit(torch.tensor([0.0, 0.3]), eps=1e-6), 1e-5, "logit")
    _check(pf.special.softmax(pf.tensor([[1.0, 2.0]]), 1),
           torch.special.softmax(torch.tensor([[1.0, 2.0]]), 1), 1e-6, "softmax")


@pytest.mark.parametrize("name", ["erfcx", "ndtr", "ndtri", "log_ndtr", "entr"])
def test_gradients_match_torch(name: str) -> None:
    x = np.array([0.3, 0.9, 0.05, 0.6]) if name in ("ndtri", "entr") else \
        np.array([-12.0, -2.0, -0.5, 0.0, 0.7, 4.0, 15.0])
    px = pf.from_numpy(x).requires_grad_()
    tx = torch.from_numpy(x).requires_grad_()
    getattr(pf.special, name)(px).sum().backward()
    getattr(torch.special, name)(tx).sum().backward()
    np.testing.assert_allclose(px.grad.numpy(), tx.grad.numpy(), rtol=1e-7, atol=1e-12)


def test_xlog1py_gradients_match_torch() -> None:
    x, y = np.array([0.5, -1.0, 2.0]), np.array([0.3, 1.5, -0.5])
    p = [pf.from_numpy(v).requires_grad_() for v in (x, y)]
    t = [torch.from_numpy(v).requires_grad_() for v in (x, y)]
    pf.special.xlog1py(*p).sum().backward()
    torch.special.xlog1py(*t).sum().backward()
    for a, b in zip(p, t):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10)


def test_names_follow_torch_special() -> None:
    ours: Any = pf.special
    missing = [n for n in ours.__all__ if not hasattr(torch.special, n)]
    assert not missing, missing
