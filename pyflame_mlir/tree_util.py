"""``pf.tree_util``: pytrees with JAX's semantics, on ``optree`` (the C++
pytree library PyTorch uses).

Tuples, lists, dicts (keys sorted), OrderedDicts (insertion order),
defaultdicts, namedtuples, and the classes registered here are nodes; None
is a node without children (an empty subtree, as in JAX); anything else (a
Tensor, a number, an array) is a leaf. Registrations live in pyflame's own
optree namespace, so they do not leak into other users of optree.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import optree

NAMESPACE = "pyflame_mlir"

PyTreeDef = optree.PyTreeSpec


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                 ) -> tuple[list[Any], PyTreeDef]:
    """The leaves of ``tree`` (left to right) and its structure."""
    return optree.tree_flatten(tree, is_leaf, namespace=NAMESPACE)


def tree_unflatten(treedef: PyTreeDef, leaves: Sequence[Any]) -> Any:
    """The tree of structure ``treedef`` with ``leaves`` in place."""
    return optree.tree_unflatten(treedef, leaves)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    return optree.tree_leaves(tree, is_leaf, namespace=NAMESPACE)


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    return optree.tree_structure(tree, is_leaf, namespace=NAMESPACE)


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """``f`` on each leaf of ``tree`` (and the leaves at the same places of
    ``rest``, which must have ``tree``'s structure as a prefix)."""
    return optree.tree_map(f, tree, *rest, is_leaf=is_leaf, namespace=NAMESPACE)


def register_pytree_node(nodetype: type, flatten_func: Callable[[Any], tuple[Any, Any]],
                         unflatten_func: Callable[[Any, Any], Any]) -> type:
    """JAX's signature: ``flatten_func(x) -> (children, aux_data)`` and
    ``unflatten_func(aux_data, children) -> x``; ``aux_data`` is compared
    (and hashed) when two structures are."""
    optree.register_pytree_node(nodetype, flatten_func, unflatten_func, namespace=NAMESPACE)
    return nodetype


def register_dataclass(nodetype: type, data_fields: Sequence[str] | None = None,
                       meta_fields: Sequence[str] | None = None,
                       drop_fields: Sequence[str] = ()) -> type:
    """A dataclass as a node (JAX's ``register_dataclass``, also a
    decorator): ``data_fields`` are children, ``meta_fields`` part of the
    structure. Without them, fields marked ``field(metadata={"static": True})``
    are meta and the other ``init`` fields data."""
    if data_fields is None or meta_fields is None:
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError(f"register_dataclass: {nodetype.__name__} is not a dataclass; "
                            "pass data_fields and meta_fields")
        fields = [f for f in dataclasses.fields(nodetype)
                  if f.init and f.name not in drop_fields]
        if meta_fields is None:
            meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
        if data_fields is None:
            data_fields = [f.name for f in fields if f.name not in meta_fields]
    data, meta = tuple(data_fields), tuple(meta_fields)

    def flatten(x: Any) -> tuple[list[Any], tuple]:
        return [getattr(x, n) for n in data], tuple(getattr(x, n) for n in meta)

    def unflatten(aux: tuple, children: Any) -> Any:
        return nodetype(**dict(zip(data, children)), **dict(zip(meta, aux)))

    return register_pytree_node(nodetype, flatten, unflatten)


__all__ = ["NAMESPACE", "PyTreeDef", "register_dataclass", "register_pytree_node",
           "tree_flatten", "tree_leaves", "tree_map", "tree_structure", "tree_unflatten"]
