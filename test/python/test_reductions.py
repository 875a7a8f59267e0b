"""Reductions, scans and sorting of ``pyflame_mlir/reductions.py`` against torch.

* forward values (and indices on tie-free data, or where torch defines them:
  a stable sort, cummax's latest index) over hypothesis-drawn shapes, dims,
  keepdim and dtypes, lazy and eager;
* special values: NaN (sort puts it last, median propagates it, nanmedian and
  nansum skip it), zeros in prod/cumprod, empty dims (raise or return as torch);
* float64 gradients (VJP and JVP) against torch and finite differences, prod
  and cumprod with one and several zeros, sort/topk/kthvalue/median routing
  the cotangent to the selected elements, and second order for a few.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from _grad_oracles import (
    Example,
    close,
    draw_array,
    draw_cotangents,
    f64,
    fd_directional,
    fd_gradient,
    forward,
    like,
    outputs,
    pf_loss,
    seeds,
    shapes,
    torch_jvp,
    torch_vjp,
    vdot,
)
from _oracles import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyflame_mlir.dialects import OPS
from pyflame_mlir.dialects.dtypes import dtype as to_dtype
from pyflame_mlir.dialects.scan import SCANS

import pyflame_mlir as pf

SETTINGS = settings(max_examples=examples(5), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])
FEW = settings(SETTINGS, max_examples=examples(2))


def rng_of(data: st.DataObject) -> np.random.Generator:
    return np.random.default_rng(data.draw(seeds, label="seed"))


def with_zeros(rng: np.random.Generator, x: np.ndarray, zeros: int) -> np.ndarray:
    """``x`` with ``zeros`` entries set to 0 (the interesting cases of prod/cumprod)."""
    x = x.copy()
    if x.size:
        flat = x.reshape(-1)
        flat[rng.choice(x.size, size=min(zeros, x.size), replace=False)] = 0.0
    return x


# ---------------------------------------------------------------- gradient cases

Draw = Callable[[st.DataObject], Example]
CASES: dict[str, Draw] = {}


def case(name: str) -> Callable[[Draw], Draw]:
    def register(fn: Draw) -> Draw:
        CASES[name] = fn
        return fn
    return register


def _dim_of(data: st.DataObject, ndim: int) -> int:
    return data.draw(st.integers(-max(ndim, 1), max(ndim, 1) - 1), label="dim")


@case("prod")
def _prod(data: st.DataObject) -> Example:
    shape = data.draw(shapes(max_dims=3), label="shape")
    dim = data.draw(st.none() | st.integers(-max(len(shape), 1), max(len(shape), 1) - 1))
    keepdim = data.draw(st.booleans(), label="keepdim")
    rng = rng_of(data)
    x = with_zeros(rng, draw_array(rng, shape, "any"), data.draw(st.integers(0, 3), "zeros"))
    if dim is None:
        return Example([x], lambda x: pf.prod(x), torch.prod, "prod()")
    return Example([x], lambda x: x.prod(dim, keepdim=keepdim),
                   lambda x: torch.prod(x, dim, keepdim=keepdim), f"prod({dim}, {keepdim})")


def _var_case(name: str, pf_fn: Callable, torch_fn: Callable) -> None:
    @case(name)
    def draw(data: st.DataObject) -> Example:
        shape = data.draw(shapes(min_dims=1, max_dims=3, min_side=3), label="shape")
        dims = data.draw(st.lists(st.integers(0, len(shape) - 1), min_size=1, unique=True))
        keepdim = data.draw(st.booleans(), label="keepdim")
        spelling = data.draw(st.sampled_from([{}, {"correction": 0}, {"correction": 2},
                                              {"unbiased": False}, {"unbiased": True}]))
        x = draw_array(rng_of(data), shape, "any")
        return Example([x], lambda x: pf_fn(x, tuple(dims), keepdim=keepdim, **spelling),
                       lambda x: torch_fn(x, tuple(dims), keepdim=keepdim, **spelling),
                       f"{name}({dims}, {keepdim}, {spelling})")


_var_case("var", pf.var, torch.var)
_var_case("std", lambda x, *a, **k: x.std(*a, **k), torch.std)
_var_case("var_mean", pf.var_mean, torch.var_mean)
_var_case("std_mean", pf.std_mean, torch.std_mean)


def _nan_reduction_case(name: str, pf_fn: Callable, torch_fn: Callable) -> None:
    @case(name)
    def draw(data: st.DataObject) -> Example:
        shape = data.draw(shapes(min_dims=1, max_dims=3), label="shape")
        dim = _dim_of(data, len(shape))
        keepdim = data.draw(st.booleans(), label="keepdim")
        rng = rng_of(data)
        x = draw_array(rng, shape, "any")
        x[rng.random(shape) < 0.2] = np.nan
        return Example([x], lambda x: pf_fn(x, dim, keepdim=keepdim),
                       lambda x: torch_fn(x, dim, keepdim=keepdim), f"{name}({dim}, {keepdim})")


_nan_reduction_case("nansum", pf.nansum, torch.nansum)


def _scan_case(name: str, pf_fn: Callable, torch_fn: Callable, domain: str = "any",
               zeros: bool = False) -> None:
    @case(name)
    def draw(data: st.DataObject) -> Example:
        shape = data.draw(shapes(max_dims=3), label="shape")
        dim = _dim_of(data, len(shape))
        rng = rng_of(data)
        x = draw_array(rng, shape, domain)
        if zeros:
            x = with_zeros(rng, x, data.draw(st.integers(0, 3), label="zeros"))
        return Example([x], lambda x: pf_fn(x, dim), lambda x: torch_fn(x, dim),
                       f"{name}(dim={dim})")


_scan_case("cumsum", pf.cumsum, torch.cumsum)
_scan_case("cumsum_method", lambda x, d: x.cumsum(d), torch.cumsum)
_scan_case("cumprod", pf.cumprod, torch.cumprod, zeros=True)
_scan_case("logcumsumexp", pf.logcumsumexp, torch.logcumsumexp)
_scan_case("cummax", lambda x, d: pf.cummax(x, d).values,
           lambda x, d: torch.cummax(x, d).values, "distinct")
_scan_case("cummin", lambda x, d: x.cummin(d)[0], lambda x, d: torch.cummin(x, d)[0],
           "distinct")
_scan_case("sort", lambda x, d: pf.sort(x, d).values, lambda x, d: torch.sort(x, d).values,
           "distinct")
_scan_case("sort_descending", lambda x, d: x.sort(d, descending=True)[0],
           lambda x, d: torch.sort(x, d, descending=True)[0], "distinct")
_scan_case("msort", lambda x, d: pf.msort(x), lambda x, d: torch.msort(x), "distinct")


@case("topk")
def _topk(data: st.DataObject) -> Example:
    shape = data.draw(shapes(min_dims=1, max_dims=3), label="shape")
    dim = _dim_of(data, len(shape))
    k = data.draw(st.integers(0, shape[dim]), label="k")
    largest = data.draw(st.booleans(), label="largest")
    x = draw_array(rng_of(data), shape, "distinct")
    return Example([x], lambda x: pf.topk(x, k, dim, largest=largest).values,
                   lambda x: torch.topk(x, k, dim, largest=largest).values,
                   f"topk({k}, {dim}, largest={largest})")


@case("kthvalue")
def _kthvalue(data: st.DataObject) -> Example:
    shape = data.draw(shapes(min_dims=1, max_dims=3), label="shape")
    dim = _dim_of(data, len(shape))
    k = data.draw(st.integers(1, shape[dim]), label="k")
    keepdim = data.draw(st.booleans(), label="keepdim")
    x = draw_array(rng_of(data), shape, "distinct")
    return Example([x], lambda x: x.kthvalue(k, dim, keepdim).values,
                   lambda x: torch.kthvalue(x, k, dim, keepdim).values,
                   f"kthvalue({k}, {dim}, {keepdim})")


@case("median")
def _median(data: st.DataObject) -> Example:
    shape = data.draw(shapes(max_dims=3), label="shape")
    x = draw_array(rng_of(data), shape, "distinct")
    if data.draw(st.booleans(), label="global"):
        return Example([x], pf.median, torch.median, "median()")
    dim = _dim_of(data, len(shape))
    keepdim = data.draw(st.booleans(), label="keepdim")
    return Example([x], lambda x: pf.median(x, dim, keepdim).values,
                   lambda x: torch.median(x, dim, keepdim).values, f"median({dim}, {keepdim})")


@case("nanmedian")
def _nanmedian(data: st.DataObject) -> Example:
    shape = data.draw(shapes(min_dims=1, max_dims=2), label="shape")
    rng = rng_of(data)
    x = draw_array(rng, shape, "distinct")
    x[rng.random(shape) < 0.3] = np.nan
    dim = _dim_of(data, len(shape))
    return Example([x], lambda x: pf.nanmedian(x, dim).values,
                   lambda x: torch.nanmedian(x, dim).values, f"nanmedian({dim})")


@case("max_dim_ties")
def _max_ties(data: st.DataObject) -> Example:
    """torch.max(dim) sends the whole cotangent to the index it returns (the first)."""
    shape = data.draw(shapes(min_dims=1, max_dims=2), label="shape")
    dim = _dim_of(data, len(shape))
    x = np.round(draw_array(rng_of(data), shape, "any"))  # few values: many ties
    return Example([x], lambda x: pf.max(x, dim).values, lambda x: torch.max(x, dim).values,
                   f"max(dim={dim}) with ties", fd_rtol=np.inf, fd_atol=np.inf)


@case("amax_ties")
def _amax_ties(data: st.DataObject) -> Example:
    """torch.amax splits the cotangent evenly among the tied maxima."""
    shape = data.draw(shapes(min_dims=1, max_dims=2), label="shape")
    x = np.round(draw_array(rng_of(data), shape, "any"))
    return Example([x], lambda x: pf.amax(x, -1), lambda x: torch.amax(x, -1),
                   "amax with ties", fd_rtol=np.inf, fd_atol=np.inf)


NAMES = sorted(CASES)
# a derivative at a tie is one-sided: finite differences do not apply
NO_FD = {"max_dim_ties", "amax_ties"}


def _draw(name: str, data: st.DataObject) -> Example:
    return CASES[name](data)


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
    for o, t in zip(forward(ex, ex.arrays), t_outs):
        close(o, t, ex.rtol, ex.atol, f"{what}: forward vs torch")
    for i, (g, tg) in enumerate(zip(grads, t_grads)):
        close(g, tg, ex.rtol, ex.atol, f"{what}: grad of input {i} vs torch.autograd")
    if name not in NO_FD and all(np.isfinite(f64(o)).all() for o in t_outs):
        for i, (g, fd) in enumerate(zip(grads, fd_gradient(ex, cts))):
            close(g, fd, ex.fd_rtol, ex.fd_atol, f"{what}: grad {i} vs finite differences")


@pytest.mark.parametrize("name", NAMES)
@SETTINGS
@given(data=st.data())
def test_jvp_vs_torch_and_vjp(name: str, data: st.DataObject) -> None:
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
    elif isinstance(out2, tuple):  # the cotangent has the output's structure (as JAX)
        ct_tree = tuple(ct_tree) if type(out2) is tuple else type(out2)(*ct_tree)
    vjps = vjp_fn(ct_tree)
    pf.eval(*outputs(out), *tout, *vjps)
    what = ex.describe()
    for i, (t, tt) in enumerate(zip(tout, torch_jvp(ex, tangents))):
        close(t, tt, ex.rtol, ex.atol, f"{what}: jvp output {i} vs torch.func.jvp")
    finite = all(np.isfinite(f64(o)).all() for o in outputs(out))
    if name not in NO_FD and finite:
        for i, (t, fd) in enumerate(zip(tout, fd_directional(ex, tangents))):
            close(t, fd, ex.fd_rtol, ex.fd_atol, f"{what}: jvp {i} vs finite differences")
    if finite:
        lhs, rhs = vdot(tangents, vjps), vdot(tout, cts)
        assert abs(lhs - rhs) <= 1e-8 * (1 + abs(lhs)), f"{what}: <t, vjp(c)> != <jvp(t), c>"


@pytest.mark.parametrize("name", ["prod", "cumprod", "cumsum", "logcumsumexp", "sort",
                                  "median", "std"])
@FEW
@given(data=st.data())
def test_second_order(name: str, data: st.DataObject) -> None:
    """grad of <d, grad <c, f>> against torch's double backward."""
    ex = _draw(name, data)
    # (second order at zeros of prod/cumprod is not torch's: our first-order rule
    # is exact there, but its own derivative drops the terms through the zeros)
    ex.arrays[0][ex.arrays[0] == 0] = 0.5
    rng = rng_of(data)
    cts = draw_cotangents(rng, ex)
    (d,) = [like(rng, pf.from_numpy(a)) for a in ex.arrays]
    inner = pf.grad(pf_loss(ex, cts))

    def outer(x: pf.Tensor) -> pf.Tensor:
        return (inner(x) * pf.from_numpy(d)).sum().astype(pf.float64)

    hv = pf.grad(outer)(pf.from_numpy(ex.arrays[0]))
    tx = torch.tensor(ex.arrays[0], requires_grad=True)
    loss = sum((o * torch.tensor(c)).sum() for o, c in zip(outputs(ex.torch_fn(tx)), cts))
    (g,) = torch.autograd.grad(loss, tx, create_graph=True)
    if not g.requires_grad:  # torch's gradient is constant in x (sort, median, cumsum)
        close(hv, np.zeros_like(ex.arrays[0]), 1e-8, 1e-10, f"{ex.describe()}: H d")
        return
    (th,) = torch.autograd.grad((g * torch.tensor(d)).sum(), tx, allow_unused=True)
    expect = np.zeros_like(ex.arrays[0]) if th is None else th.detach().numpy()
    close(hv, expect, 1e-7, 1e-9, f"{ex.describe()}: H d vs torch double backward")


# ---------------------------------------------------------------- forward values

DTYPES = {"float32": (np.float32, torch.float32), "float64": (np.float64, torch.float64),
          "int32": (np.int32, torch.int32), "int64": (np.int64, torch.int64),
          "bool": (np.bool_, torch.bool)}


def _data(rng: np.random.Generator, shape: tuple[int, ...], dtype: str,
          distinct: bool = False) -> np.ndarray:
    n = int(np.prod(shape, dtype=np.int64))
    if dtype == "bool":
        return np.asarray(rng.random(shape) > 0.5)
    if distinct:
        v = rng.permutation(n).reshape(shape) - n // 2
    else:
        v = rng.integers(-3, 4, shape)
    if dtype.startswith("float") and not distinct:
        v = v + rng.choice([0.0, 0.5], shape)
    return np.asarray(v).astype(DTYPES[dtype][0])


class Checks:
    """Pairs (pyflame result, torch result) evaluated together: one graph per
    test example instead of one per op (lazy mode compiles once)."""

    def __init__(self) -> None:
        self.pairs: list[tuple[Any, torch.Tensor, str]] = []

    def __call__(self, got: Any, want: torch.Tensor, what: str) -> None:
        self.pairs.append((got, want, what))

    def run(self) -> None:
        pf.eval(*[g for g, _, _ in self.pairs])
        for got, want, what in self.pairs:
            _same(got, want, what)


def _same(got: Any, want: torch.Tensor, what: str) -> None:
    got_np = got.numpy()
    want_np = want.numpy()
    assert got_np.shape == want_np.shape, f"{what}: shape {got_np.shape} != {want_np.shape}"
    assert got_np.dtype == want_np.dtype, f"{what}: dtype {got_np.dtype} != {want_np.dtype}"
    if got_np.dtype.kind == "f":
        np.testing.assert_allclose(got_np, want_np, rtol=1e-5, atol=1e-6, equal_nan=True,
                                   err_msg=what)
    else:
        np.testing.assert_array_equal(got_np, want_np, err_msg=what)


@SETTINGS
@given(shape=shapes(max_dims=3, min_side=0), dtype=st.sampled_from(sorted(DTYPES)),
       seed=seeds, data=st.data())
def test_reductions_match_torch(shape: tuple[int, ...], dtype: str, seed: int,
                                data: st.DataObject, mode: str) -> None:
    _same = Checks()
    x = _data(np.random.default_rng(seed), shape, dtype)
    px, tx = pf.from_numpy(x), torch.from_numpy(x)
    ndim = len(shape)
    dim = data.draw(st.integers(-max(ndim, 1), max(ndim, 1) - 1), label="dim")
    dims = tuple(data.draw(st.lists(st.integers(0, max(ndim - 1, 0)), unique=True,
                                    max_size=ndim), label="dims")) if ndim else ()
    keepdim = data.draw(st.booleans(), label="keepdim")
    _same(pf.prod(px), torch.prod(tx), "prod()")
    _same(pf.prod(px, dim, keepdim), torch.prod(tx, dim, keepdim), "prod(dim)")
    if dtype != "bool":
        _same(pf.prod(px, dim, dtype=pf.float64), torch.prod(tx, dim, dtype=torch.float64),
              "prod(dtype=)")
    for name in ("all", "any"):
        _same(getattr(pf, name)(px), getattr(torch, name)(tx), f"{name}()")
        if dims:
            _same(getattr(px, name)(dims, keepdim), getattr(torch, name)(tx, dims, keepdim),
                  f"{name}({dims}, {keepdim})")
    _same(pf.count_nonzero(px, dims or None), torch.count_nonzero(tx, dims or None),
          "count_nonzero")
    for name in ("cumsum", "cumprod"):
        _same(getattr(pf, name)(px, dim), getattr(torch, name)(tx, dim), name)
        if dtype != "bool":
            _same(getattr(px, name)(dim, dtype=pf.float64),
                  getattr(torch, name)(tx, dim, dtype=torch.float64), f"{name}(dtype=)")
    if dtype.startswith("float"):
        for name in ("var", "std"):
            for kw in ({}, {"correction": 0}, {"unbiased": False}):
                with np.errstate(all="ignore"):
                    _same(getattr(pf, name)(px, dims or None, keepdim=keepdim, **kw),
                          getattr(torch, name)(tx, dims or None, keepdim=keepdim, **kw),
                          f"{name}({dims}, {kw})")
        _same(pf.logcumsumexp(px, dim), torch.logcumsumexp(tx, dim), "logcumsumexp")
        _same(pf.nansum(px, dims or None, keepdim), torch.nansum(tx, dims or None, keepdim),
              "nansum")
        if x.size:
            _same(pf.nanmean(px, dims or None, keepdim),
                  torch.nanmean(tx, dims or None, keepdim), "nanmean")
        if dims:
            _same(pf.logsumexp(px, dims, keepdim), torch.logsumexp(tx, dims, keepdim),
                  f"logsumexp({dims})")
    if x.size and (not ndim or shape[dim]):
        for name in ("cummax", "cummin"):  # ties: torch's index is the latest
            got, want = getattr(pf, name)(px, dim), getattr(torch, name)(tx, dim)
            _same(got.values, want.values, f"{name} values")
            _same(got.indices, want.indices, f"{name} indices")
        if dtype != "bool":
            got, want = pf.aminmax(px, dim=dim, keepdim=keepdim), \
                torch.aminmax(tx, dim=dim, keepdim=keepdim)
            _same(got.min, want.min, "aminmax min")
            _same(got.max, want.max, "aminmax max")
    _same.run()



@SETTINGS
@given(shape=shapes(max_dims=3, min_side=0), dtype=st.sampled_from(sorted(DTYPES)),
       seed=seeds, data=st.data())
def test_sorting_matches_torch(shape: tuple[int, ...], dtype: str, seed: int,
                               data: st.DataObject, mode: str) -> None:
    _same = Checks()
    rng = np.random.default_rng(seed)
    ndim = len(shape)
    dim = data.draw(st.integers(-max(ndim, 1), max(ndim, 1) - 1), label="dim")
    descending = data.draw(st.booleans(), label="descending")
    ties = _data(rng, shape, dtype)
    pt, tt = pf.from_numpy(ties), torch.from_numpy(ties)
    # with ties, a stable sort's indices are defined: torch's stable=True
    got, want = pf.sort(pt, dim, descending, stable=True), \
        torch.sort(tt, dim=dim, descending=descending, stable=True)
    _same(got.values, want.values, "sort values (ties)")
    _same(got.indices, want.indices, "stable sort indices (ties)")
    _same(pt.argsort(dim, descending, stable=True),
          torch.argsort(tt, dim=dim, descending=descending, stable=True), "argsort")
    if dtype == "bool":
        _same.run()
        return
    distinct = _data(rng, shape, dtype, distinct=True)
    pd, td = pf.from_numpy(distinct), torch.from_numpy(distinct)
    n = shape[dim] if ndim else 1
    if n == 0:
        _same.run()
        return
    k = data.draw(st.integers(1, n), label="k")
    keepdim = data.draw(st.booleans(), label="keepdim")
    for pv, tv, what in ((pt, tt, "ties"), (pd, td, "distinct")):
        got, want = pf.topk(pv, k, dim, largest=descending), torch.topk(tv, k, dim, descending)
        _same(got.values, want.values, f"topk values ({what})")
        got, want = pv.kthvalue(k, dim, keepdim), torch.kthvalue(tv, k, dim, keepdim)
        _same(got.values, want.values, f"kthvalue values ({what})")
        got, want = pf.median(pv, dim, keepdim), torch.median(tv, dim, keepdim)
        _same(got.values, want.values, f"median values ({what})")
        if pv.numel():  # (torch's median of an empty integer tensor is garbage: we raise)
            _same(pf.median(pv), torch.median(tv), f"median() ({what})")
    got, want = pf.topk(pd, k, dim, largest=descending), torch.topk(td, k, dim, descending)
    _same(got.indices, want.indices, "topk indices")
    got, want = pd.kthvalue(k, dim, keepdim), torch.kthvalue(td, k, dim, keepdim)
    _same(got.indices, want.indices, "kthvalue indices")
    got, want = pf.median(pd, dim, keepdim), torch.median(td, dim, keepdim)
    _same(got.indices, want.indices, "median indices")
    _same(pf.msort(pd), torch.msort(td), "msort")
    _same.run()



# ---------------------------------------------------------------- special values

NAN = float("nan")


def test_nan_placement_and_propagation(mode: str) -> None:
    _same = Checks()
    x = np.array([[1.0, NAN, -2.0, NAN, 0.5], [NAN, NAN, NAN, 1.0, 3.0],
                  [2.0, 1.0, 0.0, -0.0, 5.0]], np.float32)
    px, tx = pf.from_numpy(x), torch.from_numpy(x)
    for descending in (False, True):
        got = pf.sort(px, 1, descending)
        want = torch.sort(tx, dim=1, descending=descending, stable=True)
        _same(got.values, want.values, f"sort NaN (descending={descending})")
        _same(got.indices, want.indices, f"sort NaN indices (descending={descending})")
    _same(pf.topk(px, 2, 1).values, torch.topk(tx, 2, 1).values, "topk NaN largest")
    _same(pf.median(px), torch.median(tx), "median() NaN")
    got, want = pf.median(px, 1), torch.median(tx, 1)
    _same(got.values, want.values, "median NaN")
    _same(got.indices, want.indices, "median NaN: index of the first NaN")
    got, want = pf.nanmedian(px, 1), torch.nanmedian(tx, 1)
    _same(got.values, want.values, "nanmedian")
    _same(pf.nanmedian(px), torch.nanmedian(tx), "nanmedian()")
    allnan = np.full((2, 3), NAN, np.float32)
    _same(pf.nanmedian(pf.from_numpy(allnan), 1).values,
          torch.nanmedian(torch.from_numpy(allnan), 1).values, "nanmedian all NaN")
    for name in ("cummax", "cummin"):
        got, want = getattr(pf, name)(px, 1), getattr(torch, name)(tx, 1)
        _same(got.values, want.values, f"{name} NaN")
        _same(got.indices, want.indices, f"{name} NaN indices")
    _same(pf.nansum(px, 1), torch.nansum(tx, 1), "nansum")
    _same(pf.nanmean(px, 1), torch.nanmean(tx, 1), "nanmean")
    _same(pf.nanmean(pf.from_numpy(allnan)), torch.nanmean(torch.from_numpy(allnan)),
          "nanmean all NaN")
    _same(pf.any(px, 1), torch.any(tx, 1), "any (NaN is true)")
    _same(pf.logcumsumexp(px, 1), torch.logcumsumexp(tx, 1), "logcumsumexp NaN")
    big = np.array([0.0, 1000.0, -1000.0, -np.inf, np.inf], np.float64)
    _same(pf.logcumsumexp(pf.from_numpy(big), 0), torch.logcumsumexp(torch.from_numpy(big), 0),
          "logcumsumexp: large spread, infinities")
    _same.run()



def test_empty_dims_raise_or_return_like_torch(mode: str) -> None:
    _same = Checks()
    e = np.zeros((2, 0), np.float32)
    pe, te = pf.from_numpy(e), torch.from_numpy(e)
    for name in ("all", "any", "count_nonzero", "prod", "nansum"):
        _same(getattr(pf, name)(pe, 1), getattr(torch, name)(te, 1), f"{name} over empty")
    _same(pf.cumsum(pe, 1), torch.cumsum(te, 1), "cumsum of empty")
    _same(pf.sort(pe, 1).values, torch.sort(te, 1).values, "sort of empty")
    _same(pf.topk(pe, 0, 1).values, torch.topk(te, 0, 1).values, "topk k=0 of empty")
    _same(pf.median(pe), torch.median(te), "median() of empty: NaN")
    with pytest.raises(ValueError, match="median.*empty"):
        pf.median(pf.from_numpy(np.zeros(0, np.int32)))
    with pytest.raises(ValueError, match="kthvalue.*empty"):
        pf.kthvalue(pe, 1, 1)
    with pytest.raises(ValueError, match="median.*empty"):
        pf.median(pe, 1)
    with pytest.raises(ValueError, match="topk: k = 3 is out of range"):
        pf.topk(pf.from_numpy(np.zeros((2, 2), np.float32)), 3)
    with pytest.raises(ValueError, match="kthvalue: k = 0"):
        pf.kthvalue(pf.from_numpy(np.zeros(3, np.float32)), 0)
    with pytest.raises(ValueError, match="var: expects a floating-point"):
        pf.var(pf.from_numpy(np.zeros(3, np.int32)))
    with pytest.raises(TypeError, match="either unbiased or correction"):
        pf.var(pf.from_numpy(np.zeros(3, np.float32)), 0, True, correction=1)
    _same.run()



def test_zero_d_inputs(mode: str) -> None:
    _same = Checks()
    x = np.array(2.5, np.float32)
    px, tx = pf.from_numpy(x), torch.from_numpy(x)
    for name in ("cumsum", "cumprod", "logcumsumexp"):
        _same(getattr(pf, name)(px, 0), getattr(torch, name)(tx, 0), f"{name} 0-d")
    for name in ("cummax", "sort"):
        got, want = getattr(pf, name)(px, -1), getattr(torch, name)(tx, -1)
        _same(got.values, want.values, f"{name} 0-d")
        _same(got.indices, want.indices, f"{name} 0-d indices")
    _same(pf.kthvalue(px, 1).values, torch.kthvalue(tx, 1).values, "kthvalue 0-d")
    _same(pf.median(px), torch.median(tx), "median 0-d")
    _same(pf.prod(px), torch.prod(tx), "prod 0-d")
    _same.run()



def test_prod_and_cumprod_gradients_with_zeros() -> None:
    """torch's rules, by hand: one zero gets the product of the others, two zeros
    give a zero gradient; cumprod's gradient stops after a prefix's first zero."""
    for row in ([2.0, 0.0, 3.0, 4.0], [0.0, 2.0, 0.0, 5.0], [1.5, -2.0, 3.0, 0.5],
                [0.0, 0.0, 0.0, 0.0], [3.0, 2.0, 0.0, 0.0]):
        x = np.array(row)
        for pf_fn, t_fn in ((pf.prod, torch.prod),
                            (lambda v: pf.cumprod(v, 0).sum(), lambda v: v.cumprod(0).sum())):
            g = pf.grad(pf_fn)(pf.from_numpy(x)).numpy()
            tx = torch.tensor(x, requires_grad=True)
            t_fn(tx).backward()
            np.testing.assert_allclose(g, tx.grad.numpy(), rtol=1e-12, err_msg=str(row))


def test_sort_gradient_goes_to_the_selected_elements() -> None:
    x = np.array([[3.0, 1.0, 2.0, 5.0], [0.5, -1.0, 4.0, 2.5]])
    c = np.array([[1.0, 10.0], [100.0, 1000.0]])

    def loss(v: pf.Tensor) -> pf.Tensor:
        return (pf.topk(v, 2, 1).values * pf.from_numpy(c)).sum()
    g = pf.grad(loss)(pf.from_numpy(x)).numpy()
    np.testing.assert_array_equal(g, [[10, 0, 0, 1], [0, 0, 100, 1000]])


# ---------------------------------------------------------------- scan decompositions

class NumpyBuilder:
    """The builder interface of ``dialects/ad.py`` over numpy (each op's reference
    kernel after its shape rule): runs the decompositions the MAX and linalg
    lowerings use, to compare them with the primitives' kernels."""

    def shape(self, v: np.ndarray) -> tuple[int, ...]:
        return tuple(v.shape)

    def dtype(self, v: np.ndarray) -> pf.DType:
        return to_dtype(v.dtype)

    def op(self, name: str, *inputs: np.ndarray, **attrs: Any) -> Any:
        opdef = OPS[name]
        specs = opdef.check([self.shape(v) for v in inputs], [self.dtype(v) for v in inputs],
                            attrs)
        out = opdef.kernel(*inputs, **attrs)
        outs = [np.asarray(o) for o in (out if opdef.num_results != 1 else (out,))]
        assert [(o.shape, to_dtype(o.dtype)) for o in outs] == list(specs), name
        return outs[0] if opdef.num_results == 1 else outs

    def scalar(self, value: float, like: np.ndarray) -> np.ndarray:
        return np.asarray(value, dtype=like.dtype)

    def __getattr__(self, name: str) -> Any:
        if name in OPS:
            return lambda *inputs, **attrs: self.op(name, *inputs, **attrs)
        raise AttributeError(name)


@pytest.mark.parametrize("name", sorted(SCANS))
@SETTINGS
@given(shape=shapes(min_dims=1, max_dims=3, min_side=0), seed=seeds, data=st.data())
def test_scan_decompositions_give_the_kernel_result(name: str, shape: tuple[int, ...],
                                                   seed: int, data: st.DataObject) -> None:
    rng = np.random.default_rng(seed)
    dim = data.draw(st.integers(0, len(shape) - 1), label="dim")
    dtype = data.draw(st.sampled_from(["float32", "float64", "int32", "bool"]
                                      if name in ("cumsum", "cumprod", "cummax", "cummin")
                                      else ["float32", "float64"]))
    x = _data(rng, shape, dtype)
    if dtype.startswith("float") and x.size:
        x.reshape(-1)[rng.random(x.size) < 0.2] = np.nan  # NaN placement and propagation
    attrs: dict[str, Any] = {"dim": dim}
    if name in ("cumsum", "logcumsumexp"):
        attrs["reverse"] = data.draw(st.booleans(), label="reverse")
    got = outputs(SCANS[name](NumpyBuilder(), [x], **attrs))
    want = outputs(OPS[name].kernel(x, **attrs))
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, f"{name}: {g.dtype}{g.shape}"
        np.testing.assert_allclose(g, w, rtol=1e-6, equal_nan=True, err_msg=f"{name} {attrs}")


def test_inplace_scans(mode: str) -> None:
    x = np.array([[1.0, 2.0, 0.5], [3.0, -1.0, 2.0]], np.float32)
    p, t = pf.from_numpy(x.copy()), torch.from_numpy(x.copy())
    alias = p
    assert p.cumsum_(1) is alias
    t.cumsum_(1)
    np.testing.assert_allclose(p.numpy(), t.numpy())
    p.cumprod_(0, dtype=pf.float32)
    t.cumprod_(0, dtype=torch.float32)
    assert p.dtype is pf.float32
    np.testing.assert_allclose(p.numpy(), t.numpy())
    with pytest.raises(RuntimeError, match="cumsum_: dtype"):
        p.cumsum_(0, dtype=pf.float64)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1024, 128), (16, 64, 8), (40, 256), (16, 7), (4, 512)])
def test_row_sums_kernel_against_torch(dtype: type, shape: tuple[int, ...]) -> None:
    """sum/mean along the last axis (the BLAS row-sum path for rows of 8..256,
    numpy's reduce elsewhere) against torch, contiguous and as a 2-D view with
    a leading dimension, with NaN/inf rows and all -0.0 rows (+0.0 as torch)."""
    from pyflame_mlir.dialects.reduction import _mean, _sum, row_sums

    rng = np.random.default_rng(len(shape) * shape[-1])
    x = rng.standard_normal(shape).astype(dtype) * 10
    x.reshape(-1, shape[-1])[1] = -0.0
    if x.reshape(-1, shape[-1]).shape[0] > 4:
        x.reshape(-1, shape[-1])[2, 3] = np.nan
        x.reshape(-1, shape[-1])[3, 1] = np.inf
        x.reshape(-1, shape[-1])[4, :2] = (np.inf, -np.inf)
    wide = np.concatenate([x.reshape(-1, shape[-1])] * 2, axis=1)
    views = [x, wide[:, :shape[-1]]]
    tol = 2e-6 if dtype == np.float32 else 1e-14
    for v in views:
        last = v.ndim - 1
        t = torch.from_numpy(np.ascontiguousarray(v))
        for keepdim in (True, False):
            for ours, theirs in ((_sum(v, (last,), keepdim), t.sum(-1, keepdim=keepdim)),
                                 (_mean(v, (last,), keepdim), t.mean(-1, keepdim=keepdim))):
                assert ours.dtype == dtype and ours.shape == tuple(theirs.shape)
                ref = theirs.numpy()
                scale = np.abs(v).sum(-1, keepdims=keepdim)
                np.testing.assert_array_equal(np.isnan(ours), np.isnan(ref))
                fin = np.isfinite(ref)
                np.testing.assert_array_equal(ours[~fin & ~np.isnan(ref)],
                                              ref[~fin & ~np.isnan(ref)])
                np.testing.assert_array_less(np.abs(ours - ref)[fin],
                                             tol * scale[fin] + np.finfo(dtype).tiny)
                assert not np.signbit(ours.reshape(-1)[1]) and not np.signbit(ref.reshape(-1)[1])
    taken = row_sums(x) is not None
    assert taken == (8 <= shape[-1] <= 256 and x.size >= 8 * shape[-1])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("shape", "dims"), [((16, 64, 128), (0, 1)), ((1024, 384), (0,)),
                                             ((12544, 32), (0,)), ((4, 8, 3, 5), (0, 1, 2)),
                                             ((3, 100), (0,)), ((64, 2), (0,))])
def test_leading_sums_kernel_against_torch(dtype: type, shape: tuple[int, ...],
                                           dims: tuple[int, ...]) -> None:
    """sum/mean over leading dims (one BLAS ones @ rows product where there are
    8 rows or more and 8 or more elements per row) against torch, with NaN,
    +-inf and all -0.0 columns (+0.0 as torch), contiguous and not."""
    from pyflame_mlir.dialects.reduction import _leading_sums, _mean, _sum

    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal(shape).astype(dtype) * 10
    flat = x.reshape(-1, x[(0,) * len(dims)].size)
    flat[:, 0] = -0.0
    if flat.shape[1] > 3:
        flat[5 % flat.shape[0], 1] = np.nan
        flat[1, 2] = np.inf
        flat[2, 3], flat[0, 3] = np.inf, -np.inf
    tol = 4e-6 if dtype == np.float32 else 1e-14
    for v in (x, np.flip(x, -1)):
        t = torch.from_numpy(np.ascontiguousarray(v))
        for keepdim in (True, False):
            for ours, theirs in ((_sum(v, dims, keepdim), t.sum(dims, keepdim=keepdim)),
                                 (_mean(v, dims, keepdim), t.mean(dims, keepdim=keepdim))):
                ref = theirs.numpy()
                assert ours.dtype == dtype and ours.shape == ref.shape
                np.testing.assert_array_equal(np.isnan(ours), np.isnan(ref))
                inf = np.isinf(ref)
                np.testing.assert_array_equal(ours[inf], ref[inf])
                fin = np.isfinite(ref)
                scale = np.abs(v).sum(dims, keepdims=keepdim)
                np.testing.assert_array_less(np.abs(ours - ref)[fin], tol * scale[fin] + 1e-30)
                if v is x:  # the all -0.0 column
                    assert not np.signbit(ours.reshape(-1)[0])
                    assert not np.signbit(ref.reshape(-1)[0])
    rows = int(np.prod([shape[d] for d in dims]))
    assert (_leading_sums(x, dims, True) is not None) == (rows >= 8 and x.size >= 8 * rows)
