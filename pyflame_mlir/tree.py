"""``pf.tree``: JAX's ``jax.tree`` names (``pf.tree.map``, ``pf.tree.leaves``,
...) for the functions of ``pf.tree_util``."""

from __future__ import annotations

from .tree_util import all_leaves as all_leaves
from .tree_util import tree_all as all  # noqa: A001
from .tree_util import tree_broadcast as broadcast
from .tree_util import tree_flatten as flatten
from .tree_util import tree_flatten_with_path as flatten_with_path
from .tree_util import tree_leaves as leaves
from .tree_util import tree_leaves_with_path as leaves_with_path
from .tree_util import tree_map as map  # noqa: A001
from .tree_util import tree_map_with_path as map_with_path
from .tree_util import tree_reduce as reduce
from .tree_util import tree_reduce_associative as reduce_associative
from .tree_util import tree_structure as structure
from .tree_util import tree_transpose as transpose
from .tree_util import tree_unflatten as unflatten

__all__ = ["all", "all_leaves", "broadcast", "flatten", "flatten_with_path", "leaves",
           "leaves_with_path", "map", "map_with_path", "reduce", "reduce_associative",
           "structure", "transpose", "unflatten"]
