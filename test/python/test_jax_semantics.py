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
