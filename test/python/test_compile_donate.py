"""pf.compile(donate_argnums=...): JAX's semantics. A donated argument's
buffer may hold a result (the reference executor writes into it), and the
donated tensor is deleted: using it raises. A buffer anyone else can see (a
numpy handle, a view, another tensor) is never written."""

from __future__ import annotations

import numpy as np
import pytest

import pyflame_mlir as pf


def _addr(t: pf.Tensor) -> int:
    return t._value.__array_interface__["data"][0]  # an int: holds no reference


def _f(x, y):  # the first result is made after the last read of x: it may take x's buffer
    s = (x * y).sum()
    return pf.tanh(y) * s + y, s


def _want(x, y):
    s = (x * y).sum()
    return np.tanh(y) * s + y, s


def test_donated_buffer_is_reused_and_the_tensor_deleted():
    cf = pf.compile(_f, donate_argnums=0)
    rng = np.random.default_rng(0)
    reused = 0
    for _ in range(4):
        xs, ys = rng.standard_normal((2, 3, 4)).astype(np.float32)
        x, y = pf.tensor(xs), pf.tensor(ys)
        at = _addr(x)
        out, s = cf(x, y)
        reused += _addr(out) == at
        want = _want(xs, ys)
        np.testing.assert_allclose(out.numpy(), want[0], rtol=1e-5)
        np.testing.assert_allclose(s.numpy(), want[1], rtol=1e-5)
        with pytest.raises(RuntimeError, match="donated .* deleted"):
            x.numpy()
        with pytest.raises(RuntimeError, match="pyflame.add: .*donated"):
            x + 1
        with pytest.raises(RuntimeError, match="deleted"):
            cf(x, y)
        assert x.shape == (3, 4)  # the metadata stays, as in JAX
        y.numpy()  # not donated: alive
    assert reused == 3  # every replay writes the result into the donated buffer


@pytest.mark.usefixtures("lazy")
def test_a_pending_op_reading_a_donated_tensor_raises():
    """Lazy-only: it needs an op still pending when its input is donated; in
    eager mode ``x * 2`` has run before the donation (nothing to refuse)."""
    cf = pf.compile(_f, donate_argnums=0)
    y = pf.tensor(np.ones((3, 4), np.float32))
    cf(pf.tensor(np.ones((3, 4), np.float32)), y)
    x = pf.tensor(np.ones((3, 4), np.float32))
    lazy = x * 2  # recorded before the donation, evaluated after
    cf(x, y)
    with pytest.raises(RuntimeError, match="donated"):
        lazy.numpy()


def test_a_shared_buffer_is_never_written():
    cf = pf.compile(_f, donate_argnums=0)
    rng = np.random.default_rng(1)
    ys = rng.standard_normal((3, 4)).astype(np.float32)
    cf(pf.tensor(ys), pf.tensor(ys))
    xs = rng.standard_normal((3, 4)).astype(np.float32)
    keep = xs.copy()
    x = pf.asarray(xs)  # shares xs: the caller still sees the buffer
    out, _ = cf(x, pf.tensor(ys))
    np.testing.assert_array_equal(xs, keep)
    np.testing.assert_allclose(out.numpy(), _want(keep, ys)[0], rtol=1e-5)
    # the same tensor passed as the donated and a plain argument
    z = pf.tensor(keep)
    zv = z._value
    out, s = cf(z, z)
    np.testing.assert_array_equal(zv, keep)
    np.testing.assert_allclose(out.numpy(), _want(keep, keep)[0], rtol=1e-5)
    del zv
    # a tensor sharing the value (a detached alias is a view: refused clearly)
    w = pf.tensor(keep)
    with pytest.raises(ValueError, match="cannot be donated"):
        cf(w.detach(), pf.tensor(ys))


def test_results_returned_earlier_are_never_overwritten():
    cf = pf.compile(lambda p, g: p - g * 0.5, donate_argnums=0)
    rng = np.random.default_rng(2)
    p0 = rng.standard_normal(5).astype(np.float32)
    gs = rng.standard_normal((6, 5)).astype(np.float32)
    p, kept, want = pf.tensor(p0), [], p0.copy()
    plain = pf.compile(lambda p, g: p - g * 0.5)
    q = pf.tensor(p0)
    for g in gs:
        p = cf(p, pf.tensor(g))  # JAX's idiom: the old state is donated
        q = plain(q, pf.tensor(g))
        want = want - g * np.float32(0.5)
        kept.append((plain(q, pf.tensor(g)), want - g * np.float32(0.5)))
        np.testing.assert_array_equal(p.numpy(), q.numpy())
        np.testing.assert_allclose(p.numpy(), want, rtol=1e-6)
    for t, w in kept:  # later calls never wrote into earlier results
        np.testing.assert_allclose(t.numpy(), w, rtol=1e-6)


def test_a_donated_argument_returned_as_is_stays_alive():
    cf = pf.compile(lambda x, y: (x, x + y), donate_argnums=0)
    for _ in range(2):
        x = pf.tensor(np.ones(3, np.float32))
        a, b = cf(x, pf.tensor(np.ones(3, np.float32)))
        assert a is x
        np.testing.assert_array_equal(x.numpy(), 1.0)
        np.testing.assert_array_equal(b.numpy(), 2.0)
