"""Ops that make data inside the graph: ``constant`` (a splat or a small
literal tensor, part of the structural hash) and ``iota`` (``arange`` and
``eye`` are built from it). Host data never becomes a constant: it enters the
compiled function as an argument."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from . import ad
from .dtypes import DType, dtype
from .opdef import OpDef, Shape, ShapeError, define, fmt_shape, numel


class DenseValue:
    """A constant's value: ``array`` is 0-d for a splat, else the full tensor."""

    __slots__ = ("array", "shape", "dtype", "_key")

    def __init__(self, array: np.ndarray, shape: Shape, dt: DType | None = None):
        self.dtype = dt if dt is not None else dtype(array.dtype)
        self.array = np.array(array, dtype=self.dtype.np, order="C")
        self.shape = tuple(int(d) for d in shape)
        self._key: tuple | None = None
        if self.array.ndim and self.array.shape != self.shape:
            raise ShapeError("constant", f"value of shape {fmt_shape(self.array.shape)} "
                                         f"does not match {fmt_shape(self.shape)}")

    @property
    def is_splat(self) -> bool:
        return self.array.ndim == 0 or numel(self.shape) <= 1

    def materialize(self) -> np.ndarray:
        if self.array.ndim == 0:
            return np.full(self.shape, self.array, dtype=self.dtype.np)
        return self.array.copy()

    def key(self) -> tuple:
        """Canonical encoding for the structural hash: bytes, not float equality
        (so 0.0 and -0.0, or two NaN payloads, never collide)."""
        if self._key is None:
            raw = self.array.tobytes()
            digest = raw if len(raw) <= 64 else hashlib.blake2b(raw, digest_size=16).digest()
            self._key = ("dense", self.dtype.name, self.shape, self.array.ndim == 0, digest)
        return self._key

    def scalar(self) -> float | int | bool:
        return self.array.reshape(-1)[0].item()

    def __repr__(self) -> str:
        body = repr(self.array.item()) if self.array.ndim == 0 else "..."
        return f"DenseValue({body}, {fmt_shape(self.shape)}, {self.dtype.name})"


def _constant_rule(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
    v: DenseValue = attrs["value"]
    return ((v.shape, v.dtype),)


def _iota_rule(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict):
    shape, dim = tuple(attrs["shape"]), attrs["dim"]
    if not 0 <= dim < len(shape):
        raise ShapeError("iota", f"dimension {dim} is out of range for shape {fmt_shape(shape)}")
    if attrs["dtype"].is_bool:
        raise ShapeError("iota", "cannot count in bool")
    return ((shape, attrs["dtype"]),)


def _iota(shape: tuple, dim: int, dtype: DType) -> np.ndarray:
    idx = np.arange(shape[dim], dtype=dtype.np)
    view = idx.reshape((-1,) + (1,) * (len(shape) - dim - 1))
    return np.ascontiguousarray(np.broadcast_to(view, shape))


define(OpDef("constant", "data", _constant_rule, lambda value: value.materialize(), 0,
             {"value": "dense"}))
define(OpDef("iota", "data", _iota_rule, _iota, 0,
             {"shape": "ints", "dim": "int", "dtype": "dtype"}))


ad.nondiff("constant", "iota")  # no inputs: nothing to differentiate
