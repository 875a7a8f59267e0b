"""Matrix decompositions and solvers (``torch.linalg``'s LAPACK ops), one
primitive each, on the last two dims (every leading dim is a batch dim):

- ``solve(A, B) -> X`` with ``A X = B``; ``A`` is ``[..., n, n]``, ``B``
  ``[..., n, k]`` with the same batch dims (the frontend broadcasts).
- ``solve_triangular(A, B; upper, unitriangular) -> X``: the same for a
  triangular ``A`` (only its triangle is read; a zero pivot gives inf/NaN as
  torch, it does not raise).
- ``cholesky(A) -> L`` (lower; reads A's lower triangle).
- ``slogdet(A) -> (sign, logabsdet)``, ``det(A)``.
- ``pinv(A; atol, rtol, hermitian)``: the pseudo-inverse, singular values
  (|eigenvalues| if ``hermitian``) <= max(atol, rtol * the largest) dropped.
- ``matrix_exp(A)``: scaling and squaring with a [13/13] Pade approximant
  (Higham 2005, as torch and scipy); its derivatives are the upper right
  block of the exponential of ``[[A^T, G], [0, A^T]]`` (``[[A, dA], [0, A]]``
  for the JVP), torch's rule.
- ``lu_factor(A) -> (LU, pivots, perm)``: ``A = P L U`` by Gaussian
  elimination with partial pivoting (LAPACK getrf's choice: the first
  largest magnitude; a zero column is skipped, not an error, as torch);
  ``LU`` packs L's strict lower triangle (unit diagonal implied) and U;
  ``pivots`` are LAPACK's 1-based row swaps (int32, as torch's); ``perm``
  (int32 ``[..., m]``) is the permutation they compose, ``P[perm[j], j] =
  1``, so that the frontend and the derivatives build ``P`` without
  replaying the swaps. Any ``[..., m, n]``.
- ``qr(A; complete) -> (Q, R)``, ``eigh(A; lower) -> (L, Q)`` (ascending
  eigenvalues; reads one triangle), ``svd(A; full_matrices) -> (U, S, Vh)``.

Inputs are float32 or float64 (the frontend refuses the others as torch
does). The kernels are numpy.linalg's (LAPACK); a singular ``solve`` or a
``cholesky`` of a matrix that is not positive definite raises ``LinAlgError``
naming the op and the batch element, as torch raises.

Derivatives are the standard real formulas (PyTorch's ``FunctionsManual.cpp``
and JAX's ``lax/linalg.py`` derive them): the rules below carry each
derivation in a line. Where torch picks a convention we pick torch's:
- ``cholesky`` and ``eigh`` differentiate with respect to the symmetric
  matrix (their gradients are symmetric; a tangent is symmetrized first);
- ``eigh``/``svd`` divide by eigenvalue (squared singular value) gaps, so
  their gradients are inf/NaN at repeated values when the eigenvectors
  (singular vectors) carry a cotangent, as torch's;
- ``svd(full_matrices=True)``'s VJP uses the first ``min(m, n)`` columns of
  U (rows of Vh) only, as torch's; its JVP raises (torch's too);
- ``det``'s derivative is the cofactor matrix ``det(U) det(Vh) U
  diag(prod_{j != i} s_j) Vh`` (from an SVD): finite and exact at singular
  matrices, as torch's.

Backends without LAPACK (MAX, the mlir backend, the WSE) refuse these ops,
naming them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import ad
from .dtypes import DType, bool_, float32, float64, int32
from .opdef import OpDef, Shape, ShapeError, define, fmt_shape

DECOMPOSITIONS = ("solve", "solve_triangular", "cholesky", "slogdet", "det", "qr", "eigh",
                  "svd", "pinv", "matrix_exp", "lu_factor")


class LinAlgError(RuntimeError):
    """A decomposition that has no answer for its input (a singular matrix to
    ``solve``, a matrix that is not positive definite to ``cholesky``):
    torch raises ``torch.linalg.LinAlgError`` (also a ``RuntimeError``)."""


# ---- shape rules ----

def _check_float(name: str, d: DType) -> None:
    if d is not float32 and d is not float64:
        raise ShapeError(name, f"expects a float32 or float64 tensor, got {d.name} "
                               "(torch: floating point only; half precision has no kernel)")


def _check_matrix(name: str, s: Shape, square: bool = True) -> None:
    if len(s) < 2:
        raise ShapeError(name, f"expects a matrix or a batch of matrices ([..., m, n]), "
                               f"got shape {fmt_shape(s)}")
    if square and s[-1] != s[-2]:
        raise ShapeError(name, f"expects square matrices, got shape {fmt_shape(s)} "
                               f"({s[-2]} x {s[-1]})")


def _solve_rule(name: str):
    def rule(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
        (a, b), (da, db) = shapes, dtypes
        _check_float(name, da)
        if db is not da:
            raise ShapeError(name, f"operands must have one element type, got {da.name} "
                                   f"and {db.name}")
        _check_matrix(name, a)
        _check_matrix(name, b, square=False)
        if a[:-2] != b[:-2] or b[-2] != a[-1]:
            raise ShapeError(name, f"cannot solve A X = B for A of shape {fmt_shape(a)} and "
                                   f"B of shape {fmt_shape(b)} (B must be [..., {a[-1]}, k] "
                                   "with A's batch dims)")
        return ((b, da),)
    return rule


def _square_rule(name: str, results: int):
    def rule(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
        (s,), (d,) = shapes, dtypes
        if name != "matrix_exp" or d.category != 2:  # matrix_exp: half precision too (torch)
            _check_float(name, d)
        _check_matrix(name, s)
        if results == 0:  # det: one scalar per matrix
            return ((s[:-2], d),)
        if name == "slogdet":
            return ((s[:-2], d), (s[:-2], d))
        if name == "eigh":
            return ((s[:-1], d), (s, d))
        return ((s, d),)
    return rule


def _qr_rule(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
    (s,), (d,) = shapes, dtypes
    _check_float("qr", d)
    _check_matrix("qr", s, square=False)
    *batch, m, n = s
    k = m if attrs["complete"] else min(m, n)
    return ((tuple(batch) + (m, k), d), (tuple(batch) + (k, n), d))


def _svd_rule(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
    (s,), (d,) = shapes, dtypes
    _check_float("svd", d)
    _check_matrix("svd", s, square=False)
    *batch, m, n = s
    b, k = tuple(batch), min(m, n)
    if attrs["full_matrices"]:
        return ((b + (m, m), d), (b + (k,), d), (b + (n, n), d))
    return ((b + (m, k), d), (b + (k,), d), (b + (k, n), d))


def _pinv_rule(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
    (s,), (d,) = shapes, dtypes
    _check_float("pinv", d)
    _check_matrix("pinv", s, square=attrs["hermitian"])
    return ((s[:-2] + (s[-1], s[-2]), d),)


# ---- kernels (numpy.linalg: LAPACK) ----

def _batch_element(shape: Shape, flat: int) -> str:
    return str(tuple(int(i) for i in np.unravel_index(flat, shape))) if shape else "()"


def _raise_failed(name: str, a: np.ndarray, bad: np.ndarray, what: str) -> None:
    first = int(np.flatnonzero(bad.reshape(-1))[0]) if bad.ndim else 0
    where = "" if a.ndim == 2 else f" at batch index {_batch_element(a.shape[:-2], first)}"
    raise LinAlgError(f"pyflame.{name}: the input matrix{where} (of shape "
                      f"{fmt_shape(a.shape)}) {what}")


def _c(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """C-contiguous, of the input's dtype, 0-d kept 0-d (ascontiguousarray
    would make it 1-d)."""
    return np.asarray(x, dtype=dtype, order="C")


def _solve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    try:
        return _c(np.linalg.solve(a, b), a.dtype)
    except np.linalg.LinAlgError:
        # which element: the one whose LU has a zero pivot (numpy does not say)
        bad = np.array([np.linalg.matrix_rank(m) < m.shape[-1] if m.size else False
                        for m in a.reshape(-1, *a.shape[-2:])]).reshape(a.shape[:-2])
        if not bad.any():
            bad = np.ones(a.shape[:-2], bool)
        _raise_failed("solve", a, bad, "is singular: A X = B has no unique solution "
                                       "(torch raises too)")
        raise  # unreachable


def _solve_triangular(a: np.ndarray, b: np.ndarray, upper: bool, unitriangular: bool
                      ) -> np.ndarray:
    """Substitution, vectorized over the batch and B's columns; a zero pivot
    gives inf/NaN, as torch (LAPACK's trtrs would stop instead)."""
    n = a.shape[-1]
    x = np.zeros(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:], a.dtype)
    rows = range(n - 1, -1, -1) if upper else range(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in rows:
            if upper:
                acc = b[..., i, :] - np.einsum("...j,...jk->...k", a[..., i, i + 1:],
                                               x[..., i + 1:, :])
            else:
                acc = b[..., i, :] - np.einsum("...j,...jk->...k", a[..., i, :i], x[..., :i, :])
            x[..., i, :] = acc if unitriangular else acc / a[..., i, i, None]
    return x


def _cholesky(a: np.ndarray) -> np.ndarray:
    try:
        return _c(np.linalg.cholesky(a), a.dtype)
    except np.linalg.LinAlgError:
        bad = np.array([_not_pd(m) for m in a.reshape(-1, *a.shape[-2:])]
                       ).reshape(a.shape[:-2])
        if not bad.any():
            bad = np.ones(a.shape[:-2], bool)
        _raise_failed("cholesky", a, bad, "is not positive-definite (torch raises "
                                          "torch.linalg.LinAlgError)")
        raise  # unreachable


def _not_pd(m: np.ndarray) -> bool:
    try:
        np.linalg.cholesky(m)
        return False
    except np.linalg.LinAlgError:
        return True


def _slogdet(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    sign, logabs = np.linalg.slogdet(a)
    return (_c(sign, a.dtype), _c(logabs, a.dtype))


def _det(a: np.ndarray) -> np.ndarray:
    return _c(np.linalg.det(a), a.dtype)


def _qr(a: np.ndarray, complete: bool) -> tuple[np.ndarray, np.ndarray]:
    q, r = np.linalg.qr(a, mode="complete" if complete else "reduced")
    return _c(q, a.dtype), _c(r, a.dtype)


def _eigh(a: np.ndarray, lower: bool) -> tuple[np.ndarray, np.ndarray]:
    w, v = np.linalg.eigh(a, UPLO="L" if lower else "U")
    return _c(w, a.dtype), _c(v, a.dtype)


def _svd(a: np.ndarray, full_matrices: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    return (_c(u, a.dtype), _c(s, a.dtype),
            _c(vh, a.dtype))


def _pinv(a: np.ndarray, atol: float, rtol: float, hermitian: bool) -> np.ndarray:
    """torch's rule: values <= max(atol, rtol * the largest) count as zero."""
    if a.size == 0:
        return np.zeros(a.shape[:-2] + (a.shape[-1], a.shape[-2]), a.dtype)
    if hermitian:
        w, q = np.linalg.eigh(a)
        mag = np.abs(w)
        cut = np.maximum(atol, rtol * mag.max(-1, keepdims=True))
        inv = np.where(mag > cut, 1 / np.where(mag > cut, w, 1), 0)
        return _c((q * inv[..., None, :]) @ np.swapaxes(q, -1, -2), a.dtype)
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    cut = np.maximum(atol, rtol * s.max(-1, keepdims=True)) if s.shape[-1] else s
    inv = np.where(s > cut, 1 / np.where(s > cut, s, 1), 0)
    return _c((np.swapaxes(vh, -1, -2) * inv[..., None, :]) @ np.swapaxes(u, -1, -2), a.dtype)


# Higham 2005 (Table 10.2): the [13/13] Pade coefficients and the largest 1-norm it
# is accurate for in double precision
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
           129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
           40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def _expm(a: np.ndarray) -> np.ndarray:
    """One matrix (float64): scale by 2^-s so that |A|_1 <= theta_13, the
    Pade approximant, then square s times."""
    n = a.shape[-1]
    norm = np.abs(a).sum(0).max() if n else 0.0
    if not np.isfinite(norm):
        return np.full_like(a, np.nan)
    s = max(0, int(np.ceil(np.log2(norm / _THETA13)))) if norm > 0 else 0
    a = a / 2.0 ** s
    ident = np.eye(n)
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    c = _PADE13
    u = a @ (a6 @ (c[13] * a6 + c[11] * a4 + c[9] * a2) + c[7] * a6 + c[5] * a4 + c[3] * a2
             + c[1] * ident)
    v = a6 @ (c[12] * a6 + c[10] * a4 + c[8] * a2) + c[6] * a6 + c[4] * a4 + c[2] * a2 \
        + c[0] * ident
    r = np.linalg.solve(v - u, v + u)
    for _ in range(s):
        r = r @ r
    return r


def _matrix_exp(a: np.ndarray) -> np.ndarray:
    flat = a.reshape(-1, *a.shape[-2:]).astype(np.float64)
    out = np.stack([_expm(m) for m in flat]) if flat.shape[0] else flat
    return _c(out.reshape(a.shape), a.dtype)


define(OpDef("solve", "decomp", _solve_rule("solve"), _solve, 2,
             doc="X with A X = B (A square, B [..., n, k], one batch shape)"))
define(OpDef("solve_triangular", "decomp", _solve_rule("solve_triangular"), _solve_triangular,
             2, {"upper": "bool", "unitriangular": "bool"},
             doc="X with A X = B for a triangular A (only its triangle is read)"))
define(OpDef("cholesky", "decomp", _square_rule("cholesky", 1), _cholesky, 1,
             doc="the lower Cholesky factor L of A = L L^T (reads A's lower triangle)"))
define(OpDef("slogdet", "decomp", _square_rule("slogdet", 2), _slogdet, 1, num_results=2,
             doc="(sign, log|det|) of square matrices"))
define(OpDef("det", "decomp", _square_rule("det", 0), _det, 1, doc="the determinant"))
define(OpDef("pinv", "decomp", _pinv_rule, _pinv, 1,
             {"atol": "float", "rtol": "float", "hermitian": "bool"},
             doc="the Moore-Penrose pseudo-inverse [..., n, m]"))
define(OpDef("matrix_exp", "decomp", _square_rule("matrix_exp", 1), _matrix_exp, 1,
             doc="the matrix exponential"))
define(OpDef("qr", "decomp", _qr_rule, _qr, 1, {"complete": "bool"}, num_results=2,
             doc="(Q, R) with A = Q R; Q [..., m, k], R [..., k, n], k = m if complete "
                 "else min(m, n)"))
define(OpDef("eigh", "decomp", _square_rule("eigh", 2), _eigh, 1, {"lower": "bool"},
             num_results=2, doc="(ascending eigenvalues, orthonormal eigenvectors as columns) "
                                "of a symmetric matrix given by one triangle"))
define(OpDef("svd", "decomp", _svd_rule, _svd, 1, {"full_matrices": "bool"}, num_results=3,
             doc="(U, S, Vh) with A = U diag(S) Vh, S descending"))


# ---- helpers for the rules (builder interface of dialects/ad.py) ----

def mT(b, v):
    """The transpose of the last two dims."""
    n = len(b.shape(v))
    return b.permute(v, perm=tuple(range(n - 2)) + (n - 1, n - 2))


def _masks(b, n: int):
    """(row index, column index) of an n x n matrix, as int32 iotas."""
    return (b.iota(shape=(n, n), dim=0, dtype=int32), b.iota(shape=(n, n), dim=1, dtype=int32))


def eye_like(b, n: int, like):
    i, j = _masks(b, n)
    return b.convert(b.eq(i, j), dtype=b.dtype(like))


def _tri_mask(b, n: int, like, upper: bool, k: int = 0):
    """1 where ``col - row >= k`` (upper) / ``row - col >= k`` (lower), else 0."""
    i, j = _masks(b, n)
    m = b.ge(b.sub(j, i), b.scalar(k, like=i)) if upper else b.ge(b.sub(i, j),
                                                                  b.scalar(k, like=i))
    return b.convert(m, dtype=b.dtype(like))


def tril(b, v, k: int = 0):
    return b.mul(v, _tri_mask(b, b.shape(v)[-1], v, upper=False, k=-k))


def triu(b, v, k: int = 0):
    return b.mul(v, _tri_mask(b, b.shape(v)[-1], v, upper=True, k=k))


def diagonal(b, v):
    """The diagonal of the last two dims (square): [..., n]."""
    n = b.shape(v)[-1]
    return b.sum(b.mul(v, eye_like(b, n, v)), dims=(len(b.shape(v)) - 1,), keepdim=False)


def diag_embed(b, d):
    """A vector [..., n] as diagonal matrices [..., n, n]."""
    n = b.shape(d)[-1]
    return b.mul(ad.reshape(b, d, (*b.shape(d), 1)), eye_like(b, n, d))


def _col(b, v):  # [..., n] -> [..., n, 1]
    return ad.reshape(b, v, (*b.shape(v), 1))


def _row(b, v):  # [..., n] -> [..., 1, n]
    s = b.shape(v)
    return ad.reshape(b, v, (*s[:-1], 1, s[-1]))


def _sym(b, v):
    return b.mul(b.add(v, mT(b, v)), b.scalar(0.5, like=v))


def _narrow(b, v, dim: int, size: int):
    s = b.shape(v)
    dim = dim % len(s)
    if s[dim] == size:
        return v
    limit = tuple(size if k == dim else d for k, d in enumerate(s))
    return b.slice(v, start=(0,) * len(s), limit=limit, stride=(1,) * len(s))


def _add(b, *vs):
    vs = [v for v in vs if v is not None]
    out = vs[0]
    for v in vs[1:]:
        out = b.add(out, v)
    return out


def _bcast_eye(b, like):
    """The identity with ``like``'s (square) shape."""
    return ad.broadcast(b, eye_like(b, b.shape(like)[-1], like), b.shape(like))


def _gap(b, lam):
    """E_ij = lam_j - lam_i with 1 on the diagonal, and the 0/1 off-diagonal mask."""
    n = b.shape(lam)[-1]
    eye = eye_like(b, n, lam)
    off = b.sub(b.scalar(1, like=lam), eye)
    return b.add(b.sub(_row(b, lam), _col(b, lam)), eye), off


# ---- solve: A X = B ----

def _solve_vjp(b, cts, inputs, outputs):
    (g,), (a, _), (x,) = cts, inputs, outputs
    gb = b.solve(mT(b, a), g)  # A^T gB = G
    return [b.neg(b.matmul(gb, mT(b, x))), gb]  # gA = -gB X^T


def _solve_jvp(b, tangents, inputs, outputs):
    (ta, tb), (a, _), (x,) = tangents, inputs, outputs
    rhs = _add(b, tb, None if ta is None else b.neg(b.matmul(ta, x)))
    return [b.solve(a, rhs)]  # A dX = dB - dA X


def _tri_of(b, v, upper: bool, unitriangular: bool):
    k = int(unitriangular)  # the strict triangle when the diagonal is ones
    return triu(b, v, k) if upper else tril(b, v, -k)


def _solve_triangular_vjp(b, cts, inputs, outputs, upper, unitriangular):
    (g,), (a, _), (x,) = cts, inputs, outputs
    gb = b.solve_triangular(mT(b, a), g, upper=not upper, unitriangular=unitriangular)
    ga = _tri_of(b, b.neg(b.matmul(gb, mT(b, x))), upper, unitriangular)
    return [ga, gb]


def _solve_triangular_jvp(b, tangents, inputs, outputs, upper, unitriangular):
    (ta, tb), (a, _), (x,) = tangents, inputs, outputs
    da = None if ta is None else _tri_of(b, ta, upper, unitriangular)
    rhs = _add(b, tb, None if da is None else b.neg(b.matmul(da, x)))
    return [b.solve_triangular(a, rhs, upper=upper, unitriangular=unitriangular)]


ad.defvjp("solve", _solve_vjp)
ad.defjvp("solve", _solve_jvp)
ad.defvjp("solve_triangular", _solve_triangular_vjp)
ad.defjvp("solve_triangular", _solve_triangular_jvp)


# ---- cholesky: A = L L^T ----

def _phi(b, v):
    """tril(v) with its diagonal halved."""
    half = b.mul(diag_embed(b, diagonal(b, v)), b.scalar(0.5, like=v))
    return b.sub(tril(b, v), half)


def _cholesky_vjp(b, cts, inputs, outputs):
    # gA = sym(L^{-T} phi(L^T gL) L^{-1})  (torch's cholesky_backward)
    (g,), (l,) = cts, outputs
    p = _phi(b, b.matmul(mT(b, l), g))
    lt = mT(b, l)
    y = b.solve_triangular(lt, p, upper=True, unitriangular=False)  # L^{-T} P
    ga = mT(b, b.solve_triangular(lt, mT(b, y), upper=True, unitriangular=False))  # ... L^{-1}
    return [_sym(b, ga)]


def _cholesky_jvp(b, tangents, inputs, outputs):
    # dL = L phi(L^{-1} dA L^{-T}) for the symmetrized dA
    (t,), (l,) = tangents, outputs
    y = b.solve_triangular(l, _sym(b, t), upper=False, unitriangular=False)  # L^{-1} dA
    z = mT(b, b.solve_triangular(l, mT(b, y), upper=False, unitriangular=False))  # .. L^{-T}
    return [b.matmul(l, _phi(b, z))]


ad.defvjp("cholesky", _cholesky_vjp)
ad.defjvp("cholesky", _cholesky_jvp)


# ---- determinants ----

def _slogdet_vjp(b, cts, inputs, outputs):
    # d log|det A| = tr(A^{-1} dA): gA = g A^{-T}; sign is piecewise constant
    (_, g), (a,) = cts, inputs
    if g is None:
        return [None]
    inv_t = b.solve(mT(b, a), _bcast_eye(b, a))
    return [b.mul(_col(b, _col(b, g)), inv_t)]


def _slogdet_jvp(b, tangents, inputs, outputs):
    (t,), (a,) = tangents, inputs
    return [None, diagonal_sum(b, b.solve(a, t))]


def diagonal_sum(b, v):
    """The trace of the last two dims."""
    return b.sum(diagonal(b, v), dims=(len(b.shape(v)) - 2,), keepdim=False)


def _cofactor(b, a):
    """The cofactor matrix det(A) A^{-T}, from A = U diag(s) Vh: det(U) det(Vh)
    U diag(prod_{j != i} s_j) Vh (exact and finite at singular matrices)."""
    n = b.shape(a)[-1]
    u, s, vh = b.svd(a, full_matrices=False)
    sign_u, _ = b.slogdet(u)
    sign_v, _ = b.slogdet(vh)
    eye = ad.broadcast(b, b.convert(eye_like(b, n, a), dtype=bool_), (*b.shape(s), n))
    others = b.where(eye, b.scalar(1, like=s), ad.broadcast(b, _row(b, s), (*b.shape(s), n)))
    excl = b.prod(others, dims=(len(b.shape(s)),), keepdim=False)  # prod_{j != i} s_j
    scale = b.mul(b.mul(sign_u, sign_v), b.scalar(1, like=s))
    return b.mul(_col(b, _col(b, scale)), b.matmul(b.mul(u, _row(b, excl)), vh))


def _det_vjp(b, cts, inputs, outputs):
    (g,), (a,) = cts, inputs
    return [b.mul(_col(b, _col(b, g)), _cofactor(b, a))]


def _det_jvp(b, tangents, inputs, outputs):
    (t,), (a,) = tangents, inputs
    r = len(b.shape(a))
    return [b.sum(b.mul(_cofactor(b, a), t), dims=(r - 2, r - 1), keepdim=False)]


ad.defvjp("slogdet", _slogdet_vjp)
ad.defjvp("slogdet", _slogdet_jvp)
ad.defvjp("det", _det_vjp)
ad.defjvp("det", _det_jvp)


# ---- pinv (torch's pinv_backward / pinv_jvp; valid where the rank is locally constant) ----

def _pinv_jvp(b, tangents, inputs, outputs, atol, rtol, hermitian):
    # dP = -P dA P + P P^T dA^T (I - A P) + (I - P A) dA^T P^T P
    (t,), (a,), (p,) = tangents, inputs, outputs
    pt, tt = mT(b, p), mT(b, t)
    first = b.neg(b.matmul(b.matmul(p, t), p))
    ppt = b.matmul(p, pt)
    x = b.matmul(tt, b.sub(_bcast_eye(b, b.matmul(a, p)), b.matmul(a, p)))
    y = b.matmul(b.sub(_bcast_eye(b, b.matmul(p, a)), b.matmul(p, a)), tt)
    return [b.add(b.add(first, b.matmul(ppt, x)), b.matmul(y, b.matmul(pt, p)))]


def _pinv_vjp(b, cts, inputs, outputs, atol, rtol, hermitian):
    # gA = -P^T G P^T + (I - A P) G^T P P^T + P^T P G^T (I - P A)
    (g,), (a,), (p,) = cts, inputs, outputs
    pt, gt = mT(b, p), mT(b, g)
    first = b.neg(b.matmul(b.matmul(pt, g), pt))
    ap, pa = b.matmul(a, p), b.matmul(p, a)
    second = b.matmul(b.matmul(b.sub(_bcast_eye(b, ap), ap), gt), b.matmul(p, pt))
    third = b.matmul(b.matmul(pt, p), b.matmul(gt, b.sub(_bcast_eye(b, pa), pa)))
    return [b.add(b.add(first, second), third)]


ad.defvjp("pinv", _pinv_vjp)
ad.defjvp("pinv", _pinv_jvp)


# ---- matrix_exp: the derivative of f(A) in direction E is the upper right block
# of f([[A, E], [0, A]]) (Mathias 1996); the VJP is that of A^T at G (torch's) ----

def _block_exp(b, a, e):
    n, r = b.shape(a)[-1], len(b.shape(a))
    top = b.concat(a, e, dim=r - 1)
    bottom = b.concat(ad.zeros(b, b.shape(a), a), a, dim=r - 1)
    big = b.matrix_exp(b.concat(top, bottom, dim=r - 2))
    s = b.shape(big)
    return b.slice(big, start=(0,) * (r - 1) + (n,), limit=(*s[:-2], n, 2 * n),
                   stride=(1,) * r)


def _matrix_exp_vjp(b, cts, inputs, outputs):
    (g,), (a,) = cts, inputs
    return [_block_exp(b, mT(b, a), g)]


def _matrix_exp_jvp(b, tangents, inputs, outputs):
    (t,), (a,) = tangents, inputs
    return [_block_exp(b, a, t)]


ad.defvjp("matrix_exp", _matrix_exp_vjp)
ad.defjvp("matrix_exp", _matrix_exp_jvp)


# ---- QR ----

def _r_inv_right(b, v, r):
    """v R^{-1} for an upper triangular square R: (R^{-T} v^T)^T."""
    return mT(b, b.solve_triangular(mT(b, r), mT(b, v), upper=False, unitriangular=False))


def _qr_tall_jvp(b, q, r, da):
    """A = Q R with m >= k (R square): X = Q^T dA R^{-1}, C = tril(X, -1) -
    tril(X, -1)^T (Q^T dQ, skew), dR = (X - C) R, dQ = dA R^{-1} - Q (X - C)."""
    dar = _r_inv_right(b, da, r)
    x = b.matmul(mT(b, q), dar)
    low = tril(b, x, -1)
    xc = b.sub(x, b.sub(low, mT(b, low)))
    return b.sub(dar, b.matmul(q, xc)), b.matmul(xc, r)


def _qr_tall_vjp(b, q, r, gq, gr):
    """The transpose of _qr_tall_jvp: W = gR R^T - Q^T gQ, N = triu(W) +
    triu(W, 1)^T, gA = (gQ + Q N) R^{-T}."""
    w = b.sub(b.matmul(gr, mT(b, r)), b.matmul(mT(b, q), gq))
    n = b.add(triu(b, w), mT(b, triu(b, w, 1)))
    lhs = b.add(gq, b.matmul(q, n))
    return mT(b, b.solve_triangular(r, mT(b, lhs), upper=True, unitriangular=False))


def _qr_check(b, a, complete: bool) -> tuple[int, int]:
    m, n = b.shape(a)[-2:]
    if complete and m > n:
        raise ShapeError("qr", f"is not differentiable with mode='complete' and more rows than "
                               f"columns (shape {fmt_shape(b.shape(a))}): the last {m - n} "
                               "columns of Q are not unique (torch raises too)")
    return m, n


def _qr_vjp(b, cts, inputs, outputs, complete):
    (gq, gr), (a,), (q, r) = cts, inputs, outputs
    m, n = _qr_check(b, a, complete)
    gq = ad.instantiate(b, gq, b.shape(q), q)
    gr = ad.instantiate(b, gr, b.shape(r), r)
    if m >= n:
        return [_qr_tall_vjp(b, q, r, gq, gr)]
    # wide: A = Q [X | Y], Q X = A1 (square QR), Y = Q^T A2
    a2 = _cols(b, a, m, n)
    gx, gy = _cols(b, gr, 0, m), _cols(b, gr, m, n)
    ga1 = _qr_tall_vjp(b, q, _cols(b, r, 0, m), b.add(gq, b.matmul(a2, mT(b, gy))), gx)
    return [b.concat(ga1, b.matmul(q, gy), dim=len(b.shape(a)) - 1)]


def _cols(b, v, lo: int, hi: int):
    s = b.shape(v)
    return b.slice(v, start=(0,) * (len(s) - 1) + (lo,), limit=(*s[:-1], hi),
                   stride=(1,) * len(s))


def _qr_jvp(b, tangents, inputs, outputs, complete):
    (t,), (a,), (q, r) = tangents, inputs, outputs
    m, n = _qr_check(b, a, complete)
    if m >= n:
        return list(_qr_tall_jvp(b, q, r, t))
    dq, dx = _qr_tall_jvp(b, q, _cols(b, r, 0, m), _cols(b, t, 0, m))
    dy = b.add(b.matmul(mT(b, dq), _cols(b, a, m, n)), b.matmul(mT(b, q), _cols(b, t, m, n)))
    return [dq, b.concat(dx, dy, dim=len(b.shape(a)) - 1)]


ad.defvjp("qr", _qr_vjp)
ad.defjvp("qr", _qr_jvp)


# ---- eigh: A = Q diag(L) Q^T ----

def _eigh_vjp(b, cts, inputs, outputs, lower):
    # gA = Q (diag(gL) + skew(Q^T gQ) / E) Q^T, E_ij = L_j - L_i (torch's)
    (gl, gq), (lam, q) = cts, outputs
    inner = None if gl is None else diag_embed(b, gl)
    if gq is not None:
        qg = b.matmul(mT(b, q), gq)
        skew = b.mul(b.sub(qg, mT(b, qg)), b.scalar(0.5, like=qg))
        e, off = _gap(b, lam)
        inner = _add(b, inner, b.mul(b.div(skew, e), off))
    if inner is None:
        return [None]
    return [b.matmul(b.matmul(q, inner), mT(b, q))]


def _eigh_jvp(b, tangents, inputs, outputs, lower):
    # P = Q^T sym(dA) Q: dL = diag(P), dQ = Q (P / E off the diagonal)
    (t,), (lam, q) = tangents, outputs
    p = b.matmul(b.matmul(mT(b, q), _sym(b, t)), q)
    e, off = _gap(b, lam)
    return [diagonal(b, p), b.matmul(q, b.mul(b.div(p, e), off))]


ad.defvjp("eigh", _eigh_vjp)
ad.defjvp("eigh", _eigh_jvp)


# ---- svd: A = U diag(S) Vh ----

def _svd_vjp(b, cts, inputs, outputs, full_matrices):
    (gu, gs, gvh), (a,), (u, s, vh) = cts, inputs, outputs
    m, n = b.shape(a)[-2:]
    k = min(m, n)
    if full_matrices:  # torch: only the first k columns of U / rows of Vh
        u, vh = _narrow(b, u, -1, k), _narrow(b, vh, -2, k)
        gu = None if gu is None else _narrow(b, gu, -1, k)
        gvh = None if gvh is None else _narrow(b, gvh, -2, k)
    if gu is None and gvh is None:
        if gs is None:
            return [None]
        return [b.matmul(b.mul(u, _row(b, gs)), vh)]
    v = mT(b, vh)
    gu = ad.instantiate(b, gu, b.shape(u), u)
    gv = mT(b, ad.instantiate(b, gvh, b.shape(vh), vh))
    uhgu = b.matmul(mT(b, u), gu)
    uhgu = b.sub(uhgu, mT(b, uhgu))  # skew(U^T gU)
    vhgv = b.matmul(vh, gv)
    vhgv = b.sub(vhgv, mT(b, vhgv))
    e, off = _gap(b, b.mul(s, s))
    inner = b.mul(b.div(b.add(b.mul(uhgu, _row(b, s)), b.mul(_col(b, s), vhgv)), e), off)
    if gs is not None:
        inner = b.add(inner, diag_embed(b, gs))
    if m > k:  # gA = [U inner + (I - U U^T) gU S^{-1}] Vh
        gus = b.div(gu, _row(b, s))
        left = b.add(b.matmul(u, inner), b.sub(gus, b.matmul(u, b.matmul(mT(b, u), gus))))
        return [b.matmul(left, vh)]
    if n > k:  # gA = U [inner Vh + S^{-1} gV^T (I - V Vh)]
        sgv = b.div(mT(b, gv), _col(b, s))
        right = b.add(b.matmul(inner, vh), b.sub(sgv, b.matmul(b.matmul(sgv, v), vh)))
        return [b.matmul(u, right)]
    return [b.matmul(b.matmul(u, inner), vh)]


def _svd_jvp(b, tangents, inputs, outputs, full_matrices):
    (t,), (a,), (u, s, vh) = tangents, inputs, outputs
    m, n = b.shape(a)[-2:]
    if full_matrices and m != n:
        raise ShapeError("svd", f"forward-mode derivative with full_matrices=True of a "
                                f"non-square matrix (shape {fmt_shape(b.shape(a))}) is not "
                                "defined: the extra singular vectors are not unique (torch "
                                "raises too)")
    if m < n:  # the wide case is the tall one of A^T = V S U^T
        dv, ds, du = _svd_tall_jvp(b, mT(b, vh), s, mT(b, u), mT(b, t))
    else:
        du, ds, dv = _svd_tall_jvp(b, u, s, vh, t)
    return [du, ds, mT(b, dv)]


def _svd_tall_jvp(b, u, s, vh, t):
    """m >= n = k (V square): dP = U^T dA V, dS = diag(dP),
    dU = U ((dP S + S dP^T) / E) + (I - U U^T) dA V S^{-1},
    dV = V ((S dP + dP^T S) / E), E_ij = s_j^2 - s_i^2 off the diagonal."""
    v = mT(b, vh)
    dav = b.matmul(t, v)
    dp = b.matmul(mT(b, u), dav)
    e, off = _gap(b, b.mul(s, s))
    srow, scol = _row(b, s), _col(b, s)
    om_u = b.mul(b.div(b.add(b.mul(dp, srow), b.mul(scol, mT(b, dp))), e), off)
    om_v = b.mul(b.div(b.add(b.mul(scol, dp), b.mul(mT(b, dp), srow)), e), off)
    du = b.matmul(u, om_u)
    if b.shape(u)[-2] > b.shape(u)[-1]:
        davs = b.div(dav, srow)
        du = b.add(du, b.sub(davs, b.matmul(u, b.matmul(mT(b, u), davs))))
    return du, diagonal(b, dp), b.matmul(v, om_v)


ad.defvjp("svd", _svd_vjp)
ad.defjvp("svd", _svd_jvp)


# ---- lu_factor: A = P L U (partial pivoting) ----

def _lu_factor_rule(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
    (s,), (d,) = shapes, dtypes
    _check_float("lu_factor", d)
    _check_matrix("lu_factor", s, square=False)
    *batch, m, n = s
    return ((s, d), (tuple(batch) + (min(m, n),), int32), (tuple(batch) + (m,), int32))


def _lu_factor(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Right-looking elimination, vectorized over the batch: the pivot is
    the first entry of largest magnitude in the column (LAPACK's idamax); a
    zero pivot leaves its column unscaled (getrf reports it in ``info``,
    torch returns the factors)."""
    *batch, m, n = a.shape
    k = min(m, n)
    count = int(np.prod(batch, dtype=np.int64))
    lu = np.array(a.reshape(count, m, n), dtype=a.dtype, copy=True)
    piv = np.zeros((count, k), np.int32)
    perm = np.tile(np.arange(m, dtype=np.int32), (count, 1))
    rows = np.arange(count)
    with np.errstate(divide="ignore", invalid="ignore"):
        for j in range(k):
            p = j + np.argmax(np.abs(lu[:, j:, j]), axis=1)
            piv[:, j] = p + 1
            lu[rows, j], lu[rows, p] = lu[rows, p], lu[rows, j].copy()
            perm[rows, j], perm[rows, p] = perm[rows, p], perm[rows, j].copy()
            pivot = lu[:, j, j:j + 1]
            col = lu[:, j + 1:, j]
            lu[:, j + 1:, j] = np.where(pivot != 0, col / np.where(pivot != 0, pivot, 1), col)
            lu[:, j + 1:, j + 1:] -= lu[:, j + 1:, j, None] * lu[:, j, None, j + 1:]
    return (_c(lu.reshape(a.shape), a.dtype), _c(piv.reshape(*batch, k), np.int32),
            _c(perm.reshape(*batch, m), np.int32))


define(OpDef("lu_factor", "decomp", _lu_factor_rule, _lu_factor, 1, num_results=3,
             doc="(LU, pivots, perm): A = P L U with partial pivoting; LU packs L (unit "
                 "lower, strict part) and U; pivots LAPACK's 1-based swaps, perm their "
                 "permutation (P[perm[j], j] = 1)"))


def _rect_mask(b, m: int, n: int, like, upper: bool, k: int = 0):
    """tril/triu's mask of an m x n matrix (1 where ``col - row >= k`` /
    ``row - col >= k``), in ``like``'s dtype."""
    i = b.iota(shape=(m, n), dim=0, dtype=int32)
    j = b.iota(shape=(m, n), dim=1, dtype=int32)
    d = b.sub(j, i) if upper else b.sub(i, j)
    return b.convert(b.ge(d, b.scalar(k, like=i)), dtype=b.dtype(like))


def _rtril(b, v, k: int = 0):
    """tril(v, -k) of a (possibly non-square) matrix: strict when k = 1."""
    m, n = b.shape(v)[-2:]
    return b.mul(v, _rect_mask(b, m, n, v, upper=False, k=k))


def _rtriu(b, v):
    m, n = b.shape(v)[-2:]
    return b.mul(v, _rect_mask(b, m, n, v, upper=True))


def _rows(b, v, lo: int, hi: int):
    s = b.shape(v)
    return b.slice(v, start=(0,) * (len(s) - 2) + (lo, 0), limit=(*s[:-2], hi, s[-1]),
                   stride=(1,) * len(s))


def lu_unpacked(b, lu):
    """(L [..., m, k] unit lower, U [..., k, n] upper) from the packed factors."""
    m, n = b.shape(lu)[-2:]
    k = min(m, n)
    low = _cols(b, lu, 0, k)
    eye = _rect_mask(b, m, k, lu, upper=True)  # the m x k identity: col - row >= 0 ...
    eye = b.mul(eye, _rect_mask(b, m, k, lu, upper=False))  # ... and row - col >= 0
    return b.add(_rtril(b, low, 1), eye), _rtriu(b, _rows(b, lu, 0, k))


def perm_matrix(b, perm, like):
    """P [..., m, m] with P[perm[j], j] = 1, in ``like``'s dtype."""
    m = b.shape(perm)[-1]
    s = (*b.shape(perm)[:-1], m, m)
    rows = ad.broadcast(b, b.iota(shape=(m, m), dim=0, dtype=int32), s)
    return b.convert(b.eq(ad.broadcast(b, _row(b, perm), s), rows), dtype=b.dtype(like))


def _lu_factor_vjp(b, cts, inputs, outputs):
    """torch's linalg_lu_backward with gL = tril(gLU, -1), gU = triu(gLU):
    m <= n: gA = P L^{-T} [tril(L^T gL - gU U^T, -1) U1^{-T} + triu(gU1) | gU2];
    m > n: gA = P [L1^{-T} triu(gU U^T - L^T gL) + gL1 ; gL2] U^{-T}."""
    (g, _, _), (a,), (lu, _, perm) = cts, inputs, outputs
    if g is None:
        return [None]
    m, n = b.shape(a)[-2:]
    k = min(m, n)
    l, u = lu_unpacked(b, lu)
    gl, gu = _rtril(b, _cols(b, g, 0, k), 1), _rtriu(b, _rows(b, g, 0, k))
    p = perm_matrix(b, perm, a)
    if m <= n:
        u1 = _cols(b, u, 0, k)
        x = _rtril(b, b.sub(b.matmul(mT(b, l), gl), b.matmul(gu, mT(b, u))), 1)
        x = mT(b, b.solve_triangular(u1, mT(b, x), upper=True, unitriangular=False))  # X U1^{-T}
        x = b.add(x, _cols(b, gu, 0, k))
        if n > k:
            x = b.concat(x, _cols(b, gu, k, n), dim=len(b.shape(a)) - 1)
        x = b.solve_triangular(mT(b, l), x, upper=True, unitriangular=True)
        return [b.matmul(p, x)]
    # tall: L = [L1; L2] (L1 k x k), U k x k
    l1 = _rows(b, l, 0, k)
    gl_full = _rtril(b, g, 1)  # the whole m x k strict lower part
    x = _rtriu(b, b.sub(b.matmul(gu, mT(b, u)), b.matmul(mT(b, l), gl_full)))
    x = b.solve_triangular(mT(b, l1), x, upper=True, unitriangular=True)
    x = b.add(x, _rows(b, gl_full, 0, k))
    x = b.concat(x, _rows(b, gl_full, k, m), dim=len(b.shape(a)) - 2)
    x = mT(b, b.solve_triangular(u, mT(b, x), upper=True, unitriangular=False))  # X U^{-T}
    return [b.matmul(p, x)]


def _lu_factor_jvp(b, tangents, inputs, outputs):
    """P^T dA = dL U + L dU. m <= n: Z = L^{-1} (P^T dA)_1 U1^{-1}, dL =
    L tril(Z, -1), dU1 = triu(Z) U1, dU2 = L^{-1} (P^T dA)_2 - L^{-1} dL U2.
    m > n: Z = L1^{-1} (P^T dA)_1 U^{-1}, dL1 = L1 tril(Z, -1), dU = triu(Z) U,
    dL2 = ((P^T dA)_2 - L2 dU) U^{-1}. dLU = tril(dL, -1) + dU packed."""
    (t,), (a,), (lu, _, perm) = tangents, inputs, outputs
    m, n = b.shape(a)[-2:]
    k = min(m, n)
    l, u = lu_unpacked(b, lu)
    pta = b.matmul(mT(b, perm_matrix(b, perm, a)), t)
    r = len(b.shape(a))
    if m <= n:
        u1 = _cols(b, u, 0, k)
        y = b.solve_triangular(l, pta, upper=False, unitriangular=True)  # L^{-1} P^T dA
        z = _r_inv_right(b, _cols(b, y, 0, k), u1)
        dl_strict = _rtril(b, z, 1)  # L^{-1} dL (strictly lower)
        dl = b.matmul(l, dl_strict)
        dlu = b.add(_rtril(b, dl, 1), b.matmul(_rtriu(b, z), u1))  # the first k columns
        if n > k:
            du2 = b.sub(_cols(b, y, k, n), b.matmul(dl_strict, _cols(b, u, k, n)))
            dlu = b.concat(dlu, du2, dim=r - 1)
        return [dlu, None, None]
    l1, l2 = _rows(b, l, 0, k), _rows(b, l, k, m)
    y1 = b.solve_triangular(l1, _rows(b, pta, 0, k), upper=False, unitriangular=True)
    z = _r_inv_right(b, y1, u)
    dl1 = b.matmul(l1, _rtril(b, z, 1))
    du = b.matmul(_rtriu(b, z), u)
    dl2 = _r_inv_right(b, b.sub(_rows(b, pta, k, m), b.matmul(l2, du)), u)
    dlu = b.concat(b.add(_rtril(b, dl1, 1), du), dl2, dim=r - 2)
    return [dlu, None, None]


ad.defvjp("lu_factor", _lu_factor_vjp)
ad.defjvp("lu_factor", _lu_factor_jvp)
# PyTorch saves their results (linalg_cholesky_ex's L, linalg_det's, linalg_solve's and
# linalg_solve_triangular's result; slogdet's sign and logabsdet, eigh's L and V,
# qr's Q and R, svd's U, S and Vh, lu_factor's LU and pivots)
ad.saves_results("cholesky", "det", "solve", "solve_triangular")
ad.reads_no_input_values("cholesky", "eigh", "qr", "svd")  # (torch saves only results)
ad.saves_results("slogdet", "eigh", "qr", "lu_factor", outputs=(0, 1))
ad.saves_results("svd", outputs=(0, 1, 2))
