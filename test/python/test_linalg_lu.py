"""``pf.linalg.lu_factor lu_factor_ex lu lu_solve`` and ``pf.lu_unpack`` (the
``lu_factor`` primitive of ``dialects/decomp.py`` and the composites on it)
against torch 2.13: values and pivots on hypothesis-drawn shapes (square,
tall, wide, batched, empty), in lazy and eager mode; float64 gradients (VJP
and JVP) vs torch and central finite differences through ``_grad_oracles``;
singular inputs and the error cases.

The differentiated inputs are ``_linalg_cases.pivoted`` matrices: partial
pivoting picks their permutation decisively, so finite differences never
cross a change of pivots.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from _grad_oracles import (
    Example,
    close,
    draw_cotangents,
    fd_directional,
    fd_gradient,
    forward,
    like,
    outputs,
    pf_loss,
    torch_jvp,
    torch_vjp,
    vdot,
)
from _linalg_cases import pivoted
from _oracles import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyflame_mlir as pf

SETTINGS = settings(max_examples=examples(5), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])
batches = st.sampled_from([(), (2,), (1, 2)])


def _t(a: Any) -> torch.Tensor:
    return torch.from_numpy(np.array(a))


@st.composite
def lu_shapes(draw: Any) -> tuple[tuple[int, ...], int, int]:
    return draw(batches), draw(st.integers(1, 4)), draw(st.integers(1, 4))


# ---- values and pivots ----

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@SETTINGS
@given(shape=lu_shapes(), seed=st.integers(0, 2**32 - 1))
def test_lu_factor_and_unpack_match_torch(mode: str, dtype: Any, shape: Any, seed: int) -> None:
    batch, m, n = shape
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (*batch, m, n)).astype(dtype)
    tol = {"rtol": 1e-4, "atol": 1e-5} if dtype == np.float32 else {"rtol": 1e-10, "atol": 1e-12}
    lu, piv = pf.linalg.lu_factor(pf.from_numpy(a))
    tlu, tpiv = torch.linalg.lu_factor(_t(a))
    assert piv.dtype == pf.int32 and lu.dtype == pf.from_numpy(a).dtype
    np.testing.assert_array_equal(piv.numpy(), tpiv.numpy())
    np.testing.assert_allclose(lu.numpy(), tlu.numpy(), **tol)
    for got, want in zip(pf.linalg.lu(pf.from_numpy(a)), torch.linalg.lu(_t(a))):
        assert list(got.shape) == list(want.shape)
        np.testing.assert_allclose(got.numpy(), want.numpy(), **tol)
    for got, want in zip(pf.lu_unpack(lu, piv), torch.lu_unpack(tlu, tpiv)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), **tol)
    info = pf.linalg.lu_factor_ex(pf.from_numpy(a)).info
    np.testing.assert_array_equal(info.numpy(), torch.linalg.lu_factor_ex(_t(a)).info.numpy())


def test_lu_unpack_flags_and_top_level_names() -> None:
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (2, 3, 3))
    lu, piv = pf.lu(pf.from_numpy(a))  # torch.lu (deprecated there): (LU, pivots)
    tlu, tpiv = torch.lu(_t(a))
    np.testing.assert_allclose(lu.numpy(), tlu.numpy(), rtol=1e-12)
    assert len(pf.from_numpy(a).lu(get_infos=True)) == 3
    for flags in [(True, False), (False, True), (False, False)]:
        for got, want in zip(pf.lu_unpack(lu, piv, *flags), torch.lu_unpack(tlu, tpiv, *flags)):
            assert list(got.shape) == list(want.shape)
            if want.numel():
                np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
    b = rng.uniform(-1, 1, (2, 3, 2))
    np.testing.assert_allclose(pf.lu_solve(pf.from_numpy(b), lu, piv).numpy(),
                               torch.lu_solve(_t(b), tlu, tpiv).numpy(), rtol=1e-9)
    np.testing.assert_allclose(pf.from_numpy(b).lu_solve(lu, piv).numpy(),
                               torch.lu_solve(_t(b), tlu, tpiv).numpy(), rtol=1e-9)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [True, False])
def test_lu_solve_matches_torch(mode: str, left: bool, adjoint: bool) -> None:
    rng = np.random.default_rng(1)
    a = pivoted(rng, (2,), 4, 4)
    b = rng.uniform(-1, 1, (2, 4, 3) if left else (2, 3, 4))
    lu, piv = pf.linalg.lu_factor(pf.from_numpy(a))
    tlu, tpiv = torch.linalg.lu_factor(_t(a))
    got = pf.linalg.lu_solve(lu, piv, pf.from_numpy(b), left=left, adjoint=adjoint)
    want = torch.linalg.lu_solve(tlu, tpiv, _t(b), left=left, adjoint=adjoint)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)


def test_singular_and_empty_inputs_as_torch() -> None:
    s = np.array([[0.0, 1.0, 2.0], [0.0, 2.0, 4.0], [0.0, 3.0, 1.0]])  # a zero column
    for a in [s, np.zeros((3, 3)), np.ones((2, 4)), np.zeros((0, 3, 3)), np.zeros((3, 0)),
              np.array([[np.inf, 1.0], [2.0, 3.0]])]:
        got = pf.linalg.lu_factor_ex(pf.from_numpy(a))
        want = torch.linalg.lu_factor_ex(_t(a))
        for g, w in zip(got, want):
            assert list(g.shape) == list(w.shape)
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12)
    with pytest.raises(pf.LinAlgError, match="singular"):
        pf.linalg.lu_factor_ex(pf.from_numpy(np.zeros((2, 2))), check_errors=True)


def test_permutation_does_not_require_grad_as_torch() -> None:
    x = pf.from_numpy(pivoted(np.random.default_rng(4), (), 3, 3)).requires_grad_()
    p, low, _ = pf.linalg.lu(x)
    assert not p.requires_grad and low.requires_grad


def test_errors_at_record_time() -> None:
    with pytest.raises(pf.ShapeError, match="lu_factor.*float32 or float64"):
        pf.linalg.lu_factor(pf.ones(3, 3, dtype=pf.int64))
    with pytest.raises(pf.ShapeError, match="lu_factor.*matrix"):
        pf.linalg.lu_factor(pf.ones(3))
    with pytest.raises(RuntimeError, match="without pivoting is not implemented on the CPU"):
        pf.linalg.lu(pf.ones(3, 3), pivot=False)
    lu, piv = pf.linalg.lu_factor(pf.ones(3, 3))
    with pytest.raises(pf.ShapeError, match="lu_solve"):
        pf.linalg.lu_solve(lu, piv, pf.ones(2, 1))
    with pytest.raises(pf.ShapeError, match="lu_unpack.*pivots"):
        pf.lu_unpack(lu, pf.ones(3))


# ---- gradients: VJP and JVP vs torch and finite differences ----

def _cases(rng: np.random.Generator, batch: tuple[int, ...], m: int, n: int) -> list[Example]:
    a = pivoted(rng, batch, m, n)
    sq = pivoted(rng, batch, n, n)
    b = rng.uniform(-1, 1, (*batch, n, 2))
    left, adjoint = (bool(v) for v in rng.integers(0, 2, 2))
    b2 = b if left else rng.uniform(-1, 1, (*batch, 2, n))

    def solve(lib, x, y):
        lu, piv = lib.linalg.lu_factor(x)
        return lib.linalg.lu_solve(lu, piv, y, left=left, adjoint=adjoint)
    return [
        Example([a], lambda x: pf.linalg.lu_factor(x).LU,
                lambda x: torch.linalg.lu_factor(x).LU, label=f"lu_factor {m}x{n}"),
        Example([a], lambda x: list(pf.linalg.lu(x))[1:], lambda x: list(torch.linalg.lu(x))[1:],
                label=f"lu (L, U) {m}x{n}"),
        Example([sq, b2], lambda x, y: solve(pf, x, y), lambda x, y: solve(torch, x, y),
                label=f"lu_solve(left={left}, adjoint={adjoint})", rtol=1e-7, atol=1e-9,
                fd_rtol=1e-5, fd_atol=1e-6),
    ]


@SETTINGS
@given(shape=lu_shapes(), seed=st.integers(0, 2**32 - 1))
def test_vjp_and_jvp_vs_torch_and_fd(shape: Any, seed: int) -> None:
    batch, m, n = shape
    rng = np.random.default_rng(seed)
    for ex in _cases(rng, batch, m, n):
        what = ex.describe()
        cts = draw_cotangents(rng, ex)
        xs = [pf.from_numpy(a) for a in ex.arrays]
        value, grads = pf.value_and_grad(pf_loss(ex, cts), argnums=tuple(range(len(xs))))(*xs)
        pf.eval(value, *grads)
        t_outs, t_grads = torch_vjp(ex, cts)
        for o, t in zip(forward(ex, ex.arrays), t_outs):
            close(o, t, ex.rtol, ex.atol, f"{what}: forward vs torch")
        for i, (g, tg) in enumerate(zip(grads, t_grads)):
            close(g, tg, ex.rtol, ex.atol, f"{what}: grad of input {i} vs torch.autograd")
        for i, (g, fd) in enumerate(zip(grads, fd_gradient(ex, cts))):
            close(g, fd, ex.fd_rtol, ex.fd_atol, f"{what}: grad {i} vs finite differences")
        tangents = [like(rng, x) for x in xs]
        _, tout = pf.jvp(ex.pf_fn, xs, [pf.from_numpy(t) for t in tangents])
        tout = outputs(tout)
        pf.eval(*tout)
        for i, (t, tt) in enumerate(zip(tout, torch_jvp(ex, tangents))):
            close(t, tt, ex.rtol, ex.atol, f"{what}: jvp output {i} vs torch.func.jvp")
        for i, (t, fd) in enumerate(zip(tout, fd_directional(ex, tangents))):
            close(t, fd, ex.fd_rtol, ex.fd_atol, f"{what}: jvp output {i} vs finite differences")
        grads_t = [g.numpy() for g in grads]
        lhs, rhs = vdot(tangents, grads_t), vdot(tout, cts)
        assert abs(lhs - rhs) <= 1e-7 * (1 + abs(lhs)), f"{what}: <t, vjp(c)> != <jvp(t), c>"


# ---- backends and vmap ----

def test_backends_without_lapack_refuse_by_name() -> None:
    a = pf.from_numpy(np.eye(3, dtype=np.float32) * 2)
    with pf.backend("csl"), pytest.raises(Exception, match=r"pyflame\.lu_factor is not supported"):
        pf.linalg.lu_factor(a).LU.numpy()
    pytest.importorskip("mlir.ir", reason="the mlir backend needs the MLIR bindings")
    with pf.backend("mlir"), pytest.raises(ValueError, match=r"pyflame\.lu_factor: is not "
                                                             "supported by the mlir backend"):
        pf.linalg.lu_factor(a).LU.numpy()


def test_vmap_matches_torch() -> None:
    a = pivoted(np.random.default_rng(3), (3,), 3, 4)
    got = pf.vmap(lambda x: pf.linalg.lu_factor(x).LU)(pf.from_numpy(a))
    want = torch.vmap(lambda x: torch.linalg.lu_factor(x).LU)(_t(a))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
