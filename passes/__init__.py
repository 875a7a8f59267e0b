"""Passes on ``pyflame`` IR and the registry that names them.

``PASSES`` maps a pipeline name to a factory returning the ``ModulePass``
class (xDSL's convention, so registering costs no imports). Both
``pyflame-opt -p`` and the frontend's compile driver read this one table.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass


def _cse() -> type[ModulePass]:
    from xdsl.transforms.common_subexpression_elimination import (
        CommonSubexpressionElimination,
    )
    return CommonSubexpressionElimination


def _dce() -> type[ModulePass]:
    from xdsl.transforms.dead_code_elimination import DeadCodeElimination
    return DeadCodeElimination


def _canonicalize() -> type[ModulePass]:
    from xdsl.transforms.canonicalize import CanonicalizePass
    return CanonicalizePass


def _autodiff() -> type[ModulePass]:
    from .autodiff import PyflameAutodiff
    return PyflameAutodiff


PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "pyflame-autodiff": _autodiff,
    "cse": _cse,
    "dce": _dce,
    "canonicalize": _canonicalize,
}

# What evaluate() runs when optimizing (pf.compile_graph(optimize=False) skips it).
DEFAULT_PIPELINE = "cse,dce"
