"""``pf.linalg.ldl_factor ldl_factor_ex ldl_solve`` (LAPACK's Bunch-Kaufman
``sytf2``/``sytrs`` on the host) against torch 2.13: LD and pivots equal
torch's (pivots exactly), batched, indefinite and nearly-singular-diagonal
matrices (which force 2x2 blocks), solves checked against torch and against
A X = B; the derivative torch does not have raises torch's error."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyflame_mlir as pf


def _symmetric(rng, shape, small_diagonal=False):
    a = rng.standard_normal(shape)
    a = a + np.swapaxes(a, -1, -2)
    if small_diagonal:
        idx = np.arange(shape[-1])
        a[..., idx, idx] *= 0.01
    return a


@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (3, 3), (6, 6), (17, 17), (70, 70),
                                   (3, 4, 4), (2, 1, 5, 5), (0, 0), (2, 0, 0)])
@pytest.mark.parametrize("small_diagonal", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_ldl_factor_and_solve_against_torch(shape, small_diagonal, dtype):
    rng = np.random.default_rng(sum(shape))
    a = _symmetric(rng, shape, small_diagonal).astype(dtype)
    got = pf.linalg.ldl_factor_ex(pf.tensor(a))
    want = torch.linalg.ldl_factor_ex(torch.tensor(a))
    np.testing.assert_array_equal(got.pivots.numpy(), want.pivots.numpy())
    np.testing.assert_array_equal(got.info.numpy(), want.info.numpy())
    tol = 1e-9 if dtype == np.float64 else 2e-3
    np.testing.assert_allclose(got.LD.numpy(), want.LD.numpy(), rtol=tol, atol=tol)
    assert got.LD.dtype.name == str(want.LD.dtype).split(".")[1]
    b = rng.standard_normal(shape[:-1] + (3,)).astype(dtype)
    x = pf.linalg.ldl_solve(got.LD, got.pivots, pf.tensor(b))
    xt = torch.linalg.ldl_solve(want.LD, want.pivots, torch.tensor(b))
    np.testing.assert_allclose(x.numpy(), xt.numpy(), rtol=tol * 10, atol=tol * 10)
    if dtype == np.float64 and shape[-1]:
        np.testing.assert_allclose(a @ x.numpy(), b, rtol=1e-8, atol=1e-8)


def test_ldl_reads_the_lower_triangle_and_broadcasts_b():
    rng = np.random.default_rng(0)
    a = _symmetric(rng, (4, 4))
    junk = a + np.triu(rng.standard_normal((4, 4)), 1)  # the upper triangle is ignored
    ld, piv = pf.linalg.ldl_factor(pf.tensor(junk), hermitian=True)
    ref = torch.linalg.ldl_factor(torch.tensor(a))
    np.testing.assert_allclose(ld.numpy(), ref.LD.numpy(), rtol=1e-12)
    b = rng.standard_normal((2, 4, 2))  # batch of right-hand sides, one factorization
    x = pf.linalg.ldl_solve(ld, piv, pf.tensor(b))
    np.testing.assert_allclose(x.numpy(), torch.linalg.ldl_solve(ref.LD, ref.pivots,
                                                                 torch.tensor(b)).numpy(),
                               rtol=1e-10)


def test_ldl_errors_and_no_derivative():
    with pytest.raises(pf.ShapeError, match="square"):
        pf.linalg.ldl_factor(pf.ones(2, 3))
    z = pf.linalg.ldl_factor_ex(pf.zeros(2, 2))
    assert int(z.info.item()) == 1 and z.pivots.numpy().tolist() == [1, 2]
    with pytest.raises(pf.linalg.LinAlgError, match="singular"):
        pf.linalg.ldl_factor(pf.zeros(2, 2))
    with pytest.raises(pf.linalg.LinAlgError):
        pf.linalg.ldl_factor_ex(pf.zeros(2, 2), check_errors=True)
    ld, piv = pf.linalg.ldl_factor(pf.eye(3, dtype=pf.float64))
    with pytest.raises(RuntimeError, match="int32"):
        pf.linalg.ldl_solve(ld, piv.long(), pf.ones(3, 1, dtype=pf.float64))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        pf.linalg.ldl_solve(ld, piv, pf.ones(3, dtype=pf.float64))
    a = pf.tensor(np.eye(3) + 0.1, requires_grad=True)
    out = pf.linalg.ldl_factor(a)
    assert out.LD.requires_grad and not out.pivots.requires_grad
    with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_factor_ex is not "
                                           "implemented"):
        out.LD.sum().backward()
    b = pf.ones(3, 2, dtype=pf.float64, requires_grad=True)
    x = pf.linalg.ldl_solve(detach_ld := out.LD.detach(), out.pivots, b)
    del detach_ld
    with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_solve"):
        x.sum().backward()
    with pf.no_grad():
        assert not pf.linalg.ldl_solve(out.LD, out.pivots, b).requires_grad


# ---- householder_product / geqrf / orgqr, eig ----

@pytest.mark.parametrize("shape, k", [((5, 3), 3), ((4, 4), 2), ((2, 6, 3), 2), ((3, 3), 0),
                                      ((3, 1), 1)])
def test_householder_product_values_and_gradients(shape, k):
    from _grad_oracles import Example, close, fd_gradient, torch_vjp

    rng = np.random.default_rng(sum(shape) + k)
    a, tau = rng.standard_normal(shape), rng.standard_normal(shape[:-2] + (k,))
    got = pf.linalg.householder_product(pf.tensor(a), pf.tensor(tau))
    want = torch.linalg.householder_product(torch.tensor(a), torch.tensor(tau))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)
    if k == 0:
        return
    ex = Example([a, tau], pf.linalg.householder_product, torch.linalg.householder_product,
                 "householder_product")
    ct = rng.standard_normal(got.shape)
    grads = pf.grad(lambda x, t: (pf.linalg.householder_product(x, t)
                                  * pf.tensor(ct)).sum(), argnums=(0, 1))(
        pf.tensor(a), pf.tensor(tau))
    _, t_grads = torch_vjp(ex, [ct])
    for g, tg, fd in zip(grads, t_grads, fd_gradient(ex, [ct])):
        close(g.numpy(), tg, 1e-8, 1e-10, "householder_product grad vs torch")
        close(g.numpy(), fd, 1e-6, 1e-6, "householder_product grad vs differences")


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 6, 3)])
def test_geqrf_and_orgqr(shape):
    a = np.random.default_rng(sum(shape)).standard_normal(shape)
    got, want = pf.geqrf(pf.tensor(a)), torch.geqrf(torch.tensor(a))
    np.testing.assert_allclose(got.a.numpy(), want.a.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got.tau.numpy(), want.tau.numpy(), rtol=1e-10, atol=1e-12)
    if shape[-2] >= shape[-1]:
        q = pf.orgqr(got.a, got.tau)
        np.testing.assert_allclose(q.numpy(), torch.orgqr(want.a, want.tau).numpy(),
                                   rtol=1e-10, atol=1e-12)
        r = np.triu(got.a.numpy()[..., :shape[-1], :])
        np.testing.assert_allclose(q.numpy() @ r, a, rtol=1e-10, atol=1e-12)


def test_eig_raises_naming_complex():
    for fn in (pf.linalg.eig, pf.linalg.eigvals):
        with pytest.raises(NotImplementedError, match="complex"):
            fn(pf.eye(2))
    with pytest.raises(RuntimeError, match="greater than or equal"):
        pf.linalg.householder_product(pf.ones(2, 3), pf.ones(1))
