"""Passes on ``pyflame`` IR and the registry that names them.

``PASSES`` maps a pipeline name to a factory returning the ``ModulePass``
class (xDSL's convention, so registering costs no imports). Both
``pyflame-opt -p`` and the frontend's compile driver read this one table.

``PIPELINES`` names whole pipelines; ``DEFAULT_PIPELINE`` is what
``evaluate()`` runs on the reference backend (``pf.get_pipeline()`` prints it,
``pf.set_pipeline(...)`` overrides it). Backends without fused kernels get
``PORTABLE_PIPELINE``: the same simplifications, no fusion.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass


def _cse() -> type[ModulePass]:
    from .cse import CommonSubexpressionElimination
    return CommonSubexpressionElimination


def _convert_stablehlo() -> type[ModulePass]:
    from .convert_stablehlo import ConvertStablehloToPyflame
    return ConvertStablehloToPyflame


def _dce() -> type[ModulePass]:
    from .dce import DeadCodeElimination
    return DeadCodeElimination


def _constant_fold() -> type[ModulePass]:
    from .constant_folding import ConstantFolding
    return ConstantFolding


def _algebraic() -> type[ModulePass]:
    from .algebraic import AlgebraicSimplification
    return AlgebraicSimplification


def _fuse() -> type[ModulePass]:
    from .fusion import Fusion
    return Fusion


def _unfuse() -> type[ModulePass]:
    from .fusion import Unfuse
    return Unfuse


def _decompose() -> type[ModulePass]:
    from .decompose import Decompose
    return Decompose


def _legalize_for_max() -> type[ModulePass]:
    from .legalize_for_max import LegalizeForMax
    return LegalizeForMax


def _fixed_point() -> type[ModulePass]:
    from .pipeline import FixedPoint
    return FixedPoint


def _canonicalize() -> type[ModulePass]:
    from xdsl.transforms.canonicalize import CanonicalizePass
    return CanonicalizePass


def _autodiff() -> type[ModulePass]:
    from .autodiff import PyflameAutodiff
    return PyflameAutodiff


def _vmap() -> type[ModulePass]:
    from .vmap import PyflameVmap
    return PyflameVmap


def _wse_layout() -> type[ModulePass]:
    from .wse_layout import WseLayout
    return WseLayout


def _wse_memory_plan() -> type[ModulePass]:
    from .wse_memory import WseMemoryPlan
    return WseMemoryPlan


def _to_linalg() -> type[ModulePass]:
    from .to_linalg import ConvertPyflameToLinalg
    return ConvertPyflameToLinalg


def _legalize_for_wse() -> type[ModulePass]:
    from .legalize_for_wse import LegalizeForWse
    return LegalizeForWse


def _convert_pyflame_to_wse() -> type[ModulePass]:
    from .convert_pyflame_to_wse import ConvertPyflameToWse
    return ConvertPyflameToWse


def _convert_wse_to_csl() -> type[ModulePass]:
    from .convert_wse_to_csl import ConvertWseToCsl
    return ConvertWseToCsl


def _check_indices() -> type[ModulePass]:
    from .check_indices import CheckIndices
    return CheckIndices


def _sharding_propagation() -> type[ModulePass]:  # issue 17
    from .sharding_propagation import ShardingPropagation
    return ShardingPropagation


def _spmd_partition() -> type[ModulePass]:
    from .spmd_partition import SpmdPartition
    return SpmdPartition


PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "pyflame-autodiff": _autodiff,
    "pyflame-vmap": _vmap,
    "cse": _cse,
    "dce": _dce,
    "constant-fold": _constant_fold,
    "algebraic-simplify": _algebraic,
    "fuse": _fuse,
    "unfuse": _unfuse,
    "decompose": _decompose,
    "legalize-for-max": _legalize_for_max,
    "fixed-point": _fixed_point,
    "canonicalize": _canonicalize,
    "wse-layout": _wse_layout,
    "wse-memory-plan": _wse_memory_plan,
    "convert-pyflame-to-linalg": _to_linalg,
    "legalize-for-wse": _legalize_for_wse,
    "convert-pyflame-to-wse": _convert_pyflame_to_wse,
    "convert-wse-to-csl": _convert_wse_to_csl,
    "check-indices": _check_indices,
    "sharding-propagation": _sharding_propagation,  # issue 17
    "spmd-partition": _spmd_partition,
    "convert-stablehlo-to-pyflame": _convert_stablehlo,
}

SIMPLIFY = 'fixed-point{pipeline="cse,constant-fold,algebraic-simplify,dce" max-iterations=8}'
# What evaluate() runs when optimizing (pf.compile_graph(optimize=False) skips it).
DEFAULT_PIPELINE = SIMPLIFY + ",fuse"
PORTABLE_PIPELINE = SIMPLIFY
FAST_MATH_PIPELINE = ('fixed-point{pipeline="cse,constant-fold,algebraic-simplify{fast-math=true},'
                      'dce" max-iterations=8},fuse')

PIPELINES: dict[str, str] = {
    "default": DEFAULT_PIPELINE,
    "portable": PORTABLE_PIPELINE,
    "fast-math": FAST_MATH_PIPELINE,
    "none": "",
}
# Backends whose lowerings know the fused ops; the others get PORTABLE_PIPELINE.
FUSING_BACKENDS = frozenset({"reference"})


def default_pipeline(backend: str) -> str:
    return DEFAULT_PIPELINE if backend in FUSING_BACKENDS else PORTABLE_PIPELINE
