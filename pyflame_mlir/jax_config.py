"""``pf.config``: JAX's configuration flags that change what a JAX program
computes (``jax.config.update("jax_enable_x64", True)``).

``jax_enable_x64`` decides the JAX-style API's default dtypes: off (the
default, JAX's), ``pf.numpy``'s new arrays, Python scalars, numpy float64/
int64 data and index results are float32/int32; on, they are float64/int64
as JAX makes them. It only concerns the JAX-style namespaces (``pf.numpy``,
``pf.random``, ``pf.scipy``): ``pf``'s top level is torch's and keeps
torch's defaults (``pf.zeros(3)`` is float32, ``pf.tensor([1, 2])`` is
int64) in either mode.

``jax_disable_jit`` is ``pf.disable_jit()``'s flag (``pf.compile``'d
functions run their Python op by op). Flags that change nothing here are
accepted with their JAX values (``jax_platform_name="cpu"``,
``jax_default_matmul_precision``: float32 matmuls are computed exactly on
the host); any other flag raises, as JAX does for an unknown name.

Plain Python over ``dialects.dtypes``: importing it costs nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from .dialects.dtypes import DType, float32, float64, int32, int64

__all__ = ["canonical_host", "config", "default_float", "default_int", "enable_x64"]

# host data's dtypes as JAX takes them without 64-bit mode
CANONICAL = {np.dtype(np.float64): np.float32, np.dtype(np.int64): np.int32,
             np.dtype(np.uint64): np.uint32}

_PRECISIONS = (None, "default", "high", "highest", "bfloat16", "tensorfloat32", "float32",
               "bfloat16_3x", "tensorfloat32_3x", "fastest")


class Config:
    """JAX's ``jax.config``: ``update(name, value)``, and each flag readable as
    an attribute (``pf.config.jax_enable_x64``)."""

    def __init__(self) -> None:
        self.jax_enable_x64 = False
        self.jax_disable_jit = False
        self.jax_platform_name = "cpu"
        self.jax_platforms = "cpu"
        self.jax_default_matmul_precision: str | None = None

    def update(self, name: str, value: Any) -> None:
        if name in ("jax_enable_x64", "jax_disable_jit"):
            if not isinstance(value, bool | int):
                raise TypeError(f"config.update({name!r}, ...): a bool, got {value!r}")
            setattr(self, name, bool(value))
        elif name in ("jax_platform_name", "jax_platforms"):
            if value not in ("cpu", "", None):
                raise ValueError(f"config.update({name!r}, {value!r}): pyflame's arrays live "
                                 "on the host ('cpu'); the backends that compile programs "
                                 "are chosen with pf.set_backend")
            setattr(self, name, "cpu")
        elif name == "jax_default_matmul_precision":
            if value not in _PRECISIONS:
                raise ValueError(f"config.update({name!r}, {value!r}): one of {_PRECISIONS}")
            self.jax_default_matmul_precision = value
        else:
            raise AttributeError(f"Unrecognized config option: {name} (pyflame's config has "
                                 "jax_enable_x64, jax_disable_jit, jax_platform_name, "
                                 "jax_platforms and jax_default_matmul_precision)")

    def read(self, name: str) -> Any:
        if name.startswith("_") or name not in vars(self):
            raise AttributeError(f"Unrecognized config option: {name}")
        return getattr(self, name)


config = Config()


def default_float() -> DType:
    """JAX's default floating dtype: float64 with ``jax_enable_x64``, else float32."""
    return float64 if config.jax_enable_x64 else float32


def default_int() -> DType:
    """JAX's default integer dtype: int64 with ``jax_enable_x64``, else int32."""
    return int64 if config.jax_enable_x64 else int32


@contextmanager
def enable_x64(new_val: bool = True) -> Iterator[None]:
    """``jax.experimental.enable_x64()``: ``jax_enable_x64`` set for a block."""
    prev = config.jax_enable_x64
    config.update("jax_enable_x64", new_val)
    try:
        yield
    finally:
        config.jax_enable_x64 = prev


def canonical_host(a: Any) -> np.ndarray:
    """Host data (numpy arrays, lists, Python numbers) as a numpy array of
    JAX's dtype: without ``jax_enable_x64`` float64/int64/uint64 become
    float32/int32/uint32 (Python floats, float64 data, are float32)."""
    arr = np.asarray(a)
    if not config.jax_enable_x64 and arr.dtype in CANONICAL:
        arr = arr.astype(CANONICAL[arr.dtype])
    return arr
