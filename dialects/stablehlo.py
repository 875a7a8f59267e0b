"""The ``stablehlo`` (and some ``chlo``) ops JAX prints, as xDSL parses and prints them.

xDSL 0.74 has no StableHLO dialect; these classes read the ops of
``jax.jit(f).lower(...).as_text()`` in both forms (the pretty one JAX prints
and the generic one, ``--mlir-print-op-generic``), keep what the op means in
the properties StableHLO's own generic form uses (``broadcast_dimensions``,
``comparison_direction``, ``dot_dimension_numbers``...) and print the pretty
form back. They carry no semantics: ``passes/convert_stablehlo.py`` maps each
op to the ``pyflame`` ops that compute it. An op of StableHLO not listed here
is an unregistered op: a located parse error naming it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import StrEnum
from typing import Any, ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FunctionType,
    IntAttr,
    IntegerAttr,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    i1,
    i32,
    i64,
)
from xdsl.dialects.utils.enum_attribute import EnumAttribute
from xdsl.ir import Attribute, Block, Data, Dialect, Operation, ParametrizedAttribute, Region
from xdsl.ir.core import SpacedOpaqueSyntaxAttribute
from xdsl.irdl import irdl_attr_definition, param_def, traits_def
from xdsl.parser import AttrParser, Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException

__all__ = ["CHLO", "CHLO_COMPOSITE", "STABLEHLO", "StablehloOp"]


# StableHLO's enums, member name = spelling (the parser reads them by value)
ComparisonDirection = StrEnum("ComparisonDirection", {k: k for k in (
    "EQ", "NE", "GE", "GT", "LE", "LT")})
ComparisonType = StrEnum("ComparisonType", {k: k for k in (
    "NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED")})
Precision = StrEnum("Precision", {k: k for k in ("DEFAULT", "HIGH", "HIGHEST")})


@irdl_attr_definition
class ComparisonDirectionAttr(EnumAttribute[ComparisonDirection], SpacedOpaqueSyntaxAttribute):
    """``#stablehlo<comparison_direction GT>``"""

    name = "stablehlo.comparison_direction"


@irdl_attr_definition
class ComparisonTypeAttr(EnumAttribute[ComparisonType], SpacedOpaqueSyntaxAttribute):
    """``#stablehlo<comparison_type FLOAT>``"""

    name = "stablehlo.comparison_type"


@irdl_attr_definition
class PrecisionAttr(EnumAttribute[Precision], SpacedOpaqueSyntaxAttribute):
    """``#stablehlo<precision DEFAULT>``"""

    name = "stablehlo.precision"


_DOT_FIELDS = ("lhs_batching_dimensions", "rhs_batching_dimensions",
               "lhs_contracting_dimensions", "rhs_contracting_dimensions")


@irdl_attr_definition
class DotDimensionNumbersAttr(ParametrizedAttribute):
    """``#stablehlo.dot<lhs_batching_dimensions = [0], ..., rhs_contracting_dimensions = [1]>``
    (an absent field is empty)."""

    name = "stablehlo.dot"

    lhs_batching_dimensions: ArrayAttr[IntAttr] = param_def()
    rhs_batching_dimensions: ArrayAttr[IntAttr] = param_def()
    lhs_contracting_dimensions: ArrayAttr[IntAttr] = param_def()
    rhs_contracting_dimensions: ArrayAttr[IntAttr] = param_def()

    @staticmethod
    def of(lb: Sequence[int], rb: Sequence[int], lc: Sequence[int], rc: Sequence[int]
           ) -> DotDimensionNumbersAttr:
        return DotDimensionNumbersAttr(*(ArrayAttr([IntAttr(v) for v in d])
                                         for d in (lb, rb, lc, rc)))

    def dims(self) -> tuple[tuple[int, ...], ...]:
        return tuple(tuple(a.data for a in d) for d in (
            self.lhs_batching_dimensions, self.rhs_batching_dimensions,
            self.lhs_contracting_dimensions, self.rhs_contracting_dimensions))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        values: dict[str, list[int]] = {f: [] for f in _DOT_FIELDS}

        def field() -> None:
            key = parser.parse_identifier()
            if key not in values:
                parser.raise_error(f"unknown #stablehlo.dot field '{key}'")
            parser.parse_punctuation("=")
            values[key] = parser.parse_comma_separated_list(parser.Delimiter.SQUARE,
                                                            parser.parse_integer)

        parser.parse_comma_separated_list(parser.Delimiter.ANGLE, field)
        return [ArrayAttr([IntAttr(v) for v in values[f]]) for f in _DOT_FIELDS]

    def print_parameters(self, printer: Printer) -> None:
        parts = [f"{f} = [{', '.join(str(v) for v in d)}]"
                 for f, d in zip(_DOT_FIELDS, self.dims()) if d]
        printer.print_string("<" + ", ".join(parts) + ">")


class _IndexDimensionNumbers(ParametrizedAttribute):
    """``#stablehlo.gather<...>`` / ``#stablehlo.scatter<...>``: lists of
    dimensions (an absent one is empty) and ``index_vector_dim``."""

    FIELDS: ClassVar[tuple[str, ...]] = ()

    def fields(self) -> tuple[Any, ...]:
        """The parameters, in the order of ``FIELDS`` then ``index_vector_dim``."""
        raise NotImplementedError

    def lists(self) -> tuple[tuple[int, ...], ...]:
        return tuple(tuple(a.data for a in p) for p in self.fields()[:-1])

    @property
    def vector_dim(self) -> int:
        return self.fields()[-1].data

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        values: dict[str, list[int]] = {f: [] for f in cls.FIELDS}
        vector = [0]

        def field() -> None:
            key = parser.parse_identifier()
            parser.parse_punctuation("=")
            if key == "index_vector_dim":
                vector[0] = parser.parse_integer()
            elif key in values:
                values[key] = parser.parse_comma_separated_list(parser.Delimiter.SQUARE,
                                                                parser.parse_integer)
            else:
                parser.raise_error(f"unknown #{cls.name} field '{key}'")

        parser.parse_comma_separated_list(parser.Delimiter.ANGLE, field)
        return [*(ArrayAttr([IntAttr(v) for v in values[f]]) for f in cls.FIELDS),
                IntAttr(vector[0])]

    def print_parameters(self, printer: Printer) -> None:
        parts = [f"{f} = [{', '.join(str(v) for v in d)}]"
                 for f, d in zip(self.FIELDS, self.lists()) if d]
        parts.append(f"index_vector_dim = {self.vector_dim}")
        printer.print_string("<" + ", ".join(parts) + ">")


@irdl_attr_definition
class GatherDimensionNumbersAttr(_IndexDimensionNumbers):
    """``#stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], ...>``"""

    name = "stablehlo.gather"
    FIELDS = ("offset_dims", "collapsed_slice_dims", "operand_batching_dims",
              "start_indices_batching_dims", "start_index_map")

    offset_dims: ArrayAttr[IntAttr] = param_def()
    collapsed_slice_dims: ArrayAttr[IntAttr] = param_def()
    operand_batching_dims: ArrayAttr[IntAttr] = param_def()
    start_indices_batching_dims: ArrayAttr[IntAttr] = param_def()
    start_index_map: ArrayAttr[IntAttr] = param_def()
    index_vector_dim: IntAttr = param_def()

    def fields(self) -> tuple[Any, ...]:
        return (self.offset_dims, self.collapsed_slice_dims, self.operand_batching_dims,
                self.start_indices_batching_dims, self.start_index_map, self.index_vector_dim)


@irdl_attr_definition
class ScatterDimensionNumbersAttr(_IndexDimensionNumbers):
    """``#stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], ...>``"""

    name = "stablehlo.scatter"
    FIELDS = ("update_window_dims", "inserted_window_dims", "input_batching_dims",
              "scatter_indices_batching_dims", "scatter_dims_to_operand_dims")

    update_window_dims: ArrayAttr[IntAttr] = param_def()
    inserted_window_dims: ArrayAttr[IntAttr] = param_def()
    input_batching_dims: ArrayAttr[IntAttr] = param_def()
    scatter_indices_batching_dims: ArrayAttr[IntAttr] = param_def()
    scatter_dims_to_operand_dims: ArrayAttr[IntAttr] = param_def()
    index_vector_dim: IntAttr = param_def()

    def fields(self) -> tuple[Any, ...]:
        return (self.update_window_dims, self.inserted_window_dims, self.input_batching_dims,
                self.scatter_indices_batching_dims, self.scatter_dims_to_operand_dims,
                self.index_vector_dim)


_CONV_LETTERS = (("b", "f"), ("i", "o"), ("b", "f"))  # lhs, rhs, result


def parse_conv_layouts(parser: AttrParser) -> list[tuple[int, int, tuple[int, ...]]]:
    """``[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]``: per operand and the result,
    (the dimension of its first letter, of its second, its spatial dimensions
    in order), checked: each letter once, spatial numbers 0..n-1 once each,
    the same n in all three."""
    layouts = []
    for k, letters in enumerate(_CONV_LETTERS):
        if k == 1:
            parser.parse_keyword("x")
        elif k == 2:
            parser.parse_punctuation("->")

        def entry() -> int | str:
            v = parser.parse_optional_integer(allow_boolean=False, allow_negative=False)
            return v if v is not None else parser.parse_identifier()

        items = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, entry)
        spatial = sorted((v, d) for d, v in enumerate(items) if isinstance(v, int))
        names = [v for v in items if isinstance(v, str)]
        if sorted(names) != sorted(letters) or [v for v, _ in spatial] != list(
                range(len(spatial))):
            parser.raise_error(f"convolution dimensions {items} must name {letters[0]} and "
                               f"{letters[1]} once each and spatial dimensions 0..n-1 once "
                               "each")
        layouts.append((items.index(letters[0]), items.index(letters[1]),
                        tuple(d for _, d in spatial)))
    if len({len(sp) for _, _, sp in layouts}) != 1:
        parser.raise_error("convolution dimensions name different numbers of spatial "
                           "dimensions")
    return layouts


def print_conv_layouts(layouts: Sequence[tuple[int, int, tuple[int, ...]]]) -> str:
    parts = []
    for (a, b, spatial), letters in zip(layouts, _CONV_LETTERS):
        items: list[str] = [""] * (2 + len(spatial))
        items[a], items[b] = letters
        for k, d in enumerate(spatial):
            items[d] = str(k)
        parts.append("[" + ", ".join(items) + "]")
    return f"{parts[0]}x{parts[1]}->{parts[2]}"


@irdl_attr_definition
class ConvDimensionNumbersAttr(ParametrizedAttribute):
    """``#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>``: which
    dimension of the input, kernel and result is the batch (b), feature (f),
    kernel input/output feature (i, o) and each spatial one (0, 1, ...)."""

    name = "stablehlo.conv"

    input_batch_dimension: IntAttr = param_def()
    input_feature_dimension: IntAttr = param_def()
    input_spatial_dimensions: ArrayAttr[IntAttr] = param_def()
    kernel_input_feature_dimension: IntAttr = param_def()
    kernel_output_feature_dimension: IntAttr = param_def()
    kernel_spatial_dimensions: ArrayAttr[IntAttr] = param_def()
    output_batch_dimension: IntAttr = param_def()
    output_feature_dimension: IntAttr = param_def()
    output_spatial_dimensions: ArrayAttr[IntAttr] = param_def()

    @staticmethod
    def of(layouts: Sequence[tuple[int, int, Sequence[int]]]) -> ConvDimensionNumbersAttr:
        params: list[Attribute] = []
        for a, b, spatial in layouts:
            params += [IntAttr(a), IntAttr(b), ArrayAttr([IntAttr(d) for d in spatial])]
        return ConvDimensionNumbersAttr(*params)

    def layouts(self) -> tuple[tuple[int, int, tuple[int, ...]], ...]:
        """(input: batch, feature, spatial), (kernel: input feature, output
        feature, spatial), (result: batch, feature, spatial)."""
        p = [self.input_batch_dimension, self.input_feature_dimension,
             self.input_spatial_dimensions, self.kernel_input_feature_dimension,
             self.kernel_output_feature_dimension, self.kernel_spatial_dimensions,
             self.output_batch_dimension, self.output_feature_dimension,
             self.output_spatial_dimensions]
        return tuple((p[k].data, p[k + 1].data, tuple(a.data for a in p[k + 2]))
                     for k in (0, 3, 6))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        parser.parse_punctuation("<")
        layouts = parse_conv_layouts(parser)
        parser.parse_punctuation(">")
        return list(cls.of(layouts).parameters)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<" + print_conv_layouts(self.layouts()) + ">")


class _OpaqueAttr(Data[str]):
    """An attribute ``custom_call`` carries that no rule reads, kept as the
    text between its angle brackets and printed back the same."""

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> str:
        return parser._parse_dialect_symbol_body()  # (the body of '<...>', nested kept)

    def print_parameter(self, printer: Printer) -> None:
        printer.print_string(f"<{self.data}>")


@irdl_attr_definition
class OutputOperandAliasAttr(_OpaqueAttr):
    """``#stablehlo.output_operand_alias<...>`` (which result reuses an operand's buffer)."""

    name = "stablehlo.output_operand_alias"


@irdl_attr_definition
class SdyShardingRuleAttr(_OpaqueAttr):
    """``#sdy.op_sharding_rule<...>`` (Shardy's rule for a custom call)."""

    name = "sdy.op_sharding_rule"


# ---- ops ----

def _ints(parser: Parser) -> list[int]:
    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer)


def _array(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(values))


def _list(values: Sequence[int]) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


def _operands(parser: Parser) -> list[UnresolvedOperand]:
    first = parser.parse_optional_unresolved_operand()
    if first is None:
        return []
    out = [first]
    while parser.parse_optional_punctuation(",") is not None:
        out.append(parser.parse_unresolved_operand())
    return out


def _types(parser: Parser, n: int, kind: str) -> tuple[list[Attribute], list[Attribute]]:
    """The types after ``:``: ``(A, B) -> R`` (each operand's and the
    results'), one type ``T`` (every operand and the result: StableHLO's
    SameOperandsAndResultType), ``P, T`` (select: the predicate's then the
    rest's), ``T -> R`` (chlo's unary ops) or ``A, B`` (return)."""
    parser.parse_punctuation(":")
    fn = parser.parse_optional_function_type()
    if fn is not None:
        return list(fn.inputs.data), list(fn.outputs.data)
    types = [parser.parse_type()]
    while parser.parse_optional_punctuation(",") is not None:
        types.append(parser.parse_type())
    if kind == "return":
        return types, []
    if parser.parse_optional_punctuation("->") is not None:
        return types * n if len(types) == 1 else types, [parser.parse_type()]
    if kind == "select" and len(types) == 2:
        return [types[0], types[1], types[1]], [types[1]]
    if len(types) != 1:
        parser.raise_error(f"expected one type or a function type, got {len(types)} types")
    return types * n, types


def _print_types(op: Operation, printer: Printer, kind: str = "") -> None:
    ins = [v.type for v in op.operands]
    outs = [r.type for r in op.results]
    printer.print_string(" : ")
    if kind == "return":
        printer.print_list(ins, printer.print_attribute)
    elif kind == "same" and len(outs) == 1 and all(t == outs[0] for t in ins):
        printer.print_attribute(outs[0])
    elif kind == "select" and len(ins) == 3 and ins[1] == ins[2] == outs[0]:
        printer.print_list([ins[0], outs[0]], printer.print_attribute)
    elif kind == "arrow" and len(ins) == 1 and len(outs) == 1:
        printer.print_attribute(ins[0])
        printer.print_string(" -> ")
        printer.print_attribute(outs[0])
    else:
        printer.print_attribute(FunctionType.from_lists(ins, outs))


def _keyword_list(parser: Parser, word: str) -> list[int]:
    parser.parse_punctuation(",")
    parser.parse_keyword(word)
    parser.parse_punctuation("=")
    return _ints(parser)


class StablehloOp(Operation):
    """A StableHLO op: operands, results, the properties of its generic form.
    ``FORMAT`` names its pretty syntax; ``PROPS`` the properties it needs."""

    name = "stablehlo.op"
    traits = traits_def(Pure())
    FORMAT: ClassVar[str] = "same"
    PROPS: ClassVar[dict[str, type[Attribute]]] = {}
    ARITY: ClassVar[int | None] = None  # operands (None: any number)
    RESULTS: ClassVar[int] = 1

    def verify_(self) -> None:
        self.verify_common(self.RESULTS, 0)

    def verify_common(self, results: int, regions: int) -> None:
        if self.ARITY is not None and len(self.operands) != self.ARITY:
            raise VerifyException(f"expects {self.ARITY} operands, got {len(self.operands)}")
        if len(self.results) != results:
            raise VerifyException(f"expects {results} result(s), got {len(self.results)}")
        if len(self.regions) != regions:
            raise VerifyException(f"expects {regions} region(s), got {len(self.regions)}")
        for key, kind in self.PROPS.items():
            value = self.properties.get(key)
            if not isinstance(value, kind):
                raise VerifyException(f"expects the property '{key}' ({kind.__name__}), "
                                      f"got {value}")
        for v in (*self.operands, *self.results):
            if not isinstance(v.type, TensorType):
                raise VerifyException(f"operates on tensors, got {v.type}")

    def prop_ints(self, key: str) -> tuple[int, ...]:
        value = self.properties[key]
        assert isinstance(value, DenseArrayBase)
        return tuple(value.get_values())  # type: ignore[arg-type]

    @classmethod
    def parse(cls, parser: Parser) -> StablehloOp:
        return _PARSE[cls.FORMAT](cls, parser)

    def print(self, printer: Printer) -> None:
        _PRINT[self.FORMAT](self, printer)


def _finish(cls: type[StablehloOp], parser: Parser, operands: list[UnresolvedOperand],
            props: dict[str, Attribute], kind: str = "",
            regions: Sequence[Region] = ()) -> StablehloOp:
    attrs = parser.parse_optional_attr_dict()
    ins, outs = _types(parser, len(operands), kind)
    if len(ins) != len(operands):
        parser.raise_error(f"'{cls.name}' has {len(operands)} operands but {len(ins)} "
                           "operand types")
    values = [parser.resolve_operand(o, t) for o, t in zip(operands, ins)]
    return cls.create(operands=values, result_types=outs, properties=props, attributes=attrs,
                      regions=regions)


def _print_operands(op: Operation, printer: Printer) -> None:
    printer.print_string(" ")
    printer.print_list(op.operands, printer.print_operand)


def _print_attrs(op: Operation, printer: Printer) -> None:
    if op.attributes:
        printer.print_op_attributes(op.attributes)


# "same": %a, %b attr-dict : T | (A, B) -> R
def _parse_same(cls: type[StablehloOp], parser: Parser) -> StablehloOp:
    return _finish(cls, parser, _operands(parser), {}, "same")


def _print_same(op: StablehloOp, printer: Printer, kind: str = "same") -> None:
    _print_operands(op, printer)
    _print_attrs(op, printer)
    _print_types(op, printer, kind)


# "constant": attr-dict dense<...> : T
def _parse_constant(cls: type[StablehloOp], parser: Parser) -> StablehloOp:
    attrs = parser.parse_optional_attr_dict()
    if parser.parse_optional_punctuation("(") is not None:  # () <{value = ...}> : () -> T
        parser.parse_punctuation(")")
        props = parser.parse_optional_properties_dict()
        attrs |= parser.parse_optional_attr_dict()
        fn = parser.parse_function_type() if parser.parse_optional_punctuation(":") else None
        outs = list(fn.outputs.data) if fn is not None else []
        return cls.create(result_types=outs, properties=props, attributes=attrs)
    value = parser.parse_attribute()
    if not isinstance(value, DenseIntOrFPElementsAttr):
        parser.raise_error(f"'stablehlo.constant' expects a dense<...> tensor literal, "
                           f"got {value}")
    return cls.create(result_types=[value.type], properties={"value": value},
                      attributes=attrs)


def _print_constant(op: StablehloOp, printer: Printer) -> None:
    _print_attrs(op, printer)
    printer.print_string(" ")
    printer.print_attribute(op.properties["value"])


# "iota": dim = N attr-dict : T
def _parse_iota(cls: type[StablehloOp], parser: Parser) -> StablehloOp:
    parser.parse_keyword("dim")
    parser.parse_punctuation("=")
    dim = parser.parse_integer()
    attrs = parser.parse_optional_attr_dict()
    parser.parse_punctuation(":")
    t = parser.parse_type()
    return cls.create(result_types=[t], properties={"iota_dimension": IntegerAttr(dim, i64)},
                      attributes=attrs)


def _print_iota(op: StablehloOp, printer: Printer) -> None:
    dim = op.properties["iota_dimension"]
    assert isinstance(dim, IntegerAttr)
    printer.print_string(f" dim = {dim.value.data}")
    _print_attrs(op, printer)
    printer.print_string(" : ")
    printer.print_attribute(op.results[0].type)


# "dims": %x, dims = [..] attr-dict : ...   (broadcast_in_dim, transpose, reverse)
_DIMS_PROP = {"stablehlo.broadcast_in_dim": "broadcast_dimensions",
              "stablehlo.transpose": "permutation", "stablehlo.reverse": "dimensions"}


def _parse_dims(cls: type[StablehloOp], parser: Parser) -> StablehloOp:
    x = parser.parse_unresolved_operand()
    dims = _keyword_list(parser, "dims")
    return _finish(cls, parser, [x], {_DIMS_PROP[cls.name]: _array(dims)},
                   "same" if cls.name == "stablehlo.reverse" else "")


def _print_dims(op: StablehloOp, printer: Printer) -> None:
    _print_operands(op, printer)
    printer.print_string(f", dims = {_list(op.prop_ints(_DIMS_PROP[op.name]))}")
    _print_attrs(op, printer)
    _print_types(op, printer, "same" if op.name == "stablehlo.reverse" else "")


# "compare": DIR, %a, %b (, TYPE)? attr-dict : (A, B) -> R
def _parse_compare(cls: type[StablehloOp], parser: Parser) -> StablehloOp:
    direction = parser.parse_str_enum(ComparisonDirection)
    parser.parse_punctuation(",")
    a = parser.parse_unresolved_operand()
    parser.parse_punctuation(",")
    b = parser.parse_unresolved_operand()
    props: dict[str, Attribute] = {"comparison_direction": ComparisonDirectionAttr(direction)}
    if parser.parse_optional_punctuation(",") is not None:
        props["compare_type"] = ComparisonTypeAttr(parser.parse_str_enum(ComparisonType))
    return _finish(cls, parser, [a, b], props)


def _print_compare(op: StablehloOp, printer: Printer) -> None:
    direction = op.properties["comparison_direction"]
    assert isinstance(direction, ComparisonDirectionAttr)
    printer.print_string(f" {direction.data.value},")
    _print_operands(op, printer)
    kind = op.properties.get("compare_type")
    if isinstance(kind, ComparisonTypeAttr):
        printer.print_string(f", {kind.data.value}")
    _print_attrs(op, printer)
    _print_types(op, printer)


# "slice": %x [a:b(:s)?, ...] attr-dict : (T) -> R
def _parse_slice(cls: type[StablehloOp], parser: Parser) -> StablehloOp:
    x = parser.parse_unresolved_operand()

    def one() -> tuple[int, int, int]:
        a = parser.parse_integer()
        parser.parse_punctuation(":")
        b = parser.parse_integer()
        s = parser.parse_integer() if parser.parse_optional_punctuation(":") else 1
        return a, b, s

    triples = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, one)
    props = {k: _array([t[i] for t in triples]) for i, k in
             enumerate(("start_indices", "limit_indices", "strides"))}
    return _finish(cls, parser, [x], props)  # type: ignore[arg-type]


def _print_slice(op: StablehloOp, printer: Printer) -> None:
    _print_operands(op, printer)
    parts = [f"{a}:{b}" + (f":{s}" if s != 1 else "") for a, b, s in zip(
        op.prop_ints("start_indices"), op.prop_ints("limit_indices"), op.prop_ints("strides"))]
    printer.print_string(" [" + ", ".join(parts) + "]")
    _print_attrs(op, printer)
    _print_types(op, printer)


# "sized": %x, %i..., sizes = [..] (dynamic_slice)
def _parse_sized(cls: type[StablehloOp], parser: Parser) -> StablehloOp:
    operands = [parser.parse_unresolved_operand()]
    while parser.parse_optional_punctuation(",") is not None:
        if parser.parse_optional_keyword("sizes") is not None:
            parser.parse_punctuation("=")
            sizes = _ints(parser)
            return _finish(cls, parser, operands, {"slice_sizes": _array(sizes)})
        operands.append(parser.parse_unresolved_operand())
    parser.raise_error("'stablehlo.dynamic_slice' expects 'sizes = [...]'")


def _print_sized(op: StablehloOp, printer: Printer) -> None:
    _print_operands(op, printer)
    printer.print_string(f", sizes = {_list(op.prop_ints('slice_sizes'))}")
    _print_attrs(op, printer)
    _print_types(op, printer)


# "concatenate": %a, %b, dim = N
def _parse_concatenate(cls: type[StablehloOp], parser: Parser) -> StablehloOp:
    operands = [parser.parse_unresolved_operand()]
    while parser.parse_optional_punctuation(",") is not None:
        if parser.parse_optional_keyword("dim") is not None:
            parser.parse_punctuation("=")
            dim = parser.parse_integer()
            return _finish(cls, parser, operands, {"dimension": IntegerAttr(dim, i64)})
        operands.append(parser.parse_unresolved_operand())
    parser.raise_error("'stablehlo.concatenate' expects 'dim = N'")


def _print_concatenate(op: StablehloOp, printer: Printer) -> None:
    _print_operands(op, printer)
    dim = op.properties["dimension"]
    assert isinstance(dim, IntegerAttr)
    printer.print_string(f", dim = {dim.value.data}")
    _print_attrs(op, printer)
    _print_types(op, printer)


# "pad": %x, %v, low = [..], high = [..], interior = [..]
def _parse_pad(cls: type[StablehloOp], parser: Parser) -> StablehloOp:
    x = parser.parse_unresolved_operand()
    parser.parse_punctuation(",")
    v = parser.parse_unresolved_operand()
    props = {k: _array(_keyword_list(parser, w)) for k, w in (
        ("edge_padding_low", "low"), ("edge_padding_high", "high"),
        ("interior_padding", "interior"))}
    return _finish(cls, parser, [x, v], props)  # type: ignore[arg-type]


def _print_pad(op: StablehloOp, printer: Printer) -> None:
    _print_operands(op, printer)
    for k, w in (("edge_padding_low", "low"), ("edge_padding_high", "high"),
                 ("interior_padding", "interior")):
        printer.print_string(f", {w} = {_list(op.prop_ints(k))}")
    _print_attrs(op, printer)
    _print_types(op, printer)


# "dot": %a, %b (, batching_dims = [..] x [..])? (, contracting_dims = [..] x [..])?
#        (, precision = [A, B])?    (dot_general; dot has only the precision)
def _parse_dot(cls: type[StablehloOp], parser: Parser) -> StablehloOp:
    a = parser.parse_unresolved_operand()
    parser.parse_punctuation(",")
    b = parser.parse_unresolved_operand()
    dims: dict[str, list[int]] = {}
    props: dict[str, Attribute] = {}
    while parser.parse_optional_punctuation(",") is not None:
        word = parser.parse_identifier()
        parser.parse_punctuation("=")
        if word in ("batching_dims", "contracting_dims") and cls.name.endswith("dot_general"):
            lhs = _ints(parser)
            parser.parse_keyword("x")
            dims[word] = [lhs, _ints(parser)]  # type: ignore[list-item]
        elif word == "precision":
            props["precision_config"] = ArrayAttr(parser.parse_comma_separated_list(
                parser.Delimiter.SQUARE, lambda: PrecisionAttr(parser.parse_str_enum(Precision))))
        else:
            parser.raise_error(f"'{cls.name}': '{word}' is not supported")
    if cls.name.endswith("dot_general"):
        (lb, rb), (lc, rc) = (dims.get(k, [[], []]) for k in ("batching_dims",
                                                            "contracting_dims"))
        props["dot_dimension_numbers"] = DotDimensionNumbersAttr.of(lb, rb, lc, rc)
    return _finish(cls, parser, [a, b], props)


def _print_dot(op: StablehloOp, printer: Printer) -> None:
    _print_operands(op, printer)
    numbers = op.properties.get("dot_dimension_numbers")
    if isinstance(numbers, DotDimensionNumbersAttr):
        lb, rb, lc, rc = numbers.dims()
        if lb or rb:
            printer.print_string(f", batching_dims = {_list(lb)} x {_list(rb)}")
        printer.print_string(f", contracting_dims = {_list(lc)} x {_list(rc)}")
    precision = op.properties.get("precision_config")
    if isinstance(precision, ArrayAttr):
        printer.print_string(", precision = [" + ", ".join(
            p.data.value for p in precision if isinstance(p, PrecisionAttr)) + "]")
    _print_attrs(op, printer)
    _print_types(op, printer)


# "reduce": (%x init: %c), ... applies OP across dimensions = [..] : (...) -> ...
#           or ... across dimensions = [..] : (...) -> ... reducer(%a: T, %b: T) ... { body }
def _parse_reduce(cls: type[StablehloOp], parser: Parser) -> StablehloOp:
    def pair() -> tuple[UnresolvedOperand, UnresolvedOperand]:
        x = parser.parse_unresolved_operand()
        parser.parse_keyword("init")
        parser.parse_punctuation(":")
        return x, parser.parse_unresolved_operand()

    pairs = [*parser.parse_comma_separated_list(parser.Delimiter.PAREN, pair)]
    while parser.parse_optional_punctuation(",") is not None:
        pairs += parser.parse_comma_separated_list(parser.Delimiter.PAREN, pair)
    applies = None
    if parser.parse_optional_keyword("applies") is not None:
        applies = parser.parse_identifier()
        if applies not in _BY_NAME:
            parser.raise_error(f"'stablehlo.reduce' applies an unknown op '{applies}'")
    parser.parse_keyword("across")
    parser.parse_keyword("dimensions")
    parser.parse_punctuation("=")
    props = {"dimensions": _array(_ints(parser))}
    operands = [p[0] for p in pairs] + [p[1] for p in pairs]
    attrs = parser.parse_optional_attr_dict()
    ins, outs = _types(parser, len(operands), "")
    if len(ins) != len(operands):
        parser.raise_error(f"'stablehlo.reduce' has {len(operands)} operands but {len(ins)} "
                           "operand types")
    values = [parser.resolve_operand(o, t) for o, t in zip(operands, ins)]
    if applies is not None:
        if len(pairs) != 1:
            parser.raise_error("'stablehlo.reduce' applies one op to one operand")
        t = TensorType(ins[1].get_element_type(), [])  # type: ignore[attr-defined]
        block = Block(arg_types=[t, t])
        body = _BY_NAME[applies].create(operands=list(block.args), result_types=[t])
        block.add_ops([body, ReturnOp.create(operands=list(body.results))])
        region = Region(block)
    else:
        parser.parse_keyword("reducer")
        firsts, seconds = [], []
        for _ in pairs:
            parser.parse_punctuation("(")
            firsts.append(parser.parse_argument())
            parser.parse_punctuation(",")
            seconds.append(parser.parse_argument())
            parser.parse_punctuation(")")
        region = parser.parse_region(firsts + seconds)
    return cls.create(operands=values, result_types=outs, properties=props, attributes=attrs,
                      regions=[region])


def _reduce_applies(op: StablehloOp) -> str | None:
    """The op name a one-operand reduce's body applies to its two arguments, in order."""
    block = op.regions[0].blocks.first if op.regions and op.regions[0].blocks else None
    if block is None or len(op.operands) != 2 or len(block.args) != 2:
        return None
    ops = list(block.ops)
    if len(ops) == 2 and isinstance(ops[0], StablehloOp) and ops[0].FORMAT == "same" and \
            list(ops[0].operands) == list(block.args) and isinstance(ops[1], ReturnOp) and \
            list(ops[1].operands) == list(ops[0].results) and not ops[0].attributes:
        return ops[0].name
    return None


def _print_reduce(op: StablehloOp, printer: Printer) -> None:
    n = len(op.operands) // 2
    for i in range(n):
        x, init = op.operands[i], op.operands[n + i]
        printer.print_string(", (" if i else "(")
        printer.print_operand(x)
        printer.print_string(" init: ")
        printer.print_operand(init)
        printer.print_string(")")
    applies = _reduce_applies(op)
    if applies is not None:
        printer.print_string(f" applies {applies}")
    printer.print_string(f" across dimensions = {_list(op.prop_ints('dimensions'))}")
    _print_attrs(op, printer)
    _print_types(op, printer)
    if applies is None:
        block = op.regions[0].block
        printer.print_string("\n reducer")
        for i in range(n):
            printer.print_string("(")
            printer.print_block_argument(block.args[i])
            printer.print_string(", ")
            printer.print_block_argument(block.args[n + i])
            printer.print_string(")")
        printer.print_string(" ")
        printer.print_region(op.regions[0], print_entry_block_args=False)


# "return": %a, %b : A, B
def _parse_return(cls: type[StablehloOp], parser: Parser) -> StablehloOp:
    operands = _operands(parser)
    attrs = parser.parse_optional_attr_dict()
    types = _types(parser, len(operands), "return")[0] if operands else []
    values = [parser.resolve_operand(o, t) for o, t in zip(operands, types)]
    return cls.create(operands=values, attributes=attrs)


def _print_return(op: StablehloOp, printer: Printer) -> None:
    if op.operands:
        _print_operands(op, printer)
        _print_attrs(op, printer)
        _print_types(op, printer, "return")


def _parse_select(cls: type[StablehloOp], parser: Parser) -> StablehloOp:
    return _finish(cls, parser, _operands(parser), {}, "select")


# "while": (%arg = %init, ...) : T, ... attr-dict cond { ... } do { ... }
def _parse_while(cls: type[StablehloOp], parser: Parser) -> StablehloOp:
    def pair() -> tuple[Parser.UnresolvedArgument, UnresolvedOperand]:
        arg = parser.parse_argument(expect_type=False)
        parser.parse_punctuation("=")
        return arg, parser.parse_unresolved_operand()

    pairs = parser.parse_comma_separated_list(parser.Delimiter.PAREN, pair)
    parser.parse_punctuation(":")
    types = [parser.parse_type()]
    while parser.parse_optional_punctuation(",") is not None:
        types.append(parser.parse_type())
    if len(types) != len(pairs):
        parser.raise_error(f"'stablehlo.while' has {len(pairs)} operands but {len(types)} "
                           "types")
    attrs = parser.parse_optional_attr_dict()
    values = [parser.resolve_operand(o, t) for (_, o), t in zip(pairs, types)]
    regions = []
    for word in ("cond", "do"):
        parser.parse_keyword(word)
        regions.append(parser.parse_region([a.resolve(t) for (a, _), t in zip(pairs, types)]))
    return cls.create(operands=values, result_types=types, attributes=attrs, regions=regions)


# "convolution": (%lhs, %rhs) dim_numbers = [..]x[..]->[..], window = {stride = [..],
#   pad = [[lo, hi], ..], lhs_dilate = [..], rhs_dilate = [..], reverse = [..]}
#   {batch_group_count = .., feature_group_count = .., precision_config = [..]} : (A, B) -> R
_CONV_WINDOW = {"stride": "window_strides", "pad": "padding", "lhs_dilate": "lhs_dilation",
                "rhs_dilate": "rhs_dilation", "reverse": "window_reversal"}
_CONV_PROPS = ("batch_group_count", "feature_group_count", "precision_config")


def _parse_convolution(cls: type[StablehloOp], parser: Parser) -> StablehloOp:
    operands = parser.parse_comma_separated_list(parser.Delimiter.PAREN,
                                                 parser.parse_unresolved_operand)
    parser.parse_keyword("dim_numbers")
    parser.parse_punctuation("=")
    props: dict[str, Attribute] = {
        "dimension_numbers": ConvDimensionNumbersAttr.of(parse_conv_layouts(parser))}
    if parser.parse_optional_punctuation(",") is not None:
        parser.parse_keyword("window")
        parser.parse_punctuation("=")

        def field() -> None:
            key = parser.parse_identifier()
            if key not in _CONV_WINDOW:
                parser.raise_error(f"unknown convolution window field '{key}'")
            parser.parse_punctuation("=")
            if key == "pad":
                rows = parser.parse_comma_separated_list(parser.Delimiter.SQUARE,
                                                         lambda: _ints(parser))
                if any(len(r) != 2 for r in rows):
                    parser.raise_error("convolution padding is a list of [low, high] pairs")
                props["padding"] = DenseIntOrFPElementsAttr.from_list(
                    TensorType(i64, [len(rows), 2]), [v for r in rows for v in r])
            elif key == "reverse":
                flags = parser.parse_comma_separated_list(
                    parser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_boolean=True))
                props["window_reversal"] = DenseArrayBase.from_list(i1, [int(bool(v))
                                                                         for v in flags])
            else:
                props[_CONV_WINDOW[key]] = _array(_ints(parser))

        parser.parse_comma_separated_list(parser.Delimiter.BRACES, field)
    attrs = parser.parse_optional_attr_dict()
    for key in _CONV_PROPS:  # the pretty form's attribute dict holds properties
        if key in attrs:
            props[key] = attrs.pop(key)
    ins, outs = _types(parser, len(operands), "")
    if len(ins) != len(operands):
        parser.raise_error(f"'{cls.name}' has {len(operands)} operands but {len(ins)} "
                           "operand types")
    values = [parser.resolve_operand(o, t) for o, t in zip(operands, ins)]
    return cls.create(operands=values, result_types=outs, properties=props, attributes=attrs)


def _print_convolution(op: StablehloOp, printer: Printer) -> None:
    printer.print_string("(")
    printer.print_list(op.operands, printer.print_operand)
    numbers = op.properties["dimension_numbers"]
    assert isinstance(numbers, ConvDimensionNumbersAttr)
    printer.print_string(f") dim_numbers = {print_conv_layouts(numbers.layouts())}")
    window = []
    for key, prop in _CONV_WINDOW.items():
        value = op.properties.get(prop)
        if key == "pad" and isinstance(value, DenseIntOrFPElementsAttr):
            flat = [int(v) for v in value.get_values()]
            window.append("pad = [" + ", ".join(f"[{flat[k]}, {flat[k + 1]}]"
                                                for k in range(0, len(flat), 2)) + "]")
        elif key == "reverse" and isinstance(value, DenseArrayBase):
            window.append("reverse = [" + ", ".join(
                "true" if v else "false" for v in value.get_values()) + "]")
        elif isinstance(value, DenseArrayBase):
            window.append(f"{key} = {_list(value.get_values())}")  # type: ignore[arg-type]
    if window:
        printer.print_string(", window = {" + ", ".join(window) + "}")
    shown = {k: op.properties[k] for k in _CONV_PROPS if k in op.properties}
    printer.print_op_attributes({**shown, **op.attributes})
    _print_types(op, printer)


# "top_k": (%x, k = K) attr-dict : T -> (V, I)
def _parse_top_k(cls: type[StablehloOp], parser: Parser) -> StablehloOp:
    parser.parse_punctuation("(")
    x = parser.parse_unresolved_operand()
    parser.parse_punctuation(",")
    parser.parse_keyword("k")
    parser.parse_punctuation("=")
    k = parser.parse_integer(allow_boolean=False)
    parser.parse_punctuation(")")
    attrs = parser.parse_optional_attr_dict()
    parser.parse_punctuation(":")
    t = parser.parse_type()
    parser.parse_punctuation("->")
    outs = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
    return cls.create(operands=[parser.resolve_operand(x, t)], result_types=outs,
                      properties={"k": IntegerAttr(k, i64)}, attributes=attrs)


def _print_top_k(op: StablehloOp, printer: Printer) -> None:
    k = op.properties["k"]
    assert isinstance(k, IntegerAttr)
    printer.print_string("(")
    printer.print_operand(op.operands[0])
    printer.print_string(f", k = {k.value.data})")
    _print_attrs(op, printer)
    printer.print_string(" : ")
    printer.print_attribute(op.operands[0].type)
    printer.print_string(" -> (")
    printer.print_list([r.type for r in op.results], printer.print_attribute)
    printer.print_string(")")


# "reduce_precision": %x, format = e5m10 attr-dict : T
def _parse_reduce_precision(cls: type[StablehloOp], parser: Parser) -> StablehloOp:
    x = parser.parse_unresolved_operand()
    parser.parse_punctuation(",")
    parser.parse_keyword("format")
    parser.parse_punctuation("=")
    word = parser.parse_identifier()
    match = re.fullmatch(r"e(\d+)m(\d+)", word)
    if match is None:
        parser.raise_error(f"expected a format eNmM (exponent and mantissa bits), got '{word}'")
    props: dict[str, Attribute] = {"exponent_bits": IntegerAttr(int(match[1]), i32),
                                   "mantissa_bits": IntegerAttr(int(match[2]), i32)}
    return _finish(cls, parser, [x], props, "same")


def _print_reduce_precision(op: StablehloOp, printer: Printer) -> None:
    e, m = (op.properties[k] for k in ("exponent_bits", "mantissa_bits"))
    assert isinstance(e, IntegerAttr) and isinstance(m, IntegerAttr)
    _print_operands(op, printer)
    printer.print_string(f", format = e{e.value.data}m{m.value.data}")
    _print_attrs(op, printer)
    _print_types(op, printer, "same")


# "custom_call": @target(%a, ...) attr-dict : (A, ...) -> R | (R, ...)
def _parse_custom_call(cls: type[StablehloOp], parser: Parser) -> StablehloOp:
    target = parser.parse_symbol_name().data
    operands = parser.parse_comma_separated_list(parser.Delimiter.PAREN,
                                                 parser.parse_unresolved_operand)
    attrs = parser.parse_optional_attr_dict()
    parser.parse_punctuation(":")
    fn = parser.parse_function_type()
    if len(fn.inputs.data) != len(operands):
        parser.raise_error(f"'{cls.name}' has {len(operands)} operands but "
                           f"{len(fn.inputs.data)} operand types")
    values = [parser.resolve_operand(o, t) for o, t in zip(operands, fn.inputs.data)]
    return cls.create(operands=values, result_types=list(fn.outputs.data),
                      properties={"call_target_name": StringAttr(target)}, attributes=attrs)


def _print_custom_call(op: StablehloOp, printer: Printer) -> None:
    target = op.properties["call_target_name"]
    assert isinstance(target, StringAttr)
    printer.print_string(" ")
    printer.print_attribute(SymbolRefAttr(target.data))
    printer.print_string("(")
    printer.print_list(op.operands, printer.print_operand)
    printer.print_string(")")
    _print_attrs(op, printer)
    printer.print_string(" : ")
    printer.print_attribute(FunctionType.from_lists([v.type for v in op.operands],
                                                    [r.type for r in op.results]))


def _parse_generic_only(cls: type[StablehloOp], parser: Parser) -> StablehloOp:
    parser.raise_error(f"'{cls.name}' is read in the generic form only (as JAX prints it: "
                       f'"{cls.name}"(...) <{{...}}> : ...)')


_PARSE = {"generic": _parse_generic_only, "same": _parse_same, "select": _parse_select,
          "arrow": _parse_same,
          "constant": _parse_constant, "iota": _parse_iota, "dims": _parse_dims,
          "compare": _parse_compare, "slice": _parse_slice, "sized": _parse_sized,
          "concatenate": _parse_concatenate, "pad": _parse_pad, "dot": _parse_dot,
          "reduce": _parse_reduce, "return": _parse_return, "while": _parse_while,
          "convolution": _parse_convolution, "top_k": _parse_top_k,
          "reduce_precision": _parse_reduce_precision, "custom_call": _parse_custom_call}
_PRINT = {"same": _print_same, "select": lambda op, p: _print_same(op, p, "select"),
          "arrow": lambda op, p: _print_same(op, p, "arrow"),
          "constant": _print_constant, "iota": _print_iota, "dims": _print_dims,
          "compare": _print_compare, "slice": _print_slice, "sized": _print_sized,
          "concatenate": _print_concatenate, "pad": _print_pad, "dot": _print_dot,
          "reduce": _print_reduce, "return": _print_return,
          "convolution": _print_convolution, "top_k": _print_top_k,
          "reduce_precision": _print_reduce_precision, "custom_call": _print_custom_call}



def _op(name: str, fmt: str = "same", arity: int | None = None,
        props: dict[str, type[Attribute]] | None = None,
        base: type[StablehloOp] = StablehloOp) -> type[StablehloOp]:
    cls_name = "".join(p.title() for p in name.split(".")[1].split("_")) + "Op"
    return type(cls_name, (base,), {"name": name, "FORMAT": fmt, "ARITY": arity,
                                     "PROPS": props or {}, "__module__": __name__})


class ReturnOp(StablehloOp):
    name = "stablehlo.return"
    traits = traits_def(Pure(), IsTerminator())
    FORMAT = "return"
    RESULTS = 0


class WhileOp(StablehloOp):
    """``stablehlo.while``: carried values, a ``cond`` region (one ``i1``) and
    a ``do`` region (the next values). Printed in the generic form."""

    name = "stablehlo.while"
    traits = traits_def()  # (its body may hold anything: not pure)
    FORMAT = "while"
    print = Operation.print  # type: ignore[assignment]  (the generic form)

    def verify_(self) -> None:
        n = len(self.operands)
        types = [v.type for v in self.operands]
        if [r.type for r in self.results] != types or len(self.regions) != 2 or any(
                len(r.blocks) != 1 or [a.type for a in r.block.args] != types
                or not isinstance(r.block.last_op, ReturnOp) for r in self.regions):
            raise VerifyException(f"expects {n} results, a cond and a do region of one "
                                  "block each taking the carried values, ending in "
                                  "stablehlo.return")
        if len(self.regions[0].block.last_op.operands) != 1 or \
                [v.type for v in self.regions[1].block.last_op.operands] != types:
            raise VerifyException("expects cond to return one i1 and do the carried values")


class CaseOp(StablehloOp):
    """``stablehlo.case``: an index and one region per branch, each ending in
    ``stablehlo.return`` of the results (``lax.switch``/``cond``; generic form)."""

    name = "stablehlo.case"
    FORMAT = "generic"
    ARITY = 1
    traits = traits_def()  # (its branches may hold anything: not pure)
    print = Operation.print  # type: ignore[assignment]  (the generic form)

    def verify_(self) -> None:
        types = [r.type for r in self.results]
        if not self.regions or any(
                len(r.blocks) != 1 or r.block.args or not isinstance(r.block.last_op, ReturnOp)
                or [v.type for v in r.block.last_op.operands] != types for r in self.regions):
            raise VerifyException("expects branches of one block without arguments, each "
                                  "ending in stablehlo.return of the result types")
        self.verify_common(len(types), len(self.regions))


class GatherOp(StablehloOp):
    """``stablehlo.gather`` (JAX prints it in the generic form, and so do we)."""

    name = "stablehlo.gather"
    FORMAT = "generic"
    ARITY = 2
    PROPS = {"dimension_numbers": GatherDimensionNumbersAttr, "slice_sizes": DenseArrayBase}
    print = Operation.print  # type: ignore[assignment]  (the generic form)


class ScatterOp(StablehloOp):
    """``stablehlo.scatter`` of one operand (generic form, as JAX prints it)."""

    name = "stablehlo.scatter"
    FORMAT = "generic"
    ARITY = 3
    traits = traits_def(Pure())
    PROPS = {"scatter_dimension_numbers": ScatterDimensionNumbersAttr}
    print = Operation.print  # type: ignore[assignment]  (the generic form)

    def verify_(self) -> None:
        body = self.regions[0].blocks.first if len(self.regions) == 1 else None
        if body is None or len(body.args) != 2 or not isinstance(body.last_op, ReturnOp):
            raise VerifyException("expects an update computation of one block of 2 "
                                  "arguments ending in stablehlo.return")
        self.verify_common(1, 1)
        for key, kind in self.PROPS.items():
            if not isinstance(self.properties.get(key), kind):
                raise VerifyException(f"expects the property '{key}' ({kind.__name__})")


class ReduceWindowOp(StablehloOp):
    """``stablehlo.reduce_window`` of n operands and n init values (generic form,
    as JAX prints it): a body of 2n scalars (n accumulators, n elements)."""

    name = "stablehlo.reduce_window"
    FORMAT = "generic"
    PROPS = {"window_dimensions": DenseArrayBase}
    print = Operation.print  # type: ignore[assignment]  (the generic form)

    def verify_(self) -> None:
        n = len(self.operands) // 2
        body = self.regions[0].blocks.first if len(self.regions) == 1 else None
        if not n or len(self.operands) % 2:
            raise VerifyException(f"expects n operands and n init values, got "
                                  f"{len(self.operands)} operands")
        if body is None or len(body.args) != 2 * n or not isinstance(body.last_op, ReturnOp):
            raise VerifyException(f"expects a body of one block of {2 * n} arguments ending "
                                  "in stablehlo.return")
        self.verify_common(n, 1)
        if not isinstance(self.properties.get("window_dimensions"), DenseArrayBase):
            raise VerifyException("expects the property 'window_dimensions'")


class ConvolutionOp(StablehloOp):
    """``stablehlo.convolution`` (``lax.conv_general_dilated`` and the convolutions
    of its gradients): the pretty form JAX prints, or the generic one."""

    name = "stablehlo.convolution"
    FORMAT = "convolution"
    ARITY = 2
    PROPS = {"dimension_numbers": ConvDimensionNumbersAttr,
             "feature_group_count": IntegerAttr, "batch_group_count": IntegerAttr}


class SelectAndScatterOp(StablehloOp):
    """``stablehlo.select_and_scatter`` (max pool's gradient; generic form, as JAX
    prints it): operand, source, init value; a select and a scatter region."""

    name = "stablehlo.select_and_scatter"
    FORMAT = "generic"
    ARITY = 3
    PROPS = {"window_dimensions": DenseArrayBase}
    print = Operation.print  # type: ignore[assignment]  (the generic form)

    def verify_(self) -> None:
        if len(self.regions) != 2 or any(
                len(r.blocks) != 1 or len(r.block.args) != 2
                or not isinstance(r.block.last_op, ReturnOp)
                or len(r.block.last_op.operands) != 1 for r in self.regions):
            raise VerifyException("expects a select and a scatter region of one block of 2 "
                                  "arguments each, ending in stablehlo.return of one value")
        self.verify_common(1, 2)


class SortOp(StablehloOp):
    """``stablehlo.sort`` of n operands along ``dimension`` by a comparator region
    of 2n scalars (``jnp.sort``, ``argsort``, ``lax.sort``; generic form)."""

    name = "stablehlo.sort"
    FORMAT = "generic"
    print = Operation.print  # type: ignore[assignment]  (the generic form)

    def verify_(self) -> None:
        n = len(self.operands)
        block = self.regions[0].blocks.first if len(self.regions) == 1 else None
        if block is None or len(block.args) != 2 * n or not isinstance(block.last_op,
                                                                          ReturnOp) or \
                len(block.last_op.operands) != 1:
            raise VerifyException(f"expects a comparator of one block of {2 * n} arguments "
                                  "ending in stablehlo.return of one i1")
        if not n or [r.type for r in self.results] != [v.type for v in self.operands]:
            raise VerifyException("expects operands and results of the same types")
        self.verify_common(n, 1)


class TopKOp(StablehloOp):
    """``chlo.top_k(%x, k = K) : T -> (V, I)``: the k largest along the last
    dimension and their (i32) indices."""

    name = "chlo.top_k"
    FORMAT = "top_k"
    ARITY = 1
    RESULTS = 2
    PROPS = {"k": IntegerAttr}


class CustomCallOp(StablehloOp):
    """``stablehlo.custom_call @target(...)``: a call of a function of the
    compiler's (LAPACK on CPU, ``Sharding``); the rules know some targets."""

    name = "stablehlo.custom_call"
    FORMAT = "custom_call"
    traits = traits_def()  # (a call of anything: not pure)
    PROPS = {"call_target_name": StringAttr}

    def verify_(self) -> None:
        self.verify_common(len(self.results), 0)


class ReduceOp(StablehloOp):
    """``stablehlo.reduce``: n inputs, n inits, n results, a body of 2n scalars."""

    name = "stablehlo.reduce"
    FORMAT = "reduce"
    PROPS = {"dimensions": DenseArrayBase}

    def verify_(self) -> None:
        n = len(self.operands) // 2
        if not n or len(self.operands) % 2 or len(self.results) != n:
            raise VerifyException(f"expects n inputs, n init values and n results, got "
                                  f"{len(self.operands)} operands and {len(self.results)} "
                                  "results")
        if len(self.regions) != 1 or len(self.regions[0].blocks) != 1 or \
                len(self.regions[0].block.args) != 2 * n or \
                not isinstance(self.regions[0].block.last_op, ReturnOp):
            raise VerifyException(f"expects a body of one block of {2 * n} arguments ending "
                                  "in stablehlo.return")
        self.verify_common(n, 1)


# elementwise ops, as their StableHLO names (semantics: passes/convert_stablehlo.py)
UNARY = ("abs", "negate", "exponential", "exponential_minus_one", "log", "log_plus_one",
         "tanh", "logistic", "sqrt", "rsqrt", "cbrt", "sine", "cosine", "tan", "floor", "ceil",
         "round_nearest_even", "round_nearest_afz", "sign", "not", "is_finite", "popcnt",
         "count_leading_zeros", "real", "imag")  # (reduce_precision: its own form)
BINARY = ("add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "power",
          "atan2", "and", "or", "xor", "shift_left", "shift_right_arithmetic",
          "shift_right_logical", "complex")
_ARR = DenseArrayBase
_OPS: list[type[StablehloOp]] = [
    *(_op(f"stablehlo.{n}", "same", 1) for n in UNARY),
    *(_op(f"stablehlo.{n}", "same", 2) for n in BINARY),
    _op("stablehlo.clamp", "same", 3),
    _op("stablehlo.select", "select", 3),
    _op("stablehlo.constant", "constant", 0, {"value": DenseIntOrFPElementsAttr}),
    _op("stablehlo.iota", "iota", 0, {"iota_dimension": IntegerAttr}),
    _op("stablehlo.broadcast_in_dim", "dims", 1, {"broadcast_dimensions": _ARR}),
    _op("stablehlo.transpose", "dims", 1, {"permutation": _ARR}),
    _op("stablehlo.reverse", "dims", 1, {"dimensions": _ARR}),
    _op("stablehlo.reshape", "same", 1),
    _op("stablehlo.convert", "same", 1),
    _op("stablehlo.bitcast_convert", "same", 1),
    _op("stablehlo.reduce_precision", "reduce_precision", 1,
        {"exponent_bits": IntegerAttr, "mantissa_bits": IntegerAttr}),
    _op("stablehlo.compare", "compare", 2, {"comparison_direction": ComparisonDirectionAttr}),
    _op("stablehlo.slice", "slice", 1, {"start_indices": _ARR, "limit_indices": _ARR,
                                        "strides": _ARR}),
    _op("stablehlo.dynamic_slice", "sized", None, {"slice_sizes": _ARR}),
    _op("stablehlo.dynamic_update_slice", "same", None),
    _op("stablehlo.concatenate", "concatenate", None, {"dimension": IntegerAttr}),
    _op("stablehlo.pad", "pad", 2, {"edge_padding_low": _ARR, "edge_padding_high": _ARR,
                                    "interior_padding": _ARR}),
    _op("stablehlo.dot_general", "dot", 2, {"dot_dimension_numbers": DotDimensionNumbersAttr}),
    _op("stablehlo.dot", "dot", 2),
    CaseOp,
    ConvolutionOp,
    CustomCallOp,
    GatherOp,
    ScatterOp,
    ReduceWindowOp,
    SelectAndScatterOp,
    SortOp,
    ReduceOp,
    ReturnOp,
    WhileOp,
]
_BY_NAME = {c.name: c for c in _OPS}
# the CHLO ops JAX prints whose value a pyflame op gives
CHLO_UNARY = ("erf", "square", "asin", "acos", "atan")
# the CHLO ops JAX prints that no one pyflame op computes: the library computes
# them as composites of ops with their own derivatives (pf.erfc, pf.sinh...), which
# load_mlir calls when it records the program (mlir_import.py); the pass leaves them
CHLO_COMPOSITE = ("erfc", "sinh", "cosh", "tan", "atanh", "asinh", "acosh", "lgamma",
                  "digamma", "erf_inv")

STABLEHLO = Dialect("stablehlo", _OPS, [ComparisonDirectionAttr, ComparisonTypeAttr,
                                        PrecisionAttr, DotDimensionNumbersAttr,
                                        ConvDimensionNumbersAttr, OutputOperandAliasAttr,
                                        SdyShardingRuleAttr,
                                        GatherDimensionNumbersAttr,
                                        ScatterDimensionNumbersAttr])
CHLO = Dialect("chlo", [*(_op(f"chlo.{n}", "arrow", 1) for n in (*CHLO_UNARY, *CHLO_COMPOSITE)),
                       TopKOp], [])
