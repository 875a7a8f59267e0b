"""StableHLO as JAX 0.10 prints it, round 2: the ops real programs print that
``pf.load_mlir`` used to refuse (``.at[].set/min/max``, vmapped ``.at[]``, the
CHLO special functions), each against jax's values and ``jax.grad``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import pyflame_mlir as pf

jax = pytest.importorskip("jax")
jnp = jax.numpy


def _load(fn: Any, *args: np.ndarray) -> Any:
    return pf.load_mlir(jax.jit(fn, keep_unused=True).lower(*args).as_text())


def _backends() -> list[str]:
    names = [n for n, b in pf.BACKENDS.items() if b.available() is None]
    assert "reference" in names and "mlir" in names
    return ["reference", "mlir"]  # (csl: JAX's index arithmetic is on int32, which it moves only)


def _check_values_and_grad(fn: Any, x: np.ndarray, *rest: np.ndarray, rtol: float = 1e-6,
                           atol: float = 0.0) -> None:
    """Values on two backends, and pf.grad of sum(sin(f(x, ...))) in x vs jax.grad."""
    f = _load(fn, x, *rest)
    want = np.asarray(fn(jnp.asarray(x), *rest))
    wg = np.asarray(jax.grad(lambda a: jnp.sum(jnp.sin(fn(a, *rest))))(x))
    for name in _backends():
        with pf.backend(name):
            np.testing.assert_allclose(f(x, *rest).numpy(), want, rtol=rtol, atol=atol,
                                       err_msg=name)
            got = pf.grad(lambda a: pf.sum(pf.sin(f(a, *map(pf.tensor, rest)))))(pf.tensor(x))
            np.testing.assert_allclose(got.numpy(), wg, rtol=rtol, atol=atol, err_msg=name)


_X = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)


@pytest.mark.parametrize("case", ["set_rows", "set_repeated", "set_negative_zero", "max",
                                  "min", "multiply_unique", "vmapped_set", "vmapped_add"])
def test_jax_scatters_match_jax_and_jax_grad(case: str) -> None:
    # each printed a stablehlo.scatter load_mlir refused ("not an add")
    i = np.array([1, 3, 1, -1, 9], np.int32)  # repeated, negative (wrapped), out of range
    u = np.arange(15, dtype=np.float32).reshape(5, 3) - 7
    fn = {
        "set_rows": lambda x, i: x.at[i[:2]].set(u[:2]),
        "set_repeated": lambda x, i: x.at[i].set(u * x[0]),  # the last of a slot wins
        "set_negative_zero": lambda x, i: x.at[2, 1].set(-0.0) * x,
        "max": lambda x, i: x.at[i].max(u / 4),
        "min": lambda x, i: x.at[i % 5].min(jnp.where(u > 5, jnp.nan, u / 4)),
        "multiply_unique": lambda x, i: x.at[1].multiply(3.0),
        "vmapped_set": lambda x, i: jax.vmap(lambda r, k: r.at[k].set(r[0] * 2))(x, i % 3),
        "vmapped_add": lambda x, i: jax.vmap(lambda r, k: r.at[k].add(r[1]))(x, i),
    }[case]
    text = jax.jit(fn, keep_unused=True).lower(_X, i).as_text()
    assert "stablehlo.scatter" in text
    _check_values_and_grad(fn, _X, i)
    if case == "set_negative_zero":
        assert np.signbit(_load(fn, _X, i)(np.ones_like(_X), i).numpy()[2, 1])


def test_integer_scatters_of_max_and_min_match_jax() -> None:
    x = np.array([1, 2, 3], np.int32)
    for fn in (lambda x: x.at[np.array([0, 0, 1])].max(np.array([5, 9, -3], np.int32)),
               lambda x: x.at[np.array([0, 0, 2])].min(
                   np.array([-2147483648, 9, -3], np.int32))):
        np.testing.assert_array_equal(_load(fn, x)(x).numpy(), np.asarray(fn(jnp.asarray(x))))
