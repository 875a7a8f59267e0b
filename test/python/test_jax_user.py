"""Programs as JAX's tutorials write them, against jax itself: pf.compile
(``jax.jit``: static_argnames, values looked at inside a compiled function),
``pf.jit``, ``lax.cond``/``switch`` under ``vmap``, ``pf.tree_util`` /
``pf.tree`` (key paths, Partial, register_pytree_node_class, ...)."""

from __future__ import annotations

import collections
import dataclasses
from functools import partial

import numpy as np
import pytest

import pyflame_mlir as pf
from pyflame_mlir import tree_util as ptu

jax = pytest.importorskip("jax", reason="jax (the [bench] extra) is the oracle here")
jnp = pytest.importorskip("jax.numpy")
jtu = jax.tree_util

X = np.linspace(-1.0, 1.0, 5).astype(np.float32)


def close(a: pf.Tensor, b: object, tol: float = 1e-5) -> None:
    b = np.asarray(b)
    a = np.asarray(a.numpy())
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


# ---- pf.compile replays only what it may: a value f looks at ----

@pytest.mark.parametrize("body", ["cond", "while", "item", "if_arg"])
def test_compile_never_replays_a_value_looked_at(body: str) -> None:
    def make(lib, lax, concrete):
        def f(a):
            if body == "cond":
                return lax.cond(a.sum() > 0, lambda b: b * 2, lambda b: b * 3, a)
            if body == "while":
                return lax.while_loop(lambda v: v.sum() < 10, lambda v: v * 2, a)
            if body == "item":  # Python control flow on a value: jax.jit raises here
                return a * 2 if concrete(a.sum()) > 0 else a * 3
            return lax.fori_loop(0, a[0].astype(lib.int32) if lib is jnp else
                                 a[0].to(pf.int32), lambda i, v: v * 2, a)
        return f

    fp = pf.compile(make(pf, pf.lax, lambda t: t.item()))
    oracle = make(jnp, jax.lax, float)  # eager jax: the values
    for data in (X, X + 1, X + 3, X - 2, X + 3):
        if body == "if_arg":
            data = np.abs(data).round() + 1
        elif body == "while":  # a positive sum: the loop ends
            data = np.abs(data) + 0.25
        close(fp(pf.tensor(data)), oracle(data))
    stats = fp.stats()
    assert stats["hits"] == 0 and stats["python_calls"] == 5, stats
    assert "looks at a value" in stats["python_reasons"][0]


_ARG_READS = {
    "numpy": lambda n: n.numpy()[0],
    "asarray": lambda n: np.asarray(n)[0],
    "array": lambda n: np.array(n)[0],
    "tolist": lambda n: n.tolist()[0],
    "item": lambda n: n[0].item() if n.ndim else n.item(),
    "float": lambda n: float(n.reshape(-1)[0]) if n.ndim else float(n),
    "int": lambda n: int(n),
    "index": lambda n: [0.0, 1.0, 2.0, 3.0, 4.0, 5.0][n],
    "bool": lambda n: 1.0 if n else -1.0,
    "repr": lambda n: float(repr(n)[len("tensor("):-1]),
}


@pytest.mark.parametrize("path", sorted(_ARG_READS))
def test_compile_never_replays_an_argument_value_read(path: str) -> None:
    """Reading an ARGUMENT's value (no op computes it) is a value read too:
    the next call with other data must not replay the first call's value."""
    read = _ARG_READS[path]
    vector = path in ("numpy", "asarray", "array", "tolist")
    integer = path in ("int", "index", "bool")

    def f(x, n):
        return x * read(n)

    fp = pf.compile(f)
    for v in (2, 3, 5, 0, 3):
        data = np.array([v] if vector else v, dtype=np.int64 if integer else np.float32)
        expect = X * ((1.0 if v else -1.0) if path == "bool" else float(v))
        close(fp(pf.tensor(X), pf.tensor(data)), expect)
    stats = fp.stats()
    assert stats["hits"] == 0 and stats["python_calls"] == 5, stats
    assert "looks at a value" in stats["python_reasons"][0]


def test_compile_never_replays_a_captured_value_read() -> None:
    scale = pf.tensor(2.0)
    fp = pf.compile(lambda x: x * scale.item())
    close(fp(pf.tensor(X)), X * 2)
    scale.fill_(7.0)
    close(fp(pf.tensor(X)), X * 7)
    assert fp.stats()["hits"] == 0


def test_compile_still_replays_when_nothing_is_looked_at() -> None:
    fp = pf.compile(lambda a: pf.lax.fori_loop(0, 3, lambda i, v: pf.sin(v) * i, a))
    fj = jax.jit(lambda a: jax.lax.fori_loop(0, 3, lambda i, v: jnp.sin(v) * i, a))
    for k in range(3):
        close(fp(pf.tensor(X + k)), fj(X + k))
    assert fp.stats()["hits"] == 2


def test_static_argnames_and_donate_argnames_like_jax() -> None:
    def g(lib):
        def f(x, n, *, mode="a"):
            for _ in range(n):
                x = lib.sin(x)
            return x + (1.0 if mode == "a" else 2.0)
        return f

    fp = pf.compile(g(pf), static_argnames=("n", "mode"))
    fj = jax.jit(g(jnp), static_argnames=("n", "mode"))
    close(fp(pf.tensor(X), 2), fj(X, 2))
    close(fp(pf.tensor(X), n=3), fj(X, n=3))
    close(fp(pf.tensor(X), 3, mode="b"), fj(X, 3, mode="b"))
    close(fp(pf.tensor(X), 3, mode="b"), fj(X, 3, mode="b"))
    assert fp.stats()["hits"] == 1
    # static_argnums also names a parameter passed by keyword (JAX maps one to the other)
    close(pf.compile(g(pf), static_argnums=1)(pf.tensor(X), n=2), fj(X, n=2))
    with pytest.raises(ValueError, match="'q', which is not a parameter"):
        pf.compile(g(pf), static_argnames="q")
    update = pf.compile(lambda p, d: p - d, donate_argnames="p")
    p = pf.tensor(X)
    close(update(p=p, d=pf.tensor(X)), X * 0)
    with pytest.raises(RuntimeError, match="donated"):
        p.numpy()


def test_pf_jit_is_compile() -> None:
    @partial(pf.jit, static_argnums=1)
    def f(x, n):
        return x * n

    close(f(pf.tensor(X), 3), X * 3)
    close(pf.jit(lambda x: x + 1)(pf.tensor(X)), X + 1)
    assert isinstance(pf.jit(lambda x: x), pf.jit.Compiled)

    class Model:  # a compiled method: self is the first argument
        def __init__(self, scale: float):
            self.w = pf.tensor(np.full(5, scale, np.float32))

        @pf.jit
        def apply(self, a):
            return a * self.w

    m2, m3 = Model(2.0), Model(3.0)
    for _ in range(2):
        close(m2.apply(pf.tensor(X)), X * 2)
        close(m3.apply(pf.tensor(X)), X * 3)
    assert Model.apply.stats()["hits"] == 2


# ---- lax.cond / switch under vmap: select, as JAX batches them ----

def test_cond_and_switch_under_vmap_match_jax() -> None:
    def f(lax):
        return lambda a, w: lax.cond(a > 0, lambda b: (b * w, {"q": b ** 2}),
                                     lambda b: (b * 3 + w, {"q": -b}), a)

    rp = pf.vmap(f(pf.lax), in_axes=(0, None))(pf.tensor(X), pf.tensor(np.float32(2.0)))
    rj = jax.vmap(f(jax.lax), in_axes=(0, None))(X, np.float32(2.0))
    close(rp[0], rj[0])
    close(rp[1]["q"], rj[1]["q"])
    gp = pf.vmap(pf.grad(lambda a, w: f(pf.lax)(a, w)[0], argnums=1), in_axes=(0, None))
    gj = jax.vmap(jax.grad(lambda a, w: f(jax.lax)(a, w)[0], argnums=1), in_axes=(0, None))
    close(gp(pf.tensor(X), pf.tensor(np.float32(2.0))), gj(X, np.float32(2.0)))

    def s(lax):
        return lambda i, a: lax.switch(i, [lambda b: b, lambda b: b * 2, lambda b: b - 1], a)
    idx = np.array([-1, 0, 1, 2, 7], np.int32)
    close(pf.vmap(s(pf.lax))(pf.tensor(idx), pf.tensor(X)), jax.vmap(s(jax.lax))(idx, X))
    with pytest.raises(TypeError, match="same shapes"):
        pf.vmap(lambda a: pf.lax.cond(a > 0, lambda b: b, lambda b: b.reshape(1), a))(
            pf.tensor(X))
    close(pf.lax.select(pf.tensor(X) > 0, pf.tensor(X), pf.tensor(-X)),
          jax.lax.select(X > 0, X, -X))


# ---- tree_util: JAX's names and key paths ----

NT = collections.namedtuple("NT", "a b")


@dataclasses.dataclass
class _Data:
    w: object
    s: str = "x"


class _Custom:
    def __init__(self, v: object):
        self.v = v


ptu.register_dataclass(_Data, ["w"], ["s"])
jtu.register_dataclass(_Data, ["w"], ["s"])
for _reg in (ptu.register_pytree_node, jtu.register_pytree_node):
    _reg(_Custom, lambda c: ((c.v,), None), lambda _, ch: _Custom(*ch))


def test_key_paths_match_jax() -> None:
    tree = {"a": [1, (2, 3)], "n": NT(4, 5), "d": _Data(6), "c": _Custom(7), "z": None}
    mine, theirs = ptu.tree_flatten_with_path(tree)[0], jtu.tree_flatten_with_path(tree)[0]
    assert [(ptu.keystr(p), leaf) for p, leaf in mine] == \
        [(jtu.keystr(p), leaf) for p, leaf in theirs]
    assert [ptu.keystr(p, simple=True, separator="/") for p, _ in mine] == \
        [jtu.keystr(p, simple=True, separator="/") for p, _ in theirs]
    assert ptu.tree_map_with_path(lambda p, x, y: (ptu.keystr(p), x + y), [1, {"q": 2}],
                                  [10, {"q": 20}]) == \
        jtu.tree_map_with_path(lambda p, x, y: (jtu.keystr(p), x + y), [1, {"q": 2}],
                               [10, {"q": 20}])
    assert [ptu.keystr(p) for p, _ in ptu.tree_leaves_with_path(tree)] == \
        [jtu.keystr(p) for p, _ in jtu.tree_leaves_with_path(tree)]


def test_tree_functions_match_jax() -> None:
    add = lambda a, b: a + b  # noqa: E731
    assert ptu.tree_reduce(add, [1, (2, 3)]) == jtu.tree_reduce(add, [1, (2, 3)])
    assert ptu.tree_reduce(add, [], 5) == jtu.tree_reduce(add, [], 5)
    assert ptu.tree_all([True, (1, 0)]) == jtu.tree_all([True, (1, 0)])
    t = [{"a": 1, "b": 2}, {"a": 3, "b": 4}]
    assert ptu.tree_transpose(ptu.tree_structure([0, 0]), ptu.tree_structure({"a": 0, "b": 0}),
                              t) == \
        jtu.tree_transpose(jtu.tree_structure([0, 0]), jtu.tree_structure({"a": 0, "b": 0}), t)
    for xs in ([1, 2.0, None], [1, (2,)], [1, 2]):
        assert ptu.all_leaves(xs) == jtu.all_leaves(xs)
    for x in (None, 1, (1,)):
        assert ptu.treedef_is_leaf(ptu.tree_structure(x)) == \
            jtu.treedef_is_leaf(jtu.tree_structure(x))
    assert pf.tree.map(lambda a, b: a * b, {"a": 2, "b": (3,)}, {"a": 5, "b": (7,)}) == \
        jax.tree.map(lambda a, b: a * b, {"a": 2, "b": (3,)}, {"a": 5, "b": (7,)})
    assert pf.tree.leaves({"b": 1, "a": [2, None]}) == jax.tree.leaves({"b": 1, "a": [2, None]})


def test_partial_and_node_class_cross_transforms() -> None:
    fp = ptu.Partial(lambda a, b: a * b, pf.tensor(np.float32(2.0)))
    fj = jtu.Partial(lambda a, b: a * b, np.float32(2.0))
    assert len(ptu.tree_leaves(fp)) == len(jtu.tree_leaves(fj)) == 1
    close(pf.grad(lambda p, x: p(x))(fp, pf.tensor(np.float32(3.0))).args[0],
          jax.grad(lambda p, x: p(x))(fj, np.float32(3.0)).args[0])

    def box_class(register):
        @register
        class Box:
            def __init__(self, v, name):
                self.v, self.name = v, name

            def tree_flatten(self):
                return (self.v,), self.name

            @classmethod
            def tree_unflatten(cls, aux, children):
                return cls(children[0], aux)
        return Box

    bp, bj = box_class(ptu.register_pytree_node_class), box_class(jtu.register_pytree_node_class)
    gp = pf.grad(lambda b: (b.v ** 3).sum())(bp(pf.tensor(X), "n"))
    gj = jax.grad(lambda b: (b.v ** 3).sum())(bj(X, "n"))
    assert gp.name == gj.name == "n"
    close(gp.v, gj.v)
    gv = pf.vmap(lambda b: b.v * 2)(bp(pf.tensor(X), "n"))
    close(gv, jax.vmap(lambda b: b.v * 2)(bj(X, "n")))

    @ptu.register_static
    class Static:
        pass
    assert ptu.tree_leaves([Static(), 1]) == [1]


# ---- keyword arguments, axis_size alone, eval_shape, lower().as_text() ----

def test_keyword_arguments_of_grad_and_vmap_like_jax() -> None:
    def loss(lib):
        return lambda a, scale=1.0: (lib.sin(a) * scale).sum()
    close(pf.grad(loss(pf))(pf.tensor(X), scale=3.0), jax.grad(loss(jnp))(X, scale=3.0))
    vp, gp = pf.value_and_grad(loss(pf))(pf.tensor(X), scale=2.0)
    vj, gj = jax.value_and_grad(loss(jnp))(X, scale=2.0)
    close(vp, vj)
    close(gp, gj)
    m = np.arange(6, dtype=np.float32).reshape(2, 3)
    close(pf.vmap(lambda a, b=None: a * b, in_axes=(1,))(pf.tensor(m), b=pf.tensor(m.T)),
          jax.vmap(lambda a, b=None: a * b, in_axes=(1,))(m, b=m.T))
    close(pf.vmap(lambda: pf.ones(2) * 3.0, axis_size=4)(),
          jax.vmap(lambda: jnp.ones(2) * 3.0, axis_size=4)())
    close(pf.vmap(lambda w: w * 2, in_axes=None, axis_size=3, out_axes=1)(pf.tensor(m)),
          jax.vmap(lambda w: w * 2, in_axes=None, axis_size=3, out_axes=1)(m))


def test_eval_shape_and_lowered_text() -> None:
    def f(lib):
        return lambda a, b: {"m": a @ b, "s": (lib.sum(a), lib.tanh(b).T)}
    mine = pf.eval_shape(f(pf), pf.ShapeDtypeStruct((2, 3), pf.float32), pf.ones(3, 4))
    theirs = jax.eval_shape(f(jnp), jax.ShapeDtypeStruct((2, 3), jnp.float32),
                            jnp.ones((3, 4)))
    assert pf.tree.structure(mine) == pf.tree.structure(
        jax.tree.map(lambda _: 0, theirs))
    for a, b in zip(pf.tree.leaves(mine), jax.tree.leaves(theirs)):
        assert a.shape == b.shape and a.dtype.np == b.dtype
    text = pf.jit(lambda a: a * 2).lower(pf.tensor(X)).as_text()
    assert "pyflame.mul" in text and text.startswith("builtin.module")


# ---- vmap of a function whose values stop differentiation (stop_gradient,
# no_grad, custom_vjp/custom_jvp): each example's value, the custom rule ----

V = np.array([0.3, -1.2, 0.8, 2.0], np.float32)


def _custom_pair(lib, rule_lib):
    """f(x, y) = sin(x) y with a custom VJP that scales x's cotangent by 3
    (so a derivative through the forward ops would differ)."""
    @lib.custom_vjp
    def f(x, y):
        return rule_lib.sin(x) * y

    def fwd(x, y):
        return f(x, y), (rule_lib.cos(x), rule_lib.sin(x), y)

    def bwd(res, g):
        cos_x, sin_x, y = res
        return (3.0 * cos_x * g * y, sin_x * g)
    f.defvjp(fwd, bwd)
    return f


@pytest.mark.parametrize("case", ["stop_arg", "stop_inner", "stop_grad_outer",
                                  "custom_vjp", "custom_vjp_grad", "grad_of_vmap_custom",
                                  "custom_jvp"])
def test_vmap_of_stopped_and_custom_values_matches_jax(case: str) -> None:
    def program(J, L):
        x = L.asarray(V)
        if case == "stop_arg":
            return J.vmap(lambda v: J.lax.stop_gradient(v) * 2 + v)(x)
        if case == "stop_inner":
            return J.vmap(lambda v: J.lax.stop_gradient(L.sin(v)) * v)(x)
        if case == "stop_grad_outer":  # the stop holds through the outer gradient
            return J.grad(lambda a: L.sum(J.vmap(lambda v: J.lax.stop_gradient(v * v) * v)(a)))(x)
        f = _custom_pair(J, L)
        if case == "custom_vjp":
            return J.vmap(f)(x, x + 1)
        if case == "custom_vjp_grad":
            return J.vmap(J.grad(f, argnums=(0, 1)))(x, x + 1)
        if case == "grad_of_vmap_custom":
            return J.grad(lambda a: L.sum(J.vmap(f)(a, x)))(x)

        @J.custom_jvp
        def log1pexp(v):
            return L.log(1.0 + L.exp(v))

        @log1pexp.defjvp
        def _(primals, tangents):
            (v,), (t,) = primals, tangents
            return log1pexp(v), (1 - 1 / (1 + L.exp(v))) * t * 2.0  # scaled: the rule's
        return J.vmap(J.grad(log1pexp))(x), J.grad(lambda a: L.sum(J.vmap(log1pexp)(a)))(x)

    got = jax.tree_util.tree_leaves(program(jax, jnp))
    mine = ptu.tree_leaves(program(pf, pf))
    assert len(got) == len(mine)
    for m, g in zip(mine, got):
        close(m, g)


def test_vmap_of_no_grad_inside_matches_the_loop() -> None:
    def g(v):
        with pf.no_grad():
            y = v * 3
        return y + pf.sin(v)
    close(pf.vmap(g)(pf.tensor(V)), V * 3 + np.sin(V))


# ---- pf.jit under transforms: traced into (as jax.jit), never a stale replay ----

@pytest.mark.parametrize("case", ["vmap_jit", "grad_jit", "vmap_grad_jit", "jacrev_jit",
                                  "jit_jit", "vmap_jit_static"])
def test_jit_inside_transforms_matches_jax(case: str) -> None:
    def program(J, L, w):
        x = L.asarray(np.stack([X, X * 2, -X]))
        loss = J.jit(lambda v: L.sum(L.sin(v) ** 2))
        if case == "vmap_jit":
            return J.vmap(J.jit(lambda r, v: L.sum(L.sin(r) * v)), in_axes=(0, None))(x, w)
        if case == "grad_jit":  # the second and third calls once replayed without gradient
            return [J.grad(loss)(w + k) for k in range(3)]
        if case == "vmap_grad_jit":
            return J.vmap(J.grad(loss))(x)
        if case == "jacrev_jit":
            return J.jacrev(J.jit(lambda v: L.sin(v) * v))(w)
        if case == "jit_jit":
            inner = J.jit(lambda v: v * 2)
            return [J.jit(lambda v: inner(v) + 1)(w + k) for k in range(2)]
        return J.vmap(J.jit(lambda r, n: r * n, static_argnums=1), in_axes=(0, None))(x, 3)

    got = jax.tree_util.tree_leaves(program(jax, jnp, jnp.asarray(X)))
    mine = ptu.tree_leaves(program(pf, pf, pf.tensor(X)))
    assert len(got) == len(mine)
    for m, g in zip(mine, got):
        close(m, g)


def test_compiled_forward_keeps_autograd_for_backward_outside() -> None:
    """torch.compile's use: a compiled forward, backward outside. A replay has
    no autograd graph, so such a call runs f (a zero or missing gradient never)."""
    w = pf.tensor(X, requires_grad=True)
    f = pf.compile(lambda x: pf.sum(pf.sin(w * x) ** 2))
    for k in range(3):
        w.grad = None
        f(pf.tensor(X + k)).backward()
        close(w.grad, 2 * np.sin(X * (X + k)) * np.cos(X * (X + k)) * (X + k))
    assert f.stats()["hits"] == 0
    assert "live autograd graph" in f.stats()["python_reasons"][0]
    g = pf.compile(lambda x: pf.sum(x * x))
    with pf.no_grad():
        g(pf.tensor(X))
    a = pf.tensor(X, requires_grad=True)
    g(a).backward()  # traced under no_grad, called with grad on and a requiring grad
    close(a.grad, 2 * X)


# ---- loops on a mapped value under vmap: each example loops until it ends ----

@pytest.mark.parametrize("case", ["while", "while_grad", "fori_mapped_bound", "nested_vmap"])
def test_vmap_of_loops_on_mapped_values_matches_jax(case: str) -> None:
    data = np.abs(np.stack([X, X * 3, X / 4])) + 0.3

    def program(J, L):
        x = L.asarray(data)
        def grow(v):
            return J.lax.while_loop(lambda u: L.sum(u) < 20.0, lambda u: u * 1.5, v)
        if case == "while":
            return J.vmap(grow)(x)
        if case == "while_grad":  # per-example gradients through each trip count
            return J.vmap(J.grad(lambda v: L.sum(J.lax.fori_loop(
                0, 3, lambda i, u: L.sin(u) * u, v))))(x), J.vmap(grow, out_axes=1)(x)
        if case == "fori_mapped_bound":
            n = L.asarray(np.array([1, 4, 2]))
            return J.vmap(lambda v, k: J.lax.fori_loop(0, k, lambda i, u: u * 2 + i, v))(x, n)
        return J.vmap(J.vmap(lambda s: J.lax.while_loop(lambda u: u < 5.0,
                                                         lambda u: u * 2, s)))(x)

    got = jax.tree_util.tree_leaves(program(jax, jnp))
    mine = ptu.tree_leaves(program(pf, pf))
    assert len(got) == len(mine)
    for m, g in zip(mine, got):
        close(m, g)


def test_loop_bounds_and_switch_index_must_be_integers_as_in_jax() -> None:
    with pytest.raises(TypeError, match="bounds must be integers"):
        pf.lax.fori_loop(0, 3.0, lambda i, v: v + i, pf.tensor(X))
    with pytest.raises(TypeError, match="scalar integer"):
        pf.lax.switch(1.0, [lambda: pf.tensor(X), lambda: pf.tensor(X) * 2])


# ---- jax's top-level names: linearize, jacobian, device_put/get, block_until_ready ----

def test_linearize_jacobian_and_device_functions_match_jax() -> None:
    def f(x, y):
        return jnp.sin(x) * y if isinstance(x, jax.Array) else pf.sin(x) * y

    def f_aux(x):
        return (x * x, {"n": x.sum()})

    y_j, fj = jax.linearize(f, X, X + 1)
    y_p, fp = pf.linearize(f, pf.tensor(X), pf.tensor(X + 1))
    close(y_p, y_j)
    close(fp(pf.tensor(X * 0 + 1), pf.tensor(X)), fj(X * 0 + 1, X))
    out, fp2, aux = pf.linearize(f_aux, pf.tensor(X), has_aux=True)
    _, fj2, aux_j = jax.linearize(f_aux, X, has_aux=True)
    close(fp2(pf.tensor(X)), fj2(X))
    close(aux["n"], aux_j["n"])
    close(pf.jacobian(lambda v: pf.tanh(v) * v)(pf.tensor(X)),
          jax.jacobian(lambda v: jnp.tanh(v) * v)(X))
    got = pf.device_get({"a": pf.tensor(X) * 2, "b": 3})
    assert isinstance(got["a"], np.ndarray) and got["b"] == 3
    np.testing.assert_allclose(got["a"], np.asarray(jax.device_get(jnp.asarray(X) * 2)))
    put = pf.device_put((X, 1.5))
    assert isinstance(put[0], pf.Tensor) and put[0].shape == X.shape
    lazy = pf.tensor(X) + 1
    assert pf.block_until_ready(lazy) is lazy and not pf.is_lazy(lazy)
    with pytest.raises(NotImplementedError, match="pf.shard"):
        pf.device_put(pf.tensor(X), pf.NamedSharding(pf.DeviceMesh((1,), ("x",)), pf.P()))


def test_vmap_traces_a_stopping_function_once_and_a_custom_rule_per_example() -> None:
    """stop_gradient/no_grad values are batched by their own vmap (f traced
    once); a custom rule's output makes vmap run f per example (traced once,
    then once per example)."""
    calls = []

    def stopped(v):
        calls.append(1)
        with pf.no_grad():
            y = pf.sin(v) * 2
        return pf.lax.stop_gradient(v * v) * v + y

    x = pf.tensor(V)
    close(pf.vmap(stopped)(x), V ** 3 + np.sin(V) * 2)
    assert len(calls) == 1
    close(pf.grad(lambda a: pf.sum(pf.vmap(stopped)(a)))(x), V ** 2)
    f = _custom_pair(pf, pf)
    calls.clear()
    close(pf.vmap(lambda a: (calls.append(1), f(a, a))[1])(x), np.sin(V) * V)
    assert len(calls) == 1 + len(V)


def test_lower_compile_and_vmap_axis_name() -> None:
    f = pf.jit(lambda x: pf.sin(x) * 2)
    c = f.lower(pf.tensor(X)).compile()
    cj = jax.jit(lambda x: jnp.sin(x) * 2).lower(X).compile()
    for k in range(3):
        close(c(pf.tensor(X + k)), cj(X + k))
    assert f.stats()["hits"] == 3 and "func.func" in c.as_text()
    close(pf.vmap(lambda x: x, axis_name="batch")(pf.tensor(X)), X)  # (collectives:
    with pytest.raises(NotImplementedError, match="spmd_axis_name"):  # test_vmap_collectives)
        pf.vmap(lambda x: x, spmd_axis_name="batch")(pf.tensor(X))


# ---- a JAX tutorial program with pf as `jax` and `jnp` gives JAX's numbers ----

def _tutorial(jax, jnp):
    key = jax.random.PRNGKey(0)
    def init_mlp(key, sizes):
        keys = jax.random.split(key, len(sizes))
        return [{"w": jax.random.normal(k, (m, n)) * jnp.sqrt(2.0 / m), "b": jnp.zeros(n)}
                for k, m, n in zip(keys, sizes[:-1], sizes[1:])]
    params = init_mlp(key, [4, 16, 3])
    dk, xk, yk = jax.random.split(jax.random.PRNGKey(1), 3)
    x = jax.random.normal(xk, (32, 4))
    y = jax.random.randint(yk, (32,), 0, 3)
    def predict(params, x):
        for l in params[:-1]:
            x = jax.nn.relu(x @ l["w"] + l["b"])
        return x @ params[-1]["w"] + params[-1]["b"]
    def loss(params, x, y):
        logp = jax.nn.log_softmax(predict(params, x))
        return -jnp.mean(jnp.sum(logp * jax.nn.one_hot(y, 3), axis=-1))
    @jax.jit
    def update(params, x, y):
        l, g = jax.value_and_grad(loss)(params, x, y)
        return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, g), l
    losses = []
    for _ in range(10):
        params, l = update(params, x, y)
        losses.append(l)
    per_ex = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(params, x[:, None], y[:, None])
    # dropout with keys
    def dropout(key, h, rate):
        keep = jax.random.bernoulli(key, 1 - rate, h.shape)
        return jnp.where(keep, h / (1 - rate), 0.0)
    d = dropout(dk, predict(params, x), 0.5)
    # scan RNN
    def rnn(h, xt):
        h = jnp.tanh(h @ params[0]["w"][:, :4].T[:4, :4] + xt)
        return h, h.sum()
    hT, hs = jax.lax.scan(rnn, jnp.zeros(4), x[:5])
    perm = jax.random.permutation(dk, 10)
    return jnp.stack(losses), params, per_ex, d, hT, hs, perm


@pytest.mark.parametrize("as_jnp", ["pf", "pf.numpy"])
def test_jax_tutorial_program_with_pf_as_jax_gives_jax_results(as_jnp: str) -> None:
    """PRNG keys and draws, init, jit(value_and_grad) training, per-example
    gradients, dropout masks, a scan RNN, a permutation: all JAX's numbers
    (``jnp`` as pf itself or as pf.numpy, jax.numpy's semantics)."""
    want = jax.tree_util.tree_leaves(_tutorial(jax, jnp))
    got = ptu.tree_leaves(_tutorial(pf, pf if as_jnp == "pf" else pf.numpy))
    assert len(got) == len(want) == 13
    for g, w in zip(got, want):
        w = np.asarray(w)
        assert g.shape == w.shape
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-4, atol=1e-5)
