"""Gradients of every differentiable op of the frontend.

Each op is a *case*: a function that draws (with hypothesis) shapes — with
broadcasting pairs, dims, keepdim, index expressions — and data kept away
from the op's non-differentiable points, and returns an ``Example``. Every
case runs through:

* ``test_grad_vs_torch_and_fd``: ``pf.value_and_grad`` of ⟨c, f(x)⟩ for a random
  cotangent c (so the VJP of f) against ``torch.autograd`` on the same float64
  data, and against central finite differences of pyflame's own forward;
* ``test_jvp_vjp``: ``pf.jvp`` against ``torch.func.jvp`` and a directional
  finite difference, and the transpose identity ⟨t, vjp(c)⟩ = ⟨jvp(t), c⟩
  with ``pf.vjp``;
* ``test_backward_matches_grad``: PyTorch-style ``backward()``/``.grad`` on
  the same loss agrees with the functional gradient;
* ``test_second_order``: grad of grad (⟨d, ∇⟨c, f⟩⟩ differentiated again)
  against torch's double backward.

Then: Hessian-vector products of a small MLP loss against torch (both
forward-over-reverse and reverse-over-reverse), ``pf.hessian``/``jacrev``/
``jacfwd`` against torch, tie conventions at the kinks, and what is not
differentiable.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from _grad_oracles import (
    Example,
    broadcast_shapes,
    close,
    draw_array,
    draw_cotangents,
    f64,
    fd_directional,
    fd_gradient,
    forward,
    like,
    output_specs,
    outputs,
    pf_loss,
    seeds,
    shapes,
    t2np,
    to_torch,
    torch_jvp,
    torch_vjp,
    vdot,
)
from _linalg_cases import draw_case as _draw_linalg_case
from _oracles import examples
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from pyflame_mlir.dialects import OPS, ad

import pyflame_mlir as pf
from pyflame_mlir.core import record

SETTINGS = settings(max_examples=examples(15), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])
FEW = settings(SETTINGS, max_examples=examples(4))

Draw = Callable[[st.DataObject], Example]
CASES: dict[str, Draw] = {}


def case(name: str) -> Callable[[Draw], Draw]:
    def register(fn: Draw) -> Draw:
        assert name not in CASES, name
        CASES[name] = fn
        return fn
    return register


def rng_of(data: st.DataObject) -> np.random.Generator:
    return np.random.default_rng(data.draw(seeds, label="seed"))


# ---------------------------------------------------------------- elementwise unary

_GELU_TANH = (lambda x: pf.gelu(x, approximate="tanh"),
              lambda x: F.gelu(x, approximate="tanh"))

# name: (pyflame, torch, input domain)
UNARY: dict[str, tuple[Callable, Callable, str]] = {
    "neg": (pf.neg, torch.neg, "any"),
    "neg_operator": (lambda x: -x, lambda x: -x, "any"),
    "abs": (pf.abs, torch.abs, "away"),
    "abs_operator": (abs, abs, "away"),
    "square": (pf.square, torch.square, "any"),
    "relu": (pf.relu, torch.relu, "away"),
    "exp": (pf.exp, torch.exp, "any"),
    "log": (pf.log, torch.log, "pos"),
    "log1p": (pf.log1p, torch.log1p, "pos"),
    "log1p_unit": (lambda x: x.log1p(), lambda x: x.log1p(), "unit"),
    "sqrt": (pf.sqrt, torch.sqrt, "pos"),
    "rsqrt": (pf.rsqrt, torch.rsqrt, "pos"),
    "sin": (pf.sin, torch.sin, "any"),
    "cos": (pf.cos, torch.cos, "any"),
    "tanh": (pf.tanh, torch.tanh, "any"),
    "sigmoid": (pf.sigmoid, torch.sigmoid, "any"),
    "reciprocal": (pf.reciprocal, torch.reciprocal, "away"),
    "erf": (pf.erf, torch.erf, "any"),
    "gelu": (pf.gelu, F.gelu, "any"),
    "gelu_tanh": (*_GELU_TANH, "any"),
    "tanh_method": (lambda x: x.tanh(), lambda x: x.tanh(), "any"),
    "expm1": (pf.expm1, torch.expm1, "any"),
    "atan": (pf.atan, torch.atan, "any"),
    "asin": (pf.asin, torch.asin, "unit"),
    "acos": (pf.acos, torch.acos, "unit"),
}


def _unary_case(name: str, pf_fn: Callable, torch_fn: Callable, domain: str) -> None:
    @case(name)
    def draw(data: st.DataObject) -> Example:
        shape = data.draw(shapes(min_side=0), label="shape")
        x = draw_array(rng_of(data), shape, domain)
        return Example([x], pf_fn, torch_fn, name)


for _n, (_p, _t, _d) in UNARY.items():
    _unary_case(_n, _p, _t, _d)


# astype between float dtypes: linear, exact in the gradient; the rounding of the
# forward to the narrower type limits the finite differences (larger steps).
_CASTS = {  # name: (from, to, fd_eps, tolerance)
    "astype_f64_f32": (np.float64, pf.float32, 1e-3, 1e-3),
    "astype_f32_f64": (np.float32, pf.float64, 1e-2, 1e-4),
    "astype_f64_f16": (np.float64, pf.float16, 0.25, 2e-2),
    "astype_f64_bf16": (np.float64, pf.bfloat16, 0.5, 5e-2),
    "astype_f32_f64_f32": (np.float32, None, 1e-2, 1e-4),
}


def _cast_case(name: str, src: Any, dst: pf.DType | None, eps: float, tol: float) -> None:
    if dst is None:  # a round trip through float64
        pf_fn = lambda x: x.astype(pf.float64).astype(pf.float32)  # noqa: E731
        torch_fn = lambda x: x.to(torch.float64).to(torch.float32)  # noqa: E731
    else:
        tdt = getattr(torch, dst.name)
        pf_fn = lambda x: x.astype(dst)  # noqa: E731
        torch_fn = lambda x: x.to(tdt)  # noqa: E731

    @case(name)
    def draw(data: st.DataObject) -> Example:
        shape = data.draw(shapes(min_side=0), label="shape")
        x = draw_array(rng_of(data), shape, "any", src)
        return Example([x], pf_fn, torch_fn, name, rtol=tol, atol=tol, fd_eps=eps,
                       fd_rtol=tol, fd_atol=tol)


for _n, (_s, _dd, _e, _tol) in _CASTS.items():
    _cast_case(_n, _s, _dd, _e, _tol)


# ---------------------------------------------------------------- elementwise binary

# name: (pyflame, torch, domain of a, domain of b)
BINARY: dict[str, tuple[Callable, Callable, str, str]] = {
    "add": (pf.add, torch.add, "any", "any"),
    "sub": (pf.sub, torch.sub, "any", "any"),
    "mul": (pf.mul, torch.mul, "any", "any"),
    "div": (pf.div, torch.div, "any", "away"),
    "pow": (pf.pow, torch.pow, "pos", "any"),
    "maximum": (pf.maximum, torch.maximum, "offgrid", "grid"),
    "minimum": (pf.minimum, torch.minimum, "grid", "offgrid"),
    "operators": (lambda a, b: (a + b) * a - b / (a * a + 1) ** b,
                  lambda a, b: (a + b) * a - b / (a * a + 1) ** b, "any", "any"),
    "max_elementwise": (pf.max, torch.max, "offgrid", "grid"),
    "atan2": (pf.atan2, torch.atan2, "any", "away"),
    "fmod": (pf.fmod, torch.fmod, "offgrid", "away"),
}


def _binary_case(name: str, pf_fn: Callable, torch_fn: Callable, da: str, db: str) -> None:
    @case(name)
    def draw(data: st.DataObject) -> Example:
        sa, sb = data.draw(broadcast_shapes(2, min_side=0), label="shapes")
        rng = rng_of(data)
        return Example([draw_array(rng, sa, da), draw_array(rng, sb, db)], pf_fn, torch_fn,
                       name)


for _n, (_p, _t, _da, _db) in BINARY.items():
    _binary_case(_n, _p, _t, _da, _db)


def _t(v: float) -> torch.Tensor:
    return torch.tensor(v, dtype=torch.float64)


# One tensor operand and a Python number (a constant in the IR).
SCALAR: dict[str, tuple[Callable, Callable, str]] = {
    "add_scalar": (lambda x: x + 2.5, lambda x: x + 2.5, "any"),
    "radd_scalar": (lambda x: 2.5 + x, lambda x: 2.5 + x, "any"),
    "rsub_scalar": (lambda x: 1.5 - x, lambda x: 1.5 - x, "any"),
    "sub_scalar": (lambda x: x - 1.5, lambda x: x - 1.5, "any"),
    "mul_scalar": (lambda x: 3 * x, lambda x: 3 * x, "any"),
    "div_scalar": (lambda x: x / 4, lambda x: x / 4, "any"),
    "rdiv_scalar": (lambda x: 2 / x, lambda x: 2 / x, "away"),
    "pow_2": (lambda x: x ** 2, lambda x: x ** 2, "any"),
    "pow_3_float": (lambda x: x ** 3.0, lambda x: x ** 3.0, "any"),
    "pow_half": (lambda x: x ** 0.5, lambda x: x ** 0.5, "pos"),
    "pow_negative": (lambda x: x ** -1.5, lambda x: x ** -1.5, "pos"),
    "pow_0": (lambda x: x ** 0.0, lambda x: x ** 0.0, "any"),
    "rpow": (lambda x: 2.0 ** x, lambda x: 2.0 ** x, "any"),
    "maximum_scalar": (lambda x: pf.maximum(x, 0.5),
                       lambda x: torch.maximum(x, _t(0.5)), "offgrid"),
    "minimum_scalar": (lambda x: pf.minimum(x, -0.5),
                       lambda x: torch.minimum(x, _t(-0.5)), "offgrid"),
    "clamp": (lambda x: pf.clamp(x, -0.5, 1.0), lambda x: torch.clamp(x, -0.5, 1.0),
              "offgrid"),
    "clamp_min": (lambda x: x.clamp(min=0.0), lambda x: x.clamp(min=0.0), "offgrid"),
    "clamp_max": (lambda x: x.clamp(max=0.5), lambda x: x.clamp(max=0.5), "offgrid"),
    # a value used several times: cotangents of its uses are summed
    "fanout": (lambda x: x * x.sin() + x, lambda x: x * x.sin() + x, "any"),
    "self_mul": (lambda x: x * x, lambda x: x * x, "any"),
    "self_add": (lambda x: x + x, lambda x: x + x, "any"),
    "self_div": (lambda x: (x + 3) / (x * x + 1), lambda x: (x + 3) / (x * x + 1), "any"),
}
for _n, (_p, _t2, _d) in SCALAR.items():
    _unary_case(_n, _p, _t2, _d)


@case("where")
def _where(data: st.DataObject) -> Example:
    sc, sx, sy = data.draw(broadcast_shapes(3, min_side=0), label="shapes")
    rng = rng_of(data)
    cond = np.asarray(rng.random(sc) < 0.5)
    return Example([draw_array(rng, sx), draw_array(rng, sy)],
                   lambda x, y: pf.where(pf.from_numpy(cond), x, y),
                   lambda x, y: torch.where(torch.from_numpy(cond), x, y), "where")


@case("where_scalar")
def _where_scalar(data: st.DataObject) -> Example:
    sc, sx = data.draw(broadcast_shapes(2, min_side=0), label="shapes")
    rng = rng_of(data)
    cond = np.asarray(rng.random(sc) < 0.5)
    return Example([draw_array(rng, sx)],
                   lambda x: pf.where(pf.from_numpy(cond), x, 0.0),
                   lambda x: torch.where(torch.from_numpy(cond), x, 0.0), "where_scalar")


@case("clamp_tensors")
def _clamp_tensors(data: st.DataObject) -> Example:
    """clamp by tensor bounds, all three broadcast; lo < 0 <= hi, x never on a bound."""
    sx, slo, shi = data.draw(broadcast_shapes(3), label="shapes")
    rng = rng_of(data)
    x = draw_array(rng, sx, "offgrid")
    lo = np.asarray(rng.integers(-4, 0, slo) / 2 + rng.uniform(-0.05, 0.05, slo))
    hi = np.asarray(rng.integers(0, 5, shi) / 2 + rng.uniform(-0.05, 0.05, shi))
    # (torch's clamp cannot reduce its gradient to an operand smaller than the
    # result: broadcast first on that side)
    return Example([x, lo, hi], pf.clamp,
                   lambda *ts: torch.clamp(*torch.broadcast_tensors(*ts)), "clamp_tensors")


# ---------------------------------------------------------------- reductions

def draw_dims(data: st.DataObject, ndim: int, allow_none: bool = True,
              allow_tuple: bool = True) -> int | tuple[int, ...] | None:
    """None, an int (negative too) or a tuple of distinct dims; a 0-d tensor has
    dims 0 and -1 (as in PyTorch)."""
    kinds = (["none"] if allow_none else []) + ["int"] + \
        (["tuple"] if allow_tuple and ndim else [])
    kind = data.draw(st.sampled_from(kinds), label="dim kind")
    if kind == "none":
        return None
    if kind == "int":
        return data.draw(st.integers(-max(ndim, 1), max(ndim, 1) - 1), label="dim")
    dims = data.draw(st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim,
                              unique=True), label="dims")
    neg = data.draw(st.lists(st.booleans(), min_size=len(dims), max_size=len(dims)))
    return tuple(d - ndim if n else d for d, n in zip(dims, neg))


def _reduction_case(name: str, pf_fn: Callable, torch_fn: Callable, domain: str,
                    allow_empty: bool, allow_none: bool = True, allow_tuple: bool = True,
                    keepdim_arg: bool = True) -> None:
    @case(name)
    def draw(data: st.DataObject) -> Example:
        shape = data.draw(shapes(min_side=0 if allow_empty else 1), label="shape")
        dim = draw_dims(data, len(shape), allow_none, allow_tuple)
        keepdim = data.draw(st.booleans(), label="keepdim") if keepdim_arg else False
        x = draw_array(rng_of(data), shape, domain)
        return Example([x], lambda x: pf_fn(x, dim, keepdim), lambda x: torch_fn(x, dim, keepdim),
                       f"{name}(dim={dim}, keepdim={keepdim})")


def _torch_reduce(fn: Callable) -> Callable:
    def call(x: torch.Tensor, dim: Any, keepdim: bool) -> torch.Tensor:
        if dim is None:
            dim = tuple(range(x.ndim))
        return fn(x, dim=dim, keepdim=keepdim)
    return call


_reduction_case("sum", lambda x, d, k: x.sum(d, keepdim=k), _torch_reduce(torch.sum), "any",
                allow_empty=True)
_reduction_case("mean", lambda x, d, k: pf.mean(x, d, keepdim=k), _torch_reduce(torch.mean),
                "any", allow_empty=True)
_reduction_case("amax", lambda x, d, k: pf.amax(x, d, keepdim=k), _torch_reduce(torch.amax),
                "distinct", allow_empty=False)
_reduction_case("amin", lambda x, d, k: x.amin(d, keepdim=k), _torch_reduce(torch.amin),
                "distinct", allow_empty=False)
# max/min: no dim (the whole tensor), or an int dim giving (values, indices)
_reduction_case("max_all", lambda x, d, k: pf.max(x), lambda x, d, k: torch.max(x),
                "distinct", allow_empty=False, allow_tuple=False, keepdim_arg=False)
_reduction_case("min_all", lambda x, d, k: x.min(), lambda x, d, k: torch.min(x),
                "distinct", allow_empty=False, allow_tuple=False, keepdim_arg=False)
_reduction_case("max_dim", lambda x, d, k: pf.max(x, d, keepdim=k).values,
                lambda x, d, k: torch.max(x, d, keepdim=k).values,
                "distinct", allow_empty=False, allow_none=False, allow_tuple=False)
_reduction_case("min_dim", lambda x, d, k: x.min(d, keepdim=k)[0],
                lambda x, d, k: torch.min(x, d, keepdim=k)[0],
                "distinct", allow_empty=False, allow_none=False, allow_tuple=False)
_reduction_case("logsumexp", lambda x, d, k: pf.logsumexp(x, d, keepdim=k),
                _torch_reduce(torch.logsumexp), "any", allow_empty=False)


def _along_dim_case(name: str, pf_fn: Callable, torch_fn: Callable) -> None:
    @case(name)
    def draw(data: st.DataObject) -> Example:
        shape = data.draw(shapes(min_dims=1, min_side=0), label="shape")
        dim = data.draw(st.integers(-len(shape), len(shape) - 1), label="dim")
        x = draw_array(rng_of(data), shape, "any") * 2
        return Example([x], lambda x: pf_fn(x, dim), lambda x: torch_fn(x, dim),
                       f"{name}(dim={dim})")


_along_dim_case("softmax", pf.softmax, torch.softmax)
_along_dim_case("log_softmax", lambda x, d: x.log_softmax(d), torch.log_softmax)

# reductions, scans and sorting (pyflame_mlir/reductions.py; more in test_reductions.py)
_reduction_case("prod", lambda x, d, k: pf.prod(x, d, keepdim=k),
                lambda x, d, k: torch.prod(x) if d is None else torch.prod(x, d, keepdim=k),
                "any", allow_empty=True, allow_tuple=False)
_along_dim_case("cumsum", pf.cumsum, torch.cumsum)
_along_dim_case("cumprod", lambda x, d: x.cumprod(d), torch.cumprod)


@case("logcumsumexp")
def _logcumsumexp(data: st.DataObject) -> Example:  # (torch's forward AD fails on empty)
    shape = data.draw(shapes(min_dims=1, min_side=1), label="shape")
    dim = data.draw(st.integers(-len(shape), len(shape) - 1), label="dim")
    x = draw_array(rng_of(data), shape, "any") * 2
    return Example([x], lambda x: pf.logcumsumexp(x, dim), lambda x: torch.logcumsumexp(x, dim),
                   f"logcumsumexp(dim={dim})")


_along_dim_case("cummax_cummin", lambda x, d: pf.cummax(x, d).values * pf.cummin(x, d)[0],
                lambda x, d: torch.cummax(x, d).values * torch.cummin(x, d)[0])
_along_dim_case("sort", lambda x, d: pf.sort(x, d, descending=True).values,
                lambda x, d: torch.sort(x, dim=d, descending=True).values)


@case("median_dim")
def _median_dim(data: st.DataObject) -> Example:  # (select_along after a sort)
    shape = data.draw(shapes(min_dims=1, min_side=1), label="shape")
    dim = data.draw(st.integers(-len(shape), len(shape) - 1), label="dim")
    x = draw_array(rng_of(data), shape, "distinct")
    return Example([x], lambda x: pf.median(x, dim).values,
                   lambda x: torch.median(x, dim).values, f"median(dim={dim})")


@case("scatter_add_along")
def _scatter_add_along(data: st.DataObject) -> Example:  # (the VJP of select_along)
    shape = data.draw(shapes(min_dims=1, min_side=1), label="shape")
    dim = data.draw(st.integers(0, len(shape) - 1), label="dim")
    size = data.draw(st.integers(1, 4), label="size")
    rng = rng_of(data)
    idx = rng.integers(0, size, shape).astype(np.int64)
    out_shape = tuple(size if k == dim else n for k, n in enumerate(shape))
    return Example([draw_array(rng, shape, "any")],
                   lambda x: record(OPS["scatter_add_along"], (x, pf.from_numpy(idx)),
                                    {"dim": dim, "size": size}),
                   lambda x: torch.zeros(out_shape, dtype=x.dtype).scatter_add(
                       dim, torch.from_numpy(idx), x), f"scatter_add_along(dim={dim})")


# ---------------------------------------------------------------- matmul

_sides = st.integers(1, 4)


def _matmul_case(name: str, draw_shapes: Callable[[st.DataObject], tuple]) -> None:
    @case(name)
    def draw(data: st.DataObject) -> Example:
        sa, sb = draw_shapes(data)
        rng = rng_of(data)
        op = data.draw(st.sampled_from(["matmul", "@"]), label="spelling")
        pf_fn = pf.matmul if op == "matmul" else (lambda a, b: a @ b)
        return Example([draw_array(rng, sa), draw_array(rng, sb)], pf_fn, torch.matmul,
                       f"{name} {list(sa)} {op} {list(sb)}")


def _batch(data: st.DataObject) -> tuple[tuple[int, ...], tuple[int, ...]]:
    return data.draw(broadcast_shapes(2, max_dims=2, max_side=3), label="batch")


def _vec_vec(d: st.DataObject) -> tuple:
    k = d.draw(_sides)
    return (k,), (k,)


def _vec_mat(d: st.DataObject) -> tuple:
    k = d.draw(_sides)
    return (k,), (k, d.draw(_sides))


def _mat_vec(d: st.DataObject) -> tuple:
    n, k = d.draw(_sides), d.draw(_sides)
    return (n, k), (k,)


def _mat_mat(d: st.DataObject) -> tuple:
    n, k, m = d.draw(_sides), d.draw(_sides), d.draw(_sides)
    return (n, k), (k, m)


def _batched(d: st.DataObject) -> tuple[tuple[int, ...], tuple[int, ...]]:
    (ba, bb), n, k, m = _batch(d), d.draw(_sides), d.draw(_sides), d.draw(_sides)
    return ba + (n, k), bb + (k, m)


def _batched_vec(d: st.DataObject) -> tuple[tuple[int, ...], tuple[int, ...]]:
    b, n, k = d.draw(shapes(1, 2, 1, 3)), d.draw(_sides), d.draw(_sides)
    return (b + (n, k), (k,)) if d.draw(st.booleans()) else ((n,), b + (n, k))


_matmul_case("matmul_vec_vec", _vec_vec)
_matmul_case("matmul_vec_mat", _vec_mat)
_matmul_case("matmul_mat_vec", _mat_vec)
_matmul_case("matmul_mat_mat", _mat_mat)
_matmul_case("matmul_batched", _batched)
_matmul_case("matmul_batched_vec", _batched_vec)


# ---------------------------------------------------------------- shape ops

def _factor(rng: np.random.Generator, n: int, parts: int) -> list[int]:
    """``n`` as a product of ``parts`` factors in random order."""
    out = []
    for _ in range(parts - 1):
        divs = [d for d in range(1, n + 1) if n % d == 0]
        d = int(rng.choice(divs))
        out.append(d)
        n //= d
    out.append(n)
    rng.shuffle(out)
    return out


def _shape_case(name: str):
    """Register a shape op: ``make(data, shape) -> (pf_fn, torch_fn, label)``."""
    def register(make: Callable[[st.DataObject, tuple[int, ...]], tuple]) -> Callable:
        @case(name)
        def draw(data: st.DataObject) -> Example:
            shape = data.draw(shapes(min_side=0), label="shape")
            pf_fn, torch_fn, label = make(data, shape)
            return Example([draw_array(rng_of(data), shape)], pf_fn, torch_fn,
                           f"{name}{label}")
        return make
    return register


@_shape_case("reshape")
def _reshape(data: st.DataObject, shape: tuple[int, ...]) -> tuple:
    n = math.prod(shape)
    rng = rng_of(data)
    rank = data.draw(st.integers(0 if n == 1 else 1, 3), label="rank")
    if n == 0:
        target = [int(v) for v in rng.integers(1, 4, rank)]
        target[int(rng.integers(rank))] = 0
    else:
        target = _factor(rng, n, rank) if rank else []
        if target and n and data.draw(st.booleans(), label="-1"):
            target[int(rng.integers(len(target)))] = -1
    t = tuple(target)
    return (lambda x: x.reshape(t), lambda x: x.reshape(t), f"({list(t)})")


@_shape_case("view_flat")
def _view_flat(data: st.DataObject, shape: tuple[int, ...]) -> tuple:
    return (lambda x: pf.reshape(x, -1), lambda x: x.reshape(-1), "(-1)")


@_shape_case("flatten")
def _flatten(data: st.DataObject, shape: tuple[int, ...]) -> tuple:
    nd = max(len(shape), 1)
    a = data.draw(st.integers(0, nd - 1), label="start")
    b = data.draw(st.integers(a, nd - 1), label="end")
    a -= nd * data.draw(st.booleans())
    b -= nd * data.draw(st.booleans())
    return (lambda x: x.flatten(a, b), lambda x: x.flatten(a, b), f"({a}, {b})")


@case("squeeze")
def _squeeze(data: st.DataObject) -> Example:
    base = list(data.draw(shapes(max_dims=2, min_side=0), label="shape"))
    for _ in range(data.draw(st.integers(0, 2), label="ones")):
        base.insert(data.draw(st.integers(0, len(base))), 1)
    shape = tuple(base)
    nd = len(shape)
    kind = data.draw(st.sampled_from(["all", "int", "tuple"] if nd else ["all"]))
    dim: Any = None
    if kind == "int":
        dim = data.draw(st.integers(-nd, nd - 1), label="dim")
    elif kind == "tuple":
        dim = tuple(data.draw(st.lists(st.integers(0, nd - 1), min_size=1, unique=True),
                              label="dims"))
    pf_fn = (lambda x: x.squeeze()) if dim is None else (lambda x: x.squeeze(dim))
    torch_fn = (lambda x: x.squeeze()) if dim is None else (lambda x: x.squeeze(dim))
    return Example([draw_array(rng_of(data), shape)], pf_fn, torch_fn, f"squeeze({dim})")


@_shape_case("unsqueeze")
def _unsqueeze(data: st.DataObject, shape: tuple[int, ...]) -> tuple:
    d = data.draw(st.integers(-len(shape) - 1, len(shape)), label="dim")
    return (lambda x: x.unsqueeze(d), lambda x: x.unsqueeze(d), f"({d})")


@_shape_case("transpose")
def _transpose(data: st.DataObject, shape: tuple[int, ...]) -> tuple:
    nd = max(len(shape), 1)
    a, b = (data.draw(st.integers(-nd, nd - 1), label="dims") for _ in range(2))
    return (lambda x: x.transpose(a, b), lambda x: x.transpose(a, b), f"({a}, {b})")


@_shape_case("permute")
def _permute(data: st.DataObject, shape: tuple[int, ...]) -> tuple:
    perm = data.draw(st.permutations(list(range(len(shape)))), label="perm")
    perm = [p - len(shape) if data.draw(st.booleans()) else p for p in perm]
    if data.draw(st.booleans(), label="varargs"):
        return (lambda x: x.permute(*perm), lambda x: x.permute(perm), f"(*{perm})")
    return (lambda x: pf.permute(x, perm), lambda x: x.permute(perm), f"({perm})")


@case("T")
def _T(data: st.DataObject) -> Example:
    """.T reverses all dims (torch deprecates it beyond 2-D: permute is the oracle)."""
    shape = data.draw(shapes(min_side=0), label="shape")
    return Example([draw_array(rng_of(data), shape)], lambda x: x.T,
                   lambda x: x.permute(tuple(reversed(range(x.ndim)))), ".T")


def _expand_shapes(data: st.DataObject) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A target shape and a source broadcastable to it (dims dropped or set to 1)."""
    target = data.draw(shapes(max_dims=4, min_side=0, max_side=3), label="target")
    drop = data.draw(st.integers(0, len(target)), label="drop")
    src = [1 if data.draw(st.booleans()) else d for d in target[drop:]]
    return tuple(src), target


@case("expand")
def _expand(data: st.DataObject) -> Example:
    src, target = _expand_shapes(data)
    off = len(target) - len(src)
    sizes = tuple(-1 if i >= off and src[i - off] == target[i] and data.draw(st.booleans())
                  else d for i, d in enumerate(target))
    if data.draw(st.booleans(), label="varargs"):
        pf_fn = lambda x: x.expand(*sizes)  # noqa: E731
    else:
        pf_fn = lambda x: x.expand(sizes)  # noqa: E731
    return Example([draw_array(rng_of(data), src)], pf_fn, lambda x: x.expand(sizes),
                   f"expand({list(sizes)})")


@case("broadcast_to")
def _broadcast_to(data: st.DataObject) -> Example:
    src, target = _expand_shapes(data)
    return Example([draw_array(rng_of(data), src)], lambda x: pf.broadcast_to(x, target),
                   lambda x: torch.broadcast_to(x, target), f"broadcast_to({list(target)})")


def _list_case(name: str, pf_fn: Callable, torch_fn: Callable, same: bool,
               extra_dim: bool) -> None:
    """cat (sizes along dim differ) and stack (same shapes, a new dim)."""
    @case(name)
    def draw(data: st.DataObject) -> Example:
        shape = data.draw(shapes(min_dims=0 if extra_dim else 1, min_side=0), label="shape")
        nd = len(shape) + extra_dim
        dim = data.draw(st.integers(-nd, nd - 1), label="dim")
        k = data.draw(st.integers(1, 3), label="count")
        rng = rng_of(data)
        arrays = []
        for _ in range(k):
            s = list(shape)
            if not same:
                s[dim] = data.draw(st.integers(0, 3))
            arrays.append(draw_array(rng, s))
        return Example(arrays, lambda *xs: pf_fn(list(xs), dim),
                       lambda *xs: torch_fn(list(xs), dim), f"{name}(dim={dim})")


_list_case("cat", lambda xs, d: pf.cat(xs, dim=d), torch.cat, same=False, extra_dim=False)
_list_case("stack", lambda xs, d: pf.stack(xs, d), torch.stack, same=True, extra_dim=True)


@case("split")
def _split(data: st.DataObject) -> Example:
    shape = data.draw(shapes(min_dims=1, min_side=0), label="shape")
    dim = data.draw(st.integers(-len(shape), len(shape) - 1), label="dim")
    n = shape[dim]
    if data.draw(st.booleans(), label="sections"):
        arg: Any = []
        left = n
        while left:
            arg.append(data.draw(st.integers(0, left)))
            left -= arg[-1]
        if not arg or data.draw(st.booleans()):
            arg.append(0)
    else:
        arg = data.draw(st.integers(1, 4), label="size")
    return Example([draw_array(rng_of(data), shape)], lambda x: x.split(arg, dim),
                   lambda x: torch.split(x, arg, dim), f"split({arg}, dim={dim})")


@case("chunk")
def _chunk(data: st.DataObject) -> Example:
    shape = data.draw(shapes(min_dims=1, min_side=1, max_side=5), label="shape")
    dim = data.draw(st.integers(-len(shape), len(shape) - 1), label="dim")
    k = data.draw(st.integers(1, 4), label="chunks")
    return Example([draw_array(rng_of(data), shape)], lambda x: pf.chunk(x, k, dim),
                   lambda x: torch.chunk(x, k, dim), f"chunk({k}, dim={dim})")


def draw_index(data: st.DataObject, shape: tuple[int, ...]) -> tuple:
    """A basic index: ints (negative too), slices with steps, None, one Ellipsis."""
    items: list[Any] = []
    for size in shape:
        kind = data.draw(st.sampled_from(["int", "slice", "full"] if size else
                                         ["slice", "full"]))
        if kind == "int":
            items.append(data.draw(st.integers(-size, size - 1)))
        elif kind == "slice":
            bound = st.none() | st.integers(-size - 1, size + 1)
            items.append(slice(data.draw(bound), data.draw(bound),
                               data.draw(st.none() | st.integers(1, 3))))
        else:
            items.append(slice(None))
    full = slice(None)
    if data.draw(st.booleans(), label="ellipsis"):  # in place of a run of full slices
        a = data.draw(st.integers(0, len(items)))
        end = a
        while end < len(items) and items[end] == full:
            end += 1
        b = data.draw(st.integers(a, end))
        items[a:b] = [Ellipsis]
    while Ellipsis not in items and items and items[-1] == full and \
            data.draw(st.booleans()):  # implicit trailing full slices
        items.pop()
    for _ in range(data.draw(st.integers(0, 2), label="None count")):
        items.insert(data.draw(st.integers(0, len(items))), None)
    if len(items) == 1 and data.draw(st.booleans()):
        return items[0]
    return tuple(items)


@case("getitem")
def _getitem(data: st.DataObject) -> Example:
    shape = data.draw(shapes(min_side=0, max_side=5), label="shape")
    index = draw_index(data, shape)
    return Example([draw_array(rng_of(data), shape)], lambda x: x[index],
                   lambda x: x[index], f"x[{index!r}]")


@case("split_partial")
def _split_partial(data: st.DataObject) -> Example:
    """Only some pieces of a split reach the output (the others get zero cotangents)."""
    shape = data.draw(shapes(min_dims=1, min_side=2, max_side=5), label="shape")
    dim = data.draw(st.integers(-len(shape), len(shape) - 1), label="dim")
    size = data.draw(st.integers(1, shape[dim]), label="size")
    n = -(-shape[dim] // size)
    used = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True),
                     label="used pieces")
    return Example([draw_array(rng_of(data), shape)],
                   lambda x: [x.split(size, dim)[i] * 2 for i in used],
                   lambda x: [torch.split(x, size, dim)[i] * 2 for i in used],
                   f"split({size}, dim={dim}) using {used}")


# ---------------------------------------------------------------- indexing (issue 14)

def _draw_index(data: st.DataObject, shape: tuple, dim: int) -> np.ndarray:
    """A torch.gather index for ``shape`` along ``dim`` (duplicates allowed)."""
    ishape = tuple(data.draw(st.integers(1, n), label="index size") if i != dim else
                   data.draw(st.integers(1, 4), label="index size")
                   for i, n in enumerate(shape))
    return rng_of(data).integers(0, shape[dim], ishape)


@case("gather")
def _gather(data: st.DataObject) -> Example:
    shape = data.draw(shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), label="shape")
    dim = data.draw(st.integers(-len(shape), len(shape) - 1), label="dim")
    idx = _draw_index(data, shape, dim % len(shape))
    return Example([draw_array(rng_of(data), shape)],
                   lambda x: pf.gather(x, dim, idx),
                   lambda x: torch.gather(x, dim, torch.from_numpy(idx)),
                   f"gather(dim={dim}, index={idx.tolist()})")


@case("scatter_add")
def _scatter_add(data: st.DataObject) -> Example:
    shape = data.draw(shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), label="shape")
    dim = data.draw(st.integers(0, len(shape) - 1), label="dim")
    idx = _draw_index(data, shape, dim)
    rng = rng_of(data)
    return Example([draw_array(rng, shape), draw_array(rng, idx.shape)],
                   lambda x, s: pf.scatter_add(x, dim, idx, s),
                   lambda x, s: torch.scatter_add(x, dim, torch.from_numpy(idx), s),
                   f"scatter_add(dim={dim}, index={idx.tolist()})")


@case("max_pool")
def _max_pool(data: st.DataObject) -> Example:
    """max_pool1d/2d/3d (the max_pool primitive; its VJP is max_pool_grad):
    stride, padding, dilation and ceil_mode drawn."""
    nsp = data.draw(st.integers(1, 3), label="pooled dims")
    kernel = tuple(data.draw(st.integers(1, 3), label="kernel") for _ in range(nsp))
    stride = tuple(data.draw(st.integers(1, 3), label="stride") for _ in range(nsp))
    padding = tuple(data.draw(st.integers(0, k // 2), label="padding") for k in kernel)
    dilation = tuple(data.draw(st.integers(1, 2), label="dilation") for _ in range(nsp))
    ceil = data.draw(st.booleans(), label="ceil_mode")
    size = tuple(data.draw(st.integers(d * (k - 1) + 1, 6), label="size")
                 for k, d in zip(kernel, dilation))
    shape = (data.draw(st.integers(1, 2), label="channels"), *size)
    kw = {"kernel_size": kernel, "stride": stride, "padding": padding, "dilation": dilation,
          "ceil_mode": ceil}
    pf_fn, torch_fn = getattr(pf.nn.functional, f"max_pool{nsp}d"), \
        getattr(F, f"max_pool{nsp}d")
    return Example([draw_array(rng_of(data), shape)],
                   lambda x: pf_fn(x, **kw), lambda x: torch_fn(x, **kw),
                   f"max_pool{nsp}d({shape}, {kw})")


@case("advanced_getitem")
def _advanced_getitem(data: st.DataObject) -> Example:
    shape = data.draw(shapes(min_dims=2, max_dims=3, min_side=1, max_side=4), label="shape")
    rng = rng_of(data)
    rows = rng.integers(-shape[0], shape[0], data.draw(st.integers(1, 4), label="n"))
    index = (rows, slice(None), rows % shape[-1]) if len(shape) == 3 else (rows, slice(1, None))
    t_index = tuple(torch.from_numpy(i) if isinstance(i, np.ndarray) else i for i in index)
    return Example([draw_array(rng, shape)], lambda x: x[index] * 1,
                   lambda x: x[t_index] * 1, f"x[{index!r}]")


@case("advanced_setitem")
def _advanced_setitem(data: st.DataObject) -> Example:
    """``y = x * 1; y[rows] = v`` in a differentiated function (distinct rows)."""
    shape = data.draw(shapes(min_dims=1, max_dims=2, min_side=2, max_side=4), label="shape")
    rng = rng_of(data)
    rows = rng.permutation(shape[0])[:data.draw(st.integers(1, shape[0]), label="n")]
    rows = np.where(rng.random(rows.shape) < 0.5, rows - shape[0], rows)  # some negative

    def pf_fn(x: Any, v: Any) -> Any:
        y = x * 2
        y[rows] = v
        return y

    def torch_fn(x: Any, v: Any) -> Any:
        y = x * 2
        y[torch.from_numpy(rows)] = v
        return y
    vshape = (len(rows),) + tuple(shape[1:])
    return Example([draw_array(rng, shape), draw_array(rng, vshape)], pf_fn, torch_fn,
                   f"y[{rows.tolist()}] = v")


# ---------------------------------------------------------------- plumbing

@case("identity")
def _identity(data: st.DataObject) -> Example:
    shape = data.draw(shapes(min_side=0), label="shape")
    return Example([draw_array(rng_of(data), shape)], lambda x: x, lambda x: x, "identity")


@case("outputs_repeated")
def _outputs_repeated(data: st.DataObject) -> Example:
    """The same tensor returned twice, and an argument returned as is: seeds add up."""
    shape = data.draw(shapes(min_side=0), label="shape")

    def fn(x: Any) -> list:
        y = x.sin()
        return [y, x, y]
    return Example([draw_array(rng_of(data), shape)], fn, fn, "[sin x, x, sin x]")


@case("arg_unused")
def _arg_unused(data: st.DataObject) -> Example:
    """A differentiated argument the output does not depend on gets a zero gradient."""
    sa, sb = data.draw(shapes(min_side=0), label="a"), data.draw(shapes(min_side=0), label="b")
    rng = rng_of(data)
    return Example([draw_array(rng, sa), draw_array(rng, sb)], lambda a, b: a.exp(),
                   lambda a, b: a.exp(), "f(a, b) = exp(a)")


@case("mixed_float_dtypes")
def _mixed_float_dtypes(data: st.DataObject) -> Example:
    """float64 (op) float32 promotes to float64; the float32 operand's gradient is float32."""
    sa, sb = data.draw(broadcast_shapes(2, min_side=0), label="shapes")
    rng = rng_of(data)
    fn: Callable = lambda a, b: a * b + b.exp()  # noqa: E731
    return Example([draw_array(rng, sa), draw_array(rng, sb, dtype=np.float32)], fn, fn,
                   "f64 * f32 + exp(f32)", rtol=1e-6, atol=1e-6, fd_eps=1e-2, fd_rtol=1e-3,
                   fd_atol=1e-3)


@case("constant_operands")
def _constant_operands(data: st.DataObject) -> Example:
    """Non-differentiated int and bool tensors mixed in by promotion."""
    sx, si, sm = data.draw(broadcast_shapes(3, min_side=0), label="shapes")
    rng = rng_of(data)
    ints = np.asarray(rng.integers(-3, 4, si), dtype=np.int64)
    mask = np.asarray(rng.random(sm) < 0.5)

    def pf_fn(x: Any) -> Any:
        return x * pf.from_numpy(ints) + x.square() * pf.from_numpy(mask)

    def torch_fn(x: Any) -> Any:
        return x * torch.from_numpy(ints) + x.square() * torch.from_numpy(mask)
    return Example([draw_array(rng, sx)], pf_fn, torch_fn, "x * ints + x^2 * mask")


@case("captured_tensors")
def _captured_tensors(data: st.DataObject) -> Example:
    """Operands that are tensors from outside (captured leaves): their tangents and
    cotangents are zero, so the rules see None on one side of every binary op."""
    n, k = data.draw(_sides, label="n"), data.draw(_sides, label="k")
    rng = rng_of(data)
    C = draw_array(rng, (n, k), "pos")
    G = draw_array(rng, (k,), "grid")
    M = np.asarray(rng.random((n, 1)) < 0.5)

    def fn(lib: Any) -> Callable:
        def f(x: Any) -> list:
            c, g, m = (lib.from_numpy(v) for v in (C, G, M))
            return [lib.cat([x, c], 0), lib.stack([c, x], 1), c @ x.T, x.T @ c,
                    lib.maximum(x, g), lib.minimum(g, x), lib.where(m, c, x), c ** x, abs(x) ** c,
                    c / x, lib.clamp(x, g - 0.5, g + 1), x.split(1, 1)[0] * c[:, :1], c]
        return f
    return Example([draw_array(rng, (n, k), "offgrid")], fn(pf), fn(torch),
                   "x with captured tensors")


# ---------------------------------------------------------------- matrix decompositions

# pf.linalg's primitives (dialects/decomp.py); the examples are in _linalg_cases.py and
# test_linalg_decomp.py has more of them (composites, error cases)
for _name in ("solve", "solve_triangular", "cholesky", "slogdet", "det", "qr", "eigh", "svd",
              "pinv", "matrix_exp", "lu_factor"):
    case(f"linalg_{_name}")(lambda data, _name=_name: _draw_linalg_case(_name, data)[0])


# ---------------------------------------------------------------- per-op tests

NAMES = sorted(CASES)


def _draw(name: str, data: st.DataObject) -> Example:
    ex = CASES[name](data)
    data.draw(st.just(ex.describe()), label="example")  # shown when a test fails
    return ex


@pytest.mark.parametrize("name", NAMES)
@SETTINGS
@given(data=st.data())
def test_grad_vs_torch_and_fd(name: str, data: st.DataObject) -> None:
    ex = _draw(name, data)
    rng = rng_of(data)
    cts = draw_cotangents(rng, ex)
    xs = [pf.from_numpy(a) for a in ex.arrays]
    value, grads = pf.value_and_grad(pf_loss(ex, cts), argnums=tuple(range(len(xs))))(*xs)
    pf.eval(value, *grads)
    t_outs, t_grads = torch_vjp(ex, cts)
    what = ex.describe()
    # the forward, for orientation: a wrong forward would make the rest moot
    for o, t in zip(forward(ex, ex.arrays), t_outs):
        close(o, t, ex.rtol, ex.atol, f"{what}: forward vs torch")
    close(value, vdot(t_outs, cts), ex.rtol, ex.atol * 100, f"{what}: value of <c, f(x)>")
    for i, (g, tg) in enumerate(zip(grads, t_grads)):
        assert g.shape == ex.arrays[i].shape and g.dtype.np == ex.arrays[i].dtype, \
            f"{what}: grad {i} is {g.dtype}{list(g.shape)}"
        close(g, tg, ex.rtol, ex.atol, f"{what}: grad of input {i} vs torch.autograd")
    for i, (g, fd) in enumerate(zip(grads, fd_gradient(ex, cts))):
        close(g, fd, ex.fd_rtol, ex.fd_atol, f"{what}: grad of input {i} vs finite differences")


@pytest.mark.parametrize("name", NAMES)
@SETTINGS
@given(data=st.data())
def test_jvp_vjp(name: str, data: st.DataObject) -> None:
    ex = _draw(name, data)
    rng = rng_of(data)
    xs = [pf.from_numpy(a) for a in ex.arrays]
    tangents = [like(rng, x) for x in xs]
    cts = draw_cotangents(rng, ex)
    out, tout = pf.jvp(ex.pf_fn, xs, [pf.from_numpy(t) for t in tangents])
    tout = outputs(tout)
    out2, vjp_fn = pf.vjp(ex.pf_fn, *xs)
    ct_tree: Any = [pf.from_numpy(c) for c in cts]
    if not isinstance(out2, list | tuple):
        ct_tree = ct_tree[0]
    vjps = vjp_fn(ct_tree)
    pf.eval(*outputs(out), *tout, *vjps)
    what = ex.describe()
    specs = output_specs(ex)
    assert len(tout) == len(specs)
    for t, s in zip(tout, specs):
        assert t.shape == s.shape and t.dtype is s.dtype, f"{what}: tangent {t.dtype}{t.shape}"
    for i, (t, tt) in enumerate(zip(tout, torch_jvp(ex, tangents))):
        close(t, tt, ex.rtol, ex.atol, f"{what}: jvp output {i} vs torch.func.jvp")
    for i, (t, fd) in enumerate(zip(tout, fd_directional(ex, tangents))):
        close(t, fd, ex.fd_rtol, ex.fd_atol, f"{what}: jvp output {i} vs finite differences")
    if not all(np.isfinite(f64(o)).all() for o in outputs(out)):
        return  # (mean over nothing: NaN tangents, as torch's; no identity to check)
    lhs, rhs = vdot(tangents, vjps), vdot(tout, cts)
    scale = 1 + vdot([abs(f64(t)) for t in tangents], [abs(f64(v)) for v in vjps])
    assert abs(lhs - rhs) <= 10 * ex.fd_rtol * scale, \
        f"{what}: <t, vjp(c)> = {lhs} but <jvp(t), c> = {rhs}"


@pytest.mark.parametrize("name", NAMES)
@FEW
@given(data=st.data())
def test_backward_matches_grad(name: str, data: st.DataObject) -> None:
    """The imperative API (requires_grad_, backward, .grad) on the same loss."""
    ex = _draw(name, data)
    cts = draw_cotangents(rng_of(data), ex)
    xs = [pf.from_numpy(a).requires_grad_() for a in ex.arrays]
    pf_loss(ex, cts)(*xs).backward()
    txs = [to_torch(a, True) for a in ex.arrays]
    sum((o * to_torch(c)).sum().double()
        for o, c in zip(outputs(ex.torch_fn(*txs)), cts)).backward()
    for i, (x, tx) in enumerate(zip(xs, txs)):
        what = f"{ex.describe()}: .grad of input {i}"
        if tx.grad is None:  # not on a path to the loss
            assert x.grad is None, what
        else:
            assert x.grad is not None, f"{what} is None"
            close(x.grad, tx.grad, ex.rtol, ex.atol, what)


@pytest.mark.parametrize("name", NAMES)
@FEW
@given(data=st.data())
def test_second_order(name: str, data: st.DataObject) -> None:
    """∇_x ⟨d, ∇_x⟨c, f(x)⟩⟩ (a Hessian-vector product of the VJP loss) vs torch,
    by reverse-over-reverse and forward-over-reverse."""
    ex = _draw(name, data)
    rng = rng_of(data)
    cts = draw_cotangents(rng, ex)
    ds = [like(rng, pf.from_numpy(a)) for a in ex.arrays]
    n = len(ex.arrays)
    inner = pf.grad(pf_loss(ex, cts), argnums=tuple(range(n)))

    def outer(*xs: pf.Tensor) -> pf.Tensor:
        return pf.sum(pf.stack([(g * pf.from_numpy(d)).sum().astype(pf.float64)
                                for g, d in zip(inner(*xs), ds)]))

    xs = [pf.from_numpy(a) for a in ex.arrays]
    hv = pf.grad(outer, argnums=tuple(range(n)))(*xs)
    # the Hessian of <c, f> is symmetric: forward-over-reverse gives the same H d
    _, hv_fwd = pf.jvp(lambda *xs: inner(*xs), xs, [pf.from_numpy(d) for d in ds])
    pf.eval(*hv, *hv_fwd)

    txs = [to_torch(a, True) for a in ex.arrays]
    t_outs = outputs(ex.torch_fn(*txs))
    tl = sum((o * to_torch(c)).sum().double() for o, c in zip(t_outs, cts))
    if not isinstance(tl, torch.Tensor) or not tl.requires_grad:
        expected = [np.zeros(a.shape) for a in ex.arrays]
    else:
        g1 = torch.autograd.grad(tl, txs, create_graph=True, allow_unused=True)
        tl2 = sum((g * to_torch(d)).sum() for g, d in zip(g1, ds) if g is not None)
        if isinstance(tl2, torch.Tensor) and tl2.requires_grad:
            g2 = torch.autograd.grad(tl2, txs, allow_unused=True)
        else:
            g2 = (None,) * n
        expected = [np.zeros(a.shape) if g is None else t2np(g)
                    for a, g in zip(ex.arrays, g2)]
    for i, (h, hf, e) in enumerate(zip(hv, hv_fwd, expected)):
        close(h, e, max(ex.rtol, 1e-7), max(ex.atol, 1e-9),
              f"{ex.describe()}: second derivative (grad of grad), input {i}")
        close(hf, e, max(ex.rtol, 1e-7), max(ex.atol, 1e-9),
              f"{ex.describe()}: second derivative (jvp of grad), input {i}")


# ---------------------------------------------------------------- kinks and ties

_TIES = np.array([[1.0, 3.0, 3.0, -0.5], [2.0, 2.0, 2.0, 0.0], [0.0, -1.0, 0.0, -0.5]])

# name: (pyflame, torch); evaluated on _TIES, where these ops are not differentiable:
# the subgradient PyTorch picks is the convention to match
KINKS: dict[str, tuple[Callable, Callable]] = {
    "relu_at_0": (pf.relu, torch.relu),
    "abs_at_0": (pf.abs, torch.abs),
    "maximum_tie": (lambda x: pf.maximum(x, x.T.reshape(3, 4)),
                    lambda x: torch.maximum(x, x.T.reshape(3, 4))),
    "minimum_tie": (lambda x: pf.minimum(x, 2.0), lambda x: torch.minimum(x, _t(2.0))),
    "maximum_self": (lambda x: pf.maximum(x, x), lambda x: torch.maximum(x, x)),
    "amax_ties": (lambda x: pf.amax(x, 1), lambda x: torch.amax(x, 1)),
    "amin_ties": (lambda x: pf.amin(x, -2, keepdim=True),
                  lambda x: torch.amin(x, -2, keepdim=True)),
    "max_all_ties": (pf.max, torch.max),
    "min_all_ties": (pf.min, torch.min),
    "where_at_0": (lambda x: pf.where(x > 0, x, -x), lambda x: torch.where(x > 0, x, -x)),
    "sqrt_at_0": (lambda x: pf.sqrt(x.abs()), lambda x: torch.sqrt(x.abs())),
    "pow_base_0": (lambda x: pf.relu(x) ** 2.0, lambda x: torch.relu(x) ** 2.0),
    "pow_zero_base_negative_exponent": (
        lambda x: pf.pow(pf.zeros(3, 4, dtype=pf.float64), x),
        lambda x: torch.pow(torch.zeros(3, 4, dtype=torch.float64), x)),
    "pow_exponent_0": (lambda x: x ** (x * 0.0), lambda x: x ** (x * 0.0)),
    # max(dim) sends the whole gradient to the index it returns; amax splits
    "max_dim_ties": (lambda x: pf.max(x, 1).values, lambda x: torch.max(x, 1).values),
    "min_dim_ties": (lambda x: pf.min(x, -2, keepdim=True).values,
                     lambda x: torch.min(x, -2, keepdim=True).values),
    "clamp_at_bounds": (lambda x: pf.clamp(x, 0.0, 2.0), lambda x: torch.clamp(x, 0.0, 2.0)),
}


@pytest.mark.parametrize("name", list(KINKS))
def test_kink_conventions_match_torch(name: str) -> None:
    pf_fn, torch_fn = KINKS[name]
    c = np.random.default_rng(0).uniform(0.5, 1.5, np.shape(torch_fn(to_torch(_TIES))))
    ex = Example([_TIES], pf_fn, torch_fn, name)
    g = pf.grad(pf_loss(ex, [c]))(pf.from_numpy(_TIES))
    _, (tg,) = torch_vjp(ex, [c])
    close(g, tg, 1e-12, 1e-12, f"{name}: gradient at kinks and ties")



def test_relu_derivative_at_special_values_matches_torch() -> None:
    """relu's mask is PyTorch's: zero where the output is <= 0, so NaN passes
    its gradient through, in reverse and forward mode."""
    a = np.array([np.nan, -0.0, 0.0, 1.0, -1.0, np.inf, -np.inf, 1e-300], np.float64)
    c = np.arange(1.0, a.size + 1.0)
    t = to_torch(a, True)
    (torch.relu(t) * torch.from_numpy(c)).sum().backward()
    g = pf.grad(lambda x: (pf.relu(x) * pf.from_numpy(c)).sum())(pf.from_numpy(a))
    assert np.array_equal(g.numpy(), t.grad.numpy(), equal_nan=True)
    _, tangent = pf.jvp(pf.relu, (pf.from_numpy(a),), (pf.from_numpy(c),))
    _, ttangent = torch.func.jvp(torch.relu, (torch.from_numpy(a),), (torch.from_numpy(c),))
    assert np.array_equal(tangent.numpy(), ttangent.numpy(), equal_nan=True)



def test_sign_and_abs_derivative_at_nan_match_torch() -> None:
    """sign's value is PyTorch's (0 at NaN, +0.0 at -0.0; torch 2.13 checked,
    numpy and JAX keep NaN), and so are the gradients: abs's and sign's are 0 at
    NaN, in reverse and forward mode."""
    a = np.array([np.nan, -2.0, 3.0, np.inf, -np.inf, 0.0, -0.0])
    for f, tf in ((pf.sign, torch.sign), (pf.sgn, torch.sgn)):
        got, exp = f(pf.from_numpy(a)).numpy(), tf(torch.from_numpy(a)).numpy()
        assert np.array_equal(got, exp) and np.array_equal(np.signbit(got), np.signbit(exp))
    for f, tf in ((pf.abs, torch.abs), (pf.sign, torch.sign)):
        g = pf.grad(lambda x, f=f: f(x).sum())(pf.from_numpy(a)).numpy()
        t = to_torch(a, True)
        tf(t).sum().backward()
        assert np.array_equal(g, t.grad.numpy()), (f, g, t.grad)
        ones = np.ones_like(a)
        _, tangent = pf.jvp(f, (pf.from_numpy(a),), (pf.from_numpy(ones),))
        _, ttangent = torch.func.jvp(tf, (torch.from_numpy(a),), (torch.from_numpy(ones),))
        assert np.array_equal(tangent.numpy(), ttangent.numpy()), (f, tangent, ttangent)


@pytest.mark.parametrize("bounds", [(-1.0, 1.0), (-1.0, None), (None, 1.0), (2.0, -2.0)])
def test_clamp_gradient_at_nan_matches_torch(bounds) -> None:
    """clamp's gradient is PyTorch's ``min <= x <= max`` mask: 0 at a NaN x
    (the value stays NaN), 1 on the bounds, in reverse and forward mode."""
    lo, hi = bounds
    a = np.array([np.nan, -2.0, -1.0, 0.5, 1.0, 3.0, np.inf, -np.inf])
    c = np.arange(1.0, 9.0)
    out = pf.clamp(pf.from_numpy(a), lo, hi).numpy()
    assert np.array_equal(out, torch.clamp(torch.from_numpy(a), lo, hi).numpy(), equal_nan=True)
    g = pf.grad(lambda x: (pf.clamp(x, lo, hi) * pf.from_numpy(c)).sum())(pf.from_numpy(a))
    t = to_torch(a, True)
    (torch.clamp(t, lo, hi) * torch.from_numpy(c)).sum().backward()
    assert np.array_equal(g.numpy(), t.grad.numpy()), (g.numpy(), t.grad)
    _, tangent = pf.jvp(lambda x: pf.clamp(x, lo, hi), (pf.from_numpy(a),), (pf.from_numpy(c),))
    _, ttangent = torch.func.jvp(lambda x: torch.clamp(x, lo, hi), (torch.from_numpy(a),),
                                 (torch.from_numpy(c),))
    assert np.array_equal(tangent.numpy(), ttangent.numpy(), equal_nan=True)

@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_maximum_minimum_vjp_at_nan_and_ties_matches_torch(name: str) -> None:
    """Ties split the cotangent; where a NaN leaves the pair unordered both
    operands get all of it (PyTorch), with the second operand broadcast."""
    a = np.array([[np.nan, 1.0, 2.0, -np.inf, 0.0], [3.0, np.nan, -1.0, 5.0, -0.0]])
    bvec = np.array([0.5, np.nan, 2.0, np.nan, -0.0])
    c = np.arange(1.0, 11.0).reshape(2, 5)
    f, g = getattr(pf, name), getattr(torch, name)
    ta, tb = to_torch(a, True), to_torch(bvec, True)
    (g(ta, tb) * torch.from_numpy(c)).sum().backward()
    ga, gb = pf.grad(lambda x, y: (f(x, y) * pf.from_numpy(c)).sum(), argnums=(0, 1))(
        pf.from_numpy(a), pf.from_numpy(bvec))
    assert np.array_equal(ga.numpy(), ta.grad.numpy(), equal_nan=True)
    assert np.array_equal(gb.numpy(), tb.grad.numpy(), equal_nan=True)

# ---------------------------------------------------------------- not differentiable

def _x(shape: tuple[int, ...] = (3, 4), seed: int = 0) -> np.ndarray:
    return draw_array(np.random.default_rng(seed), shape, "away")


def _torch_grad(fn: Callable, a: np.ndarray) -> np.ndarray:
    t = to_torch(a, True)
    out = fn(t)
    if not out.requires_grad:
        return np.zeros(a.shape)
    (g,) = torch.autograd.grad(out, t)
    return t2np(g)


NONDIFF_PATHS: dict[str, tuple[Callable, Callable]] = {
    # argmax/argmin, comparisons and casts to int carry no gradient; the float
    # paths next to them still do
    "argmax_weights": (
        lambda x: (x * x.argmax(1, keepdim=True).astype(pf.float64)).sum()
        + x.argmin().astype(pf.float64),
        lambda x: (x * x.argmax(1, keepdim=True).double()).sum() + x.argmin().double()),
    "max_indices": (
        lambda x: pf.max(x, 1).values.sum() * pf.max(x, 1).indices.astype(pf.float64).sum(),
        lambda x: torch.max(x, 1).values.sum() * torch.max(x, 1).indices.double().sum()),
    "comparisons_only": (
        lambda x: (x > 0).astype(pf.float64).sum() + (x <= x * 2).astype(pf.float64).sum()
        + ((x != 0) & (x < 1)).astype(pf.float64).sum(),
        lambda x: (x > 0).double().sum() + (x <= x * 2).double().sum()
        + ((x != 0) & (x < 1)).double().sum()),
    "mask_times_x": (lambda x: (x * (x > 0).astype(pf.float64)).sum(),
                     lambda x: (x * (x > 0).double()).sum()),
    "where_x_or_0": (lambda x: pf.where(x > 0, x, 0.0).sum(),
                     lambda x: torch.where(x > 0, x, 0.0).sum()),
    "where_two_branches": (lambda x: pf.where(x.abs() < 1, x * x, x.sin()).sum(),
                           lambda x: torch.where(x.abs() < 1, x * x, x.sin()).sum()),
    "through_int_cast": (lambda x: (x * 3).astype(pf.int64).astype(pf.float64).sum() + x.sum(),
                         lambda x: (x * 3).long().double().sum() + x.sum()),
    "sign": (lambda x: (pf.sign(x) * x).sum(), lambda x: (torch.sign(x) * x).sum()),
}


@pytest.mark.parametrize("name", list(NONDIFF_PATHS))
def test_non_differentiable_paths_contribute_zero(name: str) -> None:
    pf_fn, torch_fn = NONDIFF_PATHS[name]
    x = _x()
    g = pf.grad(pf_fn)(pf.from_numpy(x))
    close(g, _torch_grad(torch_fn, x), 1e-12, 1e-12, f"{name}: gradient")
    # forward mode agrees: the tangent of the output is <grad, t>
    t = like(np.random.default_rng(1), pf.from_numpy(x))
    _, tout = pf.jvp(pf_fn, (pf.from_numpy(x),), (pf.from_numpy(t),))
    assert abs(float(tout.item()) - vdot([g], [t])) < 1e-10, f"{name}: jvp"


def test_comparison_only_gradient_is_exactly_zero() -> None:
    g = pf.grad(lambda x: (x > 0).astype(pf.float64).sum())(pf.from_numpy(_x()))
    assert g.shape == (3, 4) and g.dtype is pf.float64
    assert not g.numpy().any()


@pytest.mark.parametrize("dtype", [pf.int32, pf.int64, pf.bool])
def test_differentiating_wrt_int_or_bool_raises_type_error(dtype: pf.DType) -> None:
    ints = np.arange(6).reshape(2, 3).astype(dtype.np)
    i = pf.from_numpy(ints)
    x = pf.from_numpy(_x((2, 3)))

    def f(a: Any) -> Any:
        return (a * 2.0).sum()

    with pytest.raises(TypeError, match=dtype.name):
        pf.grad(f)(i)
    with pytest.raises(TypeError, match=dtype.name):
        pf.value_and_grad(lambda a, b: (a * b).sum(), argnums=(0, 1))(x, i)
    with pytest.raises(TypeError, match=dtype.name):
        _, vjp_fn = pf.vjp(lambda a: a * 2.0, i)
        vjp_fn(pf.ones(2, 3))
    with pytest.raises(TypeError, match=dtype.name):
        pf.jvp(lambda a: a * 2.0, (i,), (i,))
    with pytest.raises(RuntimeError, match="floating point"):
        pf.from_numpy(np.arange(3).astype(dtype.np)).requires_grad_()
    # an int argument that is *not* differentiated is fine
    g = pf.grad(lambda a, b: (a * b).sum(), argnums=0)(x, i)
    close(g, ints, 0, 0, "grad next to an int")


@pytest.mark.parametrize("f", [
    lambda x: x * 2,                                  # a vector
    lambda x: x.sum(0),                               # a vector from a reduction
    lambda x: x.argmax(),                             # an int scalar
    lambda x: (x > 0).all() if hasattr(x, "all") else x > 0,  # a bool
    lambda x: 3.0,                                    # not a tensor
], ids=["vector", "reduced_vector", "int_scalar", "bool", "python_float"])
def test_grad_of_non_scalar_or_non_float_output_raises(f: Callable) -> None:
    with pytest.raises(TypeError, match="scalar"):
        pf.grad(f)(pf.from_numpy(_x()))


def test_grad_of_one_element_output_is_allowed() -> None:
    """Like torch (autograd.grad, backward), an output with one element counts as a
    scalar; pf.grad's own check says so too."""
    x = _x()

    def f(x: pf.Tensor) -> pf.Tensor:
        return (x * x).sum(1, keepdim=True).sum(0, keepdim=True)

    close(pf.grad(f)(pf.from_numpy(x)), 2 * x, 1e-12, 1e-12, "grad of a [1, 1] output")
    leaf = pf.from_numpy(x).requires_grad_()
    f(leaf).backward()
    close(leaf.grad, 2 * x, 1e-12, 1e-12, "backward of a [1, 1] output")


def test_backward_of_non_scalar_raises() -> None:
    x = pf.from_numpy(_x()).requires_grad_()
    with pytest.raises(RuntimeError, match="scalar"):
        (x * 2).backward()
    (x * 2).backward(gradient=pf.ones(3, 4, dtype=pf.float64))
    close(x.grad, np.full((3, 4), 2.0), 0, 0, "backward(gradient=)")


# ---------------------------------------------------------------- second order

def _mlp_params(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"w1": rng.standard_normal((4, 6)) * 0.7, "b1": rng.standard_normal(6) * 0.2,
            "w2": rng.standard_normal((6, 3)) * 0.7, "b2": rng.standard_normal(3) * 0.2}


_ACT: dict[str, tuple[Callable, Callable]] = {
    "tanh": (pf.tanh, torch.tanh),
    "gelu": (pf.gelu, F.gelu),
    "sigmoid": (pf.sigmoid, torch.sigmoid),
    "relu": (pf.relu, torch.relu),
}
_KEYS = ("b1", "b2", "w1", "w2")  # pytree (sorted dict) order


def _pf_mlp_loss(act: Callable, X: np.ndarray, Y: np.ndarray) -> Callable:
    def loss(p: dict) -> pf.Tensor:
        h = act(pf.from_numpy(X) @ p["w1"] + p["b1"])
        logits = h @ p["w2"] + p["b2"]
        return -(pf.log_softmax(logits, 1) * pf.from_numpy(Y)).sum(1).mean() \
            + 1e-2 * (p["w1"] ** 2).sum()
    return loss


def _torch_mlp_loss(act: Callable, X: np.ndarray, Y: np.ndarray) -> Callable:
    def loss(b1: torch.Tensor, b2: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor
             ) -> torch.Tensor:
        h = act(to_torch(X) @ w1 + b1)
        logits = h @ w2 + b2
        return -(torch.log_softmax(logits, 1) * to_torch(Y)).sum(1).mean() \
            + 1e-2 * (w1 ** 2).sum()
    return loss


@pytest.mark.parametrize("act", list(_ACT))
@pytest.mark.parametrize("seed", [0, 1])
def test_mlp_hessian_vector_product_matches_torch(act: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    params = _mlp_params(rng)
    v = {k: rng.standard_normal(a.shape) for k, a in params.items()}
    X = rng.standard_normal((5, 4))
    Y = np.eye(3)[rng.integers(0, 3, 5)]
    pf_act, torch_act = _ACT[act]
    loss = _pf_mlp_loss(pf_act, X, Y)
    p = {k: pf.from_numpy(a) for k, a in params.items()}
    pv = {k: pf.from_numpy(a) for k, a in v.items()}

    # forward-over-reverse: jvp of grad
    _, hvp_fwd = pf.jvp(pf.grad(loss), (p,), (pv,))

    # reverse-over-reverse: grad of <grad, v>
    def gv(q: dict) -> pf.Tensor:
        g = pf.grad(loss)(q)
        return pf.stack([(g[k] * pv[k]).sum() for k in _KEYS]).sum()
    hvp_rev = pf.grad(gv)(p)
    value, grads = pf.value_and_grad(loss)(p)
    pf.eval(value, *grads.values(), *hvp_fwd.values(), *hvp_rev.values())

    tl = _torch_mlp_loss(torch_act, X, Y)
    tp = tuple(to_torch(params[k]) for k in _KEYS)
    tv = tuple(to_torch(v[k]) for k in _KEYS)
    t_value, t_hvp = torch.autograd.functional.hvp(tl, tp, tv)
    t_grads = torch.autograd.functional.vjp(tl, tp)[1]
    close(value, t_value, 1e-12, 1e-12, "loss")
    for k, tg, th in zip(_KEYS, t_grads, t_hvp):
        close(grads[k], tg, 1e-10, 1e-12, f"{act}: gradient {k}")
        close(hvp_fwd[k], th, 1e-9, 1e-11, f"{act}: Hv (jvp of grad) {k}")
        close(hvp_rev[k], th, 1e-9, 1e-11, f"{act}: Hv (grad of <grad, v>) {k}")


def test_hessian_jacrev_jacfwd_match_torch() -> None:
    rng = np.random.default_rng(3)
    A = rng.standard_normal((4, 3))
    x = rng.standard_normal(4)

    def pf_f(x: pf.Tensor) -> pf.Tensor:
        return pf.logsumexp(pf.tanh(x) @ pf.from_numpy(A), 0) + (x ** 3).sum() * 0.1

    def torch_f(x: torch.Tensor) -> torch.Tensor:
        return torch.logsumexp(torch.tanh(x) @ to_torch(A), 0) + (x ** 3).sum() * 0.1

    def pf_vec(x: pf.Tensor) -> pf.Tensor:
        return pf.softmax(x.sin() @ pf.from_numpy(A), 0) * x[:3]

    def torch_vec(x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x.sin() @ to_torch(A), 0) * x[:3]

    px, tx = pf.from_numpy(x), to_torch(x)
    close(pf.hessian(pf_f)(px), torch.autograd.functional.hessian(torch_f, tx), 1e-10, 1e-12,
          "hessian")
    tj = torch.autograd.functional.jacobian(torch_vec, tx)
    close(pf.jacrev(pf_vec)(px), tj, 1e-10, 1e-12, "jacrev")
    close(pf.jacfwd(pf_vec)(px), tj, 1e-10, 1e-12, "jacfwd")


@pytest.mark.parametrize("name", ["tanh", "sigmoid", "gelu", "erf", "log", "rsqrt"])
def test_third_derivative_matches_torch(name: str) -> None:
    pf_fn, torch_fn, domain = UNARY[name]
    x = draw_array(np.random.default_rng(4), (5,), domain)

    def d(f: Callable) -> Callable:
        return lambda x: pf.grad(lambda y: f(y).sum())(x)

    got = d(d(d(pf_fn)))(pf.from_numpy(x))
    t = to_torch(x, True)
    (g1,) = torch.autograd.grad(torch_fn(t).sum(), t, create_graph=True)
    (g2,) = torch.autograd.grad(g1.sum(), t, create_graph=True)
    (g3,) = torch.autograd.grad(g2.sum(), t)
    close(got, g3, 1e-9, 1e-10, f"d3 {name}")


# ---------------------------------------------------------------- other dtypes, extremes

_LOW_TOL = {"float32": 2e-5, "float16": 4e-3, "bfloat16": 3e-2}


@pytest.mark.parametrize("dtype", [pf.float32, pf.float16, pf.bfloat16], ids=lambda d: d.name)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_grad_in_low_precision_matches_torch(name: str, dtype: pf.DType) -> None:
    """The rules build their constants and masks in the operand's dtype."""
    pf_fn, torch_fn, domain = UNARY[name]
    x = draw_array(np.random.default_rng(5), (3, 4), domain).astype(dtype.np)
    c = draw_array(np.random.default_rng(6), (3, 4)).astype(dtype.np)
    _, vjp_fn = pf.vjp(pf_fn, pf.from_numpy(x))
    (g,) = vjp_fn(pf.from_numpy(c))
    assert g.dtype is dtype
    t = to_torch(x, True)
    (tg,) = torch.autograd.grad(torch_fn(t), t, to_torch(c))
    tol = _LOW_TOL[dtype.name]
    close(g, tg.double(), tol, tol, f"{name} in {dtype.name}")


def _masked(x: Any, lib: Any) -> Any:
    mask = np.zeros((3, 5))
    mask[:, 1] = -np.inf
    mask[2, :] = -np.inf  # a row of nothing but -inf
    return x + (pf.from_numpy(mask) if lib is pf else to_torch(mask))


EXTREMES: dict[str, tuple[Callable, Callable]] = {
    "softmax_large": (lambda x: pf.softmax(x * 40, 1), lambda x: torch.softmax(x * 40, 1)),
    "log_softmax_large": (lambda x: pf.log_softmax(x * 40, 0),
                          lambda x: torch.log_softmax(x * 40, 0)),
    "logsumexp_large": (lambda x: pf.logsumexp(x * 300, 1), lambda x: torch.logsumexp(x * 300, 1)),
    "sigmoid_large": (lambda x: pf.sigmoid(x * 40), lambda x: torch.sigmoid(x * 40)),
    "tanh_large": (lambda x: pf.tanh(x * 40), lambda x: torch.tanh(x * 40)),
    "gelu_large": (lambda x: pf.gelu(x * 40), lambda x: F.gelu(x * 40)),
    "erf_large": (lambda x: pf.erf(x * 10), lambda x: torch.erf(x * 10)),
    "softmax_masked": (lambda x: pf.softmax(_masked(x, pf), 1),
                       lambda x: torch.softmax(_masked(x, torch), 1)),
    "log_softmax_masked": (lambda x: pf.log_softmax(_masked(x, pf), 1)[:, 2:],
                           lambda x: torch.log_softmax(_masked(x, torch), 1)[:, 2:]),
    "logsumexp_masked": (lambda x: pf.logsumexp(_masked(x, pf), 1),
                         lambda x: torch.logsumexp(_masked(x, torch), 1)),
    "amax_masked": (lambda x: pf.amax(_masked(x, pf), 1),
                    lambda x: torch.amax(_masked(x, torch), 1)),
}


@pytest.mark.parametrize("name", list(EXTREMES))
def test_extreme_inputs_match_torch(name: str) -> None:
    """Large logits and -inf masks: gradients finite where torch's are, NaN where
    torch's are (a row of nothing but -inf)."""
    pf_fn, torch_fn = EXTREMES[name]
    x = draw_array(np.random.default_rng(7), (3, 5))
    ex = Example([x], pf_fn, torch_fn, name)
    c = np.random.default_rng(8).uniform(-1, 1, np.shape(torch_fn(to_torch(x))))
    g = pf.grad(pf_loss(ex, [c]))(pf.from_numpy(x))
    _, (tg,) = torch_vjp(ex, [c])
    assert np.isfinite(tg[:2]).all()
    close(g, tg, 1e-9, 1e-9, f"{name}: gradient")


# ---------------------------------------------------------------- coverage of the rule tables

def _recorded_ops(tensors: list) -> set[str]:
    """Names of the ops recorded to compute ``tensors`` (a walk of the lazy graph)."""
    names: set[str] = set()
    seen: set[int] = set()
    stack = list(tensors)
    while stack:
        t = stack.pop()
        node = t._node
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.add(node.op.name)
        stack.extend(node.inputs)
    return names


def test_every_op_has_rules_or_is_marked_not_differentiable() -> None:
    """Issue 4: every pyflame op has a VJP and a JVP rule, or is listed as not
    differentiable. (The fused ops are made by the fusion pass, which runs after
    the autodiff expansion: differentiation never sees them.)"""
    assert set(ad.VJP) == set(ad.JVP)
    missing = sorted(n for n, op in OPS.items()
                     if op not in ad.VJP and op not in ad.NONDIFF and op.family != "fused")
    assert not missing, f"ops without derivative rules: {missing}"


def test_every_rule_is_exercised_by_a_case(lazy: None) -> None:
    """A new op with derivative rules needs a case here (or in NONDIFF_PATHS).
    It reads the recorded graphs: lazy mode even under PYFLAME_EAGER=1."""
    seen: set[str] = set()

    # a fixed number of draws, not PYFLAME_TEST_SCALE's: what this checks is
    # structural, and fewer draws may miss a rule a case does reach
    @settings(max_examples=8, deadline=None, database=None,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def collect(data: st.DataObject) -> None:
        for name in NAMES:
            seen.update(_recorded_ops(output_specs(CASES[name](data))))

    collect()
    x = pf.from_numpy(_x((4, 4)))
    for pf_fn, _ in NONDIFF_PATHS.values():
        seen |= _recorded_ops([pf_fn(x)])
    # indexing records slice whatever the drawn cases (few examples under
    # PYFLAME_TEST_SCALE may draw none that slices); pad is the transpose of
    # slice: its rules run in grad of grad of indexing
    seen |= _recorded_ops([x[1:, ::2]])
    _, vjp_fn = pf.vjp(lambda y: y[1:, ::2], x)
    (ct,) = vjp_fn(pf.from_numpy(_x((3, 2))))
    text = pf.to_mlir([ct], optimize=True)
    seen |= set(re.findall(r"pyflame\.(\w+)", text))
    # max_pool_grad and gelu_grad are max_pool's and gelu's VJPs: their rules run
    # in grad of grad of the max_pool and gelu cases
    for fn, shape in ((lambda y: pf.nn.functional.max_pool2d(y, 2), (1, 2, 2)),
                      (pf.gelu, (1, 4, 4))):
        _, vjp_fn = pf.vjp(fn, x.reshape(1, 4, 4))
        (ct,) = vjp_fn(pf.from_numpy(_x(shape)))
        seen |= set(re.findall(r"pyflame\.(\w+)", pf.to_mlir([ct], optimize=True)))
    rules = {op.name for op in ad.VJP if op.family != "fused"}
    assert not rules - seen, f"derivative rules no case exercises: {sorted(rules - seen)}"
