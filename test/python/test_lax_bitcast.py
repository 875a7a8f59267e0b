"""``pf.lax.bitcast_convert_type`` against ``jax.lax``'s: every bit of
random patterns (NaNs aside: pf reads every NaN as 0x7fc00000-like quiet
NaN) for the same-width pairs, the narrowing (a trailing axis of parts,
little-endian) and widening casts, float64/int64 under x64, zero
gradients, vmap and compile."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import pyflame_mlir as pf
import pyflame_mlir.numpy as pnp

jax = pytest.importorskip("jax", reason="jax (the bench extra) is not installed")
jnp = pytest.importorskip("jax.numpy")

RNG = np.random.default_rng(0)
SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, 1e-45, -1e-45, 1.17549435e-38,
                    3.4028235e38, 1e-40, 0.1], np.float32)


def _patterns(dt, n=4000):
    return RNG.integers(0, 256, n * np.dtype(dt).itemsize, dtype=np.uint8).view(dt)


def _isnan(x):
    with np.errstate(invalid="ignore", over="ignore"):
        return np.isnan(x.astype(np.float64))


def _no_nan(x):
    return x[~_isnan(x)]


def _same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.kind == "f" or want.dtype == ml_dtypes.bfloat16:
        keep = ~_isnan(want)
        u = f"u{want.dtype.itemsize}"
        np.testing.assert_array_equal(got.view(u)[keep], want.view(u)[keep])
        assert _isnan(got[~keep]).all()
    else:
        np.testing.assert_array_equal(got, want)


def _case(x, name):
    return (pf.lax.bitcast_convert_type(x, getattr(pnp, name)),
            jax.lax.bitcast_convert_type(x, getattr(jnp, name)))


@pytest.mark.parametrize("src, dst", [
    (np.float32, "int32"), (np.int32, "float32"), (np.float16, "int16"), (np.int16, "float16"),
    (ml_dtypes.bfloat16, "int16"), (np.int16, "bfloat16"), (np.float16, "bfloat16"),
    (np.int8, "uint8"), (np.uint8, "int8"), (np.float32, "uint8"), (np.float32, "int16"),
    (np.int32, "int8")])
def test_same_width_and_narrowing(src, dst):
    x = _patterns(src)
    if np.dtype(src).kind == "f" or src is ml_dtypes.bfloat16:
        x = _no_nan(x)
        if src is np.float32:
            x = np.concatenate([x, SPECIAL])
    _same_bits(*_case(x, dst))


@pytest.mark.parametrize("src, parts, dst", [(np.uint8, 4, "float32"), (np.int16, 2, "int32"),
                                             (np.int8, 2, "float16")])
def test_widening(src, parts, dst):
    _same_bits(*_case(_patterns(src).reshape(-1, parts), dst))
    with pytest.raises(TypeError, match="Attempting to convert"):
        pf.lax.bitcast_convert_type(_patterns(src)[:3], getattr(pnp, dst))


def test_float64_and_int64_under_x64():
    prev = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    pf.config.update("jax_enable_x64", True)
    try:
        f64 = np.concatenate([_no_nan(_patterns(np.float64)), np.array(
            [0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1.7976931348623157e308,
             np.inf, -np.inf, 1e-310])])
        _same_bits(*_case(f64, "int64"))
        _same_bits(*_case(_patterns(np.int64), "float64"))
        _same_bits(*_case(f64, "int32"))
        _same_bits(*_case(_patterns(np.int32).reshape(-1, 2), "float64"))
        _same_bits(*_case(_patterns(np.uint8, 800).reshape(-1, 8), "int64"))
    finally:
        jax.config.update("jax_enable_x64", prev)
        pf.config.update("jax_enable_x64", False)


def test_nan_bool_and_x32_dtypes():
    got = pf.lax.bitcast_convert_type(np.array([np.nan, -np.nan], np.float32), pnp.int32)
    np.testing.assert_array_equal(got.numpy(), [0x7FC00000, 0x7FC00000])
    with pytest.raises(TypeError, match="bool"):
        pf.lax.bitcast_convert_type(np.array([True]), pnp.uint8)
    # without x64, int64 is int32 (JAX's canonical dtype)
    _same_bits(pf.lax.bitcast_convert_type(np.float32(1.5), pnp.int64),
               jax.lax.bitcast_convert_type(np.float32(1.5), jnp.int32))


def test_uniform_trick_grad_vmap_compile():
    bits = (RNG.integers(0, 2**31, 64).astype(np.int32) >> 9) | np.int32(0x3F800000)
    _same_bits(pf.lax.bitcast_convert_type(bits, pnp.float32) - 1.0,
               jax.lax.bitcast_convert_type(bits, jnp.float32) - 1.0)
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    _same_bits(pf.vmap(lambda r: pf.lax.bitcast_convert_type(r, pnp.int32))(x),
               jax.vmap(lambda r: jax.lax.bitcast_convert_type(r, jnp.int32))(x))
    _same_bits(pf.compile(lambda r: pf.lax.bitcast_convert_type(r, pnp.uint8))(x),
               jax.jit(lambda r: jax.lax.bitcast_convert_type(r, jnp.uint8))(x))
    g = pf.grad(lambda r: (pf.lax.bitcast_convert_type(r.astype(pnp.float16), pnp.bfloat16)
                           .astype(pnp.float32) + r).sum())(x)
    np.testing.assert_array_equal(g.numpy(), np.ones_like(x))
