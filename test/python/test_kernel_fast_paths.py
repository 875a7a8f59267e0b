"""Speed paths of the reference kernels and of the nn composites (issue 14,
docs/PERFORMANCE.md "fourth pass"): each must give numpy's / torch's values.

- reductions over a few short axes of a large array fold views
  (``dialects/reduction.py: _over_views``);
- max/avg pooling with stride = kernel and no padding reduce a reshape of
  the input (``nn/functional.py: _tiles``) instead of stacking window slices;
- the float32 GELU, its derivative and softmax / log_softmax rows run C loops
  (``dialects/_kernels.c``) when the extension is built: the ``kernel_path`` fixture
  runs those tests through the numpy bodies and through each compiled copy of
  the loops (baseline, AVX2, AVX-512) the CPU has.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from pyflame_mlir.dialects.opdef import OPS

import pyflame_mlir as pf
from pyflame_mlir.nn import functional as F
from pyflame_mlir.runtime import csl_backend


@pytest.mark.parametrize("name,ref", [("sum", np.add.reduce), ("max", np.maximum.reduce),
                                      ("min", np.minimum.reduce)])
@pytest.mark.parametrize("dims", [(3, 5), (1,), (0, 2), (5,)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_short_axis_reductions_match_numpy(name, ref, dims, keepdim) -> None:
    rng = np.random.default_rng(len(dims))
    x = rng.standard_normal((8, 3, 14, 2, 14, 2)).astype(np.float32)
    x[0, 0, 0, 1, 0, 1] = np.nan  # propagates
    x[1, 1, 1, :, 1, :] = -np.inf
    x[2, 2, 2, 0, 2, 0] = -0.0
    got = OPS[name].kernel(x, dims=dims, keepdim=keepdim)
    want = ref(x, axis=dims, keepdims=keepdim)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("fn,shape,kernel,ceil_mode", [
    ("max_pool2d", (2, 3, 8, 8), 2, False),
    ("max_pool2d", (2, 3, 9, 7), 2, False),  # cropped to whole windows
    ("max_pool2d", (2, 3, 9, 7), 2, True),  # a window past the input: padded windows
    ("max_pool2d", (3, 9, 12), (3, 2), False),  # unbatched
    ("max_pool1d", (2, 3, 11), 3, False),
    ("avg_pool2d", (2, 3, 9, 7), 2, False),
    ("avg_pool2d", (2, 3, 8, 8), (2, 4), True),
    ("avg_pool1d", (2, 3, 10), 2, False),
])
def test_non_overlapping_pooling_matches_torch(mode, fn, shape, kernel, ceil_mode) -> None:
    """Values, and float64 gradients (distinct values: no ties to share)."""
    rng = np.random.default_rng(7)
    x = rng.permutation(np.prod(shape)).reshape(shape).astype(np.float64) / 10
    tx = torch.tensor(x, requires_grad=True)
    ty = getattr(torch.nn.functional, fn)(tx, kernel, ceil_mode=ceil_mode)
    g = rng.standard_normal(tuple(ty.shape))
    ty.backward(torch.tensor(g))
    px = pf.tensor(x, requires_grad=True)
    py = getattr(F, fn)(px, kernel, ceil_mode=ceil_mode)
    (py * pf.tensor(g)).sum().backward()
    np.testing.assert_allclose(py.numpy(), ty.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(px.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_float32_gelu_kernel_matches_torch_on_chunks_and_special_values(kernel_path) -> None:
    """The chunked float32 GELU (``_gelu_float32``): over more than one chunk
    with a ragged end, a transposed (non-contiguous) operand, and inf, NaN,
    -0.0, tiny values; close to torch's exact GELU (whose far negative tail is
    not the rounded value either: absolute tolerance there)."""
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((300, 500)) * 3).astype(np.float32).T  # 150000 elements
    x[0, :7] = [np.inf, -np.inf, np.nan, -0.0, 0.0, 1e-40, -1e-30]
    got = OPS["gelu"].kernel(x, approximate="none")
    want = torch.nn.functional.gelu(torch.tensor(x)).numpy()
    assert got.dtype == np.float32 and got.shape == x.shape
    np.testing.assert_allclose(got, want, rtol=4e-7, atol=1e-6)
    assert np.signbit(got[0, 3]) == np.signbit(want[0, 3])


def test_float32_gelu_kernel_matches_the_exact_gelu(kernel_path) -> None:
    """The float32 GELU against x * erfc(-x/sqrt 2) / 2 in float64 (math.erfc,
    an oracle independent of torch, whose own 1 + erf cancels in the negative
    tail): relative error below 2e-6 from -3 up, below 2e-5 in the tail down
    to where the result leaves the normal range (|x| = 13)."""
    rng = np.random.default_rng(5)
    x = np.concatenate([np.linspace(-13, 13, 200_001),
                        rng.standard_normal(100_000) * 4]).astype(np.float32)
    got = OPS["gelu"].kernel(x, approximate="none").astype(np.float64)
    wide = x.astype(np.float64)
    want = np.array([0.5 * v * math.erfc(-v * math.sqrt(0.5)) for v in wide])
    keep = (np.abs(want) > 1e-37) & (np.abs(wide) > 0)
    rel = np.abs(got[keep] / want[keep] - 1)
    body = wide[keep] >= -3
    assert rel[body].max() < 2e-6, rel[body].max()
    assert rel[~body].max() < 2e-5, rel[~body].max()


@pytest.mark.parametrize("lo,count", [(-3.25, 1 << 17), (-1.0, 1 << 17), (0.5, 1 << 17),
                                      (1.5, 1 << 17), (-9.0, 1 << 15)])
def test_float32_gelu_kernel_ulp_error_over_every_float32_of_a_range(kernel_path, lo,
                                                                    count) -> None:
    """Every float32 from ``lo`` up (``count`` consecutive values) against
    x * erfc(-x/sqrt 2) / 2 in float64 (math.erfc): the errors the rational
    tail form measured when it was written (s13), as bounds. Above -1 the error
    is a few ulp (x/2 (1 + erf) rounds to about 1 ulp at best); the negative
    tail loses what x^2/2's float32 rounding costs exp (about x^2 ulp)."""
    start = np.array(lo, np.float32).view(np.int32)
    step = -1 if lo < 0 else 1  # toward zero from a negative lo: the values rise
    x = (start + step * np.arange(count, dtype=np.int32)).view(np.float32)
    got = OPS["gelu"].kernel(x, approximate="none").astype(np.float64)
    wide = x.astype(np.float64)
    want = 0.5 * wide * np.frompyfunc(math.erfc, 1, 1)(-wide * math.sqrt(0.5)).astype(np.float64)
    ulp = np.abs(got - want) / np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
    bound = {-3.25: 16, -1.0: 8, 0.5: 4, 1.5: 2, -9.0: 56}[lo]  # measured: 13.8 7.0 3.0 0.9 49
    assert ulp.max() <= bound, (lo, ulp.max())


def test_float32_gelu_kernel_at_the_infinities_and_signed_zeros(kernel_path) -> None:
    """gelu(+inf) = +inf (x h is inf * 0 there: patched after the loop), -inf
    gives NaN as torch's, -0.0 stays -0.0 (the max of +0.0 and -0.0)."""
    x = np.array([np.inf, -np.inf, -0.0, 0.0, np.nan, 3e38, -3e38], np.float32)
    got = OPS["gelu"].kernel(x, approximate="none")
    assert got[0] == np.inf and np.isnan(got[1]) and np.isnan(got[4])
    assert got[2] == 0 and np.signbit(got[2]) and not np.signbit(got[3])
    assert got[5] == np.float32(3e38) and got[6] == 0 and np.signbit(got[6])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gelu_gradient_from_its_output_matches_torch(kernel_path, mode, dtype) -> None:
    """gelu's derivative reads cdf = z / x off the forward's output, and a
    series near 0 (0/0, subnormal z): at 0, on both sides of each switch,
    far in the tails, and where the derivative crosses zero (x ~ -0.7518)."""
    pts = [0.0, -0.0, 1e-9, -1e-7, 9e-7, 1.1e-6, -9e-4, 1.1e-3, 0.3, -0.7518, -0.75,
           2.0, -3.5, 6.0, -12.0, -15.0, 30.0]
    x = np.array(pts, dtype=dtype)
    # the oracle: torch's float64 derivative at the same points (float32's own
    # 1 + erf cancels near the zero crossing: torch float32 is 4e-8 off there)
    tx = torch.tensor(x.astype(np.float64), requires_grad=True)
    torch.nn.functional.gelu(tx).sum().backward()
    got = pf.grad(lambda v: pf.nn.functional.gelu(v).sum())(pf.tensor(x)).numpy()
    tol = dict(rtol=1e-6, atol=1e-7) if dtype == "float32" else dict(rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(got, tx.grad.numpy().astype(dtype), **tol)


def test_pooling_recorded_for_the_wafer_keeps_the_window_slices() -> None:
    """The PE grid places tensors of rank <= 2 (batch dims folded): the rank-6
    reshape of the fast path is refused there, so under the csl backend the
    pooling records the window slices, and runs (simulator) as torch's."""
    x = np.random.default_rng(1).standard_normal((2, 3, 8, 8)).astype(np.float32)
    prev = csl_backend.configure(mode="simulator")
    try:
        with pf.backend("csl"):
            got = [F.max_pool2d(pf.tensor(x), 2).numpy(), F.avg_pool2d(pf.tensor(x), 2).numpy()]
    finally:
        csl_backend.configure(**vars(prev))
    tx = torch.tensor(x)
    for g, want in zip(got, [torch.nn.functional.max_pool2d(tx, 2),
                             torch.nn.functional.avg_pool2d(tx, 2)]):
        np.testing.assert_allclose(g, want.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("length", [8, 9, 12, 37, 64, 128, 255])
def test_softmax_family_with_folded_row_max_matches_torch(length) -> None:
    """softmax / log_softmax / logsumexp along rows of 8 to 256 (the row max
    folds in halves, ``dialects/nn.py: _fold_max``, and by adjacent pairs of
    the flat array once rows are even and at most 64 long (12: pairs, then an
    odd 3; 128: halves, then pairs); odd lengths carry their last element):
    values as torch, with NaN, all -inf and +inf rows; the row sums are one
    matrix-vector product."""
    rng = np.random.default_rng(length)
    x = (rng.standard_normal((64, 5, length)) * 4).astype(np.float32)
    x[0, 0, length // 2] = np.nan
    x[1, 1] = -np.inf
    x[2, 2, -1] = np.inf
    x[3, 3, ::2] = -np.inf
    tx = torch.tensor(x)
    for name, ours, theirs in (
            ("softmax", OPS["softmax"].kernel(x, dim=2), torch.softmax(tx, 2)),
            ("log_softmax", OPS["log_softmax"].kernel(x, dim=2), torch.log_softmax(tx, 2)),
            ("logsumexp", OPS["logsumexp"].kernel(x, dims=(2,), keepdim=False),
             torch.logsumexp(tx, 2))):
        np.testing.assert_allclose(ours, theirs.numpy(), rtol=2e-6, atol=1e-6,
                                   equal_nan=True, err_msg=name)
    # the shift itself (softmax is shift-invariant: the values above would not see a wrong one)
    from pyflame_mlir.dialects.nn import _max_of

    np.testing.assert_array_equal(_max_of(x, 2), np.max(x, axis=2, keepdims=True))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "int8",
                                   "uint8", "bool", "complex64", "complex128", "bfloat16"])
def test_where_kernel_is_numpys_where_bit_for_bit(dtype) -> None:
    """``where``'s kernel (a bitwise select, ``dialects/elementwise.py: _where``)
    against np.where: broadcast operands, NaN and -0.0 kept bit for bit, all
    false / all true conditions, ``out=`` (also aliasing either operand) and a
    transposed operand; the dtypes without a same-width integer fall back."""
    import ml_dtypes

    np_dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    kernel = OPS["where"].kernel
    rng = np.random.default_rng(7)
    for cs, xs, ys in [((5, 6), (5, 6), (5, 6)), ((5, 1), (1, 6), ()), ((), (5, 6), (6,)),
                       ((4, 5, 6), (5, 6), (4, 1, 1))]:
        x = np.asarray(rng.standard_normal(xs) * 3).astype(np_dtype)
        y = np.asarray(rng.standard_normal(ys) * 3).astype(np_dtype)
        if np.dtype(np_dtype).kind == "f" and x.ndim:
            x.flat[0], x.flat[-1] = np.nan, -0.0
        for c in (rng.random(cs) > 0.5, np.zeros(cs, bool), np.ones(cs, bool)):
            want = np.where(c, x, y)
            got = kernel(c, x, y)
            assert got.dtype == want.dtype and got.shape == want.shape
            assert got.tobytes() == want.tobytes()
            out = np.empty(want.shape, want.dtype)
            assert kernel(c, x, y, out=out) is out and out.tobytes() == want.tobytes()
            for alias in ("x", "y"):
                a, b = x.copy(), y.copy()
                target = a if alias == "x" else b
                if target.shape == want.shape:
                    kernel(c, a, b, out=target)
                    assert target.tobytes() == want.tobytes(), alias
    a = rng.standard_normal((8, 10)).astype(np.float32).T
    b = rng.standard_normal((10, 8)).astype(np.float32)
    c = rng.random((10, 8)) > 0.3
    assert kernel(c, a, b).tobytes() == np.where(c, a, b).tobytes()


@pytest.mark.parametrize("layout", [(1, 0, 2, 3), (3, 0, 1, 2), (0, 1, 3, 2)])
def test_relu_kernel_on_permuted_views_matches_numpy(layout) -> None:
    """relu of a permuted view (a conv's (O, N, H, W) result seen as (N, O, H,
    W): trailing runs of H*W compare against one broadcast block of zeros; no
    contiguous run: numpy's scalar loop): numpy's maximum against 0 bit for
    bit, NaN and signed zeros included, with and without an ``out`` buffer."""
    rng = np.random.default_rng(7)
    base = rng.standard_normal((16, 8, 20, 24)).astype(np.float32)
    base[0, 0, 0, :4] = [np.nan, -0.0, 0.0, -np.inf]
    x = base.transpose(layout)
    want = np.maximum(x, np.float32(0))
    relu = OPS["relu"].kernel
    for got in (relu(x), relu(x, out=np.empty(x.shape, np.float32))):
        assert got.shape == x.shape
        np.testing.assert_array_equal(got.view(np.int32), np.ascontiguousarray(want).view(np.int32))


def test_float32_gelu_grad_kernel_matches_torch_float64_on_many_elements(kernel_path) -> None:
    """``gelu_grad``'s kernel over a long ragged array (the C loop's vector
    body and its tail) with tails, the series' neighbourhood of 0 and inf,
    NaN: against torch's float64 derivative times the cotangent."""
    rng = np.random.default_rng(11)
    x = np.concatenate([rng.standard_normal(70_001) * 4, rng.standard_normal(3001) * 1e-3,
                        [0.0, -0.0, 1e-3, -1e-3, 9.9e-4, 20.0, -20.0, np.inf, -np.inf, np.nan]]
                       ).astype(np.float32)
    z = OPS["gelu"].kernel(x, approximate="none")
    ct = rng.standard_normal(x.shape).astype(np.float32)
    got = OPS["gelu_grad"].kernel(x, z, ct)
    tx = torch.tensor(x.astype(np.float64))
    want = torch.ops.aten.gelu_backward(torch.tensor(ct.astype(np.float64)), tx).numpy()
    assert got.dtype == np.float32 and got.shape == x.shape
    fin = np.isfinite(x)
    np.testing.assert_allclose(got[fin], want[fin], rtol=2e-6, atol=2e-7)
    assert np.isnan(got[-1])  # NaN in, NaN out


@pytest.mark.parametrize("shape", [(16, 4, 64, 64), (1024, 256), (37, 5), (3, 7, 13), (2, 1)])
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_float32_softmax_rows_match_torch(kernel_path, op, shape) -> None:
    """softmax / log_softmax along the last axis: rows of 64 and 256, short
    and ragged rows (the C loop's 8-wide blocks and their tails); rows with
    -inf, an all -inf row, +inf, NaN and large values, as numpy's kernel
    (torch gives the same but for a row of all -inf, where both give NaN)."""
    rng = np.random.default_rng(sum(shape))
    x = (rng.standard_normal(shape) * 5).astype(np.float32)
    flat = x.reshape(-1, shape[-1])
    if flat.shape[0] >= 6:
        flat[0, 0] = -np.inf
        flat[1, :] = -np.inf
        flat[2, -1] = np.inf
        flat[3, 0] = np.nan
        flat[4, :] = 80.0
        flat[5] *= 30
    got = OPS[op].kernel(x, dim=x.ndim - 1)
    want = getattr(torch, op)(torch.tensor(x), -1).numpy()
    assert got.dtype == np.float32 and got.shape == x.shape
    # log_softmax = (x - max) - log(sum): an absolute error of the log's rounding
    tol = dict(rtol=2e-6, atol=1e-7 if op == "softmax" else 4e-6)
    np.testing.assert_allclose(got, want, **tol)
    x64 = x.astype(np.float64)  # float64 oracle: the rows of finite values
    w64 = getattr(torch, op)(torch.tensor(x64), -1).numpy()
    ok = np.isfinite(x64).all(axis=-1)
    np.testing.assert_allclose(got[ok], w64[ok], **tol)


def test_softmax_gradients_through_the_c_rows_match_torch(kernel_path) -> None:
    """The attention shape's softmax forward + backward under pf.grad."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 3, 9, 9)).astype(np.float32)
    g = rng.standard_normal(x.shape).astype(np.float32)
    for op in ("softmax", "log_softmax"):
        got = pf.grad(lambda v, op=op: (getattr(F, op)(v, -1) * pf.tensor(g)).sum())(
            pf.tensor(x)).numpy()
        tx = torch.tensor(x.astype(np.float64), requires_grad=True)
        (getattr(torch, op)(tx, -1) * torch.tensor(g.astype(np.float64))).sum().backward()
        np.testing.assert_allclose(got, tx.grad.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fill", [False, True])
def test_scatter_add_of_whole_rows_matches_add_at_bit_for_bit(kernel_path, fill) -> None:
    """An embedding's gradient (scatter_add along dim 0 with an index constant
    along each row, broadcast or materialized): the C loop adds the rows in
    index order, np.add.at's order and bits, on a nonzero input and on a
    broadcast zero (the autodiff zero), with repeated rows and -0.0; numpy's
    body sums each run of a row first (close, not the same bits)."""
    rng = np.random.default_rng(2)
    tok = rng.integers(0, 50, 300)
    src = rng.standard_normal((300, 24)).astype(np.float32)
    src[:5] = -0.0
    x = np.broadcast_to(np.float32(0), (50, 24)) if fill else \
        rng.standard_normal((50, 24)).astype(np.float32)
    for idx in (np.broadcast_to(tok[:, None], src.shape), np.repeat(tok[:, None], 24, axis=1)):
        got = OPS["scatter_add"].kernel(x, idx, src, dim=0)
        want = np.array(x, copy=True)
        np.add.at(want, (idx, np.arange(24)[None, :]), src)
        if kernel_path == "numpy":  # sums each run of equal rows first: rounding apart
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        else:
            np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))
    with pytest.raises(IndexError):
        OPS["scatter_add"].kernel(x, np.broadcast_to(np.array([[50]]), (1, 24)), src[:1], dim=0)


def test_c_loops_split_over_two_threads_give_the_same_bits(monkeypatch) -> None:
    """Long loops run in two halves on two threads (``set_threads``): GELU,
    its derivative, softmax rows and max pooling give the one-thread bits."""
    from pyflame_mlir.dialects import native_kernels

    native = native_kernels.KERNELS
    if native is None:
        pytest.skip("dialects/_kernels.c is not built (or PYFLAME_NO_NATIVE=1)")
    rng = np.random.default_rng(9)
    x = (rng.standard_normal((16, 64, 512)) * 3).astype(np.float32)
    s = rng.standard_normal((16, 4, 64, 64)).astype(np.float32)
    p = rng.standard_normal((64, 16, 28, 28)).astype(np.float32)
    p_batch_last = np.ascontiguousarray(p.transpose(1, 2, 3, 0)).transpose(3, 0, 1, 2)
    z = OPS["gelu"].kernel(x, approximate="none")
    pool = dict(kernel=(2, 2), stride=(2, 2), padding=(0, 0), dilation=(1, 1), ceil_mode=False)
    runs = []
    before = native.set_threads(1)
    try:
        for n in (1, 2):
            native.set_threads(n)
            runs.append([OPS["gelu"].kernel(x, approximate="none"),
                         OPS["gelu_grad"].kernel(x, z, x),
                         OPS["softmax"].kernel(s, dim=3), OPS["log_softmax"].kernel(s, dim=3),
                         *OPS["max_pool"].kernel(p, **pool),
                         *OPS["max_pool"].kernel(p_batch_last, **pool)])
    finally:
        native.set_threads(before)
    for one, two in zip(*runs):
        np.testing.assert_array_equal(one.view(np.int32) if one.dtype == np.float32 else one,
                                      two.view(np.int32) if two.dtype == np.float32 else two)


def test_the_kernels_extension_is_built() -> None:
    """``dialects/_kernels.c`` is built by ``pip install -e .`` (``make``):
    without it the numpy bodies run, correct but slower, so CI must notice."""
    import os

    from pyflame_mlir.dialects import native_kernels

    if os.environ.get("PYFLAME_NO_NATIVE", "") not in ("", "0"):
        pytest.skip("PYFLAME_NO_NATIVE is set")
    assert native_kernels.KERNELS is not None, (
        "pyflame_mlir.dialects._kernels is missing or stale: rebuild it with "
        "pip install -e . (make) or python setup.py build_ext --inplace")


def test_relu_of_strided_views_matches_numpy_bit_for_bit(kernel_path) -> None:
    """relu of non-contiguous float32 views (a conv's (O, N, H, W) and
    (C, H, W, N) results seen as NCHW, a 5-d permutation, a broadcast) into
    C-order results, with NaN, +-inf and -0.0: numpy's maximum(x, 0)."""
    rng = np.random.default_rng(8)
    base = rng.standard_normal((16, 64, 28, 28)).astype(np.float32)
    base.reshape(-1)[::97] = np.nan
    base.reshape(-1)[1::89] = -0.0
    base.reshape(-1)[2::83] = -np.inf
    base.reshape(-1)[3::79] = np.inf
    views = [base.transpose(1, 0, 2, 3), base[:8, :, :14].transpose(3, 0, 1, 2),
             base[:6, :5, :4, :3].reshape(6, 5, 4, 3, 1).transpose(4, 2, 0, 3, 1),
             base[:, :, :5, :5].transpose(2, 3, 1, 0),
             np.broadcast_to(base[0, 0, 0], (40, 30, 28))]
    for v in views:
        got = OPS["relu"].kernel(v)
        want = np.maximum(v, np.float32(0))
        assert got.shape == want.shape and got.dtype == np.float32
        np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))
        out = np.empty(v.shape, np.float32)
        assert OPS["relu"].kernel(v, out=out) is out
        np.testing.assert_array_equal(out.view(np.int32), want.view(np.int32))
