"""JAX's functional updates ``x.at[idx].set/add/subtract/multiply/divide/min/max/get``
against jax (values, and gradients through ``grad``), with repeated positions
combined as JAX's scatters combine them."""

from __future__ import annotations

import numpy as np
import pytest

import pyflame_mlir as pf
from pyflame_mlir.vmap import ConcretizationError

jax = pytest.importorskip("jax", reason="jax (the bench extra) is not installed")
jnp = pytest.importorskip("jax.numpy")

X = np.arange(12.0).reshape(3, 4) / 4 + 0.5
UPDATES = {
    "set_row": lambda a, v: a.at[1].set(v[0]),
    "set_advanced": lambda a, v: a.at[np.array([0, 2]), 1].set(v[0, :2]),
    "add_repeated": lambda a, v: a.at[np.array([0, 0, 2])].add(v),
    "add_slice": lambda a, v: a.at[:2].add(v[0]),
    "subtract": lambda a, v: a.at[0, 1:3].subtract(v[1, :2]),
    "multiply": lambda a, v: a.at[np.array([1, 0]), 2].multiply(v[2, :2], unique_indices=True),
    "divide": lambda a, v: a.at[2].divide(v[1]),
    "min": lambda a, v: a.at[:, 0].min(v[:, 3]),
    "max_repeated": lambda a, v: a.at[np.array([0, 0])].max(v[:2]),
    "get": lambda a, v: a.at[1:, ::2].get() * v[1:, ::2],
}


@pytest.mark.parametrize("name", sorted(UPDATES))
def test_value_and_gradient_match_jax(name: str) -> None:
    f = UPDATES[name]
    v = np.linspace(0.75, 3.0, 12).reshape(3, 4)
    ours = f(pf.tensor(X), pf.tensor(v))
    weights = np.arange(1.0, 1.0 + ours.numel()).reshape(ours.shape)

    def loss(lib):
        return lambda a, b: (f(a, b) * lib.asarray(weights)).sum()
    ga, gb = pf.grad(loss(pf), argnums=(0, 1))(pf.tensor(X), pf.tensor(v))
    with jax.enable_x64(True):  # (float64 as ours, for this test only)
        theirs = f(jnp.asarray(X), jnp.asarray(v))
        ja, jb = jax.grad(loss(jnp), argnums=(0, 1))(jnp.asarray(X), jnp.asarray(v))
    np.testing.assert_allclose(ours.numpy(), np.asarray(theirs), rtol=1e-12)
    np.testing.assert_allclose(ga.numpy(), np.asarray(ja), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gb.numpy(), np.asarray(jb), rtol=1e-12, atol=1e-12)


def test_repeated_multiply_applies_every_update_as_jax() -> None:
    """(jax has no gradient for a scatter-multiply with repeated positions.)"""
    v = np.array([2.0, 3.0])
    ours = pf.tensor(X).at[np.array([1, 1]), 2].multiply(pf.tensor(v))
    with jax.enable_x64(True):
        theirs = jnp.asarray(X).at[np.array([1, 1]), 2].multiply(jnp.asarray(v))
    np.testing.assert_allclose(ours.numpy(), np.asarray(theirs), rtol=1e-12)
    assert ours.numpy()[1, 2] == X[1, 2] * 6


def test_the_original_is_kept() -> None:
    x = pf.tensor(X)
    y = x.at[0].set(0.0)
    assert x.numpy()[0, 0] == X[0, 0] and y.numpy()[0, 0] == 0.0


def test_scatter_keywords_are_hints_and_bad_modes_are_refused() -> None:
    x = pf.tensor(X)
    np.testing.assert_array_equal(
        x.at[np.array([0, 1])].add(1.0, indices_are_sorted=True, unique_indices=True).numpy(),
        x.at[np.array([0, 1])].add(1.0).numpy())
    np.testing.assert_array_equal(x.at[np.array([X.shape[0]])].set(0.0, mode="drop").numpy(),
                                  X)  # (out-of-bounds modes: test_jax_at_bounds.py)
    with pytest.raises(ValueError, match="mode must be one of"):
        x.at[0].set(0.0, mode="wrap")
    with pytest.raises(TypeError, match="unexpected keyword"):
        x.at[0].set(0.0, bogus=1)


def test_divide_of_an_integer_tensor_raises_instead_of_writing_zeros() -> None:
    with pytest.raises(TypeError, match="not a floating-point dtype"):
        pf.tensor([4, 6]).at[0].divide(2)


# ---- a lazy index (mapped under vmap, computed in the graph): never read ----

ROWS = np.array([0, 2, 1, 2, 0])
M = (np.arange(15.0).reshape(5, 3) / 3 - 2).astype(np.float32)
LAZY = {
    "getitem": lambda x, i: x[i] * 2,
    "at_get": lambda x, i: x.at[i].get() * 2,
    "set": lambda x, i: x.at[i].set(-1.0),
    "set_from_x": lambda x, i: x.at[i].set(x[0] * 10),
    "add": lambda x, i: x.at[i].add(x[1] * 5),
    "set_repeated": lambda x, i, lib: x.at[lib.stack([i, i, 2 - i])].set(x[:3] * 3),
}


@pytest.mark.parametrize("name", sorted(LAZY))
def test_mapped_index_under_vmap_matches_jax(name: str) -> None:
    f = LAZY[name]

    def run(lib, vmap, grad, asarray):
        g = (lambda x, i: f(x, i, lib)) if name == "set_repeated" else f
        out = vmap(g)(asarray(M), asarray(ROWS))
        d = grad(lambda x: lib.sum(vmap(g)(x, asarray(ROWS)) ** 2))(asarray(M))
        return out, d

    out, d = run(pf, pf.vmap, pf.grad, pf.tensor)
    out_j, d_j = run(jnp, jax.vmap, jax.grad, jnp.asarray)
    np.testing.assert_allclose(out.numpy(), np.asarray(out_j), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(d.numpy(), np.asarray(d_j), rtol=1e-6, atol=1e-6)


def test_lazy_zero_d_index_selects_like_an_int() -> None:
    i = pf.tensor(2) + 0  # lazy: indexes by a gather, its value is not read
    x = pf.tensor(M)
    for index, expect in [((i,), M[2]), ((slice(None), i), M[:, 2]), ((i, 1), M[2, 1]),
                          ((i, None), M[2, None]), ((Ellipsis, i), M[..., 2]),
                          ((i, [0, 2]), M[2, [0, 2]])]:
        np.testing.assert_array_equal(x[index].numpy(), expect)
    np.testing.assert_array_equal(x.at[i, 1].add(7.0).numpy(), np.asarray(
        jnp.asarray(M).at[2, 1].add(7.0)))


def test_lazy_index_in_compile_follows_the_index() -> None:
    f = pf.compile(lambda x, i: x.at[i].set(0.0))
    for k in (0, 3, 1):
        expect = M.copy()
        expect[k] = 0
        np.testing.assert_array_equal(f(pf.tensor(M), pf.tensor(k)).numpy(), expect)


def test_mapped_index_multiply_raises_clearly() -> None:
    with pytest.raises(ConcretizationError, match="mapped argument"):
        pf.vmap(lambda x, i: x.at[i].multiply(2.0))(pf.tensor(M), pf.tensor(ROWS))


@pytest.mark.parametrize("index", [lambda i: i, lambda i: (slice(None), i),
                                   lambda i: (i, slice(1, 3))])
def test_compiled_indexing_by_an_argument_follows_it(index) -> None:
    """A realized index tensor passed as an argument was read on the host
    and baked into the program: the replays returned the first call's rows."""
    f = pf.compile(lambda x, i: x[index(i)] * 2)
    for k in ([0, 2], [2, 1], 1, 2, 0):
        i = np.array(k)
        np.testing.assert_array_equal(f(pf.tensor(M), pf.tensor(i)).numpy(),
                                      M[index(i)] * 2)
