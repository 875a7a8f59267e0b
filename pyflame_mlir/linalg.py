"""``pf.linalg``: PyTorch's ``torch.linalg`` names.

Norms and products are composites of the op API (``ops.py``,
``composites2.py``). The decompositions and solvers record the primitives of
``dialects/decomp.py`` (``solve solve_triangular cholesky slogdet det qr eigh
svd``: numpy.linalg kernels, VJP and JVP rules next to them); the rest is
composed from those: ``inv`` is ``solve(A, I)``, ``eigvalsh``/``svdvals`` drop
the vectors, ``pinv`` and ``lstsq`` come from the SVD, ``matrix_rank`` counts
singular values. Batch dims lead; inputs are float32 or float64 (integers and
half precision raise, as torch; ``matrix_exp`` and ``lu_unpack`` take half
precision too, as torch's kernels do).

Under ``pf.autocast`` each function follows torch 2.13's CPU policy, measured
op by op (``test_amp_linalg.py``): the solvers and decompositions torch lists
as float32 ops cast half-precision inputs to float32; ``vecdot`` runs in the
autocast dtype; the others (``det slogdet matrix_exp solve_triangular pinv
lu_factor lu lu_solve``...) keep their inputs' dtypes.

The top-level aliases torch has (``torch.inverse det logdet slogdet cholesky
cholesky_solve cholesky_inverse triangular_solve``) and the Tensor methods
are set at the end of this module.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np

from . import saved
from .composites import cross as _cross
from .composites2 import matrix_power, multi_dot
from .core import Tensor, detach, record
from .creation import eye, zeros
from .dialects import OPS
from .dialects.decomp import LinAlgError
from .dialects.dtypes import float32, float64, int32, int64
from .dialects.opdef import ShapeError, broadcast_shapes
from .indexing import diagonal as _diagonal
from .indexing import movedim
from .indexing import take_along_dim as _take_along_dim
from .ops import (
    ELEMENTWISE,
    as_tensor_arg,
    autocast_policy,
    broadcast_to,
    cat,
    convert,
    matmul,
    reshape,
    vector_norm,
    where,
)
from .ops import linalg_norm as _linalg_norm
from .ops import matrix_norm as _matrix_norm
from .ops import sum as _sum
from .reductions import cumprod

log = ELEMENTWISE["log"]

SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])
QRResult = namedtuple("QRResult", ["Q", "R"])
EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])
LstsqResult = namedtuple("LstsqResult", ["solution", "residuals", "rank", "singular_values"])
InvExResult = namedtuple("InvExResult", ["inverse", "info"])
CholeskyExResult = namedtuple("CholeskyExResult", ["L", "info"])
TriangularSolveResult = namedtuple("TriangularSolveResult", ["solution", "cloned_coefficient"])


def cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:  # noqa: A002
    """``torch.linalg.cross``: the cross product along ``dim`` (size 3), broadcast."""
    return _cross(input, other, dim=dim)


@autocast_policy("lower")
def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """The dot product along ``dim`` (broadcast)."""
    return (x * y).sum(dim)


# ---- norms that need singular values ('nuc', 2, -2 over two dims) ----

_SPECTRAL = ("nuc", 2, -2)


def matrix_norm(A: Any, ord: Any = "fro", dim: tuple[int, int] = (-2, -1),  # noqa: A002, N803
                keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """``torch.linalg.matrix_norm``: 'fro', 'nuc', +-1, +-2, +-inf; 'nuc' and
    +-2 from the singular values (their gradients are svdvals')."""
    if not (isinstance(ord, str | int | float) and ord in _SPECTRAL):
        return _matrix_norm(A, ord, dim, keepdim, dtype=dtype)
    t = as_tensor_arg(A) if dtype is None else convert(A, dtype)
    if t.ndim < 2:
        raise ShapeError("linalg.matrix_norm", f"expects at least 2 dimensions, got shape "
                                               f"{list(t.shape)}")
    d0, d1 = (d % t.ndim for d in dim)
    if d0 == d1:
        raise ShapeError("linalg.matrix_norm", f"dims must be different, got {list(dim)}")
    s = svdvals(movedim(t, (d0, d1), (-2, -1)))
    r = s.sum(-1) if ord == "nuc" else s.amax(-1) if ord == 2 else s.amin(-1)
    if keepdim:
        for d in sorted((d0, d1)):
            r = r.unsqueeze(d)
    return r


def norm(A: Any, ord: Any = None, dim: Any = None, keepdim: bool = False, *,  # noqa: A002, N803
         dtype: Any = None) -> Tensor:
    """``torch.linalg.norm``: a vector norm over one dim (or all, when ord is
    None), a matrix norm over two (the spectral ones through ``matrix_norm``)."""
    t = as_tensor_arg(A)
    two = (dim is None and t.ndim == 2) or (isinstance(dim, tuple | list) and len(dim) == 2)
    if ord is not None and two and isinstance(ord, str | int | float) and ord in _SPECTRAL:
        return matrix_norm(t, ord, (-2, -1) if dim is None else tuple(dim), keepdim,
                           dtype=dtype)
    return _linalg_norm(A, ord, dim, keepdim, dtype=dtype)


# ---- argument checks ----

def _matrix(name: str, a: Any, square: bool = True, half: bool = False) -> Tensor:
    t = as_tensor_arg(a)
    if half and t.dtype.is_floating_point:
        pass  # torch has half-precision kernels for this one
    elif t.dtype is not float32 and t.dtype is not float64:
        raise ShapeError(name, f"expects a float32 or float64 tensor, got {t.dtype.name} "
                               "(torch: a floating point tensor; half precision has no kernel)")
    if t.ndim < 2:
        raise ShapeError(name, f"expects a matrix or a batch of matrices ([..., m, n]), got "
                               f"shape {list(t.shape)}")
    if square and t.shape[-1] != t.shape[-2]:
        raise ShapeError(name, f"expects square matrices, got shape {list(t.shape)}")
    return t


def _mT(t: Tensor) -> Tensor:
    return t.transpose(-2, -1)


def _batched(name: str, a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """A and B with one broadcast batch shape (B a matrix [..., n, k])."""
    batch = broadcast_shapes(name, [a.shape[:-2], b.shape[:-2]])
    if a.shape[:-2] != batch:
        a = broadcast_to(a, batch + a.shape[-2:])
    if b.shape[:-2] != batch:
        b = broadcast_to(b, batch + b.shape[-2:])
    return a, b


def _rhs(name: str, a: Tensor, b: Any) -> Tensor:
    t = as_tensor_arg(b)
    if t.dtype is not a.dtype:
        raise ShapeError(name, f"A and B must have one dtype, got {a.dtype.name} and "
                               f"{t.dtype.name}")
    return t


# ---- solvers ----

@autocast_policy("fp32")
def solve(A: Any, B: Any, *, left: bool = True) -> Tensor:  # noqa: N803  (torch's names)
    """``torch.linalg.solve``: X with ``A X = B`` (``X A = B`` if not ``left``).
    B is a batch of vectors when it is 1-D or has A's shape without the last
    dim (torch's rule); batch dims broadcast. A singular A raises
    ``LinAlgError`` when the result is computed. Checked by autograd as
    torch's one op, which saves A and the result (not B)."""
    first = saved.start()
    return saved.composite(_solve(A, B, left), first, (A,) if isinstance(A, Tensor) else (),
                           True, "linalg.solve")


def _solve(A: Any, B: Any, left: bool) -> Tensor:  # noqa: N803
    a = _matrix("linalg.solve", A)
    b = _rhs("linalg.solve", a, B)
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    if vector:
        b = reshape(b, b.shape + (1,))
    if b.ndim < 2:
        raise ShapeError("linalg.solve", f"B of shape {list(b.shape)} is neither a vector nor "
                                         "a matrix")
    if not left:
        if vector:
            raise ShapeError("linalg.solve", "left=False expects B to be a matrix")
        return _mT(_solve(_mT(a), _mT(b), True))
    if b.shape[-2] != a.shape[-1]:
        raise ShapeError("linalg.solve", f"cannot solve A X = B for A of shape {list(a.shape)} "
                                         f"and B of shape {list(as_tensor_arg(B).shape)}")
    a, b = _batched("linalg.solve", a, b)
    x = record(OPS["solve"], (a, b), {})
    return reshape(x, x.shape[:-1]) if vector else x


@autocast_policy("none")
def solve_ex(A: Any, B: Any, *, left: bool = True, check_errors: bool = False
             ) -> tuple[Tensor, Tensor]:
    """``torch.linalg.solve_ex``: (result, info). A singular A always raises
    here (ours never returns a failed factorization); info is zeros."""
    del check_errors
    x = solve(A, B, left=left)
    a = as_tensor_arg(A)
    return namedtuple("SolveExResult", ["result", "info"])(x, zeros(a.shape[:-2], dtype=int32))


def solve_triangular(A: Any, B: Any, *, upper: bool, left: bool = True,  # noqa: N803
                     unitriangular: bool = False) -> Tensor:
    """``torch.linalg.solve_triangular``: X with ``A X = B`` (``X A = B`` if
    not ``left``) for triangular A (only its ``upper`` or lower triangle is
    read; with ``unitriangular`` its diagonal is taken as ones). B is a matrix;
    batch dims broadcast. A zero on the diagonal gives inf/NaN, as torch."""
    a = _matrix("linalg.solve_triangular", A)
    b = _rhs("linalg.solve_triangular", a, B)
    if b.ndim < 2:
        raise ShapeError("linalg.solve_triangular", f"B must be a matrix or a batch of "
                                                    f"matrices, got shape {list(b.shape)}")
    if not left:
        return _mT(solve_triangular(_mT(a), _mT(b), upper=not upper, unitriangular=unitriangular))
    a, b = _batched("linalg.solve_triangular", a, b)
    return record(OPS["solve_triangular"], (a, b), {"upper": bool(upper),
                                                    "unitriangular": bool(unitriangular)})


@autocast_policy("fp32")
def inv(A: Any) -> Tensor:  # noqa: N803
    """``torch.linalg.inv``: ``solve(A, I)`` (a singular A raises ``LinAlgError``)."""
    a = _matrix("linalg.inv", A)
    first = saved.start()  # (PyTorch's linalg.inv saves its result only: ``saved``)
    ident = broadcast_to(eye(a.shape[-1], dtype=a.dtype), a.shape)
    return saved.composite(record(OPS["solve"], (a, ident), {}), first, result=True,
                           op="linalg.inv")


@autocast_policy("fp32")
def inv_ex(A: Any, *, check_errors: bool = False) -> tuple[Tensor, Tensor]:  # noqa: N803
    """``torch.linalg.inv_ex``: (inverse, info); a singular A always raises
    here (ours never returns a failed factorization), so info is zeros."""
    del check_errors
    x = inv(A)
    return InvExResult(x, zeros(x.shape[:-2], dtype=int32))


@autocast_policy("fp32")
def cholesky(A: Any, *, upper: bool = False) -> Tensor:  # noqa: N803
    """``torch.linalg.cholesky``: L with ``A = L L^T`` (``U^T U`` if ``upper``),
    from A's lower triangle. A matrix that is not positive definite raises
    ``LinAlgError`` when the result is computed."""
    a = _matrix("linalg.cholesky", A)
    lower = record(OPS["cholesky"], (a,), {})
    return _mT(lower) if upper else lower


@autocast_policy("fp32")
def cholesky_ex(A: Any, *, upper: bool = False, check_errors: bool = False  # noqa: N803
                ) -> tuple[Tensor, Tensor]:
    """``torch.linalg.cholesky_ex``: (L, info); a failure always raises here."""
    del check_errors
    factor = cholesky(A, upper=upper)
    return CholeskyExResult(factor, zeros(factor.shape[:-2], dtype=int32))


# ---- determinants ----

def det(A: Any) -> Tensor:  # noqa: N803
    """``torch.linalg.det``; its gradient is the cofactor matrix, finite at
    singular matrices (as torch's)."""
    return record(OPS["det"], (_matrix("linalg.det", A),), {})


def slogdet(A: Any) -> SlogdetResult:  # noqa: N803
    """``torch.linalg.slogdet``: (sign, logabsdet); sign 0 and logabsdet -inf
    for a singular matrix."""
    sign, logabsdet = record(OPS["slogdet"], (_matrix("linalg.slogdet", A),), {})
    return SlogdetResult(sign, logabsdet)


def logdet(A: Any) -> Tensor:  # noqa: N803
    """``torch.logdet``: log(det A): NaN for a negative determinant, -inf at 0."""
    sign, logabsdet = slogdet(A)
    nan = where(sign < 0, float("nan"), 0.0)
    return where(sign == 0, float("-inf"), logabsdet + convert(nan, logabsdet.dtype))


# ---- decompositions ----

@autocast_policy("fp32")
def qr(A: Any, mode: str = "reduced") -> QRResult:  # noqa: N803
    """``torch.linalg.qr``: ``mode`` 'reduced', 'complete' or 'r' (Q is then an
    empty tensor, as torch's). Q's columns are unique up to sign: numpy's
    and torch's LAPACK (geqrf) give the same ones."""
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"linalg.qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    a = _matrix("linalg.qr", A, square=False)
    q, r = record(OPS["qr"], (a,), {"complete": mode == "complete"})
    if mode == "r":
        return QRResult(zeros(0, dtype=a.dtype), r)
    return QRResult(q, r)


def _uplo(name: str, UPLO: str) -> bool:  # noqa: N803
    if UPLO not in ("L", "U"):
        raise ValueError(f"{name}: UPLO must be 'L' or 'U', got {UPLO!r}")
    return UPLO == "L"


@autocast_policy("fp32")
def eigh(A: Any, UPLO: str = "L") -> EighResult:  # noqa: N803
    """``torch.linalg.eigh``: ascending eigenvalues and orthonormal eigenvectors
    (columns, each unique up to sign) of the symmetric matrix given by A's
    ``UPLO`` triangle. Gradients are symmetric; with a cotangent on the
    eigenvectors they are inf/NaN at repeated eigenvalues, as torch's."""
    a = _matrix("linalg.eigh", A)
    values, vectors = record(OPS["eigh"], (a,), {"lower": _uplo("linalg.eigh", UPLO)})
    return EighResult(values, vectors)


@autocast_policy("fp32")
def eigvalsh(A: Any, UPLO: str = "L") -> Tensor:  # noqa: N803
    """``torch.linalg.eigvalsh``: the eigenvalues of ``eigh`` (well-defined
    gradients at repeated eigenvalues too)."""
    return eigh(A, UPLO).eigenvalues


@autocast_policy("fp32")
def svd(A: Any, full_matrices: bool = True, *, driver: str | None = None  # noqa: N803
        ) -> SVDResult:
    """``torch.linalg.svd``: (U, S, Vh), S descending; singular vectors are
    unique up to sign. Gradients through U/Vh are inf/NaN at repeated singular
    values (torch's too); with ``full_matrices`` and a non-square A, the VJP
    uses the first min(m, n) columns of U / rows of Vh only (torch's)."""
    if driver is not None:
        raise ValueError("linalg.svd: driver is a CUDA option (cuSOLVER); on CPU it must be None")
    a = _matrix("linalg.svd", A, square=False)
    u, s, vh = record(OPS["svd"], (a,), {"full_matrices": bool(full_matrices)})
    return SVDResult(u, s, vh)


@autocast_policy("fp32")
def svdvals(A: Any, *, driver: str | None = None) -> Tensor:  # noqa: N803
    """``torch.linalg.svdvals``: S of ``svd`` (well-defined gradients at
    repeated singular values too)."""
    return svd(A, full_matrices=False, driver=driver).S


def _tolerances(name: str, m: int, n: int, dt: Any, atol: Any, rtol: Any
                ) -> tuple[float, float]:
    """torch's (atol, rtol): rtol = eps * max(m, n) when neither is given, 0
    when only atol is."""
    for v in (atol, rtol):
        if isinstance(v, Tensor):
            raise ShapeError(name, "atol/rtol as tensors are not supported: pass floats")
    if rtol is None:
        rtol = float(np.finfo(dt.np).eps) * max(m, n) if atol is None or atol <= 0 else 0.0
    return (0.0 if atol is None else float(atol)), float(rtol)


def pinv(A: Any, *, atol: Any = None, rtol: Any = None, hermitian: bool = False  # noqa: N803
         ) -> Tensor:
    """``torch.linalg.pinv``: singular values (|eigenvalues| of the symmetric
    matrix given by A's lower triangle if ``hermitian``) <= max(atol, rtol *
    the largest) count as zero. Gradients: torch's closed form (exact where
    the rank does not change)."""
    a = _matrix("linalg.pinv", A, square=hermitian)
    atol_f, rtol_f = _tolerances("linalg.pinv", *a.shape[-2:], a.dtype, atol, rtol)
    return record(OPS["pinv"], (a,), {"atol": atol_f, "rtol": rtol_f,
                                      "hermitian": bool(hermitian)})


@autocast_policy("fp32")
def matrix_rank(A: Any, *, atol: Any = None, rtol: Any = None,  # noqa: N803
                hermitian: bool = False) -> Tensor:
    """``torch.linalg.matrix_rank``: singular values (|eigenvalues| if
    ``hermitian``) > max(atol, rtol * the largest), counted (int64)."""
    a = _matrix("linalg.matrix_rank", A, square=hermitian)
    atol_f, rtol_f = _tolerances("linalg.matrix_rank", *a.shape[-2:], a.dtype, atol, rtol)
    s = eigvalsh(a).abs() if hermitian else svdvals(a)
    if not s.shape[-1]:
        return zeros(*s.shape[:-1], dtype=int64)
    cut = where(s.amax(-1, keepdim=True) * rtol_f > atol_f, s.amax(-1, keepdim=True) * rtol_f,
                atol_f)
    return _sum(convert(s > cut, int64), -1)


@autocast_policy("fp32")
def lstsq(A: Any, B: Any, rcond: float | None = None, *, driver: str | None = None  # noqa: N803
          ) -> LstsqResult:
    """``torch.linalg.lstsq``: the minimum-norm least-squares solution
    ``pinv(A) B`` (singular values <= rcond * the largest dropped; rcond = eps
    * max(m, n) by default), whose gradient is torch's (through pinv's). The
    other results follow the driver as torch's CPU drivers fill them:
    ``gelsy`` (the default) the rank; ``gels`` the residuals; ``gelsd`` and
    ``gelss`` the residuals, the rank and the singular values. Residuals (the
    squared column norms of A X - B) are computed when m > n, also for a
    rank-deficient A (torch leaves them empty there); otherwise empty."""
    driver = "gelsy" if driver is None else driver
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise ValueError(f"linalg.lstsq: driver must be one of gels, gelsy, gelsd, gelss, got "
                         f"{driver!r}")
    a = _matrix("linalg.lstsq", A, square=False)
    b = _rhs("linalg.lstsq", a, B)
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    if vector:
        b = reshape(b, b.shape + (1,))
    if b.ndim < 2 or b.shape[-2] != a.shape[-2]:
        raise ShapeError("linalg.lstsq", f"B of shape {list(as_tensor_arg(B).shape)} must have "
                                         f"{a.shape[-2]} rows (A is {list(a.shape)})")
    m, n = a.shape[-2:]
    rtol = None if rcond is None or rcond < 0 else rcond
    x = matmul(pinv(a, rtol=rtol), b)
    empty = zeros(0, dtype=a.dtype)
    residuals = empty
    if m > n and driver != "gelsy":
        residuals = ((matmul(a, x) - b) ** 2).sum(-2)
        if vector:
            residuals = reshape(residuals, residuals.shape[:-1])
    if vector:
        x = reshape(x, x.shape[:-1])
    rank = matrix_rank(a, rtol=rtol) if driver != "gels" else zeros(0, dtype=int64)
    values = svdvals(a) if driver in ("gelsd", "gelss") else empty
    return LstsqResult(x, residuals, rank, values)


def matrix_exp(A: Any) -> Tensor:  # noqa: N803
    """``torch.linalg.matrix_exp``: scaling and squaring with a [13/13] Pade
    approximant (float64 inside), as torch; a non-finite input gives NaN."""
    return record(OPS["matrix_exp"], (_matrix("linalg.matrix_exp", A, half=True),), {})


# ---- composites of the above ----

def diagonal(A: Any, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:  # noqa: N803
    """``torch.linalg.diagonal``: ``torch.diagonal`` with the last two dims by default."""
    return _diagonal(A, offset, dim1, dim2)


def vander(x: Any, *, N: int | None = None) -> Tensor:  # noqa: N803
    """``torch.linalg.vander``: columns x^0 .. x^(N-1), as a running product
    (torch's, so its gradient is torch's)."""
    t = as_tensor_arg(x)
    if t.ndim < 1:
        raise ShapeError("linalg.vander", "expects a tensor of rank >= 1, got a 0-d tensor")
    n = t.shape[-1] if N is None else N
    if n < 0:
        raise ShapeError("linalg.vander", f"N must be >= 0, got {n}")
    ones = broadcast_to(convert(1, t.dtype), t.shape + (min(n, 1),))
    if n <= 1:
        return ones
    powers = cumprod(broadcast_to(t.unsqueeze(-1), t.shape + (n - 1,)), -1)

    return cat([ones, powers], -1)


@autocast_policy("fp32")
def cond(A: Any, p: Any = None) -> Tensor:  # noqa: N803
    """``torch.linalg.cond``: s_max / s_min for p None, 2 (s_min / s_max for
    -2), else ``norm(A, p) * norm(inv(A), p)`` (square A; a singular one
    raises ``LinAlgError`` there, where torch returns inf)."""
    if p in (None, 2, -2):
        s = svdvals(_matrix("linalg.cond", A, square=False))
        hi, lo = s[..., 0], s[..., -1]
        return hi / lo if p != -2 else lo / hi
    a = _matrix("linalg.cond", A)
    return matrix_norm(a, p) * matrix_norm(inv(a), p)


@autocast_policy("fp32")
def tensorinv(A: Any, ind: int = 2) -> Tensor:  # noqa: N803
    """``torch.linalg.tensorinv``: the inverse of A read as a matrix
    prod(shape[:ind]) x prod(shape[ind:])."""
    t = as_tensor_arg(A)
    if ind <= 0:
        raise ShapeError("linalg.tensorinv", f"ind must be > 0, got {ind}")
    rows, cols = t.shape[:ind], t.shape[ind:]
    m = inv(reshape(t, (int(np.prod(rows)), int(np.prod(cols)))))
    return reshape(m, cols + rows)


@autocast_policy("fp32")
def tensorsolve(A: Any, B: Any, dims: Any = None) -> Tensor:  # noqa: N803
    """``torch.linalg.tensorsolve``: X with ``tensordot(A, X, X.ndim) = B``."""
    t, b = as_tensor_arg(A), as_tensor_arg(B)
    if dims is not None:
        dims = [d % t.ndim for d in dims]
        t = movedim(t, dims, list(range(t.ndim - len(dims), t.ndim)))
    rest = t.shape[b.ndim:]
    x = solve(reshape(t, (b.numel(), int(np.prod(rest)))), reshape(b, (b.numel(),)))
    return reshape(x, rest)


# ---- LU: A = P L U with partial pivoting (the ``lu_factor`` primitive) ----

LUFactorResult = namedtuple("LUFactorResult", ["LU", "pivots"])
LUFactorExResult = namedtuple("LUFactorExResult", ["LU", "pivots", "info"])
LUResult = namedtuple("LUResult", ["P", "L", "U"])
LUUnpackResult = namedtuple("LUUnpackResult", ["P", "L", "U"])


def _no_unpivoted(name: str, pivot: bool) -> None:
    if not pivot:
        raise RuntimeError(f"{name}: LU without pivoting is not implemented on the CPU "
                           "(torch raises the same; pyflame has no CUDA device)")


def _lu_record(name: str, A: Any) -> tuple[Tensor, Tensor, Tensor]:  # noqa: N803
    return record(OPS["lu_factor"], (_matrix(name, A, square=False),), {})


def lu_factor(A: Any, *, pivot: bool = True) -> LUFactorResult:  # noqa: N803
    """``torch.linalg.lu_factor``: (LU, pivots) of ``A = P L U``; LU packs L
    (unit lower, its diagonal implied) and U, pivots are LAPACK's 1-based row
    swaps (int32). A singular A is factored (a zero pivot), as torch; any
    ``[..., m, n]``."""
    _no_unpivoted("linalg.lu_factor", pivot)
    lu_, piv, _ = _lu_record("linalg.lu_factor", A)
    return LUFactorResult(lu_, piv)


def lu_factor_ex(A: Any, *, pivot: bool = True, check_errors: bool = False  # noqa: N803
                 ) -> LUFactorExResult:
    """``torch.linalg.lu_factor_ex``: (LU, pivots, info); info is LAPACK's: the
    1-based index of the first zero on U's diagonal, 0 if none."""
    _no_unpivoted("linalg.lu_factor_ex", pivot)
    lu_, piv, _ = _lu_record("linalg.lu_factor_ex", A)
    k = min(lu_.shape[-2:])
    diag = _diagonal(lu_[..., :k, :k], dim1=-2, dim2=-1) if k else zeros(
        lu_.shape[:-2] + (0,), dtype=lu_.dtype)
    zero = diag == 0
    first = where(zero, convert(Tensor._leaf(np.arange(1, k + 1, dtype=np.int32)), int32),
                  k + 1)
    info = first.amin(-1) if k else zeros(lu_.shape[:-2], dtype=int32)
    info = where(info == k + 1, 0, info) if k else info
    if check_errors and bool((info != 0).any()):
        raise LinAlgError(f"linalg.lu_factor_ex: U[{int(info.max()) - 1}, "
                          f"{int(info.max()) - 1}] is zero, singular U.")
    return LUFactorExResult(lu_, piv, convert(info, int32))


def _perm_matrix(perm: Tensor, dt: Any) -> Tensor:
    """P [..., m, m] with ``P[perm[j], j] = 1``: piecewise constant, so it does
    not require grad (torch's P does not)."""
    m = perm.shape[-1]
    rows = Tensor._leaf(np.arange(m, dtype=np.int32).reshape(m, 1))
    return convert(reshape(detach(perm), perm.shape[:-1] + (1, m)) == rows, dt)


def _unpack(lu_: Tensor) -> tuple[Tensor, Tensor]:
    """(L [..., m, k] unit lower, U [..., k, n] upper) from packed factors."""
    m, n = lu_.shape[-2:]
    k = min(m, n)
    low = lu_[..., :, :k].tril(-1) + eye(m, k, dtype=lu_.dtype)
    return low, lu_[..., :k, :].triu()


def _perm_from_pivots(name: str, pivots: Any, m: int) -> Tensor:
    """The permutation that LAPACK's 1-based row swaps compose (applied in
    order: row i with row pivots[i]), as int64 [..., m]: one vectorized step per
    swap (the swaps are sequential)."""
    piv = as_tensor_arg(pivots)
    if piv.dtype is not int32 and piv.dtype is not int64:
        raise ShapeError(name, f"pivots must be an int32 tensor, got {piv.dtype.name}")
    k = piv.shape[-1] if piv.ndim else 0
    if piv.ndim < 1 or k > m:
        raise ShapeError(name, f"pivots of shape {list(piv.shape)} do not fit a factorization "
                               f"with {m} rows (expected [..., min(m, n)])")
    ar = Tensor._leaf(np.arange(m, dtype=np.int64))
    perm = broadcast_to(ar, piv.shape[:-1] + (m,))
    target = convert(piv, int64) - 1
    for i in range(k):
        pi = target[..., i:i + 1]
        vi, vp = perm[..., i:i + 1], _take_along_dim(perm, pi, -1)
        perm = where(ar == i, vp, where(ar == pi, vi, perm))
    return perm


def lu(A: Any, *, pivot: bool = True) -> LUResult:  # noqa: N803
    """``torch.linalg.lu``: (P, L, U) with ``A = P L U``; P has A's dtype,
    L is ``[..., m, k]`` unit lower, U ``[..., k, n]``, k = min(m, n)."""
    _no_unpivoted("linalg.lu", pivot)
    lu_, _, perm = _lu_record("linalg.lu", A)
    low, up = _unpack(lu_)
    return LUResult(_perm_matrix(perm, lu_.dtype), low, up)


def lu_unpack(LU_data: Any, LU_pivots: Any, unpack_data: bool = True,  # noqa: N803
              unpack_pivots: bool = True) -> LUUnpackResult:
    """``torch.lu_unpack``: (P, L, U) from ``lu_factor``'s results; a part not
    asked for is an empty tensor, as torch's."""
    lu_ = _matrix("lu_unpack", LU_data, square=False, half=True)
    empty = zeros(0, dtype=lu_.dtype)
    low, up = _unpack(lu_) if unpack_data else (empty, empty)
    p = _perm_matrix(_perm_from_pivots("lu_unpack", LU_pivots, lu_.shape[-2]), lu_.dtype) \
        if unpack_pivots else empty
    return LUUnpackResult(p, low, up)


@autocast_policy("none")
def lu_solve(LU: Any, pivots: Any, B: Any, *, left: bool = True,  # noqa: N803
             adjoint: bool = False) -> Tensor:
    """``torch.linalg.lu_solve``: X with ``A X = B`` (``A^T X = B`` if
    ``adjoint``; ``X A = B`` if not ``left``) from ``lu_factor``'s results;
    two triangular solves and a row permutation, differentiable in LU and B."""
    lu_ = _matrix("linalg.lu_solve", LU)
    b = _rhs("linalg.lu_solve", lu_, B)
    if b.ndim < 2:
        raise ShapeError("linalg.lu_solve", f"B must be a matrix or a batch of matrices, got "
                                            f"shape {list(b.shape)}")
    if not left:  # X A = B  <=>  A^T X^T = B^T
        return _mT(lu_solve(lu_, pivots, _mT(b), left=True, adjoint=not adjoint))
    n = lu_.shape[-1]
    if b.shape[-2] != n:
        raise ShapeError("linalg.lu_solve", f"cannot solve A X = B for LU of shape "
                                            f"{list(lu_.shape)} and B of shape {list(b.shape)}")
    p = _perm_matrix(_perm_from_pivots("linalg.lu_solve", pivots, n), lu_.dtype)
    low, up = _unpack(lu_)
    if adjoint:  # A^T = U^T L^T P^T: X = P L^{-T} U^{-T} B
        y = solve_triangular(_mT(up), b, upper=False)
        y = solve_triangular(_mT(low), y, upper=True, unitriangular=True)
        return matmul(p, y)
    y = solve_triangular(low, matmul(_mT(p), b), upper=False, unitriangular=True)
    return solve_triangular(up, y, upper=True)


@autocast_policy("fp32")
def _lu_top(A: Any, pivot: bool = True, get_infos: bool = False  # noqa: N803
            ) -> tuple[Tensor, ...]:
    """``torch.lu`` (deprecated there): (LU, pivots[, infos])."""
    if get_infos:
        return tuple(lu_factor_ex(A, pivot=pivot))
    return tuple(lu_factor(A, pivot=pivot))


@autocast_policy("fp32")
def _lu_solve_top(b: Any, LU_data: Any, LU_pivots: Any) -> Tensor:  # noqa: N803
    """``torch.lu_solve(b, LU_data, LU_pivots)`` (deprecated there)."""
    return lu_solve(LU_data, LU_pivots, b)


# ---- torch's top-level aliases (pf.inverse, pf.det, ...) ----

@autocast_policy("fp32")
def inverse(input: Any) -> Tensor:  # noqa: A002
    return inv(input)


@autocast_policy("fp32")
def cholesky_solve(input: Any, input2: Any, upper: bool = False) -> Tensor:  # noqa: A002
    """``torch.cholesky_solve(B, L)``: X with ``A X = B`` for ``A = L L^T``
    (``U^T U`` if ``upper``), from two triangular solves."""
    factor = _matrix("cholesky_solve", input2)
    lower = _mT(factor) if upper else factor
    y = solve_triangular(lower, input, upper=False)
    return solve_triangular(_mT(lower), y, upper=True)


@autocast_policy("fp32")
def cholesky_inverse(input: Any, upper: bool = False) -> Tensor:  # noqa: A002
    """``torch.cholesky_inverse(L)``: ``(L L^T)^{-1}`` (``(U^T U)^{-1}`` if ``upper``)."""
    factor = _matrix("cholesky_inverse", input)
    ident = broadcast_to(eye(factor.shape[-1], dtype=factor.dtype), factor.shape)
    return cholesky_solve(ident, factor, upper)


@autocast_policy("fp32")
def triangular_solve(input: Any, A: Any, upper: bool = True, transpose: bool = False,  # noqa: A002, N803
                     unitriangular: bool = False) -> TriangularSolveResult:
    """``torch.triangular_solve(b, A)``: (solution, cloned_coefficient) of
    ``A X = b`` (``A^T X = b`` if ``transpose``)."""
    a = _matrix("triangular_solve", A)
    coef = _mT(a) if transpose else a
    x = solve_triangular(coef, input, upper=upper != transpose, unitriangular=unitriangular)
    return TriangularSolveResult(x, a)


@autocast_policy("fp32")
def _cholesky_top(input: Any, upper: bool = False) -> Tensor:  # noqa: A002
    """``torch.cholesky`` (deprecated there in favour of ``linalg.cholesky``)."""
    return cholesky(input, upper=upper)


@autocast_policy("fp32")
def pinverse(input: Any, rcond: float = 1e-15) -> Tensor:  # noqa: A002
    """``torch.pinverse``: ``linalg.pinv`` with ``rcond`` as its relative tolerance."""
    return pinv(input, rtol=rcond)


@autocast_policy("fp32")
def _svd_top(input: Any, some: bool = True, compute_uv: bool = True  # noqa: A002
             ) -> tuple[Tensor, Tensor, Tensor]:
    """``torch.svd`` (deprecated there): (U, S, V) with V, not Vh; without
    ``compute_uv``, U and V are zeros of the full shapes (torch's)."""
    u, s, vh = svd(input, full_matrices=not some)
    if not compute_uv:
        return namedtuple("SvdResult", ["U", "S", "V"])(zeros(*u.shape, dtype=u.dtype), s,
                                                           zeros(*vh.shape, dtype=vh.dtype))
    return namedtuple("SvdResult", ["U", "S", "V"])(u, s, _mT(vh))


@autocast_policy("fp32")
def _qr_top(input: Any, some: bool = True) -> QRResult:  # noqa: A002
    """``torch.qr`` (deprecated there): ``linalg.qr`` with ``some`` as mode."""
    return qr(input, "reduced" if some else "complete")


# ---- LDL^T (Bunch-Kaufman): LAPACK's sytf2/sytrs, as torch's CPU kernels ----

LDLFactorResult = namedtuple("LDLFactorResult", ["LD", "pivots"])
LDLFactorExResult = namedtuple("LDLFactorExResult", ["LD", "pivots", "info"])
_BK_ALPHA = (1.0 + 17.0 ** 0.5) / 8.0  # Bunch-Kaufman's growth bound


def _sytf2_lower(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """LAPACK's ``dsytf2`` (uplo='L') on one matrix: the block-diagonal D and
    unit lower L packed into the lower triangle, LAPACK's 1-based pivots (k:
    a 1x1 block after swapping rows/columns k and kp; -kp twice: a 2x2 block)
    and info (the first zero pivot, 1-based; 0 if none). The same pivot
    choices and operation order as the reference routine, so the result is
    torch's for matrices below LAPACK's block size."""
    a = np.tril(a.copy())
    n = a.shape[0]
    ipiv = np.zeros(n, dtype=np.int32)
    info = 0
    k = 0
    while k < n:
        kstep = 1
        absakk = abs(a[k, k])
        if k < n - 1:
            imax = k + 1 + int(np.argmax(np.abs(a[k + 1:, k])))
            colmax = abs(a[imax, k])
        else:
            imax, colmax = k, 0.0
        if max(absakk, colmax) == 0.0 or np.isnan(absakk):
            if info == 0:
                info = k + 1
            kp = k
        else:
            if absakk >= _BK_ALPHA * colmax:
                kp = k
            else:
                rowmax = np.max(np.abs(a[imax, k:imax]))
                if imax < n - 1:
                    rowmax = max(rowmax, np.max(np.abs(a[imax + 1:, imax])))
                if absakk >= _BK_ALPHA * colmax * (colmax / rowmax):
                    kp = k
                elif abs(a[imax, imax]) >= _BK_ALPHA * rowmax:
                    kp = imax
                else:
                    kp, kstep = imax, 2
            kk = k + kstep - 1
            if kp != kk:  # swap rows and columns kk and kp of the trailing matrix
                if kp < n - 1:
                    a[kp + 1:, kk], a[kp + 1:, kp] = a[kp + 1:, kp].copy(), a[kp + 1:, kk].copy()
                seg = slice(kk + 1, kp)
                a[seg, kk], a[kp, seg] = a[kp, seg].copy(), a[seg, kk].copy()
                a[kk, kk], a[kp, kp] = a[kp, kp], a[kk, kk]
                if kstep == 2:
                    a[k + 1, k], a[kp, k] = a[kp, k], a[k + 1, k]
            if kstep == 1:
                if k < n - 1:
                    d11 = 1.0 / a[k, k]
                    x = a[k + 1:, k].copy()
                    a[k + 1:, k + 1:] -= np.tril(d11 * np.outer(x, x))
                    a[k + 1:, k] *= d11
            elif k < n - 2:
                d21 = a[k + 1, k]
                d11 = a[k + 1, k + 1] / d21
                d22 = a[k, k] / d21
                t = 1.0 / (d11 * d22 - 1.0)
                d21 = t / d21
                for j in range(k + 2, n):
                    wk = d21 * (d11 * a[j, k] - a[j, k + 1])
                    wkp1 = d21 * (d22 * a[j, k + 1] - a[j, k])
                    a[j:, j] -= a[j:, k] * wk + a[j:, k + 1] * wkp1
                    a[j, k], a[j, k + 1] = wk, wkp1
        if kstep == 1:
            ipiv[k] = kp + 1
        else:
            ipiv[k] = ipiv[k + 1] = -(kp + 1)
        k += kstep
    return a, ipiv, info


def _sytrs_lower(a: np.ndarray, ipiv: np.ndarray, b: np.ndarray) -> np.ndarray:
    """LAPACK's ``dsytrs`` (uplo='L'): solve A X = B from ``_sytf2_lower``'s factors."""
    b = b.copy()
    n = a.shape[0]
    k = 0
    while k < n:  # L D Y = B
        if ipiv[k] > 0:
            kp = ipiv[k] - 1
            if kp != k:
                b[[k, kp]] = b[[kp, k]]
            if k < n - 1:
                b[k + 1:] -= np.outer(a[k + 1:, k], b[k])
            b[k] /= a[k, k]
            k += 1
        else:
            kp = -ipiv[k] - 1
            if kp != k + 1:
                b[[k + 1, kp]] = b[[kp, k + 1]]
            if k < n - 2:
                b[k + 2:] -= np.outer(a[k + 2:, k], b[k])
                b[k + 2:] -= np.outer(a[k + 2:, k + 1], b[k + 1])
            akm1k = a[k + 1, k]
            akm1, ak = a[k, k] / akm1k, a[k + 1, k + 1] / akm1k
            denom = akm1 * ak - 1.0
            bkm1, bk = b[k] / akm1k, b[k + 1] / akm1k
            b[k] = (ak * bkm1 - bk) / denom
            b[k + 1] = (akm1 * bk - bkm1) / denom
            k += 2
    k = n - 1
    while k >= 0:  # L^T X = Y
        if ipiv[k] > 0:
            if k < n - 1:
                b[k] -= a[k + 1:, k] @ b[k + 1:]
            kp = ipiv[k] - 1
            if kp != k:
                b[[k, kp]] = b[[kp, k]]
            k -= 1
        else:
            if k < n - 1:
                b[k] -= a[k + 1:, k] @ b[k + 1:]
                b[k - 1] -= a[k + 1:, k - 1] @ b[k + 1:]
            kp = -ipiv[k] - 1
            if kp != k:
                b[[k, kp]] = b[[kp, k]]
            k -= 2
    return b


def _not_differentiable(name: str, outputs: list[Tensor], inputs: list[Tensor]) -> list[Tensor]:
    """Outputs of a host kernel torch gives no derivative: when an input
    requires grad they hang off a Function whose backward raises torch's error."""
    from .autograd import Function, is_grad_enabled  # (a sibling module of the same layer)

    if not is_grad_enabled() or not any(t.requires_grad for t in inputs):
        return outputs

    class NotImplementedDerivative(Function):
        @staticmethod
        def forward(ctx: Any, *args: Tensor) -> Any:
            ctx.mark_non_differentiable(*[o for o in outputs if not o.dtype.is_floating_point])
            return tuple(outputs)

        @staticmethod
        def backward(ctx: Any, *grads: Any) -> Any:
            raise RuntimeError(f"derivative for aten::{name} is not implemented")

    return list(NotImplementedDerivative.apply(*inputs))


def _ldl_factor(name: str, A: Any, hermitian: bool) -> tuple[Tensor, Tensor, Tensor]:  # noqa: N803
    del hermitian  # real matrices: hermitian is symmetric
    a = _matrix(name, A)
    values = np.asarray(detach(a).numpy())
    batch = values.shape[:-2]
    n = values.shape[-1]
    count = int(np.prod(batch, dtype=np.int64))
    flat = values.reshape(count, n, n)
    ld = np.zeros((count, n, n), dtype=values.dtype)
    piv = np.zeros((count, n), dtype=np.int32)
    info = np.zeros(count, dtype=np.int32)
    for i, m in enumerate(flat):
        ld[i], piv[i], info[i] = _sytf2_lower(m)
    ld, piv, info = ld.reshape(values.shape), piv.reshape(batch + (n,)), info.reshape(batch)
    outs = [Tensor._leaf(ld), Tensor._leaf(piv), Tensor._leaf(info)]
    return tuple(_not_differentiable("linalg_ldl_factor_ex", outs, [a]))  # type: ignore[return-value]


def ldl_factor_ex(A: Any, *, hermitian: bool = False, check_errors: bool = False  # noqa: N803
                  ) -> LDLFactorExResult:
    """``torch.linalg.ldl_factor_ex``: (LD, pivots, info) of ``A = P L D L^T
    P^T`` by Bunch-Kaufman pivoting (LAPACK's ``sytrf`` with the lower
    triangle, as torch's CPU kernel): LD packs the unit lower L and the 1x1
    and 2x2 blocks of D; pivots are LAPACK's; info the first zero pivot
    (1-based), 0 if none. Only the lower triangle of A is read. Not
    differentiable (torch's is not either)."""
    ld, piv, info = _ldl_factor("linalg.ldl_factor_ex", A, hermitian)
    if check_errors and bool((info != 0).any()):
        raise LinAlgError(f"linalg.ldl_factor_ex: The factorization could not be completed "
                          f"because the input is singular (info={int(info.max())}).")
    return LDLFactorExResult(ld, piv, info)


def ldl_factor(A: Any, *, hermitian: bool = False) -> LDLFactorResult:  # noqa: N803
    """``torch.linalg.ldl_factor``: ``ldl_factor_ex`` without info; a zero
    pivot (a singular D) raises, where torch's CPU kernel fails an internal
    assertion."""
    ld, piv, info = _ldl_factor("linalg.ldl_factor", A, hermitian)
    if bool((info != 0).any()):
        raise LinAlgError(f"linalg.ldl_factor: the factorization could not be completed "
                          f"because the input is singular: D[{int(info.max()) - 1}, "
                          f"{int(info.max()) - 1}] is zero")
    return LDLFactorResult(ld, piv)


def ldl_solve(LD: Any, pivots: Any, B: Any, *, hermitian: bool = False) -> Tensor:  # noqa: N803
    """``torch.linalg.ldl_solve``: X with ``A X = B`` from ``ldl_factor``'s
    (LD, pivots) (LAPACK's ``sytrs``); batch dims broadcast. Not differentiable."""
    del hermitian
    name = "torch.linalg.ldl_solve"
    ld = _matrix(name, LD)
    b = as_tensor_arg(B)
    piv = as_tensor_arg(pivots)
    if b.ndim < 2:
        raise RuntimeError(f"{name}: Expected B to have at least 2 dimensions, but it has "
                           f"{b.ndim} dimensions instead")
    if piv.dtype.name != "int32":
        raise RuntimeError(f"{name}: Expected LU_pivots to be of dtype int32, but got "
                           f"{piv.dtype.name}")
    n = ld.shape[-1]
    if b.shape[-2] != n or piv.shape[-1] != n:
        raise ShapeError("linalg.ldl_solve", f"LD {list(ld.shape)}, pivots {list(piv.shape)} "
                                             f"and B {list(b.shape)}: B's rows and the pivots "
                                             f"must number LD's {n} rows")
    if b.dtype != ld.dtype:
        raise RuntimeError(f"{name}: Expected LD and B to have the same dtype, but got "
                           f"LD with dtype {ld.dtype.name} and B with dtype {b.dtype.name}")
    batch = broadcast_shapes("linalg.ldl_solve", [ld.shape[:-2], b.shape[:-2], piv.shape[:-1]])
    count, k = int(np.prod(batch, dtype=np.int64)), b.shape[-1]
    lv = np.broadcast_to(np.asarray(detach(ld).numpy()), batch + (n, n)).reshape(count, n, n)
    pv = np.broadcast_to(np.asarray(piv.numpy()), batch + (n,)).reshape(count, n)
    bv = np.broadcast_to(np.asarray(detach(b).numpy()), batch + (n, k)).reshape(count, n, k)
    if np.any(pv == 0) or np.any(np.abs(pv) > n):
        raise RuntimeError(f"{name}: pivots must be LAPACK's 1-based indices in [1, {n}] (or "
                           f"their negatives), got {pv.tolist()}")
    xs = np.zeros(bv.shape, dtype=bv.dtype)
    for i, (a, p, r) in enumerate(zip(lv, pv, bv)):
        xs[i] = _sytrs_lower(a, p, r)
    out = Tensor._leaf(xs.reshape(batch + (n, k)))
    return _not_differentiable("linalg_ldl_solve", [out], [ld, b])[0]


# ---- eigen-decompositions of general matrices: complex results ----

def eig(A: Any) -> Any:  # noqa: N803
    """``torch.linalg.eig`` returns complex eigenvalues and vectors (always,
    even when they are real), and pf has no complex dtype: it raises. For
    symmetric matrices ``eigh`` gives them real."""
    raise NotImplementedError("linalg.eig: its eigenvalues and eigenvectors are complex "
                              "tensors, and pf has no complex dtype (use linalg.eigh for "
                              "symmetric matrices)")


def eigvals(A: Any) -> Any:  # noqa: N803
    raise NotImplementedError("linalg.eigvals: its eigenvalues are a complex tensor, and pf "
                              "has no complex dtype (use linalg.eigvalsh for symmetric "
                              "matrices)")


def householder_product(A: Any, tau: Any) -> Tensor:  # noqa: N803
    """``torch.linalg.householder_product`` (LAPACK's ``orgqr``): the first n
    columns of ``H_1 ... H_k``, ``H_i = I - tau_i v_i v_i^T`` with ``v_i`` the
    i-th column of A below the diagonal and 1 on it. Composed of matmuls, so
    it differentiates in A and tau."""
    a = _matrix("torch.linalg.householder_product", A, square=False)
    t = as_tensor_arg(tau)
    m, n = a.shape[-2:]
    k = t.shape[-1] if t.ndim else 0
    if m < n:
        raise RuntimeError(f"torch.linalg.householder_product: input.shape[-2] must be greater "
                           f"than or equal to input.shape[-1], got {m} < {n}")
    if t.ndim < 1 or k > n:
        raise RuntimeError(f"torch.linalg.householder_product: input.shape[-1] must be greater "
                           f"than or equal to tau.shape[-1], got tau of shape {list(t.shape)} "
                           f"for input of shape {list(a.shape)}")
    if t.shape[:-1] != a.shape[:-2]:
        raise RuntimeError(f"torch.linalg.householder_product: Expected batch dimensions of tau "
                           f"to be equal to input.shape[:-2], but got {list(t.shape[:-1])} "
                           f"and {list(a.shape[:-2])}")
    if t.dtype != a.dtype:
        raise RuntimeError(f"torch.linalg.householder_product: tau dtype {t.dtype.name} does "
                           f"not match input dtype {a.dtype.name}")
    rows = np.arange(m)
    q = broadcast_to(eye(m, n, dtype=a.dtype), a.shape[:-2] + (m, n))
    for i in reversed(range(k)):
        below = Tensor._leaf((rows > i).astype(a.dtype.np).reshape(m, 1))
        at = Tensor._leaf((rows == i).astype(a.dtype.np).reshape(m, 1))
        v = a[..., :, i:i + 1] * below + at  # [..., m, 1]
        q = q - (t[..., i:i + 1].unsqueeze(-1) * v) @ (_mT(v) @ q)
    return q


GeqrfResult = namedtuple("GeqrfResult", ["a", "tau"])


def _geqr2(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """LAPACK's ``geqr2`` (Householder QR, ``dlarfg``'s reflector convention):
    R on and above the diagonal, the reflectors' tails below, and tau."""
    a = a.copy()
    m, n = a.shape
    k = min(m, n)
    tau = np.zeros(k, dtype=a.dtype)
    for i in range(k):
        alpha = a[i, i]
        xnorm = np.linalg.norm(a[i + 1:, i])
        if xnorm == 0.0:
            continue  # H = I (tau 0), as dlarfg
        beta = -np.copysign(np.hypot(alpha, xnorm), alpha)
        tau[i] = (beta - alpha) / beta
        a[i + 1:, i] /= alpha - beta
        a[i, i] = beta
        if i + 1 < n:
            v = np.concatenate([[1.0], a[i + 1:, i]]).astype(a.dtype)
            a[i:, i + 1:] -= tau[i] * np.outer(v, v @ a[i:, i + 1:])
    return a, tau


def geqrf(input: Any) -> GeqrfResult:  # noqa: A002
    """``torch.geqrf``: LAPACK's compact QR (a, tau) of ``[..., m, n]``
    matrices, for ``householder_product``/``orgqr``; not differentiable (as torch)."""
    x = _matrix("geqrf", input, square=False)
    values = np.asarray(detach(x).numpy())
    m, n = values.shape[-2:]
    count = int(np.prod(values.shape[:-2], dtype=np.int64))
    flat = values.reshape(count, m, n)
    out = np.zeros_like(flat)
    taus = np.zeros((count, min(m, n)), dtype=values.dtype)
    for i, mat in enumerate(flat):
        out[i], taus[i] = _geqr2(mat)
    a = Tensor._leaf(out.reshape(values.shape))
    tau = Tensor._leaf(taus.reshape(values.shape[:-2] + (min(m, n),)))
    a, tau = _not_differentiable("geqrf", [a, tau], [x])
    return GeqrfResult(a, tau)


def _orgqr_top(input: Any, tau: Any) -> Tensor:  # noqa: A002
    """``torch.orgqr``: ``householder_product``."""
    return householder_product(input, tau)


TOP_LEVEL = {"inverse": inverse, "det": det, "logdet": logdet, "slogdet": slogdet,
             "cholesky": _cholesky_top, "cholesky_solve": cholesky_solve,
             "cholesky_inverse": cholesky_inverse, "triangular_solve": triangular_solve,
             "svd": _svd_top, "qr": _qr_top, "matrix_exp": matrix_exp,
             "pinverse": pinverse, "lu": _lu_top, "lu_solve": _lu_solve_top,
             "orgqr": _orgqr_top, "geqrf": geqrf}

for _name, _fn in TOP_LEVEL.items():
    setattr(Tensor, _name, _fn)


__all__ = ["CholeskyExResult", "EighResult", "InvExResult", "LinAlgError", "LstsqResult",
           "QRResult", "SVDResult", "SlogdetResult", "TriangularSolveResult", "cholesky",
           "cholesky_ex", "cond", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv",
           "inv_ex", "LUFactorExResult", "LUFactorResult", "LUResult", "lstsq", "lu", "lu_factor",
           "lu_factor_ex", "lu_solve", "matmul", "matrix_exp", "matrix_norm", "matrix_power",
           "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "solve_ex",
           "solve_triangular", "svd", "svdvals", "tensorinv", "tensorsolve", "vander", "vecdot",
           "vector_norm", "eig", "eigvals", "householder_product", "LDLFactorResult",
           "LDLFactorExResult", "ldl_factor", "ldl_factor_ex",
           "ldl_solve"]
