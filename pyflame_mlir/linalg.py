"""``pf.linalg``: PyTorch's ``torch.linalg`` names for the norms and products
of the op API (``ops.py`` holds them, as composites)."""

from __future__ import annotations

from .ops import linalg_norm as norm
from .ops import matmul, matrix_norm, vector_norm

__all__ = ["matmul", "matrix_norm", "norm", "vector_norm"]
