"""``pf.linalg``: PyTorch's ``torch.linalg`` names for the norms and products
of the op API (``ops.py`` and ``composites2.py`` hold them, as composites)."""

from __future__ import annotations

from .composites import cross as _cross
from .composites2 import matrix_power, multi_dot
from .core import Tensor
from .ops import linalg_norm as norm
from .ops import matmul, matrix_norm, vector_norm


def cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:  # noqa: A002
    """``torch.linalg.cross``: the cross product along ``dim`` (size 3), broadcast."""
    return _cross(input, other, dim=dim)


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """The dot product along ``dim`` (broadcast)."""
    return (x * y).sum(dim)


__all__ = ["cross", "matmul", "matrix_norm", "matrix_power", "multi_dot", "norm", "vecdot",
           "vector_norm"]
