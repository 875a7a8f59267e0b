"""Session 11's ``pf.special`` functions against torch 2.13 (and mpmath for
the incomplete gamma, where torch's asymptotic branch is 1e-9 off): ``i1``,
``i1e`` (values and float64 gradients vs torch and central differences),
``gammainc``/``gammaincc`` (values, boundary cases, the gradient in x, the
missing one in a), ``spherical_bessel_j0``, ``modified_bessel_i0/i1`` and the
orthogonal polynomials (values; no gradient, as torch's)."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
import torch
from _grad_oracles import Example, close, fd_gradient, torch_vjp

import pyflame_mlir as pf

REAL = [-40.0, -20.0, -8.0001, -8.0, -5.0, -1.0, -1e-3, 0.0, 1e-3, 0.5, 3.0, 8.0, 8.5, 10.0,
        30.0, 100.0, 700.0, float("nan"), float("inf"), float("-inf")]


S = pf.special


@pytest.mark.parametrize("fn", [S.i1, S.i1e, S.spherical_bessel_j0, S.modified_bessel_i0,
                                S.modified_bessel_i1], ids=lambda f: f.__name__)
def test_bessel_values(fn):
    name = fn.__name__
    got = fn(pf.tensor(REAL, dtype=pf.float64)).numpy()
    want = getattr(torch.special, name)(torch.tensor(REAL, dtype=torch.float64)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-300, equal_nan=True)
    x32 = np.random.default_rng(0).uniform(-12, 12, 50).astype(np.float32)
    got32 = fn(pf.tensor(x32))
    assert got32.dtype == pf.float32
    np.testing.assert_allclose(got32.numpy(), getattr(torch.special, name)(
        torch.tensor(x32)).numpy(), rtol=2e-6)


@pytest.mark.parametrize("name", ["i1", "i1e"])
def test_bessel_gradients(name):
    x = np.array([-9.0, -3.0, -0.4, 0.3, 2.0, 7.9, 8.1, 9.5])
    ex = Example([x], getattr(pf.special, name), getattr(torch.special, name), name,
                 rtol=1e-10, atol=1e-12)
    ct = np.random.default_rng(1).standard_normal(x.shape)
    g = pf.grad(lambda t: (getattr(pf.special, name)(t) * pf.tensor(ct)).sum())(pf.tensor(x))
    _, (tg,) = torch_vjp(ex, [ct])
    (fd,) = fd_gradient(ex, [ct])
    close(g.numpy(), tg, 1e-10, 1e-12, f"{name} grad vs torch")
    close(g.numpy(), fd, 1e-6, 1e-7, f"{name} grad vs differences")


@pytest.mark.parametrize("upper", [False, True])
def test_incomplete_gamma_values(upper):
    rng = np.random.default_rng(2)
    a = np.concatenate([rng.uniform(0.05, 40, 60), [0.5, 3.0, 150.0, 1000.0]])
    x = np.concatenate([rng.uniform(0.01, 60, 60), [1e-8, 200.0, 140.0, 990.0]])
    name = "gammaincc" if upper else "gammainc"
    got = getattr(pf.special, name)(pf.tensor(a), pf.tensor(x)).numpy()
    exact = np.array([float(mpmath.gammainc(ai, xi, mpmath.inf, regularized=True) if upper
                            else mpmath.gammainc(ai, 0, xi, regularized=True))
                      for ai, xi in zip(a, x)])
    np.testing.assert_allclose(got, exact, rtol=1e-11, atol=1e-300)
    want = getattr(torch.special, name)(torch.tensor(a), torch.tensor(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-300)
    edge_a = [-1.0, 0.0, 0.0, 2.0, float("inf"), float("inf"), 2.0, float("nan")]
    edge_x = [1.0, 1.0, 0.0, 0.0, 3.0, float("inf"), float("inf"), 1.0]
    got = getattr(pf.special, name)(pf.tensor(edge_a), pf.tensor(edge_x)).numpy()
    want = getattr(torch.special, name)(torch.tensor(edge_a), torch.tensor(edge_x)).numpy()
    np.testing.assert_array_equal(got, want)
    method = pf.tensor(a).igammac(pf.tensor(x)) if upper else pf.tensor(a).igamma(pf.tensor(x))
    np.testing.assert_allclose(method.numpy(), exact, rtol=1e-11, atol=1e-300)


def test_incomplete_gamma_gradients():
    a = np.array([0.5, 2.0, 7.5])
    x = np.array([0.3, 2.5, 9.0])
    for name in ("gammainc", "gammaincc"):
        xt = torch.tensor(x, requires_grad=True)
        getattr(torch.special, name)(torch.tensor(a), xt).sum().backward()
        xp = pf.tensor(x, requires_grad=True)
        getattr(pf.special, name)(pf.tensor(a), xp).sum().backward()
        np.testing.assert_allclose(xp.grad.numpy(), xt.grad.numpy(), rtol=1e-12)
        # broadcast x: the gradient sums back to its shape
        xb = pf.tensor([1.5], dtype=pf.float64, requires_grad=True)
        getattr(pf.special, name)(pf.tensor(a), xb).sum().backward()
        xbt = torch.tensor([1.5], dtype=torch.float64, requires_grad=True)
        getattr(torch.special, name)(torch.tensor(a), xbt).sum().backward()
        np.testing.assert_allclose(xb.grad.numpy(), xbt.grad.numpy(), rtol=1e-12)
    ap = pf.tensor(a, requires_grad=True)
    with pytest.raises(RuntimeError, match="derivative for 'igamma: input' is not implemented"):
        pf.special.gammainc(ap, pf.tensor(x)).sum().backward()


@pytest.mark.parametrize("fn", [
    S.chebyshev_polynomial_t, S.chebyshev_polynomial_u, S.chebyshev_polynomial_v,
    S.chebyshev_polynomial_w, S.shifted_chebyshev_polynomial_t,
    S.shifted_chebyshev_polynomial_u, S.shifted_chebyshev_polynomial_v,
    S.shifted_chebyshev_polynomial_w, S.hermite_polynomial_h, S.hermite_polynomial_he,
    S.laguerre_polynomial_l, S.legendre_polynomial_p], ids=lambda f: f.__name__)
def test_polynomials(fn):
    x, n = np.meshgrid(np.linspace(-1.5, 1.5, 7), np.arange(-1, 9).astype(np.float64))
    got = fn(pf.tensor(x), pf.tensor(n))
    want = getattr(torch.special, fn.__name__)(torch.tensor(x), torch.tensor(n))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-11, atol=1e-11)
    xr = pf.tensor(x, requires_grad=True)
    assert not fn(xr, pf.tensor(n)).requires_grad  # as torch's


@pytest.mark.parametrize("fn", [S.bessel_j0, S.bessel_j1, S.bessel_y0, S.bessel_y1,
                                S.modified_bessel_k0, S.modified_bessel_k1,
                                S.scaled_modified_bessel_k0, S.scaled_modified_bessel_k1,
                                S.airy_ai], ids=lambda f: f.__name__)
def test_ported_kernels(fn):
    rng = np.random.default_rng(20)
    x = np.concatenate([REAL, rng.uniform(-30, 30, 80), rng.uniform(-3, 3, 40)])
    got = fn(pf.tensor(x, dtype=pf.float64)).numpy()
    want = getattr(torch.special, fn.__name__)(torch.tensor(x, dtype=torch.float64)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-300, equal_nan=True)
    x32 = rng.uniform(0.1, 12, 30).astype(np.float32)
    got32 = fn(pf.tensor(x32))
    assert got32.dtype == pf.float32
    np.testing.assert_allclose(got32.numpy(), getattr(torch.special, fn.__name__)(
        torch.tensor(x32)).numpy(), rtol=1e-5, atol=1e-6)  # torch: float32 arithmetic
    assert not fn(pf.tensor(x, requires_grad=True)).requires_grad  # as torch's
    assert fn(pf.zeros(0)).shape == (0,)


def test_zeta():
    rng = np.random.default_rng(21)
    x = np.concatenate([[1.0, 0.5, 2.0, 3.0, 2.0, 4.0, 1.5], rng.uniform(1.01, 12, 40)])
    q = np.concatenate([[1.0, 1.0, -2.0, -1.5, -1.5, 0.5, 1e-3], rng.uniform(0.01, 20, 40)])
    got = S.zeta(pf.tensor(x), pf.tensor(q)).numpy()
    want = torch.special.zeta(torch.tensor(x), torch.tensor(q)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-14, equal_nan=True)
    assert S.zeta(pf.tensor(2.0, dtype=pf.float64), pf.tensor(1.0, dtype=pf.float64)).item() \
        == pytest.approx(np.pi ** 2 / 6, rel=1e-15)
    np.testing.assert_allclose(S.zeta(pf.tensor([2.0, 3.0]), 1.0).numpy(),
                               torch.special.zeta(torch.tensor([2.0, 3.0]), 1.0).numpy(),
                               rtol=1e-6)
    xr = pf.tensor([2.0, 3.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="derivative for aten::zeta is not implemented"):
        S.zeta(xr, 1.0).sum().backward()
