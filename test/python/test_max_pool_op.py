"""The ``max_pool``/``max_pool_grad`` primitives (dialects/pooling.py) bit for
bit against torch's max_pool1d/2d/3d: values, indices (return_indices) and
gradients, over ties, NaN, -inf windows, padding, dilation, stride and
ceil_mode; the decompositions (what MAX, linalg and vmap run) against the
kernels on the same special values. ``kernel_path``: through the numpy kernels and
each copy of the C loops (``dialects/_kernels.c``, float32 2-d pooling)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from pyflame_mlir.dialects import OPS, ShapeError
from pyflame_mlir.dialects.dtypes import dtype as to_dtype

import pyflame_mlir as pf

WINDOWS = [  # (input shape, pooled dims, keyword arguments)
    ((2, 3, 8, 8), 2, {"kernel_size": 2}),
    ((2, 3, 9, 7), 2, {"kernel_size": 2}),  # a cropped last row/column
    ((2, 3, 9, 8), 2, {"kernel_size": 2, "ceil_mode": True}),  # 2x2 rows, a last partial row
    ((2, 3, 9, 7), 2, {"kernel_size": 3, "stride": 2, "padding": 1}),
    ((2, 3, 9, 7), 2, {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
    ((2, 3, 10, 11), 2, {"kernel_size": (3, 2), "stride": (1, 2), "padding": (1, 1),
                         "dilation": (2, 1)}),
    ((3, 10, 11), 2, {"kernel_size": 3, "stride": 1, "padding": 1}),  # overlapping windows
    ((2, 3, 11), 1, {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
    ((2, 5), 1, {"kernel_size": 2, "stride": 1}),
    ((2, 2, 5, 6, 7), 3, {"kernel_size": 2, "stride": 2, "ceil_mode": True}),
    ((2, 2, 5, 6, 7), 3, {"kernel_size": 3, "stride": 2, "padding": 1,
                          "dilation": (1, 2, 1)}),
]


def _special(shape: tuple[int, ...], seed: int) -> np.ndarray:
    """Random values with ties (repeated small integers, signed zeros), NaN,
    and a -inf plane (its windows hold nothing but -inf and padding)."""
    rng = np.random.default_rng(seed)
    x = rng.integers(-2, 3, shape).astype(np.float32)
    x[x == 0] = rng.choice([0.0, -0.0], size=int((x == 0).sum()))
    flat = x.reshape(-1)
    flat[rng.integers(0, flat.size, 4)] = np.nan
    flat[rng.integers(0, flat.size, 4)] = -np.inf
    x[0] = -np.inf
    return x


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.int32)


@pytest.mark.parametrize("shape,nsp,kw", WINDOWS)
@pytest.mark.parametrize("seed", [0, 1])
def test_values_indices_and_gradient_match_torch_bit_for_bit(kernel_path, shape, nsp, kw, seed):
    x = _special(shape, seed)
    tx = torch.from_numpy(x).requires_grad_()
    tv, ti = getattr(F, f"max_pool{nsp}d")(tx, return_indices=True, **kw)
    ct = np.random.default_rng(seed + 7).integers(-3, 4, tuple(tv.shape)).astype(np.float32)
    ct[ct == 0] = -0.0  # torch's accumulation into zeros turns it into +0.0
    tv.backward(torch.from_numpy(ct))
    px = pf.tensor(x, requires_grad=True)
    pv, pi = getattr(pf.nn.functional, f"max_pool{nsp}d")(px, return_indices=True, **kw)
    (pv * pf.tensor(ct)).sum().backward()
    np.testing.assert_array_equal(_bits(pv.numpy()), _bits(tv.detach().numpy()))
    np.testing.assert_array_equal(pi.numpy(), ti.numpy())
    np.testing.assert_array_equal(_bits(px.grad.numpy()), _bits(tx.grad.numpy()))


def test_overlapping_windows_sum_gradients_in_torchs_order(kernel_path):
    # stride 1, kernel 3: an element is the max of up to nine windows; float32
    # sums of cotangents of very different size are order-sensitive
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 2, 9, 9)).astype(np.float32)
    x[:, :, 4, 4] = 10.0
    tx = torch.from_numpy(x).requires_grad_()
    tv = F.max_pool2d(tx, 3, stride=1, padding=1)
    ct = (rng.standard_normal(tuple(tv.shape)) * 10.0 ** rng.integers(-6, 6, tuple(tv.shape))
          ).astype(np.float32)
    tv.backward(torch.from_numpy(ct))
    px = pf.tensor(x, requires_grad=True)
    (pf.nn.functional.max_pool2d(px, 3, stride=1, padding=1) * pf.tensor(ct)).sum().backward()
    np.testing.assert_array_equal(_bits(px.grad.numpy()), _bits(tx.grad.numpy()))


def test_inf_cotangent_reaches_only_the_chosen_element(kernel_path):
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    ct = np.full((1, 1, 2, 2), np.inf, np.float32)
    g = OPS["max_pool_grad"].kernel(ct, OPS["max_pool"].kernel(
        x, (2, 2), (2, 2), (0, 0), (1, 1), False)[1], (2, 2), (2, 2), (0, 0), (1, 1), False,
        (4, 4))
    assert np.isinf(g).sum() == 4 and not np.isnan(g).any() and (g[np.isfinite(g)] == 0).all()


def test_integer_input_pools_as_floats_do():
    x = np.random.default_rng(0).integers(-50, 50, (2, 3, 7, 6)).astype(np.int32)
    values, offsets = OPS["max_pool"].kernel(x, (3, 2), (2, 2), (1, 1), (1, 1), True)
    want, _ = OPS["max_pool"].kernel(x.astype(np.float64), (3, 2), (2, 2), (1, 1), (1, 1),
                                     True)
    assert values.dtype == np.int32
    np.testing.assert_array_equal(values, want)
    tv, ti = F.max_pool2d(torch.from_numpy(x.astype(np.float64)), (3, 2), 2, 1, ceil_mode=True,
                          return_indices=True)
    np.testing.assert_array_equal(values, tv.numpy())


class _Numpy:
    """The builder interface over the op table's kernels (the decompositions' oracle)."""

    def shape(self, v):
        return tuple(v.shape)

    def dtype(self, v):
        return to_dtype(v.dtype)

    def op(self, name, *xs, **attrs):
        out = OPS[name].kernel(*xs, **attrs)
        return out

    def scalar(self, value, like):
        return np.asarray(value, dtype=like.dtype)

    def __getattr__(self, name):
        return lambda *xs, **attrs: self.op(name, *xs, **attrs)


@pytest.mark.parametrize("shape,nsp,kw", WINDOWS)
def test_decompositions_match_the_kernels_on_special_values(shape, nsp, kw):
    attrs = {"kernel": _n(kw["kernel_size"], nsp),
             "stride": _n(kw.get("stride", kw["kernel_size"]), nsp),
             "padding": _n(kw.get("padding", 0), nsp), "dilation": _n(kw.get("dilation", 1), nsp),
             "ceil_mode": kw.get("ceil_mode", False)}
    x = _special(shape, 5)
    pool, grad = OPS["max_pool"], OPS["max_pool_grad"]
    with np.errstate(invalid="ignore"):
        values, offsets = pool.decomposition(_Numpy(), [x], **attrs)
    want_values, want_offsets = pool.kernel(x, **attrs)
    np.testing.assert_array_equal(_bits(values), _bits(want_values))
    np.testing.assert_array_equal(offsets, want_offsets)
    ct = np.random.default_rng(1).standard_normal(want_values.shape).astype(np.float32)
    size = shape[len(shape) - nsp:]
    (g,) = grad.decomposition(_Numpy(), [ct, want_offsets], **attrs, size=size)
    np.testing.assert_allclose(g, grad.kernel(ct, want_offsets, **attrs, size=size),
                               rtol=1e-6, atol=1e-6)


def _n(v, n):
    return tuple(v) if isinstance(v, tuple) else (v,) * n


def test_shape_rules_name_the_op_and_the_rule():
    with pytest.raises(ShapeError, match="max_pool: .*larger than the padded input"):
        OPS["max_pool"].check([(1, 2, 2)], [pf.float32], {
            "kernel": (3, 3), "stride": (1, 1), "padding": (0, 0), "dilation": (1, 1),
            "ceil_mode": False})
    with pytest.raises(ShapeError, match="not defined on bool"):
        OPS["max_pool"].check([(1, 4, 4)], [pf.bool], {
            "kernel": (2, 2), "stride": (2, 2), "padding": (0, 0), "dilation": (1, 1),
            "ceil_mode": False})
    with pytest.raises(ShapeError, match="does not pool an input of size"):
        OPS["max_pool_grad"].check([(1, 3, 3), (1, 3, 3)], [pf.float32, pf.int64], {
            "kernel": (2, 2), "stride": (2, 2), "padding": (0, 0), "dilation": (1, 1),
            "ceil_mode": False, "size": (4, 4)})


def test_out_of_range_offsets_raise(kernel_path):
    with pytest.raises(IndexError, match="max_pool_grad: window offsets must lie in"):
        OPS["max_pool_grad"].kernel(np.ones((1, 2, 2), np.float32),
                                    np.full((1, 2, 2), 4, np.int64), (2, 2), (2, 2), (0, 0),
                                    (1, 1), False, (4, 4))


def test_select_path_keeps_the_first_maximum(monkeypatch):
    # the kernel's path for a numpy whose maximum does not keep its second operand
    # on a tie of signed zeros: a select by the compare, the same bits
    from pyflame_mlir.dialects import pooling

    x = _special((2, 3, 9, 7), 4)
    attrs = ((3, 2), (2, 1), (1, 1), (1, 1), True)
    want = pooling._max_pool(x, *attrs)
    monkeypatch.setattr(pooling, "_MAXIMUM_KEEPS_SECOND", False)
    got = pooling._max_pool(x, *attrs)
    np.testing.assert_array_equal(_bits(got[0]), _bits(want[0]))
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("kw", [{"kernel": (2, 2), "stride": (2, 2), "padding": (0, 0)},
                                {"kernel": (3, 3), "stride": (2, 2), "padding": (1, 1)},
                                {"kernel": (3, 2), "stride": (1, 2), "padding": (0, 0)}])
def test_kernels_give_the_same_bits_in_any_memory_layout(kernel_path, kw):
    """A batch-innermost input (a conv's (C, H, W, N) result seen as (N, C, H,
    W)) and a transposed cotangent: values, offsets and the gradient equal the
    C-order run's bit for bit (the buffers follow the input's layout), with
    ties, NaN, -inf and signed zeros in the windows."""
    from pyflame_mlir.dialects import pooling

    rng = np.random.default_rng(7)
    x = rng.integers(-3, 3, (6, 5, 9, 8)).astype(np.float32)  # many ties
    x[0, 0, 0, :4] = np.nan
    x[1, 1, :3, :3] = -np.inf
    x[2, 2] = np.where(rng.random((9, 8)) < 0.5, -0.0, 0.0)
    attrs = (kw["kernel"], kw["stride"], kw["padding"], (1, 1), False)
    values, offsets = pooling._max_pool(x, *attrs)
    ct = rng.standard_normal(values.shape).astype(np.float32)
    ct[0, 0, 0, 0] = np.inf
    want = pooling._max_pool_grad(ct, offsets, *attrs, x.shape[-2:])
    batch_last = np.ascontiguousarray(x.transpose(1, 2, 3, 0)).transpose(3, 0, 1, 2)
    v2, o2 = pooling._max_pool(batch_last, *attrs)
    for got, ref in ((v2, values), (o2, offsets)):
        assert got.shape == ref.shape and got.dtype == ref.dtype
        np.testing.assert_array_equal(got.view(np.int32) if got.dtype == np.float32 else got,
                                      ref.view(np.int32) if ref.dtype == np.float32 else ref)
    for c in (ct, np.ascontiguousarray(ct.transpose(2, 3, 1, 0)).transpose(3, 2, 0, 1)):
        for offs in (offsets, o2):
            g = pooling._max_pool_grad(c, offs, *attrs, x.shape[-2:])
            assert g.shape == want.shape
            np.testing.assert_array_equal(g.view(np.int32), want.view(np.int32))
    tx = torch.from_numpy(x).requires_grad_()
    tv = torch.nn.functional.max_pool2d(tx, kw["kernel"], kw["stride"], kw["padding"])
    tv.backward(torch.from_numpy(ct))
    np.testing.assert_array_equal(v2, tv.detach().numpy())
    np.testing.assert_array_equal(want, tx.grad.numpy())
