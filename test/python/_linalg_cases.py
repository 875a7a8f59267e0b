"""The drawn examples of ``pf.linalg``'s decompositions and solvers, shared by
``test_linalg_decomp.py`` and ``test_grad_ops.py``: each builds, from a seeded
generator, a batch shape and a size, well-conditioned inputs (as torch's
OpInfo sample functions build them: diagonally dominant for solves, ``X X^T +
I`` for Cholesky, ``(X + X^T) / 2`` for eigh) and one function written for
both libraries.

Where torch's docs say a result is not unique (Q of QR, eigenvectors,
singular vectors: each column up to sign) the functions fix the sign of each
column by its first entry, which keeps them differentiable.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from _grad_oracles import Example
from hypothesis import strategies as st

import pyflame_mlir as pf

batches = st.sampled_from([(), (2,), (1, 2)])
sizes = st.integers(1, 4)


# ---- building inputs (both libraries run the same function of X) ----

def _well_conditioned(rng: np.random.Generator, batch: tuple[int, ...], n: int) -> np.ndarray:
    return rng.uniform(-1, 1, (*batch, n, n)) + 2 * n * np.eye(n) * rng.choice([-1, 1])


def _spd(lib: Any, x: Any) -> Any:
    """X X^T + I, symmetric positive definite (its gradient is X's)."""
    n = x.shape[-1]
    return x @ x.transpose(-2, -1) + lib.eye(n, dtype=x.dtype)


def _sym(x: Any) -> Any:
    return (x + x.transpose(-2, -1)) * 0.5


def _fix_signs(lib: Any, q: Any, *rows: Any) -> list[Any]:
    """Columns of q (and the matching rows of each of ``rows``) times the sign
    of q's first row: a representative of the sign ambiguity."""
    s = lib.sign(q[..., :1, :])
    return [q * s, *[r * s.transpose(-2, -1) for r in rows]]


def _both(fn: Callable[[Any, Any], Any]) -> tuple[Callable, Callable]:
    """One function of (lib, tensors...) as its pyflame and torch versions."""
    return (lambda *xs: fn(pf, *xs)), (lambda *xs: fn(torch, *xs))


CASES: dict[str, Callable[[np.random.Generator, tuple[int, ...], int], Example]] = {}


def case(name: str):
    def register(fn):
        CASES[name] = fn
        return fn
    return register


def _example(name: str, arrays: list[np.ndarray], fn: Callable, **tol: float) -> Example:
    p, t = _both(fn)
    return Example(arrays, p, t, label=name, **tol)


@case("solve")
def _solve(rng, batch, n):
    k = int(rng.integers(1, 3))
    return _example("solve", [_well_conditioned(rng, batch, n), rng.uniform(-1, 1, (n, k))],
                    lambda lib, a, b: lib.linalg.solve(a, b))


@case("solve_vector_left_false")
def _solve_vec(rng, batch, n):
    return _example("solve(left=False)", [_well_conditioned(rng, batch, n),
                                          rng.uniform(-1, 1, (*batch, 2, n)),
                                          rng.uniform(-1, 1, (*batch, n))],
                    lambda lib, a, b, v: [lib.linalg.solve(a, b, left=False),
                                          lib.linalg.solve(a, v)])


@case("inv")
def _inv(rng, batch, n):
    return _example("inv", [_well_conditioned(rng, batch, n)],
                    lambda lib, a: lib.linalg.inv(a))


@case("solve_triangular")
def _solve_triangular(rng, batch, n):
    upper, left, unit = (bool(v) for v in rng.integers(0, 2, 3))
    a = _well_conditioned(rng, batch, n)
    b = rng.uniform(-1, 1, (n, 2) if left else (2, n))
    return _example(f"solve_triangular(upper={upper}, left={left}, unitriangular={unit})",
                    [a, b], lambda lib, a, b: lib.linalg.solve_triangular(
                        a, b, upper=upper, left=left, unitriangular=unit))


@case("cholesky")
def _cholesky(rng, batch, n):
    upper = bool(rng.integers(0, 2))
    return _example(f"cholesky(upper={upper})", [rng.uniform(-1, 1, (*batch, n, n))],
                    lambda lib, x: lib.linalg.cholesky(_spd(lib, x), upper=upper))


@case("cholesky_solve")
def _cholesky_solve(rng, batch, n):
    """B (n, 2) broadcasts against the batch of factors. torch 2.13's
    forward-mode rule is wrong for a broadcast B (its own central differences
    disagree), so torch's side gets B expanded to the batch first: same
    values, and its reverse-mode sums the expansion back."""
    def fn(lib, x, b):
        factor = lib.linalg.cholesky(_spd(lib, x))
        if lib is torch:
            b = b.expand(*factor.shape[:-2], *b.shape)
        return lib.cholesky_solve(b, factor)
    return _example("cholesky_solve", [rng.uniform(-1, 1, (*batch, n, n)),
                                       rng.uniform(-1, 1, (n, 2))], fn)


@case("det")
def _det(rng, batch, n):
    return _example("det", [rng.uniform(-1, 1, (*batch, n, n))], lambda lib, a: lib.linalg.det(a),
                    rtol=1e-7, atol=1e-9)


@case("det_singular")
def _det_singular(rng, batch, n):
    """Rank n - 1 (two equal columns): det is 0, its gradient finite (torch's)."""
    def fn(lib, x):
        a = lib.cat([x, x[..., :1]], -1) if n > 1 else x * 0
        return lib.linalg.det(a)
    return _example("det at singular matrices", [rng.uniform(-1, 1, (*batch, n, max(n - 1, 1)))],
                    fn, rtol=1e-7, atol=1e-9)


@case("slogdet")
def _slogdet(rng, batch, n):
    return _example("slogdet", [_well_conditioned(rng, batch, n)],
                    lambda lib, a: lib.linalg.slogdet(a).logabsdet)


@case("logdet")
def _logdet(rng, batch, n):
    return _example("logdet", [rng.uniform(-1, 1, (*batch, n, n))],
                    lambda lib, x: lib.logdet(_spd(lib, x)))


@case("qr")
def _qr(rng, batch, n):
    m = int(rng.integers(1, 5))
    mode = "complete" if m <= n and rng.integers(0, 2) else "reduced"

    def fn(lib, a):
        q, r = lib.linalg.qr(a, mode=mode)
        return _fix_signs(lib, q, r)  # diag(R) > 0 would fix it too (LAPACK: R_ii < 0 occurs)
    return _example(f"qr(mode={mode})", [rng.uniform(-1, 1, (*batch, m, n))], fn)


@case("eigh")
def _eigh(rng, batch, n):
    uplo = "L" if rng.integers(0, 2) else "U"

    def fn(lib, x):
        w, q = lib.linalg.eigh(_sym(x), UPLO=uplo)
        return [w, *_fix_signs(lib, q)]
    return _example(f"eigh(UPLO={uplo})", [rng.uniform(-1, 1, (*batch, n, n))], fn,
                    rtol=1e-6, atol=1e-8, fd_rtol=1e-5, fd_atol=1e-5)


@case("eigvalsh")
def _eigvalsh(rng, batch, n):
    return _example("eigvalsh", [rng.uniform(-1, 1, (*batch, n, n))],
                    lambda lib, x: lib.linalg.eigvalsh(_sym(x)))


@case("svd")
def _svd(rng, batch, n):
    m = int(rng.integers(1, 5))

    def fn(lib, a):
        u, s, vh = lib.linalg.svd(a, full_matrices=False)
        u, vh = _fix_signs(lib, u, vh)
        return [u, s, vh]
    return _example("svd", [rng.uniform(-1, 1, (*batch, m, n))], fn,
                    rtol=1e-6, atol=1e-8, fd_rtol=1e-5, fd_atol=1e-5)


@case("svdvals")
def _svdvals(rng, batch, n):
    m = int(rng.integers(1, 5))
    return _example("svdvals", [rng.uniform(-1, 1, (*batch, m, n))],
                    lambda lib, a: lib.linalg.svdvals(a))


def _singular_values_at_least(rng: np.random.Generator, shape: tuple[int, ...], low: float,
                              make=lambda a: a) -> np.ndarray:
    """A uniform(-1, 1) draw of ``shape`` (``make`` of it) whose singular values
    are all at least ``low``: pinv's gradient grows as 1/sigma^2, so near rank
    deficiency central differences lose their digits (CI's hypothesis found a
    4x4 with gradients of 1e6, 1e-4 off)."""
    while True:
        a = rng.uniform(-1, 1, shape)
        if not a.size or np.linalg.svd(make(a), compute_uv=False).min() >= low:
            return a


@case("pinv")
def _pinv(rng, batch, n):
    m = int(rng.integers(1, 5))
    return _example("pinv", [_singular_values_at_least(rng, (*batch, m, n), 0.2)],
                    lambda lib, a: lib.linalg.pinv(a), rtol=1e-6, atol=1e-8,
                    fd_rtol=1e-5, fd_atol=1e-5)


@case("pinv_hermitian")
def _pinv_hermitian(rng, batch, n):
    return _example("pinv(hermitian=True)",
                    [_singular_values_at_least(rng, (*batch, n, n), 0.2,
                                               lambda a: (a + np.swapaxes(a, -1, -2)) / 2)],
                    lambda lib, x: lib.linalg.pinv(_sym(x), hermitian=True), rtol=1e-6,
                    atol=1e-8, fd_rtol=1e-5, fd_atol=1e-5)


@case("pinv_orthogonal")
def _pinv_orthogonal(rng, batch, n):
    """Repeated singular values (all 1): torch's closed form is finite there."""
    def fn(lib, x):
        q, _ = lib.linalg.qr(x)
        return lib.linalg.pinv(q + 0 * x)
    return _example("pinv at an orthogonal matrix", [_well_conditioned(rng, batch, n)], fn,
                    rtol=1e-6, atol=1e-8, fd_rtol=1e-5, fd_atol=1e-5)


@case("matrix_exp")
def _matrix_exp(rng, batch, n):
    scale = float(rng.choice([0.5, 4.0]))  # 4: |A| > theta_13, so squarings
    return _example(f"matrix_exp(scale {scale})", [rng.uniform(-1, 1, (*batch, n, n)) * scale],
                    lambda lib, a: lib.linalg.matrix_exp(a), rtol=1e-7, atol=1e-9,
                    fd_rtol=1e-5, fd_atol=1e-5)


@case("cond")
def _cond(rng, batch, n):
    return _example("cond", [_well_conditioned(rng, batch, n)], lambda lib, a: lib.linalg.cond(a),
                    rtol=1e-7, atol=1e-9, fd_rtol=1e-5, fd_atol=1e-5)


@case("lstsq")
def _lstsq(rng, batch, n):
    m = int(rng.integers(n, 6))  # tall or square: full column rank
    return _example("lstsq", [rng.uniform(-1, 1, (*batch, m, n)),
                              rng.uniform(-1, 1, (*batch, m, 2))],
                    lambda lib, a, b: lib.linalg.lstsq(a, b).solution, rtol=1e-6, atol=1e-8,
                    fd_rtol=1e-5, fd_atol=1e-5)




def draw_case(name: str, data: st.DataObject) -> tuple[Example, np.random.Generator]:
    """One drawn example of ``CASES[name]`` and the generator that drew it."""
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    batch, n = data.draw(batches, label="batch"), data.draw(sizes, label="n")
    rng = np.random.default_rng(seed)
    return CASES[name](rng, batch, n), rng


# ---- issue 14 (s10-surface14): LU ----

def pivoted(rng: np.random.Generator, batch: tuple[int, ...], m: int, n: int) -> np.ndarray:
    """P0 L0 U0 with |L0| <= 0.5 off the diagonal and |diag U0| >= 0.5: partial
    pivoting picks P0 decisively, so finite differences never cross a change
    of pivots."""
    k = min(m, n)
    low = np.tril(rng.uniform(-0.5, 0.5, (*batch, m, k)), -1) + np.eye(m, k)
    up = np.triu(rng.uniform(-1, 1, (*batch, k, n)))
    idx = np.arange(k)
    up[..., idx, idx] = rng.uniform(0.5, 2, (*batch, k)) * rng.choice([-1, 1], (*batch, k))
    a = low @ up
    return np.stack([x[rng.permutation(m)] for x in a.reshape(-1, m, n)]).reshape(a.shape)


@case("lu_factor")
def _lu_factor(rng, batch, n):
    m = int(rng.integers(1, 5))  # square, tall or wide
    return _example(f"lu_factor {m}x{n}", [pivoted(rng, batch, m, n)],
                    lambda lib, a: lib.linalg.lu_factor(a).LU)
