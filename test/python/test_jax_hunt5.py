"""Session 15's JAX hunt: each test failed before its fix (checked against
jax 0.10.2)."""

from __future__ import annotations

import numpy as np
import pytest

import pyflame_mlir as pf
import pyflame_mlir.numpy as pnp

jax = pytest.importorskip("jax", reason="jax (the bench extra) is not installed")
jnp = pytest.importorskip("jax.numpy")

INF = np.inf
LSE_X = [np.array([[1.0, 2.0, 3.0], [-INF, -INF, -INF]], np.float32),
         np.array([[INF, 1.0, 2.0], [INF, -INF, 0.0]], np.float32),
         np.array([[np.nan, 1, 2], [0, 0, 0]], np.float32)]
LSE_B = [None, np.array([1.0, -2.0, 0.5], np.float32),
         np.array([[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]], np.float32)]


def _same(got, want, tol=1e-5):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("x", LSE_X)
@pytest.mark.parametrize("b", LSE_B)
@pytest.mark.parametrize("axis", [None, 1, 0])
@pytest.mark.parametrize("return_sign", [False, True])
def test_logsumexp_is_jaxs(x, b, axis, return_sign):
    """b == 0 drops the term (inf * 0 made NaN); a NaN sum's sign is NaN (was
    0); jax.nn.logsumexp is jax.scipy.special's (it raised on return_sign);
    the NaN for a negative sum only with b."""
    w = np.array([True, False, True])
    for pf_f, jax_f in ((pf.scipy.special.logsumexp, jax.scipy.special.logsumexp),
                        (pf.nn.logsumexp, jax.nn.logsumexp)):
        for where in (None, w):
            kw = {"axis": axis, "b": b, "return_sign": return_sign, "where": where}
            got, want = pf_f(x, **kw), jax_f(x, **kw)
            for g, v in zip(got if return_sign else [got], want if return_sign else [want]):
                _same(g, v)


def test_array_transpose_takes_numpys_forms():
    """x.transpose(1, 0, 2) / ((2, 0, 1)) / () as jax.Array's (raised or,
    with no axes, swapped the first two dims of a 3-d array); two axes stay
    torch's swap."""
    x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    t = pnp.asarray(x)
    np.testing.assert_array_equal(t.transpose(1, 0, 2).numpy(), x.transpose(1, 0, 2))
    np.testing.assert_array_equal(t.transpose((2, 0, 1)).numpy(), x.transpose((2, 0, 1)))
    np.testing.assert_array_equal(t.transpose().numpy(), x.transpose())
    np.testing.assert_array_equal(t.transpose(0, 2).numpy(), x.swapaxes(0, 2))
    np.testing.assert_array_equal(t.transpose(dim0=0, dim1=1).numpy(), x.swapaxes(0, 1))
    m = pnp.asarray(x[0])
    np.testing.assert_array_equal(m.transpose(0, 1).numpy(), x[0].T)  # torch's swap
    np.testing.assert_array_equal(m.transpose().numpy(), x[0].T)
    with pytest.raises(ValueError, match="axes don't match"):
        t.transpose(0, 1, 2, 3)
    g = pf.grad(lambda v: (v.transpose(2, 0, 1) * np.arange(24.0).reshape(4, 2, 3)).sum())(t)
    np.testing.assert_array_equal(g.numpy(), np.arange(24.0).reshape(4, 2, 3).transpose(1, 2, 0))


@pytest.mark.parametrize("name", ["relu", "gelu", "softmax", "log_softmax", "sigmoid", "silu",
                                  "logsumexp", "standardize", "elu", "softplus"])
def test_jax_nn_takes_host_float64_as_float32(name):
    """numpy float64 data into pf.nn's jax.nn functions is float32 without
    x64, as in JAX (it stayed float64)."""
    x = np.array([1.0, -2.0, 0.5])
    got, want = getattr(pf.nn, name)(x), getattr(jax.nn, name)(x)
    _same(got, want, 1e-6)
    got, want = getattr(pf.nn, name)(np.float64(1.5)) if name not in (
        "softmax", "log_softmax", "standardize") else got, want
    assert np.asarray(got).dtype == np.float32


def test_array_var_std_take_ddof():
    """x.var(axis=-1, ddof=0) / x.std(ddof=...) as jax.Array's (ddof raised a
    TypeError); without ddof the methods stay torch's (unbiased)."""
    a = np.arange(12.0, dtype=np.float32).reshape(3, 4) ** 1.5
    x, j = pnp.asarray(a), jnp.asarray(a)
    _same(x.var(axis=-1, ddof=0, keepdims=True), j.var(axis=-1, ddof=0, keepdims=True))
    _same(x.std(ddof=1), j.std(ddof=1))
    _same(x.var(0, ddof=2), j.var(0, ddof=2))
    _same(x.var(), j.var(ddof=1))  # torch's default
    with pytest.raises(TypeError):
        x.sum(ddof=1)


def test_searchsorted_nan_sorts_last():
    """NaN queries and NaNs in ``a`` in numpy's and JAX's order (NaN after
    every number, -0.0 == 0.0); a NaN query gave 0."""
    for a in (np.array([-1, -0.0, 0.0, 2, np.nan, np.nan], np.float32),
              np.array([np.inf, np.nan], np.float32), np.array([1, 2, np.inf], np.float32),
              np.array([], np.float32)):
        v = np.array([np.nan, 0.0, -0.0, -np.inf, np.inf, -np.nan, 1.5], np.float32)
        for side in ("left", "right"):
            _same(pnp.searchsorted(a, v, side=side), jnp.searchsorted(a, v, side=side))


def test_linspace_is_jaxs():
    """Differentiable in start/stop (the gradient was 0: computed on the
    host), array bounds and ``axis`` (raised), ``retstep``'s step an array;
    values to an ulp (XLA's CPU arithmetic rounds some samples otherwise)."""
    s = np.array([[1.0, 2.0], [3, 4]], np.float32)
    for args, kw in [((0, 1, 7), {}), ((-3, 7, 13, False), {}), ((0.0, s, 3), {"axis": 1}),
                     ((s, 0.0, 4), {"axis": -1, "endpoint": False}), ((s, s * 2, 1), {}),
                     ((s, s * 2, 0), {}), ((2, 5, 4), {"retstep": True})]:
        got, want = pnp.linspace(*args, **kw), jnp.linspace(*args, **kw)
        for g, w in zip(got if kw.get("retstep") else [got], want if kw.get("retstep") else [want]):
            _same(g, w, 1e-6)
    _same(pnp.linspace(0, 10, 4, dtype=pnp.int32), jnp.linspace(0, 10, 4, dtype=jnp.int32))
    g = pf.grad(lambda a, b: (pnp.linspace(a, b, 5) ** 2).sum(), argnums=(0, 1))(
        pnp.asarray(0.5), pnp.asarray(2.0))
    w = jax.grad(lambda a, b: (jnp.linspace(a, b, 5) ** 2).sum(), argnums=(0, 1))(0.5, 2.0)
    for a, b in zip(g, w):
        _same(a, b)


@pytest.mark.parametrize("pw", [2, ((1, 2), (3, 1)), ((5, 4), (7, 2)), ((0, 9), (0, 0))])
def test_pad_odd_ramp_and_stat_length(pw):
    """reflect_type='odd', mode='linear_ramp' (end_values) and stat_length
    (all raised NotImplementedError)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 5)).astype(np.float32)
    xi = rng.integers(-9, 9, (3, 4)).astype(np.int32)
    for a in (x, xi, x[:1, :1]):
        for mode in ("reflect", "symmetric"):
            _same(pnp.pad(a, pw, mode=mode, reflect_type="odd"),
                  jnp.pad(a, pw, mode=mode, reflect_type="odd"))
        for mode in ("mean", "maximum", "minimum", "median"):
            for sl in (1, 2, ((1, 3), (2, 9))):
                _same(pnp.pad(a, pw, mode=mode, stat_length=sl),
                      jnp.pad(a, pw, mode=mode, stat_length=sl))
    for ev in (0, 3.0, ((1, -1), (5, 2))):
        _same(pnp.pad(x, pw, mode="linear_ramp", end_values=ev),
              jnp.pad(x, pw, mode="linear_ramp", end_values=ev), 1e-6)
    with pytest.raises(ValueError, match="stat_length of 0"):
        pnp.pad(x, 1, mode="mean", stat_length=0)
    ct = np.arange(16 * 17, dtype=np.float32).reshape(16, 17)
    for kw in ({"mode": "reflect", "reflect_type": "odd"}, {"mode": "linear_ramp"},
               {"mode": "mean", "stat_length": 2}):
        g = pf.grad(lambda v, kw=kw: (pnp.pad(v, 6, **kw) * ct).sum())(x)
        w = jax.grad(lambda v, kw=kw: (jnp.pad(v, 6, **kw) * ct).sum())(x)
        _same(g, w, 1e-4)


with np.errstate(divide="ignore"):
    LOGITS = np.log(np.array([[0.1, 0.2, 0.7, 0.0], [0.4, 0.25, 0.25, 0.1]], np.float32))


@pytest.mark.parametrize("seed", [0, 7, 123])
def test_random_draws_jax_had_and_pf_refused(seed):
    """categorical(replace=False) (the Gumbel top-k), permutation(independent=
    True) of an n-d array, gumbel/categorical(mode='high'): bit for bit with
    JAX's (they raised)."""
    kp, kj = pf.random.PRNGKey(seed), jax.random.PRNGKey(seed)
    for shape, axis in (((2, 2), -1), ((3, 2), 1), ((4, 2), 0), (None, -1)):
        lg = LOGITS if axis != 0 else LOGITS.T.copy()
        _same(pf.random.categorical(kp, lg, axis=axis, shape=shape, replace=False),
              jax.random.categorical(kj, lg, axis=axis, shape=shape, replace=False))
    with pytest.raises(ValueError, match="cannot exceed"):
        pf.random.categorical(kp, LOGITS, shape=(5, 2), replace=False)
    x = np.arange(24).reshape(4, 6)
    for axis in (0, 1, -1):
        _same(pf.random.permutation(kp, x, axis=axis, independent=True),
              jax.random.permutation(kj, x, axis=axis, independent=True))
    _same(pf.random.gumbel(kp, (3, 5), mode="high"), jax.random.gumbel(kj, (3, 5), mode="high"))
    _same(pf.random.categorical(kp, LOGITS, mode="high"),
          jax.random.categorical(kj, LOGITS, mode="high"))


def test_random_takes_host_data_in_jaxs_dtypes():
    """choice/permutation of numpy float64/int64 data are float32/int32
    arrays, as JAX's (they stayed 64-bit)."""
    kp, kj = pf.random.PRNGKey(3), jax.random.PRNGKey(3)
    a = np.arange(12.0).reshape(4, 3)
    _same(pf.random.choice(kp, a, (2,), axis=1), jax.random.choice(kj, a, (2,), axis=1))
    _same(pf.random.permutation(kp, np.arange(10)), jax.random.permutation(kj, np.arange(10)))
    _same(pf.random.categorical(kp, LOGITS.astype(np.float64)),
          jax.random.categorical(kj, LOGITS.astype(np.float64)))


def test_vmap_outputs_python_numbers():
    """A Python number or numpy array f returns is an array of JAX's dtype,
    broadcast along the mapped axis or kept under out_axes=None (vmap raised
    a TypeError)."""
    x = np.ones((3, 2), np.float32)
    got = pf.vmap(lambda v: (v.sum(), 3.0, 2, np.arange(2.0)))(x)
    want = jax.vmap(lambda v: (v.sum(), 3.0, 2, np.arange(2.0)))(x)
    for g, w in zip(got, want):
        _same(g, w)
    got = pf.vmap(lambda v: (v.sum(), 3.0), out_axes=(0, None))(x)
    assert got[1].shape == () and float(got[1]) == 3.0


def test_repeat_cross_rot90_as_jaxs():
    """repeat(total_repeat_length=) cuts or pads with the last element, cross
    of 2-vectors, rot90(axes=) (they raised)."""
    a = np.array([1, 2, 3])
    for reps, n in ((np.array([1, 0, 3]), 5), (np.array([1, 0, 3]), 3), (2, 8)):
        _same(pnp.repeat(a, reps, total_repeat_length=n),
              jnp.repeat(a, reps, total_repeat_length=n))
    m = np.array([[1, 2], [3, 4]])
    _same(pnp.repeat(m, 2, axis=1, total_repeat_length=6),
          jnp.repeat(m, 2, axis=1, total_repeat_length=6))
    two, three = np.array([1.0, 2]), np.array([3.0, 4, 5])
    for u, v in ((two, two[::-1]), (two, three), (three[None], two[None]),
                 (np.array([1, 2]), np.array([3, 4]))):
        _same(pnp.cross(u, v), jnp.cross(u, v))
    x = np.arange(24).reshape(2, 3, 4)
    for k, axes in ((1, (1, 0)), (3, (0, 2)), (2, (1, 2))):
        _same(pnp.rot90(x, k, axes=axes), jnp.rot90(x, k, axes=axes))


def test_jvp_has_aux():
    """jax.jvp(f, primals, tangents, has_aux=True) (a TypeError before)."""
    x = np.random.default_rng(3).standard_normal((3, 4)).astype(np.float32)

    def f(n):
        return lambda v: (n.sin(v) * v, {"s": v.sum()})
    got = pf.jvp(f(pnp), (x,), (np.ones_like(x),), has_aux=True)
    want = jax.jvp(f(jnp), (x,), (np.ones_like(x),), has_aux=True)
    for g, w in zip(pf.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        _same(g, w, 1e-6)


def test_vectorize_signature():
    """jnp.vectorize(f, signature=...) over the broadcast loop dimensions (it
    raised NotImplementedError)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    m = rng.standard_normal((2, 1, 4, 4)).astype(np.float32)
    for n, out in ((pnp, []), (jnp, [])):
        out.append(n.vectorize(lambda a: a.sum(keepdims=True), signature="(n)->(k)")(x))
        out.append(n.vectorize(lambda a, v: a @ v, signature="(m,n),(n)->(m)")(m, x))
        out.extend(n.vectorize(lambda a, b: (a.dot(b), a - b), signature="(n),(n)->(),(n)")(
            x, x[0]))
        out.append(n.vectorize(lambda a: a.max(), signature="(n)->()")(x[0]))
        if n is pnp:
            got = out
        else:
            want = out
    for g, w in zip(got, want):
        _same(g, w)
    with pytest.raises(ValueError, match="inconsistent size"):
        pnp.vectorize(lambda a, b: a * b, signature="(n),(n)->(n)")(x, x[:, :3])
    with pytest.raises(ValueError, match="not a valid gufunc signature"):
        pnp.vectorize(lambda a: a, signature="n->n")(x)


@pytest.mark.parametrize("a", [np.array([[1, 2], [1, 2], [0, 1], [3, 3]]),
                               np.array([[1.0, np.nan], [1.0, np.nan], [0, 2]]),
                               np.array([[[1, 2], [1, 2]], [[0, 0], [1, 2]]])])
def test_unique_axis(a):
    """unique(axis=) with index, inverse, counts and equal_nan (it raised)."""
    for axis in (0, 1, -1):
        for equal_nan in (True, False):
            kw = {"axis": axis, "return_index": True, "return_inverse": True,
                  "return_counts": True, "equal_nan": equal_nan}
            for g, w in zip(pnp.unique(a, **kw), jnp.unique(a, **kw)):
                _same(g, w)


@pytest.mark.parametrize("seed", [0, 5])
def test_randint_array_bounds(seed):
    """randint with array bounds broadcast to the shape (a TypeError or
    NotImplementedError before), numpy int64 bounds wrapped to int32 and
    float bounds truncated as JAX converts them; bit for bit."""
    for lo, hi, shape in ((np.int64(0), np.array([5, 7, 1000, 2**31 - 1]), (4,)),
                          (np.array([-2**31, 0, 5, 10]), np.int64(2**31 + 5), (4,)),
                          (np.array([[0], [100]]), np.array([1, 50, 2**20, 7]), (2, 4)),
                          (0, np.array([2.7, 3.2, 9.9, 1.0]), (4,)),
                          (pnp.asarray([1, 2, 3, 4]), 10, (3, 4))):
        lj = np.asarray(lo) if isinstance(lo, pf.Tensor) else lo
        _same(pf.random.randint(pf.random.PRNGKey(seed), shape, lo, hi),
              jax.random.randint(jax.random.PRNGKey(seed), shape, lj, hi))


def test_diag_takes_k():
    """jnp.diag(v, k=1)/diagflat(v, k=) (numpy's keyword: torch's diag took
    diagonal= under the numpy name)."""
    for v in (np.arange(3.0), np.arange(9.0).reshape(3, 3)):
        for k in (-1, 0, 2):
            _same(pnp.diag(v, k=k), jnp.diag(v, k=k))
    m = np.arange(4).reshape(2, 2)
    _same(pnp.diagflat(m, k=-1), jnp.diagflat(m, k=-1))
