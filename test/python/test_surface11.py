"""Session 11's torch functions (``composites3.py``) against torch 2.13:
``gradient`` (values and float64 gradients vs torch.autograd and central
differences), ``histogram``/``histogramdd``, ``index_reduce`` (values,
gradients, errors), ``as_strided`` (values, gradients, writes through the
view), the ``*_copy`` forms, constants, ``range`` and the complex-only ops
that must raise."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from _grad_oracles import Example, close, fd_gradient, torch_vjp

import pyflame_mlir as pf


def _grads(ex: Example, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    xs = [pf.from_numpy(a) for a in ex.arrays]
    out = ex.pf_fn(*xs)
    ct = rng.standard_normal(out.shape)
    grads = pf.grad(lambda *a: (ex.pf_fn(*a) * pf.from_numpy(ct)).sum(),
                    argnums=tuple(range(len(xs))))(*xs)
    _, t_grads = torch_vjp(ex, [ct])
    for i, (g, tg, fd) in enumerate(zip(grads, t_grads, fd_gradient(ex, [ct]))):
        close(g.numpy(), tg, ex.rtol, ex.atol, f"{ex.label}: grad {i} vs torch")
        close(g.numpy(), fd, ex.fd_rtol, ex.fd_atol, f"{ex.label}: grad {i} vs differences")


# ---- gradient ----

_GRAD_CASES = [
    ((7,), {}),
    ((7,), {"spacing": 0.5, "edge_order": 2}),
    ((5, 6), {}),
    ((5, 6), {"dim": 1, "spacing": 2.0}),
    ((5, 6), {"dim": [0, -1], "spacing": [0.5, 3.0], "edge_order": 2}),
    ((3, 4, 5), {"dim": (2, 0), "edge_order": 1}),
    ((3,), {"edge_order": 2}),
    ((2, 3), {"dim": 0}),
]


@pytest.mark.parametrize("shape,kw", _GRAD_CASES)
def test_gradient_uniform(shape, kw):
    a = np.random.default_rng(1).standard_normal(shape)
    got = pf.gradient(pf.from_numpy(a), **kw)
    want = torch.gradient(torch.tensor(a), **kw)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12, atol=1e-12)
    for i in range(len(want)):
        _grads(Example([a], lambda x, i=i: pf.gradient(x, **kw)[i],
                       lambda x, i=i: torch.gradient(x, **kw)[i], f"gradient{shape}{kw}[{i}]"))


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_coordinates(edge_order):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((6, 5))
    c0 = np.cumsum(rng.uniform(0.2, 1.5, 6))
    c1 = np.cumsum(rng.uniform(0.2, 1.5, 5))
    got = pf.gradient(pf.from_numpy(a), spacing=(pf.from_numpy(c0), pf.from_numpy(c1)),
                      edge_order=edge_order)
    want = torch.gradient(torch.tensor(a), spacing=(torch.tensor(c0), torch.tensor(c1)),
                          edge_order=edge_order)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got[0].numpy(), np.gradient(a, c0, axis=0,
                                                           edge_order=edge_order), rtol=1e-10)
    for i in range(2):
        _grads(Example([a], lambda x, i=i: pf.gradient(
            x, spacing=(pf.from_numpy(c0), pf.from_numpy(c1)), edge_order=edge_order)[i],
            lambda x, i=i: torch.gradient(x, spacing=(torch.tensor(c0), torch.tensor(c1)),
                                          edge_order=edge_order)[i], f"coords[{i}]"))


def test_gradient_integer_input_and_errors():
    got = pf.gradient(pf.arange(6) ** 2)
    want = torch.gradient(torch.arange(6) ** 2)
    assert got[0].dtype == pf.float32 and want[0].dtype == torch.float32
    np.testing.assert_allclose(got[0].numpy(), want[0].numpy())
    with pytest.raises(RuntimeError, match="at least edge_order"):
        pf.gradient(pf.ones(2), edge_order=2)
    with pytest.raises(RuntimeError, match="edge_order=1 and edge_order=2"):
        pf.gradient(pf.ones(5), edge_order=3)
    with pytest.raises(RuntimeError, match="same length"):
        pf.gradient(pf.ones(5, 4), spacing=[1.0, 2.0, 3.0])


# ---- histogram ----

@pytest.mark.parametrize("kw", [
    {"bins": 5}, {"bins": 4, "range": (-1.0, 2.0)}, {"bins": 3, "density": True},
    {"bins": 6, "weight": True}, {"bins": 6, "weight": True, "density": True},
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_histogram(kw, dtype):
    rng = np.random.default_rng(3)
    a = rng.standard_normal(40).astype(dtype)
    a[3] = a.max()  # the last edge goes to the last bin
    w = rng.uniform(0, 2, 40).astype(dtype)
    pkw, tkw = dict(kw), dict(kw)
    if kw.get("weight"):
        pkw["weight"], tkw["weight"] = pf.from_numpy(w), torch.tensor(w)
    got = pf.histogram(pf.from_numpy(a), **pkw)
    want = torch.histogram(torch.tensor(a), **tkw)
    assert got.hist.dtype.name == str(want.hist.dtype).split(".")[1]
    np.testing.assert_allclose(got.bin_edges.numpy(), want.bin_edges.numpy(), rtol=0)
    np.testing.assert_allclose(got.hist.numpy(), want.hist.numpy(), rtol=1e-6)
    t = pf.from_numpy(a).histogram(**pkw)
    np.testing.assert_allclose(t.hist.numpy(), want.hist.numpy(), rtol=1e-6)


def test_histogram_edges_and_corner_cases():
    a = np.array([0.5, 1.0, 1.5, 3.0, 7.0, np.nan], dtype=np.float32)
    for bins in ([0.0, 1.0, 2.0, 3.0], [1.0, 1.5, 4.0]):
        got = pf.histogram(pf.from_numpy(a), bins=pf.tensor(bins))
        want = torch.histogram(torch.tensor(a), bins=torch.tensor(bins))
        np.testing.assert_array_equal(got.hist.numpy(), want.hist.numpy())
    for data in ([2.0, 2.0, 2.0], []):
        got = pf.histogram(pf.tensor(data), bins=4)
        want = torch.histogram(torch.tensor(data), bins=4)
        np.testing.assert_array_equal(got.hist.numpy(), want.hist.numpy())
        np.testing.assert_array_equal(got.bin_edges.numpy(), want.bin_edges.numpy())
    with pytest.raises(RuntimeError, match="bins must be > 0"):
        pf.histogram(pf.ones(3), bins=0)
    with pytest.raises(RuntimeError, match="min should not exceed max"):
        pf.histogram(pf.ones(3), bins=2, range=(3.0, 1.0))
    with pytest.raises(RuntimeError, match="not implemented"):
        pf.histogram(pf.arange(3), bins=2)
    with pytest.raises(RuntimeError, match="increase monotonically"):
        pf.histogram(pf.ones(3), bins=pf.tensor([2.0, 1.0]))


def test_histogramdd():
    rng = np.random.default_rng(4)
    pts = rng.standard_normal((30, 2))
    w = rng.uniform(0, 1, 30)
    for kw in ({"bins": [3, 4]}, {"bins": 2, "range": [-1.0, 1.0, -2.0, 2.0]},
               {"bins": [2, 3], "density": True}):
        got = pf.histogramdd(pf.from_numpy(pts), weight=pf.from_numpy(w), **kw)
        want = torch.histogramdd(torch.tensor(pts), weight=torch.tensor(w), **kw)
        np.testing.assert_allclose(got.hist.numpy(), want.hist.numpy(), rtol=1e-12)
        for g, e in zip(got.bin_edges, want.bin_edges):
            np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-15)


# ---- index_reduce ----

@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_index_reduce(reduce, include_self, dim):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 5))
    n = 6
    src_shape = list(x.shape)
    src_shape[dim] = n
    src = rng.standard_normal(src_shape)
    idx = rng.integers(0, x.shape[dim], n)
    got = pf.index_reduce(pf.from_numpy(x), dim, pf.from_numpy(idx), pf.from_numpy(src),
                          reduce, include_self=include_self)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = torch.tensor(x).index_reduce(dim, torch.tensor(idx), torch.tensor(src), reduce,
                                            include_self=include_self)
        _grads(Example([x, src], lambda a, s: a.index_reduce(dim, pf.from_numpy(idx), s, reduce,
                                                             include_self=include_self),
                       lambda a, s: a.index_reduce(dim, torch.tensor(idx), s, reduce,
                                                   include_self=include_self),
                       f"index_reduce {reduce}"))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


def test_index_reduce_in_place_ints_and_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for include_self in (True, False):
            t = torch.arange(12).reshape(3, 4)
            t.index_reduce_(0, torch.tensor([0, 0, 2]), torch.tensor(
                [[1, 2, 3, 4], [2, 2, 2, 2], [-7, 5, 9, 1]]), "mean", include_self=include_self)
            p = pf.arange(12).reshape(3, 4)
            out = p.index_reduce_(0, pf.tensor([0, 0, 2]), pf.tensor(
                [[1, 2, 3, 4], [2, 2, 2, 2], [-7, 5, 9, 1]]), "mean", include_self=include_self)
            assert out is p
            np.testing.assert_array_equal(p.numpy(), t.numpy())
    x = pf.zeros(3, 4)
    with pytest.raises(RuntimeError, match="must match self tensor shape"):
        x.index_reduce(0, pf.tensor([0, 1]), pf.ones(2, 3), "prod")
    with pytest.raises(RuntimeError, match="Expected reduce to be one of"):
        x.index_reduce(0, pf.tensor([0, 1]), pf.ones(2, 4), "sum")
    with pytest.raises(RuntimeError, match="Index is supposed to be a vector"):
        x.index_reduce(0, pf.tensor([[0, 1]]), pf.ones(2, 4), "prod")
    with pytest.raises(IndexError, match="index out of range"):
        x.index_reduce(0, pf.tensor([0, 5]), pf.ones(2, 4), "prod")


# ---- as_strided ----

@pytest.mark.parametrize("size,stride,offset", [
    ((3, 3), (2, 1), 1), ((4, 3), (1, 4), None), ((2, 2, 2), (6, 3, 1), 0), ((5,), (2,), 2),
    ((3, 0), (1, 1), 0),
])
def test_as_strided_values_and_gradients(size, stride, offset):
    a = np.random.default_rng(6).standard_normal(12)
    got = pf.from_numpy(a).as_strided(size, stride, offset)
    want = torch.tensor(a).as_strided(size, stride, offset)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    if 0 not in size:
        _grads(Example([a], lambda x: pf.as_strided(x, size, stride, offset),
                       lambda x: torch.as_strided(x, size, stride, offset), "as_strided"))


def test_as_strided_of_a_view_uses_the_storage_and_writes_through():
    base_t = torch.arange(20.0)
    base_p = pf.arange(20.0)
    vt, vp = base_t[4:12], base_p[4:12]
    st = vt.as_strided((2, 3), (3, 1))  # the view's storage offset (4) by default
    sp = vp.as_strided((2, 3), (3, 1))
    np.testing.assert_array_equal(sp.numpy(), st.numpy())
    st.mul_(-1)
    sp.mul_(-1)
    np.testing.assert_array_equal(base_p.numpy(), base_t.numpy())
    np.testing.assert_array_equal(vp.numpy(), vt.numpy())
    b = pf.arange(6.0)
    c = pf.as_strided_copy(b, (2, 2), (1, 2))
    c.zero_()  # a copy: the base does not change
    np.testing.assert_array_equal(b.numpy(), np.arange(6.0))
    with pytest.raises(RuntimeError, match="out of bounds for storage"):
        pf.zeros(6).as_strided((3, 3), (1, 1), 5)


def test_as_strided_scatter():
    a = np.arange(9.0)
    s = -np.arange(4.0)
    want = torch.as_strided_scatter(torch.tensor(a), torch.tensor(s.reshape(2, 2)), (2, 2),
                                    (3, 1), 1)
    got = pf.as_strided_scatter(pf.from_numpy(a), pf.from_numpy(s.reshape(2, 2)), (2, 2),
                                (3, 1), 1)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


# ---- small spellings ----

def test_constants_range_fill_copies():
    assert pf.pi == torch.pi and pf.e == torch.e and pf.inf == torch.inf
    assert math.isnan(pf.nan) and pf.newaxis is None
    with pytest.warns(UserWarning, match="deprecated"):
        r = pf.range(1, 4, 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tr = torch.range(1, 4, 0.5)
    np.testing.assert_array_equal(r.numpy(), tr.numpy())
    assert r.dtype == pf.float32
    x = pf.arange(6.0).reshape(2, 3)
    xt = torch.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(pf.fill(x, 2.5).numpy(), torch.fill(xt, 2.5).numpy())
    for name, args in [("t_copy", ()), ("transpose_copy", (0, 1)), ("permute_copy", ((1, 0),)),
                       ("diagonal_copy", ()), ("select_copy", (1, 2)),
                       ("unsqueeze_copy", (0,)), ("expand_copy", ((2, 2, 3),)),
                       ("narrow_copy", (1, 1, 2)), ("slice_copy", (1, 0, 3, 2)),
                       ("view_copy", ((3, 2),)), ("detach_copy", ()), ("alias_copy", ())]:
        got, want = getattr(pf, name)(x, *args), getattr(torch, name)(xt, *args)
        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=name)
        got.add_(1)  # a copy: x does not change
        np.testing.assert_array_equal(x.numpy(), xt.numpy(), err_msg=name)
    for a, b in zip(pf.unsafe_chunk(x, 2, 1), torch.unsafe_chunk(xt, 2, 1)):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert pf.detach(x.requires_grad_()).requires_grad is False
    assert pf.is_signed(x) and not pf.is_signed(pf.zeros(2, dtype=pf.uint8))


@pytest.mark.parametrize("name", ["polar", "complex", "view_as_real", "view_as_complex", "stft"])
def test_complex_ops_raise(name):
    with pytest.raises(NotImplementedError, match=f"{name}.*no complex dtype"):
        getattr(pf, name)(pf.ones(4), pf.ones(4))
