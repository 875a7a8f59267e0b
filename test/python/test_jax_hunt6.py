"""Session 15's second JAX hunt (round 6): each test failed before its fix
(checked against jax 0.10.2)."""

from __future__ import annotations

import numpy as np
import pytest

import pyflame_mlir as pf
import pyflame_mlir.numpy as pnp

jax = pytest.importorskip("jax", reason="jax (the bench extra) is not installed")
jnp = pytest.importorskip("jax.numpy")


def _same(got, want, tol=1e-5):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


SET_CASES = [(np.array([3, 1, 2, 5, 3, 9], np.int32), np.array([2, 3, 7, 8, 1], np.int32)),
             (np.array([[4, -1], [6, -1]], np.int32), np.array([-1, 4, 10], np.int32)),
             (np.array([1, 2], np.int32), np.array([3, 4], np.int32)),
             (np.array([0.5, -2.0, 3.0], np.float32), np.array([3.0, 7.0, -2.0], np.float32))]


@pytest.mark.parametrize("name", ["union1d", "setdiff1d", "setxor1d", "intersect1d"])
@pytest.mark.parametrize("case", range(len(SET_CASES)))
@pytest.mark.parametrize("size", [2, 6])
@pytest.mark.parametrize("fill_value", [None, -7])
def test_set_ops_size(name, case, size, fill_value):
    # size= raised NotImplementedError: JAX keeps the first `size` results
    # and pads them (setdiff1d with 0, the others with their smallest result)
    a, b = SET_CASES[case]
    got = getattr(pnp, name)(pnp.asarray(a), pnp.asarray(b), size=size, fill_value=fill_value)
    _same(got.numpy(), getattr(jnp, name)(a, b, size=size, fill_value=fill_value))


@pytest.mark.parametrize("case", range(len(SET_CASES)))
@pytest.mark.parametrize("size", [1, 6])
def test_intersect1d_indices_size(case, size):
    a, b = SET_CASES[case]
    got = pnp.intersect1d(pnp.asarray(a), pnp.asarray(b), return_indices=True, size=size)
    want = jnp.intersect1d(a, b, return_indices=True, size=size)
    for g, w in zip(got, want, strict=True):
        _same(g.numpy(), w)


X = np.random.RandomState(0).randn(4, 5).astype(np.float32)


def test_linalg_qr_mode_r():
    # jnp.linalg.qr(mode="r") is R alone (torch's (empty Q, R) pair came back)
    got = pnp.linalg.qr(pnp.asarray(X.T), mode="r")
    _same(np.abs(got.numpy()), np.abs(jnp.linalg.qr(X.T, mode="r")), 1e-4)


def _lt_pytree(lib, jx, struct):
    ft = jx.linear_transpose(lambda p: {"y": lib.cumsum(p["a"], 0) @ lib.asarray(X.T) * 2,
                                        "z": p["b"][::-1] - p["a"].sum()},
                             {"a": struct((4, 5), jnp.float32), "b": struct((3,), jnp.float32)})
    return ft({"y": lib.asarray(X @ X.T), "z": lib.arange(3.0)})


def test_linear_transpose():
    # pf.linear_transpose did not exist
    got = _lt_pytree(pnp, pf, pf.ShapeDtypeStruct)
    want = _lt_pytree(jnp, jax, jax.ShapeDtypeStruct)
    assert isinstance(got, tuple) and len(got) == 1
    for key in ("a", "b"):
        _same(got[0][key].numpy(), want[0][key], 1e-4)
    two = pf.linear_transpose(lambda a, b: a * 3 - b, pnp.asarray(X), pnp.asarray(X))
    want2 = jax.linear_transpose(lambda a, b: a * 3 - b, X, X)(X)
    for g, w in zip(two(pnp.asarray(X)), want2, strict=True):
        _same(g.numpy(), w)


@pytest.mark.parametrize("f", [pnp.sin, lambda a: a + 1, lambda a: a * a])
def test_linear_transpose_refuses_nonlinear(f):
    with pytest.raises(ValueError, match="not linear"):
        pf.linear_transpose(f, pnp.asarray(X))(pnp.asarray(X))


def test_fold_in_under_vmap():
    # fold_in of mapped data raised a ConcretizationError under vmap
    got = pf.vmap(lambda i: pf.random.normal(pf.random.fold_in(pf.random.PRNGKey(3), i), ()))(
        pnp.arange(4))
    want = jax.vmap(lambda i: jax.random.normal(jax.random.fold_in(jax.random.PRNGKey(3), i),
                                                ()))(jnp.arange(4))
    _same(got.numpy(), want)


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
@pytest.mark.parametrize("seed", [0, 42])
def test_uniform_normal_16bit_bit_exact(dt, seed):
    # float16/bfloat16 draws raised NotImplementedError; JAX draws them from
    # 16 (bfloat16: 8) random bits, not by casting its float32 draw
    kp, kj = pf.random.PRNGKey(seed), jax.random.PRNGKey(seed)
    for shape in [(), (33, 65)]:
        for lo, hi in [(0.0, 1.0), (-2.5, 3.25)]:
            got = pf.random.uniform(kp, shape, getattr(pnp, dt), lo, hi).numpy()
            want = np.asarray(jax.random.uniform(kj, shape, getattr(jnp, dt), lo, hi))
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))
        got = pf.random.normal(kp, shape, getattr(pnp, dt)).numpy()
        want = np.asarray(jax.random.normal(kj, shape, getattr(jnp, dt)))
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))


def test_bits_uint8():
    # random.bits(dtype=uint8) raised: JAX's are the low 8 bits of each word
    got = pf.random.bits(pf.random.PRNGKey(5), (4, 9), pnp.uint8).numpy()
    want = np.asarray(jax.random.bits(jax.random.PRNGKey(5), (4, 9), jnp.uint8))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


AT_X = np.arange(12, dtype=np.float32).reshape(3, 4) - 5


@pytest.mark.parametrize("case", ["computed", "jit", "jit_oob", "grad", "vmap", "vmap_row"])
def test_at_power_lazy_index(case):
    # x.at[i].power(v) raised for any lazy (computed, traced, mapped) index
    def run(lib, jx, x):
        if case == "computed":
            return x.at[lib.argmin(x[0]), 1].power(3.0)
        if case in ("jit", "jit_oob"):
            return jx.jit(lambda a, j: a.at[j, 2].power(2.0))(x, lib.asarray(
                1 if case == "jit" else -7))
        if case == "grad":
            return jx.grad(lambda a: lib.sum(a.at[lib.argmax(a[1])].power(2.0)))(x)
        rows = lib.asarray(np.array([1, 2], np.int32))
        if case == "vmap":
            return jx.vmap(lambda a, j: a.at[j].power(2.0))(x[:2], rows)
        return jx.vmap(lambda j: x.at[j].power(2.0))(rows)
    got = run(pnp, pf, pnp.asarray(AT_X))
    _same(got.numpy(), run(jnp, jax, jnp.asarray(AT_X)))


def test_at_power_lazy_index_array_refused():
    # a lazy index array of several elements may repeat: refused, not guessed
    with pytest.raises(NotImplementedError, match="repeats"):
        pf.jit(lambda a, j: a.at[j].power(2.0))(pnp.asarray(AT_X[0]),
                                               pnp.asarray(np.array([0, 0], np.int32)))


def test_grad_allow_int():
    # allow_int= was an unexpected keyword: float arguments are differentiated
    # as without it (an integer one: test_jax_hunt7's float0 gradients)
    got = pf.grad(lambda a, n: pnp.sum(a * n), allow_int=True)(pnp.ones(3), 2)
    _same(got.numpy(), jax.grad(lambda a, n: jnp.sum(a * n), allow_int=True)(jnp.ones(3), 2))


UNIQ = [np.array([[1, 2], [3, 4], [1, 2], [0, 9]], np.int32),
        np.array([[1.0, np.nan, 1.0], [2.0, 0.0, 2.0], [1.0, np.nan, 1.0]], np.float32)]


@pytest.mark.parametrize("case", [0, 1])
@pytest.mark.parametrize("axis", [0, -1])
@pytest.mark.parametrize("size", [1, 5])
@pytest.mark.parametrize("fill_value", [None, 7])
def test_unique_axis_size(case, axis, size, fill_value):
    # unique(axis=, size=) raised NotImplementedError
    a = UNIQ[case]
    got = pnp.unique(pnp.asarray(a), return_index=True, return_inverse=True,
                     return_counts=True, axis=axis, size=size, fill_value=fill_value)
    want = jnp.unique(a, return_index=True, return_inverse=True, return_counts=True,
                      axis=axis, size=size, fill_value=fill_value)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g.numpy(), np.asarray(w))


def test_unique_axis_size_grad():
    got = pf.grad(lambda a: pnp.sum(pnp.unique(a, axis=0, size=3) ** 2))(pnp.asarray(UNIQ[1]))
    want = jax.grad(lambda a: jnp.sum(jnp.unique(a, axis=0, size=3) ** 2))(UNIQ[1])
    _same(got.numpy(), want)


_R = np.random.RandomState(1)
_A = _R.randn(4, 4).astype(np.float32)
NONSYM = _A @ _A.T + 4 * np.eye(4, dtype=np.float32) + 0.3 * _R.randn(4, 4).astype(np.float32)


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_cholesky_symmetrize_input(uplo):
    # jnp.linalg.eigh/eigvalsh/cholesky symmetrize their input by default
    # ((a + a^T) / 2); pf read one triangle, as torch: other values for a
    # matrix not exactly symmetric
    got = pnp.linalg.eigh(pnp.asarray(NONSYM), UPLO=uplo)[0].numpy()
    _same(got, jnp.linalg.eigh(NONSYM, UPLO=uplo)[0], 1e-4)
    _same(pnp.linalg.eigvalsh(pnp.asarray(NONSYM), UPLO=uplo).numpy(),
          jnp.linalg.eigvalsh(NONSYM, UPLO=uplo), 1e-4)
    got = pnp.linalg.eigh(pnp.asarray(NONSYM), UPLO=uplo, symmetrize_input=False)[0].numpy()
    _same(got, jnp.linalg.eigh(NONSYM, UPLO=uplo, symmetrize_input=False)[0], 1e-4)
    _same(pnp.linalg.cholesky(pnp.asarray(NONSYM), upper=uplo == "U").numpy(),
          jnp.linalg.cholesky(NONSYM, upper=uplo == "U"), 1e-4)
    g = pf.grad(lambda a: pnp.sum(pnp.linalg.eigh(a)[0] ** 2))(pnp.asarray(NONSYM))
    _same(g.numpy(), jax.grad(lambda a: jnp.sum(jnp.linalg.eigh(a)[0] ** 2))(NONSYM), 1e-3)


NANS = np.array([[np.nan, np.nan, np.nan], [1, np.nan, 2], [3, 0, -1]], np.float32)


@pytest.mark.parametrize("name", ["nanargmax", "nanargmin"])
@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_nanarg_all_nan_is_minus_one(name, axis, keepdims):
    # an all-NaN slice gave index 0; JAX's is -1
    got = getattr(pnp, name)(pnp.asarray(NANS), axis=axis, keepdims=keepdims).numpy()
    _same(got, getattr(jnp, name)(NANS, axis=axis, keepdims=keepdims))
    _same(getattr(pnp, name)(pnp.asarray(NANS[0])).numpy(), getattr(jnp, name)(NANS[0]))


def test_triangular_and_cho_solve_broadcast_columns():
    # a batch of matrices with one (n, k) right-hand side: JAX broadcasts it
    # (n, k) was taken for a batch of n vectors of length k and raised
    import jax.scipy as jsp
    r = np.random.RandomState(2)
    low = np.tril(r.randn(3, 4, 4).astype(np.float32)) + 3 * np.eye(4, dtype=np.float32)
    b = r.randn(4, 2).astype(np.float32)
    got = pf.scipy.linalg.solve_triangular(pnp.asarray(low), pnp.asarray(b), lower=True)
    _same(got.numpy(), jsp.linalg.solve_triangular(low, b, lower=True), 1e-4)
    got = pf.scipy.linalg.cho_solve((pnp.asarray(low), True), pnp.asarray(b))
    _same(got.numpy(), jsp.linalg.cho_solve((low, True), b), 1e-4)
