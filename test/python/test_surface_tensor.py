"""issue 14's torch surface, part 2: the Tensor methods and the shape, product
and scatter functions of ``composites2.py`` against torch."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import pyflame_mlir as pf

SCALE = float(os.environ.get("PYFLAME_TEST_SCALE", "1"))
EXAMPLES = max(5, int(25 * SCALE))


def _same(got, want, rtol: float = 1e-12, atol: float = 1e-12) -> None:
    if isinstance(want, torch.Tensor):
        want = want.detach().numpy()
    got = got.numpy() if isinstance(got, pf.Tensor) else np.asarray(got)
    assert got.shape == np.asarray(want).shape, (got.shape, np.asarray(want).shape)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


def _pair(a: np.ndarray):
    return pf.tensor(a), torch.from_numpy(a.copy())


def test_like_methods(mode):
    a = np.arange(6.0).reshape(2, 3)
    b = np.zeros((4, 2, 3), dtype=np.float32)
    pa, ta = _pair(a)
    pb, tb = _pair(b)
    _same(pa[:1].expand_as(pb), ta[:1].expand_as(tb))
    _same(pa.view_as(pf.tensor(np.zeros(6))), ta.view_as(torch.zeros(6)))
    _same(pa.reshape_as(pf.tensor(np.zeros((3, 2)))), ta.reshape_as(torch.zeros(3, 2)))
    assert pa.type_as(pb).dtype == pf.float32
    for name in ("new_zeros", "new_ones", "new_empty"):
        got = getattr(pb, name)((2, 5))
        want = getattr(tb, name)((2, 5))
        assert got.shape == tuple(want.shape) and got.dtype == pf.float32
        if name != "new_empty":
            _same(got, want)
    _same(pb.new_full((3,), 2.5), tb.new_full((3,), 2.5))
    got = pa.new_tensor([1, 2])
    assert got.dtype == pf.float64 and got.tolist() == [1.0, 2.0]
    assert pa.new_zeros(2, 3, dtype=pf.int64).dtype == pf.int64
    assert pa.new_ones(2, requires_grad=True).requires_grad


def test_metadata_members():
    pa, ta = _pair(np.zeros((2, 3, 4), dtype=np.float32))
    assert pa.stride() == ta.stride() and pa.stride(1) == ta.stride(1)
    assert pa.transpose(0, 2).stride() == ta.transpose(0, 2).stride()
    assert pa.nbytes == ta.nbytes and pa.itemsize == ta.itemsize
    assert pa.get_device() == ta.get_device() == -1
    assert pa.conj() is pa and pa.resolve_conj() is pa and pa.resolve_neg() is pa
    assert pa.real is pa
    with pytest.raises(RuntimeError, match="imag is not implemented"):
        pa.imag  # noqa: B018
    _same(pa.mH, ta.mH)
    _same(pa.adjoint(), ta.adjoint())
    m, tm = _pair(np.arange(6.0).reshape(2, 3))
    _same(m.H, tm.H)
    with pytest.raises(RuntimeError, match="only supported on matrices"):
        pa.H  # noqa: B018
    _same(m.positive(), tm.positive())
    with pytest.raises(RuntimeError):
        pf.positive(pf.tensor(np.array([True])))


def test_mm_trace_where_ravel_unflatten(mode):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    pa, ta = _pair(a)
    pb, tb = _pair(b)
    _same(pa.mm(pb), ta.mm(tb))
    _same(pa.trace(), ta.trace())
    ip, it = _pair(np.arange(12, dtype=np.int32).reshape(3, 4))
    assert ip.trace().dtype == pf.int64  # (pf.trace is the tracer: the method only)
    _same(ip.trace(), torch.trace(it))
    with pytest.raises(RuntimeError, match="expected a matrix"):
        pf.tensor(np.zeros(3)).trace()
    cond = a > 0
    _same(pa.where(pf.tensor(cond), 0.0), ta.where(torch.from_numpy(cond), 0.0))
    _same(pa.ravel(), ta.ravel())
    x, tx = _pair(rng.standard_normal((2, 12, 3)))
    _same(x.unflatten(1, (3, -1)), tx.unflatten(1, (3, -1)))
    _same(pf.unflatten(x, -2, (2, 2, 3)), torch.unflatten(tx, -2, (2, 2, 3)))
    with pytest.raises(RuntimeError, match="don't multiply up"):
        x.unflatten(1, (5, 3))


def test_comparisons():
    a = np.array([1.0, np.nan, np.inf, -np.inf, 1e-9, 2.0])
    b = np.array([1.0 + 1e-6, np.nan, np.inf, np.inf, 0.0, 2.1])
    pa, ta = _pair(a)
    pb, tb = _pair(b)
    for kw in ({}, {"equal_nan": True}, {"rtol": 0.1, "atol": 0.0}):
        _same(pf.isclose(pa, pb, **kw), torch.isclose(ta, tb, **kw))
        assert pa.allclose(pb, **kw) == ta.allclose(tb, **kw)
    assert pf.allclose(pa[:1], pb[:1], rtol=1e-5) == torch.allclose(ta[:1], tb[:1], rtol=1e-5)
    ia, ita = _pair(np.array([1, 2, 3]))
    _same(pf.isclose(ia, ia), torch.isclose(ita, ita))
    assert pf.equal(pa[:1], pa[:1]) and not pf.equal(pa, pa)  # NaN != NaN
    assert pf.equal(pa, pa) == torch.equal(ta, ta)
    assert not pa.equal(pa[:2])


@settings(max_examples=EXAMPLES, deadline=None)
@given(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4),
       hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=4), st.integers(1, 4))
def test_inner_hypothesis(sa, sb, k):
    rng = np.random.default_rng(0)
    sa = sa[:-1] + (k,) if sa else sa
    sb = sb[:-1] + (k,) if sb else sb
    if sa and sb and sa[-1] != sb[-1]:
        return
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    _same(pf.inner(pf.tensor(a), pf.tensor(b)),
          torch.inner(torch.from_numpy(a), torch.from_numpy(b)), 1e-10, 1e-10)


@settings(max_examples=EXAMPLES, deadline=None)
@given(hnp.array_shapes(min_dims=2, max_dims=4, min_side=1, max_side=4), st.integers(-5, 5),
       st.data())
def test_rot90_hypothesis(shape, k, data):
    x = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    d0 = data.draw(st.integers(-len(shape), len(shape) - 1))
    d1 = data.draw(st.integers(-len(shape), len(shape) - 1))
    if d0 % len(shape) == d1 % len(shape):
        with pytest.raises(RuntimeError):
            pf.rot90(pf.tensor(x), k, (d0, d1))
        return
    _same(pf.rot90(pf.tensor(x), k, (d0, d1)), torch.rot90(torch.from_numpy(x), k, (d0, d1)))


@settings(max_examples=EXAMPLES, deadline=None)
@given(hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=3), st.data())
def test_sum_to_size_hypothesis(shape, data):
    x = np.random.default_rng(0).standard_normal(shape)
    lead = data.draw(st.integers(0, len(shape)))
    target = tuple(data.draw(st.sampled_from([1, s])) for s in shape[lead:])
    _same(pf.tensor(x).sum_to_size(target), torch.from_numpy(x).sum_to_size(target), 1e-12,
          1e-12)


def test_sum_to_size_error():
    with pytest.raises(RuntimeError, match="not expandable"):
        pf.tensor(np.zeros((2, 3))).sum_to_size(2, 2)


def test_splits():
    x = np.arange(24.0).reshape(2, 4, 3)
    px, tx = _pair(x)
    for got, want in zip(px.split_with_sizes([1, 3], 1), tx.split_with_sizes([1, 3], 1)):
        _same(got, want)
    for name, arg in (("hsplit", 2), ("hsplit", [1, 3]), ("vsplit", 2), ("dsplit", 3),
                      ("dsplit", [1])):
        got, want = getattr(pf, name)(px, arg), getattr(torch, name)(tx, arg)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
    one = np.arange(6.0)
    for g, w in zip(pf.hsplit(pf.tensor(one), 3), torch.hsplit(torch.from_numpy(one), 3)):
        _same(g, w)
    with pytest.raises(RuntimeError, match="not divisible"):
        pf.hsplit(px, 3)
    with pytest.raises(RuntimeError, match="at least 3"):
        pf.dsplit(pf.tensor(np.zeros((2, 2))), 2)
    with pytest.raises(RuntimeError, match="sum exactly"):
        px.split_with_sizes([1, 1], 1)


def test_diagflat_dist_renorm_vdot():
    rng = np.random.default_rng(2)
    m = rng.standard_normal((2, 2))
    pm, tm = _pair(m)
    for off in (-1, 0, 2):
        _same(pm.diagflat(off), tm.diagflat(off))
    a, b = rng.standard_normal((3, 4)), rng.standard_normal(4)
    for p in (0, 1, 2, 3.5, float("inf")):
        _same(pf.dist(pf.tensor(a), pf.tensor(b), p), torch.dist(*map(torch.from_numpy, (a, b)), p),
              1e-10, 1e-12)
    for p, dim, mx in ((2, 0, 1.0), (1, 1, 0.5), (3, -1, 10.0)):
        _same(pf.renorm(pf.tensor(a), p, dim, mx), torch.renorm(torch.from_numpy(a), p, dim, mx),
              1e-10, 1e-12)
    _same(pf.vdot(pf.tensor(b), pf.tensor(b)), torch.vdot(*map(torch.from_numpy, (b, b))))
    with pytest.raises(RuntimeError, match="1D tensors expected"):
        pf.vdot(pf.tensor(a), pf.tensor(b))


@settings(max_examples=EXAMPLES, deadline=None)
@given(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5), st.data())
def test_scatters_hypothesis(shape, data):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape)
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = shape[dim]
    start = data.draw(st.none() | st.integers(-n, n))
    end = data.draw(st.none() | st.integers(-n, n))
    step = data.draw(st.integers(1, 3))
    tx = torch.from_numpy(x)
    view = tx.narrow(0, 0, tx.shape[0])  # same tensor
    sl = [slice(None)] * len(shape)
    sl[dim] = slice(start, end, step)
    src = rng.standard_normal(tuple(view[tuple(sl)].shape))
    want = torch.slice_scatter(tx, torch.from_numpy(src), dim, start, end, step)
    _same(pf.slice_scatter(pf.tensor(x), pf.tensor(src), dim, start, end, step), want)
    index = data.draw(st.integers(-n, n - 1))
    src = rng.standard_normal(tuple(tx.select(dim, index).shape))
    _same(pf.select_scatter(pf.tensor(x), pf.tensor(src), dim, index),
          torch.select_scatter(tx, torch.from_numpy(src), dim, index))
    if len(shape) >= 2:
        off = data.draw(st.integers(-3, 3))
        src = rng.standard_normal(tuple(torch.diagonal(tx, off, 0, -1).shape))
        _same(pf.diagonal_scatter(pf.tensor(x), pf.tensor(src), off, 0, -1),
              torch.diagonal_scatter(tx, torch.from_numpy(src), off, 0, -1))


def test_scatter_gradients():
    x, src = np.arange(12.0).reshape(3, 4), np.ones((3, 2)) * 2

    def f(a, s):
        return (pf.slice_scatter(a, s, 1, 1, None, 2) ** 2).sum()
    ga, gs = pf.grad(f, argnums=(0, 1))(pf.tensor(x), pf.tensor(src))
    ta = torch.from_numpy(x).requires_grad_()
    ts = torch.from_numpy(src).requires_grad_()
    (torch.slice_scatter(ta, ts, 1, 1, None, 2) ** 2).sum().backward()
    _same(ga, ta.grad)
    _same(gs, ts.grad)


def test_cov_corrcoef():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 7))
    px, tx = _pair(x)
    fw = rng.integers(1, 4, 7)
    aw = rng.random(7)
    for kw in ({}, {"correction": 0}, {"correction": 2}):
        _same(pf.cov(px, **kw), torch.cov(tx, **kw), 1e-10, 1e-12)
    _same(pf.cov(px, fweights=pf.tensor(fw), aweights=pf.tensor(aw)),
          torch.cov(tx, fweights=torch.from_numpy(fw), aweights=torch.from_numpy(aw)), 1e-10)
    _same(pf.cov(px, fweights=pf.tensor(fw)), torch.cov(tx, fweights=torch.from_numpy(fw)), 1e-10)
    _same(pf.cov(px[0]), torch.cov(tx[0]), 1e-10)
    _same(pf.corrcoef(px), torch.corrcoef(tx), 1e-10, 1e-12)
    _same(px.corrcoef(), tx.corrcoef(), 1e-10, 1e-12)


def test_matrix_power_and_multi_dot():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((2, 3, 3))
    pa, ta = _pair(a)
    for n in (0, 1, 2, 5):
        _same(pf.linalg.matrix_power(pa, n), torch.linalg.matrix_power(ta, n), 1e-10, 1e-10)
        _same(pa.matrix_power(n), ta.matrix_power(n), 1e-10, 1e-10)
    for n in (-1, -3):  # the power of the inverse, as torch's
        _same(pf.matrix_power(pa, n), torch.matrix_power(ta, n), 1e-9, 1e-9)
    ms = [rng.standard_normal(s) for s in ((3,), (3, 4), (4, 2), (2,))]
    _same(pf.linalg.multi_dot([pf.tensor(m) for m in ms]),
          torch.linalg.multi_dot([torch.from_numpy(m) for m in ms]), 1e-10)
    u, v = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    _same(pf.linalg.cross(pf.tensor(u), pf.tensor(v)),
          torch.linalg.cross(torch.from_numpy(u), torch.from_numpy(v)))
    _same(pf.linalg.vecdot(pf.tensor(u), pf.tensor(v)),
          torch.linalg.vecdot(torch.from_numpy(u), torch.from_numpy(v)))


def test_unique_consecutive():
    x = np.array([[1, 1, 2], [1, 1, 2], [3, 1, 2], [1, 1, 2]])
    px, tx = _pair(x)
    for kw in ({}, {"return_inverse": True, "return_counts": True},
               {"dim": 0, "return_counts": True}, {"dim": 1, "return_inverse": True}):
        got, want = pf.unique_consecutive(px, **kw), torch.unique_consecutive(tx, **kw)
        got = got if isinstance(got, tuple) else (got,)
        want = want if isinstance(want, tuple) else (want,)
        for g, w in zip(got, want):
            _same(g, w)


def test_multinomial_method():
    pf.manual_seed(0)
    w = pf.tensor(np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]))
    assert w.multinomial(2, replacement=True).tolist() == [[1, 1], [2, 2]]


@pytest.mark.parametrize("name", ["abs", "exp", "sin", "sqrt", "floor", "sigmoid", "tanh",
                                  "reciprocal", "neg", "square", "erf", "log1p", "trunc"])
def test_in_place_unary_forms(name, mode):
    a = np.array([0.3, 1.7, 2.5, 4.0])
    px, tx = _pair(a)
    out = getattr(px, f"{name}_")()
    assert out is px
    getattr(tx, f"{name}_")()
    _same(px, tx, 1e-12, 1e-12)


def test_in_place_binary_and_dtype_rules():
    px, tx = _pair(np.array([1.0, -2.0, 3.0]))
    px.clamp_min_(0.5)
    tx.clamp_min_(0.5)
    px.lt_(2.0)
    tx.lt_(2.0)
    _same(px, tx)
    assert px.dtype == pf.float64
    with pytest.raises(RuntimeError, match="can't be cast"):
        pf.tensor(np.array([1, 4])).sqrt_()


def test_predicates():
    x = pf.tensor(np.zeros((2, 3), dtype=np.float32))
    assert x.is_floating_point() and pf.is_floating_point(x) and x.is_signed()
    assert not pf.tensor(np.array([True])).is_signed()
    assert x.is_same_size(pf.zeros(2, 3)) and not x.is_same_size(pf.zeros(3))
    assert x.is_cpu and not x.is_cuda and x.storage_offset() == 0
    assert x[1:].storage_offset() == torch.zeros(2, 3)[1:].storage_offset()
    assert pf.tensor(np.array([2.0])).is_nonzero()
    with pytest.raises(RuntimeError, match="ambiguous"):
        x.is_nonzero()
    assert x.isreal().numpy().all()
