"""`csl_ext`: the CSL builtins that xDSL's `csl` dialect (0.74) lacks.

xDSL's dialect covers modules, tasks, DSDs and the DSD builtins, but general
programs also need routes (`@set_color_config`), task blocking (`@block`,
`@unblock`), WSE-3 queue set-up (`@initialize_queue`), fabric DSDs whose color
is a comptime value rather than a literal, and completion actions on
asynchronous DSD operations; and `@map` (a DSD operation with a user callback,
`MapOp`) with the pointers its callbacks need: `&v` of a variable
(`AddressOfVarOp`) and `p.*` (`DerefOp`, `StorePtrOp`). They live here, in our
own dialect, so xDSL stays pinned and unmodified; `lowering/csl_printer.py` prints them and the WSE
simulator (`pyflame_mlir.runtime.wse`) executes them.

An asynchronous DSD builtin is an ordinary `csl.<builtin>` op carrying the
discardable attribute `async = #csl_ext.async<...>`:
`#csl_ext.async<>` (just async), `#csl_ext.async<activate local 9>` or
`#csl_ext.async<unblock local 9>`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    BoolAttr,
    FunctionType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    NoneType,
    Signedness,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
)
from xdsl.dialects.csl import (
    ColorIdAttr,
    ColorType,
    CslModuleOp,
    DsdKind,
    DsdType,
    FuncOp,
    ImportedModuleType,
    LayoutOp,
    PtrKind,
    PtrType,
    QueueIdAttr,
    TaskKind,
    TaskKindAttr,
    VarType,
)
from xdsl.ir import (
    Attribute,
    Dialect,
    Operation,
    ParametrizedAttribute,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    AnyAttr,
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import HasParent
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


def _print_word(self: ParametrizedAttribute, printer: Printer) -> None:
    """`<word>`: the one identifier parameter of a type (`!csl_ext.queue<input>`)."""
    (word,) = self.parameters
    printer.print_string(f"<{word.data}>")  # type: ignore[attr-defined]


def _parse_word(cls: type, parser: AttrParser) -> Sequence[Attribute]:
    with parser.in_angle_brackets():
        return (StringAttr(parser.parse_identifier()),)


@irdl_attr_definition
class TaskIdType(ParametrizedAttribute, TypeAttribute):
    """A task id as a value, of one kind: CSL's `local_task_id`, `data_task_id`,
    `control_task_id` (`!csl_ext.task_id<local>`). Comptime-known: made by
    `TaskIdOfOp` (`@get_local_task_id(n)`, ...) and passed through params."""

    name = "csl_ext.task_id"

    kind: StringAttr

    print_parameters = _print_word
    parse_parameters = classmethod(_parse_word)

    def verify(self) -> None:
        if self.kind.data not in {k.value for k in TaskKind}:
            raise VerifyException(f"task id kind {self.kind.data!r} is not one of "
                                  f"{sorted(k.value for k in TaskKind)}")

    @property
    def task_kind(self) -> TaskKind:
        return TaskKind(self.kind.data)


@irdl_attr_definition
class QueueType(ParametrizedAttribute, TypeAttribute):
    """A queue id as a value: CSL's `input_queue` / `output_queue`
    (`!csl_ext.queue<input>`), made by `GetQueueOp` (`@get_input_queue(n)`)."""

    name = "csl_ext.queue"

    direction: StringAttr

    print_parameters = _print_word
    parse_parameters = classmethod(_parse_word)

    def verify(self) -> None:
        if self.direction.data not in ("input", "output"):
            raise VerifyException(f"queue direction {self.direction.data!r} is not input or "
                                  "output")


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


SWITCH_POP_MODES = ("no_pop", "always_pop", "pop_on_advance")
"""`.pop_mode = .{ .<mode> = true }` of a switch configuration (no_pop: the default)."""


@irdl_attr_definition
class SwitchesAttr(ParametrizedAttribute):
    """The fabric switch of one color at one router (`.switches` of
    `@set_color_config`): positions 1-3, each replacing the input or the output port
    of the position before it (position 0: the `.routes`; the other side is inherited
    along the chain), the position the router starts in, whether
    advancing past the last position wraps to 0 (`.ring_mode`) and the pop mode.
    A control wavelet routed through the router may advance it (SDK tutorials
    topic-06/07-switches, the 25-pt-stencil and allreduce benchmarks).

    `#csl_ext.switches<pos1 = tx west, pos2 = tx east, pos3 = tx south, current = 1,
    ring_mode, pop = always_pop>`; positions, `ring_mode` and `pop` are optional.
    """

    name = "csl_ext.switches"

    positions: ArrayAttr[StringAttr]  # per position 1-3: "" (none), "rx <port>" or "tx <port>"
    current: IntAttr
    ring_mode: BoolAttr
    pop_mode: StringAttr

    @staticmethod
    def get(positions: Sequence[tuple[str, str] | None], current: int = 0,
            ring_mode: bool = False, pop_mode: str = "no_pop") -> SwitchesAttr:
        pos = [f"{p[0]} {p[1]}" if p else "" for p in positions]
        pos += [""] * (3 - len(pos))
        return SwitchesAttr(ArrayAttr(StringAttr(p) for p in pos), IntAttr(current),
                            BoolAttr.from_bool(ring_mode), StringAttr(pop_mode))

    def position(self, k: int) -> tuple[str, str] | None:
        """Position k (1-3) as (rx or tx, port), None when it is not set."""
        text = self.positions.data[k - 1].data
        if not text:
            return None
        which, port = text.split()
        return which, port

    @property
    def ring(self) -> bool:
        return bool(self.ring_mode.value.data)

    def print_parameters(self, printer: Printer) -> None:
        parts = [f"pos{k} = {self.position(k)[0]} {self.position(k)[1]}"  # type: ignore[index]
                 for k in (1, 2, 3) if self.position(k)]
        parts.append(f"current = {self.current.data}")
        if self.ring:
            parts.append("ring_mode")
        if self.pop_mode.data != "no_pop":
            parts.append(f"pop = {self.pop_mode.data}")
        printer.print_string(f"<{', '.join(parts)}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        pos, current, ring, pop = ["", "", ""], 0, False, "no_pop"

        def item() -> None:
            nonlocal current, ring, pop
            key = parser.parse_identifier()
            if key in ("pos1", "pos2", "pos3"):
                parser.parse_punctuation("=")
                which = parser.parse_identifier()
                pos[int(key[-1]) - 1] = f"{which} {parser.parse_identifier()}"
            elif key == "current":
                parser.parse_punctuation("=")
                current = parser.parse_integer(allow_negative=False)
            elif key == "ring_mode":
                ring = True
            elif key == "pop":
                parser.parse_punctuation("=")
                pop = parser.parse_identifier()
            else:
                parser.raise_error(f"unknown switch field '{key}' (pos1-3, current, "
                                   "ring_mode, pop)")

        parser.parse_comma_separated_list(parser.Delimiter.ANGLE, item)
        return (ArrayAttr(StringAttr(p) for p in pos), IntAttr(current),
                BoolAttr.from_bool(ring), StringAttr(pop))

    def verify(self) -> None:
        if len(self.positions.data) != 3:
            raise VerifyException("a switch has positions 1, 2 and 3 besides the route (0)")
        for k in (1, 2, 3):
            p = self.position(k)
            if p is None:
                continue
            which, port = p
            if which not in ("rx", "tx"):
                raise VerifyException(f"switch position {k} sets rx or tx, not {which!r}")
            if port not in PORTS:
                raise VerifyException(f"switch position {k}: unknown port {port!r}; ports are "
                                      f"{PORTS}")
        if not 0 <= self.current.data <= 3:
            raise VerifyException(f"current_switch_pos {self.current.data} is not 0-3")
        if self.current.data and self.position(self.current.data) is None:
            raise VerifyException(f"current_switch_pos {self.current.data} names a position "
                                  "that is not set")
        if self.pop_mode.data not in SWITCH_POP_MODES:
            raise VerifyException(f"pop mode {self.pop_mode.data!r} is not one of "
                                  f"{SWITCH_POP_MODES}")


@irdl_attr_definition
class FilterAttr(ParametrizedAttribute):
    """A router's filter of one color (`.filter` of `@set_color_config`): which data
    wavelets the router hands to its core. A range filter (`.kind = .{ .range = true },
    .min_idx = a, .max_idx = b`) hands over those whose upper 16 bits (the index
    field) are in [a, b] and drops the others on the way to the core; what the router
    forwards to other ports is not filtered (SDK tutorial topic-08-filters). The
    counter and sparse-counter kinds are not modeled.

    `#csl_ext.filter<range 3 to 5>`"""

    name = "csl_ext.filter"

    kind: StringAttr
    min_idx: IntAttr
    max_idx: IntAttr

    @staticmethod
    def range(lo: int, hi: int) -> FilterAttr:
        return FilterAttr(StringAttr("range"), IntAttr(lo), IntAttr(hi))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.kind.data} {self.min_idx.data} to {self.max_idx.data}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            kind = parser.parse_identifier()
            lo = parser.parse_integer(allow_negative=False)
            if parser.parse_identifier() != "to":
                parser.raise_error("expected 'to' between a range filter's bounds")
            hi = parser.parse_integer(allow_negative=False)
        return StringAttr(kind), IntAttr(lo), IntAttr(hi)

    def verify(self) -> None:
        if self.kind.data != "range":
            raise VerifyException(f"filter kind {self.kind.data!r}: only range filters are "
                                  "modeled (not counter or sparse_counter)")
        if not 0 <= self.min_idx.data <= self.max_idx.data <= 0xFFFF:
            raise VerifyException(f"range filter {self.min_idx.data} to {self.max_idx.data}: "
                                  "the bounds are 16-bit indices, min <= max")


@irdl_attr_definition
class AsyncAttr(ParametrizedAttribute):
    """Marks a DSD builtin asynchronous; on completion it may activate or unblock a task;
    on WSE-3 it may name its microthread (``.ut_id = @get_ut_id(n)``).

    `#csl_ext.async<>`, `#csl_ext.async<activate local 9>`, `#csl_ext.async<unblock local 9>`,
    `#csl_ext.async<ut 4>`, `#csl_ext.async<activate local 9 ut 4>`; a target by name,
    `#csl_ext.async<activate @callback>` (CSL `.activate = callback`: a task-id param or
    a task of the module).
    """

    name = "csl_ext.async"

    action: StringAttr  # "", "activate" or "unblock"
    kind: StringAttr  # task kind, "" when there is no action or the target is by name
    id: IntAttr
    ut: IntAttr  # the explicit microthread id (``.ut_id``), -1 for none
    # by name (`#csl_ext.async<activate @callback>`, CSL `.activate = callback`): a
    # task-id param (csl_ext.param) or a task of the module; "" for a literal id
    target: StringAttr

    @staticmethod
    def get(action: str = "", kind: TaskKind = TaskKind.LOCAL, id: int = 0,
            ut: int | None = None, target: str = "") -> AsyncAttr:
        return AsyncAttr(
            StringAttr(action), StringAttr(kind.value if action and not target else ""),
            IntAttr(id), IntAttr(-1 if ut is None else ut), StringAttr(target)
        )

    @property
    def ut_id(self) -> int | None:
        """The explicit microthread id, or None (the default: a fabric operand's queue)."""
        return None if self.ut.data < 0 else self.ut.data

    def print_parameters(self, printer: Printer) -> None:
        parts = []
        if self.target.data:
            parts.append(f"{self.action.data} @{self.target.data}")
        elif self.action.data:
            parts.append(f"{self.action.data} {self.kind.data} {self.id.data}")
        if self.ut_id is not None:
            parts.append(f"ut {self.ut_id}")
        printer.print_string(f"<{' '.join(parts)}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        action, kind, id, ut, target = "", "", 0, -1, ""
        with parser.in_angle_brackets():
            word = parser.parse_optional_identifier()
            if word is not None and word != "ut":
                action = word
                sym = parser.parse_optional_symbol_name()
                if sym is not None:
                    target = sym.data
                else:
                    kind = parser.parse_identifier()
                    id = parser.parse_integer(allow_negative=False)
                word = parser.parse_optional_identifier()
            if word is not None:
                if word != "ut":
                    parser.raise_error(f"expected 'ut' (a microthread id), got '{word}'")
                ut = parser.parse_integer(allow_negative=False)
        return (StringAttr(action), StringAttr(kind), IntAttr(id), IntAttr(ut),
                StringAttr(target))

    def verify(self) -> None:
        if self.action.data not in ("", "activate", "unblock"):
            raise VerifyException(f"async action must be activate or unblock, not {self.action}")
        if self.target.data and (not self.action.data or self.kind.data):
            raise VerifyException("an async target by name goes with an action and no kind")
        if self.action.data and not self.target.data and self.kind.data not in {
                k.value for k in TaskKind}:
            raise VerifyException(f"unknown task kind {self.kind.data!r}")
        if self.ut.data < -1:
            raise VerifyException(f"microthread id {self.ut.data} is negative")


class _TaskStateOp(IRDLOperation):
    """Shared shape of `@block` / `@unblock`: a task kind and a literal id. A data id is
    a color on WSE-2 and an input queue on WSE-3, which `on_queue` marks (printed
    `@unblock(@get_input_queue(q))`, as the SDK's WSE-3 programs write it)."""

    id = prop_def(ColorIdAttr)
    kind = prop_def(TaskKindAttr)
    on_queue = opt_prop_def(UnitAttr)

    assembly_format = "attr-dict $kind `,` $id"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, id: int | ColorIdAttr, kind: TaskKind | TaskKindAttr,
                 on_queue: bool = False):
        kind = TaskKindAttr(kind) if isinstance(kind, TaskKind) else kind
        id = _task_id(kind.data, id) if isinstance(id, int) else id
        props: dict[str, Attribute] = {"id": id, "kind": kind}
        if on_queue:
            props["on_queue"] = UnitAttr()
        super().__init__(properties=props)

    def verify_(self) -> None:
        if self.on_queue is not None and (self.kind.data != TaskKind.DATA
                                          or not 0 <= self.id.value.data <= 7):
            raise VerifyException("on_queue names an input queue 0-7 by its data task id")


@irdl_op_definition
class GetTaskIdOp(IRDLOperation):
    """`@get_<kind>_task_id(n)` as a value (`<control>`'s entrypoint argument)."""

    name = "csl_ext.get_task_id"

    id = prop_def(ColorIdAttr)
    kind = prop_def(TaskKindAttr)
    result = result_def(IntegerType(16, Signedness.UNSIGNED))

    assembly_format = "$kind `,` $id attr-dict"


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
    """`@set_color_config(x, y, color, .{ .routes = .{ .rx = .{...}, .tx = .{...} } })`,
    in a layout block or in a function the layout calls at compile time (a module the
    layout imports: the SDK's routes.csl `set_routes(col, row, pe)`)."""

    name = "csl_ext.set_color_config"

    x_coord = operand_def(IntegerType)
    y_coord = operand_def(IntegerType)
    color = operand_def(ColorType)
    routes = prop_def(RoutesAttr)
    switches = opt_prop_def(SwitchesAttr)
    teardown = opt_prop_def(UnitAttr)  # `.teardown = true`: the color starts torn down
    filter = opt_prop_def(FilterAttr)  # `.filter`: which wavelets reach the core

    assembly_format = (
        "$x_coord `,` $y_coord `,` $color `routes` $routes attr-dict "
        "`:` type($x_coord) `,` type($y_coord)"
    )
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(
        self,
        x: SSAValue | Operation,
        y: SSAValue | Operation,
        color: SSAValue | Operation,
        rx: Sequence[str],
        tx: Sequence[str],
        switches: SwitchesAttr | None = None,
    ):
        props: dict[str, Attribute] = {"routes": RoutesAttr.get(rx, tx)}
        if switches is not None:
            props["switches"] = switches
        super().__init__(operands=[x, y, color], properties=props)

    def verify_(self) -> None:
        parent = self.parent_op()
        while parent is not None and not isinstance(parent, LayoutOp | FuncOp):
            parent = parent.parent_op()
        if parent is None:
            raise VerifyException("@set_color_config belongs in a layout block or in a "
                                  "function called from one")


@irdl_op_definition
class InitializeQueueOp(IRDLOperation):
    """`@initialize_queue(@get_<dir>_queue(q), .{ .color = c })` (WSE-3 binds queues to colors).
    `all_archs`: also on WSE-2, where SDK 1.x programs otherwise set up no queue; the
    SDK's allreduce library does so for the input queue of a fabin DSD that only a
    DSR uses ("the compiler no longer can generate the instruction to set up the
    config register of input queue")."""

    name = "csl_ext.initialize_queue"

    color = operand_def(ColorType)
    queue_id = prop_def(QueueIdAttr)
    output = opt_prop_def(BoolAttr)  # present and true: an output queue
    all_archs = opt_prop_def(UnitAttr)

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
    # the queue: a literal (queue_id) or a value (`.input_queue = @get_input_queue(4 + q)`
    # of a module's param: `queue %q : !csl_ext.queue<input>`), exactly one of them
    queue = opt_operand_def(QueueType)
    queue_id = opt_prop_def(QueueIdAttr)
    control = opt_prop_def(BoolAttr)  # `.control = true`: a fabout DSD of control wavelets
    result = result_def(DsdType)

    assembly_format = ("$extent `,` $color (`queue` $queue^ `:` type($queue))? attr-dict `:` "
                       "type($extent) `->` type($result)")
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(
        self,
        kind: DsdKind,
        extent: SSAValue | Operation,
        color: SSAValue | Operation,
        queue: int,
    ):
        super().__init__(
            operands=[extent, color, None],
            properties={"queue_id": IntegerAttr(queue, IntegerType(3))},
            result_types=[DsdType(kind)],
        )

    @property
    def is_control(self) -> bool:
        return self.control is not None and bool(self.control.value.data)

    def verify_(self) -> None:
        if self.result.type.data not in (DsdKind.fabin_dsd, DsdKind.fabout_dsd):
            raise VerifyException(f"{self.name} makes fabin_dsd or fabout_dsd only")
        if (self.queue is None) == (self.queue_id is None):
            raise VerifyException(f"{self.name}: a queue_id or a queue value, one of them")
        want = "input" if self.result.type.data == DsdKind.fabin_dsd else "output"
        if self.queue is not None and self.queue.type.direction.data != want:
            raise VerifyException(f"a {self.result.type.data.value} takes an {want} queue, "
                                  f"not {self.queue.type}")
        if self.is_control and self.result.type.data != DsdKind.fabout_dsd:
            raise VerifyException(".control = true makes a fabout_dsd (control wavelets are "
                                  "sent; a core receives them as control tasks)")


def _single_ptr(t: Attribute) -> bool:
    return isinstance(t, PtrType) and t.kind.data == PtrKind.SINGLE


@irdl_op_definition
class ComptimeAssertOp(IRDLOperation):
    """`@comptime_assert(cond)` (`, "message"` with `message`): the compiler refuses the
    program when `cond` is false (the SDK's allreduce library: `1 < width`)."""

    name = "csl_ext.comptime_assert"

    cond = operand_def(IntegerType(1))
    message = opt_prop_def(StringAttr)

    assembly_format = "$cond attr-dict"
    irdl_options = (ParsePropInAttrDict(),)


@irdl_op_definition
class VoidOp(IRDLOperation):
    """`{}`, CSL's value of type void (`<control>`'s "no entrypoint" argument)."""

    name = "csl_ext.void"

    result = result_def(NoneType)

    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__(result_types=[NoneType()])


@irdl_op_definition
class AddressOfVarOp(IRDLOperation):
    """`&v` of a scalar variable (`var v: f32;`): a single pointer `*f32`. (xDSL 0.74's
    `csl.addressof` compares the pointee with the `!csl.var<T>` type itself, so it
    cannot spell the address of a variable.)"""

    name = "csl_ext.addressof_var"

    var = operand_def(VarType)
    result = result_def(PtrType)

    assembly_format = "$var attr-dict `:` type($var) `->` type($result)"

    def verify_(self) -> None:
        t, v = self.result.type, self.var.type
        assert isinstance(t, PtrType) and isinstance(v, VarType)
        if not _single_ptr(t) or t.type != v.get_element_type():
            raise VerifyException(f"&v of a {v.get_element_type()} variable is a single "
                                  f"pointer *{v.get_element_type()}, not {t}")


@irdl_op_definition
class DerefOp(IRDLOperation):
    """`p.*`: the value a single pointer (`*T`) points to."""

    name = "csl_ext.deref"

    ptr = operand_def(PtrType)
    result = result_def()

    assembly_format = "$ptr attr-dict `:` type($ptr) `->` type($result)"

    def verify_(self) -> None:
        t = self.ptr.type
        assert isinstance(t, PtrType)
        if not _single_ptr(t):
            raise VerifyException("p.* dereferences a single pointer (*T), not a many-pointer "
                                  "([*]T: index it instead)")
        if self.result.type != t.type:
            raise VerifyException(f"p.* of a {t.type} pointer yields {t.type}, "
                                  f"not {self.result.type}")


@irdl_op_definition
class StorePtrOp(IRDLOperation):
    """`p.* = v;`: store through a single, non-const pointer (`*T`)."""

    name = "csl_ext.store_ptr"

    ptr = operand_def(PtrType)
    value = operand_def()

    assembly_format = "$value `,` $ptr attr-dict `:` type($value) `,` type($ptr)"

    def verify_(self) -> None:
        t = self.ptr.type
        assert isinstance(t, PtrType)
        if not _single_ptr(t):
            raise VerifyException("p.* = v stores through a single pointer (*T)")
        if t.constness.data.value == "const":
            raise VerifyException("p.* = v through a *const pointer")
        if self.value.type != t.type:
            raise VerifyException(f"storing a {self.value.type} through a {t.type} pointer")


@irdl_op_definition
class FnRefOp(IRDLOperation):
    """A function of this module as a value, `f` (a `fn` param's argument:
    `@import_module("lib.csl", .{ .f_callback = f })`). xDSL 0.74 has only its
    address (`csl.addressof_fn`, `&f`), which a `fn` param does not take."""

    name = "csl_ext.fn_ref"

    fn_name = prop_def(SymbolRefAttr)
    result = result_def(FunctionType)

    assembly_format = "$fn_name attr-dict `:` type($result)"

    def __init__(self, fn: str, type: FunctionType):
        super().__init__(properties={"fn_name": SymbolRefAttr(fn)}, result_types=[type])


MAP_INPUT_DSDS = (DsdKind.mem1d_dsd, DsdKind.mem4d_dsd, DsdKind.fabin_dsd)
MAP_OUTPUT_DSDS = (DsdKind.mem1d_dsd, DsdKind.mem4d_dsd, DsdKind.fabout_dsd)


def _map_scalar(t: Attribute) -> bool:
    return isinstance(t, IntegerType | AnyFloat)


@irdl_op_definition
class MapOp(IRDLOperation):
    """`@map(callback, in_0, ..., in_k, out)`: for each element i of its DSD operands,
    `out[i] = callback(in_0[i], ..., in_k[i])` in element order (a local callback that
    returns nothing has no output: `@map(step, x_dsd)` calls `step(x[i])`, as the SDK's
    single-tile-matvec benchmark does); an input that is a
    scalar is passed as is to every call, a single pointer (`*T`) as the pointer; an
    output that is a single pointer receives every result in turn (so
    `@map(f, dsd, &acc, &acc)` folds the DSD into `acc`, as the SDK's BLAS examples
    do). `callee` names a `csl.func` of the module, or with `module` a function of an
    imported module (`math_lib.sqrt_f32`).

    Rules checked here (from the SDK examples and the @map tutorial; CSL_NOTES): the
    inputs are DSDs that can be read (mem1d, mem4d, fabin), numeric scalars or single
    pointers; the output is a DSD that can be written (mem1d, mem4d, fabout) or a single
    pointer; at least one operand is a DSD (the DSDs give the loop); a local callback
    takes one parameter per input, of its type for a scalar or a pointer, and returns
    a value (of the output pointer's type)."""

    name = "csl_ext.map"

    callee = prop_def(SymbolRefAttr)
    module = opt_operand_def(ImportedModuleType)
    args = var_operand_def()

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = "$callee (`in` $module^)? `(` $args `)` attr-dict `:` type($args)"

    def __init__(self, callee: str, args: Sequence[SSAValue | Operation],
                 module: SSAValue | Operation | None = None):
        super().__init__(operands=[module, args], properties={"callee": SymbolRefAttr(callee)})

    def callback(self) -> FuncOp | None:
        """The local callback's definition (None for a library function)."""
        if self.module is not None:
            return None
        mod = self.parent_op()
        while mod is not None and not isinstance(mod, CslModuleOp):
            mod = mod.parent_op()
        name = self.callee.string_value()
        return next((f for f in (mod.body.block.ops if mod is not None else ())
                     if isinstance(f, FuncOp) and f.sym_name.data == name), None)

    def has_output(self) -> bool:
        """False for a local callback that returns nothing: every operand is an input."""
        fn = self.callback()
        return fn is None or len(fn.function_type.outputs.data) > 0

    def verify_(self) -> None:
        types = [a.type for a in self.args]
        fn = self.callback()
        if self.module is None and fn is None:
            raise VerifyException(f"@map callback {self.callee} is not a csl.func of this "
                                  "module")
        output = self.has_output()
        if len(types) < (2 if output else 1):
            raise VerifyException("@map takes a callback, at least one input and an output "
                                  "(none for a callback returning nothing)")
        ins, out = (types[:-1], types[-1]) if output else (types, None)
        for i, t in enumerate(ins):
            if isinstance(t, DsdType):
                if t.data not in MAP_INPUT_DSDS:
                    raise VerifyException(f"@map input {i} is a {t.data.value}, which cannot "
                                          "be read (inputs: mem1d, mem4d or fabin DSDs)")
            elif not (_map_scalar(t) or _single_ptr(t)):
                raise VerifyException(f"@map input {i} has type {t}: inputs are DSDs, "
                                      "numeric scalars or single pointers (*T)")
        if out is None:
            pass
        elif isinstance(out, DsdType):
            if out.data not in MAP_OUTPUT_DSDS:
                raise VerifyException(f"@map output is a {out.data.value}, which cannot be "
                                      "written (outputs: mem1d, mem4d or fabout DSDs)")
        elif not _single_ptr(out):
            raise VerifyException(f"@map output has type {out}: the output is a DSD or a "
                                  "single pointer (*T) to a scalar")
        if not any(isinstance(t, DsdType) for t in types):
            raise VerifyException("@map needs at least one DSD operand (the DSDs give the "
                                  "loop)")
        if fn is None:
            return
        params, results = fn.function_type.inputs.data, fn.function_type.outputs.data
        if len(params) != len(ins):
            raise VerifyException(f"@map callback {self.callee} takes {len(params)} "
                                  f"parameter(s) for {len(ins)} input(s)")
        for i, (t, p) in enumerate(zip(ins, params)):
            if not isinstance(t, DsdType) and t != p:
                raise VerifyException(f"@map input {i} is {t} but {self.callee}'s "
                                      f"parameter {i} is {p}")
            if isinstance(t, DsdType) and not _map_scalar(p):
                raise VerifyException(f"@map input {i} is a DSD: {self.callee}'s parameter "
                                      f"{i} must be its element type, not {p}")
        if output and isinstance(out, PtrType) and out.type != results[0]:
            raise VerifyException(f"@map output points to {out.type} but {self.callee} "
                                  f"returns {results[0]}")


DSR_KINDS = ("dest", "src0", "src1")


@irdl_attr_definition
class DsrType(ParametrizedAttribute, TypeAttribute):
    """A data structure register: `dsr_dest`, `dsr_src0` or `dsr_src1` (the three DSR
    files; SDK documentation, "Data Structure Registers"). `!csl_ext.dsr<dest>`."""

    name = "csl_ext.dsr"

    kind: StringAttr

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.kind.data}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return (StringAttr(parser.parse_identifier()),)

    def verify(self) -> None:
        if self.kind.data not in DSR_KINDS:
            raise VerifyException(f"DSR kind {self.kind.data!r} is not one of {DSR_KINDS} "
                                  "(FIFO DSRs are not supported)")


@irdl_op_definition
class GetDsrOp(IRDLOperation):
    """`@get_dsr(dsr_<kind>, id)`: one register of a DSR file."""

    name = "csl_ext.get_dsr"

    id = prop_def(IntegerAttr)
    result = result_def(DsrType)

    assembly_format = "$id attr-dict `->` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        if self.id.value.data < 0:
            raise VerifyException(f"DSR id {self.id.value.data} is negative")


@irdl_op_definition
class LoadToDsrOp(IRDLOperation):
    """`@load_to_dsr(dsr, dsd)`, optionally with `.{ .async = true, .activate|.unblock = t }`
    (the `async` attribute, `#csl_ext.async<...>`): the completion action of the next
    DSD operation that uses the register (the SDK's allreduce library writes its
    operations so)."""

    name = "csl_ext.load_to_dsr"

    dsr = operand_def(DsrType)
    dsd = operand_def(DsdType)
    save_address = opt_prop_def(BoolAttr)  # `.save_address`: see `saves_address`

    assembly_format = "$dsr `,` $dsd attr-dict `:` type($dsr) `,` type($dsd)"
    irdl_options = (ParsePropInAttrDict(),)

    @property
    def saves_address(self) -> bool | None:
        """`.save_address = true`: an operation leaves the register at the address where
        it stopped (the next one goes on from there); false: at the address loaded (the
        next one starts over); None: not said (SDK single-tile-matvec benchmark)."""
        return None if self.save_address is None else bool(self.save_address.value.data)

    def verify_(self) -> None:
        t, d = self.dsr.type, self.dsd.type
        assert isinstance(t, DsrType) and isinstance(d, DsdType)
        if d.data == DsdKind.fabin_dsd and t.kind.data == "dest":
            raise VerifyException("a fabin_dsd (a source) cannot go to a dsr_dest")
        if d.data == DsdKind.fabout_dsd and t.kind.data == "src1":
            raise VerifyException("a fabout_dsd (a destination) cannot go to a dsr_src1")
        attr = self.attributes.get(ASYNC_ATTR)
        if attr is not None and not isinstance(attr, AsyncAttr):
            raise VerifyException(f"'async' must be a #csl_ext.async, got {attr}")


@irdl_attr_definition
class FifoType(ParametrizedAttribute, TypeAttribute):
    """A FIFO DSD value (`@allocate_fifo(buffer)`). `!csl_ext.fifo`."""

    name = "csl_ext.fifo"


@irdl_op_definition
class AllocateFifoOp(IRDLOperation):
    """`@allocate_fifo(buffer)`: a FIFO over a one-dimensional array; asynchronous DSD
    operations push to it (as their destination) and pop from it (as a source)."""

    name = "csl_ext.allocate_fifo"

    buffer = operand_def(MemRefType)
    result = result_def(FifoType)

    assembly_format = "$buffer attr-dict `:` type($buffer)"

    def __init__(self, buffer: SSAValue | Operation):
        super().__init__(operands=[buffer], result_types=[FifoType()])

    def verify_(self) -> None:
        t = self.buffer.type
        assert isinstance(t, MemRefType)
        if len(t.get_shape()) != 1:
            raise VerifyException(f"@allocate_fifo takes a one-dimensional array, not {t}")


@irdl_op_definition
class DsdBuiltinOp(IRDLOperation):
    """A DSD builtin on operands xDSL's `csl` ops cannot take: registers (DSRs) and
    FIFOs: `@<builtin>(dest, src0, src1, ...)`, as
    `csl_ext.dsd_builtin "fadds"(%d, %s0, %s1) {async = #csl_ext.async<>}`. The other
    operands are DSDs or scalars. A dsr_dest is only a destination, a dsr_src1 only a
    source (SDK documentation, "DSR Types")."""

    name = "csl_ext.dsd_builtin"

    builtin = prop_def(StringAttr)
    ops = var_operand_def()

    assembly_format = "$builtin `(` $ops `)` attr-dict `:` type($ops)"
    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        types = [o.type for o in self.ops]
        if not types or not isinstance(types[0], DsrType | FifoType | DsdType):
            raise VerifyException(f"@{self.builtin.data}: its destination must be a DSR, a "
                                  "FIFO or a DSD")
        if not any(isinstance(t, DsrType | FifoType) for t in types):
            raise VerifyException(f"@{self.builtin.data} has no DSR or FIFO operand: write "
                                  f"it as csl.{self.builtin.data}")
        for i, t in enumerate(types):
            if not isinstance(t, DsrType):
                continue
            if i == 0 and t.kind.data == "src1":
                raise VerifyException("a dsr_src1 holds a source operand, not the destination")
            if i > 0 and t.kind.data == "dest":
                raise VerifyException(f"operand {i} is a dsr_dest: it holds the destination "
                                      "only")
        attr = self.attributes.get(ASYNC_ATTR)
        if attr is not None and not isinstance(attr, AsyncAttr):
            raise VerifyException(f"'async' must be a #csl_ext.async, got {attr}")


@irdl_op_definition
class SetTeardownHandlerOp(IRDLOperation):
    """`@set_teardown_handler(fn, color)` (in a program's comptime block): `fn` runs when
    a teardown command (a control wavelet's, `<memcpy/memcpy_switches>`'s
    teardown_cmd_1) tears `color` down at this PE's router (the SDK's allreduce)."""

    name = "csl_ext.set_teardown_handler"

    fn_name = prop_def(SymbolRefAttr)
    color = operand_def(ColorType)

    traits = traits_def(HasParent(CslModuleOp))

    assembly_format = "$fn_name `,` $color attr-dict"
    irdl_options = (ParsePropInAttrDict(),)


TILE_CONFIG_ACTIONS = {
    "reset_routes": "color_config",
    "clear_current_position": "switch_config",
    "set_invalid_for_all_switch_positions": "switch_config",
    "set_rx_switch_pos1": "switch_config",
    "teardown_exit": "teardown",
}
"""The `<tile_config>` calls modeled (those of the SDK's allreduce library), and the
sub-module each belongs to."""


@irdl_op_definition
class TileConfigOp(IRDLOperation):
    """A runtime change of this PE's router for one color through `<tile_config>` (its
    module is the first operand): `color_config.reset_routes(addr, .{ .tx, .rx })` (a
    new position 0, with `routes`), `switch_config.clear_current_position(c)` (back to
    position 0), `switch_config.set_invalid_for_all_switch_positions(c)`,
    `switch_config.set_rx_switch_pos1(c, port)` (with `port`) and
    `teardown.exit(c)` (the color leaves teardown mode and is routed again)."""

    name = "csl_ext.tile_config"

    module = operand_def(ImportedModuleType)
    color = operand_def(ColorType)
    action = prop_def(StringAttr)
    routes = opt_prop_def(RoutesAttr)
    port = opt_prop_def(StringAttr)

    assembly_format = "$action $module `,` $color attr-dict"
    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        action = self.action.data
        if action not in TILE_CONFIG_ACTIONS:
            raise VerifyException(f"<tile_config> call '{action}' is not one of "
                                  f"{sorted(TILE_CONFIG_ACTIONS)}")
        if (self.routes is not None) != (action == "reset_routes"):
            raise VerifyException(f"{action}: 'routes' goes with reset_routes only")
        if self.routes is not None and len(self.routes.rx_ports) != 1:
            raise VerifyException("reset_routes takes one rx port (.rx = EAST, ...)")
        if (self.port is not None) != (action == "set_rx_switch_pos1"):
            raise VerifyException(f"{action}: 'port' goes with set_rx_switch_pos1 only")
        if self.port is not None and self.port.data not in PORTS:
            raise VerifyException(f"set_rx_switch_pos1: unknown port {self.port.data!r}; "
                                  f"ports are {PORTS}")


PARAM_TYPES = (PtrType, TaskIdType, QueueType)


@irdl_op_definition
class ParamOp(IRDLOperation):
    """`param name: T [= init];` for the param kinds xDSL's `csl.param` does not accept:
    pointers (`param zValues: *[2, 10]f32;`, `param constants: *const [5]f32;`), task
    ids (`param send: local_task_id = @get_local_task_id(3);`) and queues
    (`param q: input_queue;`). The value a module or tile gets is checked against the
    type when it is bound (a pointer param given a number, or a pointer to another
    element type or shape, is an error naming the param)."""

    name = "csl_ext.param"

    T: ClassVar = VarConstraint("T", AnyAttr())

    param_name = prop_def(StringAttr)
    init_value = opt_operand_def(T)
    res = result_def(T)

    traits = traits_def(HasParent(CslModuleOp))

    assembly_format = "$param_name (`=` $init_value^)? attr-dict `:` type($res)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, name: str, type: Attribute, init: SSAValue | Operation | None = None):
        super().__init__(operands=[init], result_types=[type],
                         properties={"param_name": StringAttr(name)})

    def verify_(self) -> None:
        t = self.res.type
        if not isinstance(t, PARAM_TYPES):
            raise VerifyException(
                f"param '{self.param_name.data}': csl_ext.param is for pointer, task id and "
                f"queue params, not {t} (use csl.param)")
        if isinstance(t, PtrType) and isinstance(t.type, MemRefType) and any(
                d < 0 for d in t.type.get_shape()):
            raise VerifyException(f"param '{self.param_name.data}': a pointer to an array "
                                  "of static shape (CSL's *[n]T)")
        if self.init_value is not None and self.init_value.type != t:
            raise VerifyException(f"param '{self.param_name.data}' of type {t}: default of "
                                  f"type {self.init_value.type}")


@irdl_op_definition
class TaskIdOfOp(IRDLOperation):
    """A task id value: `@get_local_task_id(n)` / `@get_control_task_id(n)` of an integer,
    `@get_data_task_id(c)` of a color (WSE-2) or of an input queue (WSE-3)."""

    name = "csl_ext.task_id_of"

    source = operand_def()
    result = result_def(TaskIdType)

    assembly_format = "$source attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue | Operation, kind: TaskKind):
        super().__init__(operands=[source], result_types=[TaskIdType(StringAttr(kind.value))])

    def verify_(self) -> None:
        t, kind = self.source.type, self.result.type
        assert isinstance(kind, TaskIdType)
        if kind.task_kind == TaskKind.DATA:
            ok = isinstance(t, ColorType) or (isinstance(t, QueueType)
                                              and t.direction.data == "input")
            want = "a color (WSE-2) or an input queue (WSE-3)"
        else:
            ok, want = isinstance(t, IntegerType), "an integer"
        if not ok:
            raise VerifyException(f"@get_{kind.kind.data}_task_id takes {want}, not {t}")


@irdl_op_definition
class GetQueueOp(IRDLOperation):
    """`@get_input_queue(n)` / `@get_output_queue(n)` of a comptime integer."""

    name = "csl_ext.get_queue"

    number = operand_def(IntegerType)
    result = result_def(QueueType)

    assembly_format = "$number attr-dict `:` type($number) `->` type($result)"


@irdl_op_definition
class BindTaskOp(IRDLOperation):
    """`@bind_<kind>_task(task, id)` with a task id value (a param, `@get_local_task_id`):
    at comptime, the `csl.task` (which then has no literal id) gets that id."""

    name = "csl_ext.bind_task"

    task_name = prop_def(SymbolRefAttr)
    id = operand_def(TaskIdType)

    traits = traits_def(HasParent(CslModuleOp))

    assembly_format = "$task_name `,` $id attr-dict `:` type($id)"
    irdl_options = (ParsePropInAttrDict(),)


class _TaskIdActionOp(IRDLOperation):
    """`@activate(id)`, `@block(id)`, `@unblock(id)` of a task id value."""

    id = operand_def(TaskIdType)

    assembly_format = "$id attr-dict `:` type($id)"

    def __init__(self, id: SSAValue | Operation):
        super().__init__(operands=[id])


@irdl_op_definition
class ActivateIdOp(_TaskIdActionOp):
    name = "csl_ext.activate_id"

    def verify_(self) -> None:
        t = self.id.type
        assert isinstance(t, TaskIdType)
        if t.task_kind == TaskKind.DATA:
            raise VerifyException("@activate of a data task id: data tasks run on wavelets")


@irdl_op_definition
class BlockIdOp(_TaskIdActionOp):
    name = "csl_ext.block_id"


@irdl_op_definition
class UnblockIdOp(_TaskIdActionOp):
    name = "csl_ext.unblock_id"


CSL_EXT = Dialect(
    "csl_ext",
    [BlockOp, UnblockOp, SetColorConfigOp, InitializeQueueOp, GetFabDsdOp, BindDataTaskOp,
     AddressOfVarOp, DerefOp, StorePtrOp, MapOp, VoidOp, GetTaskIdOp, GetDsrOp, LoadToDsrOp,
     DsdBuiltinOp, AllocateFifoOp, SetTeardownHandlerOp, TileConfigOp, FnRefOp,
     ComptimeAssertOp, ParamOp, TaskIdOfOp, GetQueueOp, BindTaskOp, ActivateIdOp, BlockIdOp,
     UnblockIdOp],
    [RoutesAttr, AsyncAttr, SwitchesAttr, DsrType, FifoType, FilterAttr, TaskIdType,
     QueueType],
)
