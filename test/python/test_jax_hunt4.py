"""Session 14's JAX user hunt: what JAX programs did that pf got wrong or
refused, against jax (each fails before its fix)."""

from __future__ import annotations

import numpy as np
import pytest

import pyflame_mlir as pf

jax = pytest.importorskip("jax", reason="jax (the bench extra) is not installed")
jnp = pytest.importorskip("jax.numpy")
pnp = pf.numpy

RS = np.random.RandomState(0)
X = RS.randn(4, 5).astype(np.float32)


def _same(got: object, want: object, tol: float = 1e-5) -> None:
    g, w = np.asarray(got), np.asarray(want)
    assert (g.shape, g.dtype) == (w.shape, w.dtype)
    np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


def test_gammainc_gradient_in_x_under_transforms() -> None:
    # pf.grad gave zeros (the host-evaluated value was a constant leaf)
    a = np.array([1.5, 2.0], np.float32)
    x = np.array([1.0, 3.0], np.float32)
    for name in ("gammainc", "gammaincc"):
        want = jax.grad(lambda t, n=name: getattr(jax.scipy.special, n)(a, t * 2).sum())(x)
        got = pf.grad(lambda t, n=name: getattr(pf.scipy.special, n)(
            pnp.asarray(a), t * 2).sum())(pnp.asarray(x))
        _same(got, want)
    with pytest.raises(RuntimeError, match="derivative"):  # (in a: not implemented, not 0)
        pf.grad(lambda t: pf.scipy.special.gammainc(t, pnp.asarray(x)).sum())(pnp.asarray(a))


@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize("ddof", [0, 1])
def test_var_std_where_match_jax(name: str, ddof: int) -> None:
    m = X > -0.5
    _same(getattr(pnp, name)(X, axis=1, where=m, ddof=ddof),
          getattr(jnp, name)(X, axis=1, where=m, ddof=ddof))
    _same(getattr(pnp, name)(X, where=m, keepdims=True),
          getattr(jnp, name)(X, where=m, keepdims=True))
    _same(pf.grad(lambda t: getattr(pnp, name)(t, axis=0, where=m).sum())(pnp.asarray(X)),
          jax.grad(lambda t: getattr(jnp, name)(t, axis=0, where=m).sum())(X))


@pytest.mark.parametrize("name", ["any", "all"])
def test_any_all_where_and_axes_match_jax(name: str) -> None:
    for kw in ({"axis": 0, "where": X < 1}, {"axis": (0, 1), "keepdims": True}, {}):
        _same(getattr(pnp, name)(X > 0, **kw), getattr(jnp, name)(X > 0, **kw))
    _same(getattr(pnp, name)(X, axis=1), getattr(jnp, name)(X, axis=1))


def test_einsum_keywords_match_jax() -> None:
    a, b, c = RS.randn(3, 4), RS.randn(4, 5), RS.randn(5, 2)
    a, b, c = (v.astype(np.float32) for v in (a, b, c))
    _same(pnp.einsum("ij,jk,kl->il", a, b, c, optimize="optimal"),
          jnp.einsum("ij,jk,kl->il", a, b, c, optimize="optimal"))
    i8 = np.arange(3, dtype=np.int8) * 50
    _same(pnp.einsum("i,i->", pnp.asarray(i8), pnp.asarray(i8),
                     preferred_element_type=pnp.int32),
          jnp.einsum("i,i->", i8, i8, preferred_element_type=jnp.int32))


def test_nn_logsumexp_where_matches_jax() -> None:
    m = X > 0
    m[0] = False  # a row with nothing marked: -inf
    _same(pf.nn.logsumexp(pnp.asarray(X), axis=1, where=m),
          jax.nn.logsumexp(X, axis=1, where=m))
    _same(pf.nn.logsumexp(pnp.asarray(X), axis=1, b=np.abs(X), where=m),
          jax.nn.logsumexp(X, axis=1, b=np.abs(X), where=m))


def test_scan_cond_switch_return_arrays_for_python_numbers() -> None:
    # the carry/result came back as float64 (or a Python float), JAX's is float32
    _same(pf.lax.scan(lambda c, _: (c * 2, c), 1.0, None, length=4)[0],
          jax.lax.scan(lambda c, _: (c * 2, c), 1.0, None, length=4)[0])
    _same(pf.lax.scan(lambda c, _: (c * 2, c), 1.0, None, length=4)[1],
          jax.lax.scan(lambda c, _: (c * 2, c), 1.0, None, length=4)[1])
    _same(pf.lax.cond(True, lambda a, b: a + b, lambda a, b: a - b, 1.0, 2.0),
          jax.lax.cond(True, lambda a, b: a + b, lambda a, b: a - b, 1.0, 2.0))
    _same(pf.lax.switch(1, [lambda a: a, lambda a: a * 3], 2),
          jax.lax.switch(1, [lambda a: a, lambda a: a * 3], 2))


@pytest.mark.parametrize("fill", [None, 9, (7, 8)])
def test_nonzero_with_size_matches_jax(fill: object) -> None:
    for size in (3, 6, 25):
        for got, want in zip(pnp.nonzero(X > 0.5, size=size, fill_value=fill),
                             jnp.nonzero(X > 0.5, size=size, fill_value=fill)):
            _same(got, want)
    if fill is None or isinstance(fill, int):
        _same(pnp.where(X > 0, size=4, fill_value=fill)[1],
              jnp.where(X > 0, size=4, fill_value=fill)[1])
        _same(pnp.flatnonzero(X > 1, size=4, fill_value=fill),
              jnp.flatnonzero(X > 1, size=4, fill_value=fill))
    _same(pnp.argwhere(X > 1, size=4, fill_value=fill), jnp.argwhere(X > 1, size=4,
                                                                      fill_value=fill))


def test_nonzero_with_size_under_vmap_and_compile() -> None:
    want = jax.vmap(lambda r: jnp.nonzero(r > 0, size=3, fill_value=-1)[0])(X)
    _same(pf.vmap(lambda r: pnp.nonzero(r > 0, size=3, fill_value=-1)[0])(pnp.asarray(X)), want)
    f = pf.compile(lambda r: pnp.nonzero(r > 0, size=3)[0])
    for k in range(3):
        _same(f(pnp.asarray(X[k])), jnp.nonzero(X[k] > 0, size=3)[0])


def test_checkpoint_policies() -> None:
    def loss(x: object, m: object) -> object:
        return (m.sin(x @ x.T)).sum()
    want = jax.grad(jax.checkpoint(lambda x: loss(x, jnp),
                                   policy=jax.checkpoint_policies.nothing_saveable))(X)
    for name in ("nothing_saveable", "everything_saveable", "dots_saveable",
                 "dots_with_no_batch_dims_saveable"):
        got = pf.grad(pf.checkpoint(lambda x: loss(x, pnp), policy=getattr(
            pf.checkpoint_policies, name)))(pnp.asarray(X))
        _same(got, want)
    keep = pf.checkpoint_policies.save_only_these_names("h")
    assert keep("name", name="h") and not keep("name", name="g")
    assert pf.checkpoint_policies.save_from_both_policies(
        pf.checkpoint_policies.nothing_saveable, pf.checkpoint_policies.dots_saveable)(
        "dot_general", dimension_numbers=(((1,), (0,)), ((), ())))


def _mlp_program(jax_: object, jnp_: object, nn_: object, lax_: object) -> tuple:
    """A hand-written Flax-style MLP (init/apply on nested dicts: LayerNorm,
    gelu, dropout by bernoulli of a folded key), as a JAX user writes it."""
    def init(key: object, sizes: list[int]) -> dict:
        layers = []
        for k, (a, b) in zip(jax_.random.split(key, len(sizes) - 1), zip(sizes, sizes[1:])):
            wk, _ = jax_.random.split(k)
            layers.append({"w": nn_.initializers.lecun_normal()(wk, (a, b)),
                           "b": jnp_.zeros((b,)),
                           "ln": {"scale": jnp_.ones((b,)), "bias": jnp_.zeros((b,))}})
        return {"layers": layers, "temp": jnp_.asarray(1.0)}

    def apply(params: dict, x: object, key: object) -> object:
        for i, p in enumerate(params["layers"]):
            x = x @ p["w"] + p["b"]
            if i < len(params["layers"]) - 1:
                mu, var = x.mean(-1, keepdims=True), jnp_.var(x, -1, keepdims=True)
                x = (x - mu) * lax_.rsqrt(var + 1e-6) * p["ln"]["scale"] + p["ln"]["bias"]
                keep = jax_.random.bernoulli(jax_.random.fold_in(key, i), 0.9, x.shape)
                x = jnp_.where(keep, nn_.gelu(x) / 0.9, 0.0)
        return x / params["temp"]

    def loss(params: dict, x: object, y: object, key: object) -> object:
        logp = nn_.log_softmax(apply(params, x, key))
        return -jnp_.mean(jnp_.take_along_axis(logp, y[:, None], axis=1))
    return init, loss


def test_flax_style_training_with_an_optax_chain_matches_jax() -> None:
    optax = pytest.importorskip("optax")
    x = RS.randn(16, 8).astype(np.float32)
    y = RS.randint(0, 3, 16).astype(np.int32)
    init, loss = _mlp_program(jax, jnp, jax.nn, jax.lax)
    params = init(jax.random.PRNGKey(0), [8, 16, 16, 3])
    opt = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(1e-2, weight_decay=1e-3))
    state = opt.init(params)
    want = []
    for i in range(3):
        value, g = jax.value_and_grad(loss)(params, x, y, jax.random.fold_in(
            jax.random.PRNGKey(1), i))
        upd, state = opt.update(g, state, params)
        params = optax.apply_updates(params, upd)
        want.append(float(value))
    # the same chain written by hand on pf's pytrees, in one compiled step
    init, loss = _mlp_program(pf, pnp, pf.nn, pf.lax)
    tm = pf.tree_util.tree_map
    pp = init(pf.random.PRNGKey(0), [8, 16, 16, 3])
    mu, nu = tm(pnp.zeros_like, pp), tm(pnp.zeros_like, pp)

    @pf.compile
    def step(pp: dict, mu: dict, nu: dict, i: int) -> tuple:
        value, g = pf.value_and_grad(loss)(pp, pnp.asarray(x), pnp.asarray(y),
                                           pf.random.fold_in(pf.random.PRNGKey(1), i))
        norm = pnp.sqrt(sum(pnp.sum(v ** 2) for v in pf.tree_util.tree_leaves(g)))
        g = tm(lambda v: pnp.where(norm < 1.0, v, v / norm), g)
        mu = tm(lambda m, v: 0.9 * m + 0.1 * v, mu, g)
        nu = tm(lambda s, v: 0.999 * s + 0.001 * v * v, nu, g)
        c = i + 1
        pp = tm(lambda p, m, s: p - 1e-2 * ((m / (1 - 0.9 ** c)) / (
            pnp.sqrt(s / (1 - 0.999 ** c)) + 1e-8) + 1e-3 * p), pp, mu, nu)
        return pp, mu, nu, value
    got = []
    for i in range(3):
        pp, mu, nu, value = step(pp, mu, nu, i)
        got.append(float(value))
    np.testing.assert_allclose(got, want, rtol=1e-5)
    for a, b in zip(pf.tree_util.tree_leaves(pp), jax.tree_util.tree_leaves(params)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-4, atol=2e-5)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "maximum", "minimum",
                                  "power", "floor_divide", "remainder"])
def test_bool_array_with_python_int_is_jax_int(name: str) -> None:
    # int64 before (torch's promotion); subtract raised
    _same(getattr(pnp, name)(pnp.ones(3, pnp.bool_), 1), getattr(jnp, name)(
        jnp.ones(3, bool), 1))


def test_python_ints_out_of_int32_range_raise_as_jax() -> None:
    # they wrapped to -2**31 silently
    for f in (lambda m: m.asarray(2**31), lambda m: m.asarray([1, 2**31]),
              lambda m: m.add(m.ones(2, m.int8), 2**31)):
        with pytest.raises(OverflowError):
            f(jnp)
        with pytest.raises(OverflowError, match="too large"):
            f(pnp)
    _same(pnp.asarray(-2**31), jnp.asarray(-2**31))


@pytest.mark.parametrize("name", ["int8", "int16", "int32", "uint8"])
def test_float_to_int_conversion_saturates_as_xla(name: str) -> None:
    # torch's/numpy's cast wrapped: 176.4 as int8 was -80 (JAX's 127)
    v = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 300.7, -129.5, 12.9, -12.9], np.float32)
    want = jnp.asarray(v).astype(getattr(jnp, name))
    _same(pnp.astype(pnp.asarray(v), getattr(pnp, name)), want)
    _same(pnp.asarray(pnp.asarray(v), dtype=getattr(pnp, name)), want)
    _same(pf.lax.convert_element_type(pnp.asarray(v), getattr(pnp, name)),
          jax.lax.convert_element_type(v, getattr(jnp, name)))


def test_lax_rounding_method() -> None:
    v = np.array([0.5, 1.5, -2.5, 2.4], np.float32)
    for method in (pf.lax.RoundingMethod.AWAY_FROM_ZERO, pf.lax.RoundingMethod.TO_NEAREST_EVEN):
        _same(pf.lax.round(pnp.asarray(v), method), jax.lax.round(v, int(method)))


@pytest.mark.parametrize("case", ["plain", "causal", "mask_causal_bias", "gqa", "unbatched",
                                  "bf16", "masked_row"])
def test_dot_product_attention_matches_jax(case: str) -> None:
    rs = np.random.RandomState(1)
    b, t, s, n, k, h = 2, 5, 6, 4, (2 if case == "gqa" else 4), 8
    q = rs.randn(b, t, n, h).astype(np.float32)
    kv = [rs.randn(b, s, k, h).astype(np.float32) for _ in range(2)]
    kw: dict = {}
    if case in ("causal", "mask_causal_bias"):
        kw["is_causal"] = True
    if case == "mask_causal_bias":
        kw["mask"] = rs.rand(b, 1, t, s) > 0.3
        kw["bias"] = rs.randn(1, n, t, s).astype(np.float32)
        kw["scale"] = 0.3
    if case == "masked_row":
        m = np.ones((b, n, t, s), bool)
        m[:, :, 2] = False  # a query that sees nothing: JAX's average of the values
        kw["mask"] = m
    args = [q, *kv]
    if case == "unbatched":
        args = [a[0] for a in args]
    if case == "bf16":
        args = [jnp.asarray(a, jnp.bfloat16) for a in args]
    want = jax.nn.dot_product_attention(*args, **kw)
    got = pf.nn.dot_product_attention(*[pnp.asarray(np.asarray(a)) for a in args], **kw)
    tol = 2e-2 if case == "bf16" else 1e-5
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_allclose(np.asarray(got).astype(np.float32),
                               np.asarray(want).astype(np.float32), rtol=tol, atol=tol)
    if case in ("causal", "gqa"):
        gw = jax.grad(lambda a: jax.nn.dot_product_attention(a, *args[1:], **kw).sum())(args[0])
        gp = pf.grad(lambda a: pf.nn.dot_product_attention(
            a, *[pnp.asarray(x) for x in args[1:]], **kw).sum())(pnp.asarray(args[0]))
        np.testing.assert_allclose(np.asarray(gp), np.asarray(gw), rtol=1e-4, atol=1e-5)


def test_array_type_and_jnp_dtype() -> None:
    assert isinstance(pnp.ones(2), pf.Array) and isinstance(jnp.ones(2), jax.Array)
    assert np.dtype(pnp.dtype("bfloat16")) == jnp.dtype("bfloat16")
    assert pnp.dtype(pnp.int8) == pnp.int8 and np.dtype(pnp.dtype(pnp.int8)) == np.int8
    assert pnp.ones(2).dtype == jnp.dtype("float32") and jnp.dtype("float32") == pnp.ones(2).dtype
    assert pnp.zeros(2, pnp.dtype("int16")).dtype == pnp.int16
