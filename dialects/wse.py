"""The ``wse`` dialect: tensors placed on a rectangle of processing elements.

The mid level between ``pyflame`` (whole tensors) and ``csl`` (one program per
PE). A ``wse.program`` names the PE rectangle (``width`` columns x ``height``
rows); every value in it is a ``!wse.tensor``: a logical tensor shape and
element type plus a *layout* saying where its elements live.

Layouts (``#wse.layout``)::

    #wse.layout<[y, x]>            dim 0 tiled over the rows (y), dim 1 over the columns (x)
    #wse.layout<[y, -], x = *>     dim 0 over y, dim 1 whole; replicated on every column
    #wse.layout<[y, -], x = 0>     ... held by column 0 only
    #wse.layout<[y], x = sum>      dim 0 over y; each column holds a partial sum
    #wse.layout<[], x = 0, y = 0>  a scalar on PE (0, 0)

Each tensor dim is tiled over grid axis ``x`` or ``y`` in equal blocks of
``ceil(n / G)`` elements (the last PE may hold fewer: its *valid extent*;
every PE holds at least one element, else the dim cannot use that axis), or
kept whole (``-``). A grid axis no dim uses has a *state*: ``*``
(replicated), an index (held by that line of PEs only), or ``sum`` / ``max``
(every PE along it holds a partial result that ``wse.combine`` reduces). On
every PE a tile is stored row-major in its tile shape, padded to the full
block size; padding holds garbage that no op reads as data.

Ops: local compute on tiles (``wse.map``, ``wse.reduce``, ``wse.matmul``,
``wse.transpose``, ``wse.reshape``, ``wse.scatter``, ``wse.constant``) and
communication along one grid axis (``wse.combine`` chain reduction,
``wse.broadcast`` from any index, ``wse.gather`` all-gather, ``wse.shift``),
plus ``wse.summa`` (a distributed GEMM looping over K panels) and
``wse.relayout`` (the tile grid transposed on a square grid: a dim tiled over
one axis moves to the other, a tile per PE in flight). Every op
computes its result type from its operands with one Python rule
(``infer_*``), used both by the verifier and by the lowering that builds the
ops, so they cannot disagree.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    BoolAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    IntAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import (
    Attribute,
    Block,
    Dialect,
    ParametrizedAttribute,
    Region,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    prop_def,
    region_def,
    result_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsTerminator
from xdsl.utils.exceptions import VerifyException

from .wse_target import WSE_FNS

AXES = ("x", "y")
PARTIALS = ("sum", "max")
NONE = "-"

# ---- layouts in Python ----


class LayoutError(ValueError):
    """Operands whose layouts an op cannot take (the verifier's message)."""


@dataclass(frozen=True)
class Layout:
    """Where a tensor's elements live (see the module docstring).

    ``dims[i]`` is ``"x"``, ``"y"`` or ``"-"``; ``x``/``y`` are the states of
    the grid axes no dim uses (``""`` when a dim uses the axis).
    """

    dims: tuple[str, ...]
    x: str = ""
    y: str = ""

    def __post_init__(self) -> None:
        for d in self.dims:
            if d not in ("x", "y", NONE):
                raise LayoutError(f"dimension placement {d!r} must be x, y or -")
        for a in AXES:
            used = self.dims.count(a)
            st = getattr(self, a)
            if used > 1:
                raise LayoutError(f"two dimensions are tiled over axis {a}")
            if used and st:
                raise LayoutError(f"axis {a} tiles a dimension and cannot also be '{st}'")
            if not used and not _valid_state(st):
                raise LayoutError(f"axis {a} is used by no dimension: its state must be *, "
                                  f"sum, max or an index, not {st!r}")

    # -- queries --
    def state(self, axis: str) -> str:
        """``"dim"`` when a dim is tiled over ``axis``, else the axis state."""
        return "dim" if axis in self.dims else getattr(self, axis)

    def dim_on(self, axis: str) -> int | None:
        return self.dims.index(axis) if axis in self.dims else None

    def held_at(self, axis: str) -> int | None:
        st = self.state(axis)
        return int(st) if st.isdigit() else None

    def partial(self, axis: str) -> str | None:
        st = self.state(axis)
        return st if st in PARTIALS else None

    @property
    def is_partial(self) -> bool:
        return any(self.partial(a) for a in AXES)

    @property
    def is_replicated(self) -> bool:
        return any(self.state(a) == "*" for a in AXES)

    def with_state(self, axis: str, st: str) -> Layout:
        return replace(self, **{axis: st})

    def __str__(self) -> str:
        extra = "".join(f", {a} = {getattr(self, a)}" for a in AXES if getattr(self, a))
        return f"[{', '.join(self.dims)}]{extra}"

    @staticmethod
    def parse(text: str) -> Layout:
        """``"[y, x]"``, ``"[y, -], x = *"`` (the attribute's body)."""
        text = text.strip()
        if not text.startswith("["):
            raise LayoutError(f"bad layout {text!r}")
        close = text.index("]")
        inner = text[1:close].strip()
        dims = tuple(d.strip() for d in inner.split(",")) if inner else ()
        states: dict[str, str] = {}
        for item in filter(None, (s.strip() for s in text[close + 1:].split(","))):
            k, _, v = item.partition("=")
            states[k.strip()] = v.strip()
        if set(states) - set(AXES):
            raise LayoutError(f"unknown grid axis in {text!r}")
        return Layout(dims, states.get("x", ""), states.get("y", ""))


def _valid_state(st: str) -> bool:
    return st == "*" or st in PARTIALS or st.isdigit()


@dataclass(frozen=True)
class Grid:
    width: int  # columns (x)
    height: int  # rows (y)

    def size(self, axis: str) -> int:
        return self.width if axis == "x" else self.height

    @property
    def pes(self) -> int:
        return self.width * self.height

    def __str__(self) -> str:
        return f"{self.width}x{self.height}"


def block_size(n: int, g: int) -> int:
    return -(-n // g) if n else 0


def can_tile(n: int, g: int) -> bool:
    """Every one of ``g`` PEs gets at least one of ``n`` elements in blocks of ceil(n/g)."""
    return g == 1 or (n >= g and (g - 1) * block_size(n, g) < n)


def valid_extent(n: int, g: int, p: int) -> int:
    t = block_size(n, g)
    return max(0, min(t, n - p * t))


def tile_shape(shape: Sequence[int], layout: Layout, grid: Grid) -> tuple[int, ...]:
    return tuple(n if d == NONE else block_size(n, grid.size(d))
                 for n, d in zip(shape, layout.dims))


def tile_elems(shape: Sequence[int], layout: Layout, grid: Grid) -> int:
    return max(1, math.prod(tile_shape(shape, layout, grid)))


def check_layout(shape: Sequence[int], layout: Layout, grid: Grid) -> None:
    if len(shape) != len(layout.dims):
        raise LayoutError(f"layout {layout} has {len(layout.dims)} dimension(s) for a "
                          f"rank-{len(shape)} tensor")
    for i, (n, d) in enumerate(zip(shape, layout.dims)):
        if d != NONE and not can_tile(n, grid.size(d)):
            raise LayoutError(f"dimension {i} of size {n} cannot be tiled over the "
                              f"{grid.size(d)} PEs of axis {d} (each PE needs at least one "
                              "element)")
    for a in AXES:
        k = layout.held_at(a)
        if k is not None and k >= grid.size(a):
            raise LayoutError(f"index {k} is outside axis {a} of the {grid} grid")


# ---- attributes and the tensor type ----


@irdl_attr_definition
class LayoutAttr(ParametrizedAttribute):
    """``#wse.layout<[y, x]>``, ``#wse.layout<[y, -], x = *>`` (see the module docstring)."""

    name = "wse.layout"

    dims: ArrayAttr[StringAttr]
    x: StringAttr
    y: StringAttr

    @staticmethod
    def get(layout: Layout) -> LayoutAttr:
        return LayoutAttr(ArrayAttr(StringAttr(d) for d in layout.dims),
                          StringAttr(layout.x), StringAttr(layout.y))

    @property
    def layout(self) -> Layout:
        return Layout(tuple(d.data for d in self.dims), self.x.data, self.y.data)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.layout}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            dims = parser.parse_comma_separated_list(parser.Delimiter.SQUARE,
                                                     lambda: _parse_placement(parser))
            states = {"x": "", "y": ""}
            while parser.parse_optional_punctuation(","):
                axis = parser.parse_identifier()
                if axis not in AXES:
                    parser.raise_error(f"unknown grid axis {axis!r} (expected x or y)")
                parser.parse_punctuation("=")
                states[axis] = _parse_state(parser)
        return (ArrayAttr(StringAttr(d) for d in dims), StringAttr(states["x"]),
                StringAttr(states["y"]))

    def verify(self) -> None:
        try:
            self.layout  # noqa: B018 - the constructor checks
        except LayoutError as e:
            raise VerifyException(str(e)) from None


def _parse_placement(parser: AttrParser) -> str:
    if parser.parse_optional_punctuation("-"):
        return NONE
    return parser.parse_identifier()


def _parse_state(parser: AttrParser) -> str:
    if parser.parse_optional_punctuation("*"):
        return "*"
    n = parser.parse_optional_integer(allow_negative=False)
    if n is not None:
        return str(n)
    return parser.parse_identifier()


@irdl_attr_definition
class TensorTypeAttr(ParametrizedAttribute, TypeAttribute):
    """``!wse.tensor<16x8xf32, #wse.layout<[y, x]>>``: a placed tensor.

    Element types are ``f32``, ``f16`` (half precision: 2 bytes per element on the PE,
    computed with the f16 DSD builtins) and ``i1`` (a mask, stored as 0.0/1.0 in f32).
    """

    name = "wse.tensor"

    shape: ArrayAttr[IntAttr]
    element_type: Attribute
    layout_attr: LayoutAttr

    @staticmethod
    def get(shape: Sequence[int], element_type: Attribute, layout: Layout) -> TensorTypeAttr:
        return TensorTypeAttr(ArrayAttr(IntAttr(int(n)) for n in shape), element_type,
                              LayoutAttr.get(layout))

    @property
    def dims(self) -> tuple[int, ...]:
        return tuple(n.data for n in self.shape)

    @property
    def layout(self) -> Layout:
        return self.layout_attr.layout

    @property
    def is_mask(self) -> bool:
        return self.element_type == IntegerType(1)

    @property
    def is_half(self) -> bool:
        return self.element_type == Float16Type()

    def tile(self, grid: Grid) -> tuple[int, ...]:
        return tile_shape(self.dims, self.layout, grid)

    def elems(self, grid: Grid) -> int:
        return tile_elems(self.dims, self.layout, grid)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<" + "".join(f"{n}x" for n in self.dims))
        printer.print_attribute(self.element_type)
        printer.print_string(", ")
        printer.print_attribute(self.layout_attr)
        printer.print_string(">")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            shape, elt = parser.parse_ranked_shape()
            parser.parse_punctuation(",")
            lay = parser.parse_attribute()
        if not isinstance(lay, LayoutAttr):
            parser.raise_error(f"expected a #wse.layout, got {lay}")
        return ArrayAttr(IntAttr(n) for n in shape), elt, lay

    def verify(self) -> None:
        if self.element_type not in (Float32Type(), Float16Type(), IntegerType(1)):
            raise VerifyException(f"wse tensors hold f32, f16 or i1, not {self.element_type}")
        if any(n.data < 0 for n in self.shape):
            raise VerifyException("wse tensors have static, non-negative sizes")
        if len(self.shape) != len(self.layout_attr.dims):
            raise VerifyException(f"layout {self.layout} does not match rank {len(self.shape)}")
        if len(self.shape) > 2 and any(d != NONE for d in self.layout.dims):
            raise VerifyException("wse tensors of rank 3 or more are whole on every PE "
                                  "(only data movement runs on them)")


def wse_type(shape: Sequence[int], layout: Layout, mask: bool = False,
             half: bool = False) -> TensorTypeAttr:
    """``half``: f16 elements (``mask`` wins: masks are f32 0/1 words)."""
    elt = IntegerType(1) if mask else Float16Type() if half else Float32Type()
    return TensorTypeAttr.get(shape, elt, layout)


def _ttype(v: SSAValue, what: str) -> TensorTypeAttr:
    if not isinstance(v.type, TensorTypeAttr):
        raise VerifyException(f"{what} must be a !wse.tensor, got {v.type}")
    return v.type


# ---- the result rules (shared by the verifiers and the lowering) ----

Spec = tuple[tuple[int, ...], Layout]


def _combine_states(states: Sequence[str], what: str) -> str:
    """States of one grid axis over operands of a local op: all ``*``, or one index."""
    held = {s for s in states if s != "*"}
    for s in held:
        if s in PARTIALS:
            raise LayoutError(f"{what} holds partial '{s}' results: wse.combine them first")
        if s == "dim":
            raise LayoutError(f"{what} is tiled over this axis where the others are not")
    if len(held) > 1:
        raise LayoutError(f"{what} is held by different lines of PEs ({sorted(held)})")
    return held.pop() if held else "*"


# name -> arity; results are f32 unless listed in MASK_FNS (from the target's records)
MAP_FNS: dict[str, int] = {f.name: f.arity for f in WSE_FNS.values()}
MASK_FNS = frozenset(f.name for f in WSE_FNS.values() if f.mask)


def broadcast_shape(shapes: Sequence[Sequence[int]]) -> tuple[int, ...]:
    rank = max((len(s) for s in shapes), default=0)
    out = [1] * rank
    for s in shapes:
        for i, n in enumerate(s):
            j = rank - len(s) + i
            if n != 1:
                if out[j] not in (1, n):
                    raise LayoutError(f"shapes {[list(x) for x in shapes]} do not broadcast")
                out[j] = n
    return tuple(out)


def infer_map(operands: Sequence[Spec], result: Layout, grid: Grid,
              result_shape: Sequence[int] | None = None) -> tuple[int, ...]:
    """Check that the operands fit ``result`` for a local elementwise op; return its shape:
    the operands' broadcast shape, or ``result_shape`` when they broadcast to it
    (``broadcast_to``).

    A result dim tiled over axis a needs, from each operand, the same dim tiled
    over a, or (when the operand broadcasts along it) the operand replicated
    over a. Axes no result dim uses need operands that are replicated or held
    by the result's line.
    """
    shapes = [s for s, _ in operands] + ([tuple(result_shape)] if result_shape else [])
    shape = broadcast_shape(shapes)
    if result_shape is not None and shape != tuple(result_shape):
        raise LayoutError(f"operands {[list(s) for s, _ in operands]} do not broadcast to "
                          f"{list(result_shape)}")
    if len(result.dims) != len(shape):
        raise LayoutError(f"result layout {result} does not fit shape {list(shape)}")
    for k, (s, lay) in enumerate(operands):
        off = len(shape) - len(s)
        for j, n in enumerate(s):
            if n == 1 and shape[off + j] != 1 and lay.dims[j] != NONE:
                raise LayoutError(f"operand #{k} broadcasts dimension {j} but tiles it")
        for i, d in enumerate(result.dims):
            j = i - off
            full = j >= 0 and (s[j] == shape[i])
            if full:
                if lay.dims[j] != d:
                    raise LayoutError(f"operand #{k} places dimension {j} on "
                                      f"'{lay.dims[j]}' but the result on '{d}'")
            elif d != NONE and lay.state(d) != "*":
                raise LayoutError(f"operand #{k} broadcasts along dimension {i}, tiled over "
                                  f"axis {d}: it must be replicated over {d}, not "
                                  f"'{lay.state(d)}'")
    for a in AXES:
        if result.state(a) == "dim":
            continue
        got = _combine_states([lay.state(a) for _, lay in operands] or ["*"],
                              f"an operand (axis {a})")
        want = result.state(a)
        if want in PARTIALS:
            raise LayoutError("an elementwise result cannot be partial")
        if want == "*" and got != "*":
            raise LayoutError(f"the result is replicated over {a}, the operands only at {got}")
        if want != "*" and got not in ("*", want):
            raise LayoutError(f"the result is held at {a} = {want}, an operand at {got}")
    return shape


def infer_reduce(shape: Sequence[int], lay: Layout, dims: Sequence[int], keepdim: bool,
                 kind: str) -> Spec:
    if kind not in PARTIALS:
        raise LayoutError(f"reduction kind must be one of {PARTIALS}, not {kind!r}")
    if lay.is_partial:
        raise LayoutError("cannot reduce a partial result: wse.combine it first")
    if list(dims) != sorted(set(dims)) or any(not 0 <= d < len(shape) for d in dims):
        raise LayoutError(f"dims {list(dims)} must be sorted, unique and in range")
    out_shape, out_dims = [], []
    states = {"x": lay.x, "y": lay.y}
    for i, (n, d) in enumerate(zip(shape, lay.dims)):
        if i in dims:
            if d != NONE:
                states[d] = kind
            if keepdim:
                out_shape.append(1)
                out_dims.append(NONE)
        else:
            out_shape.append(n)
            out_dims.append(d)
    return tuple(out_shape), Layout(tuple(out_dims), states["x"], states["y"])


def infer_combine(shape: Sequence[int], lay: Layout, axis: str) -> Spec:
    if lay.partial(axis) is None:
        raise LayoutError(f"wse.combine along {axis} needs partial results over {axis}, "
                          f"got '{lay.state(axis)}'")
    return tuple(shape), lay.with_state(axis, "0")


def infer_broadcast(shape: Sequence[int], lay: Layout, axis: str) -> Spec:
    if lay.held_at(axis) is None:
        raise LayoutError(f"wse.broadcast along {axis} needs a tensor held by one line of "
                          f"{axis}, got '{lay.state(axis)}'")
    return tuple(shape), lay.with_state(axis, "*")


def infer_gather(shape: Sequence[int], lay: Layout, axis: str) -> Spec:
    i = lay.dim_on(axis)
    if i is None:
        raise LayoutError(f"wse.gather along {axis} needs a dimension tiled over {axis}")
    other = "y" if axis == "x" else "x"
    if lay.state(other) in PARTIALS:
        raise LayoutError("cannot gather a partial result")
    dims = list(lay.dims)
    dims[i] = NONE
    return tuple(shape), Layout(tuple(dims), **{axis: "*", other: getattr(lay, other)})


def infer_scatter(shape: Sequence[int], lay: Layout, axis: str, dim: int) -> Spec:
    if not 0 <= dim < len(shape) or lay.dims[dim] != NONE:
        raise LayoutError(f"wse.scatter needs dimension {dim} whole on every PE")
    if lay.state(axis) != "*":
        raise LayoutError(f"wse.scatter needs the tensor replicated over {axis}, "
                          f"got '{lay.state(axis)}'")
    dims = list(lay.dims)
    dims[dim] = axis
    return tuple(shape), Layout(tuple(dims), **{a: getattr(lay, a) for a in AXES if a != axis})


def infer_shift(shape: Sequence[int], lay: Layout, axis: str, distance: int) -> Spec:
    if distance == 0:
        raise LayoutError("wse.shift needs a non-zero distance")
    if lay.state(axis) in PARTIALS:
        raise LayoutError("cannot shift a partial result")
    return tuple(shape), lay


def infer_transpose(shape: Sequence[int], lay: Layout) -> Spec:
    if len(shape) != 2:
        raise LayoutError("wse.transpose takes a rank-2 tensor")
    return (shape[1], shape[0]), Layout((lay.dims[1], lay.dims[0]), lay.x, lay.y)


def infer_reshape(shape: Sequence[int], lay: Layout, new_shape: Sequence[int]) -> Spec:
    """Only unit dimensions may come or go: the tile bytes do not move. A tensor
    whole on every PE (no dim tiled) takes any reshape: its tile is the row-major
    tensor."""
    if all(d == NONE for d in lay.dims) and math.prod(shape) == math.prod(new_shape):
        return tuple(new_shape), Layout(tuple(NONE for _ in new_shape), lay.x, lay.y)

    def core(s, dims):
        return [(n, d) for n, d in zip(s, dims) if n != 1]
    kept = core(shape, lay.dims)
    if [n for n, _ in kept] != [n for n in new_shape if n != 1]:
        raise LayoutError(f"wse.reshape {list(shape)} -> {list(new_shape)} may only insert or "
                          "remove unit dimensions")
    if any(d != NONE for n, d in zip(shape, lay.dims) if n == 1):
        raise LayoutError("wse.reshape cannot drop a unit dimension that is tiled")
    it = iter(d for _, d in kept)
    dims = tuple(NONE if n == 1 else next(it) for n in new_shape)
    return tuple(new_shape), Layout(dims, lay.x, lay.y)


def infer_matmul(a: Spec, b: Spec) -> Spec:
    """Local tile matmul. K must sit on the same axis (or be whole) in both
    operands; a K tiled over axis g makes the result partial over g. An axis
    carrying M needs B replicated over it; an axis carrying N, A replicated."""
    (sa, la), (sb, lb) = a, b
    if len(sa) not in (1, 2) or len(sb) not in (1, 2):
        raise LayoutError("wse.matmul takes rank-1 or rank-2 operands")
    if sa[-1] != sb[0]:
        raise LayoutError(f"contracted sizes differ: {sa[-1]} and {sb[0]}")
    if la.is_partial or lb.is_partial:
        raise LayoutError("cannot multiply partial results: wse.combine them first")
    k_axis = la.dims[-1]
    if lb.dims[0] != k_axis:
        raise LayoutError(f"K is on '{k_axis}' in A but on '{lb.dims[0]}' in B")
    m_axis = la.dims[0] if len(sa) == 2 else None
    n_axis = lb.dims[1] if len(sb) == 2 else None
    states: dict[str, str] = {}
    for g in AXES:
        if g == k_axis:
            states[g] = "sum"
        elif g == m_axis:
            if lb.state(g) != "*":
                raise LayoutError(f"M is tiled over {g}: B must be replicated over {g}, "
                                  f"got '{lb.state(g)}'")
        elif g == n_axis:
            if la.state(g) != "*":
                raise LayoutError(f"N is tiled over {g}: A must be replicated over {g}, "
                                  f"got '{la.state(g)}'")
        else:
            states[g] = _combine_states([la.state(g), lb.state(g)], f"an operand (axis {g})")
    shape, dims = [], []
    if m_axis is not None:
        shape.append(sa[0])
        dims.append(m_axis)
    if n_axis is not None:
        shape.append(sb[1])
        dims.append(n_axis)
    return tuple(shape), Layout(tuple(dims), states.get("x", ""), states.get("y", ""))


def infer_summa(a: Spec, b: Spec, grid: Grid) -> Spec:
    """Distributed GEMM: A [a(M), b(K)], B [a(K), b(N)] -> C [a(M), b(N)]; K is
    streamed in panels broadcast along b (A's) and along a (B's)."""
    (sa, la), (sb, lb) = a, b
    if len(sa) != 2 or len(sb) != 2 or sa[1] != sb[0]:
        raise LayoutError("wse.summa multiplies [M, K] by [K, N]")
    if NONE in la.dims or lb.dims != la.dims:
        raise LayoutError(f"wse.summa needs A and B both tiled over both axes in the same "
                          f"order, got {la} and {lb}")
    if grid.width != grid.height:
        raise LayoutError(f"wse.summa needs a square grid (A's and B's K blocks must match), "
                          f"got {grid}")
    return (sa[0], sb[1]), Layout(la.dims)


# ---- ops ----


class _WseOp(IRDLOperation):
    """Base: finds the grid of the enclosing ``wse.program``."""

    def grid(self) -> Grid:
        p = self.parent_op()
        while p is not None and not isinstance(p, ProgramOp):
            p = p.parent_op()
        if p is None:
            raise VerifyException(f"{self.name} must be inside a wse.program")
        return p.grid

    def _check(self, expected: Spec, mask: bool | None = None) -> None:
        t = _ttype(self.results[0], "the result")
        shape, lay = expected
        if t.dims != tuple(shape) or t.layout != lay:
            raise VerifyException(f"result must be {wse_type(shape, lay)}, got {t}")
        if mask is not None and t.is_mask != mask:
            raise VerifyException(f"result element type must be {'i1' if mask else 'f32'}")

    def _run(self, fn, *args):
        try:
            return fn(*args)
        except LayoutError as e:
            raise VerifyException(str(e)) from None


def _spec(v: SSAValue, what: str) -> Spec:
    t = _ttype(v, what)
    return t.dims, t.layout


def _axis_prop(op: IRDLOperation) -> str:
    a = op.axis.data  # type: ignore[attr-defined]
    if a not in AXES:
        raise VerifyException(f"axis must be x or y, not {a!r}")
    return a


@irdl_op_definition
class ProgramOp(IRDLOperation):
    """``wse.program @main {width = 4, height = 4} { ^bb0(%in...): ... wse.return %out... }``.

    Block arguments are the program's inputs, copied in by the host: each
    element lives on exactly one PE (no replicated or partial inputs).
    """

    name = "wse.program"
    sym_name = prop_def(StringAttr)
    width = prop_def(IntegerAttr)
    height = prop_def(IntegerAttr)
    body = region_def("single_block")

    def __init__(self, name: str, grid: Grid, block: Block):
        super().__init__(properties={"sym_name": StringAttr(name),
                                     "width": IntegerAttr(grid.width, i64),
                                     "height": IntegerAttr(grid.height, i64)},
                         regions=[Region(block)])

    @property
    def grid(self) -> Grid:
        return Grid(self.width.value.data, self.height.value.data)

    @property
    def return_op(self) -> ReturnOp:
        last = self.body.block.last_op
        assert isinstance(last, ReturnOp)
        return last

    def verify_(self) -> None:
        g = self.grid
        if g.width < 1 or g.height < 1:
            raise VerifyException(f"the grid must not be empty, got {g}")
        if not isinstance(self.body.block.last_op, ReturnOp):
            raise VerifyException("the body must end with wse.return")
        for i, arg in enumerate(self.body.block.args):
            t = _ttype(arg, f"input #{i}")
            if t.layout.is_replicated or t.layout.is_partial:
                raise VerifyException(f"input #{i} has layout {t.layout}: inputs live on one "
                                      "PE per element (not replicated, not partial)")
        values = [(f"input #{i}", a) for i, a in enumerate(self.body.block.args)]
        values += [(op.name, r) for op in self.body.walk() for r in op.results]
        for what, v in values:
            if isinstance(v.type, TensorTypeAttr):
                try:
                    check_layout(v.type.dims, v.type.layout, g)
                except LayoutError as e:
                    raise VerifyException(f"{what}: {v.type}: {e}") from None

    @classmethod
    def parse(cls, parser: Parser) -> ProgramOp:
        name = parser.parse_symbol_name().data
        attrs = parser.parse_optional_attr_dict()
        w, h = attrs.get("width"), attrs.get("height")
        if not isinstance(w, IntegerAttr) or not isinstance(h, IntegerAttr):
            parser.raise_error("wse.program needs {width = W, height = H}")
        region = parser.parse_region()
        op = cls.__new__(cls)
        extra = {k: v for k, v in attrs.items() if k not in ("width", "height")}
        IRDLOperation.__init__(op, properties={"sym_name": StringAttr(name), "width": w,
                                               "height": h}, regions=[region], attributes=extra)
        return op

    def print(self, printer: Printer) -> None:
        g = self.grid
        printer.print_string(f" @{self.sym_name.data} {{width = {g.width}, height = {g.height}")
        for k, v in self.attributes.items():
            printer.print_string(f", {k} = ")
            printer.print_attribute(v)
        printer.print_string("} ")
        printer.print_region(self.body, print_entry_block_args=True)


@irdl_op_definition
class ReturnOp(IRDLOperation):
    """The program's outputs, copied out by the host (not partial)."""

    name = "wse.return"
    values = var_operand_def()
    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(ProgramOp)))
    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[list(values)])

    def verify_(self) -> None:
        for i, v in enumerate(self.values):
            if _ttype(v, f"output #{i}").layout.is_partial:
                raise VerifyException(f"output #{i} is partial: wse.combine it first")


@irdl_op_definition
class ConstantOp(_WseOp):
    """A splat value filling every PE's tile (``value`` is a 0-d or splat dense attribute)."""

    name = "wse.constant"
    value = prop_def(DenseIntOrFPElementsAttr)
    result = result_def(TensorTypeAttr)
    assembly_format = "$value attr-dict `:` type($result)"

    def __init__(self, value: float, t: TensorTypeAttr):
        attr = DenseIntOrFPElementsAttr.from_list(TensorType(Float32Type(), []), [float(value)])
        super().__init__(properties={"value": attr}, result_types=[t])

    @property
    def scalar(self) -> float:
        vals = list(self.value.iter_values())
        return float(vals[0])

    def verify_(self) -> None:
        vals = list(self.value.iter_values())
        first = vals[0] if vals else None  # (a NaN splat is a splat: NaN != NaN)
        if not vals or any(v != first and not (v != v and first != first) for v in vals):
            raise VerifyException("wse.constant holds one splat value")
        if _ttype(self.result, "result").layout.is_partial:
            raise VerifyException("a constant cannot be partial")


@irdl_op_definition
class MapOp(_WseOp):
    """Local elementwise op on tiles, with numpy broadcasting (``fn`` from ``MAP_FNS``)."""

    name = "wse.map"
    fn = prop_def(StringAttr)
    inputs = var_operand_def(TensorTypeAttr)
    result = result_def(TensorTypeAttr)
    assembly_format = "$fn `(` $inputs `)` attr-dict `:` functional-type($inputs, $result)"

    def __init__(self, fn: str, inputs: Sequence[SSAValue], t: TensorTypeAttr):
        super().__init__(properties={"fn": StringAttr(fn)}, operands=[list(inputs)],
                         result_types=[t])

    def verify_(self) -> None:
        fn = self.fn.data
        if fn not in MAP_FNS:
            raise VerifyException(f"unknown elementwise fn {fn!r}")
        if len(self.inputs) != MAP_FNS[fn]:
            raise VerifyException(f"{fn} takes {MAP_FNS[fn]} operand(s), got {len(self.inputs)}")
        specs = [_spec(v, f"operand #{i}") for i, v in enumerate(self.inputs)]
        t = _ttype(self.result, "result")
        shape = self._run(infer_map, specs, t.layout, self.grid(), t.dims)
        self._check((shape, t.layout), fn in MASK_FNS)


@irdl_op_definition
class ReduceOp(_WseOp):
    """Local reduction of each tile over ``dims`` (valid elements only); an axis a
    reduced dim was tiled over becomes partial (``kind``)."""

    name = "wse.reduce"
    kind = prop_def(StringAttr)
    dims = prop_def(DenseArrayBase)
    keepdim = prop_def(BoolAttr)
    input = operand_def(TensorTypeAttr)
    result = result_def(TensorTypeAttr)
    assembly_format = "$kind $input attr-dict `:` type($input) `->` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, kind: str, x: SSAValue, dims: Sequence[int], keepdim: bool,
                 t: TensorTypeAttr):
        super().__init__(properties={"kind": StringAttr(kind),
                                     "dims": DenseArrayBase.from_list(i64, list(dims)),
                                     "keepdim": BoolAttr.from_bool(keepdim)},
                         operands=[x], result_types=[t])

    @property
    def reduced(self) -> tuple[int, ...]:
        return tuple(self.dims.get_values())

    def verify_(self) -> None:
        s, lay = _spec(self.input, "the operand")
        self._check(self._run(infer_reduce, s, lay, self.reduced,
                              bool(self.keepdim.value.data), self.kind.data))


class _AxisOp(_WseOp):
    axis = prop_def(StringAttr)
    input = operand_def(TensorTypeAttr)
    result = result_def(TensorTypeAttr)
    assembly_format = "$axis $input attr-dict `:` type($input) `->` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    # the result rule shared with the lowering: RULE(shape, layout, axis, *rule_args())
    RULE: ClassVar[Callable[..., Any]]

    def __init__(self, axis: str, x: SSAValue, t: TensorTypeAttr,
                 extra: dict[str, Attribute] | None = None):
        super().__init__(properties={"axis": StringAttr(axis), **(extra or {})}, operands=[x],
                         result_types=[t])

    def rule_args(self) -> tuple:
        return ()

    def verify_(self) -> None:
        s, lay = _spec(self.input, "the operand")
        self._check(self._run(type(self).RULE, s, lay, _axis_prop(self), *self.rule_args()))


@irdl_op_definition
class CombineOp(_AxisOp):
    """Reduce partial results along ``axis`` in a chain (toward index 0); the
    result is held by line 0 of that axis."""

    name = "wse.combine"
    RULE = infer_combine


@irdl_op_definition
class BroadcastOp(_AxisOp):
    """Copy a tensor held by one line of ``axis`` to every line (multicast)."""

    name = "wse.broadcast"
    RULE = infer_broadcast


@irdl_op_definition
class GatherOp(_AxisOp):
    """All-gather along ``axis``: the dim tiled over it becomes whole on every PE."""

    name = "wse.gather"
    RULE = infer_gather


@irdl_op_definition
class ScatterOp(_AxisOp):
    """Keep, on each PE, its block of dimension ``dim`` (a replicated tensor
    becomes tiled over ``axis``): a local copy."""

    name = "wse.scatter"
    RULE = infer_scatter
    dim = prop_def(IntegerAttr)

    def __init__(self, axis: str, x: SSAValue, dim: int, t: TensorTypeAttr):
        super().__init__(axis, x, t, {"dim": IntegerAttr(dim, i64)})

    def rule_args(self) -> tuple:
        return (self.dim.value.data,)


@irdl_op_definition
class ShiftOp(_AxisOp):
    """Every PE's tile moves ``distance`` PEs along ``axis`` (positive: east /
    south); PEs with no source keep zeros. Needs ``|distance| + 1`` colors."""

    name = "wse.shift"
    RULE = infer_shift
    distance = prop_def(IntegerAttr)

    def __init__(self, axis: str, x: SSAValue, distance: int, t: TensorTypeAttr):
        super().__init__(axis, x, t, {"distance": IntegerAttr(distance, i64)})

    def rule_args(self) -> tuple:
        d = self.distance.value.data
        g = self.grid().size(_axis_prop(self))
        if abs(d) >= g:
            raise VerifyException(f"shift distance {d} must be smaller than the {g} PEs of "
                                  f"axis {self.axis.data}")
        return (d,)


class _LocalUnaryOp(_WseOp):
    """One operand, one result, checked by a result rule shared with the lowering."""

    input = operand_def(TensorTypeAttr)
    result = result_def(TensorTypeAttr)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, x: SSAValue, t: TensorTypeAttr):
        super().__init__(operands=[x], result_types=[t])

    def verify_(self) -> None:
        s, lay = _spec(self.input, "the operand")
        self._check(self._verify_rule(s, lay))

    def _verify_rule(self, s: Any, lay: Any) -> Any:
        raise NotImplementedError


@irdl_op_definition
class TransposeOp(_LocalUnaryOp):
    """Swap the two dims (and their placements): each tile is transposed locally."""

    name = "wse.transpose"

    def _verify_rule(self, s: Any, lay: Any) -> Any:
        return self._run(infer_transpose, s, lay)


@irdl_op_definition
class ReshapeOp(_LocalUnaryOp):
    """Insert or remove unit dims, or reshape a tensor whole on every PE: the tile
    bytes stay where they are."""

    name = "wse.reshape"

    def _verify_rule(self, s: Any, lay: Any) -> Any:
        return self._run(infer_reshape, s, lay, _ttype(self.result, "the result").dims)


class _TileProductOp(_WseOp):
    """A product of two tiled operands, checked by a rule shared with the lowering."""

    lhs = operand_def(TensorTypeAttr)
    rhs = operand_def(TensorTypeAttr)
    result = result_def(TensorTypeAttr)
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def __init__(self, a: SSAValue, b: SSAValue, t: TensorTypeAttr):
        super().__init__(operands=[a, b], result_types=[t])

    def verify_(self) -> None:
        self._check(self._verify_rule(_spec(self.lhs, "A"), _spec(self.rhs, "B")))

    def _verify_rule(self, a: Any, b: Any) -> Any:
        raise NotImplementedError


@irdl_op_definition
class MatmulOp(_TileProductOp):
    """Local matmul of tiles over the valid K extent (see ``infer_matmul``)."""

    name = "wse.matmul"

    def _verify_rule(self, a: Any, b: Any) -> Any:
        return self._run(infer_matmul, a, b)


@irdl_op_definition
class SummaOp(_TileProductOp):
    """Distributed GEMM (SUMMA): for each K panel, A's panel is broadcast along
    the rows and B's along the columns from whichever PE holds it, and every PE
    accumulates its C tile. Needs a square grid (A's and B's K blocks match)."""

    name = "wse.summa"

    def _verify_rule(self, a: Any, b: Any) -> Any:
        return self._run(infer_summa, a, b, self.grid())


WSE = Dialect(
    "wse",
    [ProgramOp, ReturnOp, ConstantOp, MapOp, ReduceOp, CombineOp, BroadcastOp, GatherOp,
     ScatterOp, ShiftOp, TransposeOp, ReshapeOp, MatmulOp, SummaOp],
    [LayoutAttr, TensorTypeAttr],
)

__all__ = [
    "AXES", "MAP_FNS", "MASK_FNS", "NONE", "PARTIALS", "WSE", "BroadcastOp", "CombineOp",
    "ConstantOp", "GatherOp", "Grid", "Layout", "LayoutAttr", "LayoutError", "MapOp",
    "MatmulOp", "ProgramOp", "ReduceOp", "ReshapeOp", "ReturnOp", "ScatterOp", "ShiftOp",
    "SummaOp", "TensorTypeAttr", "TransposeOp", "block_size", "can_tile", "check_layout",
    "infer_broadcast", "infer_combine", "infer_gather", "infer_map", "infer_matmul",
    "infer_reduce", "infer_reshape", "infer_scatter", "infer_shift", "infer_summa",
    "infer_transpose", "tile_elems", "tile_shape", "valid_extent", "wse_type",
]


# ---- windows of tiles: slice, pad, concat (issue #16) ----
# Each is a local copy on every PE. The dims it cuts, pads or joins must be
# whole on every PE (the planner gathers them through the fabric first); the
# other dims keep their tiling, so their tiles are copied as they are.


def _window_dims(shape: Sequence[int], changed: Sequence[bool], lay: Layout, what: str) -> None:
    if len(shape) != len(lay.dims):
        raise LayoutError(f"{what}: layout {lay} has {len(lay.dims)} dimension(s) for a "
                          f"rank-{len(shape)} tensor")
    for i, (c, d) in enumerate(zip(changed, lay.dims)):
        if c and d != NONE:
            raise LayoutError(f"{what} changes dimension {i}, which is tiled over {d}: it "
                              "must be whole on every PE (gather it first)")
    if lay.is_partial:
        raise LayoutError(f"{what} of a partial result: wse.combine it first")


def infer_slice(shape: Sequence[int], lay: Layout, start: Sequence[int],
                limit: Sequence[int], stride: Sequence[int]) -> Spec:
    """Elements ``start + stride * i`` below ``limit`` of each dim."""
    if not len(start) == len(limit) == len(stride) == len(shape):
        raise LayoutError(f"wse.slice needs {len(shape)} start/limit/stride entries")
    if any(k < 1 or not 0 <= a < b <= n for n, a, b, k in zip(shape, start, limit, stride)):
        raise LayoutError(f"wse.slice window {list(start)}:{list(limit)}:{list(stride)} is "
                          f"empty or outside {list(shape)}")
    _window_dims(shape, [(a, b, k) != (0, n, 1) for n, a, b, k in
                         zip(shape, start, limit, stride)], lay, "wse.slice")
    return tuple(-(-(b - a) // k) for a, b, k in zip(start, limit, stride)), lay


def infer_pad(shape: Sequence[int], lay: Layout, low: Sequence[int], high: Sequence[int],
              interior: Sequence[int]) -> Spec:
    """Zeros before (``low``), after (``high``) and between (``interior``) elements."""
    if not len(low) == len(high) == len(interior) == len(shape):
        raise LayoutError(f"wse.pad needs {len(shape)} low/high/interior entries")
    if any(v < 0 for v in (*low, *high, *interior)) or 0 in shape:
        raise LayoutError("wse.pad needs non-negative padding of a non-empty tensor")
    _window_dims(shape, [any(t) for t in zip(low, high, interior)], lay, "wse.pad")
    return tuple(lo + hi + n + (n - 1) * k
                 for n, lo, hi, k in zip(shape, low, high, interior)), lay


def infer_concat(operands: Sequence[Spec], dim: int) -> Spec:
    """Operands joined along ``dim``, whole on every PE; the operands tile the other
    dims alike (an axis no dim uses may be replicated in some, held in others)."""
    if not operands:
        raise LayoutError("wse.concat needs operands")
    shape, lay = operands[0]
    if not 0 <= dim < len(shape):
        raise LayoutError(f"wse.concat dimension {dim} is out of range for rank {len(shape)}")
    for s, other in operands[1:]:
        if other.dims != lay.dims:
            raise LayoutError(f"wse.concat operands must tile the same dims, got {lay} and "
                              f"{other}")
        if len(s) != len(shape) or any(a != b for i, (a, b) in enumerate(zip(s, shape))
                                       if i != dim):
            raise LayoutError(f"wse.concat shapes {[list(s) for s, _ in operands]} differ "
                              f"outside dimension {dim}")
    # an axis no dim uses: replicated operands serve a line that holds another
    st = {a: "" if a in lay.dims else _combine_states(
        [other.state(a) for _, other in operands], "a wse.concat operand") for a in AXES}
    lay = Layout(lay.dims, st["x"], st["y"])
    _window_dims(shape, [i == dim for i in range(len(shape))], lay, "wse.concat")
    out = list(shape)
    out[dim] = sum(s[dim] for s, _ in operands)
    return tuple(out), lay


def _ints(v: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(v))


def _vals(a: DenseArrayBase) -> tuple[int, ...]:
    return tuple(int(x) for x in a.get_values())


@irdl_op_definition
class SliceOp(_WseOp):
    """``wse.slice``: a strided window of each tile (see ``infer_slice``)."""

    name = "wse.slice"
    start = prop_def(DenseArrayBase)
    limit = prop_def(DenseArrayBase)
    stride = prop_def(DenseArrayBase)
    input = operand_def(TensorTypeAttr)
    result = result_def(TensorTypeAttr)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, x: SSAValue, start: Sequence[int], limit: Sequence[int],
                 stride: Sequence[int], t: TensorTypeAttr):
        super().__init__(properties={"start": _ints(start), "limit": _ints(limit),
                                     "stride": _ints(stride)}, operands=[x], result_types=[t])

    def window(self) -> tuple[tuple[int, ...], ...]:
        return _vals(self.start), _vals(self.limit), _vals(self.stride)

    def verify_(self) -> None:
        s, lay = _spec(self.input, "the operand")
        self._check(self._run(infer_slice, s, lay, *self.window()))


@irdl_op_definition
class PadOp(_WseOp):
    """``wse.pad``: each tile spread into a zero-filled tile (see ``infer_pad``)."""

    name = "wse.pad"
    low = prop_def(DenseArrayBase)
    high = prop_def(DenseArrayBase)
    interior = prop_def(DenseArrayBase)
    input = operand_def(TensorTypeAttr)
    result = result_def(TensorTypeAttr)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, x: SSAValue, low: Sequence[int], high: Sequence[int],
                 interior: Sequence[int], t: TensorTypeAttr):
        super().__init__(properties={"low": _ints(low), "high": _ints(high),
                                     "interior": _ints(interior)},
                         operands=[x], result_types=[t])

    def amounts(self) -> tuple[tuple[int, ...], ...]:
        return _vals(self.low), _vals(self.high), _vals(self.interior)

    def verify_(self) -> None:
        s, lay = _spec(self.input, "the operand")
        self._check(self._run(infer_pad, s, lay, *self.amounts()))


@irdl_op_definition
class ConcatOp(_WseOp):
    """``wse.concat``: tiles joined along a whole dim (see ``infer_concat``)."""

    name = "wse.concat"
    dim = prop_def(IntegerAttr)
    inputs = var_operand_def(TensorTypeAttr)
    result = result_def(TensorTypeAttr)
    assembly_format = "$inputs attr-dict `:` functional-type($inputs, $result)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, inputs: Sequence[SSAValue], dim: int, t: TensorTypeAttr):
        super().__init__(properties={"dim": IntegerAttr(dim, i64)}, operands=[list(inputs)],
                         result_types=[t])

    def verify_(self) -> None:
        specs = [_spec(v, f"operand #{i}") for i, v in enumerate(self.inputs)]
        self._check(self._run(infer_concat, specs, self.dim.value.data))


def infer_permute(shape: Sequence[int], lay: Layout, perm: Sequence[int]) -> Spec:
    """Any permutation of a tensor whole on every PE (rank >= 3 ones: rank 2 tiled
    tensors use ``wse.transpose``)."""
    if sorted(perm) != list(range(len(shape))):
        raise LayoutError(f"wse.permute {list(perm)} is not a permutation of the "
                          f"{len(shape)} dims")
    _window_dims(shape, [True] * len(shape), lay, "wse.permute")
    return tuple(shape[p] for p in perm), lay


@irdl_op_definition
class PermuteOp(_WseOp):
    """``wse.permute``: the dims of a tensor whole on every PE reordered, one
    strided copy per PE (see ``infer_permute``)."""

    name = "wse.permute"
    perm = prop_def(DenseArrayBase)
    input = operand_def(TensorTypeAttr)
    result = result_def(TensorTypeAttr)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, x: SSAValue, perm: Sequence[int], t: TensorTypeAttr):
        super().__init__(properties={"perm": _ints(perm)}, operands=[x], result_types=[t])

    def verify_(self) -> None:
        s, lay = _spec(self.input, "the operand")
        self._check(self._run(infer_permute, s, lay, _vals(self.perm)))


WSE = Dialect("wse", [*WSE.operations, SliceOp, PadOp, ConcatOp, PermuteOp],
              [*WSE.attributes])
__all__ += ["ConcatOp", "PadOp", "PermuteOp", "SliceOp", "infer_concat", "infer_pad",
            "infer_permute", "infer_slice"]


# ---- row lookups: embedding gather and its transpose (issue #16) ----
# The table, the row indices ([N, 1], exact f32 values) and the result are whole
# on every PE that holds them; each PE copies (or adds) one DSD row per index.


def infer_take_rows(table: Spec, idx: Spec) -> Spec:
    """``out[i, :] = table[idx[i, 0], :]``."""
    (ts, tl), (ins, il) = table, idx
    if len(ts) != 2 or len(ins) != 2 or ins[1] != 1:
        raise LayoutError(f"wse.take_rows needs a [V, C] table and [N, 1] indices, got "
                          f"{list(ts)} and {list(ins)}")
    for what, lay in (("table", tl), ("indices", il)):
        _window_dims((0, 0), (True, True), lay, f"wse.take_rows {what}")
    st = {a: _combine_states([tl.state(a), il.state(a)], "a wse.take_rows operand")
          for a in AXES}
    return (ins[0], ts[1]), Layout((NONE, NONE), st["x"], st["y"])


def infer_add_rows(base: Spec, idx: Spec, src: Spec) -> Spec:
    """``out = base; out[idx[i, 0], :] += src[i, :]``."""
    (bs, bl), (ins, il), (ss, sl) = base, idx, src
    if len(bs) != 2 or len(ins) != 2 or ins[1] != 1 or tuple(ss) != (ins[0], bs[1]):
        raise LayoutError(f"wse.add_rows needs a [V, C] base, [N, 1] indices and an [N, C] "
                          f"source, got {list(bs)}, {list(ins)} and {list(ss)}")
    for what, lay in (("base", bl), ("indices", il), ("source", sl)):
        _window_dims((0, 0), (True, True), lay, f"wse.add_rows {what}")
    st = {a: _combine_states([bl.state(a), il.state(a), sl.state(a)],
                             "a wse.add_rows operand") for a in AXES}
    return tuple(bs), Layout((NONE, NONE), st["x"], st["y"])


@irdl_op_definition
class TakeRowsOp(_WseOp):
    """``wse.take_rows``: rows of a table picked by index (see ``infer_take_rows``)."""

    name = "wse.take_rows"
    table = operand_def(TensorTypeAttr)
    indices = operand_def(TensorTypeAttr)
    result = result_def(TensorTypeAttr)
    assembly_format = "$table `[` $indices `]` attr-dict `:` functional-type(operands, $result)"

    def __init__(self, table: SSAValue, idx: SSAValue, t: TensorTypeAttr):
        super().__init__(operands=[table, idx], result_types=[t])

    def verify_(self) -> None:
        self._check(self._run(infer_take_rows, _spec(self.table, "the table"),
                              _spec(self.indices, "the indices")))


@irdl_op_definition
class AddRowsOp(_WseOp):
    """``wse.add_rows``: source rows added into a base at indexed rows (the transpose
    of ``wse.take_rows``; see ``infer_add_rows``)."""

    name = "wse.add_rows"
    base = operand_def(TensorTypeAttr)
    indices = operand_def(TensorTypeAttr)
    source = operand_def(TensorTypeAttr)
    result = result_def(TensorTypeAttr)
    assembly_format = ("$base `[` $indices `]` `,` $source attr-dict `:` "
                       "functional-type(operands, $result)")

    def __init__(self, base: SSAValue, idx: SSAValue, src: SSAValue, t: TensorTypeAttr):
        super().__init__(operands=[base, idx, src], result_types=[t])

    def verify_(self) -> None:
        self._check(self._run(infer_add_rows, _spec(self.base, "the base"),
                              _spec(self.indices, "the indices"), _spec(self.source,
                                                                        "the source")))


WSE = Dialect("wse", [*WSE.operations, TakeRowsOp, AddRowsOp], [*WSE.attributes])
__all__ += ["AddRowsOp", "TakeRowsOp", "infer_add_rows", "infer_take_rows"]


# ---- relayout: the tile grid transposed (issue #16) ----
# A dim tiled over one grid axis moves to the other without a whole copy of the
# tensor on every PE (``wse.gather`` on both axes would make one): PE (i, j) takes
# the tile of PE (j, i), an exchange across the diagonal, tile by tile.

_OTHER_AXIS = {"x": "y", "y": "x", NONE: NONE}


def swap_axes(lay: Layout) -> Layout:
    """``lay`` with the grid axes exchanged: dims tiled over x are tiled over y and the
    other way around; the states of the axes no dim uses swap too."""
    return Layout(tuple(_OTHER_AXIS[d] for d in lay.dims), lay.y, lay.x)


def infer_relayout(shape: Sequence[int], lay: Layout, grid: Grid) -> Spec:
    """The layout with x and y exchanged (``swap_axes``). Needs a square grid: a dim's
    blocks then keep their size, so every tile moves whole to the PE mirrored across
    the diagonal."""
    if grid.width != grid.height:
        raise LayoutError(f"wse.relayout needs a square grid (a dim's blocks keep their "
                          f"size), got {grid}")
    if lay.is_partial:
        raise LayoutError("cannot relayout a partial result: wse.combine it first")
    return tuple(shape), swap_axes(lay)


@irdl_op_definition
class RelayoutOp(_LocalUnaryOp):
    """``wse.relayout``: the tile grid transposed (see ``infer_relayout``); one tile of
    scratch per PE, no copy of the whole tensor."""

    name = "wse.relayout"

    def _verify_rule(self, s: Any, lay: Any) -> Any:
        return self._run(infer_relayout, s, lay, self.grid())


WSE = Dialect("wse", [*WSE.operations, RelayoutOp], [*WSE.attributes])
__all__ += ["RelayoutOp", "infer_relayout", "swap_axes"]


# ---- batched matmul laid over the grid (issue #16) ----
# ``[B, M, K] @ [B, K, N]`` as its row-major rank-2 views ``[B*M, K]`` and
# ``[B*K, N]``: rows tiled over an axis in blocks of whole batch elements, so each
# PE multiplies the batch elements it holds, with no partial sums to combine.


def infer_batch_matmul(a: Spec, b: Spec, batch: int, grid: Grid) -> Spec:
    """Block-diagonal product: A ``[B*M, K]`` (K whole), B ``[B*K, N]``, their rows on
    the same axis (or whole) with ``B`` a multiple of that axis's size; N over the
    other axis needs A replicated over it. Result ``[B*M, N]`` (rows as A's)."""
    (sa, la), (sb, lb) = a, b
    if len(sa) != 2 or len(sb) != 2 or batch < 1 or sa[0] % batch or sb[0] != batch * sa[1]:
        raise LayoutError(f"wse.batch_matmul multiplies [B*M, K] by [B*K, N] with B = {batch}, "
                          f"got {list(sa)} and {list(sb)}")
    if la.is_partial or lb.is_partial:
        raise LayoutError("cannot multiply partial results: wse.combine them first")
    r_axis, n_axis = la.dims[0], lb.dims[1]
    if la.dims[1] != NONE:
        raise LayoutError(f"wse.batch_matmul needs K whole on every PE, got A in {la}")
    if lb.dims[0] != r_axis:
        raise LayoutError(f"the batch rows are on '{r_axis}' in A but on '{lb.dims[0]}' in B")
    if r_axis != NONE and batch % grid.size(r_axis):
        raise LayoutError(f"{batch} batch elements do not split evenly over the "
                          f"{grid.size(r_axis)} PEs of axis {r_axis}")
    states: dict[str, str] = {}
    for g in AXES:
        if g == n_axis:
            if la.state(g) != "*":
                raise LayoutError(f"N is tiled over {g}: A must be replicated over {g}, "
                                  f"got '{la.state(g)}'")
        elif g != r_axis:
            states[g] = _combine_states([la.state(g), lb.state(g)], f"an operand (axis {g})")
    return (sa[0], sb[1]), Layout((r_axis, n_axis), states.get("x", ""), states.get("y", ""))


@irdl_op_definition
class BatchMatmulOp(_TileProductOp):
    """``wse.batch_matmul``: each PE multiplies the whole batch elements its row block
    holds (see ``infer_batch_matmul``); ``batch`` is B."""

    name = "wse.batch_matmul"
    batch = prop_def(IntegerAttr)
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, a: SSAValue, b: SSAValue, batch: int, t: TensorTypeAttr):
        IRDLOperation.__init__(self, operands=[a, b], result_types=[t],
                               properties={"batch": IntegerAttr(batch, i64)})

    def _verify_rule(self, a: Any, b: Any) -> Any:
        return self._run(infer_batch_matmul, a, b, self.batch.value.data, self.grid())


WSE = Dialect("wse", [*WSE.operations, BatchMatmulOp], [*WSE.attributes])
__all__ += ["BatchMatmulOp", "infer_batch_matmul"]
