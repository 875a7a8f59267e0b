"""The ground floor: op definitions with their shape rules and reference kernels.

Importing this package fills ``OPS`` from the op families; it does not import
xDSL (that happens in ``dialects.pyflame``, on the first IR build).
"""

from . import (  # noqa: F401  (fill OPS)
    data,
    decomp,
    elementwise,
    fused,
    indexing,
    linalg,
    nn,
    pooling,
    reduction,
    scan,
    shape_ops,
    sorting,
)
from .opdef import OPS, OpDef, ShapeError, get_op

__all__ = ["OPS", "OpDef", "ShapeError", "get_op"]
