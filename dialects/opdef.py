"""The op table: one ``OpDef`` per ``pyflame`` op, keyed by name.

An op's name, attribute schema, shape/dtype rule and reference kernel live in
one ``OpDef`` defined in the module of its family (``elementwise``,
``reduction``, ``shape``, ``linalg``, ``nn``, ``data``). The frontend calls
``infer`` when it records an op; the xDSL verifier calls the very same
``infer``; the reference executor calls ``kernel``. Later tables (autodiff
rules, backend lowerings) are keyed by the ``OpDef`` objects themselves (or
by the generated op classes), so a misspelt name fails at import.

An op that is a composition of other ops on backends without the primitive
(softmax, the fused chains) carries its ``decomposition`` here, written
against the builder interface of ``dialects/ad.py``; the ``decompose`` and
``unfuse`` passes run it.

Plain Python: importing this module must not import xDSL.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .dtypes import DType

Shape = tuple[int, ...]
Spec = tuple[Shape, DType]
Attrs = dict[str, Any]
# infer(shapes, dtypes, attrs) -> one (shape, dtype) per result
InferFn = Callable[[Sequence[Shape], Sequence[DType], Attrs], tuple[Spec, ...]]
# decomposition(b, inputs, **attrs) -> one value per result, built with the
# builder ``b`` of dialects/ad.py (b.op, b.<opname>, b.shape, b.dtype, b.scalar)
Decomposition = Callable[..., list[Any]]

# Attribute kinds, each with one Python representation:
#   int, bool, float, str        -> the Python value
#   ints                         -> tuple[int, ...]
#   opt_int, opt_str             -> int | None, str | None (absent in IR when None)
#   dtype                        -> DType
#   dense                        -> numpy array (0-d for a splat), see data.constant
#   func                         -> a traced function (frontend transform nodes only)
ATTR_KINDS = ("int", "bool", "float", "str", "ints", "opt_int", "opt_str", "dtype", "dense",
              "func")


class ShapeError(ValueError):
    """An op applied to operands its shape/dtype rule rejects."""

    def __init__(self, op: str, message: str):
        super().__init__(f"pyflame.{op}: {message}")
        self.op = op
        self.reason = message


def _attr_items(attrs: Attrs) -> tuple:
    return tuple(attrs.items())


def fmt_shape(s: Shape) -> str:
    return "[" + ", ".join(map(str, s)) + "]"


@dataclass(eq=False)
class OpDef:
    """Everything about one op that is not specific to a backend."""

    name: str
    family: str
    infer: InferFn
    kernel: Callable[..., Any]
    num_inputs: int | None  # None: variadic (at least one)
    attrs: dict[str, str] = field(default_factory=dict)  # attr name -> kind
    num_results: int | None = 1  # None: decided by attributes (split)
    ufunc: bool = False  # kernel accepts ``out=`` (preallocated buffers)
    elementwise: bool = False  # every output element depends on one input element
    doc: str = ""
    # the op as other ops, for backends without it (None: a primitive everywhere)
    decomposition: Decomposition | None = field(default=None, repr=False)
    # record()'s memo: input shapes/dtypes and attributes -> (specs, signature id,
    # and the shape and dtype of a single result: None, None for a list of them).
    # ``memo_attrs`` turns the attributes into an exact hashable key; by default
    # the attributes themselves, unless a kind compares inexactly (floats:
    # 0.0 == -0.0) or by identity (traced functions): then no memo
    memo_attrs: Callable[[Attrs], Hashable] | None = None
    memo: dict[tuple, tuple[tuple[Spec, ...], int, Shape | None, DType | None]] = field(
        default_factory=dict, repr=False)
    # ops that read at positions an operand holds: index_bounds(shapes, attrs) ->
    # (operand number, dim, size): every value of that operand must lie in
    # [0, size). The reference kernel raises on its own; the ``check-indices``
    # pass makes the other backends raise too (they would clamp or read anywhere)
    index_bounds: Callable[[Sequence[Shape], Attrs], tuple[int, int, int]] | None = None

    def __post_init__(self) -> None:
        for kind in self.attrs.values():
            assert kind in ATTR_KINDS, (self.name, kind)
        # attribute values that are their own canonical encoding (no floats, arrays...)
        self.plain_attrs = all(k in ("int", "ints", "bool", "str", "opt_int", "opt_str")
                               for k in self.attrs.values())
        if self.memo_attrs is None and all(k not in ("float", "func")
                                           for k in self.attrs.values()):
            self.memo_attrs = _attr_items  # dense values key by identity: exact

    def check(self, shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: Attrs
              ) -> tuple[Spec, ...]:
        """Arity check, then the op's own rule. Raises ShapeError."""
        if self.num_inputs is None:
            if not shapes:
                raise ShapeError(self.name, "expects at least one operand")
        elif len(shapes) != self.num_inputs:
            raise ShapeError(self.name, f"expects {self.num_inputs} operand(s), "
                                        f"got {len(shapes)}")
        return self.infer(shapes, dtypes, attrs)

    def __repr__(self) -> str:
        return f"OpDef({self.name})"


OPS: dict[str, OpDef] = {}


def define(op: OpDef) -> OpDef:
    assert op.name not in OPS, f"op {op.name} defined twice"
    OPS[op.name] = op
    return op


def get_op(name: str) -> OpDef:
    try:
        return OPS[name]
    except KeyError:
        raise KeyError(f"unknown pyflame op {name!r}") from None


def by_op(table: dict[str, Any]) -> dict[OpDef, Any]:
    """A table written with op names, keyed by their ``OpDef``s (a misspelt
    name fails here, at import, instead of silently never matching)."""
    return {get_op(name): v for name, v in table.items()}


# ---- shared rule helpers (used by several families) ----

def broadcast_shapes(op: str, shapes: Sequence[Shape]) -> Shape:
    """numpy broadcasting of any number of shapes, with an error that names them."""
    if len(shapes) == 1:
        return shapes[0]
    if len(shapes) == 2 and shapes[0] == shapes[1]:
        return shapes[0]
    ndim = max(len(s) for s in shapes)
    out = [1] * ndim
    for s in shapes:
        off = ndim - len(s)
        for i, d in enumerate(s):
            o = out[off + i]
            if d == o or d == 1:
                continue
            if o == 1:
                out[off + i] = d
            else:
                raise ShapeError(op, "shapes " + ", ".join(fmt_shape(x) for x in shapes)
                                 + " cannot be broadcast together (dimension "
                                 f"{i - len(s)} is {o} in one and {d} in another; "
                                 "sizes must match or be 1)")
    return tuple(out)


def normalize_dim(op: str, dim: int, ndim: int) -> int:
    """Wrap a possibly negative dimension into [0, ndim)."""
    if not isinstance(dim, int | np.integer) or isinstance(dim, bool):
        raise ShapeError(op, f"dimension must be an int, got {dim!r}")
    lo, hi = (-ndim, ndim - 1) if ndim else (-1, 0)
    if not lo <= dim <= hi:
        raise ShapeError(op, f"dimension {dim} is out of range for a tensor of rank {ndim} "
                             f"(expected in [{lo}, {hi}])")
    return int(dim) % ndim if ndim else 0


def check_dims(op: str, dims: Sequence[int], ndim: int) -> None:
    """Attribute dims in IR are already normalized: in range, sorted, unique."""
    for d in dims:
        if not 0 <= d < max(ndim, 1):
            raise ShapeError(op, f"dimension {d} is out of range for rank {ndim}")
    if list(dims) != sorted(set(dims)):
        raise ShapeError(op, f"dimensions {list(dims)} must be sorted and unique")


def same_dtype(op: str, dtypes: Sequence[DType]) -> DType:
    first = dtypes[0]
    for d in dtypes[1:]:
        if d is not first:
            raise ShapeError(op, "operands must have one element type, got "
                             + ", ".join(x.name for x in dtypes))
    return first


def numel(shape: Shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n
