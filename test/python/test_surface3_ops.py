"""The OpInfo ops pf did not map before branch surface3, against torch:
``atleast_1d/2d/3d``, ``hstack vstack row_stack dstack column_stack``,
``isin``, ``trapezoid``/``trapz``/``cumulative_trapezoid``, ``combinations``,
``unravel_index``, ``rsub``, ``angle``, ``Tensor.unfold``,
``adaptive_avg_pool3d``/``adaptive_max_pool3d`` (+ indices) and
``max_unpool3d`` with their modules: values over hypothesis-drawn shapes,
float64 gradients against torch.autograd and central differences, lazy and
eager. (test_opinfo.py also runs torch's OpInfo samples of the ones that have one.)"""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from _grad_oracles import Example, close, fd_gradient, torch_vjp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyflame_mlir as pf

F = pf.nn.functional
_SCALE = float(os.environ.get("PYFLAME_TEST_SCALE", "1"))
EXAMPLES = max(3, round(6 * _SCALE))
_SETTINGS = settings(max_examples=EXAMPLES, deadline=None,
                     suppress_health_check=[HealthCheck.function_scoped_fixture])


def _same(got, want) -> None:
    if isinstance(want, tuple | list):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    g, w = got.numpy(), want.detach().numpy()
    assert g.shape == w.shape and g.dtype == w.dtype, f"{g.dtype}{g.shape} vs {w.dtype}{w.shape}"
    np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12, equal_nan=True)


def _grads(ex: Example, seed: int) -> None:
    rng = np.random.default_rng(seed)
    xs = [pf.from_numpy(a) for a in ex.arrays]
    out = ex.pf_fn(*xs)
    cts = [rng.standard_normal(out.shape)]
    grads = pf.grad(lambda *a: (ex.pf_fn(*a) * pf.from_numpy(cts[0])).sum(),
                    argnums=tuple(range(len(xs))))(*xs)
    _, t_grads = torch_vjp(ex, cts)
    for i, (g, tg, fd) in enumerate(zip(grads, t_grads, fd_gradient(ex, cts))):
        close(g.numpy(), tg, ex.rtol, ex.atol, f"{ex.label}: grad {i} vs torch")
        close(g.numpy(), fd, ex.fd_rtol, ex.fd_atol, f"{ex.label}: grad {i} vs differences")


def _pair(a):
    return pf.from_numpy(np.asarray(a)), torch.tensor(np.asarray(a))


@pytest.mark.parametrize("name", ["atleast_1d", "atleast_2d", "atleast_3d"])
@pytest.mark.parametrize("ndim", [0, 1, 2, 3, 4])
def test_atleast_matches_torch(name, ndim, mode):
    a = np.arange(float(2 ** ndim)).reshape((2,) * ndim)
    p, t = _pair(a)
    ours, theirs = getattr(pf, name), getattr(torch, name)
    _same(ours(p), theirs(t))
    _same(ours(p, p), theirs(t, t))
    _same(ours([p, p]), theirs([t, t]))


@pytest.mark.parametrize("name", ["hstack", "vstack", "row_stack", "dstack", "column_stack"])
@_SETTINGS
@given(ndim=st.integers(0, 3), n=st.integers(1, 3), seed=st.integers(0, 2**31 - 1))
def test_stacks_match_torch_values_and_grads(name, ndim, n, seed, mode):
    rng = np.random.default_rng(seed)
    shape = tuple(rng.integers(1, 4, ndim))
    if name == "column_stack" and ndim > 1:
        shape = shape[:1] + shape[1:]
    arrays = [rng.standard_normal(shape) for _ in range(n)]
    ex = Example(arrays, lambda *xs: _STACKS[name](list(xs)),
                 lambda *xs: getattr(torch, name)(list(xs)), label=f"{name}{shape}")
    _same(ex.pf_fn(*[pf.from_numpy(a) for a in arrays]),
          ex.torch_fn(*[torch.tensor(a) for a in arrays]))
    _grads(ex, seed)


# (the functions themselves, not names: dead-code checks see the uses)
_STACKS = {"hstack": pf.hstack, "vstack": pf.vstack, "row_stack": pf.row_stack,
           "dstack": pf.dstack, "column_stack": pf.column_stack}
_TRAPEZOIDS = {"trapezoid": pf.trapezoid, "trapz": pf.trapz,
               "cumulative_trapezoid": pf.cumulative_trapezoid}


def test_stacks_promote_and_refuse():
    _same(pf.hstack([pf.tensor([1, 2]), pf.tensor([0.5])]),
          torch.hstack([torch.tensor([1, 2]), torch.tensor([0.5])]))
    with pytest.raises(TypeError, match="hstack"):
        pf.hstack(pf.tensor([1, 2]))
    with pytest.raises(pf.ShapeError):
        pf.vstack([pf.zeros((2, 3)), pf.zeros((2, 4))])


@_SETTINGS
@given(n=st.integers(0, 6), m=st.integers(0, 5), invert=st.booleans(),
       seed=st.integers(0, 2**31 - 1))
def test_isin_matches_torch(n, m, invert, seed, mode):
    rng = np.random.default_rng(seed)
    e = rng.integers(-3, 4, (n, 2)).astype(np.float64)
    t = rng.integers(-3, 4, m).astype(np.float64)
    if n and m:
        e[0, 0], t[0] = np.nan, np.nan  # NaN is in nothing
        e[-1, -1] = -0.0
    _same(pf.isin(pf.from_numpy(e), pf.from_numpy(t), invert=invert),
          torch.isin(torch.tensor(e), torch.tensor(t), invert=invert))
    _same(pf.isin(pf.tensor([1, 2, 3]), 2), torch.isin(torch.tensor([1, 2, 3]), 2))


@pytest.mark.parametrize("name", ["trapezoid", "trapz", "cumulative_trapezoid"])
@pytest.mark.parametrize("spacing", ["none", "dx", "x1d", "xfull"])
@pytest.mark.parametrize("dim", [0, -1])
def test_trapezoid_matches_torch_values_and_grads(name, spacing, dim, mode):
    rng = np.random.default_rng(4)
    y = rng.standard_normal((3, 4))
    x1 = np.sort(rng.standard_normal(y.shape[dim]))
    xf = np.sort(rng.standard_normal(y.shape), axis=dim)
    ours, theirs = _TRAPEZOIDS[name], getattr(torch, name)
    if spacing == "none":
        ex = Example([y], lambda a: ours(a, dim=dim), lambda a: theirs(a, dim=dim), label=name)
    elif spacing == "dx":
        ex = Example([y], lambda a: ours(a, dx=0.25, dim=dim),
                     lambda a: theirs(a, dx=0.25, dim=dim), label=name)
    else:
        x = x1 if spacing == "x1d" else xf
        ex = Example([y, x], lambda a, b: ours(a, b, dim=dim), lambda a, b: theirs(a, b, dim=dim),
                     label=f"{name} {spacing}")
    _same(ex.pf_fn(*[pf.from_numpy(a) for a in ex.arrays]),
          ex.torch_fn(*[torch.tensor(a) for a in ex.arrays]))
    _grads(ex, 5)


def test_trapezoid_integers_and_empty():
    _same(pf.trapezoid(pf.tensor([1, 2, 4])), torch.trapezoid(torch.tensor([1, 2, 4])))
    _same(pf.trapezoid(pf.zeros((2, 0))), torch.trapezoid(torch.zeros((2, 0))))
    _same(pf.cumulative_trapezoid(pf.zeros((2, 0))),
          torch.cumulative_trapezoid(torch.zeros((2, 0))))
    with pytest.raises(pf.ShapeError, match="samples"):
        pf.trapezoid(pf.zeros((2, 3)), pf.zeros(4))


@pytest.mark.parametrize("n", [0, 1, 4])
@pytest.mark.parametrize("r", [0, 1, 2, 3, 5])
@pytest.mark.parametrize("with_replacement", [False, True])
def test_combinations_match_torch(n, r, with_replacement):
    a = np.arange(n, dtype=np.float64) * 1.5
    _same(pf.combinations(pf.from_numpy(a), r, with_replacement),
          torch.combinations(torch.tensor(a), r, with_replacement))


def test_combinations_grad_and_refusal(mode):
    a = np.random.default_rng(1).standard_normal(4)
    ex = Example([a], lambda x: pf.combinations(x, 3, True),
                 lambda x: torch.combinations(x, 3, True), label="combinations")
    _grads(ex, 2)
    with pytest.raises(pf.ShapeError, match="1-D"):
        pf.combinations(pf.zeros((2, 2)))


@_SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=0, max_size=3), seed=st.integers(0, 99))
def test_unravel_index_matches_torch(shape, seed, mode):
    size = int(np.prod(shape))
    idx = np.random.default_rng(seed).integers(-2 * size, 2 * size, (2, 3))  # wraps, as torch
    _same(pf.unravel_index(pf.from_numpy(idx), tuple(shape)),
          torch.unravel_index(torch.tensor(idx), tuple(shape)))


def test_unravel_index_refusals():
    with pytest.raises(TypeError, match="integer"):
        pf.unravel_index(pf.tensor([1.0]), (2, 2))
    with pytest.raises(ValueError, match="zero"):
        pf.unravel_index(pf.tensor([1]), (2, 0))


def test_rsub_and_angle_match_torch(mode):
    a, b = np.array([1.0, -2.0, 3.0]), np.array([0.5, 0.5, -1.0])
    _same(pf.rsub(pf.from_numpy(a), pf.from_numpy(b), alpha=2),
          torch.rsub(torch.tensor(a), torch.tensor(b), alpha=2))
    _same(pf.rsub(pf.from_numpy(a), 3), torch.rsub(torch.tensor(a), 3))
    special = np.array([-1.0, 0.0, -0.0, 2.0, np.nan, -np.inf, np.inf])
    _same(pf.angle(pf.from_numpy(special)), torch.angle(torch.tensor(special)))
    _same(pf.tensor([-1, 2]).angle(), torch.tensor([-1, 2]).angle())
    ex = Example([a], lambda x: x.angle() + pf.rsub(x, 1.0),
                 lambda x: x.angle() + torch.rsub(x, 1.0),
                 label="angle, rsub")
    _grads(ex, 3)


@_SETTINGS
@given(ndim=st.integers(0, 3), seed=st.integers(0, 2**31 - 1), data=st.data())
def test_tensor_unfold_matches_torch(ndim, seed, data, mode):
    rng = np.random.default_rng(seed)
    shape = tuple(rng.integers(1, 5, ndim))
    dim = data.draw(st.integers(-max(ndim, 1), max(ndim, 1) - 1))
    n = shape[dim] if ndim else 1
    size = data.draw(st.integers(0, n))
    step = data.draw(st.integers(1, 3))
    a = rng.standard_normal(shape)
    ex = Example([a], lambda x: x.unfold(dim, size, step), lambda x: x.unfold(dim, size, step),
                 label=f"unfold{shape, dim, size, step}")
    _same(ex.pf_fn(pf.from_numpy(a)), ex.torch_fn(torch.tensor(a)))
    _grads(ex, seed)


def test_tensor_unfold_refusals():
    with pytest.raises(pf.ShapeError, match="size"):
        pf.zeros((2, 3)).unfold(1, 4, 1)
    with pytest.raises(ValueError, match="step"):
        pf.zeros((2, 3)).unfold(1, 2, 0)


@pytest.mark.parametrize("output_size", [(2, 3, 2), 1, (3, None, 1)])
def test_adaptive_pool3d_match_torch(output_size, mode):
    rng = np.random.default_rng(6)
    x = rng.integers(-2, 3, (2, 1, 4, 3, 2)).astype(np.float64)  # ties
    x[0, 0, 0, 0, 0] = np.nan
    _same(F.adaptive_avg_pool3d(pf.from_numpy(x), output_size),
          TF.adaptive_avg_pool3d(torch.tensor(x), output_size))
    _same(F.adaptive_max_pool3d(pf.from_numpy(x), output_size, return_indices=True),
          TF.adaptive_max_pool3d(torch.tensor(x), output_size, return_indices=True))
    _same(pf.nn.AdaptiveMaxPool3d(output_size)(pf.from_numpy(x)),
          torch.nn.AdaptiveMaxPool3d(output_size)(torch.tensor(x)))
    _same(pf.nn.AdaptiveAvgPool3d(output_size)(pf.from_numpy(x[0])),
          torch.nn.AdaptiveAvgPool3d(output_size)(torch.tensor(x[0])))


@pytest.mark.parametrize("name", ["adaptive_avg_pool3d", "adaptive_max_pool3d"])
def test_adaptive_pool3d_grads(name):
    y = np.random.default_rng(7).standard_normal((1, 1, 3, 3, 2))
    ex = Example([y], lambda a: getattr(F, name)(a, (2, 2, 1)),
                 lambda a: getattr(TF, name)(a, (2, 2, 1)), label=name)
    _grads(ex, 7)


def test_max_unpool3d_matches_torch(mode):
    x = np.random.default_rng(8).standard_normal((1, 2, 4, 4, 4))
    tv, ti = TF.max_pool3d(torch.tensor(x), 2, return_indices=True)
    v, i = F.max_pool3d(pf.from_numpy(x), 2, return_indices=True)
    _same((v, i), (tv, ti))
    _same(F.max_unpool3d(v, i, 2, output_size=(4, 4, 4)),
          TF.max_unpool3d(tv, ti, 2, output_size=(4, 4, 4)))
    _same(pf.nn.MaxUnpool3d(2)(v, i), torch.nn.MaxUnpool3d(2)(tv, ti))
    ex = Example([tv.numpy()], lambda a: F.max_unpool3d(a, i, 2),
                 lambda a: TF.max_unpool3d(a, ti, 2), label="max_unpool3d")
    _grads(ex, 9)
