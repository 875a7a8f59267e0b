"""``jax.ops``' segment reductions (``pf.ops.segment_sum/max/min/prod``)
against jax: values, dtypes, empty segments, out-of-range ids (dropped, or
clamped with ``mode="clip"``), NaN, ties, gradients, ``vmap`` and
``pf.compile`` (the sum's ids may be lazy)."""

from __future__ import annotations

import numpy as np
import pytest

import pyflame_mlir as pf

jax = pytest.importorskip("jax", reason="jax (the bench extra) is not installed")
jnp = pytest.importorskip("jax.numpy")
pnp = pf.numpy

RS = np.random.RandomState(0)
DATA = RS.randn(7, 3).astype(np.float32)
DATA[2, 1] = DATA[5, 1]  # a tie inside segment 2
IDS = np.array([0, 2, 2, -1, 5, 2, 1], np.int32)  # -1 and 5 are out of range for 3 or 4
NAMES = ["segment_sum", "segment_max", "segment_min", "segment_prod"]


def _finite(y: object, where: object) -> object:
    return where.where(where.isfinite(y), y, 0)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("num_segments", [3, 4, 6, None])
@pytest.mark.parametrize("mode", [None, "clip", "drop"])
def test_segment_values_and_gradients_match_jax(name: str, num_segments: int | None,
                                                mode: str | None) -> None:
    ids = IDS if num_segments is not None else np.abs(IDS)
    want = getattr(jax.ops, name)(jnp.asarray(DATA), jnp.asarray(ids), num_segments, mode=mode)
    got = getattr(pf.ops, name)(pnp.asarray(DATA), pnp.asarray(ids), num_segments, mode=mode)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    if name == "segment_prod":  # (jax has no gradient for a scatter-multiply of repeated ids)
        return
    # (jax's max/min derivative under mode="clip" gives inf: compared on clamped ids)
    jids, jmode = (np.clip(ids, 0, (num_segments or 6) - 1), None) if mode == "clip" \
        else (ids, mode)
    c = RS.randn(*np.asarray(want).shape).astype(np.float32)
    gw = jax.grad(lambda d: jnp.sum(_finite(getattr(jax.ops, name)(
        d, jnp.asarray(jids), num_segments, mode=jmode), jnp) * c))(jnp.asarray(DATA))
    gp = pf.grad(lambda d: pnp.sum(_finite(getattr(pf.ops, name)(
        d, pnp.asarray(ids), num_segments, mode=mode), pnp) * pnp.asarray(c)))(pnp.asarray(DATA))
    np.testing.assert_allclose(np.asarray(gp), np.asarray(gw), rtol=1e-5, atol=1e-6)


def test_segment_prod_gradient_by_finite_differences() -> None:
    x = np.array([1.5, 0.0, -2.0, 3.0, 0.5], np.float64)
    ids = np.array([0, 0, 1, 1, 1])
    with pf.experimental.enable_x64():  # (float64 data stays float64)
        g = pf.grad(lambda d: pnp.sum(pf.ops.segment_prod(d, pnp.asarray(ids), 2) *
                                      pnp.asarray([1.0, -2.0])))(pnp.asarray(x))
    eps, fd = 1e-6, []
    for i in range(len(x)):
        def f(v: np.ndarray) -> float:
            return v[0] * v[1] * 1.0 + v[2] * v[3] * v[4] * -2.0
        up, dn = x.copy(), x.copy()
        up[i] += eps
        dn[i] -= eps
        fd.append((f(up) - f(dn)) / (2 * eps))
    np.testing.assert_allclose(np.asarray(g), fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", NAMES)
def test_segment_integers_nan_and_empty_match_jax(name: str) -> None:
    di = RS.randint(-5, 5, (7,)).astype(np.int32)
    want = getattr(jax.ops, name)(jnp.asarray(di), jnp.asarray(IDS), 4)
    got = getattr(pf.ops, name)(pnp.asarray(di), pnp.asarray(IDS), 4)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    dn = np.array([1.0, np.nan, 3.0, 2.0], np.float32)
    np.testing.assert_array_equal(
        np.asarray(getattr(pf.ops, name)(pnp.asarray(dn), pnp.asarray([0, 0, 1, 1]), 2)),
        np.asarray(getattr(jax.ops, name)(jnp.asarray(dn), jnp.asarray([0, 0, 1, 1]), 2)))
    np.testing.assert_array_equal(
        np.asarray(getattr(pf.ops, name)(pnp.zeros((0, 2)), pnp.zeros((0,), pnp.int32), 2)),
        np.asarray(getattr(jax.ops, name)(jnp.zeros((0, 2)), jnp.zeros((0,), jnp.int32), 2)))


def test_segment_under_vmap_and_compile() -> None:
    d = RS.randn(2, 5).astype(np.float32)
    i = np.array([[0, 1, 1, 2, 7], [2, 2, 0, -1, 1]], np.int32)
    want = jax.vmap(lambda a, b: jax.ops.segment_sum(a, b, 3))(jnp.asarray(d), jnp.asarray(i))
    got = pf.vmap(lambda a, b: pf.ops.segment_sum(a, b, 3))(pnp.asarray(d), pnp.asarray(i))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want))
    f = pf.compile(lambda a, b: pf.ops.segment_sum(a, b, 3))
    g = pf.compile(lambda a, b: pf.ops.segment_max(a, b, 3))
    for k in range(2):  # (a second call with other ids: not the first call's)
        np.testing.assert_allclose(
            np.asarray(f(pnp.asarray(d[k]), pnp.asarray(i[k]))),
            np.asarray(jax.ops.segment_sum(jnp.asarray(d[k]), jnp.asarray(i[k]), 3)))
        np.testing.assert_allclose(
            np.asarray(g(pnp.asarray(d[k]), pnp.asarray(i[k]))),
            np.asarray(jax.ops.segment_max(jnp.asarray(d[k]), jnp.asarray(i[k]), 3)))
    want = jax.vmap(lambda a: jax.ops.segment_max(a, jnp.asarray(i[0]), 3))(jnp.asarray(d))
    got = pf.vmap(lambda a: pf.ops.segment_max(a, pnp.asarray(i[0]), 3))(pnp.asarray(d))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want))


def test_segment_argument_errors() -> None:
    with pytest.raises(ValueError, match="segment_ids of shape"):
        pf.ops.segment_sum(pnp.ones((3, 2)), pnp.asarray([0, 1]), 2)
    with pytest.raises(TypeError, match="integers"):
        pf.ops.segment_max(pnp.ones(2), pnp.asarray([0.0, 1.0]), 2)
    with pytest.raises(ValueError, match="mode"):
        pf.ops.segment_sum(pnp.ones(2), pnp.asarray([0, 1]), 2, mode="wrap")
