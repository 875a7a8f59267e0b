"""``pf.linalg``'s decompositions and solvers (``dialects/decomp.py``) against
torch 2.13: values on hypothesis-drawn batch shapes and well-conditioned
matrices (built as torch's OpInfo sample functions build them: diagonally
dominant for solves, ``X X^T + I`` for Cholesky, ``(X + X^T) / 2`` for
eigh; the examples are in ``_linalg_cases.py``), float64 gradients (VJP and
JVP) vs torch and finite differences through ``_grad_oracles``, and the
error cases.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from _grad_oracles import (
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
from _linalg_cases import CASES, _well_conditioned, draw_case
from _oracles import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyflame_mlir as pf

SETTINGS = settings(max_examples=examples(6), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])

batches = st.sampled_from([(), (2,), (1, 2)])
sizes = st.integers(1, 4)


NAMES = sorted(CASES)


_draw = draw_case


@pytest.mark.parametrize("name", NAMES)
@SETTINGS
@given(data=st.data())
def test_values_and_vjp_vs_torch_and_fd(name: str, data: st.DataObject) -> None:
    ex, rng = _draw(name, data)
    cts = draw_cotangents(rng, ex)
    xs = [pf.from_numpy(a) for a in ex.arrays]
    value, grads = pf.value_and_grad(pf_loss(ex, cts), argnums=tuple(range(len(xs))))(*xs)
    pf.eval(value, *grads)
    t_outs, t_grads = torch_vjp(ex, cts)
    what = ex.describe()
    for o, t in zip(forward(ex, ex.arrays), t_outs):
        close(o, t, ex.rtol, ex.atol, f"{what}: forward vs torch")
    for i, (g, tg) in enumerate(zip(grads, t_grads)):
        close(g, tg, ex.rtol, ex.atol, f"{what}: grad of input {i} vs torch.autograd")
    for i, (g, fd) in enumerate(zip(grads, fd_gradient(ex, cts))):
        close(g, fd, ex.fd_rtol, ex.fd_atol, f"{what}: grad of input {i} vs finite differences")


@pytest.mark.parametrize("name", NAMES)
@SETTINGS
@given(data=st.data())
def test_jvp_vs_torch_and_fd(name: str, data: st.DataObject) -> None:
    ex, rng = _draw(name, data)
    xs = [pf.from_numpy(a) for a in ex.arrays]
    tangents = [like(rng, x) for x in xs]
    cts = draw_cotangents(rng, ex)
    _, tout = pf.jvp(ex.pf_fn, xs, [pf.from_numpy(t) for t in tangents])
    tout = outputs(tout)
    _, vjp_fn = pf.vjp(ex.pf_fn, *xs)
    out_specs = outputs(ex.pf_fn(*xs))
    ct_tree: Any = [pf.from_numpy(c) for c in cts]
    vjps = vjp_fn(ct_tree if len(out_specs) > 1 or isinstance(ex.pf_fn(*xs), list)
                  else ct_tree[0])
    pf.eval(*tout, *vjps)
    what = ex.describe()
    for i, (t, tt) in enumerate(zip(tout, torch_jvp(ex, tangents))):
        close(t, tt, ex.rtol, ex.atol, f"{what}: jvp output {i} vs torch.func.jvp")
    for i, (t, fd) in enumerate(zip(tout, fd_directional(ex, tangents))):
        close(t, fd, ex.fd_rtol, ex.fd_atol, f"{what}: jvp output {i} vs finite differences")
    lhs, rhs = vdot(tangents, vjps), vdot(tout, cts)
    assert abs(lhs - rhs) <= 1e-7 * (1 + abs(lhs)), f"{what}: <t, vjp(c)> != <jvp(t), c>"


# ---- values against torch in both modes, special inputs ----

def _t(a: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.array(a))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_lazy_and_eager(mode: str, dtype: Any) -> None:
    rng = np.random.default_rng(1)
    a = _well_conditioned(rng, (2,), 3).astype(dtype)
    x = rng.uniform(-1, 1, (2, 3, 3)).astype(dtype)
    spd = (x @ x.transpose(0, 2, 1) + np.eye(3)).astype(dtype)
    b = rng.uniform(-1, 1, (3, 2)).astype(dtype)
    tol = {"rtol": 1e-4, "atol": 1e-5} if dtype == np.float32 else {"rtol": 1e-10, "atol": 1e-12}
    c = _well_conditioned(rng, (), 4).reshape(2, 2, 4).astype(dtype)
    pa, pspd, pb, pc = pf.from_numpy(a), pf.from_numpy(spd), pf.from_numpy(b), pf.from_numpy(c)
    ta, tspd, tb, tc = _t(a), _t(spd), _t(b), _t(c)
    pairs = [
        (pf.linalg.solve(pa, pb), torch.linalg.solve(ta, tb)),
        (pf.linalg.inv(pa), torch.linalg.inv(ta)),
        (pa.inverse(), ta.inverse()),
        (pf.linalg.det(pa), torch.linalg.det(ta)), (pa.det(), ta.det()),
        (pf.logdet(pspd), torch.logdet(tspd)), (pa.logdet(), ta.logdet()),
        (*pf.linalg.slogdet(pa), *torch.linalg.slogdet(ta)),
        (pf.linalg.cholesky(pspd, upper=True), torch.linalg.cholesky(tspd, upper=True)),
        (pspd.cholesky(), tspd.cholesky()),
        (pf.cholesky_solve(pb, pspd.cholesky()), torch.cholesky_solve(tb, tspd.cholesky())),
        (pf.cholesky_inverse(pspd.cholesky()), torch.cholesky_inverse(tspd.cholesky())),
        (pf.triangular_solve(pb, pa, transpose=True).solution,
         torch.triangular_solve(tb, ta, transpose=True).solution),
        (pf.linalg.solve_triangular(pa, pb.mT, upper=False, left=False),
         torch.linalg.solve_triangular(ta, tb.mT, upper=False, left=False)),
        (pf.linalg.eigvalsh(pspd, UPLO="U"), torch.linalg.eigvalsh(tspd, UPLO="U")),
        (pf.linalg.svdvals(pa), torch.linalg.svdvals(ta)),
        (pf.linalg.pinv(pa[..., :2]), torch.linalg.pinv(ta[..., :2])),
        (pf.pinverse(pa), torch.pinverse(ta)),
        (pf.linalg.matrix_rank(pa), torch.linalg.matrix_rank(ta)),
        (pf.linalg.lstsq(pa, pb).solution, torch.linalg.lstsq(ta, tb.expand(2, 3, 2)).solution),
        (pf.linalg.inv_ex(pa).info, torch.linalg.inv_ex(ta).info),
        (pf.linalg.cholesky_ex(pspd).L, torch.linalg.cholesky_ex(tspd).L),
        (pf.linalg.matrix_exp(pa), torch.linalg.matrix_exp(ta)),
        (pa.matrix_exp(), ta.matrix_exp()),
        (pf.linalg.cond(pa), torch.linalg.cond(ta)),
        (pf.linalg.cond(pa, "fro"), torch.linalg.cond(ta, "fro")),
        (pf.linalg.cond(pa, -2), torch.linalg.cond(ta, -2)),
        (pf.linalg.vander(pb[:, 0], N=4), torch.linalg.vander(tb[:, 0], N=4)),
        (pf.linalg.diagonal(pa, offset=1), torch.linalg.diagonal(ta, offset=1)),
        (pf.linalg.tensorinv(pc), torch.linalg.tensorinv(tc)),
        (pf.linalg.tensorsolve(pc, pb[:2, :2]), torch.linalg.tensorsolve(tc, tb[:2, :2])),
    ]
    s = pf.linalg.slogdet(pa)
    assert isinstance(s, pf.linalg.SlogdetResult) and s.sign.shape == (2,)
    ours = [p for pair in pairs for p in pair[: len(pair) // 2]]
    theirs = [t for pair in pairs for t in pair[len(pair) // 2:]]
    pf.eval(*ours)
    for k, (o, t) in enumerate(zip(ours, theirs)):
        assert o.numpy().dtype == t.numpy().dtype, (k, o.dtype, t.dtype)
        np.testing.assert_allclose(o.numpy(), t.numpy(), err_msg=f"pair {k}", **tol)


def test_decompositions_reconstruct_their_input(mode: str) -> None:
    """QR, SVD (both full_matrices) and eigh on the invariants torch documents."""
    rng = np.random.default_rng(2)
    for m, n in ((4, 3), (3, 4), (3, 3)):
        a = rng.uniform(-1, 1, (2, m, n))
        for qr_mode in ("reduced", "complete", "r"):
            q, r = pf.linalg.qr(pf.from_numpy(a), mode=qr_mode)
            tq, tr = torch.linalg.qr(_t(a), mode=qr_mode)
            assert q.shape == tuple(tq.shape) and r.shape == tuple(tr.shape)
            np.testing.assert_allclose(np.abs(r.numpy()), np.abs(tr.numpy()), atol=1e-12)
            if qr_mode != "r":
                np.testing.assert_allclose((q @ r).numpy(), a, atol=1e-12)
                eye = np.broadcast_to(np.eye(q.shape[-1]), (2, q.shape[-1], q.shape[-1]))
                np.testing.assert_allclose((q.mT @ q).numpy(), eye, atol=1e-12)
        for full in (True, False):
            u, s, vh = pf.linalg.svd(pf.from_numpy(a), full_matrices=full)
            tu, ts, tvh = torch.linalg.svd(_t(a), full_matrices=full)
            assert (u.shape, s.shape, vh.shape) == (tuple(tu.shape), tuple(ts.shape),
                                                     tuple(tvh.shape))
            k = min(m, n)
            np.testing.assert_allclose(s.numpy(), ts.numpy(), atol=1e-12)
            np.testing.assert_allclose((u[..., :k] * s.unsqueeze(-2)) @ vh[..., :k, :], a,
                                       atol=1e-12)
        usv = pf.svd(pf.from_numpy(a))
        np.testing.assert_allclose((usv.U * usv.S.unsqueeze(-2) @ usv.V.mT).numpy(), a, atol=1e-12)
    x = rng.uniform(-1, 1, (2, 4, 4))
    sym = x + x.transpose(0, 2, 1)
    w, q = pf.linalg.eigh(pf.from_numpy(sym))
    np.testing.assert_allclose(w.numpy(), torch.linalg.eigvalsh(_t(sym)).numpy(), atol=1e-12)
    np.testing.assert_allclose((q * w.unsqueeze(-2) @ q.mT).numpy(), sym, atol=1e-12)


def test_empty_matrices() -> None:
    e = pf.zeros(0, 0, dtype=pf.float64)
    assert pf.linalg.det(e).item() == 1.0
    assert pf.linalg.slogdet(e).logabsdet.item() == 0.0
    assert pf.linalg.inv(e).shape == (0, 0) and pf.linalg.cholesky(e).shape == (0, 0)
    assert pf.linalg.svd(pf.zeros(3, 0, dtype=pf.float64)).U.shape == (3, 3)
    assert pf.linalg.pinv(pf.zeros(3, 0, dtype=pf.float64)).numpy().shape == (0, 3)


def test_det_of_singular_and_infinite_matrices() -> None:
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert pf.linalg.det(pf.from_numpy(a)).item() == torch.linalg.det(_t(a)).item()
    s = pf.linalg.slogdet(pf.from_numpy(a))
    assert s.sign.item() == 0 and s.logabsdet.item() == -np.inf
    assert pf.logdet(pf.from_numpy(-np.eye(3))).numpy() != pf.logdet(pf.from_numpy(-np.eye(3))
                                                                       ).numpy()  # NaN
    inf = np.array([[np.inf, 0.0], [0.0, 1.0]])
    assert pf.linalg.det(pf.from_numpy(inf)).item() == torch.linalg.det(_t(inf)).item()


# ---- errors: torch's cases raise, naming the op ----

def test_errors_at_record_time() -> None:
    with pytest.raises(ValueError, match=r"linalg\.inv: expects square matrices, got shape "
                                         r"\[2, 3\]"):
        pf.linalg.inv(pf.zeros(2, 3))
    with pytest.raises(ValueError, match=r"linalg\.det: expects a float32 or float64 tensor, "
                                         "got int64"):
        pf.linalg.det(pf.arange(4).reshape(2, 2))
    with pytest.raises(ValueError, match=r"linalg\.cholesky: expects a float32 or float64 "
                                         "tensor, got float16"):
        pf.linalg.cholesky(pf.zeros(2, 2, dtype=pf.float16))
    with pytest.raises(ValueError, match=r"linalg\.svd: expects a matrix"):
        pf.linalg.svd(pf.zeros(3))
    with pytest.raises(ValueError, match="cannot be broadcast"):
        pf.linalg.solve(pf.zeros(2, 3, 3), pf.zeros(4, 3, 1))
    with pytest.raises(ValueError, match=r"linalg\.solve: A and B must have one dtype"):
        pf.linalg.solve(pf.zeros(3, 3), pf.zeros(3, dtype=pf.float64))
    with pytest.raises(ValueError, match="mode must be"):
        pf.linalg.qr(pf.zeros(3, 3), mode="full")
    with pytest.raises(ValueError, match="UPLO must be"):
        pf.linalg.eigh(pf.zeros(3, 3), UPLO="X")


@pytest.mark.parametrize("fn,message", [
    (lambda a: pf.linalg.solve(a, pf.ones(2, 2, 1, dtype=pf.float64)),
     r"pyflame\.solve: the input matrix at batch index \(1,\) .* is singular"),
    (pf.linalg.inv, r"pyflame\.solve: .* is singular"),
    (pf.linalg.cholesky, r"pyflame\.cholesky: the input matrix at batch index \(1,\) .* is "
                         "not positive-definite"),
])
def test_singular_and_not_positive_definite_raise(mode: str, fn: Callable, message: str
                                                  ) -> None:
    """torch raises LinAlgError (a RuntimeError) here; ours too, when the
    result is computed (at once in eager mode), never a silent NaN."""
    a = pf.from_numpy(np.stack([np.eye(2), [[1.0, 2.0], [2.0, 4.0]]]))
    with pytest.raises(pf.LinAlgError, match=message):
        fn(a).numpy()
    assert issubclass(pf.LinAlgError, RuntimeError)


def test_backends_without_lapack_refuse_by_name() -> None:
    pytest.importorskip("mlir.ir", reason="the mlir backend needs the MLIR bindings")
    a = pf.from_numpy(np.eye(3) * 2)
    with pf.backend("mlir"), pytest.raises(ValueError, match=r"pyflame\.det: is not supported "
                                                             "by the mlir backend"):
        pf.linalg.det(a).numpy()


def test_the_wse_refuses_them_by_name() -> None:
    a = pf.from_numpy(np.eye(3, dtype=np.float32) * 2)
    with pf.backend("csl"), pytest.raises(Exception, match=r"pyflame\.cholesky is not supported"):
        pf.linalg.cholesky(a).numpy()


# ---- vmap: the batch dim is one more leading dim ----

def test_vmap_matches_torch() -> None:
    rng = np.random.default_rng(3)
    a = _well_conditioned(rng, (4,), 3)
    b = rng.uniform(-1, 1, (3, 2))

    def f(lib, x):
        return lib.linalg.det(x) + lib.linalg.solve(x, lib.eye(3, dtype=x.dtype) if lib is torch
                                                     else pf.eye(3, dtype=x.dtype)).sum()
    got = pf.vmap(lambda x: f(pf, x))(pf.from_numpy(a))
    want = torch.vmap(lambda x: f(torch, x))(_t(a))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10)
    got = pf.vmap(lambda x: pf.linalg.solve(x, pf.from_numpy(b)))(pf.from_numpy(a))
    np.testing.assert_allclose(got.numpy(), np.linalg.solve(a, b), rtol=1e-10)
    got = pf.vmap(lambda x: pf.linalg.svdvals(x))(pf.from_numpy(a))
    np.testing.assert_allclose(got.numpy(), np.linalg.svd(a, compute_uv=False), rtol=1e-10)
