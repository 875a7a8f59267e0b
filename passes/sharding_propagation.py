"""``sharding-propagation``: give every value of a global program a sharding,
from the user's (``sharding.annotate`` ops, ``sharding.sharding`` argument
attributes), through each op's factor rule (``dialects/sharding.py``).

Shardy's three steps, per op, repeated forward and backward to a fixed point:

1. **collect**: for each factor of the op's rule, the mesh axes of every
   operand and result dimension that carries it and already has a sharding;
2. **resolve** conflicts by priority, in this order:
   a. a user annotation (an annotated value, an annotated argument) wins and is
      never changed (the partitioner reshards around it); an annotation in the
      middle of the program (``pf.reshard`` inside a ``partition``-ed function)
      only seeds the dimensions of its operand that nothing else decided: where
      the operand's producer decided otherwise, the partitioner reshards at the
      annotation (a sharding constraint, as Shardy's);
   b. otherwise the candidate with more mesh axes (more parallelism) wins;
   c. ties go to the first candidate in operand-then-result order;
   d. a mesh axis may serve one factor of an op only: a later factor keeps the
      prefix of its axes before the first axis taken by an earlier factor;
   e. a ``blocked`` factor (the dimension softmax normalizes) stays replicated,
      as does a dimension the chosen axes do not divide;
3. **update** the unannotated dimensions carrying the factor.

A reduction factor (matmul's ``k``, a summed dimension) that ends up sharded
makes the op's result a *partial* value over those axes: the partitioner
resolves it by an all-reduce, or a reduce-scatter when the consumer wants the
result split along those axes. An op without a factor rule gets a replicated
result (and replicated operands), with a warning: slower, never wrong.

The result: each op's ``sharding.sharding`` attribute (its result's sharding),
and the same attribute on every argument of the function.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import PassFailedException

from ..dialects.pyflame import PyflameOp
from ..dialects.sharding import (
    SPLIT_NORMALIZED,
    SPLIT_SCANS,
    FactorRule,
    Mesh,
    Sharding,
    factor_rule,
)
from ..dialects.sharding_ir import SHARDING_KEY, AnnotateOp, ShardingAttr
from .common import PyflamePass

Dims = list[tuple[str, ...] | None]  # per dimension: its axes, or None while unknown


def _shape(v: SSAValue) -> tuple[int, ...]:
    assert isinstance(v.type, TensorType)
    return tuple(v.type.get_shape())


def arg_shardings(f: func.FuncOp) -> list[Sharding | None]:
    """The ``sharding.sharding`` attribute of each argument (None where absent)."""
    out: list[Sharding | None] = [None] * len(f.args)
    if f.arg_attrs is not None:
        for i, d in enumerate(f.arg_attrs.data):
            a = d.data.get(SHARDING_KEY)
            if isinstance(a, ShardingAttr):
                out[i] = a.sharding
    return out


def set_arg_shardings(f: func.FuncOp, shardings: list[Sharding]) -> None:
    old = f.arg_attrs.data if f.arg_attrs is not None else [DictionaryAttr({})] * len(f.args)
    f.arg_attrs = ArrayAttr(DictionaryAttr({**d.data, SHARDING_KEY: ShardingAttr.get(s)})
                            for d, s in zip(old, shardings, strict=True))


def op_rule(op: Operation) -> FactorRule | None:
    """The factor rule of ``op`` at its shapes (annotate: the identity)."""
    if isinstance(op, AnnotateOp):
        f = tuple(f"f{i}" for i in range(len(_shape(op.input))))
        return FactorRule((f,), (f,))
    if isinstance(op, PyflameOp) and op.results:
        attrs = op.py_attrs()
        rule = factor_rule(op.OPDEF, [_shape(v) for v in op.operands],
                           [_shape(r) for r in op.results], attrs)
        name = op.OPDEF.name
        # (log_)softmax: its dimension reduced by every use (the cross entropy,
        # a distillation loss); a scan: its result reduced by every use, along
        # any dimensions
        along = attrs["dim"] if name in SPLIT_NORMALIZED else None
        if rule is not None and name in (*SPLIT_NORMALIZED, *SPLIT_SCANS) \
                and not all(_reduced_along(r, along) for r in op.results):
            rule = FactorRule(rule.operands, rule.results, rule.reduction,
                              rule.blocked | {rule.operands[0][attrs["dim"]]})
        return rule
    return None


_ELEMENTWISE_USES = frozenset({"add", "sub", "mul", "div", "neg", "where", "pow", "exp",
                               "convert", "abs", "eq", "ne"})  # (ne: isnan)


def _reduced_along(v: SSAValue, dim: int | None, depth: int = 3) -> bool:
    """Whether every use of ``v`` ends, through at most ``depth`` shape-keeping
    elementwise ops, in a ``sum``/``mean`` over ``dim`` (None: any dimensions).
    For ``log_softmax`` (``softmax``), the cross entropy and NLL pattern (the target's
    log-probability picked by a one-hot sum, a sum over classes): only then
    does it keep a split normalized dimension (vocabulary-parallel cross
    entropy: no gathered logits). For a scan, a result consumed split: only
    then is it computed split, with a carry exchange. A result needed whole
    (a program output, a matmul operand) costs the same bytes gathered before
    the op as after it, so it is computed whole."""
    for use in v.uses:  # (no use: a dead value, which wants nothing)
        u = use.operation
        if not isinstance(u, PyflameOp):  # func.return: a program output, wanted whole
            return False
        name = u.OPDEF.name
        if name in ("sum", "mean"):
            if dim is not None and dim not in u.py_attrs()["dims"]:
                return False
        elif not (name in _ELEMENTWISE_USES and depth > 0
                  and _shape(u.results[0]) == _shape(v)
                  and _reduced_along(u.results[0], dim, depth - 1)):
            return False
    return True


class _Propagation:
    def __init__(self, f: func.FuncOp):
        self.f = f
        self.dims: dict[SSAValue, Dims] = {}
        self.fixed: set[SSAValue] = set()
        self.mesh: Mesh | None = None
        self.chosen: dict[Operation, dict[str, tuple[str, ...]]] = {}
        for arg, s in zip(f.args, arg_shardings(f), strict=True):
            if s is not None:
                self._seed(arg, s)
        for op in f.body.walk():
            if isinstance(op, AnnotateOp):
                self._seed(op.result, op.sharding.sharding)

    def _seed(self, v: SSAValue, s: Sharding) -> None:
        if self.mesh is None:
            self.mesh = s.mesh
        elif s.mesh != self.mesh:
            raise PassFailedException(f"sharding-propagation: one mesh per function, got "
                                      f"{self.mesh} and {s.mesh}")
        s.check(_shape(v), "sharding-propagation")
        self.dims[v] = list(s.dims)
        self.fixed.add(v)

    def get(self, v: SSAValue) -> Dims:
        if v not in self.dims:
            self.dims[v] = [None] * len(_shape(v))
        return self.dims[v]

    def step(self, op: Operation) -> bool:
        rule = op_rule(op)
        if rule is None:
            return False
        values = list(op.operands) + list(op.results)
        factors = list(rule.operands) + list(rule.results)
        chosen: dict[str, tuple[str, ...]] = {}
        best: dict[str, tuple[int, int]] = {}  # factor -> (priority, -len): lower wins
        order: list[str] = []
        for v, fs in zip(values, factors, strict=True):
            d = self.get(v)
            for i, fac in enumerate(fs):
                if fac is None:
                    continue
                if fac not in order:
                    order.append(fac)
                if d[i] is None:
                    continue
                key = (0 if v in self.fixed else 1, -len(d[i]))
                if fac not in best or key < best[fac]:
                    best[fac], chosen[fac] = key, d[i]
        taken: set[str] = set()
        for fac in order:
            if fac not in chosen:
                continue
            axes = () if fac in rule.blocked else chosen[fac]
            keep: list[str] = []
            for a in axes:
                if a in taken:
                    break
                keep.append(a)
            chosen[fac] = tuple(keep)
            taken.update(keep)
        self.chosen[op] = chosen
        changed = False
        assert self.mesh is not None
        # an annotation inside the program lays out its result only: it proposes
        # its layout to a dimension of its operand nothing else has decided, and
        # where the operand's producer decided otherwise the partitioner reshards
        # at the annotation (Megatron-SP's all-gather and reduce-scatter)
        seed_only = op.input if isinstance(op, AnnotateOp) else None
        for v, fs in zip(values, factors, strict=True):
            if v in self.fixed:
                continue
            d, shape = self.get(v), _shape(v)
            for i, fac in enumerate(fs):
                if fac is None or fac not in chosen or (v is seed_only and d[i] is not None):
                    continue
                axes = chosen[fac]
                if shape[i] % self.mesh.size(axes):
                    axes = ()
                if d[i] != axes:
                    d[i] = axes
                    changed = True
        return changed

    def run(self) -> int:
        if self.mesh is None:
            return 0
        ops = list(self.f.body.walk())
        for _ in range(16):
            changed = False
            for op in ops + ops[::-1]:
                changed |= self.step(op)
            if not changed:
                break
        mesh, annotated = self.mesh, 0
        for op in ops:
            if isinstance(op, AnnotateOp | func.ReturnOp) or not isinstance(op, PyflameOp):
                continue
            rule = op_rule(op)
            if rule is None:
                if op.operands:  # a constant is replicated by nature
                    warnings.warn(f"sharding-propagation: pyflame.{op.OPDEF.name} has no "
                                  "factor rule: its operands and result are replicated",
                                  stacklevel=2)
                dims: Dims = [() for _ in _shape(op.results[0])] if op.results else []
                partial: tuple[str, ...] = ()
                for r in op.results:
                    self.dims[r] = [() for _ in _shape(r)]
            else:
                dims = [d if d is not None else () for d in self.get(op.results[0])]
                partial = self._partial(op, rule)
            if op.results:  # a multi-result op's results share one layout (their rule's)
                op.attributes[SHARDING_KEY] = ShardingAttr.get(
                    Sharding(mesh, tuple(dims), partial))
                annotated += 1
        set_arg_shardings(self.f, [Sharding(mesh, tuple(d if d is not None else ()
                                                        for d in self.get(a)))
                                   for a in self.f.args])
        return annotated

    def _partial(self, op: Operation, rule: FactorRule) -> tuple[str, ...]:
        """The axes of the op's sharded reduction factors."""
        chosen = self.chosen.get(op, {})
        out: list[str] = []
        for fac in rule.reduction:
            out += [a for a in chosen.get(fac, ()) if a not in out]
        return tuple(out)


@dataclass(frozen=True)
class ShardingPropagation(PyflamePass):
    """Propagate user shardings through every function (see the module docstring)."""

    name = "sharding-propagation"

    def run(self, ctx: Context, module: ModuleOp) -> dict[str, int]:
        annotated = 0
        for op in module.walk():
            if isinstance(op, func.FuncOp):
                annotated += _Propagation(op).run()
        return {"annotated": annotated}
