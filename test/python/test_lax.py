"""pf.lax's array ops against jax.lax: JAX's signatures and conventions
(argument order, negative and clamped dynamic starts, truncating integer
division, rounding away from zero, dot_general's dimension numbers, lax.pad's
interior and negative padding, sort by keys), values, gradients and vmap."""

from __future__ import annotations

import numpy as np
import pytest

import pyflame_mlir as pf

jax = pytest.importorskip("jax", reason="jax (the bench extra) is the oracle here")
jnp = pytest.importorskip("jax.numpy")

R = np.random.default_rng(0)
X = R.standard_normal((4, 5)).astype(np.float32)
V = R.standard_normal((5,)).astype(np.float32)
I = np.array([[7, -3, 2], [-7, 3, 0]], np.int32)


def cases(l, L):
    x = L.asarray(X)
    J = jax if L is jnp else pf
    i32 = jnp.int32 if L is jnp else pf.int32
    return {
        "add": lambda: l.add(x, 2.0),
        "div_int": lambda: l.div(
            L.asarray(I), L.asarray(np.array([[2, 2, 3], [2, -2, 3]], np.int32))
        ),
        "rem": lambda: l.rem(L.asarray(I), L.asarray(np.array([[2, 2, 3], [2, -2, 3]], np.int32))),
        "rem_f": lambda: l.rem(x, 0.7),
        "max": lambda: l.max(x, 0.1),
        "clamp": lambda: l.clamp(-0.5, x, 0.5),
        "round": lambda: l.round(L.asarray(np.array([0.5, 1.5, -0.5, -2.5, 2.4], np.float32))),
        "round_even": lambda: l.round(
            L.asarray(np.array([0.5, 1.5, -0.5, -2.5, 2.4], np.float32)), 1
        ),
        "integer_pow": lambda: l.integer_pow(x, 3),
        "square": lambda: l.square(x),
        "rsqrt": lambda: l.rsqrt(l.abs(x) + 1),
        "cbrt": lambda: l.cbrt(x),
        "logistic": lambda: l.logistic(x),
        "erf_inv": lambda: l.erf_inv(x * 0.2),
        "select_n": lambda: l.select_n(
            L.asarray(np.array([0, 2, 1, 1, 0], np.int32)), x[0], x[1], x[2]
        ),
        "select_n_bool": lambda: l.select_n(x[0] > 0, x[1], x[2]),
        "convert": lambda: l.convert_element_type(x * 3, i32),
        "full": lambda: l.full((2, 3), 1.5),
        "full_like": lambda: l.full_like(x, 2),
        "iota": lambda: l.iota(i32, 5),
        "biota": lambda: l.broadcasted_iota(i32, (2, 3), 1),
        "broadcast": lambda: l.broadcast(L.asarray(V), (2, 3)),
        "bid": lambda: l.broadcast_in_dim(L.asarray(V), (3, 5, 2), (1,)),
        "expand": lambda: l.expand_dims(x, (0, 3)),
        "squeeze": lambda: l.squeeze(x[None, :, None], (0, 2)),
        "reshape_dims": lambda: l.reshape(x, (5, 4), (1, 0)),
        "transpose": lambda: l.transpose(x, (1, 0)),
        "rev": lambda: l.rev(x, (0, 1)),
        "concat": lambda: l.concatenate([x, x * 2], 1),
        "slice": lambda: l.slice(x, (1, 0), (4, 5), (2, 2)),
        "slice_in_dim": lambda: l.slice_in_dim(x, 1, -1, 1, 1),
        "index_in_dim": lambda: l.index_in_dim(x, -1, 1, False),
        "dyn_slice": lambda: l.dynamic_slice(x, (2, 3), (2, 3)),
        "dyn_slice_clamp": lambda: l.dynamic_slice(x, (3, -2), (2, 3)),
        "dyn_neg_t": lambda: l.dynamic_slice(x, (L.asarray(-1), L.asarray(-4)), (2, 3)),
        "dyn_upd_neg": lambda: l.dynamic_update_slice(x, L.ones((2, 2)), (-1, L.asarray(-3))),
        "dyn_index_neg": lambda: l.dynamic_index_in_dim(x, -1, 1, False),
        "dyn_slice_t": lambda: l.dynamic_slice(x, (L.asarray(3), L.asarray(1)), (2, 3)),
        "dyn_upd": lambda: l.dynamic_update_slice(x, L.ones((2, 2)), (3, 4)),
        "dyn_upd_t": lambda: l.dynamic_update_slice(
            x, L.ones((2, 2)), (L.asarray(1), L.asarray(2))
        ),
        "dyn_slice_in_dim": lambda: l.dynamic_slice_in_dim(x, 2, 2, 1),
        "dyn_index": lambda: l.dynamic_index_in_dim(x, 1, 0, False),
        "dyn_upd_in_dim": lambda: l.dynamic_update_slice_in_dim(x, L.zeros((4, 2)), 1, 1),
        "dyn_upd_index": lambda: l.dynamic_update_index_in_dim(x, L.zeros(5), 2, 0),
        "pad": lambda: l.pad(x, 0.0, ((1, 2, 0), (0, 0, 1))),
        "pad_neg": lambda: l.pad(x, -1.0, ((-1, 1, 1), (2, -2, 0))),
        "dot_general": lambda: l.dot_general(
            L.ones((2, 3, 4)) * x[0, 0],
            L.asarray(np.arange(24.0).reshape(2, 4, 3).astype(np.float32)),
            (((2,), (1,)), ((0,), (0,))),
        ),
        "dot_general2": lambda: l.dot_general(x, x, (((0,), (0,)), ((), ()))),
        "cumsum_rev": lambda: l.cumsum(x, 1, reverse=True),
        "cummax": lambda: l.cummax(x, 0),
        "cumlse": lambda: l.cumlogsumexp(x, 1),
        "reduce_sum": lambda: l.reduce_sum(x, (0, 1)),
        "reduce_max": lambda: l.reduce_max(x, (1,)),
        "reduce_prod": lambda: l.reduce_prod(x, (0,)),
        "argmax": lambda: l.argmax(x, 1, i32),
        "sort": lambda: l.sort(x, 0),
        "sort_multi": lambda: l.sort(
            (L.asarray(np.array([2, 1, 2, 1, 0], np.int32)), x[0]), 0, num_keys=1
        ),
        "sort_2keys": lambda: l.sort(
            (
                L.asarray(np.array([2, 1, 2, 1, 0], np.int32)),
                L.asarray(np.array([3, 1, 0, 0, 5], np.int32)),
                x[0],
            ),
            0,
            num_keys=2,
        ),
        "top_k": lambda: l.top_k(x, 2),
        "assoc": lambda: l.associative_scan(lambda a, b: a + b, x, axis=1),
        "assoc_rev": lambda: l.associative_scan(
            lambda a, b: (a[0] * b[0], a[1] * b[0] + b[1]), (x, x * 2), reverse=True
        )[1],
        "grad_dyn_slice": lambda: J.grad(
            lambda v: L.sum(l.dynamic_slice(v, (L.asarray(1), 2), (2, 2)) ** 2)
        )(x),
        "grad_dyn_upd": lambda: J.grad(
            lambda v: L.sum(l.dynamic_update_slice(v, v[:2, :2] * 3, (L.asarray(2), 1)) ** 2)
        )(x),
        "grad_pad": lambda: J.grad(lambda v: L.sum(l.pad(v, 1.0, ((1, -1, 2), (0, 1, 0))) ** 2))(x),
        "vmap_dyn_slice": lambda: J.vmap(lambda v, i: l.dynamic_slice(v, (i,), (2,)))(
            x, L.asarray(np.array([0, 3, 4, 1]))
        ),
        "vmap_dyn_upd": lambda: J.vmap(
            lambda v, i: l.dynamic_update_slice(
                v, L.asarray(np.array([9.0, 8.0], np.float32)), (i,)
            )
        )(x, L.asarray(np.array([0, 3, 4, 1]))),
    }


NAMES = sorted(cases(jax.lax, jnp))


@pytest.mark.parametrize("name", NAMES)
def test_lax_op_matches_jax(name: str) -> None:
    want = jax.tree_util.tree_leaves(cases(jax.lax, jnp)[name]())
    got = pf.tree_util.tree_leaves(cases(pf.lax, pf)[name]())
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = np.asarray(w)
        g = g.numpy()
        assert g.shape == w.shape and g.dtype.kind == w.dtype.kind, (g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_dynamic_slice_with_a_tensor_start_replays_under_compile() -> None:
    f = pf.compile(lambda x, i: pf.lax.dynamic_slice(x, (i, 1), (2, 3)))
    for k in (0, 3, 1, 2):
        np.testing.assert_array_equal(
            f(pf.tensor(X), pf.tensor(k)).numpy(), X[min(k, 2) : min(k, 2) + 2, 1:4]
        )
    assert f.stats()["hits"] == 3  # the start is an input, never read on the host


def test_lax_errors_name_the_rule() -> None:
    with pytest.raises(TypeError, match="size 6 of dim 1"):
        pf.lax.dynamic_slice(pf.tensor(X), (0, 0), (1, 6))
    with pytest.raises(TypeError, match="exponent must be a Python int"):
        pf.lax.integer_pow(pf.tensor(X), 2.0)
    with pytest.raises(ValueError, match="not 1"):
        pf.lax.squeeze(pf.tensor(X), (0,))
