"""Session 15's review: silent wrong answers and errors torch/jax do not raise,
each checked against torch 2.13 / jax."""

import numpy as np
import pytest
import torch

import pyflame_mlir as pf


@pytest.mark.parametrize("make", [
    lambda m, o: m.zeros(2, 2, out=o(np.ones((2, 2), np.int64))),
    lambda m, o: m.full((3,), 1.5, out=o(np.zeros(3, np.int32))),
    lambda m, o: m.eye(2, out=o(np.zeros((2, 2), np.bool_))),
    lambda m, o: m.linspace(0, 1, 7, out=o(np.zeros(7, np.float64))),
    lambda m, o: m.arange(5, out=o(np.zeros(5, np.float32))),
])
def test_factory_takes_dtype_from_out(make):
    # torch's factories take their dtype from out= (zeros(out=int64) raised; linspace
    # into a float64 out was computed in float32)
    got = make(pf, pf.tensor).numpy()
    want = make(torch, torch.tensor).numpy()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_factory_out_dtype_mismatch_still_raises():
    with pytest.raises(RuntimeError):
        pf.zeros(2, dtype=pf.float32, out=pf.zeros(2, dtype=pf.int32))


@pytest.mark.parametrize("name", ["var", "std", "nanvar", "nanstd"])
@pytest.mark.parametrize("ddof", [1, 2, 3, 4])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_jnp_var_std_ddof_past_count_is_nan(name, ddof, axis):
    # JAX returns NaN where n - ddof <= 0 (pf.numpy gave torch's inf)
    jnp = pytest.importorskip("jax.numpy")
    import pyflame_mlir.numpy as pnp
    x = np.array([[1., 2., 3.], [4., np.nan if name.startswith("nan") else 5., 6.]], np.float32)
    got = np.asarray(getattr(pnp, name)(pnp.asarray(x), axis=axis, ddof=ddof).numpy())
    want = np.asarray(getattr(jnp, name)(x, axis=axis, ddof=ddof))
    np.testing.assert_allclose(got, want, rtol=1e-6, equal_nan=True)


def test_jnp_var_where_ddof_past_count_is_nan():
    jnp = pytest.importorskip("jax.numpy")
    import pyflame_mlir.numpy as pnp
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    w = np.array([[1, 1, 0], [1, 0, 0]], bool)
    got = pnp.var(pnp.asarray(x), axis=1, ddof=1, where=w).numpy()
    np.testing.assert_allclose(got, np.asarray(jnp.var(x, axis=1, ddof=1, where=w)),
                               equal_nan=True)


@pytest.mark.parametrize("spec", ["", ".2f", ">40", "e"])
@pytest.mark.parametrize("value", [1.5, [1.5], [[1.0, 2.0]]])
def test_format_spec_as_torch(spec, value):
    # torch formats a 0-d tensor as its number; others take only an empty spec
    # (pf padded the text with ">40" and raised ValueError for ".2f")
    def fmt(t):
        try:
            return format(t, spec)
        except TypeError as e:
            return f"TypeError {e}"
    assert fmt(pf.tensor(value)) == fmt(torch.tensor(value))


@pytest.mark.parametrize("name", ["add", "maximum", "matmul", "subtract", "concat", "sin"])
def test_jnp_shared_functions_take_float64_host_data_as_float32(name):
    # without x64 JAX makes float64 numpy data float32 (jnp.add(x32, f64_data) was float64)
    jnp = pytest.importorskip("jax.numpy")
    import pyflame_mlir.numpy as pnp
    d = np.array([0.1, 0.2, 0.3])
    x = np.ones(3, np.float32)
    args = ([x, d],) if name == "concat" else (d,) if name == "sin" else (x, d)
    pargs = ([pnp.asarray(x), d],) if name == "concat" else (d,) if name == "sin" \
        else (pnp.asarray(x), d)
    got, want = getattr(pnp, name)(*pargs), getattr(jnp, name)(*args)
    assert got.dtype.name == str(want.dtype)
    np.testing.assert_allclose(got.numpy(), np.asarray(want), rtol=1e-6)


def test_integer_linspace_as_torch():
    # torch converts start/end to the integer type first, then rounds start + step * i
    # once (pf computed from the float start: linspace(-7.5, 10, 6, int32)[1] was -4,
    # torch's -3; and it could differ by one past the middle)
    rng = np.random.default_rng(1)
    for _ in range(300):
        start, end = (float(v) for v in rng.uniform(-300, 300, 2))
        if rng.random() < 0.5:
            start = float(int(start))
        steps = int(rng.integers(0, 60))
        for name in ("int64", "int32"):
            want = torch.linspace(start, end, steps, dtype=getattr(torch, name)).numpy()
            got = pf.linspace(start, end, steps, dtype=getattr(pf, name)).numpy()
            np.testing.assert_array_equal(got, want, err_msg=f"{start} {end} {steps} {name}")
    got = pf.linspace(-7.5, 10, 6, out=pf.zeros(6, dtype=pf.int32)).numpy()
    np.testing.assert_array_equal(got, [-7, -3, 0, 3, 6, 10])


@pytest.mark.parametrize("name", ["sum", "mean", "cumsum", "nansum", "nanmean"])
def test_reduction_accumulates_in_float_out_dtype(name):
    # torch's sum/mean/cumsum(x_f32, out=f64) compute in float64 (pf computed in
    # float32, then cast: 1e-8 off)
    x = np.random.default_rng(0).standard_normal((50, 40)).astype(np.float32)
    shape = (50, 40) if name.startswith("cum") else (40,)
    want = torch.zeros(shape, dtype=torch.float64)
    getattr(torch, name)(torch.tensor(x), 0, out=want)
    got = pf.zeros(shape, dtype=pf.float64)
    getattr(pf, name)(pf.tensor(x), 0, out=got)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-13, atol=1e-13)
