"""Helpers for the gradient tests (``test_grad_ops.py``): drawn test data kept
away from the points where an op is not differentiable, and the three oracles
a pyflame derivative is checked against —

* ``torch.autograd`` on the same float64 data (reverse mode) and
  ``torch.func.jvp`` (forward mode);
* central finite differences in float64 of pyflame's *own* forward (each
  evaluation is a cache hit of the forward graph, so this costs microseconds);
* the transpose identity ⟨t, vjp(c)⟩ = ⟨jvp(t), c⟩ between pyflame's two modes.

An ``Example`` is one drawn instance of an op: input arrays (the differentiated
arguments) and the same function written twice, for pyflame and for torch.
Non-differentiated operands (a ``where`` condition, clamp bounds that are
Python numbers) are closed over by the two functions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np
import torch
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import pyflame_mlir as pf

# ---- examples ----


@dataclass
class Example:
    arrays: list[np.ndarray]        # differentiated inputs (floating point)
    pf_fn: Callable[..., Any]       # pyflame tensors -> a tensor or a list/tuple of them
    torch_fn: Callable[..., Any]    # the same on torch tensors
    label: str = ""
    rtol: float = 1e-8              # pyflame vs torch (both float64 unless a cast is tested)
    atol: float = 1e-10
    fd_eps: float = 1e-5            # central-difference step
    fd_rtol: float = 1e-6           # pyflame vs finite differences
    fd_atol: float = 1e-6

    def describe(self) -> str:
        shapes = ", ".join(f"{a.dtype}{list(a.shape)}" for a in self.arrays)
        return f"{self.label} on ({shapes})"


def outputs(out: Any) -> list[Any]:
    """The flat list of output tensors of an op (split/chunk give several)."""
    if isinstance(out, list | tuple):
        return list(out)
    return [out]


# ---- data away from the non-differentiable points ----

def draw_array(rng: np.random.Generator, shape: Sequence[int], domain: str = "any",
               dtype: Any = np.float64) -> np.ndarray:
    """Random float data.

    any       uniform in [-2, 2]
    pos       in [0.5, 2]           (log, sqrt, rsqrt, a pow base)
    away      |x| in [0.25, 2]      (kinks at 0: relu, abs; denominators)
    distinct  all values distinct, at least 0.2 apart (max/min without ties)
    grid      k/2 + u, |u| <= 0.05  (with ``offgrid``: |grid - offgrid| >= 0.15,
    offgrid   k/2 + 1/4 + u          so maximum/minimum/clamp never tie)
    unit      in [-0.9, 0.9]
    """
    shape = tuple(shape)
    n = int(np.prod(shape, dtype=np.int64))
    if domain == "any":
        v = rng.uniform(-2.0, 2.0, shape)
    elif domain == "pos":
        v = rng.uniform(0.5, 2.0, shape)
    elif domain == "away":
        v = rng.uniform(0.25, 2.0, shape) * rng.choice([-1.0, 1.0], shape)
    elif domain == "distinct":
        v = ((rng.permutation(n) - n / 2) * 0.3 + rng.uniform(-0.05, 0.05, n)).reshape(shape)
    elif domain == "grid":
        v = rng.integers(-4, 5, shape) / 2 + rng.uniform(-0.05, 0.05, shape)
    elif domain == "offgrid":
        v = rng.integers(-4, 4, shape) / 2 + 0.25 + rng.uniform(-0.05, 0.05, shape)
    elif domain == "unit":
        v = rng.uniform(-0.9, 0.9, shape)
    else:
        raise ValueError(domain)
    return np.asarray(v, dtype=np.float64).astype(dtype)


def np_dtype(t: pf.Tensor) -> np.dtype:
    return np.dtype(t.dtype.np)


def like(rng: np.random.Generator, t: pf.Tensor) -> np.ndarray:
    """A random direction (cotangent or tangent) with the shape and dtype of ``t``."""
    return np.asarray(rng.uniform(-1.0, 1.0, t.shape)).astype(np_dtype(t))


# ---- hypothesis strategies ----

seeds = st.integers(0, 2**32 - 1)


def shapes(min_dims: int = 0, max_dims: int = 3, min_side: int = 1, max_side: int = 4
           ) -> st.SearchStrategy[tuple[int, ...]]:
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                            max_side=max_side)


def broadcast_shapes(n: int = 2, min_side: int = 1, max_side: int = 4, max_dims: int = 3
                     ) -> st.SearchStrategy[tuple[tuple[int, ...], ...]]:
    return hnp.mutually_broadcastable_shapes(num_shapes=n, min_dims=0, max_dims=max_dims,
                                             min_side=min_side, max_side=max_side
                                             ).map(lambda bs: bs.input_shapes)


# ---- conversions ----

def to_torch(a: np.ndarray, requires_grad: bool = False) -> torch.Tensor:
    a = np.asarray(a)
    if a.dtype == ml_dtypes.bfloat16:
        t = torch.from_numpy(a.astype(np.float32)).to(torch.bfloat16)
    else:
        t = torch.from_numpy(np.array(a, copy=True))
    return t.requires_grad_() if requires_grad else t


def t2np(t: torch.Tensor) -> np.ndarray:
    """Values of a torch result (a bfloat16 one widened, a ZeroTensor of forward AD
    as zeros)."""
    t = t.detach()
    if t._is_zerotensor():
        return np.zeros(t.shape)
    if t.dtype == torch.bfloat16:
        t = t.float()
    return t.numpy()


def f64(a: Any) -> np.ndarray:
    if isinstance(a, pf.Tensor):
        a = a.numpy()
    if isinstance(a, torch.Tensor):
        a = t2np(a)
    return np.asarray(a).astype(np.float64)


def vdot(xs: Sequence[Any], ys: Sequence[Any]) -> float:
    """Σ ⟨x_i, y_i⟩ in float64."""
    return float(sum(np.sum(f64(x) * f64(y)) for x, y in zip(xs, ys)))


def close(actual: Any, expected: Any, rtol: float, atol: float, what: str) -> None:
    a, e = f64(actual), f64(expected)
    assert a.shape == e.shape, f"{what}: shape {a.shape} != {e.shape}"
    np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


# ---- pyflame sides ----

def forward(ex: Example, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
    """pyflame's forward on numpy data (a cache hit after the first call)."""
    outs = outputs(ex.pf_fn(*[pf.from_numpy(np.asarray(a)) for a in arrays]))
    pf.eval(*outs)
    return [o.numpy() for o in outs]


def output_specs(ex: Example) -> list[pf.Tensor]:
    """The (unevaluated) outputs, for their shapes and dtypes."""
    return outputs(ex.pf_fn(*[pf.from_numpy(a) for a in ex.arrays]))


def draw_cotangents(rng: np.random.Generator, ex: Example) -> list[np.ndarray]:
    return [like(rng, o) for o in output_specs(ex)]


def pf_loss(ex: Example, cts: Sequence[np.ndarray]) -> Callable[..., pf.Tensor]:
    """The scalar ``Σ_j ⟨c_j, f(x)_j⟩`` whose gradient is the VJP of ``f`` at ``c``."""
    def loss(*xs: pf.Tensor) -> pf.Tensor:
        total: pf.Tensor | None = None
        for o, c in zip(outputs(ex.pf_fn(*xs)), cts):
            term = (o * pf.from_numpy(c)).sum().astype(pf.float64)
            total = term if total is None else total + term
        assert total is not None
        return total
    return loss


# ---- oracles ----

def torch_vjp(ex: Example, cts: Sequence[np.ndarray]
              ) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """(outputs, cotangents of every input) by torch.autograd."""
    xs = [to_torch(a, True) for a in ex.arrays]
    outs = outputs(ex.torch_fn(*xs))
    pairs = [(o, to_torch(c)) for o, c in zip(outs, cts) if o.requires_grad]
    gs: Sequence[torch.Tensor | None] = [None] * len(xs)
    if pairs:
        gs = torch.autograd.grad([o for o, _ in pairs], xs, [c for _, c in pairs],
                                 allow_unused=True)
    return ([t2np(o) for o in outs],
            [np.zeros(a.shape) if g is None else t2np(g) for a, g in zip(ex.arrays, gs)])


def torch_jvp(ex: Example, tangents: Sequence[np.ndarray]) -> list[np.ndarray]:
    xs = tuple(to_torch(a) for a in ex.arrays)
    ts = tuple(to_torch(t) for t in tangents)
    _, tout = torch.func.jvp(lambda *a: tuple(outputs(ex.torch_fn(*a))), xs, ts)
    return [t2np(t) for t in tout]


def fd_gradient(ex: Example, cts: Sequence[np.ndarray]) -> list[np.ndarray]:
    """∂/∂x Σ_j ⟨c_j, f(x)_j⟩ by central differences of pyflame's forward, in float64."""
    def loss(arrays: Sequence[np.ndarray]) -> float:
        return vdot(forward(ex, arrays), cts)

    eps = ex.fd_eps
    grads = []
    for i, a in enumerate(ex.arrays):
        g = np.zeros(a.shape, np.float64)
        flat = g.reshape(-1)
        for j in range(a.size):
            args = list(ex.arrays)
            plus, minus = a.copy().reshape(-1), a.copy().reshape(-1)
            plus[j] += eps
            minus[j] -= eps
            args[i] = plus.reshape(a.shape)
            lp = loss(args)
            args[i] = minus.reshape(a.shape)
            lm = loss(args)
            flat[j] = (lp - lm) / (2 * eps)
        grads.append(g)
    return grads


def fd_directional(ex: Example, tangents: Sequence[np.ndarray]) -> list[np.ndarray]:
    """(f(x + εt) - f(x - εt)) / 2ε for every output."""
    eps = ex.fd_eps
    plus = forward(ex, [a + eps * t for a, t in zip(ex.arrays, tangents)])
    minus = forward(ex, [a - eps * t for a, t in zip(ex.arrays, tangents)])
    return [(f64(p) - f64(m)) / (2 * eps) for p, m in zip(plus, minus)]
