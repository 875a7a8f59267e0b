"""Creation ops against torch: dtype inference of tensor/asarray/from_numpy,
zeros/ones/full/arange/eye and the *_like family, random tensors and
manual_seed determinism."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import torch
from _oracles import ALL_DTYPES, assert_close, examples, torch_dtype, torch_name
from hypothesis import given, settings
from hypothesis import strategies as st

import pyflame_mlir as pf

# ------------------------------------------------------------ tensor / asarray


@pytest.mark.parametrize("data", [
    3, 2.5, True, -0.0, [1, 2, 3], [1.0, 2.5], [1, 2.5], [True, False], [True, 1],
    [[1, 2], [3, 4]], [[1.5], [2.5]], [], [[]], [[True]], 10**12,
], ids=repr)
def test_tensor_dtype_inference_from_python(data):
    """Python data: ints -> int64, floats -> float32 (the default), bools -> bool."""
    ours, theirs = pf.tensor(data), torch.tensor(data)
    assert ours.dtype.name == torch_name(theirs.dtype)
    assert_close(ours, theirs, rtol=0, atol=0)
    assert not pf.is_lazy(ours)
    assert pf.asarray(data).dtype is ours.dtype
    assert pf.as_tensor(data).dtype is ours.dtype


@pytest.mark.parametrize("npdt", [np.float64, np.float32, np.float16, ml_dtypes.bfloat16,
                                  np.int32, np.int64, np.bool_], ids=lambda d: np.dtype(d).name)
def test_tensor_from_numpy_keeps_dtype(npdt):
    arr = (np.arange(6).reshape(2, 3) % 3).astype(npdt)
    for make in (pf.tensor, pf.asarray, pf.from_numpy):
        t = make(arr)
        assert t.dtype.np == np.dtype(npdt) and t.shape == (2, 3)
        np.testing.assert_array_equal(t.numpy(), arr)
    if npdt is not ml_dtypes.bfloat16:
        assert pf.tensor(arr).dtype.name == torch_name(torch.tensor(arr).dtype)
        assert pf.tensor(np.ones((), npdt)).dtype.name == torch_name(
            torch.tensor(np.ones((), npdt)).dtype)
    # numpy scalars keep their dtype too (torch.tensor(np.float64(1)) is float64)
    assert pf.tensor(np.dtype(npdt).type(1)).dtype.np == np.dtype(npdt)


@pytest.mark.parametrize("dt", ALL_DTYPES, ids=lambda d: d.name)
def test_tensor_with_dtype(dt):
    data = [[1.7, -2.2, 0.0], [3.0, 0.5, -0.5]]
    if dt is pf.uint8:  # torch's overflow check: -2.2 has no uint8 value
        with pytest.raises(RuntimeError, match="without overflow"):
            torch.tensor(data, dtype=torch_dtype(dt))
        with pytest.raises(RuntimeError, match="cannot be converted to type uint8"):
            pf.tensor(data, dtype=dt)
        data = [[1.7, 2.2, 0.0], [3.0, 0.5, 255.0]]
    ours, theirs = pf.tensor(data, dtype=dt), torch.tensor(data, dtype=torch_dtype(dt))
    assert_close(ours, theirs, rtol=0, atol=0)
    assert pf.tensor(data, dtype=dt.name).dtype is dt
    assert pf.tensor(data, dtype=torch_dtype(dt)).dtype is dt
    assert pf.asarray(np.array(data), dtype=dt).dtype is dt


def test_copy_and_sharing_semantics():
    arr = np.arange(4.0)
    copied, shared, fn = pf.tensor(arr), pf.asarray(arr), pf.from_numpy(arr)
    assert not np.shares_memory(copied.numpy(), arr)
    assert np.shares_memory(shared.numpy(), arr)
    assert np.shares_memory(fn.numpy(), arr)
    t = pf.tensor([1.0, 2.0])
    assert pf.asarray(t) is t  # a tensor passes through asarray
    assert pf.asarray(t, dtype=pf.float64).dtype is pf.float64
    c = pf.tensor(t * 2)  # tensor() of a promise evaluates and copies
    assert c.tolist() == [2.0, 4.0] and not pf.is_lazy(c)


def test_unsupported_host_data():
    for bad in (np.zeros(3, np.uint16), np.zeros(3, np.uint32), np.zeros(3, np.complex64)):
        with pytest.raises(TypeError):
            pf.from_numpy(bad)
    with pytest.raises(TypeError):
        pf.from_numpy([1, 2, 3])
    with pytest.raises(TypeError):
        pf.tensor(["a", "b"])
    with pytest.raises(TypeError):
        pf.tensor([1.0], dtype="complex64")


# ------------------------------------------------------------ constant creation

@pytest.mark.parametrize("dt", [None] + list(ALL_DTYPES), ids=lambda d: getattr(d, "name", "-"))
def test_zeros_ones(dt):
    kw = {} if dt is None else {"dtype": dt}
    tkw = {} if dt is None else {"dtype": torch_dtype(dt)}
    for size in [(), (0,), (3,), (2, 3), (1, 0, 2)]:
        for fn in ("zeros", "ones"):
            ours_var = getattr(pf, fn)(*size, **kw)
            ours_tuple = getattr(pf, fn)(size, **kw)
            ours_list = getattr(pf, fn)(list(size), **kw)
            theirs = getattr(torch, fn)(size, **tkw)
            for o in (ours_var, ours_tuple, ours_list):
                assert_close(o, theirs, rtol=0, atol=0, what=f"{fn}{size}")


@pytest.mark.parametrize("fill", [0, 3, -2, 2.5, -0.0, True, False, float("inf")], ids=repr)
def test_full(fill):
    ours, theirs = pf.full((2, 3), fill), torch.full((2, 3), fill)
    assert_close(ours, theirs, rtol=0, atol=0)
    assert_close(pf.full(4, fill), torch.full((4,), fill), rtol=0, atol=0)
    for dt in ALL_DTYPES:
        if dt is not pf.bool and isinstance(fill, float) and fill == float("inf") and \
                not dt.is_floating_point:
            continue  # inf has no integer value
        assert_close(pf.full((2,), fill, dtype=dt),
                     torch.full((2,), fill, dtype=torch_dtype(dt)), rtol=0, atol=0)


@pytest.mark.parametrize("src", [pf.float32, pf.float16, pf.int32, pf.bool],
                         ids=lambda d: d.name)
def test_like_family(src, lazy):
    x = pf.ones(2, 3, dtype=src) * (1 if src is not pf.bool else True)
    tx = torch.ones(2, 3, dtype=torch_dtype(src))
    assert_close(pf.zeros_like(x), torch.zeros_like(tx), rtol=0, atol=0)
    assert_close(pf.ones_like(x), torch.ones_like(tx), rtol=0, atol=0)
    assert_close(pf.full_like(x, 2.7), torch.full_like(tx, 2.7), rtol=0, atol=0)
    assert_close(pf.full_like(x, 7, dtype=pf.float64), torch.full_like(tx, 7,
                                                                      dtype=torch.float64))
    assert_close(pf.zeros_like(x, dtype=pf.int64), torch.zeros_like(tx, dtype=torch.int64))
    assert pf.is_lazy(x), "*_like needs only metadata: it does not evaluate its argument"
    if src.is_floating_point:
        r = pf.randn_like(x)
        assert r.shape == (2, 3) and r.dtype is src
        u = pf.rand_like(x, dtype=pf.float64)
        assert u.dtype is pf.float64 and ((u.numpy() >= 0) & (u.numpy() < 1)).all()


@pytest.mark.parametrize("args,kw", [
    ((5,), {}), ((0,), {}), ((3, 3), {}), ((2, 9), {}), ((2, 9, 3), {}), ((10, 0, -3), {}),
    ((0, 1, 0.1), {}), ((1, 2.5, 0.5), {}), ((0.0, 5), {}), ((-1.5, 1.5, 0.25), {}),
    ((5,), {"dtype": pf.float64}), ((5,), {"dtype": pf.int32}), ((1, 4), {"dtype": pf.float16}),
    ((0, 3000), {"dtype": pf.float16}), ((0, 300), {"dtype": pf.bfloat16}),
    ((3, -3, -0.5), {}), ((0, 2, 0.3), {"dtype": pf.float64}),
], ids=repr)
def test_arange(args, kw):
    tkw = {k: torch_dtype(v) for k, v in kw.items()}
    ours, theirs = pf.arange(*args, **kw), torch.arange(*args, **tkw)
    assert_close(ours, theirs, rtol=1e-6, atol=1e-6)
    assert ours.shape == tuple(theirs.shape)


def test_arange_errors():
    with pytest.raises(ValueError, match="step"):
        pf.arange(0, 5, 0)
    for args in [(-3,), (0, 5, -1), (5, 0, 1)]:  # torch: inconsistent with step sign
        with pytest.raises(RuntimeError):
            torch.arange(*args)
        with pytest.raises(ValueError, match="inconsistent"):
            pf.arange(*args)


@pytest.mark.parametrize("n,m", [(3, None), (1, None), (0, None), (2, 4), (4, 2), (3, 0)])
@pytest.mark.parametrize("dt", [None, pf.float64, pf.int32, pf.bool, pf.bfloat16],
                         ids=lambda d: getattr(d, "name", "-"))
def test_eye(n, m, dt):
    kw = {} if dt is None else {"dtype": dt}
    tkw = {} if dt is None else {"dtype": torch_dtype(dt)}
    ours = pf.eye(n, m, **kw) if m is not None else pf.eye(n, **kw)
    theirs = torch.eye(n, m, **tkw) if m is not None else torch.eye(n, **tkw)
    assert_close(ours, theirs, rtol=0, atol=0)


def test_creation_is_recorded_not_host_data(lazy):
    """zeros/ones/full/arange/eye are recorded ops (lazy); tensor/randn are leaves."""
    for t in (pf.zeros(2), pf.ones(2), pf.full((2,), 3.0), pf.arange(3), pf.eye(2)):
        assert pf.is_lazy(t)
    for t in (pf.tensor([1.0]), pf.randn(2), pf.rand(2), pf.randint(5, size=(2,)),
              pf.from_numpy(np.ones(2))):
        assert not pf.is_lazy(t)


def test_negative_sizes_rejected():
    with pytest.raises(ValueError, match="negative"):
        pf.zeros(2, -1)
    with pytest.raises(ValueError, match="negative"):
        pf.randn(-2)


# ------------------------------------------------------------ random

def test_random_shapes_dtypes_and_ranges():
    for fn in (pf.randn, pf.rand):
        assert fn(2, 3).shape == (2, 3) and fn((2, 3)).shape == (2, 3)
        assert fn().shape == () and fn(0, 4).shape == (0, 4)
        assert fn(2, 3).dtype is pf.float32
        for dt in (pf.float64, pf.float16, pf.bfloat16):
            assert fn(4, dtype=dt).dtype is dt
            assert fn(4, dtype=dt).numpy().dtype == dt.np
        with pytest.raises(TypeError):
            fn(3, dtype=pf.int32)
    u = pf.rand(10000).numpy()
    assert (u >= 0).all() and (u < 1).all() and abs(u.mean() - 0.5) < 0.02
    g = pf.randn(20000, dtype=pf.float64).numpy()
    assert abs(g.mean()) < 0.05 and abs(g.std() - 1) < 0.05
    r = pf.randint(3, 7, size=(1000,))
    assert r.dtype is pf.int64 and r.numpy().min() == 3 and r.numpy().max() == 6
    assert pf.randint(4, size=(10,), dtype=pf.int32).dtype is pf.int32
    assert 0 <= pf.randint(4, size=(50,)).numpy().min()


@settings(max_examples=examples(20), deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(0, 6))
def test_manual_seed_determinism(seed, n):
    pf.manual_seed(seed)
    a = [pf.randn(n, 3), pf.rand(n), pf.randint(0, 100, size=(n,)), pf.randn(2, dtype=pf.float16)]
    pf.manual_seed(seed)
    b = [pf.randn(n, 3), pf.rand(n), pf.randint(0, 100, size=(n,)), pf.randn(2, dtype=pf.float16)]
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x.numpy(), y.numpy())
    pf.manual_seed(seed + 1)
    c = pf.randn(n, 3)
    if n:
        assert not np.array_equal(a[0].numpy(), c.numpy())
    # the next draw after a seed continues the stream, not a repeat
    pf.manual_seed(seed)
    first, second = pf.randn(8), pf.randn(8)
    assert not np.array_equal(first.numpy(), second.numpy())


def test_non_contiguous_host_data():
    """Strided, reversed, transposed and Fortran-ordered arrays are leaves like any other."""
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    for v in (a[:, ::2], a[::-1], a.T, np.asfortranarray(a), a[1:3, 2:5]):
        x = pf.from_numpy(v)
        assert_close(pf.tensor(v), v, rtol=0, atol=0)
        assert_close((x * 2 + 1).sum(0), torch.from_numpy(v.copy()).mul(2).add(1).sum(0))
        assert_close(x.T.reshape(-1), v.T.reshape(-1), rtol=0, atol=0)
        assert_close(x[::2, 1:], v[::2, 1:], rtol=0, atol=0)
        assert_close(x @ x.T, torch.from_numpy(v.copy()) @ torch.from_numpy(v.copy()).T)
