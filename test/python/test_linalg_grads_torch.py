"""Gradients of torch.linalg functions and einsum with repeated indices,
float64, against torch (a weighted sum of every output, backward to every
input; eigen/singular vectors through sign-invariant functions of them)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyflame_mlir as pf

rng = np.random.default_rng(4)
A = rng.standard_normal((3, 3))
B = rng.standard_normal((3, 2))
R = rng.standard_normal((4, 3))
E3 = rng.standard_normal((3, 3, 3))


def _spd(L, a):  # noqa: N802
    return a @ a.mT + 3 * L.eye(3, dtype=L.float64)


CASES = {
    "solve": (lambda L, a, b: L.linalg.solve(a, b), [A, B]),
    "inv": (lambda L, a: L.linalg.inv(a), [A]),
    "det": (lambda L, a: L.linalg.det(a), [A]),
    "slogdet": (lambda L, a: L.linalg.slogdet(a), [A]),
    "cholesky": (lambda L, a: L.linalg.cholesky(_spd(L, a)), [A]),
    "eigh": (lambda L, a: (lambda w, v: [w, v * v])(*L.linalg.eigh(a + a.mT)), [A]),
    "svd": (lambda L, a: (lambda u, s, vh: [s, u @ L.diag(s) @ vh, u * u])(
        *L.linalg.svd(a, full_matrices=False)), [R]),
    "qr": (lambda L, a: L.linalg.qr(a), [R]),
    "lstsq": (lambda L, a, b: L.linalg.lstsq(a, b).solution, [R, R[:, :2]]),
    "pinv": (lambda L, a: L.linalg.pinv(a), [R]),
    "matrix_norm": (lambda L, a: [L.linalg.matrix_norm(a, o) for o in ("fro", "nuc", 2, -2)],
                    [R]),
    "matrix_power_negative": (lambda L, a: [L.linalg.matrix_power(a, -2),
                                            L.matrix_power(a, -1), a.matrix_power(3)], [A]),
    "einsum_ii,ij->j": (lambda L, a, b: L.einsum("ii,ij->j", a, b), [A, B]),
    "einsum_iij->j": (lambda L, a: L.einsum("iij->j", a), [E3]),
    "einsum_iii->i": (lambda L, a: L.einsum("iii->i", a), [E3]),
    "einsum_i,i,i->i": (lambda L, a: L.einsum("i,i,i->i", a, a, a), [A[0]]),
    "einsum_sublists": (lambda L, a, b: [L.einsum(a, [0, 1], b, [1, 2], [0, 2]),
                                         L.einsum(a, [0, 0], []), L.einsum(a, [0, 1], b, [0, 2])],
                        [A, B]),
}


def _run(L, name):  # noqa: N802
    f, inputs = CASES[name]
    xs = [L.tensor(v, dtype=L.float64, requires_grad=True) for v in inputs]
    out = f(L, *xs)
    outs = list(out) if isinstance(out, tuple | list) else [out]
    total = 0
    for i, o in enumerate(outs):
        w = L.tensor(np.cos(np.arange(o.numel()) + i).reshape(tuple(o.shape)))
        total = total + (o * w).sum()
    total.backward()
    return [np.asarray(v.detach().numpy()) for v in [*outs, *(x.grad for x in xs)]]


@pytest.mark.parametrize("name", list(CASES))
def test_linalg_and_einsum_gradients_match_torch(name) -> None:
    for got, want in zip(_run(pf, name), _run(torch, name), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-10)
