"""A ``pf.autograd.Function``'s own ``jvp`` in forward mode (``pf.jvp``,
``pf.jacfwd``, ``pf.hessian``), as PyTorch's forward AD with
``ctx.save_for_forward``: against torch's forward AD and torch.func."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as fwad

import pyflame_mlir as pf

X = np.array([0.3, -0.7, 1.1])
Y = np.array([1.2, 0.4, -0.5])
TX = np.array([1.0, 0.5, -2.0])
TY = np.array([0.1, 0.2, 0.3])


def _functions(lib):
    """Two Functions whose jvp is their exact derivative, and a program using
    them (a Function's input computed from the args, one arg used directly, a
    two-output Function, a non-tensor input)."""
    base = torch.autograd.Function if lib is torch else pf.autograd.Function

    class Cube(base):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_forward(x)
            ctx.k = k
            return x ** 3 * k

        @staticmethod
        def jvp(ctx, tx, _tk):
            x, = ctx.saved_tensors
            return 3 * x ** 2 * tx * ctx.k

        @staticmethod
        def backward(ctx, g):
            raise AssertionError("forward mode only")

    class MulSin(base):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_forward(a, b)
            return a * b, a.sin()

        @staticmethod
        def jvp(ctx, ta, tb):
            a, b = ctx.saved_tensors
            return ta * b + a * tb, a.cos() * ta

        @staticmethod
        def backward(ctx, g1, g2):
            raise AssertionError("forward mode only")

    def f(x, y):
        p, q = MulSin.apply(x * 2, y)
        return Cube.apply(p + q, 1.5).sum() + (Cube.apply(x, 2.0) * y).sum()
    return f


def _plain(x, y):  # the same function with torch's own ops
    p, q = x * 2 * y, (x * 2).sin()
    return ((p + q) ** 3 * 1.5).sum() + (x ** 3 * 2.0 * y).sum()


def test_jvp_calls_the_functions_jvp_as_torch_forward_ad(mode):
    out, tan = pf.jvp(_functions(pf), (pf.tensor(X), pf.tensor(Y)),
                      (pf.tensor(TX), pf.tensor(TY)))
    f = _functions(torch)
    with fwad.dual_level():
        dual = f(fwad.make_dual(torch.tensor(X), torch.tensor(TX)),
                 fwad.make_dual(torch.tensor(Y), torch.tensor(TY)))
        t_out, t_tan = fwad.unpack_dual(dual)
    np.testing.assert_allclose(out.item(), t_out.item(), rtol=1e-12)
    np.testing.assert_allclose(tan.item(), t_tan.item(), rtol=1e-12)
    _, f_tan = torch.func.jvp(_plain, (torch.tensor(X), torch.tensor(Y)),
                              (torch.tensor(TX), torch.tensor(TY)))
    np.testing.assert_allclose(tan.item(), f_tan.item(), rtol=1e-12)


def test_jacfwd_through_a_function_matches_torch_func(mode):
    jx, jy = pf.jacfwd(_functions(pf), argnums=(0, 1))(pf.tensor(X), pf.tensor(Y))
    tjx, tjy = torch.func.jacfwd(_plain, argnums=(0, 1))(torch.tensor(X), torch.tensor(Y))
    np.testing.assert_allclose(jx.numpy(), tjx.numpy(), rtol=1e-12)
    np.testing.assert_allclose(jy.numpy(), tjy.numpy(), rtol=1e-12)


def test_a_jvp_returning_the_wrong_shape_raises():
    class Bad(pf.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def jvp(ctx, tx):
            return tx.sum()

    with pytest.raises(RuntimeError, match="Bad.jvp returned an invalid tangent"):
        pf.jvp(lambda x: Bad.apply(x), (pf.tensor(X),), (pf.tensor(TX),))
