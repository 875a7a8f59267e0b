"""pf.lax's convolutions and windowed reductions against jax.lax (what flax's
Conv, ConvTranspose, max_pool and avg_pool call): padding modes, strides,
lhs/rhs dilation, layouts, feature groups, TensorFlow-default layouts and
kernel transposition of conv_transpose; values and gradients, and
reduce_window's gradient going to the first extreme element of a window."""

from __future__ import annotations

import numpy as np
import pytest

import pyflame_mlir as pf

jax = pytest.importorskip("jax", reason="jax (the bench extra) is the oracle here")
jnp = pytest.importorskip("jax.numpy")

R = np.random.default_rng(0)


def _r(*shape: int) -> np.ndarray:
    return R.standard_normal(shape).astype(np.float32)


def _check(f_jax, f_pf, *args: np.ndarray, grad: bool = True) -> None:
    want = f_jax(*map(jnp.asarray, args))
    got = f_pf(*map(pf.tensor, args))
    assert tuple(got.shape) == want.shape
    np.testing.assert_allclose(got.numpy(), np.asarray(want), rtol=1e-4, atol=1e-4)
    if grad:
        nums = tuple(range(len(args)))
        g_want = jax.grad(lambda *z: (f_jax(*z) ** 2).sum(), nums)(*map(jnp.asarray, args))
        g_got = pf.grad(lambda *z: (f_pf(*z) ** 2).sum(), nums)(*map(pf.tensor, args))
        for a, b in zip(g_got, g_want):
            np.testing.assert_allclose(a.numpy(), np.asarray(b), rtol=1e-3, atol=1e-3)


def _both(name: str, *args, **kwargs):
    return (lambda *z: getattr(jax.lax, name)(*z, *args, **kwargs),
            lambda *z: getattr(pf.lax, name)(*z, *args, **kwargs))


@pytest.mark.parametrize("padding", ["VALID", "SAME", "SAME_LOWER", [(1, 2), (0, -1)]])
@pytest.mark.parametrize("strides", [(1, 1), (2, 3)])
def test_conv_general_dilated_padding_strides(padding, strides):
    _check(*_both("conv_general_dilated", strides, padding), _r(2, 3, 9, 8), _r(4, 3, 3, 2))


def test_conv_lhs_and_rhs_dilation():
    _check(*_both("conv_general_dilated", (1, 2), [(1, 1), (2, 0)], (2, 1), (2, 1)),
           _r(2, 3, 9, 8), _r(4, 3, 3, 2))


@pytest.mark.parametrize("dn", [("NHWC", "HWIO", "NHWC"), ("NHWC", "WHIO", "NCHW")])
def test_conv_layouts(dn):
    w = _r(3, 2, 3, 4) if dn[1] == "HWIO" else _r(2, 3, 3, 4)
    _check(*_both("conv_general_dilated", (1, 1), "SAME", dimension_numbers=dn),
           _r(2, 9, 8, 3), w)


def test_conv_feature_groups_and_ranks():
    _check(*_both("conv_general_dilated", (1, 1), "SAME",
                  dimension_numbers=("NHWC", "HWIO", "NHWC"), feature_group_count=3),
           _r(2, 9, 8, 3), _r(3, 2, 1, 6))
    _check(*_both("conv", (2,), "SAME"), _r(2, 3, 10), _r(5, 3, 4))
    _check(*_both("conv", (1, 2, 1), "VALID"), _r(1, 2, 5, 6, 4), _r(3, 2, 2, 3, 2))
    _check(*_both("conv_with_general_padding", (1, 1), [(1, 0), (0, 1)], (1, 2), None),
           _r(1, 2, 5, 6), _r(3, 2, 2, 3))


@pytest.mark.parametrize("padding", ["SAME", "VALID", [(1, 2), (0, 1)]])
@pytest.mark.parametrize("transpose_kernel", [False, True])
@pytest.mark.parametrize("strides", [(1, 1), (2, 2), (3, 2)])
def test_conv_transpose(padding, transpose_kernel, strides):
    w = _r(3, 2, 3, 3) if transpose_kernel else _r(3, 2, 3, 4)
    _check(*_both("conv_transpose", strides, padding, transpose_kernel=transpose_kernel),
           _r(2, 9, 8, 3), w)


def test_conv_transpose_consistent_padding():
    _check(*_both("conv_transpose", (2, 2), [(1, 1), (0, 1)], use_consistent_padding=True),
           _r(2, 9, 8, 3), _r(3, 2, 3, 4))


def test_conv_errors_name_the_rule():
    with pytest.raises(TypeError, match="same rank"):
        pf.lax.conv(pf.ones(1, 2, 5), pf.ones(3, 2, 2, 2), (1, 1), "VALID")
    with pytest.raises(NotImplementedError, match="batch_group_count"):
        pf.lax.conv_general_dilated(pf.ones(2, 2, 5), pf.ones(2, 2, 2), (1,), "VALID",
                                    batch_group_count=2)


@pytest.mark.parametrize(("computation", "init"), [("max", -np.inf), ("add", 0.0),
                                                   ("min", np.inf)])
@pytest.mark.parametrize("padding", ["VALID", "SAME", [(0, 0), (1, 0), (0, 2), (0, 0)]])
@pytest.mark.parametrize("strides", [(1, 1, 1, 1), (1, 2, 2, 1)])
def test_reduce_window(computation, init, padding, strides):
    _check(lambda x: jax.lax.reduce_window(x, init, getattr(jax.lax, computation),
                                           (1, 3, 2, 1), strides, padding),
           lambda x: pf.lax.reduce_window(x, init, getattr(pf.lax, computation),
                                          (1, 3, 2, 1), strides, padding),
           _r(2, 7, 6, 3))


def test_reduce_window_dilations_and_init():
    _check(lambda x: jax.lax.reduce_window(x, 0.0, jax.lax.add, (1, 2, 2, 1), (1,) * 4,
                                           "VALID", (1, 2, 1, 1), (1, 1, 2, 1)),
           lambda x: pf.lax.reduce_window(x, 0.0, pf.lax.add, (1, 2, 2, 1), (1,) * 4,
                                          "VALID", (1, 2, 1, 1), (1, 1, 2, 1)),
           _r(2, 7, 6, 3))
    # a non-identity init takes part in every window (JAX cannot differentiate it)
    x = _r(2, 5, 4, 1)
    want = jax.lax.reduce_window(jnp.asarray(x), 1.0, jax.lax.max, (1, 2, 2, 1), (1,) * 4,
                                 "VALID")
    got = pf.lax.reduce_window(pf.tensor(x), 1.0, pf.lax.max, (1, 2, 2, 1), (1,) * 4, "VALID")
    np.testing.assert_array_equal(got.numpy(), np.asarray(want))


def test_reduce_window_max_gradient_to_first_of_ties():
    x = np.ones((1, 4, 4, 1), np.float32)  # every window ties
    _check(lambda z: jax.lax.reduce_window(z, -np.inf, jax.lax.max, (1, 2, 2, 1),
                                           (1, 2, 2, 1), "VALID"),
           lambda z: pf.lax.reduce_window(z, -np.inf, pf.lax.max, (1, 2, 2, 1),
                                          (1, 2, 2, 1), "VALID"), x)


def test_reduce_window_refuses_other_computations():
    with pytest.raises(NotImplementedError, match="computation"):
        pf.lax.reduce_window(pf.ones(4), 0.0, lambda a, b: a - b, (2,), (1,), "VALID")


# ---- the rest of lax's everyday names ----

INTS = np.array([[5, -7, 0, 2**30], [-1, 3, 255, -2**31]], np.int32)
SHIFTS = np.array([[0, 1, 31, 32], [-1, 4, 3, 1]], np.int32)
X = _r(3, 4)
POS = np.abs(X) + 1


def _same(f) -> None:
    """``f(lax, asarray)`` under jax and pf: the same values and dtypes."""
    want = jax.tree_util.tree_leaves(f(jax.lax, jnp.asarray))
    got = pf.tree_util.tree_leaves(f(pf.lax, pf.numpy.asarray))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.numpy().dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g.numpy(), np.asarray(w), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor", "shift_left",
                                  "shift_right_arithmetic", "shift_right_logical"])
def test_bitwise_and_shifts(name):
    other = SHIFTS if name.startswith("shift") else INTS[::-1].copy()
    _same(lambda lax, a: getattr(lax, name)(a(INTS), a(other)))


def test_bit_counts_and_not():
    _same(lambda lax, a: (lax.bitwise_not(a(INTS)), lax.population_count(a(INTS))))


def test_special_and_products():
    _same(lambda lax, a: (lax.reciprocal(a(X)), lax.nextafter(a(X), a(X * 0)),
                          lax.polygamma(a(np.float32(2)), a(POS)), lax.zeta(a(POS + 1), a(POS)),
                          lax.igamma(a(POS), a(POS - 1)), lax.igammac(a(POS), a(POS - 1)),
                          lax.bessel_i0e(a(X)), lax.bessel_i1e(a(X))))
    _same(lambda lax, a: (lax.dot(a(X), a(X.T), precision=lax.Precision.HIGHEST),
                          lax.dot(a(X[0]), a(X[1])), lax.dot(a(X), a(X[0])),
                          lax.tile(a(X), (2, 3)), *lax.split(a(X), (1, 3), axis=1)))


def test_reduce_and_shapes():
    _same(lambda lax, a: (lax.reduce(a(X), 0.0, lax.add, (1,)),
                          lax.reduce(a(X), -np.inf, lax.max, (0, 1)),
                          lax.reduce(a(X), 1.0, lax.mul, (0,)),
                          lax.reduce(a(X), 2.0, lax.max, (0,))))
    # reduce_max's derivative splits among ties (reduce_window's does not)
    g = pf.grad(lambda x: pf.lax.reduce(x, -np.inf, pf.lax.max, (1,)).sum())(pf.ones(2, 3))
    want = jax.grad(lambda x: jax.lax.reduce(x, -jnp.inf, jax.lax.max, (1,)).sum())(
        jnp.ones((2, 3)))
    np.testing.assert_allclose(g.numpy(), np.asarray(want))
    assert pf.lax.broadcast_shapes((3, 1), (1, 4)) == jax.lax.broadcast_shapes((3, 1), (1, 4))
    assert list(pf.lax.padtype_to_pads((7, 6), (3, 2), (2, 2), "SAME")) == \
        [tuple(p) for p in jax.lax.padtype_to_pads((7, 6), (3, 2), (2, 2), "SAME")]
    dn = ("NHWC", "HWIO", "NHWC")
    assert tuple(pf.lax.conv_dimension_numbers((1, 5, 5, 3), (3, 3, 3, 8), dn)) == \
        tuple(jax.lax.conv_dimension_numbers((1, 5, 5, 3), (3, 3, 3, 8), dn))
