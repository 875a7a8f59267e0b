"""``jax.scipy.optimize.minimize(method='BFGS')`` on pyflame: JAX's BFGS
(Nocedal and Wright's algorithm 6.1) with JAX's strong-Wolfe line search
(algorithms 3.5 and 3.6: cubic, quadratic and bisection zoom), step for step
as ``jax._src.scipy.optimize`` writes them: the same start step, the same
bracketing, failure thresholds and step floor, the same counts (``nit``,
``nfev``, ``njev``) and status codes. The line search's scalars are
computed on the host in the array's dtype (float32 without x64, as JAX's);
so are the vectors and the inverse Hessian update (numpy), ``fun`` and its
gradient are ``pf.value_and_grad``'s. As JAX's, ``tol`` is accepted and not
used (``options={'gtol': ...}`` sets the gradient tolerance) and ``x0`` is a
1-d array. Differentiating the results raises (JAX's has no reverse mode;
this one no derivative at all)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np

from .. import numpy as pnp
from ..autodiff import value_and_grad
from ..autograd import Function
from ..core import Tensor, realize
from ..numpy import _t
from ..tree_util import tree_leaves

__all__ = ["OptimizeResults", "minimize"]


class OptimizeResults(NamedTuple):
    """JAX's ``OptimizeResults``: ``status`` 0 converged, 1 maxiter reached,
    3 zoom failed, 5 line search maxiter reached, -1 undefined."""

    x: Tensor
    success: Tensor
    status: Tensor
    fun: Tensor
    jac: Tensor
    hess_inv: Tensor | None
    nfev: Tensor
    njev: Tensor
    nit: Tensor


def minimize(fun: Callable[..., Any], x0: Any, args: tuple = (), *, method: str,
             tol: float | None = None, options: Mapping[str, Any] | None = None
             ) -> OptimizeResults:
    """``jax.scipy.optimize.minimize``: ``fun(x, *args)`` minimized from the
    1-d ``x0`` by ``method='BFGS'`` (options ``maxiter``, ``norm``, ``gtol``,
    ``line_search_maxiter``, JAX's defaults ``200 * x0.size``, ``inf``,
    ``1e-5``, ``10``)."""
    del tol  # (JAX's minimize accepts it and does not use it)
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to jax.scipy.optimize.minimize must be a tuple, "
                        f"got {args}")
    if method.lower() != "bfgs":
        raise ValueError(f"Method {method} not recognized (pyflame has JAX's 'BFGS')")
    inputs = [t for t in tree_leaves(args) if isinstance(t, Tensor)]
    return _bfgs(lambda x: fun(x, *args), _t(x0), inputs, **dict(options or {}))


class _Fun:
    """``fun`` and its gradient evaluated by pyflame at host points (a new
    array each time: one program, compiled once), as host values in ``dt``;
    ``last`` keeps the latest value and gradient as tensors (the results
    depend on them, so differentiating the results reaches the refusal)."""

    def __init__(self, f: Callable[[Tensor], Tensor], dt: np.dtype):
        self.f, self.dt = f, dt
        self.last: list[Tensor] = []

    def __call__(self, x: np.ndarray) -> tuple[np.generic, np.ndarray]:
        phi, g = value_and_grad(self.f)(pnp.asarray(x))
        if not isinstance(phi, Tensor) or phi.ndim != 0:
            raise TypeError("minimize: fun must return a scalar array")
        realize([phi, g])
        self.last = [phi, g]
        return np.asarray(phi.numpy(), self.dt)[()], np.asarray(g.numpy(), self.dt)


class _Search:
    """The line search along ``pk`` from ``xk`` (JAX's ``line_search``), its
    scalars and vectors on the host in ``dt``."""

    def __init__(self, f: _Fun, xk: np.ndarray, pk: np.ndarray):
        self.f, self.xk, self.pk, self.dt = f, xk, pk, f.dt
        self.nfev = 0

    def at(self, t: np.generic) -> tuple[np.generic, np.generic, np.ndarray]:
        """phi(t), phi'(t) and the gradient at ``xk + t * pk``."""
        phi, g = self.f(self.xk + self.dt.type(t) * self.pk)
        self.nfev += 1
        return phi, self.dt.type(np.dot(g, self.pk)), g


def _cubicmin(a, fa, fpa, b, fb, c, fc, dt):  # noqa: ANN001, ANN202  (host scalars)
    with np.errstate(all="ignore"):
        db, dc = b - a, c - a
        denom = (db * dc) ** 2 * (db - dc)
        d1 = np.array([[dc ** 2, -db ** 2], [-dc ** 3, db ** 3]], dt)
        d2 = np.array([fb - fa - fpa * db, fc - fa - fpa * dc], dt)
        big_a, big_b = np.dot(d1, d2) / denom
        radical = big_b * big_b - dt.type(3.0) * big_a * fpa
        return a + (-big_b + np.sqrt(radical)) / (dt.type(3.0) * big_a)


def _quadmin(a, fa, fpa, b, fb):  # noqa: ANN001, ANN202  (host scalars)
    with np.errstate(all="ignore"):
        db = b - a
        big_b = (fb - fa - fpa * db) / (db ** 2)
        return a - fpa / (2.0 * big_b)


def _zoom(ls: _Search, wolfe_one: Callable, wolfe_two: Callable, a_lo, phi_lo, dphi_lo,  # noqa: ANN001
          a_hi, phi_hi, dphi_hi, g_0: Tensor) -> dict[str, Any]:
    """JAX's ``_zoom`` (Nocedal and Wright's algorithm 3.6)."""
    dt = ls.dt
    s = {"done": False, "failed": False, "j": 0, "a_lo": a_lo, "phi_lo": phi_lo,
         "dphi_lo": dphi_lo, "a_hi": a_hi, "phi_hi": phi_hi, "dphi_hi": dphi_hi,
         "a_rec": (a_lo + a_hi) / 2.0, "phi_rec": (phi_lo + phi_hi) / 2.0,
         "a_star": dt.type(1.0), "phi_star": phi_lo, "dphi_star": dphi_lo, "g_star": g_0}
    threshold = 1e-5 if dt.itemsize < 8 else 1e-10
    while not s["done"] and not s["failed"]:
        dalpha = s["a_hi"] - s["a_lo"]
        a, b = min(s["a_hi"], s["a_lo"]), max(s["a_hi"], s["a_lo"])
        cchk, qchk = 0.2 * dalpha, 0.1 * dalpha
        s["failed"] = s["failed"] or bool(dalpha <= threshold)
        a_cubic = _cubicmin(s["a_lo"], s["phi_lo"], s["dphi_lo"], s["a_hi"], s["phi_hi"],
                            s["a_rec"], s["phi_rec"], dt)
        use_cubic = s["j"] > 0 and a + cchk < a_cubic < b - cchk
        a_quad = _quadmin(s["a_lo"], s["phi_lo"], s["dphi_lo"], s["a_hi"], s["phi_hi"])
        use_quad = not use_cubic and a + qchk < a_quad < b - qchk
        a_j = a_cubic if use_cubic else a_quad if use_quad else (s["a_lo"] + s["a_hi"]) / 2.0
        a_j = dt.type(a_j)
        phi_j, dphi_j, g_j = ls.at(a_j)
        hi_to_j = bool(wolfe_one(a_j, phi_j)) or bool(phi_j >= s["phi_lo"])
        star_to_j = bool(wolfe_two(dphi_j)) and not hi_to_j
        hi_to_lo = bool(dphi_j * (s["a_hi"] - s["a_lo"]) >= 0.0) and not hi_to_j \
            and not star_to_j
        lo_to_j = not hi_to_j and not star_to_j
        if hi_to_j:
            s.update(a_hi=a_j, phi_hi=phi_j, dphi_hi=dphi_j, a_rec=s["a_hi"],
                     phi_rec=s["phi_hi"])
        if star_to_j:
            s.update(done=True, a_star=a_j, phi_star=phi_j, dphi_star=dphi_j, g_star=g_j)
        if hi_to_lo:
            s.update(a_hi=s["a_lo"], phi_hi=s["phi_lo"], dphi_hi=s["dphi_lo"],
                     a_rec=s["a_hi"], phi_rec=s["phi_hi"])
        if lo_to_j and not hi_to_lo:
            s.update(a_rec=s["a_lo"], phi_rec=s["phi_lo"])
        if lo_to_j:
            s.update(a_lo=a_j, phi_lo=phi_j, dphi_lo=dphi_j)
        s["j"] += 1
        s["failed"] = s["failed"] or s["j"] >= 30
    return s


def _line_search(f: _Fun, xk: np.ndarray, pk: np.ndarray, phi_0: np.generic,
                 old_old_fval: np.generic, gfk: np.ndarray, maxiter: int,
                 c1: float = 1e-4, c2: float = 0.9) -> tuple:
    """JAX's ``line_search`` (Nocedal and Wright's algorithm 3.5): the step,
    phi and gradient there, failed, status, evaluations."""
    ls = _Search(f, xk, pk)
    dt = ls.dt
    dphi_0 = dt.type(np.dot(gfk, pk))
    with np.errstate(all="ignore"):
        candidate = dt.type(1.01 * 2) * (phi_0 - old_old_fval) / dphi_0
    start = dt.type(1.0) if candidate > 1 else candidate

    def wolfe_one(a_i, phi_i):  # noqa: ANN001, ANN202  (the negation of W1)
        return phi_i > phi_0 + c1 * a_i * dphi_0

    def wolfe_two(dphi_i):  # noqa: ANN001, ANN202
        return abs(dphi_i) <= -c2 * dphi_0
    done = failed = False
    i, a_i1, phi_i1, dphi_i1 = 1, dt.type(0.0), phi_0, dphi_0
    a_star, phi_star, g_star = dt.type(0.0), phi_0, gfk
    while not done and i <= maxiter and not failed:
        a_i = start if i == 1 else dt.type(a_i1 * 2.0)
        phi_i, dphi_i, g_i = ls.at(a_i)
        to_zoom1 = bool(wolfe_one(a_i, phi_i)) or (bool(phi_i >= phi_i1) and i > 1)
        to_i = bool(wolfe_two(dphi_i)) and not to_zoom1
        to_zoom2 = bool(dphi_i >= 0.0) and not to_zoom1 and not to_i
        if to_zoom1:
            z = _zoom(ls, wolfe_one, wolfe_two, a_i1, phi_i1, dphi_i1, a_i, phi_i, dphi_i, gfk)
            done, failed = True, z["failed"]
            a_star, phi_star, g_star = z["a_star"], z["phi_star"], z["g_star"]
        if to_i:
            done, a_star, phi_star, g_star = True, a_i, phi_i, g_i
        if to_zoom2:
            z = _zoom(ls, wolfe_one, wolfe_two, a_i, phi_i, dphi_i, a_i1, phi_i1, dphi_i1, gfk)
            done, failed = True, z["failed"]
            a_star, phi_star, g_star = z["a_star"], z["phi_star"], z["g_star"]
        i, a_i1, phi_i1, dphi_i1 = i + 1, a_i, phi_i, dphi_i
    status = 1 if failed else 3 if i > maxiter else 0
    if dt.itemsize != 8 and abs(a_star) < 1e-8:  # (JAX's floor on the step below 64 bits)
        a_star = dt.type(np.sign(a_star) * 1e-8)
    return a_star, phi_star, g_star, failed or not done, status, ls.nfev


class _NotDifferentiable(Function):
    """The results, computed on the host: differentiating them raises (JAX's
    ``minimize`` runs a ``while_loop``, which has no reverse mode; pyflame's
    host loop has no derivative at all)."""

    @staticmethod
    def forward(ctx: Any, values: list[np.ndarray], *inputs: Tensor) -> tuple:
        del inputs
        return tuple(pnp.asarray(v) for v in values)

    @staticmethod
    def jvp(ctx: Any, *tangents: Any) -> tuple:
        raise ValueError("jax.scipy.optimize.minimize is not differentiable (it runs its "
                         "iterations on the host); differentiate the objective at its result "
                         "instead (implicit differentiation)")

    @staticmethod
    def backward(ctx: Any, *cotangents: Any) -> tuple:
        _NotDifferentiable.jvp(ctx)
        return ()


def _bfgs(fun: Callable[[Tensor], Tensor], x0: Tensor, inputs: list[Tensor],
          maxiter: int | None = None, norm: float = np.inf, gtol: float = 1e-5,
          line_search_maxiter: int = 10) -> OptimizeResults:
    """JAX's ``minimize_bfgs`` (Nocedal and Wright's algorithm 6.1)."""
    if x0.ndim != 1:
        raise ValueError(f"minimize(method='BFGS'): x0 must be a 1-d array (JAX's), got shape "
                         f"{list(x0.shape)}")
    if not x0.dtype.is_floating_point:
        x0 = x0.astype(pnp.float32)
    dt = np.dtype(x0.dtype.np)
    f = _Fun(fun, dt)
    maxiter = x0.numel() * 200 if maxiter is None else maxiter
    d = x0.shape[0]
    eye = np.eye(d, dtype=dt)
    x_k = np.asarray(x0.numpy(), dt)
    f_k, g_k = f(x_k)
    h_k = eye
    converged = bool(np.linalg.norm(g_k, ord=norm) < gtol)
    old_old = f_k + dt.type(np.linalg.norm(g_k)) / dt.type(2)
    failed, k, nfev, ls_status = False, 0, 1, 0
    while not converged and not failed and k < maxiter:
        p_k = -(h_k @ g_k)
        a_k, f_new, g_new, failed, ls_status, n = _line_search(
            f, x_k, p_k, f_k, old_old, g_k, line_search_maxiter)
        nfev += n
        s_k = a_k * p_k
        x_new = x_k + s_k
        y_k = g_new - g_k
        with np.errstate(all="ignore"):
            rho = dt.type(1) / dt.type(np.dot(y_k, s_k))
        if np.isfinite(rho):
            w = eye - rho * np.outer(s_k, y_k)
            h_k = w @ h_k @ w.T + rho * np.outer(s_k, s_k)
        converged = bool(np.linalg.norm(g_new, ord=norm) < gtol)
        old_old, f_k = f_k, dt.type(f_new)
        k += 1
        x_k, g_k = x_new, g_new
    status = 0 if converged else 1 if k == maxiter else 2 + ls_status if failed else -1
    x, fv, jac, hess = _NotDifferentiable.apply(
        [x_k, np.asarray(f_k, dt), np.asarray(g_k, dt), h_k], x0, *f.last, *inputs)
    return OptimizeResults(x=x, success=pnp.asarray(converged and not failed),
                           status=pnp.asarray(status), fun=fv, jac=jac, hess_inv=hess,
                           nfev=pnp.asarray(nfev), njev=pnp.asarray(nfev), nit=pnp.asarray(k))
