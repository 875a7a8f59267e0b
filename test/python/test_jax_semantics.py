"""JAX semantics against ``jax`` itself (skipped without it): pytree key
order of dicts, ``lax.cond``/``switch`` branches that disagree and loop
carries that change type (JAX raises ``TypeError``), ``custom_vjp`` and
``custom_jvp`` under ``vmap``."""

from __future__ import annotations

from collections import OrderedDict, defaultdict

import numpy as np
import pytest

import pyflame_mlir as pf
from pyflame_mlir import tree_util as tu

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

TREES = [
    {"b": 1, "a": 2, "c": {"z": 3, "y": 4}},
    OrderedDict([("b", 1), ("a", 2)]),
    {"a": None, "b": 1},
    [None, 1, (2, None)],
    {"b": [1, {"d": 2, "c": 3}], "a": 0},
    defaultdict(list, {"z": 1, "m": {"q": 2, "p": 3}}),
    {"b": OrderedDict([("y", 1), ("x", 2)]), "a": (None, {"k": 3, "j": 4})},
]


def _keys(tree):
    """The nesting of a tree with each mapping's keys in their order."""
    if isinstance(tree, dict):
        return (type(tree).__name__, [(k, _keys(v)) for k, v in tree.items()])
    if isinstance(tree, list | tuple):
        return (type(tree).__name__, [_keys(v) for v in tree])
    return tree


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
def test_tree_functions_order_dicts_as_jax(tree) -> None:
    assert tu.tree_leaves(tree) == jax.tree_util.tree_leaves(tree)
    ours = tu.tree_map(lambda x: x * 10, tree)
    theirs = jax.tree_util.tree_map(lambda x: x * 10, tree)
    assert _keys(ours) == _keys(theirs)  # dicts: sorted keys; OrderedDict: insertion order
    leaves, treedef = tu.tree_flatten(tree)
    jleaves, jtreedef = jax.tree_util.tree_flatten(tree)
    assert leaves == jleaves
    back = tu.tree_unflatten(treedef, leaves)
    assert _keys(back) == _keys(jax.tree_util.tree_unflatten(jtreedef, jleaves))
    assert _keys(tu.tree_unflatten(tu.tree_structure(tree), leaves)) == _keys(back)
    paths = [tu.keystr(p) for p, _ in tu.tree_flatten_with_path(tree)[0]]
    assert paths == [jax.tree_util.keystr(p)
                     for p, _ in jax.tree_util.tree_flatten_with_path(tree)[0]]
    mapped = tu.tree_map_with_path(lambda p, x: x + 1, tree)
    assert _keys(mapped) == _keys(jax.tree_util.tree_map_with_path(lambda p, x: x + 1, tree))


def test_tree_map_with_rest_in_another_key_order() -> None:
    a, b = {"b": 1, "a": 2}, {"a": 10, "b": 20}
    ours = tu.tree_map(lambda x, y: x + y, a, b)
    assert _keys(ours) == _keys(jax.tree_util.tree_map(lambda x, y: x + y, a, b))
    with pytest.raises(ValueError):  # JAX: ValueError for a mismatched structure
        tu.tree_map(lambda x, y: x + y, a, {"a": 1, "c": 2})
    with pytest.raises(ValueError):
        jax.tree_util.tree_map(lambda x, y: x + y, a, {"a": 1, "c": 2})


def test_defaultdict_keeps_its_factory() -> None:
    out = tu.tree_map(lambda x: x, defaultdict(list, {"b": 1, "a": 2}))
    assert isinstance(out, defaultdict) and out.default_factory is list
    assert list(out) == ["a", "b"]


# ---- lax: branches and loop carries whose types disagree (JAX raises TypeError) ----

def _f32(v):
    return np.asarray(v, np.float32)


def _both(lib):
    """(lax, array constructor, cast to int32) for jax or pf."""
    if lib == "jax":
        return jax.lax, jnp.asarray, lambda a: a.astype(jnp.int32)
    return pf.lax, lambda v: pf.tensor(np.asarray(v)), lambda a: a.to(pf.int32)


CONTROL_FLOW = {
    "cond tree": lambda L, A, I: L.cond(True, lambda a: (a, a), lambda a: [a, a], A(_f32(1))),
    "cond dict keys": lambda L, A, I: L.cond(True, lambda a: {"a": a}, lambda a: {"b": a},
                                             A(_f32(1))),
    "cond shape": lambda L, A, I: L.cond(True, lambda a: A(np.ones(3, np.float32)),
                                         lambda a: a, A(_f32(1))),
    "cond dtype": lambda L, A, I: L.cond(False, lambda a: a, lambda a: I(a), A(_f32(1))),
    "cond weak int vs float32": lambda L, A, I: L.cond(True, lambda: 1, lambda: A(_f32(1))),
    "switch shape": lambda L, A, I: L.switch(1, [lambda a: A(np.ones(3, np.float32)),
                                                 lambda a: a], A(_f32(1))),
    "switch tree": lambda L, A, I: L.switch(0, [lambda a: (a,), lambda a: a], A(_f32(1))),
    "scan carry shape": lambda L, A, I: L.scan(lambda c, e: (A(np.ones(3, np.float32)), e),
                                               A(_f32(1)), A(np.ones(3, np.float32))),
    "scan carry tree": lambda L, A, I: L.scan(lambda c, e: ((c,), e), A(_f32(1)),
                                              A(np.ones(3, np.float32))),
    "fori carry shape": lambda L, A, I: L.fori_loop(0, 3, lambda i, c: A(np.ones(3, np.float32)),
                                                    A(_f32(1))),
    "fori carry tree": lambda L, A, I: L.fori_loop(0, 3, lambda i, c: (c,), A(_f32(1))),
    "fori carry dtype": lambda L, A, I: L.fori_loop(0, 3, lambda i, c: I(c), A(_f32(1))),
    "fori no trips": lambda L, A, I: L.fori_loop(3, 3, lambda i, c: (c,), A(_f32(1))),
    "while never runs": lambda L, A, I: L.while_loop(lambda c: False,
                                                     lambda c: A(np.ones(3, np.float32)),
                                                     A(_f32(1))),
    "while carry grows": lambda L, A, I: L.while_loop(lambda c: (c < 3).all(),
                                                      lambda c: c + A(np.ones(3, np.float32)),
                                                      A(_f32(1))),
    "while cond not scalar": lambda L, A, I: L.while_loop(lambda c: c < 3, lambda c: c + 1,
                                                          A(np.ones(3, np.float32))),
    "while cond float": lambda L, A, I: L.while_loop(lambda c: c * 0, lambda c: c + 1,
                                                     A(_f32(1))),
}


@pytest.mark.parametrize("case", CONTROL_FLOW)
def test_control_flow_type_errors_as_jax(case: str) -> None:
    with pytest.raises(TypeError):
        CONTROL_FLOW[case](*_both("jax"))
    with pytest.raises(TypeError):
        CONTROL_FLOW[case](*_both("pf"))


AGREEING = {  # what JAX accepts: weak Python scalars take the other side's dtype
    "cond weak float vs float32": lambda L, A, I: L.cond(True, lambda: 1.0,
                                                         lambda: A(_f32(2))),
    "cond same trees": lambda L, A, I: L.cond(False, lambda a: {"b": a, "a": a * 2},
                                              lambda a: {"a": a, "b": a + 1}, A(_f32(3))),
    "fori weak int carry to float": lambda L, A, I: L.fori_loop(0, 3, lambda i, c: c + 0.5, 0),
    "fori float32 carry, weak output": lambda L, A, I: L.fori_loop(0, 3, lambda i, c: 1.0,
                                                                   A(_f32(0))),
    "switch clamps": lambda L, A, I: L.switch(7, [lambda a: a, lambda a: a * 2], A(_f32(3))),
    "scan": lambda L, A, I: L.scan(lambda c, e: (c + e, c * e), A(_f32(1)),
                                   A(np.arange(3, dtype=np.float32)))[0],
}


def _tree_np(v):
    return tu.tree_map(lambda x: np.asarray(x.numpy() if isinstance(x, pf.Tensor) else x), v)


@pytest.mark.parametrize("case", AGREEING)
def test_control_flow_that_jax_accepts(case: str) -> None:
    want = jax.tree_util.tree_map(np.asarray, AGREEING[case](*_both("jax")))
    got = _tree_np(AGREEING[case](*_both("pf")))
    assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(want)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_cond_runs_both_branches_as_jax_traces_them() -> None:
    seen = []
    out = pf.lax.cond(True, lambda: seen.append("t") or pf.tensor(1.0),
                      lambda: seen.append("f") or pf.tensor(2.0))
    assert sorted(seen) == ["f", "t"] and out.item() == 1.0


# ---- custom_vjp / custom_jvp under vmap ----

def _custom(lib):
    @lib.custom_vjp
    def f(x, w):
        return x * w

    def fwd(x, w):
        return x * w, (x, w)

    def bwd(res, g):
        x, w = res
        return g * w * 3, g * x * 5  # not the true derivative: the rule must be used
    f.defvjp(fwd, bwd)

    @lib.custom_jvp
    def h(x):
        return x ** 3

    def h_jvp(primals, tangents):
        (x,), (tx,) = primals, tangents
        return x ** 3, 7 * tx * x
    h.defjvp(h_jvp)
    return f, h


X = np.linspace(-1, 2, 6).astype(np.float32)


def _custom_cases(lib, arr):
    f, h = _custom(lib)
    x, w = arr(X), arr(np.float32(2))
    return {
        "vmap f": lambda: lib.vmap(f, in_axes=(0, None))(x, w),
        "vmap grad f": lambda: lib.vmap(lib.grad(f, argnums=(0, 1)), in_axes=(0, None))(x, w),
        "grad vmap f": lambda: lib.grad(lambda a, b: lib.vmap(f, in_axes=(0, None))(a, b).sum(),
                                        argnums=(0, 1))(x, w),
        "vmap vmap grad f": lambda: lib.vmap(lib.vmap(lib.grad(f), in_axes=(0, None)),
                                             in_axes=(0, None))(arr(X.reshape(2, 3)), w),
        "vmap h": lambda: lib.vmap(h)(x),
        "vmap grad h": lambda: lib.vmap(lib.grad(h))(x),
        "jvp vmap h": lambda: lib.jvp(lib.vmap(h), (x,), (arr(np.ones(6, np.float32)),)),
        "vmap jvp h": lambda: lib.vmap(lambda a: lib.jvp(h, (a,), (arr(np.float32(1)),))[1])(x),
        "grad vmap h": lambda: lib.grad(lambda a: lib.vmap(h)(a).sum())(x),
    }


@pytest.mark.parametrize("case", list(_custom_cases(jax, jnp.asarray)))
def test_custom_derivatives_under_vmap_match_jax(case: str) -> None:
    want = _custom_cases(jax, jnp.asarray)[case]()
    got = _custom_cases(pf, pf.tensor)[case]()
    for g, w in zip(jax.tree_util.tree_leaves(_tree_np(got)), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-6)


def test_jvp_of_custom_vjp_raises_type_error_as_jax() -> None:
    for lib, arr in ((jax, jnp.asarray), (pf, pf.tensor)):
        f, _ = _custom(lib)
        with pytest.raises(TypeError, match="custom_vjp"):
            w = arr(np.float32(2))
            lib.jvp(lambda a, f=f, w=w: f(a, w), (arr(X),), (arr(X),))


def test_a_branch_that_mutates_an_operand_raises() -> None:
    x = pf.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="modified an operand in place"):
        pf.lax.cond(True, lambda a: a * 2, lambda a: a.add_(1), x)
    with pytest.raises(RuntimeError, match="modified an operand in place"):
        pf.lax.switch(0, [lambda a: a * 2, lambda a: a.mul_(3)], x)
