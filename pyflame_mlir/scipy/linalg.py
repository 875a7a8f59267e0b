"""``jax.scipy.linalg`` on pyflame: SciPy's conventions where they differ
from torch's (``cholesky`` upper by default, ``lu`` returning ``p, l, u``
with ``a = p @ l @ u``, ``lu_factor`` pivots as 0-based row swaps,
``solve_triangular``'s ``trans``/``lower``/``unit_diagonal``); the
factorizations are ``pf.linalg``'s."""

from __future__ import annotations

from typing import Any

from .. import indexing
from .. import linalg as _la
from ..composites import block_diag as _block_diag
from ..core import Tensor
from ..numpy import _t

__all__ = ["block_diag", "cho_factor", "cho_solve", "cholesky", "det", "eigh", "expm", "inv",
           "lu", "lu_factor", "lu_solve", "qr", "solve", "solve_triangular", "svd"]


def _mT(x: Tensor) -> Tensor:  # noqa: N802
    return x.transpose(-1, -2)


def cholesky(a: Any, lower: bool = False, overwrite_a: bool = False,
             check_finite: bool = True) -> Tensor:
    """The Cholesky factor (upper by default, SciPy's). Its gradient is the
    symmetric one (torch's and ``jnp.linalg.cholesky``'s); ``jax.scipy``'s
    unsymmetrized rule differs from it only along antisymmetric directions."""
    del overwrite_a, check_finite  # SciPy's hints
    c = _la.cholesky(_t(a))
    return c if lower else _mT(c)


def cho_factor(a: Any, lower: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> tuple[Tensor, bool]:
    del overwrite_a, check_finite  # SciPy's hints
    return cholesky(a, lower), lower


def cho_solve(c_and_lower: tuple[Any, bool], b: Any, overwrite_b: bool = False,
              check_finite: bool = True) -> Tensor:
    del overwrite_b, check_finite  # SciPy's hints
    c, lower = c_and_lower
    ct, bt = _t(c), _t(b)
    vec = bt.ndim == 1 or (bt.ndim == ct.ndim - 1 and bt.shape[-1] == ct.shape[-1])  # (JAX's rule)
    rhs = bt.unsqueeze(-1) if vec else bt
    out = _la.cholesky_solve(rhs, ct, upper=not lower)
    return out.squeeze(-1) if vec else out


def solve_triangular(a: Any, b: Any, trans: int | str = 0, lower: bool = False,
                     unit_diagonal: bool = False, overwrite_b: bool = False,
                     debug: Any = None, check_finite: bool = True) -> Tensor:
    """``op(a) x = b`` with a triangular (``trans``: 0/'N', 1/'T', 2/'C')."""
    del overwrite_b, debug, check_finite  # SciPy's hints
    at, bt = _t(a), _t(b)
    mode = {0: 0, "N": 0, 1: 1, "T": 1, 2: 1, "C": 1}.get(trans)
    if mode is None:
        raise ValueError(f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', got "
                         f"{trans!r}")
    if mode:
        at, lower = _mT(at), not lower
    # JAX's rule: b is a (batch of) vector(s) when 1-d, or one dimension
    # short of a with a's size last; else (batches of) columns, the batch
    # dimensions broadcast ((3, n, n) with (n, k) solves three systems)
    vec = bt.ndim == 1 or (bt.ndim == at.ndim - 1 and bt.shape[-1] == at.shape[-1])
    rhs = bt.unsqueeze(-1) if vec else bt
    out = _la.solve_triangular(at, rhs, upper=not lower, unitriangular=unit_diagonal)
    return out.squeeze(-1) if vec else out


def lu_factor(a: Any, overwrite_a: bool = False, check_finite: bool = True
              ) -> tuple[Tensor, Tensor]:
    """``(lu, piv)``: piv[i] is the row swapped with row i (0-based, SciPy's)."""
    del overwrite_a, check_finite  # SciPy's hints
    lu_, piv = _la.lu_factor(_t(a))
    return lu_, piv - 1


def lu_solve(lu_and_piv: tuple[Any, Any], b: Any, trans: int = 0,
             overwrite_b: bool = False, check_finite: bool = True) -> Tensor:
    del overwrite_b, check_finite  # SciPy's hints
    lu_, piv = lu_and_piv
    lut, bt = _t(lu_), _t(b)
    vec = bt.ndim == lut.ndim - 1
    rhs = bt.unsqueeze(-1) if vec else bt
    pivots = _t(piv) + 1
    out = _la.lu_solve(lut, pivots, rhs, adjoint=bool(trans))
    return out.squeeze(-1) if vec else out


def lu(a: Any, permute_l: bool = False, overwrite_a: bool = False,
       check_finite: bool = True) -> Any:
    """``p, l, u`` with ``a = p @ l @ u`` (or ``p @ l, u`` with ``permute_l``)."""
    del overwrite_a, check_finite  # SciPy's hints
    p, lo, up = _la.lu(_t(a))
    return (p @ lo, up) if permute_l else (p, lo, up)


def qr(a: Any, overwrite_a: bool = False, lwork: Any = None, mode: str = "full",
       pivoting: bool = False, check_finite: bool = True) -> Any:
    del overwrite_a, lwork, check_finite  # SciPy's hints
    if pivoting:
        raise NotImplementedError("qr: pivoting=True is not supported")
    torch_mode = {"full": "complete", "economic": "reduced", "r": "r"}.get(mode)
    if torch_mode is None:
        raise ValueError(f"qr: mode must be 'full', 'economic' or 'r', got {mode!r}")
    q, r = _la.qr(_t(a), mode=torch_mode)
    return (r,) if mode == "r" else (q, r)


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True,
        overwrite_a: bool = False, check_finite: bool = True,
        lapack_driver: str = "gesdd") -> Any:
    del overwrite_a, check_finite, lapack_driver  # SciPy's hints
    if not compute_uv:
        return _la.svdvals(_t(a))
    return tuple(_la.svd(_t(a), full_matrices=full_matrices))


def eigh(a: Any, b: Any = None, lower: bool = True, eigvals_only: bool = False,
         overwrite_a: bool = False, overwrite_b: bool = False, turbo: bool = True,
         eigvals: Any = None, type: int = 1, check_finite: bool = True) -> Any:  # noqa: A002
    del overwrite_a, overwrite_b, turbo, check_finite  # SciPy's hints
    if eigvals is not None or type != 1:
        raise NotImplementedError("eigh: eigvals= and type= are not supported")
    if b is not None:
        raise NotImplementedError("eigh: the generalized problem (b=) is not supported")
    w, v = _la.eigh(_t(a), UPLO="L" if lower else "U")
    return w if eigvals_only else (w, v)


def det(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Tensor:
    del overwrite_a, check_finite  # SciPy's hints
    return _la.det(_t(a))


def inv(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Tensor:
    del overwrite_a, check_finite  # SciPy's hints
    return _la.inv(_t(a))


def solve(a: Any, b: Any, lower: bool = False, overwrite_a: bool = False,
          overwrite_b: bool = False, debug: Any = None, check_finite: bool = True,
          assume_a: str = "gen") -> Tensor:
    """``a x = b``. As JAX: 'gen', 'sym' and 'her' solve with all of ``a``;
    'pos' reads only the ``lower`` (or upper) triangle, as SciPy's Cholesky
    solve (its gradient goes to that triangle; JAX's custom linear solve
    gives the full ``-b_bar x^T`` instead: the same on symmetric directions)."""
    del overwrite_a, overwrite_b, debug, check_finite  # SciPy's hints
    at, bt = _t(a), _t(b)
    if assume_a == "pos":
        tri = indexing.tril(at) if lower else indexing.triu(at)
        at = tri + _mT(tri) - indexing.diag_embed(indexing.diagonal(at, 0, -2, -1))
    elif assume_a not in ("gen", "sym", "her"):
        raise ValueError(f"solve: assume_a must be 'gen', 'sym', 'her' or 'pos', got "
                         f"{assume_a!r}")
    vec = bt.ndim == at.ndim - 1
    out = _la.solve(at, bt.unsqueeze(-1) if vec else bt)
    return out.squeeze(-1) if vec else out


def expm(A: Any, *, upper_triangular: bool = False, max_squarings: int = 16) -> Tensor:  # noqa: N803
    del upper_triangular, max_squarings  # JAX's hints
    return _la.matrix_exp(_t(A))


def block_diag(*arrs: Any) -> Tensor:
    return _block_diag(*[_t(a) if _t(a).ndim == 2 else _t(a).reshape(1, -1)
                         for a in arrs])
