"""Runtime values of the interpreter and their conversions from MLIR types/attributes.

Integers are Python ints wrapped to their type's width, floats numpy scalars
of their IEEE type, arrays numpy views into a PE's SRAM, structs dicts,
colors ints, DSDs the dataclasses of `dsd.py`.
"""

from __future__ import annotations

from functools import cache
from typing import NamedTuple

import numpy as np
from xdsl.dialects import csl
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    Signedness,
    StringAttr,
)
from xdsl.ir import Attribute

from pyflame_mlir.dialects import csl_ext

from .errors import ProgramError, UnsupportedError


class Var:
    """A mutable CSL variable: a 1-element SRAM view for numbers, a Python slot otherwise."""

    __slots__ = ("cell", "obj")

    def __init__(self, cell: np.ndarray | None):
        self.cell, self.obj = cell, None

    def get(self):
        return self.obj if self.cell is None else scalar(self.cell[0])

    def set(self, v) -> None:
        if self.cell is None:
            self.obj = v
        else:
            self.cell[0] = v


@cache
def int_info(t: Attribute) -> tuple[int, bool]:
    """(bits, signed) of an integer-like type; index is i32 as in the CSL printer."""
    if isinstance(t, IndexType):
        return 32, True
    if isinstance(t, IntegerType):
        return t.width.data, t.signedness.data != Signedness.UNSIGNED and t.width.data > 1
    raise UnsupportedError(f"not an integer type: {t}")


def wrap(v: int, bits: int, signed: bool) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if signed and v >> (bits - 1) else v


@cache
def np_dtype(t: Attribute) -> np.dtype:
    if isinstance(t, Float32Type):
        return np.dtype(np.float32)
    if isinstance(t, Float16Type):
        return np.dtype(np.float16)
    if isinstance(t, IntegerType | IndexType):
        bits, signed = int_info(t)
        if bits == 1:
            return np.dtype(np.bool_)
        return np.dtype(f"{'i' if signed else 'u'}{max(bits, 8) // 8}")
    raise UnsupportedError(f"no memory representation for type {t}")


def is_numeric(t: Attribute) -> bool:
    return isinstance(t, Float32Type | Float16Type | IntegerType | IndexType)


def scalar(v):
    """A numpy scalar read from memory as an interpreter value."""
    if isinstance(v, np.integer | np.bool_):
        return int(v)
    return v


def attr_value(attr: Attribute):
    match attr:
        case IntegerAttr(value=v, type=t) if isinstance(t, IntegerType | IndexType):
            return wrap(v.data, *int_info(t)) if int_info(t)[0] > 1 else int(bool(v.data))
        case FloatAttr(value=v, type=t):
            return np_dtype(t).type(v.data)
        case StringAttr(data=s):
            return s
        case DenseIntOrFPElementsAttr():
            vals = [attr_value(a) for a in attr.iter_attrs()]
            return vals[0] if len(vals) == 1 else np.array(vals, np_dtype(attr.get_element_type()))
        case csl.TaskKindAttr() | csl.DirectionAttr():
            return attr.data.value
    raise UnsupportedError(f"no value for attribute {attr}")


def convert(v, t: Attribute):
    """Convert a param/host value to the representation of type t."""
    if isinstance(t, Float32Type | Float16Type):
        return np_dtype(t).type(float(v))
    if isinstance(t, IntegerType | IndexType):
        return wrap(int(v), *int_info(t))
    if isinstance(t, csl.ColorType):
        return int(v)
    return v


class TaskId(NamedTuple):
    """A task id value (`local_task_id`, ...): its kind and number; a WSE-3 data task id
    made from an input queue (`@get_data_task_id(@get_input_queue(q))`) has `queue`."""

    kind: str
    id: int
    queue: bool = False

    def __str__(self) -> str:
        inner = (f"@get_input_queue({self.id})" if self.queue else
                 f"@get_color({self.id})" if self.kind == "data" else str(self.id))
        return f"@get_{self.kind}_task_id({inner})"


class QueueId(NamedTuple):
    """A queue id value (`input_queue` / `output_queue`)."""

    direction: str
    id: int

    def __str__(self) -> str:
        return f"@get_{self.direction}_queue({self.id})"


def _describe(v) -> str:
    if isinstance(v, np.ndarray):
        return f"a pointer to {v.dtype} memory of shape {list(v.shape)}"
    if isinstance(v, TaskId | QueueId):
        return str(v)
    return f"{v!r} ({type(v).__name__})"


def check_param(v, t: Attribute, what: str):
    """The value bound to a `csl_ext.param` of type t, checked: a ProgramError naming the
    param (`what`) when it is not a value of that type."""
    if isinstance(t, csl.PtrType):
        elem = t.type
        shape = list(elem.get_shape()) if isinstance(elem, MemRefType) else [1]
        scalar_t = elem.get_element_type() if isinstance(elem, MemRefType) else elem
        star = "[*]" if t.kind.data == csl.PtrKind.MANY else "*"
        want = f"a pointer {star}{list(shape) if isinstance(elem, MemRefType) else ''}{scalar_t}"
        if not isinstance(v, np.ndarray):
            raise ProgramError(f"{what}: a pointer param ({want}) given {_describe(v)}")
        if v.dtype != np_dtype(scalar_t):
            raise ProgramError(f"{what}: a pointer param ({want}) given a pointer to "
                               f"{v.dtype} elements")
        if t.kind.data == csl.PtrKind.SINGLE and (
                list(v.shape) != shape and not (shape == [1] and v.size == 1)):
            raise ProgramError(f"{what}: a pointer param ({want}) given a pointer to an "
                               f"array of shape {list(v.shape)}")
        return v
    if isinstance(t, csl_ext.TaskIdType):
        if not isinstance(v, TaskId) or v.kind != t.kind.data:
            raise ProgramError(f"{what}: a {t.kind.data}_task_id param given {_describe(v)}"
                               f" (make one with @get_{t.kind.data}_task_id)")
        return v
    if isinstance(t, csl_ext.QueueType):
        if not isinstance(v, QueueId) or v.direction != t.direction.data:
            raise ProgramError(f"{what}: an {t.direction.data}_queue param given "
                               f"{_describe(v)} (make one with @get_{t.direction.data}_queue)")
        return v
    raise UnsupportedError(f"{what}: no csl_ext.param of type {t}")
