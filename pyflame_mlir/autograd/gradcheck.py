"""``pf.autograd.gradcheck`` / ``gradgradcheck``: torch's checks of a
function's backward (and optionally forward-mode) derivatives against central
finite differences, for the inputs that require grad.

The analytical Jacobian is built the way torch's slow mode builds it: one
``autograd.grad`` per output element (so a custom ``pf.autograd.Function``'s
``backward`` is what gets checked); the numerical one perturbs each input
element by ``eps`` on the host. Meant for small float64 inputs, as torch's.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..autodiff import autograd_grad, jvp
from ..core import Tensor, requires_grad
from ..creation import tensor as _tensor

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(RuntimeError):
    """A Jacobian computed by autodiff differs from the finite differences."""


def _outputs(func: Callable, args: Sequence[Any]) -> list[Tensor]:
    out = func(*args)
    outs = list(out) if isinstance(out, tuple | list) else [out]
    return [o for o in outs if isinstance(o, Tensor)]


def _numerical(func: Callable, args: list[Any], i: int, eps: float) -> list[np.ndarray]:
    """Per output, d out.flat / d args[i].flat by central differences:
    shape (numel of the input, numel of the output), as torch lays it out."""
    base = np.array(args[i].detach().numpy(), dtype=args[i].dtype.np)
    columns: list[list[np.ndarray]] = []
    for k in range(base.size):
        values = []
        for step in (eps, -eps):
            moved = base.copy()
            moved.reshape(-1)[k] += step
            trial = list(args)
            trial[i] = _tensor(moved).requires_grad_(requires_grad(args[i]))
            values.append([np.asarray(o.detach().numpy(), dtype=np.float64).reshape(-1)
                           for o in _outputs(func, trial)])
        columns.append([(a - b) / (2 * eps) for a, b in zip(*values)])
    n_out = len(_outputs(func, args))
    return [np.stack([c[j] for c in columns]) if columns else np.zeros((0, 0))
            for j in range(n_out)]


def _analytical(outs: list[Tensor], args: list[Any], i: int) -> list[np.ndarray]:
    """Per output, the rows of its Jacobian by one backward per output element."""
    result = []
    for o in outs:
        jac = np.zeros((args[i].numel(), o.numel()))
        if requires_grad(o):
            for k in range(o.numel()):
                seed = np.zeros(o.numel(), dtype=o.dtype.np)
                seed[k] = 1
                g, = autograd_grad([o], [args[i]], [_tensor(seed.reshape(o.shape))],
                                   retain_graph=True, allow_unused=True)
                if g is not None:
                    jac[:, k] = np.asarray(g.detach().numpy(), dtype=np.float64).reshape(-1)
        result.append(jac)
    return result


def _forward(func: Callable, args: list[Any], i: int) -> list[np.ndarray]:
    """Per output, its Jacobian rows by one forward-mode product per input element."""
    x = args[i]
    rows: list[list[np.ndarray]] = []
    for k in range(x.numel()):
        basis = np.zeros(x.numel(), dtype=x.dtype.np)
        basis[k] = 1
        tangents = [_tensor(basis.reshape(x.shape)) if j == i else
                    (a.detach() * 0 if isinstance(a, Tensor) else a)
                    for j, a in enumerate(args)]
        outs_and_tangents = jvp(lambda *a: tuple(_outputs(func, a)), tuple(args),
                                tuple(tangents))[1]
        rows.append([np.asarray(t.detach().numpy(), dtype=np.float64).reshape(-1)
                     for t in outs_and_tangents])
    n_out = len(_outputs(func, args))
    return [np.stack([r[j] for r in rows]) for j in range(n_out)]


def _fail(message: str, raise_exception: bool) -> bool:
    if raise_exception:
        raise GradcheckError(message)
    return False


def gradcheck(func: Callable, inputs: Any, *, eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3, raise_exception: bool = True, nondet_tol: float = 0.0,
              check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
              check_batched_grad: bool = False, check_batched_forward_grad: bool = False,
              check_forward_ad: bool = False, check_backward_ad: bool = True,
              fast_mode: bool = False, masked: bool | None = None) -> bool:
    """True if every Jacobian of ``func`` at ``inputs`` (w.r.t. the inputs
    that require grad) matches finite differences within ``atol + rtol *
    |numerical|``; else raises ``GradcheckError`` (or returns False)."""
    del nondet_tol, check_undefined_grad, check_grad_dtypes, fast_mode, masked
    if check_batched_grad or check_batched_forward_grad:
        raise NotImplementedError("gradcheck: check_batched_grad / check_batched_forward_grad "
                                  "are not supported (use pf.vmap on pf.grad directly)")
    args = list(inputs) if isinstance(inputs, tuple | list) else [inputs]
    wrt = [i for i, a in enumerate(args) if isinstance(a, Tensor) and requires_grad(a)]
    if not wrt:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of them have requires_grad=True.")
    for i in wrt:
        if args[i].dtype.name != "float64":
            warnings.warn(f"Input #{i} requires gradient and is not a double precision "
                          "floating point. This check will likely fail if all the inputs "
                          "are not of double precision floating point.", stacklevel=2)
    outs = _outputs(func, args)
    for i in wrt:
        numerical = _numerical(func, args, i, eps)
        checks = []
        if check_backward_ad:
            checks.append(("analytical", _analytical(outs, args, i)))
        if check_forward_ad:
            checks.append(("forward-mode", _forward(func, args, i)))
        for kind, computed in checks:
            for j, (num, ana) in enumerate(zip(numerical, computed)):
                if num.shape != ana.shape or not np.allclose(ana, num, rtol=rtol, atol=atol):
                    return _fail(f"Jacobian mismatch for output {j} with respect to input "
                                 f"{i} ({kind}),\nnumerical:{num}\n{kind}:{ana}\n",
                                 raise_exception)
    return True


def gradgradcheck(func: Callable, inputs: Any, grad_outputs: Any = None, *,
                  eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True,
                  nondet_tol: float = 0.0, check_undefined_grad: bool = True,
                  check_grad_dtypes: bool = False, check_batched_grad: bool = False,
                  check_fwd_over_rev: bool = False, check_rev_over_rev: bool = True,
                  fast_mode: bool = False, masked: bool = False) -> bool:
    """``gradcheck`` of the gradient: the second derivatives of ``func``,
    with ``grad_outputs`` (random float64 ones when omitted) as inputs too."""
    del gen_non_contig_grad_outputs, check_rev_over_rev
    args = list(inputs) if isinstance(inputs, tuple | list) else [inputs]
    wrt = [i for i, a in enumerate(args) if isinstance(a, Tensor) and requires_grad(a)]
    outs = _outputs(func, args)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        gos = [_tensor(rng.standard_normal(o.shape).astype(o.dtype.np)).requires_grad_()
               for o in outs]
    else:
        gos = list(grad_outputs) if isinstance(grad_outputs, tuple | list) else [grad_outputs]
    n = len(args)

    def first_derivatives(*a: Any) -> tuple[Tensor, ...]:
        outs = _outputs(func, a[:n])
        grads = autograd_grad(outs, [a[i] for i in wrt], list(a[n:]), create_graph=True,
                              allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivatives, args + gos, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     check_forward_ad=check_fwd_over_rev, fast_mode=fast_mode, masked=masked)
