"""pf.numpy (jax.numpy's semantics where torch's differ) against jax.numpy:
values, dtypes (float32/int32 without 64-bit mode) and gradients."""

from __future__ import annotations

import numpy as np
import pytest

import pyflame_mlir as pf

jax = pytest.importorskip("jax", reason="jax (the bench extra) is the oracle here")
jnp = pytest.importorskip("jax.numpy")

R = np.random.default_rng(0)
X = R.standard_normal((3, 4)).astype(np.float32)
I = np.array([[2, 0, 1, 3], [1, 1, 0, 2], [3, 2, 1, 0]])


def _jax(n):
    return jax if n is jnp else pf


CASES = {
    "asarray_f64": lambda n: n.asarray(np.arange(3.0)),
    "array_list": lambda n: n.array([1, 2, 3]),
    "zeros": lambda n: n.zeros((2, 3)),
    "ones_i": lambda n: n.ones(3, dtype=n.int32),
    "full": lambda n: n.full((2,), 7),
    "arange": lambda n: n.arange(5),
    "arange_f": lambda n: n.arange(0.0, 1.0, 0.25),
    "linspace": lambda n: n.linspace(0, 1, 5),
    "linspace_ne": lambda n: n.linspace(0, 1, 4, endpoint=False),
    "eye": lambda n: n.eye(3, 4, 1),
    "sum": lambda n: n.sum(n.asarray(X), axis=0),
    "sum_kd": lambda n: n.sum(n.asarray(X), axis=(0, 1), keepdims=True),
    "sum_where": lambda n: n.sum(n.asarray(X), axis=1, where=n.asarray(X) > 0),
    "sum_bool": lambda n: n.sum(n.asarray(X) > 0),
    "mean_where": lambda n: n.mean(n.asarray(X), where=n.asarray(X) > 0),
    "mean_int": lambda n: n.mean(n.asarray(I), axis=0),
    "prod": lambda n: n.prod(n.asarray(X), axis=1),
    "max": lambda n: n.max(n.asarray(X), axis=0),
    "min_kd": lambda n: n.min(n.asarray(X), axis=1, keepdims=True),
    "max_all": lambda n: n.max(n.asarray(X)),
    "max_initial_where": lambda n: n.max(
        n.asarray(X), axis=0, initial=-1.0, where=n.asarray(X) < 1
    ),
    "ptp": lambda n: n.ptp(n.asarray(X), axis=1),
    "var": lambda n: n.var(n.asarray(X)),
    "var_ddof": lambda n: n.var(n.asarray(X), axis=0, ddof=1),
    "std": lambda n: n.std(n.asarray(X), axis=1, keepdims=True),
    "argmax": lambda n: n.argmax(n.asarray(X)),
    "argmax_ax": lambda n: n.argmax(n.asarray(X), axis=1),
    "argmin_kd": lambda n: n.argmin(n.asarray(X), axis=0, keepdims=True),
    "median": lambda n: n.median(n.asarray(X), axis=1),
    "median_all": lambda n: n.median(n.asarray(X)),
    "quantile": lambda n: n.quantile(n.asarray(X), 0.3, axis=0),
    "percentile": lambda n: n.percentile(n.asarray(X), 75),
    "average_w": lambda n: n.average(
        n.asarray(X), axis=1, weights=n.asarray(np.array([1.0, 2.0, 3.0, 4.0], np.float32))
    ),
    "cumsum_none": lambda n: n.cumsum(n.asarray(X)),
    "cumprod_ax": lambda n: n.cumprod(n.asarray(X), axis=1),
    "sort": lambda n: n.sort(n.asarray(X)),
    "sort_ax0": lambda n: n.sort(n.asarray(X), axis=0),
    "argsort": lambda n: n.argsort(n.asarray(X), axis=1),
    "nonzero": lambda n: n.nonzero(n.asarray(I) > 1),
    "take": lambda n: n.take(n.asarray(X), n.asarray(np.array([0, 5, 11]))),
    "take_ax": lambda n: n.take(n.asarray(X), n.asarray(np.array([[0, 2], [3, 3]])), axis=1),
    "take_along": lambda n: n.take_along_axis(n.asarray(X), n.asarray(I), axis=1),
    "reshape": lambda n: n.reshape(n.asarray(X), (2, -1)),
    "ravel": lambda n: n.ravel(n.asarray(X)),
    "transpose": lambda n: n.transpose(n.asarray(X)),
    "transpose_axes": lambda n: n.transpose(n.asarray(X)[None], (2, 0, 1)),
    "swapaxes": lambda n: n.swapaxes(n.asarray(X), 0, 1),
    "moveaxis": lambda n: n.moveaxis(n.asarray(X)[None], 0, -1),
    "expand_dims": lambda n: n.expand_dims(n.asarray(X), (0, 3)),
    "squeeze": lambda n: n.squeeze(n.asarray(X)[None, :, None]),
    "concat": lambda n: n.concatenate([n.asarray(X), n.asarray(X)], axis=1),
    "concat_none": lambda n: n.concatenate([n.asarray(X), n.asarray(X)], axis=None),
    "stack": lambda n: n.stack([n.asarray(X), n.asarray(X)], axis=1),
    "hstack": lambda n: n.hstack([n.asarray(X), n.asarray(X)]),
    "vstack": lambda n: n.vstack([n.asarray(X[0]), n.asarray(X[1])]),
    "split": lambda n: n.split(n.asarray(X), 2, axis=1),
    "split_pts": lambda n: n.split(n.asarray(X), [1, 3], axis=1),
    "repeat": lambda n: n.repeat(n.asarray(X), 2, axis=0),
    "repeat_none": lambda n: n.repeat(n.asarray(X), 2),
    "tile": lambda n: n.tile(n.asarray(X), (2, 1)),
    "flip": lambda n: n.flip(n.asarray(X)),
    "flip_ax": lambda n: n.flip(n.asarray(X), 1),
    "roll": lambda n: n.roll(n.asarray(X), 2),
    "roll_ax": lambda n: n.roll(n.asarray(X), -1, axis=1),
    "clip": lambda n: n.clip(n.asarray(X), -0.5, 0.5),
    "clip_kw": lambda n: n.clip(n.asarray(X), min=0.0),
    "pad": lambda n: n.pad(n.asarray(X), 1),
    "pad_w": lambda n: n.pad(n.asarray(X), ((1, 0), (0, 2)), constant_values=3.0),
    "dot": lambda n: n.dot(n.asarray(X), n.asarray(X.T)),
    "dot_vec": lambda n: n.dot(n.asarray(X), n.asarray(X[0])),
    "dot_nd": lambda n: n.dot(n.asarray(X)[None], n.asarray(X.T)[None]),
    "vdot": lambda n: n.vdot(n.asarray(X), n.asarray(X)),
    "outer": lambda n: n.outer(n.asarray(X[0]), n.asarray(X[1])),
    "inner": lambda n: n.inner(n.asarray(X), n.asarray(X)),
    "where": lambda n: n.where(n.asarray(X) > 0, n.asarray(X), 0.0),
    "norm": lambda n: n.linalg.norm(n.asarray(X)),
    "norm_ax": lambda n: n.linalg.norm(n.asarray(X), axis=1),
    "norm_ord1": lambda n: n.linalg.norm(n.asarray(X[0]), ord=1),
    "norm_fro": lambda n: n.linalg.norm(n.asarray(X), ord="fro"),
    "norm_inf_ax": lambda n: n.linalg.norm(n.asarray(X), ord=n.inf, axis=0),
    "inv": lambda n: n.linalg.inv(n.asarray(X[:3, :3]) + 3 * n.eye(3)),
    "mod": lambda n: n.mod(n.asarray(X), 0.7),
    "power": lambda n: n.power(n.asarray(X), 2),
    "exp_fallback": lambda n: n.exp(n.asarray(X)),
    "einsum": lambda n: n.einsum("ij,kj->ik", n.asarray(X), n.asarray(X)),
    "size": lambda n: n.asarray(n.size(n.asarray(X))),
    "logaddexp": lambda n: n.logaddexp(n.asarray(X), 0.0),
    "isclose": lambda n: n.isclose(n.asarray(X), n.asarray(X) + 1e-9),
    "grad_max": lambda n: _jax(n).grad(lambda v: n.sum(n.max(v, axis=1)))(n.asarray(X)),
    "grad_var": lambda n: _jax(n).grad(lambda v: n.var(v))(n.asarray(X)),
    "grad_norm": lambda n: _jax(n).grad(lambda v: n.linalg.norm(v))(n.asarray(X)),
    "grad_sort": lambda n: _jax(n).grad(lambda v: n.sum(n.sort(v, axis=0)[0] * 2))(n.asarray(X)),
}

CASES["grad_abs_at_0"] = lambda n: _jax(n).grad(lambda v: n.sum(n.abs(v)))(
    n.asarray(np.array([-1.0, 0.0, 2.0], np.float32))
)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax_numpy(name: str) -> None:
    want = jax.tree_util.tree_leaves(CASES[name](jnp))
    got = pf.tree_util.tree_leaves(CASES[name](pf.numpy))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = np.asarray(w)
        g = g.numpy() if isinstance(g, pf.Tensor) else np.asarray(g)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_other_names_are_pf_and_star_import_keeps_numpy() -> None:
    assert pf.numpy.matmul.__name__ == "matmul" and pf.numpy.float32 == pf.float32
    # (wrapped: numpy float64 data is float32 without x64)
    assert pf.numpy.maximum.__name__ == "maximum"  # (wrapped: JAX's weak Python ints)
    assert pf.numpy.exp.__name__ == "exp"  # (wrapped: int64 operands are float64 under x64)
    assert pf.tensor(X)[pf.numpy.newaxis].shape == (1, 3, 4)
    namespace: dict = {}
    exec("import numpy\nfrom pyflame_mlir import *", namespace)  # noqa: S102
    assert namespace["numpy"] is np
    with pytest.raises(AttributeError, match="no attribute"):
        pf.numpy.no_such_name  # noqa: B018
