"""A detached alias of a ``pf.autograd.Function`` output (and of the ops whose
derivative rules are Functions: lgamma, digamma, i0, erfinv, ... in
``math_rules``) stops gradients in every transform, as ``torch.detach`` and
``jax.lax.stop_gradient`` do; an input without a tangent adds no term to a
built-in op's forward-mode derivative (no ``0 * inf = NaN``)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
import torch
import torch.func

import pyflame_mlir as pf

F64 = {"pf": pf.float64, "torch": torch.float64}


def _lib(L):  # noqa: N802 (the module under test, as a user names it)
    return "pf" if L is pf else "torch"


PROGRAMS: dict[str, Callable] = {
    "lgamma(x).detach() * x": lambda L, x: L.lgamma(x).detach() * x,
    "digamma(x).detach() * x + x": lambda L, x: L.digamma(x).detach() * x + x,
    "i0(x).detach() * x": lambda L, x: L.special.i0(x).detach() * x,
    "erfinv(x/4).detach() * exp(x)": lambda L, x: L.erfinv(x / 4).detach() * L.exp(x),
    "lgamma(x.detach()) * x": lambda L, x: L.lgamma(x.detach()) * x,
    "x * lgamma(-1 + 0 * x.detach())":
        lambda L, x: x * L.lgamma(L.tensor(-1., dtype=F64[_lib(L)]) + 0 * x.detach()),
    "i0(x.detach()) at 800": lambda L, x: L.special.i0(x.detach() + 797) * x,
    "modified_bessel_i0 at 800": lambda L, x: L.special.modified_bessel_i0(x + 797) + x,
}


@pytest.mark.parametrize("name", list(PROGRAMS))
@pytest.mark.parametrize("mode", ["grad", "jvp", "jacrev", "jacfwd", "backward"])
def test_detached_function_outputs_stop_gradients_like_torch(name: str, mode: str) -> None:
    prog = PROGRAMS[name]
    x0 = 3.0

    def run(L):
        x = L.tensor(x0, dtype=F64[_lib(L)])

        def f(x):
            return prog(L, x)
        if mode == "grad":
            return (pf.grad(f) if L is pf else torch.func.grad(f))(x)
        if mode == "jvp":
            return (pf.jvp if L is pf else torch.func.jvp)(f, (x,), (L.ones_like(x),))[1]
        if mode == "jacrev":
            return (pf.jacrev if L is pf else torch.func.jacrev)(f)(x)
        if mode == "jacfwd":
            return (pf.jacfwd if L is pf else torch.func.jacfwd)(f)(x)
        x.requires_grad_(True)
        f(x).backward()
        return x.grad

    got, want = run(pf).numpy(), run(torch).detach().numpy()
    assert np.isnan(want) == np.isnan(got), (got, want)
    np.testing.assert_allclose(got, want, rtol=1e-12)


class Cube(pf.autograd.Function):
    @staticmethod
    def forward(ctx, x, c):
        ctx.save_for_forward(x, c)
        ctx.set_materialize_grads(False)
        return x ** 3 * c

    @staticmethod
    def backward(ctx, g):
        raise AssertionError("not reached in forward mode")

    @staticmethod
    def jvp(ctx, tx, tc):
        x, c = ctx.saved_tensors
        assert tc is None, "c has no tangent: set_materialize_grads(False) passes None"
        return 3 * x ** 2 * c * tx


def test_a_user_function_without_materialized_grads_gets_none_tangents() -> None:
    x = pf.tensor(2., dtype=pf.float64)
    c = pf.tensor(math.inf, dtype=pf.float64)
    _, t = pf.jvp(lambda x: Cube.apply(x, c.detach() * 1), (x,), (pf.ones_like(x),))
    assert t.item() == math.inf


def test_detached_output_of_a_user_function_in_grad() -> None:
    class Square(pf.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = pf.tensor(3., dtype=pf.float64)
    assert pf.grad(lambda x: Square.apply(x).detach() * x)(x).item() == 9.0
    assert pf.grad(lambda x: Square.apply(x) * x)(x).item() == 27.0
