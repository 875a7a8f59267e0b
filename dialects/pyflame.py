"""The ``pyflame`` dialect in xDSL, generated from the op table.

One IRDL op class per ``OpDef``: variadic tensor operands and results, the
attributes of the op's schema, and a verifier that calls the op's own shape
rule (``OpDef.check``), so the IR and the frontend can never disagree.

Custom assembly, the same for every op::

    %2 = pyflame.add %0, %1 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %3 = pyflame.sum %2 {dims = array<i64: 1>, keepdim = false} : (tensor<4x8xf32>) -> tensor<4xf32>
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    BoolAttr,
    BytesAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    Signedness,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    attr_def,
    irdl_op_definition,
    lazy_traits_def,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsolatedFromAbove, IsTerminator, NoMemoryEffect
from xdsl.utils.exceptions import VerifyException

from . import OPS
from .data import DenseValue
from .dtypes import ALL_DTYPES, NARROW_INTS, DType
from .opdef import OpDef, ShapeError

# ---- element types ----

_TO_IR: dict[str, Attribute] = {
    "bool": IntegerType(1), "int32": IntegerType(32), "int64": IntegerType(64),
    "float16": Float16Type(), "bfloat16": BFloat16Type(), "float32": Float32Type(),
    "float64": Float64Type(), "uint8": IntegerType(8, Signedness.UNSIGNED),
    "int8": IntegerType(8), "int16": IntegerType(16),
}
_FROM_IR: dict[Attribute, DType] = {_TO_IR[d.name]: d for d in ALL_DTYPES}


def ir_element_type(d: DType) -> Attribute:
    return _TO_IR[d.name]


def narrow_int_use(region_op: Operation) -> tuple[str, DType] | None:
    """The first op (or ``argument``) under ``region_op`` with an 8/16-bit
    integer tensor, and that dtype: the backends that do not have them yet
    refuse by it."""
    narrow = {_TO_IR[d.name]: d for d in NARROW_INTS}
    ops = list(region_op.walk())
    for op in ops:  # an op computing one first: it names the culprit best
        for v in op.results:
            t = v.type
            if isinstance(t, TensorType) and t.get_element_type() in narrow:
                return op.name, narrow[t.get_element_type()]
    for op in ops:
        for v in (a for r in op.regions for b in r.blocks for a in b.args):
            t = v.type
            if isinstance(t, TensorType) and t.get_element_type() in narrow:
                return f"{op.name} argument", narrow[t.get_element_type()]
    return None


def dtype_of_element(t: Attribute) -> DType:
    try:
        return _FROM_IR[t]
    except (KeyError, TypeError):
        raise VerifyException(f"element type {t} is not supported by pyflame (expected one of "
                              f"{', '.join(d.short for d in ALL_DTYPES)})") from None


def tensor_type(shape: Sequence[int], d: DType) -> TensorType:
    return TensorType(_TO_IR[d.name], list(shape))


def spec_of_type(t: Attribute, what: str) -> tuple[tuple[int, ...], DType]:
    if not isinstance(t, TensorType):
        raise VerifyException(f"{what} must be a ranked tensor, got {t}")
    shape = tuple(t.get_shape())
    if any(d < 0 for d in shape):
        raise VerifyException(f"{what} must have a static shape, got {t}")
    return shape, dtype_of_element(t.get_element_type())


# ---- attributes: Python value <-> IR attribute, by kind ----

def attr_to_ir(kind: str, v: Any) -> Attribute:
    if kind in ("int", "opt_int"):
        return IntegerAttr(int(v), i64)
    if kind == "bool":
        return BoolAttr.from_bool(bool(v))
    if kind == "float":
        return FloatAttr(float(v), Float64Type())
    if kind in ("str", "opt_str"):
        return StringAttr(v)
    if kind == "ints":
        return DenseArrayBase.from_list(i64, [int(x) for x in v])
    if kind == "dtype":
        return ir_element_type(v)
    if kind == "dense":
        dv: DenseValue = v
        n = int(np.prod(dv.shape)) if dv.shape else 1
        full = dv.array.tobytes() * n if dv.array.ndim == 0 else dv.array.tobytes()
        return DenseIntOrFPElementsAttr(tensor_type(dv.shape, dv.dtype), BytesAttr(full))
    raise AssertionError(kind)


def attr_from_ir(kind: str, name: str, a: Attribute | None) -> Any:
    def bad(expected: str) -> VerifyException:
        return VerifyException(f"attribute '{name}' must be {expected}, got {a}")

    if kind == "bool" and (a is None or isinstance(a, UnitAttr)):
        return a is not None  # MLIR's UnitAttr: absent is false, present (``{keepdim}``) true
    if a is None:
        raise VerifyException(f"missing attribute '{name}'")

    if kind in ("int", "opt_int"):
        if not isinstance(a, IntegerAttr) or a.type != i64:
            raise bad("an i64 integer")
        return a.value.data
    if kind == "bool":
        if not isinstance(a, IntegerAttr) or a.type != IntegerType(1):
            raise bad("a bool (true/false)")
        return bool(a.value.data)
    if kind == "float":
        if not isinstance(a, FloatAttr):
            raise bad("a float")
        return a.value.data
    if kind in ("str", "opt_str"):
        if not isinstance(a, StringAttr):
            raise bad("a string")
        return a.data
    if kind == "ints":
        if not isinstance(a, DenseArrayBase) or a.elt_type != i64:
            raise bad("an array<i64: ...>")
        return tuple(a.get_values())
    if kind == "dtype":
        return dtype_of_element(a)
    if kind == "dense":
        if not isinstance(a, DenseIntOrFPElementsAttr) or not isinstance(a.type, TensorType):
            raise bad("a dense tensor literal")
        shape, d = spec_of_type(a.type, f"attribute '{name}'")
        arr = np.frombuffer(a.data.data, dtype=d.np)
        if d.is_bool:  # the parser may store true as 0xFF: make bools canonical
            arr = arr.view(np.uint8) != 0
        if arr.size == 1:
            return DenseValue(arr.reshape(()), shape, d)
        return DenseValue(arr.reshape(shape), shape, d)
    raise AssertionError(kind)


# ---- the op classes ----

class PyflameOp(IRDLOperation):
    """Base of every generated op. ``OPDEF`` links the class to its table entry."""

    OPDEF: ClassVar[OpDef]

    def py_attrs(self) -> dict[str, Any]:
        """The attributes as the Python values the shape rule and kernel take."""
        out: dict[str, Any] = {}
        for name, kind in self.OPDEF.attrs.items():
            a = self.attributes.get(name)
            if a is None and kind.startswith("opt_"):
                out[name] = None
                continue
            out[name] = attr_from_ir(kind, name, a)  # (an absent bool is false)
        # Names with a dialect prefix (``wse.layout``) are MLIR's discardable
        # attributes: annotations other passes add (``wse-layout``), not operands
        # of the op's semantics.
        extra = {a for a in set(self.attributes) - set(self.OPDEF.attrs) if "." not in a}
        if extra:
            raise VerifyException(f"unknown attribute(s) {', '.join(sorted(extra))}; "
                                  f"'{self.name}' takes {list(self.OPDEF.attrs) or 'none'}")
        return out

    def verify_(self) -> None:
        opdef = self.OPDEF
        specs = [spec_of_type(v.type, f"operand #{i}") for i, v in enumerate(self.operands)]
        attrs = self.py_attrs()
        try:
            expected = opdef.check([s for s, _ in specs], [d for _, d in specs], attrs)
        except ShapeError as e:
            raise VerifyException(e.reason) from None
        if len(expected) != len(self.results):
            raise VerifyException(f"expects {len(expected)} result(s), got {len(self.results)}")
        for i, (res, (shape, d)) in enumerate(zip(self.results, expected)):
            want = tensor_type(shape, d)
            if res.type != want:
                raise VerifyException(f"result #{i} has type {res.type}, but the operands "
                                      f"give {want}")

    @classmethod
    def parse(cls, parser: Parser) -> PyflameOp:
        values, attrs, results = parse_operands_attrs_type(parser, cls.name)
        for name, kind in cls.OPDEF.attrs.items():
            if kind == "bool" and (name not in attrs or isinstance(attrs[name], UnitAttr)):
                # absent = false, present as a unit (``{keepdim}``) = true, as MLIR's UnitAttr
                attrs[name] = attr_to_ir("bool", name in attrs)
        return cls.create(operands=values, result_types=results, attributes=attrs)

    def print(self, printer: Printer) -> None:
        _print_operands_attrs_type(printer, self)


def _print_operands_attrs_type(printer: Printer, op: IRDLOperation) -> None:
    """`` %a, %b {attrs} : (types) -> types``, what ``parse_operands_attrs_type`` reads."""
    if op.operands:
        printer.print_string(" ")
        printer.print_list(op.operands, printer.print_operand)
    _print_attributes(printer, op.attributes)
    printer.print_string(" : ")
    printer.print_function_type(op.operand_types, op.result_types)


def _print_attributes(printer: Printer, attrs: dict[str, Attribute]) -> None:
    """The attribute dictionary, with float literals that hold NaN or inf
    printed as raw little-endian hex (``dense<"0x0000C07F">``): xDSL prints them
    as bare hex integers, which it (unlike MLIR) parses back as numbers."""
    special = {k for k, a in attrs.items() if isinstance(a, DenseIntOrFPElementsAttr)
               and _has_non_finite(a)}
    if not special:
        printer.print_op_attributes(attrs)
        return
    printer.print_string(" {")
    for i, (k, a) in enumerate(attrs.items()):
        printer.print_string(", " if i else "")
        printer.print_string(f"{k} = ")
        if k in special:
            assert isinstance(a, DenseIntOrFPElementsAttr)
            raw = a.data.data
            size = a.get_element_type().compile_time_size
            if raw == raw[:size] * (len(raw) // size):  # a splat: one element
                raw = raw[:size]
            printer.print_string(f'dense<"0x{raw.hex().upper()}"> : ')
            printer.print_attribute(a.type)
        else:
            printer.print_attribute(a)
    printer.print_string("}")


def _has_non_finite(a: DenseIntOrFPElementsAttr) -> bool:
    if not isinstance(a.type, TensorType):
        return False
    try:
        d = dtype_of_element(a.get_element_type())
    except VerifyException:
        return False
    return d.is_floating_point and not np.isfinite(
        np.frombuffer(a.data.data, dtype=d.np).astype(np.float64)).all()


def parse_operands_attrs_type(parser: Parser, name: str
                              ) -> tuple[list[SSAValue], dict[str, Attribute], list[Attribute]]:
    """``%a, %b {attrs} : (types) -> types``, the common part of our custom forms."""
    pos = parser.pos
    operands = []
    if _peek_operand(parser):
        operands = parser.parse_comma_separated_list(
            parser.Delimiter.NONE, parser.parse_unresolved_operand)
    attrs = parser.parse_optional_attr_dict()
    parser.parse_punctuation(":")
    ftype = parser.parse_function_type()
    if len(ftype.inputs.data) != len(operands):
        parser.raise_error(f"{name} has {len(operands)} operand(s) but its type lists "
                           f"{len(ftype.inputs.data)}", pos, parser.pos)
    values = parser.resolve_operands(operands, ftype.inputs.data, parser.pos)
    return values, attrs, list(ftype.outputs.data)


def _peek_operand(parser: Parser) -> bool:
    from xdsl.utils.mlir_lexer import MLIRTokenKind

    return parser._current_token.kind == MLIRTokenKind.PERCENT_IDENT  # noqa: SLF001


def _make_op_class(opdef: OpDef) -> type[PyflameOp]:
    camel = "".join(p.capitalize() for p in opdef.name.split("_")) + "Op"
    namespace = {
        "name": f"pyflame.{opdef.name}",
        "OPDEF": opdef,
        "__annotations__": {"OPDEF": ClassVar[OpDef]},
        "inputs": var_operand_def(TensorType),
        "outputs": var_result_def(TensorType),
        "traits": traits_def(NoMemoryEffect()),
        "__doc__": opdef.doc or f"pyflame.{opdef.name} ({opdef.family})",
        "__module__": __name__,
    }
    return irdl_op_definition(type(camel, (PyflameOp,), namespace))


OP_CLASSES: dict[str, type[PyflameOp]] = {name: _make_op_class(d) for name, d in OPS.items()}
globals().update({cls.__name__: cls for cls in OP_CLASSES.values()})


def op_class(op: str | OpDef) -> type[PyflameOp]:
    """The generated class of an op (``op_class("add") is AddOp``), by name or
    table entry, for tables keyed by class; a KeyError names an unknown op."""
    name = op.name if isinstance(op, OpDef) else op
    try:
        return OP_CLASSES[name]
    except KeyError:
        raise KeyError(f"unknown pyflame op {name!r}") from None



def create_op(name: str, operands: Sequence[SSAValue], attrs: dict[str, Any],
              result_specs: Sequence[tuple[tuple[int, ...], DType]]) -> PyflameOp:
    """Build an op from Python attribute values (the frontend's IR builder uses this)."""
    kinds = OPS[name].attrs
    ir_attrs = {k: attr_to_ir(kinds[k], v) for k, v in attrs.items()
                if not (kinds[k].startswith("opt_") and v is None)}
    return OP_CLASSES[name].create(operands=list(operands), attributes=ir_attrs,
                                   result_types=[tensor_type(s, d) for s, d in result_specs])


# ---- differentiation ops: expanded by the pyflame-autodiff pass ----

class _TransformOp(IRDLOperation):
    """``pyflame.vjp`` / ``pyflame.jvp``: differentiate the function ``callee``.

        %outs..., %grads... = pyflame.vjp @f(%args...) cotangents(%cts...) {wrt = array<i64: 0>}
            : (arg types..., cotangent types...) -> (output types..., wrt arg types...)
        %outs..., %tans... = pyflame.jvp @f(%args...) tangents(%ts...) {wrt = array<i64: 0>}
            : (arg types..., tangent types...) -> (output types..., output types...)
    """

    KEYWORD: ClassVar[str]
    callee = prop_def(SymbolRefAttr)
    wrt = attr_def(DenseArrayBase)
    args = var_operand_def(TensorType)
    seeds = var_operand_def(TensorType)
    outs = var_result_def(TensorType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(self, callee: str, args: Sequence[SSAValue], seeds: Sequence[SSAValue],
                 wrt: Sequence[int], result_types: Sequence[Attribute]):
        super().__init__(operands=[list(args), list(seeds)], result_types=[list(result_types)],
                         properties={"callee": SymbolRefAttr(callee)},
                         attributes={"wrt": DenseArrayBase.from_list(i64, list(wrt))})

    @property
    def wrt_indices(self) -> tuple[int, ...]:
        return tuple(self.wrt.get_values())

    def callee_func(self) -> Any:
        from xdsl.dialects.func import FuncOp
        from xdsl.traits import SymbolTable

        fn = SymbolTable.lookup_symbol(self, self.callee)
        if not isinstance(fn, FuncOp):
            raise VerifyException(f"'{self.callee}' does not reference a function")
        return fn

    def expected_types(self, fn: Any) -> tuple[list[Attribute], list[Attribute]]:
        """(seed types, result types) for differentiating ``fn``."""
        ins, outs = list(fn.function_type.inputs.data), list(fn.function_type.outputs.data)
        wrt = [ins[i] for i in self.wrt_indices]
        return (outs, outs + wrt) if self.KEYWORD == "cotangents" else (wrt, outs + outs)

    def verify_(self) -> None:
        fn = self.callee_func()
        ins = list(fn.function_type.inputs.data)
        if [a.type for a in self.args] != ins:
            raise VerifyException(f"arguments {[str(a.type) for a in self.args]} do not match "
                                  f"{self.callee}'s inputs {[str(t) for t in ins]}")
        wrt = self.wrt_indices
        if not wrt or any(not 0 <= i < len(ins) for i in wrt) or len(set(wrt)) != len(wrt):
            raise VerifyException(f"wrt {list(wrt)} must be distinct argument indices of "
                                  f"{self.callee} (it has {len(ins)})")
        for i in wrt:
            if not spec_of_type(ins[i], f"argument #{i}")[1].is_floating_point:
                raise VerifyException(f"argument #{i} of {self.callee} is not floating point: "
                                      "only real-valued inputs can be differentiated")
        seeds, results = self.expected_types(fn)
        if [s.type for s in self.seeds] != seeds:
            raise VerifyException(f"{self.KEYWORD} {[str(s.type) for s in self.seeds]} must "
                                  f"have the types {[str(t) for t in seeds]}")
        if list(self.result_types) != results:
            raise VerifyException(f"results {[str(t) for t in self.result_types]} must be "
                                  f"{[str(t) for t in results]}")

    @classmethod
    def parse(cls, parser: Parser) -> _TransformOp:
        callee = parser.parse_symbol_name()
        args = parser.parse_comma_separated_list(parser.Delimiter.PAREN,
                                                 parser.parse_unresolved_operand)
        parser.parse_keyword(cls.KEYWORD)
        seeds = parser.parse_comma_separated_list(parser.Delimiter.PAREN,
                                                  parser.parse_unresolved_operand)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pos = parser.pos
        ftype = parser.parse_function_type()
        types = list(ftype.inputs.data)
        if len(types) != len(args) + len(seeds):
            parser.raise_error(f"{cls.name} has {len(args) + len(seeds)} operands but its type "
                               f"lists {len(types)}", pos, parser.pos)
        values = parser.resolve_operands(args + seeds, types, parser.pos)
        op = cls.__new__(cls)
        wrt = attrs.pop("wrt", None)
        if not isinstance(wrt, DenseArrayBase):
            parser.raise_error(f"{cls.name} needs a wrt = array<i64: ...> attribute")
        IRDLOperation.__init__(op, operands=[values[:len(args)], values[len(args):]],
                               result_types=[list(ftype.outputs.data)],
                               properties={"callee": SymbolRefAttr(callee.data)},
                               attributes={"wrt": wrt, **attrs})
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.callee)
        printer.print_string("(")
        printer.print_list(self.args, printer.print_operand)
        printer.print_string(f") {self.KEYWORD}(")
        printer.print_list(self.seeds, printer.print_operand)
        printer.print_string(")")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_function_type(self.operand_types, self.result_types)


@irdl_op_definition
class VjpOp(_TransformOp):
    name = "pyflame.vjp"
    KEYWORD: ClassVar[str] = "cotangents"


@irdl_op_definition
class JvpOp(_TransformOp):
    name = "pyflame.jvp"
    KEYWORD: ClassVar[str] = "tangents"


# ---- pyflame.vmap: batch a function (expanded by the pyflame-vmap pass) ----

@irdl_op_definition
class VmapOp(IRDLOperation):
    """``pyflame.vmap``: the function ``callee`` mapped over a batch axis.

        %outs... = pyflame.vmap @f(%args...) {in_axes = array<i64: 0, -1>,
            out_axes = array<i64: 0>, axis_size = 4 : i64} : (arg types...) -> (out types...)

    ``in_axes[i]`` is the batched axis of argument i (-1: not batched, the
    same for every example); ``out_axes[j]`` where result j carries the batch
    axis (-1: not batched). The batch axis has ``axis_size`` elements."""

    name = "pyflame.vmap"
    callee = prop_def(SymbolRefAttr)
    in_axes = attr_def(DenseArrayBase)
    out_axes = attr_def(DenseArrayBase)
    axis_size = attr_def(IntegerAttr)
    args = var_operand_def(TensorType)
    outs = var_result_def(TensorType)

    def __init__(self, callee: str, args: Sequence[SSAValue], in_axes: Sequence[int],
                 out_axes: Sequence[int], axis_size: int, result_types: Sequence[Attribute]):
        super().__init__(operands=[list(args)], result_types=[list(result_types)],
                         properties={"callee": SymbolRefAttr(callee)},
                         attributes={"in_axes": DenseArrayBase.from_list(i64, list(in_axes)),
                                     "out_axes": DenseArrayBase.from_list(i64, list(out_axes)),
                                     "axis_size": IntegerAttr(axis_size, i64)})

    @property
    def in_axes_list(self) -> tuple[int, ...]:
        return tuple(self.in_axes.get_values())

    @property
    def out_axes_list(self) -> tuple[int, ...]:
        return tuple(self.out_axes.get_values())

    @property
    def size(self) -> int:
        return self.axis_size.value.data

    def callee_func(self) -> Any:
        return _TransformOp.callee_func(self)  # type: ignore[arg-type]

    def verify_(self) -> None:
        fn = self.callee_func()
        ins, outs = list(fn.function_type.inputs.data), list(fn.function_type.outputs.data)
        n = self.size
        for what, axes, types, batched in (("argument", self.in_axes_list, ins, self.args),
                                           ("result", self.out_axes_list, outs, self.outs)):
            if len(axes) != len(types) or len(batched) != len(types):
                raise VerifyException(f"{self.callee} has {len(types)} {what}(s); "
                                      f"{len(axes)} axes and {len(batched)} values given")
            for i, (axis, t, v) in enumerate(zip(axes, types, batched)):
                shape, d = spec_of_type(t, f"{what} #{i}")
                want = shape if axis == -1 else (*shape[:axis], n, *shape[axis:])
                if not -1 <= axis <= len(shape) or spec_of_type(v.type, what) != (want, d):
                    raise VerifyException(f"{what} #{i} of type {v.type} does not map "
                                          f"{t} over axis {axis} of size {n}")

    @classmethod
    def parse(cls, parser: Parser) -> VmapOp:
        callee = parser.parse_symbol_name()
        args = parser.parse_comma_separated_list(parser.Delimiter.PAREN,
                                                 parser.parse_unresolved_operand)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        ftype = parser.parse_function_type()
        types = list(ftype.inputs.data)
        if len(types) != len(args):
            parser.raise_error(f"{cls.name} has {len(args)} operands but its type lists "
                               f"{len(types)}")
        values = parser.resolve_operands(args, types, parser.pos)
        for k, kind in (("in_axes", DenseArrayBase), ("out_axes", DenseArrayBase),
                        ("axis_size", IntegerAttr)):
            if not isinstance(attrs.get(k), kind):
                parser.raise_error(f"{cls.name} needs the attribute {k}")
        op = cls.__new__(cls)
        IRDLOperation.__init__(op, operands=[values], result_types=[list(ftype.outputs.data)],
                               properties={"callee": SymbolRefAttr(callee.data)},
                               attributes=attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.callee)
        printer.print_string("(")
        printer.print_list(self.args, printer.print_operand)
        printer.print_string(")")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_function_type(self.operand_types, self.result_types)


# ---- pyflame.fused: a region of ops the fusion pass groups into one kernel ----

@irdl_op_definition
class YieldOp(IRDLOperation):
    """Ends a ``pyflame.fused`` body; its operands are the fused op's results."""

    name = "pyflame.yield"
    values = var_operand_def(TensorType)
    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(FusedOp), NoMemoryEffect()))

    @classmethod
    def parse(cls, parser: Parser) -> YieldOp:
        operands = []
        if _peek_operand(parser):
            operands = parser.parse_comma_separated_list(
                parser.Delimiter.NONE, parser.parse_unresolved_operand)
        types = []
        if operands:
            parser.parse_punctuation(":")
            types = parser.parse_comma_separated_list(parser.Delimiter.NONE,
                                                      parser.parse_type)
        if len(types) != len(operands):
            parser.raise_error(f"pyflame.yield has {len(operands)} operand(s) but "
                               f"{len(types)} type(s)")
        return cls.create(operands=parser.resolve_operands(operands, types, parser.pos))

    def print(self, printer: Printer) -> None:
        if self.operands:
            printer.print_string(" ")
            printer.print_list(self.operands, printer.print_operand)
            printer.print_string(" : ")
            printer.print_list(self.operand_types, printer.print_attribute)


@irdl_op_definition
class FusedOp(IRDLOperation):
    """Ops evaluated as one kernel. The body is isolated from above: its block
    arguments stand for the operands, and ``pyflame.yield`` gives the results.
    The body holds ``pyflame`` ops only (no nested ``pyflame.fused``); the
    fusion pass puts elementwise ops, constants and ``broadcast_to`` there,
    optionally ending in a reduction, which the reference backend runs in one
    chunked pass (any other body runs op by op)::

        %r = pyflame.fused %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
        ^bb0(%x: tensor<4x8xf32>, %y: tensor<8xf32>):
          %0 = pyflame.add %x, %y : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
          %1 = pyflame.relu %0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
          pyflame.yield %1 : tensor<4x8xf32>
        }
    """

    name = "pyflame.fused"
    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    body = region_def("single_block")
    traits = traits_def(IsolatedFromAbove(), NoMemoryEffect())

    @property
    def yield_op(self) -> YieldOp:
        last = self.body.block.last_op
        assert isinstance(last, YieldOp)
        return last

    def verify_(self) -> None:
        block = self.body.block
        for i, v in enumerate(self.inputs):
            spec_of_type(v.type, f"operand #{i}")
        if len(block.args) != len(self.inputs):
            raise VerifyException(f"body has {len(block.args)} argument(s) for "
                                  f"{len(self.inputs)} operand(s)")
        for i, (arg, v) in enumerate(zip(block.args, self.inputs)):
            if arg.type != v.type:
                raise VerifyException(f"body argument #{i} has type {arg.type}, "
                                      f"but operand #{i} is {v.type}")
        last = block.last_op
        if not isinstance(last, YieldOp):
            raise VerifyException("body must end with pyflame.yield")
        if [v.type for v in last.operands] != [r.type for r in self.results]:
            raise VerifyException("pyflame.yield types (" + ", ".join(
                str(v.type) for v in last.operands) + ") do not match the results (" +
                ", ".join(str(r.type) for r in self.results) + ")")
        for op in block.ops:
            if op is not last and not isinstance(op, PyflameOp):
                raise VerifyException(f"body may only hold pyflame ops, found {op.name}")

    @classmethod
    def parse(cls, parser: Parser) -> FusedOp:
        values, attrs, results = parse_operands_attrs_type(parser, cls.name)
        region = parser.parse_region()
        return cls.create(operands=values, result_types=results, attributes=attrs,
                          regions=[region])

    def print(self, printer: Printer) -> None:
        _print_operands_attrs_type(printer, self)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=True)


Pyflame = Dialect("pyflame", [*OP_CLASSES.values(), VjpOp, JvpOp, VmapOp, FusedOp, YieldOp],
                  [])
