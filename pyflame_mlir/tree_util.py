"""``pf.tree_util``: pytrees with JAX's semantics, on ``optree`` (the C++
pytree library PyTorch uses).

Tuples, lists, dicts (keys sorted), OrderedDicts (insertion order),
defaultdicts, namedtuples, and the classes registered here are nodes; None
is a node without children (an empty subtree, as in JAX); anything else (a
Tensor, a number, an array) is a leaf. Registrations live in pyflame's own
optree namespace, so they do not leak into other users of optree.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import operator
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import optree

NAMESPACE = "pyflame_mlir"

PyTreeDef = optree.PyTreeSpec


_DICTS = (dict, collections.defaultdict)


def _sorted_node(node: PyTreeDef) -> PyTreeDef:
    """A one-level dict node whose keys were inserted out of order, rebuilt in
    sorted order (other nodes as they are)."""
    if node.type not in _DICTS:
        return node
    keys = node.entries()  # sorted (optree's order of the leaves, JAX's too)
    built = node.unflatten([None] * len(keys))
    if list(built) == keys:
        return node
    children = dict.fromkeys(keys, optree.treespec_leaf(namespace=NAMESPACE))
    if node.type is dict:
        return optree.treespec_dict(children, namespace=NAMESPACE)
    return optree.treespec_defaultdict(built.default_factory, children, namespace=NAMESPACE)


def _jax_order(treedef: PyTreeDef) -> PyTreeDef:
    """JAX's structure of a tree: optree remembers a dict's insertion order and
    rebuilds it so; JAX rebuilds dicts (and defaultdicts) with their keys
    sorted, the order of their leaves (an OrderedDict keeps its own order)."""
    return treedef.transform(_sorted_node) if treedef.num_nodes > 1 else treedef


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                 ) -> tuple[list[Any], PyTreeDef]:
    """The leaves of ``tree`` (left to right) and its structure."""
    leaves, treedef = optree.tree_flatten(tree, is_leaf, namespace=NAMESPACE)
    return leaves, _jax_order(treedef)


def tree_unflatten(treedef: PyTreeDef, leaves: Sequence[Any]) -> Any:
    """The tree of structure ``treedef`` with ``leaves`` in place."""
    return optree.tree_unflatten(treedef, leaves)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    return optree.tree_leaves(tree, is_leaf, namespace=NAMESPACE)


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    return _jax_order(optree.tree_structure(tree, is_leaf, namespace=NAMESPACE))


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """``f`` on each leaf of ``tree`` (and the leaves at the same places of
    ``rest``, which must have ``tree``'s structure as a prefix). Dicts come
    back with their keys sorted, as from JAX."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten([f(*xs) for xs in zip(leaves, *others)])


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
    _DATA_FIELDS[nodetype] = data

    def flatten(x: Any) -> tuple[list[Any], tuple]:
        return [getattr(x, n) for n in data], tuple(getattr(x, n) for n in meta)

    def unflatten(aux: tuple, children: Any) -> Any:
        return nodetype(**dict(zip(data, children)), **dict(zip(meta, aux)))

    return register_pytree_node(nodetype, flatten, unflatten)


def register_pytree_node_class(cls: type) -> type:
    """A class decorator (JAX's): ``cls`` flattens with its ``tree_flatten()``
    method and rebuilds with its ``tree_unflatten(aux_data, children)`` classmethod."""
    return register_pytree_node(cls, operator.methodcaller("tree_flatten"), cls.tree_unflatten)


def register_pytree_with_keys(nodetype: type,
                              flatten_with_keys: Callable[[Any], tuple[Iterable[Any], Any]],
                              unflatten_func: Callable[[Any, Any], Any],
                              flatten_func: Callable[[Any], tuple[Any, Any]] | None = None
                              ) -> type:
    """JAX's signature: ``flatten_with_keys(x) -> (((key, child), ...), aux_data)``
    (the keys, JAX's key classes, name the children in key paths)."""
    del flatten_func  # (the keyed flatten gives the children too)

    def flatten(x: Any) -> tuple[list[Any], Any, list[Any]]:
        pairs, aux = flatten_with_keys(x)
        pairs = list(pairs)
        return [c for _, c in pairs], aux, [k for k, _ in pairs]
    optree.register_pytree_node(nodetype, flatten, unflatten_func, namespace=NAMESPACE)
    return nodetype


def register_pytree_with_keys_class(cls: type) -> type:
    """A class decorator (JAX's): ``cls.tree_flatten_with_keys()`` and the
    ``tree_unflatten(aux_data, children)`` classmethod."""
    return register_pytree_with_keys(cls, operator.methodcaller("tree_flatten_with_keys"),
                                     cls.tree_unflatten)


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    return treedef.children()


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The structure of a tuple of trees of the given structures."""
    return optree.treespec_tuple(list(treedefs), namespace=NAMESPACE)


def register_static(cls: type) -> type:
    """Instances of ``cls`` are nodes without children, kept in the structure
    (compared and hashed with it), as JAX's ``register_static``."""
    return register_pytree_node(cls, lambda x: ((), x), lambda aux, _: aux)


_MISSING = object()


def tree_reduce(function: Callable[[Any, Any], Any], tree: Any, initializer: Any = _MISSING,
                is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """``functools.reduce(function, tree_leaves(tree)[, initializer])``."""
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _MISSING:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    return all(tree_leaves(tree, is_leaf))


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None,
                   pytree_to_transpose: Any) -> Any:
    """An ``outer`` tree of ``inner`` trees as an ``inner`` tree of ``outer`` trees
    (``inner_treedef`` None: inferred from the first inner tree)."""
    if inner_treedef is None:
        first = outer_treedef.flatten_up_to(pytree_to_transpose)[0]
        inner_treedef = tree_structure(first)
    return optree.tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose)


def tree_broadcast(prefix_tree: Any, full_tree: Any,
                   is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """``full_tree``'s structure with each leaf of ``prefix_tree`` (a prefix
    of it) repeated over the leaves of its subtree (JAX's ``tree_broadcast``)."""
    prefix = tree_structure(prefix_tree, is_leaf)
    subtrees = prefix.flatten_up_to(full_tree)
    pre_leaves = tree_leaves(prefix_tree, is_leaf)
    out = [tree_map(lambda _, v=v: v, sub, is_leaf=is_leaf) for v, sub in
           zip(pre_leaves, subtrees)]
    return tree_unflatten(prefix, out)


def tree_reduce_associative(operation: Callable[[Any, Any], Any], tree: Any, *,
                            identity: Any = _MISSING,
                            is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """JAX's ``tree_reduce_associative``: the leaves combined as a balanced
    tree of ``operation`` calls, halves first (``identity`` for no leaves)."""
    def halves(seq: list[Any]) -> Any:
        if len(seq) == 1:
            return seq[0]
        mid = len(seq) // 2
        return operation(halves(seq[:mid]), halves(seq[mid:]))
    seq = tree_leaves(tree, is_leaf)
    if not seq:
        if identity is _MISSING:
            raise TypeError("Must specify identity for parallel reduction of empty sequence.")
        return identity
    return halves(seq)


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    return treedef.num_nodes == 1


def all_leaves(iterable: Iterable[Any], is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Whether every element of ``iterable`` is a leaf (JAX's ``all_leaves``)."""
    return all(treedef_is_leaf(tree_structure(x, is_leaf)) and x is not None
               for x in iterable)


class Partial(functools.partial):
    """``functools.partial`` as a pytree (JAX's ``tree_util.Partial``): the
    bound arguments are children, the function part of the structure, so a
    partially applied function can cross ``grad``/``vmap``/``pf.compile``."""


register_pytree_node(Partial, lambda p: ((p.args, p.keywords), p.func),
                     lambda func, children: Partial(func, *children[0], **children[1]))


# ---- key paths (JAX's key classes; ``keystr`` prints them as JAX does) ----

@dataclasses.dataclass(frozen=True)
class DictKey:
    key: Any

    def __str__(self) -> str:
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True)
class SequenceKey:
    idx: int

    def __str__(self) -> str:
        return f"[{self.idx}]"


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    name: str

    def __str__(self) -> str:
        return f".{self.name}"


@dataclasses.dataclass(frozen=True)
class FlattenedIndexKey:
    key: int

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


KeyEntry = DictKey | SequenceKey | GetAttrKey | FlattenedIndexKey
KeyPath = tuple[KeyEntry, ...]


def _jax_key(entry: Any, data_fields: dict[type, tuple[str, ...]]) -> KeyEntry:
    if isinstance(entry, optree.MappingEntry):
        return DictKey(entry.key)
    if isinstance(entry, optree.NamedTupleEntry):
        return GetAttrKey(entry.field)
    if isinstance(entry, optree.SequenceEntry):
        return SequenceKey(entry.index)
    if isinstance(entry.entry, DictKey | SequenceKey | GetAttrKey | FlattenedIndexKey):
        return entry.entry  # register_pytree_with_keys: the node's own keys
    names = data_fields.get(entry.type)
    if names is not None:  # a registered dataclass: its fields by name, as in JAX
        return GetAttrKey(names[entry.entry])
    return FlattenedIndexKey(entry.entry)


_DATA_FIELDS: dict[type, tuple[str, ...]] = {}  # register_dataclass's data fields per class


def tree_flatten_with_path(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                           ) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """``([(key_path, leaf), ...], treedef)``, key paths of JAX's key classes."""
    accessors, leaves, treedef = optree.tree_flatten_with_accessor(tree, is_leaf,
                                                                   namespace=NAMESPACE)
    paths = [tuple(_jax_key(e, _DATA_FIELDS) for e in a) for a in accessors]
    return list(zip(paths, leaves)), _jax_order(treedef)


def tree_leaves_with_path(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                          ) -> list[tuple[KeyPath, Any]]:
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(f: Callable[..., Any], tree: Any, *rest: Any,
                       is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """``f(key_path, leaf, *leaves_of_rest)`` on each leaf of ``tree``."""
    pairs, treedef = tree_flatten_with_path(tree, is_leaf)
    others = [treedef.flatten_up_to(r) for r in rest]
    return tree_unflatten(treedef, [f(path, leaf, *(o[i] for o in others))
                                    for i, (path, leaf) in enumerate(pairs)])


def keystr(keys: KeyPath, *, simple: bool = False, separator: str = "") -> str:
    """A key path as text: ``"['a'][0].w"`` (``simple``: the bare keys joined
    by ``separator``, ``"a/0/w"`` with ``separator="/"``)."""
    if not simple:
        return separator.join(str(k) for k in keys)
    return separator.join(str(next(iter(dataclasses.asdict(k).values()))) for k in keys)


__all__ = ["NAMESPACE", "DictKey", "FlattenedIndexKey", "GetAttrKey", "Partial", "PyTreeDef",
           "SequenceKey", "all_leaves", "keystr", "register_dataclass", "register_pytree_node",
           "register_pytree_node_class", "register_pytree_with_keys",
           "register_pytree_with_keys_class", "register_static", "tree_all", "tree_flatten",
           "tree_flatten_with_path", "tree_leaves", "tree_leaves_with_path", "tree_map",
           "tree_broadcast", "tree_map_with_path", "tree_reduce", "tree_reduce_associative",
           "tree_structure", "tree_transpose",
           "tree_unflatten", "treedef_children", "treedef_is_leaf", "treedef_tuple"]
