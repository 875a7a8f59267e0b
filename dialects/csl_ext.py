"""`csl_ext`: the CSL builtins that xDSL's `csl` dialect (0.74) lacks.

xDSL's dialect covers modules, tasks, DSDs and the DSD builtins, but general
programs also need routes (`@set_color_config`), task blocking (`@block`,
`@unblock`), WSE-3 queue set-up (`@initialize_queue`), fabric DSDs whose color
is a comptime value rather than a literal, and completion actions on
asynchronous DSD operations. They live here, in our own dialect, so xDSL stays
pinned and unmodified; `lowering/csl_printer.py` prints them and the WSE
simulator (`pyflame_mlir.runtime.wse`) executes them.

An asynchronous DSD builtin is an ordinary `csl.<builtin>` op carrying the
discardable attribute `async = #csl_ext.async<...>`:
`#csl_ext.async<>` (just async), `#csl_ext.async<activate local 9>` or
`#csl_ext.async<unblock local 9>`.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    ArrayAttr,
    BoolAttr,
    IntAttr,
    IntegerAttr,
    IntegerType,
    Signedness,
    StringAttr,
    SymbolRefAttr,
)
from xdsl.dialects.csl import (
    ColorIdAttr,
    ColorType,
    CslModuleOp,
    DsdKind,
    DsdType,
    LayoutOp,
    QueueIdAttr,
    TaskKind,
    TaskKindAttr,
)
from xdsl.ir import Attribute, Dialect, Operation, ParametrizedAttribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import HasAncestor, HasParent
from xdsl.utils.exceptions import VerifyException

PORTS = ("north", "south", "east", "west", "ramp")
"""Router ports: the four neighbours and RAMP, the link to the PE's own core."""

ASYNC_ATTR = "async"
"""Name of the discardable attribute that makes a `csl` DSD builtin asynchronous."""


def queue_number(attr: QueueIdAttr) -> int:
    """The queue id 0-7 of an i3 attribute (signless i3 reads 4-7 back as negative)."""
    return attr.value.data & 0b111


def _task_id(kind: TaskKind, id: int) -> ColorIdAttr:
    return IntegerAttr(id, IntegerType(TaskKindAttr(kind).get_color_bits(), Signedness.UNSIGNED))


@irdl_attr_definition
class RoutesAttr(ParametrizedAttribute):
    """A router table entry for one color: the ports it receives from and sends to.

    `#csl_ext.routes<rx = [west], tx = [ramp, east]>`; several tx ports multicast.
    """

    name = "csl_ext.routes"

    rx: ArrayAttr[StringAttr]
    tx: ArrayAttr[StringAttr]

    @staticmethod
    def get(rx: Sequence[str], tx: Sequence[str]) -> RoutesAttr:
        return RoutesAttr(
            ArrayAttr(StringAttr(p) for p in rx), ArrayAttr(StringAttr(p) for p in tx)
        )

    @property
    def rx_ports(self) -> tuple[str, ...]:
        return tuple(p.data for p in self.rx)

    @property
    def tx_ports(self) -> tuple[str, ...]:
        return tuple(p.data for p in self.tx)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(
            f"<rx = [{', '.join(self.rx_ports)}], tx = [{', '.join(self.tx_ports)}]>"
        )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        def ports() -> ArrayAttr[StringAttr]:
            return ArrayAttr(
                StringAttr(p)
                for p in parser.parse_comma_separated_list(
                    parser.Delimiter.SQUARE, parser.parse_identifier
                )
            )

        with parser.in_angle_brackets():
            parser.parse_keyword("rx")
            parser.parse_punctuation("=")
            rx = ports()
            parser.parse_punctuation(",")
            parser.parse_keyword("tx")
            parser.parse_punctuation("=")
            tx = ports()
        return rx, tx

    def verify(self) -> None:
        for what, ports in (("rx", self.rx_ports), ("tx", self.tx_ports)):
            if not ports:
                raise VerifyException(f"routes need at least one {what} port")
            if bad := [p for p in ports if p not in PORTS]:
                raise VerifyException(f"unknown {what} port(s) {bad}; ports are {PORTS}")
            if len(set(ports)) != len(ports):
                raise VerifyException(f"duplicate {what} port in {ports}")


@irdl_attr_definition
class AsyncAttr(ParametrizedAttribute):
    """Marks a DSD builtin asynchronous; on completion it may activate or unblock a task;
    on WSE-3 it may name its microthread (``.ut_id = @get_ut_id(n)``).

    `#csl_ext.async<>`, `#csl_ext.async<activate local 9>`, `#csl_ext.async<unblock local 9>`,
    `#csl_ext.async<ut 4>`, `#csl_ext.async<activate local 9 ut 4>`.
    """

    name = "csl_ext.async"

    action: StringAttr  # "", "activate" or "unblock"
    kind: StringAttr  # task kind, "" when there is no action
    id: IntAttr
    ut: IntAttr  # the explicit microthread id (``.ut_id``), -1 for none

    @staticmethod
    def get(action: str = "", kind: TaskKind = TaskKind.LOCAL, id: int = 0,
            ut: int | None = None) -> AsyncAttr:
        return AsyncAttr(
            StringAttr(action), StringAttr(kind.value if action else ""), IntAttr(id),
            IntAttr(-1 if ut is None else ut)
        )

    @property
    def ut_id(self) -> int | None:
        """The explicit microthread id, or None (the default: a fabric operand's queue)."""
        return None if self.ut.data < 0 else self.ut.data

    def print_parameters(self, printer: Printer) -> None:
        parts = [f"{self.action.data} {self.kind.data} {self.id.data}"] if self.action.data else []
        if self.ut_id is not None:
            parts.append(f"ut {self.ut_id}")
        printer.print_string(f"<{' '.join(parts)}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        action, kind, id, ut = "", "", 0, -1
        with parser.in_angle_brackets():
            word = parser.parse_optional_identifier()
            if word is not None and word != "ut":
                action, kind = word, parser.parse_identifier()
                id = parser.parse_integer(allow_negative=False)
                word = parser.parse_optional_identifier()
            if word is not None:
                if word != "ut":
                    parser.raise_error(f"expected 'ut' (a microthread id), got '{word}'")
                ut = parser.parse_integer(allow_negative=False)
        return StringAttr(action), StringAttr(kind), IntAttr(id), IntAttr(ut)

    def verify(self) -> None:
        if self.action.data not in ("", "activate", "unblock"):
            raise VerifyException(f"async action must be activate or unblock, not {self.action}")
        if self.action.data and self.kind.data not in {k.value for k in TaskKind}:
            raise VerifyException(f"unknown task kind {self.kind.data!r}")
        if self.ut.data < -1:
            raise VerifyException(f"microthread id {self.ut.data} is negative")


class _TaskStateOp(IRDLOperation):
    """Shared shape of `@block` / `@unblock`: a task kind and a literal id."""

    id = prop_def(ColorIdAttr)
    kind = prop_def(TaskKindAttr)

    assembly_format = "attr-dict $kind `,` $id"

    def __init__(self, id: int | ColorIdAttr, kind: TaskKind | TaskKindAttr):
        kind = TaskKindAttr(kind) if isinstance(kind, TaskKind) else kind
        id = _task_id(kind.data, id) if isinstance(id, int) else id
        super().__init__(properties={"id": id, "kind": kind})


@irdl_op_definition
class BlockOp(_TaskStateOp):
    """`@block(task_id)`: the task does not run, even when activated, until unblocked."""

    name = "csl_ext.block"


@irdl_op_definition
class UnblockOp(_TaskStateOp):
    """`@unblock(task_id)`."""

    name = "csl_ext.unblock"


@irdl_op_definition
class SetColorConfigOp(IRDLOperation):
    """`@set_color_config(x, y, color, .{ .routes = .{ .rx = .{...}, .tx = .{...} } })`."""

    name = "csl_ext.set_color_config"

    x_coord = operand_def(IntegerType)
    y_coord = operand_def(IntegerType)
    color = operand_def(ColorType)
    routes = prop_def(RoutesAttr)

    traits = traits_def(HasAncestor(LayoutOp))

    assembly_format = (
        "$x_coord `,` $y_coord `,` $color `routes` $routes attr-dict "
        "`:` type($x_coord) `,` type($y_coord)"
    )

    def __init__(
        self,
        x: SSAValue | Operation,
        y: SSAValue | Operation,
        color: SSAValue | Operation,
        rx: Sequence[str],
        tx: Sequence[str],
    ):
        super().__init__(operands=[x, y, color], properties={"routes": RoutesAttr.get(rx, tx)})


@irdl_op_definition
class InitializeQueueOp(IRDLOperation):
    """`@initialize_queue(@get_<dir>_queue(q), .{ .color = c })` (WSE-3 binds queues to colors)."""

    name = "csl_ext.initialize_queue"

    color = operand_def(ColorType)
    queue_id = prop_def(QueueIdAttr)
    output = opt_prop_def(BoolAttr)  # present and true: an output queue

    traits = traits_def(HasParent(CslModuleOp))

    assembly_format = "$color attr-dict"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, color: SSAValue | Operation, queue: int, output: bool = False):
        props: dict[str, Attribute] = {"queue_id": IntegerAttr(queue, IntegerType(3))}
        if output:
            props["output"] = BoolAttr.from_bool(True)
        super().__init__(operands=[color], properties=props)

    @property
    def is_output(self) -> bool:
        return self.output is not None and self.output.value.data != 0


@irdl_op_definition
class BindDataTaskOp(IRDLOperation):
    """`@bind_data_task(t, @get_data_task_id(@get_input_queue(q)))`: on WSE-3 a data
    task is bound to an input queue (the queue to a color by `@initialize_queue`);
    its `csl.task` then has no id. (On WSE-2 a data task's id is a color: the
    `csl.task`'s own id.)"""

    name = "csl_ext.bind_data_task"

    task_name = prop_def(SymbolRefAttr)
    queue_id = prop_def(QueueIdAttr)

    traits = traits_def(HasParent(CslModuleOp))

    assembly_format = "$task_name attr-dict"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, task: str, queue: int):
        super().__init__(properties={"task_name": SymbolRefAttr(task),
                                     "queue_id": IntegerAttr(queue, IntegerType(3))})


@irdl_op_definition
class GetFabDsdOp(IRDLOperation):
    """A fabric DSD whose color is an SSA value (a param or `csl.get_color`).

    xDSL's `csl.get_fab_dsd` only takes a literal color, which rules out the
    usual CSL style of passing colors to each PE as params (checkerboards).
    """

    name = "csl_ext.get_fab_dsd"

    extent = operand_def(IntegerType)
    color = operand_def(ColorType)
    queue_id = prop_def(QueueIdAttr)
    result = result_def(DsdType)

    assembly_format = "$extent `,` $color attr-dict `:` type($extent) `->` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(
        self,
        kind: DsdKind,
        extent: SSAValue | Operation,
        color: SSAValue | Operation,
        queue: int,
    ):
        super().__init__(
            operands=[extent, color],
            properties={"queue_id": IntegerAttr(queue, IntegerType(3))},
            result_types=[DsdType(kind)],
        )

    def verify_(self) -> None:
        if self.result.type.data not in (DsdKind.fabin_dsd, DsdKind.fabout_dsd):
            raise VerifyException(f"{self.name} makes fabin_dsd or fabout_dsd only")


CSL_EXT = Dialect(
    "csl_ext",
    [BlockOp, UnblockOp, SetColorConfigOp, InitializeQueueOp, GetFabDsdOp, BindDataTaskOp],
    [RoutesAttr, AsyncAttr],
)
