"""JAX's scalar types: ``jnp.float32(2.0)`` is a 0-d float32 array,
``jnp.int32(x)`` casts, the types are dtype arguments everywhere (numpy's
too: a pf dtype has numpy's ``dtype``), compare equal to the dtypes, and
``finfo``/``iinfo`` take them; against jax."""

from __future__ import annotations

import numpy as np
import pytest

import pyflame_mlir as pf

jax = pytest.importorskip("jax", reason="jax (the bench extra) is not installed")
jnp = pytest.importorskip("jax.numpy")
pnp = pf.numpy


def _same(got: object, want: object) -> None:
    g, w = np.asarray(got), np.asarray(want)
    assert (g.shape, g.dtype) == (w.shape, w.dtype)
    np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16", "float64", "int8", "int16",
                                  "int32", "int64", "uint8", "bool_", "single", "double",
                                  "float_", "int_"])
@pytest.mark.parametrize("value", [2.7, 3, [1.5, -2.5], -1])
def test_scalar_type_called_matches_jax(name: str, value: object) -> None:
    if name == "uint8" and value in (-1, [1.5, -2.5]):
        pytest.skip("(a negative value into uint8 wraps differently per numpy version)")
    _same(getattr(pnp, name)(value), getattr(jnp, name)(value))
    _same(getattr(pnp, name)(pnp.asarray(value)), getattr(jnp, name)(jnp.asarray(value)))


def test_scalar_types_as_dtypes() -> None:
    _same(pnp.zeros(3, pnp.bfloat16), jnp.zeros(3, jnp.bfloat16))
    _same(pnp.arange(3).astype(pnp.float16), jnp.arange(3).astype(jnp.float16))
    _same(pnp.asarray([1, 2], dtype=pnp.float32), jnp.asarray([1, 2], dtype=jnp.float32))
    _same(pnp.full((2,), 3, pnp.int8), jnp.full((2,), 3, jnp.int8))
    _same(pnp.linspace(0, 1, 5, dtype=pnp.bfloat16), jnp.linspace(0, 1, 5, dtype=jnp.bfloat16))
    _same(pnp.eye(2, dtype=pnp.int32), jnp.eye(2, dtype=jnp.int32))
    assert pf.tensor([1.0]).to(pnp.float16).dtype is pf.float16
    assert pf.ones(2, dtype=pnp.int32).dtype is pf.int32
    x = pnp.zeros(3)
    assert x.dtype == pnp.float32 and pnp.float32 == x.dtype and x.dtype != pnp.int32
    assert {pf.float32: 1}[pnp.float32] == 1 and pnp.float32 in (x.dtype,)
    assert np.dtype(pnp.float32) == np.float32 and pnp.bfloat16.dtype == jnp.bfloat16.dtype
    assert pnp.issubdtype(pnp.float32, pnp.floating)
    assert pnp.result_type(pnp.float16, pnp.float32) == jnp.result_type(jnp.float16, jnp.float32)
    assert pnp.promote_types(pnp.bfloat16, pnp.float16) == \
        jnp.promote_types(jnp.bfloat16, jnp.float16)
    # numpy takes pf's dtypes as JAX arrays' (numpy) dtypes
    assert np.zeros(2, x.dtype).dtype == np.float32
    assert np.zeros(2, pnp.bfloat16).dtype == jnp.bfloat16


@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16"])
def test_finfo_matches_jax(name: str) -> None:
    got, want = pnp.finfo(getattr(pnp, name)), jnp.finfo(getattr(jnp, name))
    for attr in ("eps", "max", "min", "tiny", "bits", "resolution"):
        assert float(getattr(got, attr)) == float(getattr(want, attr)), attr
    assert np.dtype(got.dtype) == np.dtype(want.dtype)


@pytest.mark.parametrize("name", ["int8", "int16", "int32", "uint8"])
def test_iinfo_matches_jax(name: str) -> None:
    got, want = pnp.iinfo(getattr(pnp, name)), jnp.iinfo(getattr(jnp, name))
    assert (got.min, got.max, got.bits) == (want.min, want.max, want.bits)


def test_sum_with_int32_dtype_stays_int32() -> None:
    # pf.numpy.sum(int8, dtype=int32) was int64 (torch's integer sum)
    _same(pnp.sum(pnp.ones(3, pnp.int8), dtype=pnp.int32),
          jnp.sum(jnp.ones(3, jnp.int8), dtype=jnp.int32))
    _same(pnp.sum(pnp.ones((2, 3), pnp.int32), axis=1, dtype=pnp.int32),
          jnp.sum(jnp.ones((2, 3), jnp.int32), axis=1, dtype=jnp.int32))
