"""``spmd-partition``: a global program whose values carry shardings (after
``sharding-propagation``) becomes the program of one device: local shapes,
and the collectives that move data where an op needs it.

For each op, its factor rule and its result's sharding say how its operands
must be laid out; each operand is *resharded* from its sharding to that:

1. a partial value is resolved first: a ``reduce_scatter`` along a dimension
   the consumer wants split over exactly the partial axes (and that is whole
   now), else an ``all_reduce`` (its reduction: sum, mean, max, min);
2. a dimension split differently than wanted is gathered (``all_gather``);
3. a whole dimension the op wants split is cut locally (``local_slice``,
   no communication).

The op is then rebuilt on the local operands (``reshape``/``broadcast_to``
take the local target shape) and its local result shape checked by the op's
own shape rule against the sharding's local shape: a mismatch fails the pass
naming the op, never a wrong program. Function results are resolved partials
in their (possibly split) layout, recorded as ``sharding.sharding`` result
attributes; arguments take their local types.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
)
from xdsl.ir import Block, Operation, SSAValue
from xdsl.utils.exceptions import PassFailedException

from ..dialects import OPS
from ..dialects.dtypes import FLOAT, int64
from ..dialects.opdef import ShapeError
from ..dialects.pyflame import PyflameOp, create_op, spec_of_type
from ..dialects.sharding import (
    SPLIT_NORMALIZED,
    SPLIT_SCANS,
    TABLE_FACTOR,
    CollectiveCost,
    Mesh,
    Sharding,
    bytes_sent,
    collective_shape,
    collective_transpose,
)
from ..dialects.sharding_ir import (
    COLLECTIVE_OPS,
    SHARDING_KEY,
    AnnotateOp,
    LocalSliceOp,
    PpermuteOp,
    ShardingAttr,
    int_attr,
)
from .common import IRBuilder, PyflamePass
from .sharding_propagation import arg_shardings, op_rule

Dims = tuple[tuple[str, ...], ...]
_COLLECTIVE_TYPES = tuple(COLLECTIVE_OPS.values())
# a collective's discardable attribute: its result is a constant for autodiff
# (the shift of a split softmax: the program computes the same without it)
STOP_GRADIENT = "sharding.stop_gradient"


@dataclass
class _Local:
    """A global value in the device program: its local value and layout."""

    value: SSAValue
    dims: Dims
    partial: tuple[str, ...] = ()
    reduction: str = "sum"


def _shape(v: SSAValue) -> tuple[int, ...]:
    assert isinstance(v.type, TensorType)
    return tuple(v.type.get_shape())


class _Partitioner:
    def __init__(self, f: func.FuncOp, mesh: Mesh):
        self.f, self.mesh = f, mesh
        self.block = Block()
        self.env: dict[SSAValue, _Local] = {}
        self.resharded: dict[tuple[SSAValue, Dims], SSAValue] = {}
        self.collectives = 0

    # ---- emitting ----
    def _emit(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0]

    def _collective(self, kind: str, x: SSAValue, axes: tuple[str, ...], **params: object
                    ) -> SSAValue:
        n = self.mesh.size(axes)
        shape = collective_shape(kind, _shape(x), n, params)
        assert isinstance(x.type, TensorType)
        props = {k: StringAttr(v) if isinstance(v, str) else int_attr(int(v))  # type: ignore
                 for k, v in params.items()}
        op = COLLECTIVE_OPS[kind].make(x, self.mesh, axes,
                                       TensorType(x.type.element_type, shape), **props)
        self.collectives += 1
        return self._emit(op)

    def reshard(self, g: SSAValue, want: Dims) -> SSAValue:
        loc = self.env[g]
        key = (g, want)
        if key in self.resharded:
            return self.resharded[key]
        v, dims = loc.value, list(loc.dims)
        if loc.partial:
            axes = loc.partial
            scatter = next((d for d, w in enumerate(want) if w == axes and not dims[d]), None)
            if scatter is not None and loc.reduction == "sum":
                v = self._collective("reduce_scatter", v, axes, dim=scatter)
                dims[scatter] = axes
            else:
                v = self._collective("all_reduce", v, axes, reduction=loc.reduction)
        for d, (have, w) in enumerate(zip(dims, want, strict=True)):
            if have and have != w:
                v = self._collective("all_gather", v, have, dim=d)
                dims[d] = ()
        cut = tuple(w if w and not have else () for have, w in zip(dims, want, strict=True))
        if any(cut):
            s = Sharding(self.mesh, cut)
            assert isinstance(v.type, TensorType)
            local = s.local_shape(_shape(v))
            op = LocalSliceOp(operands=[v], result_types=[TensorType(v.type.element_type, local)],
                              properties={"sharding": ShardingAttr.get(s)})
            v = self._emit(op)
        self.resharded[key] = v
        return v

    # ---- ops ----
    def op(self, op: Operation) -> None:
        if isinstance(op, AnnotateOp):
            want = op.sharding.sharding.dims
            self.env[op.result] = _Local(self.reshard(op.input, want), want)
            return
        if isinstance(op, func.ReturnOp):
            outs, attrs = [], []
            for v in op.operands:
                loc = self.env[v]
                outs.append(self.reshard(v, loc.dims))
                attrs.append(DictionaryAttr({SHARDING_KEY: ShardingAttr.get(
                    Sharding(self.mesh, loc.dims))}))
            self.block.add_op(func.ReturnOp(*outs))
            self.f.res_attrs = ArrayAttr(attrs)
            return
        if not isinstance(op, PyflameOp):
            raise PassFailedException(f"spmd-partition: cannot partition {op.name} (only "
                                      "pyflame and sharding ops)")
        rule = op_rule(op)
        attr = op.attributes.get(SHARDING_KEY)
        if rule is None or not isinstance(attr, ShardingAttr):
            self._replicated(op)
            return
        res = attr.sharding
        axes_of: dict[str, tuple[str, ...]] = {}
        for fs in rule.results:
            for fac, axes in zip(fs, res.dims, strict=True):
                if fac is not None:
                    axes_of[fac] = axes
        reductions = [f for f in rule.reduction]
        left = list(res.partial)
        for fac in reductions:  # partial axes, to the reduction factors the operands carry
            mine: tuple[str, ...] = ()
            for v, fs in zip(op.operands, rule.operands, strict=True):
                for i, x in enumerate(fs):
                    if x == fac:
                        have = self.env[v].dims[i]
                        mine = tuple(a for a in have if a in left) if len(reductions) > 1 \
                            else tuple(left)
            axes_of[fac] = mine
            left = [a for a in left if a not in mine]
        if op.OPDEF.name == "logsumexp":  # reduced where the operand lies (its rule),
            # unless the result's layout takes those axes (then gathered first)
            have, used = self.env[op.operands[0]].dims, {a for x in axes_of.values() for a in x}
            for d in op.py_attrs()["dims"]:
                axes_of[rule.operands[0][d]] = () if used & set(have[d]) else have[d]
        operands = [self.reshard(v, tuple(axes_of.get(x, ()) if x else () for x in fs))
                    for v, fs in zip(op.operands, rule.operands, strict=True)]
        if any(fs != rule.results[0] for fs in rule.results):
            raise PassFailedException(f"spmd-partition: the results of pyflame."
                                      f"{op.OPDEF.name} have different factors: they cannot "
                                      "share the op's one sharding")
        locals_ = [res.local_shape(_shape(r)) for r in op.results]
        attrs = op.py_attrs()
        if "shape" in attrs and op.OPDEF.name in ("reshape", "broadcast_to"):
            attrs["shape"] = locals_[0]
        if op.OPDEF.name == "slice":  # a dimension taken whole ends at its local size
            assert isinstance(operands[0].type, TensorType)
            attrs["limit"] = tuple(n if x else lim for n, x, lim in zip(
                _shape(operands[0]), rule.operands[0], attrs["limit"], strict=True))
        split_dim = axes_of.get(rule.operands[0][attrs["dim"]]) \
            if op.OPDEF.name in SPLIT_NORMALIZED else None
        reduced = tuple(a for d in attrs["dims"] for a in axes_of[rule.operands[0][d]]) \
            if op.OPDEF.name == "logsumexp" else ()
        if op.OPDEF.name == "gather" and axes_of.get(TABLE_FACTOR):
            new = [self._masked_gather(operands[0], operands[1], attrs["dim"],
                                       axes_of[TABLE_FACTOR], _shape(op.operands[0]))]
        elif split_dim:
            new = [self._split_normalized(op.OPDEF.name, operands[0], attrs["dim"], split_dim)]
        elif reduced:
            new = [self._split_logsumexp(operands[0], attrs, reduced, locals_[0])]
        elif op.OPDEF.name in SPLIT_SCANS and axes_of.get(rule.operands[0][attrs["dim"]]):
            new = self._split_scan(op.OPDEF.name, operands[0], attrs,
                                   axes_of[rule.operands[0][attrs["dim"]]])
        else:
            new = self._build(op, operands, attrs, locals_)
        kinds = {rule.reduction[f] for f in reductions if axes_of.get(f)}
        if len(kinds) > 1:
            raise PassFailedException(f"spmd-partition: pyflame.{op.OPDEF.name} reduces "
                                      f"sharded factors with {sorted(kinds)} at once")
        kind = kinds.pop() if kinds else "sum"
        for r, v in zip(op.results, new, strict=True):
            self.env[r] = _Local(v, res.dims, res.partial, kind)

    def _make(self, name: str, operands: list[SSAValue], attrs: dict | None = None
              ) -> SSAValue:
        attrs = attrs or {}
        specs = [spec_of_type(v.type, f"operand #{i}") for i, v in enumerate(operands)]
        out = OPS[name].check([s for s, _ in specs], [d for _, d in specs], attrs)
        return self._emit(create_op(name, operands, attrs, out))

    def _masked_gather(self, x: SSAValue, index: SSAValue, dim: int, axes: tuple[str, ...],
                       table: tuple[int, ...]) -> SSAValue:
        """Megatron's vocabulary-parallel lookup on this device's block of the
        table (rows ``lo..hi`` of dimension ``dim``, found as the extremes of its
        block of the positions, so the program stays the same on every device):
        positions outside the block read row 0 and are zeroed; the result is
        this device's share of a sum over ``axes``."""
        itype, xtype = spec_of_type(index.type, "index")[1], spec_of_type(x.type, "x")[1]
        pos = self._make("iota", [], {"shape": (table[dim],), "dim": 0, "dtype": itype})
        block = Sharding(self.mesh, (axes,))
        mine = self._emit(LocalSliceOp(
            operands=[pos], result_types=[TensorType(index.type.element_type,  # type: ignore
                                                     block.local_shape((table[dim],)))],
            properties={"sharding": ShardingAttr.get(block)}))
        lo, hi = (self._make(k, [mine], {"dims": (0,), "keepdim": False, "ties": None})
                  for k in ("min", "max"))
        ok = self._make("logical_and", [self._make("ge", [index, lo]),
                                        self._make("le", [index, hi])])
        local = self._make("mul", [self._make("sub", [index, lo]),
                                   self._make("convert", [ok], {"dtype": itype})])
        rows = self._make("gather", [x, local], {"dim": dim})
        return self._make("mul", [rows, self._make("convert", [ok], {"dtype": xtype})])

    def _shifted_sum(self, x: SSAValue, dims: tuple[int, ...], axes: tuple[str, ...]
                     ) -> tuple[SSAValue, SSAValue, SSAValue, SSAValue]:
        """Over ``dims`` of ``x`` split over ``axes``: the global max (the shard's,
        all-reduced: max), ``x - max``, ``exp(x - max)`` and its global sum (the
        shard's, all-reduced: sum), all with ``keepdim``. The max only shifts the
        exponentials (what is computed from them does not depend on it), so the
        device program does not differentiate through its all-reduce
        (``STOP_GRADIENT``), as Megatron detaches it."""
        red = {"dims": dims, "keepdim": True}
        peak = self._collective("all_reduce", self._make("max", [x], {**red, "ties": None}),
                                axes, reduction="max")
        peak.owner.attributes[STOP_GRADIENT] = UnitAttr()
        shifted = self._make("sub", [x, peak])
        exps = self._make("exp", [shifted])
        total = self._collective("all_reduce", self._make("sum", [exps], red), axes,
                                 reduction="sum")
        return peak, shifted, exps, total

    def _split_normalized(self, name: str, x: SSAValue, dim: int, axes: tuple[str, ...]
                          ) -> SSAValue:
        """``softmax``/``log_softmax`` of ``x`` along ``dim`` split over ``axes``,
        without gathering it (Megatron's vocabulary-parallel cross entropy):
        ``exp(x - max) / sum`` or ``x - max - log(sum)`` on the shard."""
        _, shifted, exps, total = self._shifted_sum(x, (dim,), axes)
        if name == "softmax":
            return self._make("div", [exps, total])
        return self._make("sub", [shifted, self._make("log", [total])])

    def _split_logsumexp(self, x: SSAValue, attrs: dict, axes: tuple[str, ...],
                         local: Sequence[int]) -> SSAValue:
        """``logsumexp`` over dimensions split over ``axes``, in place: ``max +
        log(sum)`` of the global max and sum of exponentials (``_shifted_sum``)."""
        peak, _, _, total = self._shifted_sum(x, tuple(attrs["dims"]), axes)
        out = self._make("add", [peak, self._make("log", [total])])
        if tuple(_shape(out)) != tuple(local):
            out = self._make("reshape", [out], {"shape": tuple(local)})
        return out

    def _block_number(self, axes: tuple[str, ...], rank: int) -> SSAValue:
        """This device's index along ``axes`` (its block of an iota: the program
        is the same on every device), shaped ``(1,) * rank``."""
        b = IRBuilder(self._emit)
        pos = b.op("iota", shape=(self.mesh.size(axes),), dim=0, dtype=int64)
        mine = self._emit(LocalSliceOp(
            operands=[pos], result_types=[TensorType(pos.type.element_type, (1,))],  # type: ignore
            properties={"sharding": ShardingAttr.get(Sharding(self.mesh, (axes,)))}))
        return b.op("reshape", mine, shape=(1,) * rank)

    def _split_cumextreme(self, name: str, x: SSAValue, dim: int, axes: tuple[str, ...]
                          ) -> list[SSAValue]:
        """``cummax``/``cummin`` along ``dim`` split over ``axes``, by a carry
        exchange: each device scans its block (indices made global by its
        block's offset); the blocks' last running extremes and their indices
        are all-gathered; the blocks before this one are folded into a carry,
        and the carry into this block, by the scan's own combination
        (``dialects/scan.py: _cumextreme_decomposition``: the later element
        wins ties, as torch's ``x >= out``; a NaN wins, a later NaN wins)."""
        b = IRBuilder(self._emit)
        values, local_idx = b.op(name, x, dim=dim)
        shape = b.shape(values)
        rank, n = len(shape), self.mesh.size(axes)
        mine = self._block_number(axes, rank)
        idx = b.op("add", local_idx, b.op("mul", mine, b.scalar(shape[dim], like=mine)))
        floating = b.dtype(values).category == FLOAT

        def at(v: SSAValue, k: int) -> SSAValue:  # position k along dim
            return b.op("slice", v, start=tuple(k if d == dim else 0 for d in range(rank)),
                        limit=tuple(k + 1 if d == dim else s
                                    for d, s in enumerate(b.shape(v))),
                        stride=(1,) * rank)

        def combine(earlier: tuple[SSAValue, SSAValue], later: tuple[SSAValue, SSAValue]
                    ) -> tuple[SSAValue, SSAValue]:
            wins = b.op("ge" if name == "cummax" else "le", later[0], earlier[0])
            if floating:
                wins = b.op("logical_or", b.op("ne", later[0], later[0]), b.op(
                    "logical_and", wins, b.op("logical_not", b.op("ne", earlier[0], earlier[0]))))
            return (b.op("where", wins, later[0], earlier[0]),
                    b.op("where", wins, later[1], earlier[1]))

        last = shape[dim] - 1
        tops = [self._collective("all_gather", at(v, last), axes, dim=dim) for v in (values, idx)]
        carry = (at(tops[0], 0), at(tops[1], 0))
        for k in range(1, n - 1):  # blocks 1..k fold in where k < this device's block
            folded = combine(carry, (at(tops[0], k), at(tops[1], k)))
            before = b.op("gt", mine, b.scalar(k, like=mine))
            carry = (b.op("where", before, folded[0], carry[0]),
                     b.op("where", before, folded[1], carry[1]))
        out = combine(carry, (values, idx))
        first = b.op("eq", mine, b.scalar(0, like=mine))  # block 0: nothing before it
        return [b.op("where", first, values, out[0]), b.op("where", first, idx, out[1])]

    def _split_scan(self, name: str, x: SSAValue, attrs: dict, axes: tuple[str, ...]
                    ) -> list[SSAValue]:
        """A scan along a dimension split over ``axes``, by a carry exchange:
        each device scans its block, the blocks' totals (each block's last
        element; its first for a reverse scan) are all-gathered, and each block
        is combined with the combination of the totals of the blocks before it
        (after it, reversed): the sum, product or log-sum-exp of the gathered
        totals masked by ``position < this device's`` (its block of an iota:
        the program is the same on every device)."""
        if name in ("cummax", "cummin"):
            return self._split_cumextreme(name, x, attrs["dim"], axes)
        b = IRBuilder(self._emit)
        dim, reverse = attrs["dim"], attrs.get("reverse", False)
        local = b.op(name, x, **attrs)
        shape = b.shape(local)
        rank, n = len(shape), self.mesh.size(axes)
        edge = 0 if reverse else shape[dim] - 1
        total = b.op("slice", local, start=tuple(edge if d == dim else 0 for d in range(rank)),
                     limit=tuple(edge + 1 if d == dim else k for d, k in enumerate(shape)),
                     stride=(1,) * rank)
        totals = self._collective("all_gather", total, axes, dim=dim)
        pos = b.op("iota", shape=(n,), dim=0, dtype=int64)
        block = Sharding(self.mesh, (axes,))
        mine = self._emit(LocalSliceOp(
            operands=[pos], result_types=[TensorType(pos.type.element_type, (1,))],  # type: ignore
            properties={"sharding": ShardingAttr.get(block)}))
        j = b.op("reshape", pos, shape=tuple(n if d == dim else 1 for d in range(rank)))
        before = b.op("gt" if reverse else "lt", j, b.op("reshape", mine, shape=(1,) * rank))
        dtype = b.dtype(totals)
        neutral = {"cumsum": 0, "cumprod": 1}.get(name, float(np.finfo(dtype.np).min))
        masked = b.op("where", before, totals, b.scalar(neutral, like=totals))
        red = {"dims": (dim,), "keepdim": True}
        if name == "cumsum":
            return [b.op("add", local, b.op("sum", masked, **red))]
        if name == "cumprod":
            return [b.op("mul", local, b.op("prod", masked, **red))]
        carry = b.op("logsumexp", masked, **red)  # logaddexp(local, carry), shifted
        top = b.op("maximum", local, carry)
        return [b.op("add", top, b.op("log", b.op("add", b.op("exp", b.op("sub", local, top)),
                                                  b.op("exp", b.op("sub", carry, top)))))]

    def _build(self, op: PyflameOp, operands: list[SSAValue], attrs: dict,
               locals_: list[tuple[int, ...]]) -> list[SSAValue]:
        specs = [spec_of_type(v.type, f"operand #{i}") for i, v in enumerate(operands)]
        name = op.OPDEF.name
        try:
            out = OPS[name].check([s for s, _ in specs], [d for _, d in specs], attrs)
        except ShapeError as e:
            raise PassFailedException(f"spmd-partition: pyflame.{name} on local operands "
                                      f"{[s for s, _ in specs]}: {e.reason}") from None
        for (shape, _), local, r in zip(out, locals_, op.results, strict=True):
            if shape != tuple(local):
                raise PassFailedException(
                    f"spmd-partition: pyflame.{name} gives local shape {list(shape)} but its "
                    f"sharding wants {list(local)} (global {list(_shape(r))})")
        new = create_op(name, operands, attrs, out)
        self.block.add_op(new)
        return list(new.results)

    def _replicated(self, op: PyflameOp) -> None:
        rank = [len(_shape(v)) for v in op.operands]
        operands = [self.reshard(v, ((),) * r) for v, r in zip(op.operands, rank, strict=True)]
        attrs = op.py_attrs()
        specs = [spec_of_type(r.type, "result") for r in op.results]
        new = create_op(op.OPDEF.name, operands, attrs, specs)
        self.block.add_op(new)
        for r, nr in zip(op.results, new.results, strict=True):
            self.env[r] = _Local(nr, ((),) * len(_shape(r)))

    def run(self, shardings: list[Sharding]) -> int:
        old = self.f.body.block
        for arg, s in zip(old.args, shardings, strict=True):
            assert isinstance(arg.type, TensorType)
            local = TensorType(arg.type.element_type, s.local_shape(_shape(arg)))
            new = self.block.insert_arg(local, len(self.block.args))
            new.name_hint = arg.name_hint
            self.env[arg] = _Local(new, s.dims)
        for op in list(old.ops):
            self.op(op)
        old_region = self.f.body
        old_region.detach_block(old)
        old_region.add_block(self.block)
        for op in reversed(list(old.ops)):  # drop the global ops (uses first)
            op.drop_all_references()
        ins = [a.type for a in self.block.args]
        outs = [v.type for v in self.block.last_op.operands]  # type: ignore[union-attr]
        self.f.function_type = func.FunctionType.from_lists(ins, outs)
        return self.collectives


def bytes_moved(f: func.FuncOp) -> int:
    """Bytes the collectives of a per-device program send, summed over all the
    mesh's devices, for one run (``dialects/sharding.py: bytes_sent``; a
    ppermute counts the devices that send)."""
    return sum(c.total_bytes for c in _forward_costs(f, set())[0])


def _nbytes(v: SSAValue) -> int:
    assert isinstance(v.type, TensorType)
    n = v.type.element_type.bitwidth // 8  # type: ignore[attr-defined]
    for d in _shape(v):
        n *= d
    return n


def _cost(op: Operation, kind: str, nbytes: int, phase: str) -> CollectiveCost:
    mesh = op.mesh.mesh  # type: ignore[attr-defined]
    n = op.group_size  # type: ignore[attr-defined]
    senders = mesh.size(mesh.names)
    if isinstance(op, PpermuteOp):
        pairs = op.params()["pairs"]
        senders = senders // n * sum(s != d for s, d in pairs)
    per_device = bytes_sent(kind, n, nbytes)
    return CollectiveCost(kind, tuple(op.axis_names), n, per_device,  # type: ignore
                          senders * per_device, phase)


def _forward_costs(f: func.FuncOp, live: set[SSAValue]
                   ) -> tuple[list[CollectiveCost], list[Operation]]:
    """The forward collectives' costs, and those collectives whose operand
    depends on a value of ``live`` (which this walk extends to their dependents)."""
    costs, differentiable = [], []
    for op in f.body.walk():
        if any(v in live for v in op.operands) and STOP_GRADIENT not in op.attributes:
            live.update(op.results)
            if isinstance(op, _COLLECTIVE_TYPES):
                differentiable.append(op)
        if isinstance(op, _COLLECTIVE_TYPES):
            costs.append(_cost(op, op.kind, _nbytes(op.input), "forward"))
    return costs, differentiable


def step_traffic(f: func.FuncOp, differentiable: Sequence[bool]) -> list[CollectiveCost]:
    """The collectives of one training step of a partitioned program, per device
    group, summed over the mesh: the forward ones; in the backward, the
    transpose of each that a differentiable argument reaches (all_reduce <->
    all_reduce, all_gather <-> reduce_scatter, ...: the same volume, the
    cotangent having the result's shape); and the all-reduce of each
    differentiable argument's local gradient over the mesh axes it is
    replicated on (its gradient is a sum of every replica's). The hand count of
    ``test/python/sharding/test_traffic.py`` checks these."""
    live = {a for a, d in zip(f.args, differentiable, strict=True) if d}
    costs, back = _forward_costs(f, set(live))
    for op in reversed(back):
        kind, _ = collective_transpose(op.kind, op.params())  # type: ignore[attr-defined]
        costs.append(_cost(op, kind, _nbytes(op.results[0]), "backward"))
    for arg, d, s in zip(f.args, differentiable, arg_shardings(f), strict=True):
        if not d or s is None:
            continue
        split = {a for dim in s.dims for a in dim}
        rest = tuple(a for a in s.mesh.names if a not in split)
        n = s.mesh.size(rest)
        if n > 1:
            per_device = bytes_sent("all_reduce", n, _nbytes(arg))
            costs.append(CollectiveCost("all_reduce", rest, n, per_device,
                                        s.mesh.size(s.mesh.names) * per_device, "gradient"))
    return costs


@dataclass(frozen=True)
class SpmdPartition(PyflamePass):
    """Turn each function with shardings into its per-device program."""

    name = "spmd-partition"

    def run(self, ctx: Context, module: ModuleOp) -> dict[str, int]:
        inserted = moved = 0
        for op in list(module.walk()):
            if not isinstance(op, func.FuncOp):
                continue
            shardings = arg_shardings(op)
            mesh = next((s.mesh for s in shardings if s is not None), None)
            if mesh is None:
                continue
            full = [s if s is not None else Sharding(mesh, ((),) * len(_shape(a)))
                    for s, a in zip(shardings, op.args, strict=True)]
            inserted += _Partitioner(op, mesh).run(full)
            moved += bytes_moved(op)
        return {"collectives": inserted, "bytes-moved": moved}

