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
    # (csl: JAX's index arithmetic is on int32, which it only moves; max: 40 s a program)
    return ["reference", "mlir"]


def _check_values_and_grad(fn: Any, x: np.ndarray, *rest: np.ndarray, rtol: float = 1e-6,
                           atol: float = 0.0, backends: list[str] | None = None) -> None:
    """Values on two backends, and pf.grad of sum(w * f(x, ...)) in x vs jax.grad."""
    f = _load(fn, x, *rest)
    want = np.asarray(fn(jnp.asarray(x), *rest))
    w = np.random.default_rng(1).uniform(0.5, 1.5, want.shape).astype(want.dtype)
    wg = np.asarray(jax.grad(lambda a: jnp.sum(w * fn(a, *rest)))(x))
    for name in backends or _backends():
        with pf.backend(name):
            np.testing.assert_allclose(f(x, *rest).numpy(), want, rtol=rtol, atol=atol,
                                       err_msg=name)
            got = pf.grad(lambda a: pf.sum(f(a, *map(pf.tensor, rest)) * w))(pf.tensor(x))
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
        "min": lambda x, i: x.at[i % 5].min(u / 4),
        "multiply_unique": lambda x, i: x.at[1].multiply(3.0),
        "vmapped_set": lambda x, i: jax.vmap(lambda r, k: r.at[k].set(r[0] * 2))(x, i % 3),
        "vmapped_add": lambda x, i: jax.vmap(lambda r, k: r.at[k].add(r[1]))(x, i),
    }[case]
    text = jax.jit(fn, keep_unused=True).lower(_X, i).as_text()
    assert "stablehlo.scatter" in text
    _check_values_and_grad(fn, _X, i)
    if case == "set_negative_zero":
        assert np.signbit(_load(fn, _X, i)(np.ones_like(_X), i).numpy()[2, 1])


def test_scatters_of_max_and_min_propagate_nan_and_take_integers() -> None:
    x = np.array([1.0, 2.0, 3.0], np.float32)
    for fn in (lambda x: x.at[np.array([0, 0, 1])].max(np.array([np.nan, 9, -3], np.float32)),
               lambda x: x.at[np.array([2, 2, 1])].min(np.array([-5, np.nan, 7], np.float32))):
        np.testing.assert_array_equal(_load(fn, x)(x).numpy(), np.asarray(fn(jnp.asarray(x))))
    x = np.array([1, 2, 3], np.int32)
    for fn in (lambda x: x.at[np.array([0, 0, 1])].max(np.array([5, 9, -3], np.int32)),
               lambda x: x.at[np.array([0, 0, 2])].min(
                   np.array([-2147483648, 9, -3], np.int32))):
        np.testing.assert_array_equal(_load(fn, x)(x).numpy(), np.asarray(fn(jnp.asarray(x))))


_SPECIAL = {  # each printed a chlo (or stablehlo.cbrt) op load_mlir refused
    "gelu_exact": lambda x: jax.nn.gelu(x, approximate=False),  # chlo.erfc
    "erfc": lambda x: jax.scipy.special.erfc(x), "sinh": jnp.sinh, "cosh": jnp.cosh,
    "asinh": jnp.arcsinh, "atanh": lambda x: jnp.arctanh(x / 20),
    "acosh": lambda x: jnp.arccosh(1.5 + jnp.abs(x)), "tan": lambda x: jnp.tan(x / 4),
    "lgamma": lambda x: jax.lax.lgamma(x + 3), "digamma": lambda x: jax.lax.digamma(x + 3),
    "erf_inv": lambda x: jax.lax.erf_inv(x / 13), "cbrt": jnp.cbrt,
}


@pytest.mark.parametrize("case", sorted(_SPECIAL))
def test_chlo_special_functions_run_as_the_library_computes_them(case: str) -> None:
    fn = _SPECIAL[case]
    x = np.array([-2.5, -0.7, -1e-3, 1e-4, 0.3, 0.9, 2.0, 9.0], np.float32)
    text = jax.jit(fn).lower(x).as_text()
    assert "chlo." in text or "stablehlo.cbrt" in text or case == "tan"  # (stablehlo.tan)
    # relative accuracy of small results kept (sinh(1e-4), erfc(9) = 4e-37); pf's
    # lgamma/digamma are float32-accurate to 1e-5, cosh's gradient at 1e-4 to 1e-8
    rtol, atol = 1e-5 if case in ("lgamma", "digamma") else 2e-6, 1e-7 if case == "cosh" else 0
    _check_values_and_grad(fn, x, rtol=rtol, atol=atol, backends=["reference"])
    # the mlir backend's log1p/expm1 lose small results' relative accuracy: away from 0
    _check_values_and_grad(fn, x[np.abs(x) > 0.1], rtol=rtol, atol=atol, backends=["mlir"])
    f = pf.load_mlir(text)
    assert isinstance(f(x), pf.Tensor)  # arrays alone run by recording too
    if case != "tan":  # (jnp.tan prints stablehlo.tan: sin / cos, compiled)
        with pytest.raises(pf.MlirLoadError, match="has no compiled form: (chlo|stablehlo)"):
            f.executable()


def test_chlo_composites_on_integers_are_located_errors() -> None:
    text = ("func.func public @main(%x: tensor<3xi32>) -> tensor<3xi32> {\n"
            "  %r = chlo.sinh %x : tensor<3xi32> -> tensor<3xi32>\n"
            "  return %r : tensor<3xi32>\n}\n")
    with pytest.raises(pf.MlirLoadError, match="^<string>:2:3: error: 'chlo.sinh' is supported "
                       "on one floating-point tensor"):
        pf.load_mlir(text)


@pytest.mark.parametrize("index", [-3, 0, 1, 2, 7])  # out of range: the last branch
def test_lax_switch_prints_stablehlo_case_which_runs_as_jax(index: int) -> None:
    def fn(x, i):
        return jax.lax.switch(i, [jnp.sin, jnp.cos, lambda v: v * jnp.tanh(v)], x)

    x = np.array([0.3, -1.2, 2.0], np.float32)
    assert '"stablehlo.case"' in jax.jit(fn).lower(x, np.int32(index)).as_text()
    _check_values_and_grad(fn, x, np.int32(index))


def test_lax_cond_runs_both_ways() -> None:
    def fn(x, p):
        return jax.lax.cond(p > 0, jnp.sin, lambda v: jnp.exp(v) * 2, x)

    x = np.array([0.3, -1.2, 2.0], np.float32)
    for p in (np.float32(-1), np.float32(1)):
        _check_values_and_grad(fn, x, p)


def _transformer_block(x, wq, wk, wv, wo, w1, w2):
    def norm(v):
        m = v.mean(-1, keepdims=True)
        return (v - m) * jax.lax.rsqrt(((v - m) ** 2).mean(-1, keepdims=True) + 1e-5)

    h = norm(x)
    q, k, v = h @ wq, h @ wk, h @ wv
    att = jax.nn.softmax(q @ k.T / np.sqrt(q.shape[-1]) + jnp.triu(jnp.full((4, 4), -1e9), 1))
    x = x + att @ v @ wo
    return x + jax.nn.gelu(norm(x) @ w1, approximate=False) @ w2


def _adam(params, grads, m, v, t):
    # the step count and the last update's norm kept in a bookkeeping vector (.at[].set)
    b1, b2, t = 0.9, 0.999, jnp.asarray(t)
    m = b1 * m + (1 - b1) * grads
    v = b2 * v + (1 - b2) * grads ** 2
    step = t[0] + 1
    mh, vh = m / (1 - b1 ** step), v / (1 - b2 ** step)
    upd = 1e-2 * mh / (jnp.sqrt(vh) + 1e-8)
    t = t.at[0].set(step).at[1].set(jnp.sqrt((upd ** 2).sum()))
    return (params - upd).sum() + t.sum() + m.sum() * 0.5 + v.sum()


def test_whole_jax_programs_run_with_gradients_matching_jax() -> None:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    ws = [(rng.standard_normal(s) * 0.3).astype(np.float32)
          for s in [(8, 8), (8, 8), (8, 8), (8, 8), (8, 16), (16, 8)]]
    text = jax.jit(_transformer_block).lower(x, *ws).as_text()
    assert "chlo.erfc" in text
    _check_values_and_grad(lambda a, *w: _transformer_block(a, *w), x, *ws, rtol=2e-5,
                           atol=2e-6)
    p, g = rng.standard_normal((2, 5)).astype(np.float32)
    m, v = rng.standard_normal(5).astype(np.float32), rng.uniform(0, 1, 5).astype(np.float32)
    t = np.array([3.0, 0.0], np.float32)
    assert '"stablehlo.scatter"' in jax.jit(_adam).lower(p, g, m, v, t).as_text()
    _check_values_and_grad(lambda gr, pa, mm, vv, tt: _adam(pa, gr, mm, vv, tt), g, p, m, v, t,
                           rtol=2e-5, atol=1e-6)


_POOLS = {  # each was "'stablehlo.reduce_window' other than a cumulative ..."
    "max_same": lambda x: jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 3, 3, 1),
                                                (1, 2, 2, 1), "SAME"),
    "avg_valid": lambda x: jax.lax.reduce_window(x, 0.0, jax.lax.add, (1, 2, 2, 1),
                                                 (1, 2, 2, 1), "VALID") / 4,
    "base_dilated_sum": lambda x: jax.lax.reduce_window(
        x, 0.0, jax.lax.add, (1, 2, 2, 1), (1, 1, 1, 1), "VALID", base_dilation=(1, 2, 1, 1)),
    "window_dilated_max": lambda x: jax.lax.reduce_window(
        x, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 1, 1, 1), ((0, 0), (1, 2), (0, 1), (0, 0)),
        window_dilation=(1, 2, 1, 1)),
    "min_from_a_non_identity": lambda x: jax.lax.reduce_window(
        x, 0.5, jax.lax.min, (1, 2, 3, 1), (1, 1, 1, 1), "SAME"),
}


@pytest.mark.parametrize("case", sorted(_POOLS))
def test_pooling_reduce_windows_match_jax(case: str) -> None:
    fn = _POOLS[case]
    x = np.random.default_rng(2).standard_normal((2, 7, 6, 3)).astype(np.float32)
    if case in ("window_dilated_max", "min_from_a_non_identity"):  # (jax.grad refuses them)
        f = _load(fn, x)
        for name in _backends():
            with pf.backend(name):
                np.testing.assert_array_equal(f(x).numpy(), np.asarray(fn(x)), err_msg=name)
        return
    _check_values_and_grad(fn, x, rtol=1e-6, atol=1e-6)
