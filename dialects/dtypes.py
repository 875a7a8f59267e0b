"""Element types shared by the frontend, the dialect and every backend.

Plain Python and numpy only: recording an op must not import xDSL.
Promotion follows PyTorch: categories bool < integer < floating; within a
category the wider type wins; Python scalars are *weak* and only lift the
category (``int32_tensor + 1.5`` is float32, ``float16_tensor + 1.0`` stays
float16).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np


class DType:
    """One element type. ``short`` is the MLIR spelling (``f32``, ``i64``, ``i1``)."""

    __slots__ = ("name", "short", "np", "category", "itemsize", "rank")

    def __init__(self, name: str, short: str, np_dtype: np.dtype, category: int, rank: int):
        self.name = name
        self.short = short
        self.np = np.dtype(np_dtype)
        self.category = category  # 0 bool, 1 integer, 2 floating
        self.itemsize = self.np.itemsize
        self.rank = rank  # order inside the category, for promotion

    @property
    def is_floating_point(self) -> bool:
        return self.category == 2

    @property
    def is_bool(self) -> bool:
        return self.category == 0

    @property
    def dtype(self) -> np.dtype:
        """numpy's dtype, so numpy takes a DType where it takes a dtype
        (``np.zeros(3, x.dtype)``, ``np.dtype(x.dtype)``: a JAX array's dtype is numpy's)."""
        return self.np

    def __repr__(self) -> str:
        return f"pyflame.{self.name}"

    def __reduce__(self):  # pickles as the singleton
        return (dtype, (self.name,))


BOOL, INT, FLOAT = 0, 1, 2

bool_ = DType("bool", "i1", np.bool_, BOOL, 0)
int32 = DType("int32", "i32", np.int32, INT, 32)
int64 = DType("int64", "i64", np.int64, INT, 64)
float16 = DType("float16", "f16", np.float16, FLOAT, 16)
bfloat16 = DType("bfloat16", "bf16", ml_dtypes.bfloat16, FLOAT, 16)
float32 = DType("float32", "f32", np.float32, FLOAT, 32)
float64 = DType("float64", "f64", np.float64, FLOAT, 64)

# (8- and 16-bit integers came later: appended, since graph files number
# dtypes by their position here)
uint8 = DType("uint8", "ui8", np.uint8, INT, 8)
int8 = DType("int8", "i8", np.int8, INT, 8)
int16 = DType("int16", "i16", np.int16, INT, 16)

ALL_DTYPES: tuple[DType, ...] = (bool_, int32, int64, float16, bfloat16, float32, float64,
                                 uint8, int8, int16)
NARROW_INTS = (uint8, int8, int16)  # not every backend has them
FLOAT_DTYPES = tuple(d for d in ALL_DTYPES if d.is_floating_point)
_BY_NAME: dict[str, DType] = {}
for _d in ALL_DTYPES:
    _BY_NAME[_d.name] = _d
    _BY_NAME[_d.short] = _d
_BY_NAME.update({"bool_": bool_, "float": float32, "double": float64, "half": float16,
                 "int": int32, "long": int64, "short": int16, "char": int8, "byte": uint8})
_BY_NP: dict[np.dtype, DType] = {d.np: d for d in ALL_DTYPES}

# PyTorch's legacy tensor type names (``torch.FloatTensor``, ``x.type()``)
TORCH_TYPE_NAMES: dict[DType, str] = {
    float32: "Float", float64: "Double", float16: "Half", bfloat16: "BFloat16", int32: "Int",
    int64: "Long", bool_: "Bool", uint8: "Byte", int8: "Char", int16: "Short"}


def can_cast(src: DType, dst: DType) -> bool:
    """PyTorch's ``can_cast``: no floating point into an integer or bool type,
    nothing but bool into bool (what an in-place result may be written as)."""
    if src.is_floating_point and not dst.is_floating_point:
        return False
    return not (dst.is_bool and not src.is_bool)


# The default float dtype (``torch.get_default_dtype``): what Python floats,
# ``randn``/``zeros``/``arange`` with float bounds and new layers' parameters
# become, and what integer inputs of float-only ops are promoted to. One list
# cell, read at recording time (a compiled program never reads it).
_DEFAULT_FLOAT: list[DType] = [float32]


def default_float() -> DType:
    return _DEFAULT_FLOAT[0]


def set_default_float(d: DType) -> None:
    if not d.is_floating_point:
        raise TypeError(f"set_default_dtype: only floating-point types are supported as the "
                        f"default type, got {d.name}")
    _DEFAULT_FLOAT[0] = d


DEFAULT_INT = int64


def dtype(x: object) -> DType:
    """Resolve a DType, its name, a numpy dtype or a Python type to a DType."""
    if isinstance(x, DType):
        return x
    if isinstance(x, np.dtype):  # the common case: a value's dtype (``Tensor._leaf``)
        found = _BY_NP.get(x)
        if found is not None:
            return found
    if isinstance(x, str):
        try:
            return _BY_NAME[x]
        except KeyError:
            raise TypeError(f"unknown dtype {x!r}; expected one of "
                            f"{', '.join(d.name for d in ALL_DTYPES)}") from None
    if x is float:  # PyTorch: Python's float is double (``x.to(float)``, ``dtype=float``)
        return float64
    if x is int:
        return DEFAULT_INT
    if x is bool:
        return bool_
    torch_name = getattr(x, "__module__", None) == "torch" and str(x).removeprefix("torch.")
    if torch_name:
        return dtype(torch_name)
    try:
        return _BY_NP[np.dtype(x)]  # type: ignore[call-overload]
    except (KeyError, TypeError):
        raise TypeError(f"unsupported dtype {x!r}; pyflame supports "
                        f"{', '.join(d.name for d in ALL_DTYPES)}") from None


def is_float_array(x: np.ndarray) -> bool:
    """numpy calls bfloat16 kind 'V'; ask our table instead of ``dtype.kind``."""
    d = _BY_NP.get(x.dtype)
    return d is not None and d.category == FLOAT


def promote(a: DType, b: DType) -> DType:
    """Result type of two tensors (PyTorch's ``promote_types`` on our set)."""
    if a is b:
        return a
    if a.category != b.category:
        return a if a.category > b.category else b
    if a.rank != b.rank:
        return a if a.rank > b.rank else b
    # float16 with bfloat16, uint8 with int8: neither holds the other, PyTorch
    # gives the next wider type that holds both.
    return float32 if a.category == FLOAT else int16


def scalar_category(v: object) -> int:
    if isinstance(v, bool | np.bool_):
        return BOOL
    if isinstance(v, int | np.integer):
        return INT
    if isinstance(v, float | np.floating):
        return FLOAT
    raise TypeError(f"expected a tensor or a Python number, got {type(v).__name__}")


def scalar_dtype(v: object) -> DType:
    """Dtype of a Python scalar standing alone (``pf.tensor(3)``)."""
    return (bool_, DEFAULT_INT, _DEFAULT_FLOAT[0])[scalar_category(v)]


def result_type(dim_dtypes: list[DType], zero_dim_dtypes: list[DType],
                scalars: list[object]) -> DType:
    """PyTorch's ``result_type``: tensors with dimensions outrank 0-d tensors,
    which outrank Python scalars; a lower tier only lifts the category."""
    def tier(ds: list[DType]) -> DType | None:
        out = None
        for d in ds:
            out = d if out is None else promote(out, d)
        return out

    def combine(higher: DType | None, lower: DType | None) -> DType | None:
        if higher is None:
            return lower
        if lower is None or higher.category == FLOAT:
            return higher
        if higher.category == BOOL or lower.category == FLOAT:
            return promote(higher, lower)
        return higher

    wrapped = tier([scalar_dtype(s) for s in scalars])
    r = combine(tier(dim_dtypes), combine(tier(zero_dim_dtypes), wrapped))
    assert r is not None, "result_type of nothing"
    return r
