"""The ``sharding`` dialect (issue 17): mesh and sharding attributes, the user
annotation op, and the collectives of partitioned (per-device) programs.

    #sharding.mesh<["data"=2, "model"=2]>
    #sharding.sharding<["data"=2, "model"=2], [{"data"}, {}], partial = {"model"}>
    %y = sharding.annotate %x {sharding = #sharding.sharding<...>} : tensor<8x4xf32>
                                                                  -> tensor<8x4xf32>
    %s = sharding.all_reduce %p {mesh = #sharding.mesh<...>, axes = ["model"],
                                 reduction = "sum"} : tensor<4x4xf32> -> tensor<4x4xf32>

Global programs carry a ``sharding`` attribute (a ``#sharding.sharding``) on
values after propagation (on the defining op; on ``func`` arguments as an
argument attribute); per-device programs use local shapes and the
collectives below. Shape rules are ``dialects/sharding.py``'s, shared with the
frontend.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    IntAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from .opdef import ShapeError
from .sharding import Mesh, Sharding, collective_shape

# the discardable attribute propagation puts on ops (their result's sharding)
# and on func arguments
SHARDING_KEY = "sharding.sharding"


@irdl_attr_definition
class MeshAttr(ParametrizedAttribute):
    """``#sharding.mesh<["data"=2, "model"=2]>``: named axes, major first."""

    name = "sharding.mesh"
    names: ArrayAttr[StringAttr]
    sizes: ArrayAttr[IntAttr]

    @staticmethod
    def get(mesh: Mesh) -> MeshAttr:
        return MeshAttr(ArrayAttr(StringAttr(n) for n in mesh.names),
                        ArrayAttr(IntAttr(s) for _, s in mesh.axes))

    @property
    def mesh(self) -> Mesh:
        return Mesh(tuple((n.data, s.data) for n, s in zip(self.names, self.sizes, strict=True)))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.mesh}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            mesh = _parse_mesh(parser)
        a = cls.get(mesh)
        return (a.names, a.sizes)

    def verify(self) -> None:
        m = self.mesh
        if len(set(m.names)) != len(m.names):
            raise VerifyException(f"mesh {m} names an axis twice")
        if any(s < 1 for _, s in m.axes):
            raise VerifyException(f"mesh {m} has an axis without devices")


def _parse_mesh(parser: AttrParser) -> Mesh:
    def axis() -> tuple[str, int]:
        name = parser.parse_str_literal()
        parser.parse_punctuation("=")
        return name, parser.parse_integer(allow_negative=False)

    return Mesh(tuple(parser.parse_comma_separated_list(parser.Delimiter.SQUARE, axis)))


def _parse_axis_set(parser: AttrParser) -> tuple[str, ...]:
    return tuple(parser.parse_comma_separated_list(parser.Delimiter.BRACES,
                                                   parser.parse_str_literal))


@irdl_attr_definition
class ShardingAttr(ParametrizedAttribute):
    """``#sharding.sharding<mesh, [{"a"}, {}], partial = {"b"}>``: per dimension
    the mesh axes splitting it; the axes over which the value is a partial sum."""

    name = "sharding.sharding"
    mesh_attr: MeshAttr
    dims: ArrayAttr[ArrayAttr[StringAttr]]
    partial: ArrayAttr[StringAttr]

    @staticmethod
    def get(s: Sharding) -> ShardingAttr:
        return ShardingAttr(MeshAttr.get(s.mesh),
                            ArrayAttr(ArrayAttr(StringAttr(a) for a in d) for d in s.dims),
                            ArrayAttr(StringAttr(a) for a in s.partial))

    @property
    def sharding(self) -> Sharding:
        return Sharding(self.mesh_attr.mesh,
                        tuple(tuple(a.data for a in d) for d in self.dims),
                        tuple(a.data for a in self.partial))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.sharding}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            mesh = _parse_mesh(parser)
            parser.parse_punctuation(",")
            dims = parser.parse_comma_separated_list(parser.Delimiter.SQUARE,
                                                     lambda: _parse_axis_set(parser))
            partial: tuple[str, ...] = ()
            if parser.parse_optional_punctuation(","):
                parser.parse_keyword("partial")
                parser.parse_punctuation("=")
                partial = _parse_axis_set(parser)
        a = cls.get(Sharding(mesh, tuple(dims), partial))
        return (a.mesh_attr, a.dims, a.partial)


def _shape(v: SSAValue, what: str) -> tuple[tuple[int, ...], Attribute]:
    t = v.type
    if not isinstance(t, TensorType):
        raise VerifyException(f"{what} must be a ranked tensor, got {t}")
    return tuple(t.get_shape()), t.element_type


@irdl_op_definition
class AnnotateOp(IRDLOperation):
    """A user's layout of a value of the global program (``pf.shard``,
    ``sdy.sharding_constraint``); the identity on values."""

    name = "sharding.annotate"
    input = operand_def(TensorType)
    sharding = prop_def(ShardingAttr)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, x: SSAValue, s: Sharding):
        super().__init__(operands=[x], result_types=[x.type],
                         properties={"sharding": ShardingAttr.get(s)})

    def verify_(self) -> None:
        if self.input.type != self.result.type:
            raise VerifyException(f"result type {self.result.type} must be the operand's "
                                  f"{self.input.type}")
        shape, _ = _shape(self.input, "operand")
        try:
            self.sharding.sharding.check(shape, "annotate")
        except ShapeError as e:
            raise VerifyException(str(e)) from None


class _CollectiveOp(IRDLOperation):
    """A collective of a per-device program over the devices of ``axes``."""

    input = operand_def(TensorType)
    mesh = prop_def(MeshAttr)
    axes = prop_def(ArrayAttr[StringAttr])
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    @property
    def kind(self) -> str:
        return self.name.split(".", 1)[1]

    @property
    def axis_names(self) -> tuple[str, ...]:
        return tuple(a.data for a in self.axes)

    @property
    def group_size(self) -> int:
        return self.mesh.mesh.size(self.axis_names)

    def params(self) -> dict[str, object]:
        return {}

    def verify_(self) -> None:
        names = self.axis_names
        if len(set(names)) != len(names):
            raise VerifyException(f"axes {list(names)} name a mesh axis twice")
        shape, et = _shape(self.input, "operand")
        rshape, ret = _shape(self.result, "result")
        try:
            want = collective_shape(self.kind, shape, self.group_size, self.params())
        except ShapeError as e:
            raise VerifyException(str(e)) from None
        if rshape != want or ret != et:
            raise VerifyException(
                f"result {self.result.type} does not match the {self.kind} of "
                f"{self.input.type} over {list(names)} ({self.group_size} devices): expected "
                f"shape {list(want)}")

    @classmethod
    def make(cls, x: SSAValue, mesh: Mesh, axes: Sequence[str], result_type: Attribute,
             **props: Attribute) -> _CollectiveOp:
        return cls(operands=[x], result_types=[result_type],
                   properties={"mesh": MeshAttr.get(mesh),
                               "axes": ArrayAttr(StringAttr(a) for a in axes), **props})


def _int(v: IntegerAttr) -> int:
    return v.value.data


@irdl_op_definition
class AllReduceOp(_CollectiveOp):
    name = "sharding.all_reduce"
    reduction = prop_def(StringAttr)

    def params(self) -> dict[str, object]:
        return {"reduction": self.reduction.data}


@irdl_op_definition
class AllGatherOp(_CollectiveOp):
    name = "sharding.all_gather"
    dim = prop_def(IntegerAttr)

    def params(self) -> dict[str, object]:
        return {"dim": _int(self.dim)}


@irdl_op_definition
class ReduceScatterOp(_CollectiveOp):
    name = "sharding.reduce_scatter"
    dim = prop_def(IntegerAttr)

    def params(self) -> dict[str, object]:
        return {"dim": _int(self.dim)}


@irdl_op_definition
class AllToAllOp(_CollectiveOp):
    name = "sharding.all_to_all"
    split_dim = prop_def(IntegerAttr)
    concat_dim = prop_def(IntegerAttr)

    def params(self) -> dict[str, object]:
        return {"split_dim": _int(self.split_dim), "concat_dim": _int(self.concat_dim)}


@irdl_op_definition
class PpermuteOp(_CollectiveOp):
    name = "sharding.ppermute"
    pairs = prop_def(DenseArrayBase)

    def params(self) -> dict[str, object]:
        flat = [int(v) for v in self.pairs.get_values()]
        return {"pairs": tuple(zip(flat[::2], flat[1::2], strict=True))}

    def verify_(self) -> None:
        super().verify_()
        flat = [int(v) for v in self.pairs.get_values()]
        n = self.group_size
        src, dst = flat[::2], flat[1::2]
        if len(flat) % 2 or len(set(src)) != len(src) or len(set(dst)) != len(dst) \
                or not all(0 <= i < n for i in flat):
            raise VerifyException(f"pairs {flat} must be (source, destination) pairs of a "
                                  f"partial permutation of 0..{n - 1}")


@irdl_op_definition
class LocalSliceOp(IRDLOperation):
    """This device's block of a value replicated along the sharded dimensions of
    ``sharding`` (communication-free; the partitioner's resharding to split)."""

    name = "sharding.local_slice"
    input = operand_def(TensorType)
    sharding = prop_def(ShardingAttr)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        shape, et = _shape(self.input, "operand")
        rshape, ret = _shape(self.result, "result")
        s = self.sharding.sharding
        try:
            s.check(shape, "local_slice")
        except ShapeError as e:
            raise VerifyException(str(e)) from None
        if rshape != s.local_shape(shape) or ret != et:
            raise VerifyException(f"result {self.result.type} is not the local block "
                                  f"{list(s.local_shape(shape))} of {self.input.type}")


COLLECTIVE_OPS: dict[str, type[_CollectiveOp]] = {
    "all_reduce": AllReduceOp, "all_gather": AllGatherOp, "reduce_scatter": ReduceScatterOp,
    "all_to_all": AllToAllOp, "ppermute": PpermuteOp,
}

SHARDING = Dialect("sharding", [AnnotateOp, LocalSliceOp, *COLLECTIVE_OPS.values()],
                   [MeshAttr, ShardingAttr])


def int_attr(v: int) -> IntegerAttr:
    return IntegerAttr(v, i64)
