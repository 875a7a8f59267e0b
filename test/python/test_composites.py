"""pyflame_mlir/composites.py against torch: values on drawn shapes and
special values, float64 gradients where torch has them, lazy and eager."""
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import pyflame_mlir as pf

SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, 2.5, -3.0, np.inf, -np.inf, np.nan, 1e-30, 80.0],
                   dtype=np.float64)

# name -> (number of float inputs, keyword arguments, differentiable)
POINTWISE = {
    "addcmul": (3, {"value": 0.5}, True),
    "addcdiv": (3, {"value": -2.0}, True),
    "logaddexp": (2, {}, True),
    "logaddexp2": (2, {}, True),
    "xlogy": (2, {}, True),
    "hypot": (2, {}, True),
    "sinc": (1, {}, True),
    "deg2rad": (1, {}, True),
    "rad2deg": (1, {}, True),
}


def _both(arrays):
    return [pf.tensor(a) for a in arrays], [torch.tensor(a) for a in arrays]


@pytest.mark.parametrize("name", sorted(POINTWISE))
def test_pointwise_special_values(name, mode):
    n, kw, _ = POINTWISE[name]
    grids = np.meshgrid(*[SPECIAL] * n, indexing="ij")
    arrays = [g.ravel().astype(np.float32) for g in grids]
    ours, theirs = _both(arrays)
    got = getattr(pf, name)(*ours, **kw).numpy()
    want = getattr(torch, name)(*theirs, **kw).numpy()
    # atol: float32 cancellation near 0 (logaddexp2 of -1 and 1e-30)
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-7, equal_nan=True)


@pytest.mark.parametrize("name", sorted(POINTWISE))
@settings(max_examples=10, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=0, max_size=3), seed=st.integers(0, 99))
def test_pointwise_gradients_float64(name, shape, seed):
    n, kw, _ = POINTWISE[name]
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(0.5, 2.0, shape) * rng.choice([-1, 1], shape) for _ in range(n)]
    if name in ("xlogy",):
        arrays[1] = np.abs(arrays[1])
    ours = [pf.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    w = rng.standard_normal(shape)
    (getattr(pf, name)(*ours, **kw) * pf.tensor(w)).sum().backward()
    (getattr(torch, name)(*theirs, **kw) * torch.tensor(w)).sum().backward()
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_in_place_forms_and_methods(mode):
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal((3, 4)).astype(np.float32) for _ in range(3))
    x, tx = pf.tensor(a), torch.tensor(a)
    x.addcdiv_(pf.tensor(b), pf.tensor(c), value=0.3)
    tx.addcdiv_(torch.tensor(b), torch.tensor(c), value=0.3)
    np.testing.assert_allclose(x.numpy(), tx.numpy(), rtol=1e-6)
    x.addcmul_(pf.tensor(b), pf.tensor(c))
    tx.addcmul_(torch.tensor(b), torch.tensor(c))
    np.testing.assert_allclose(x.numpy(), tx.numpy(), rtol=1e-6)
    np.testing.assert_allclose(pf.tensor(a).logaddexp(pf.tensor(b)).numpy(),
                               torch.tensor(a).logaddexp(torch.tensor(b)).numpy(), rtol=1e-6)


def test_addcdiv_of_integers_raises():
    with pytest.raises(pf.ShapeError, match="addcdiv.*integer division"):
        pf.addcdiv(pf.ones(2), pf.tensor([1, 2]), pf.tensor([1, 2]))


@settings(max_examples=15, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3), n=st.integers(0, 3),
       seed=st.integers(0, 99), data=st.data())
def test_diff(shape, n, seed, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    a = np.random.default_rng(seed).standard_normal(shape)
    pre = np.ones([1 if i == dim % len(shape) else s for i, s in enumerate(shape)])
    got = pf.diff(pf.tensor(a), n=n, dim=dim, prepend=pf.tensor(pre)).numpy()
    want = torch.diff(torch.tensor(a), n=n, dim=dim, prepend=torch.tensor(pre)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_diff_of_bools_is_xor():
    a = np.array([True, False, False, True])
    assert pf.diff(pf.tensor(a)).tolist() == torch.diff(torch.tensor(a)).tolist()


@pytest.mark.parametrize("dim", [None, 0, 1, -1])
def test_cross(dim, mode):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    got = pf.cross(pf.tensor(a), pf.tensor(b), dim=dim).numpy()
    want = torch.cross(torch.tensor(a), torch.tensor(b), dim=dim).numpy() if dim is not None \
        else torch.linalg.cross(torch.tensor(a), torch.tensor(b), dim=0).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12)
    with pytest.raises(pf.ShapeError, match="cross"):
        pf.cross(pf.ones(2, 4), pf.ones(2, 4), dim=1)


@pytest.mark.parametrize("sa, sb, dims", [
    ((2, 3), (4,), 0), ((3, 4, 5), (5, 2), 1), ((3, 4, 5), (4, 5, 2), 2),
    ((3, 4, 5), (4, 3, 5), ([1, 0], [0, 1])), ((3, 4, 5), (5, 4, 2), ([2], [0])), ((), (), 0)])
def test_tensordot(sa, sb, dims, mode):
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    got = pf.tensordot(pf.tensor(a), pf.tensor(b), dims=dims).numpy()
    want = torch.tensordot(torch.tensor(a), torch.tensor(b), dims=dims).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-10)


@settings(max_examples=10, deadline=None)
@given(sa=st.lists(st.integers(1, 3), min_size=0, max_size=3),
       sb=st.lists(st.integers(1, 3), min_size=0, max_size=3))
def test_kron(sa, sb):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    np.testing.assert_allclose(pf.kron(pf.tensor(a), pf.tensor(b)).numpy(),
                               torch.kron(torch.tensor(a), torch.tensor(b)).numpy(), rtol=1e-12)


@pytest.mark.parametrize("p", [0.0, 1.0, 1.5, 2.0, 3.0, math.inf])
def test_cdist_values_and_gradients(p):
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((2, 4, 3)), rng.standard_normal((2, 5, 3))
    b[0, 0] = a[0, 0]  # a zero distance: torch's gradient there is 0
    x, y = pf.tensor(a, requires_grad=True), pf.tensor(b, requires_grad=True)
    tx, ty = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    d, td = pf.cdist(x, y, p=p), torch.cdist(tx, ty, p=p)
    np.testing.assert_allclose(d.numpy(), td.detach().numpy(), rtol=1e-10, atol=1e-12)
    if p in (0.0, math.inf):
        return  # torch's subgradient choices at ties; the values are checked above
    w = rng.standard_normal(d.shape)
    (d * pf.tensor(w)).sum().backward()
    (td * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(y.grad.numpy(), ty.grad.numpy(), rtol=1e-8, atol=1e-10)


def test_construction():
    a, b = pf.tensor([1, 2, 3]), pf.tensor([4, 5])
    assert pf.cartesian_prod(a, b).tolist() == \
        torch.cartesian_prod(torch.tensor([1, 2, 3]), torch.tensor([4, 5])).tolist()
    blocks = [np.ones((2, 2)), np.array([3.0, 4.0, 5.0]), np.array(7.0)]
    np.testing.assert_array_equal(pf.block_diag(*[pf.tensor(x) for x in blocks]).numpy(),
                                  torch.block_diag(*[torch.tensor(x) for x in blocks]).numpy())
    for r, c, o in [(3, 3, 0), (4, 3, 1), (3, 5, -1), (0, 2, 0)]:
        assert pf.tril_indices(r, c, o).tolist() == torch.tril_indices(r, c, o).tolist()
        assert pf.triu_indices(r, c, o).tolist() == torch.triu_indices(r, c, o).tolist()


@pytest.mark.parametrize("right", [False, True])
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 99), batched=st.booleans())
def test_searchsorted_and_bucketize(right, seed, batched):
    rng = np.random.default_rng(seed)
    seq = np.sort(rng.integers(0, 6, (3, 5) if batched else (5,)).astype(np.float32), -1)
    v = rng.integers(-1, 7, (3, 4)).astype(np.float32)
    got = pf.searchsorted(pf.tensor(seq), pf.tensor(v), right=right).numpy()
    want = torch.searchsorted(torch.tensor(seq), torch.tensor(v), right=right).numpy()
    np.testing.assert_array_equal(got, want)
    if not batched:
        np.testing.assert_array_equal(
            pf.bucketize(pf.tensor(v), pf.tensor(seq), right=right).numpy(),
            torch.bucketize(torch.tensor(v), torch.tensor(seq), right=right).numpy())
    assert int(pf.searchsorted(pf.tensor([1.0, 2.0]), pf.tensor(1.5))) == 1


def test_counting_and_unique(mode):
    x = np.array([0, 2, 2, 5, 1, 2])
    w = np.linspace(0, 1, 6)
    assert pf.bincount(pf.tensor(x)).tolist() == torch.bincount(torch.tensor(x)).tolist()
    np.testing.assert_allclose(pf.bincount(pf.tensor(x), pf.tensor(w), minlength=8).numpy(),
                               torch.bincount(torch.tensor(x), torch.tensor(w), 8).numpy())
    with pytest.raises(pf.ShapeError, match="non-negative"):
        pf.bincount(pf.tensor([1, -1]))
    h = np.random.default_rng(5).standard_normal(50).astype(np.float32)
    for lo, hi in [(0, 0), (-1, 1)]:
        np.testing.assert_array_equal(pf.histc(pf.tensor(h), 7, lo, hi).numpy(),
                                      torch.histc(torch.tensor(h), 7, lo, hi).numpy())
    u = np.array([[3, 1], [3, 2], [1, 1]])
    for kw in [{}, {"return_inverse": True, "return_counts": True}, {"dim": 0}]:
        got = pf.unique(pf.tensor(u), **kw)
        want = torch.unique(torch.tensor(u), **kw)
        got, want = (got, want) if isinstance(got, tuple) else ((got,), (want,))
        for g, t in zip(got, want):
            assert g.tolist() == t.tolist()


def test_dtype_and_broadcast_helpers():
    assert pf.promote_types(pf.int32, pf.float16) is pf.float16
    assert pf.result_type(pf.ones(2, dtype=pf.int64), 2.0) is pf.float32
    assert pf.broadcast_shapes((3, 1), (1, 4), 4) == (3, 4)
    a, b = pf.broadcast_tensors(pf.ones(3, 1), pf.zeros(4))
    assert a.shape == b.shape == (3, 4)
    with pytest.raises(pf.ShapeError, match="broadcast"):
        pf.broadcast_shapes((3,), (4,))


def test_inference_mode():
    w = pf.ones(2, requires_grad=True)
    with pf.inference_mode():
        assert not (w * 2).requires_grad
    with pf.inference_mode(False):
        assert (w * 2).requires_grad

    @pf.inference_mode()
    def f(x):
        return x * 2
    assert not f(w).requires_grad


def test_unique_keeps_every_nan_distinct_as_torch() -> None:
    """torch.unique: NaN != NaN, so each NaN is its own value (numpy's
    np.unique merges them by default)."""
    x = [1.0, float("nan"), 2.0, float("nan"), 1.0]
    want = torch.unique(torch.tensor(x), return_inverse=True, return_counts=True)
    got = pf.unique(pf.tensor(x), return_inverse=True, return_counts=True)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w.numpy())
