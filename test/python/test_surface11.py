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
    # gradients: the source's are torch's; the input's are zero where it is overwritten
    # (central differences; torch's backward puts the gradient there instead)
    x = np.random.default_rng(9).standard_normal((3, 3))
    src = np.random.default_rng(10).standard_normal((2, 2))
    ex = Example([x, src], lambda a, b: pf.as_strided_scatter(a, b, (2, 2), (1, 2), 0),
                 lambda a, b: torch.as_strided_scatter(a, b, (2, 2), (1, 2), 0), "scatter")
    ct = np.random.default_rng(11).standard_normal((3, 3))
    gx, gs = pf.grad(lambda a, b: (pf.as_strided_scatter(a, b, (2, 2), (1, 2), 0)
                                   * pf.tensor(ct)).sum(), argnums=(0, 1))(pf.tensor(x),
                                                                           pf.tensor(src))
    fd_x, fd_s = fd_gradient(ex, [ct])
    close(gx.numpy(), fd_x, 1e-6, 1e-7, "as_strided_scatter: input grad vs differences")
    close(gs.numpy(), fd_s, 1e-6, 1e-7, "as_strided_scatter: src grad vs differences")
    _, (_, ts) = torch_vjp(ex, [ct])
    close(gs.numpy(), ts, 1e-12, 1e-12, "as_strided_scatter: src grad vs torch")


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


# ---- torch_compat2: memory formats, top-level losses, cells, native_*, cond ----

def test_memory_formats_change_no_value():
    x = pf.arange(24.0).reshape(1, 2, 3, 4)
    for fmt in (pf.channels_last, pf.contiguous_format, pf.preserve_format):
        np.testing.assert_array_equal(x.contiguous(memory_format=fmt).numpy(), x.numpy())
        np.testing.assert_array_equal(x.to(memory_format=fmt).numpy(), x.numpy())
    m = pf.nn.Conv2d(2, 3, 1).to(memory_format=pf.channels_last)
    assert m(x).shape == (1, 3, 3, 4)
    assert repr(pf.channels_last) == repr(torch.channels_last)
    assert pf.int == pf.int32 and pf.strided is not None


_LOSSES = [
    ("binary_cross_entropy_with_logits", 2, ()), ("kl_div", 2, ()), ("kl_div", 2, (0,)),
    ("margin_ranking_loss", 3, (0.3, 2)), ("cosine_embedding_loss", 3, (0.1, 0)),
    ("hinge_embedding_loss", 2, (0.5,)), ("poisson_nll_loss", 2, (True, False, 1e-8, 1)),
    ("triplet_margin_loss", 3, (1.0, 2, 1e-6, True, 2)),
]


@pytest.mark.parametrize("name, n, args", _LOSSES)
def test_top_level_losses_take_torch_int_reductions(name, n, args):
    rng = np.random.default_rng(7)
    arrays = [rng.standard_normal((4, 3)) for _ in range(n)]
    if name in ("margin_ranking_loss", "hinge_embedding_loss"):
        arrays[-1] = np.sign(arrays[-1])
    if name == "cosine_embedding_loss":
        arrays[-1] = np.sign(rng.standard_normal(4))
    if name in ("binary_cross_entropy_with_logits",):
        arrays[1] = rng.uniform(0, 1, (4, 3))
    if name == "poisson_nll_loss":
        arrays[1] = rng.poisson(2.0, (4, 3)).astype(np.float64)
    got = getattr(pf, name)(*(pf.from_numpy(a) for a in arrays), *args)
    want = getattr(torch, name)(*(torch.tensor(a) for a in arrays), *args)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)


def test_top_level_cells_and_convolution():
    rng = np.random.default_rng(8)
    x, h, c = rng.standard_normal((3, 4)), rng.standard_normal((3, 5)), rng.standard_normal((3, 5))
    for name, gates in (("lstm_cell", 4), ("gru_cell", 3), ("rnn_tanh_cell", 1),
                        ("rnn_relu_cell", 1)):
        w_ih, w_hh = rng.standard_normal((gates * 5, 4)), rng.standard_normal((gates * 5, 5))
        b_ih, b_hh = rng.standard_normal(gates * 5), rng.standard_normal(gates * 5)
        hx_p = (pf.tensor(h), pf.tensor(c)) if name == "lstm_cell" else pf.tensor(h)
        hx_t = (torch.tensor(h), torch.tensor(c)) if name == "lstm_cell" else torch.tensor(h)
        got = getattr(pf, name)(pf.tensor(x), hx_p, *map(pf.tensor, (w_ih, w_hh, b_ih, b_hh)))
        want = getattr(torch, name)(torch.tensor(x), hx_t,
                                    *map(torch.tensor, (w_ih, w_hh, b_ih, b_hh)))
        for g, w in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-10, err_msg=name)
    a, w, b = rng.standard_normal((2, 4, 5, 5)), rng.standard_normal((4, 2, 3, 3)), \
        rng.standard_normal(6)
    for transposed, wt, bias in ((False, w, b[:4]), (True, w, b[:4])):
        got = pf.convolution(pf.tensor(a), pf.tensor(wt), pf.tensor(bias), [2, 1], [1, 0],
                             [1, 1], transposed, [1, 0] if transposed else [0, 0], 2)
        want = torch.convolution(torch.tensor(a), torch.tensor(wt), torch.tensor(bias), [2, 1],
                                 [1, 0], [1, 1], transposed,
                                 [1, 0] if transposed else [0, 0], 2)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(
        pf.constant_pad_nd(pf.tensor(a), [1, 2], 3.5).numpy(),
        torch.constant_pad_nd(torch.tensor(a), [1, 2], 3.5).numpy())


def test_native_ops():
    rng = np.random.default_rng(9)
    x = rng.standard_normal((4, 3, 5))
    w, b = rng.standard_normal(5), rng.standard_normal(5)
    got = pf.native_layer_norm(pf.tensor(x), [5], pf.tensor(w), pf.tensor(b), 1e-5)
    want = torch.native_layer_norm(torch.tensor(x), [5], torch.tensor(w), torch.tensor(b), 1e-5)
    for g, t in zip(got, want):
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-10)
    rm, rv = np.zeros(3), np.ones(3)
    pm, pv, tm, tv = pf.tensor(rm), pf.tensor(rv), torch.tensor(rm), torch.tensor(rv)
    for training in (True, False):
        got = pf.native_batch_norm(pf.tensor(x), None, None, pm, pv, training, 0.1, 1e-5)
        want = torch.native_batch_norm(torch.tensor(x), None, None, tm, tv, training, 0.1,
                                       1e-5)
        for g, t in zip(got, want):
            assert g.shape == tuple(t.shape)
            np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-10)
    np.testing.assert_allclose(pv.numpy(), tv.numpy(), rtol=1e-12)
    out, mask = pf.native_dropout(pf.ones(1000, dtype=pf.float64), 0.25, True)
    kept = mask.numpy()
    assert kept.dtype == np.bool_ and abs(kept.mean() - 0.75) < 0.06
    np.testing.assert_allclose(out.numpy(), kept / 0.75)
    y = pf.ones(4, 5)
    assert pf.dropout_(y, 0.5, True) is y


def test_cond_while_loop_and_removed_functions():
    x = pf.tensor([1.0, 2.0])
    assert pf.cond(x.sum() > 0, lambda v: v * 2, lambda v: v - 1, (x,)).numpy().tolist() == \
        [2.0, 4.0]
    assert pf.cond(False, lambda v: v * 2, lambda v: v - 1, (x,)).numpy().tolist() == [0.0, 1.0]
    i, s = pf.while_loop(lambda i, s: i < 5, lambda i, s: (i + 1, s + i), (pf.tensor(0),
                                                                            pf.tensor(0)))
    ti, ts = torch.while_loop(lambda i, s: i < 5, lambda i, s: (i + 1, s + i),
                              (torch.tensor(0), torch.tensor(0)))
    assert (int(i.item()), int(s.item())) == (int(ti), int(ts))
    for name in ("solve", "lstsq", "eig", "symeig", "matrix_rank"):
        with pytest.raises(RuntimeError, match="deprecated since version 1.9"):
            getattr(pf, name)(pf.eye(2), pf.eye(2))
    with pytest.raises(RuntimeError, match="deprecated since version 1.9"):
        pf.eye(2).solve(pf.eye(2))


def test_tensor_members():
    x = pf.arange(6.0)
    assert x.new(2, 3).shape == (2, 3) and x.new(2, 3).dtype == pf.float32
    assert x.new().shape == (0,) and x.new(pf.Size([4])).shape == (4,)
    np.testing.assert_array_equal(x.new([1, 2]).numpy(), torch.arange(6.0).new([1, 2]).numpy())
    y = pf.arange(6.0)
    assert y.resize_(2, 2) is y and y.numpy().tolist() == [[0, 1], [2, 3]]
    y.resize_as_(pf.zeros(5))
    assert y.shape == (5,) and y.numpy()[:4].tolist() == [0, 1, 2, 3]
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        pf.ones(2, requires_grad=True).resize_(3)
    z, zt = pf.arange(4.0), torch.arange(4.0)
    z.apply_(lambda v: v * v + 1)
    zt.apply_(lambda v: v * v + 1)
    np.testing.assert_array_equal(z.numpy(), zt.numpy())
    z.map_(pf.tensor([1.0, 2.0, 3.0, 4.0]), lambda a, b: a * b)
    zt.map_(torch.tensor([1.0, 2.0, 3.0, 4.0]), lambda a, b: a * b)
    np.testing.assert_array_equal(z.numpy(), zt.numpy())
    v = z[1:]
    assert v.data_ptr() - z.data_ptr() == 4 and z[1:].data_ptr() == v.data_ptr()
    assert z.data_ptr() != pf.arange(4.0).data_ptr()
    assert z.to_dense() is z and not z.is_pinned() and z.share_memory_() is z
    assert repr(z.layout) == repr(torch.arange(2).layout)
    np.testing.assert_array_equal(z.hardshrink(3.0).numpy(),
                                  zt.hardshrink(3.0).numpy())
    w = pf.tensor([0.25])
    np.testing.assert_allclose(pf.tensor([-2.0, 1.0]).prelu(w).numpy(), [-0.5, 1.0])
    assert not z.is_mps and z.dim_order() == (0,)
    with pytest.raises(RuntimeError, match="no XPU device"):
        z.xpu()


def test_small_top_level_names():
    for data, size in (([[1, 0], [3, 2]], 4), ([[1, 0], [3, 2]], 2), ([0, 0], 3)):
        np.testing.assert_array_equal(
            pf.nonzero_static(pf.tensor(data), size=size, fill_value=-7).numpy(),
            torch.nonzero_static(torch.tensor(data), size=size, fill_value=-7).numpy())
    assert pf.tensor([0, 2]).nonzero_static(size=1).numpy().tolist() == [[1]]
    a = np.random.default_rng(3).standard_normal((2, 7, 5))
    u, s, v = pf.svd_lowrank(pf.tensor(a), q=3)
    _, ts, _ = torch.svd_lowrank(torch.tensor(a), q=5, niter=20)  # converged: the exact values
    np.testing.assert_allclose(s.numpy(), ts.numpy()[..., :3], rtol=1e-8)
    np.testing.assert_allclose(u.numpy() @ (s.numpy()[..., None] * np.swapaxes(v.numpy(), -1, -2)),
                               np.linalg.svd(a)[0][..., :3] * np.linalg.svd(a)[1][..., None, :3]
                               @ np.linalg.svd(a)[2][..., :3, :], rtol=1e-8, atol=1e-10)
    _, ps, pv = pf.pca_lowrank(pf.tensor(a[0]), q=2)
    _, tps, _ = torch.pca_lowrank(torch.tensor(a[0]), q=5, niter=20)
    np.testing.assert_allclose(ps.numpy(), tps.numpy()[:2], rtol=1e-8)
    x = pf.tensor([1.0, float("nan"), float("inf")])
    assert pf.nan_to_num_(x) is x and np.isfinite(x.numpy()).all()
    y = pf.tensor([2.0, 3.0])
    yt = torch.tensor([2.0, 3.0])
    y.igamma_(pf.tensor([1.0, 1.0]))
    yt.igamma_(torch.tensor([1.0, 1.0]))
    np.testing.assert_allclose(y.numpy(), yt.numpy(), rtol=1e-6)
    assert pf.get_device(y) == -1 and not pf.is_vulkan_available()
    assert pf.set_flush_denormal(True) is False
    assert pf.ones(2).new_empty_strided((2, 3), (3, 1)).shape == (2, 3)
    w = pf.tensor([[3.0, 4.0], [0.3, 0.4]])
    pf.embedding_renorm_(w, pf.tensor([0, 1]), 1.0, 2.0)
    wt = torch.tensor([[3.0, 4.0], [0.3, 0.4]])
    torch.embedding_renorm_(wt, torch.tensor([0, 1]), 1.0, 2.0)
    np.testing.assert_allclose(w.numpy(), wt.numpy(), rtol=1e-6)
    prev = pf.is_anomaly_enabled()
    pf.set_anomaly_enabled(True)
    assert pf.is_anomaly_enabled()
    pf.set_anomaly_enabled(prev)
    conv = pf.nn.Conv2d(1, 1, 1)
    assert pf.nn.utils.convert_conv2d_weight_memory_format(conv, pf.channels_last) is conv
    assert pf.nn.utils.convert_conv3d_weight_memory_format(conv, pf.channels_last_3d) is conv


def test_binomial():
    pf.manual_seed(0)
    n = pf.full((20000,), 10.0, dtype=pf.float64)
    draws = pf.binomial(n, pf.full((20000,), 0.3, dtype=pf.float64)).numpy()
    assert draws.dtype == np.float64 and draws.min() >= 0 and draws.max() <= 10
    assert abs(draws.mean() - 3.0) < 0.05 and abs(draws.var() - 2.1) < 0.1
    g = pf.Generator().manual_seed(5)
    a = pf.binomial(pf.tensor([50.0]), pf.tensor([0.5]), generator=g).numpy()
    b = pf.binomial(pf.tensor([50.0]), pf.tensor([0.5]),
                    generator=pf.Generator().manual_seed(5)).numpy()
    assert a == b
    assert pf.binomial(pf.tensor([4.0, 0.0]), pf.tensor([1.0, 0.7])).numpy().tolist() == \
        [4.0, 0.0]
    with pytest.raises(RuntimeError, match="floating-point dtypes for count"):
        pf.binomial(pf.tensor([10]), pf.tensor([0.5]))
    with pytest.raises(RuntimeError, match="prob in"):
        pf.binomial(pf.tensor([1.0]), pf.tensor([1.5]))


def test_frombuffer_attention_kernels_invert_permutation():
    data = np.arange(10, dtype=np.int16).tobytes()
    for kw in ({"dtype": pf.int16}, {"dtype": pf.int16, "count": 3, "offset": 4},
               {"dtype": pf.uint8, "offset": 1}):
        tkw = dict(kw, dtype={pf.int16: torch.int16, pf.uint8: torch.uint8}[kw["dtype"]])
        got = pf.frombuffer(bytearray(data), **kw)
        want = torch.frombuffer(bytearray(data), **tkw)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    with pytest.raises(ValueError, match="multiple of element size"):
        pf.frombuffer(bytearray(b"abc"), dtype=pf.int16)
    from pyflame_mlir.nn.attention import SDPBackend, sdpa_kernel, selected_backends

    q = pf.tensor(np.random.default_rng(0).standard_normal((1, 2, 3, 4)))
    plain = pf.nn.functional.scaled_dot_product_attention(q, q, q)
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]):
        assert selected_backends() == (SDPBackend.FLASH_ATTENTION, SDPBackend.MATH)
        inside = pf.nn.functional.scaled_dot_product_attention(q, q, q)
    np.testing.assert_array_equal(inside.numpy(), plain.numpy())
    tb = torch.nn.attention.SDPBackend
    assert [int(b) for b in (SDPBackend.ERROR, SDPBackend.MATH, SDPBackend.FLASH_ATTENTION,
                             SDPBackend.EFFICIENT_ATTENTION, SDPBackend.CUDNN_ATTENTION,
                             SDPBackend.OVERRIDEABLE)] == \
        [int(b) for b in (tb.ERROR, tb.MATH, tb.FLASH_ATTENTION, tb.EFFICIENT_ATTENTION,
                          tb.CUDNN_ATTENTION, tb.OVERRIDEABLE)]
    with pytest.raises(AssertionError, match="SDPBackend"):
        with sdpa_kernel("flash"):
            pass
    perm = pf.tensor([2, 0, 3, 1])
    inv = pf.nn.utils.rnn.invert_permutation(perm)
    np.testing.assert_array_equal(
        inv.numpy(), torch.nn.utils.rnn.invert_permutation(torch.tensor([2, 0, 3, 1])).numpy())
    assert pf.nn.utils.rnn.invert_permutation(None) is None


def test_as_strided_overlapping_views_read_and_refuse_writes():
    base_t, base_p = torch.arange(12.0), pf.arange(12.0)
    vt, vp = base_t.as_strided((4, 3), (2, 1)), base_p.as_strided((4, 3), (2, 1))  # windows
    np.testing.assert_array_equal(vp.numpy(), vt.numpy())
    base_t.mul_(3)
    base_p.mul_(3)
    np.testing.assert_array_equal(vp.numpy(), vt.numpy())  # a view: sees its base change
    for write in (lambda v: v.add_(1), lambda v: v.zero_(), lambda v: v.__setitem__(0, 1.0),
                  lambda v: v.resize_(2)):
        with pytest.raises(RuntimeError, match="refers to a single memory location"):
            write(vp)
    np.testing.assert_array_equal(vp.sum(1).numpy(), vt.sum(1).numpy())
    g = pf.grad(lambda b: b.as_strided((4, 3), (2, 1)).sum())(pf.arange(12.0))
    bt = torch.arange(12.0, requires_grad=True)
    bt.as_strided((4, 3), (2, 1)).sum().backward()
    np.testing.assert_array_equal(g.numpy(), bt.grad.numpy())


def test_native_channel_shuffle():
    x = np.arange(2 * 6 * 2, dtype=np.float32).reshape(2, 6, 2)
    np.testing.assert_array_equal(pf.native_channel_shuffle(pf.tensor(x), 3).numpy(),
                                  torch.native_channel_shuffle(torch.tensor(x), 3).numpy())
    np.testing.assert_array_equal(
        pf.nn.functional.native_channel_shuffle(pf.tensor(x), 2).numpy(),
        torch.nn.functional.native_channel_shuffle(torch.tensor(x), 2).numpy())


def test_storages():
    x, xt = pf.arange(6.0).reshape(2, 3), torch.arange(6.0).reshape(2, 3)
    v, vt = x[1], xt[1]
    for ours, theirs in ((v.untyped_storage(), vt.untyped_storage()),
                         (v.storage(), vt.storage())):
        assert ours.size() == theirs.size() and len(ours) == len(theirs)
        assert ours.nbytes() == theirs.nbytes() and ours.element_size() == theirs.element_size()
        assert ours.data_ptr() == x.data_ptr()
    assert v.storage().tolist() == vt.storage().tolist()
    assert v.storage().dtype == pf.float32 and x.untyped_storage().dtype == pf.uint8
    assert pf.ones(3).untyped_storage().data_ptr() != x.untyped_storage().data_ptr()
    assert "size=6" in repr(x.storage())


@pytest.mark.parametrize("reduce", ["prod", "amax", "amin", "mean"])
def test_index_reduce_in_place_backward_matches_torch(reduce):
    """``x.index_reduce_`` on a tensor with history: the reduce is the update
    itself, so backward runs (no version-counter error) and equals torch's."""
    got = []
    for lib in (torch, pf):
        w = lib.tensor([[1., 2.], [3., 4.], [5., 6.]], dtype=lib.float64, requires_grad=True)
        x = w * 1
        x.index_reduce_(0, lib.tensor([0, 0, 2]),
                        lib.tensor([[2., 3.], [4., 5.], [6., 7.]], dtype=lib.float64), reduce)
        (x * x).sum().backward()
        got.append((np.asarray(x.detach().numpy()), np.asarray(w.grad.numpy())))
    for a, b in zip(*got):
        np.testing.assert_allclose(b, a, rtol=1e-12)
