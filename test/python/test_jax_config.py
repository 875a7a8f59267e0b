"""``pf.config.update("jax_enable_x64", ...)``: pf.numpy's dtypes follow
JAX's in both modes (checked against jax in the same mode), pf's torch-style
top level keeps torch's, and pf.random refuses the 64-bit draws it cannot
reproduce."""

from __future__ import annotations

import numpy as np
import pytest

import pyflame_mlir as pf

jax = pytest.importorskip("jax")
jnp = jax.numpy
pnp = pf.numpy

CASES = {
    "zeros": lambda m: m.zeros(3), "arange": lambda m: m.arange(3),
    "arange_float": lambda m: m.arange(0.0, 1.0, 0.5), "scalar_float": lambda m: m.asarray(1.0),
    "scalar_int": lambda m: m.asarray(1), "list": lambda m: m.array([1, 2]),
    "numpy_f64": lambda m: m.asarray(np.ones(2)), "numpy_f32": lambda m: m.asarray(np.float32(1)),
    "sum_int8": lambda m: m.sum(m.ones(3, m.int8)), "argmax": lambda m: m.argmax(m.ones(3)),
    "mean_int32": lambda m: m.mean(m.ones(3, m.int32)),
    "mean_int64": lambda m: m.mean(m.arange(3)),
    "sin_int32": lambda m: m.sin(m.ones(3, m.int32)), "sqrt_int": lambda m: m.sqrt(m.arange(4)),
    "divide_int": lambda m: m.divide(m.arange(4), 2),
    "linspace": lambda m: m.linspace(0, 1, 3), "eye": lambda m: m.eye(2), "tri": lambda m: m.tri(2),
    "ones_float": lambda m: m.ones(2, float), "ones_int": lambda m: m.ones(2, int),
    "float_": lambda m: m.zeros(2, m.float_),
    "where_weak": lambda m: m.where(m.ones(3, m.int32) > 0, 1, 0),
    "where_float": lambda m: m.where(m.ones(3, m.int32) > 0, m.ones(3, m.int32), 0.5),
    "nonzero": lambda m: m.nonzero(m.ones(3))[0], "argsort": lambda m: m.argsort(m.ones(3)),
    "cumsum_int32": lambda m: m.cumsum(m.ones(3, m.int32)),
    "histogram": lambda m: m.histogram(m.ones(3))[0],
    "full": lambda m: m.full(2, 1.5), "full_int": lambda m: m.full(2, 3),
    "var_int": lambda m: m.var(m.arange(4)), "norm_int": lambda m: m.linalg.norm(m.arange(4)),
    "result_type": lambda m: m.zeros(1, m.result_type(1, 1.0)),
}


@pytest.fixture(params=[False, True], ids=["x32", "x64"])
def x64(request):
    prev_jax = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", request.param)
    pf.config.update("jax_enable_x64", request.param)
    yield request.param
    jax.config.update("jax_enable_x64", prev_jax)
    pf.config.update("jax_enable_x64", False)


@pytest.mark.parametrize("name", sorted(CASES))
def test_numpy_dtypes_follow_jax(x64, name):
    want, got = CASES[name](jnp), CASES[name](pnp)
    assert np.dtype(want.dtype) == got.dtype.np, (name, want.dtype, got.dtype)
    np.testing.assert_allclose(got.numpy(), np.asarray(want), rtol=1e-6)


def test_x64_keeps_torch_defaults_at_top_level(x64):
    assert pf.config.jax_enable_x64 is x64 and pf.config.read("jax_enable_x64") is x64
    assert pf.zeros(2).dtype is pf.float32 and pf.tensor([1, 2]).dtype is pf.int64
    assert pf.tensor([1.0]).dtype is pf.float32


def test_x64_float64_values_are_kept():
    with pf.experimental.enable_x64():
        a = pnp.asarray(np.array([1 + 1e-12]))
        assert a.dtype is pf.float64 and a.numpy()[0] == 1 + 1e-12
    assert not pf.config.jax_enable_x64
    assert pnp.asarray(np.array([1 + 1e-12])).dtype is pf.float32


def test_random_under_x64_raises_or_matches_jax(x64):
    key = pf.random.PRNGKey(0)
    want = np.asarray(jax.random.normal(jax.random.PRNGKey(0), (3,), dtype=jnp.float32))
    np.testing.assert_array_equal(pf.random.normal(key, (3,), dtype=pnp.float32).numpy(), want)
    if x64:  # JAX draws float64 (64-bit words) by default (test_jax_random64.py)
        assert pf.random.normal(key, (3,)).dtype is pf.float64
        with pytest.raises(NotImplementedError, match="jax_enable_x64"):
            pf.random.gumbel(key, (3,))  # (64-bit draws of the other samplers: no)
    else:
        np.testing.assert_array_equal(pf.random.normal(key, (3,)).numpy(), want)
    assert pf.random.split(key).shape == (2, 2)  # keys are the same in both modes


def test_config_rejects_unknown_and_bad_values():
    with pytest.raises(AttributeError, match="Unrecognized config option"):
        pf.config.update("jax_no_such_flag", True)
    with pytest.raises(ValueError, match="host"):
        pf.config.update("jax_platform_name", "gpu")
    pf.config.update("jax_platform_name", "cpu")
    assert pf.config.jax_platform_name == pf.config.jax_platforms == "cpu"
    pf.config.update("jax_default_matmul_precision", "highest")
    assert pf.config.jax_default_matmul_precision == "highest"
    pf.config.update("jax_default_matmul_precision", None)


@pytest.mark.parametrize("fill", [3, 1.5, True])
def test_lax_full_and_one_hot_dtypes_follow_jax(x64, fill):
    assert pf.lax.full((2,), fill).dtype.np == np.dtype(jax.lax.full((2,), fill).dtype)
    labels = np.array([0, 2])
    assert pf.nn.one_hot(pnp.asarray(labels), 3).dtype.np == \
        np.dtype(jax.nn.one_hot(jnp.asarray(labels), 3).dtype)
