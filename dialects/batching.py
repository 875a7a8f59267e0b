"""Batching rules, keyed by the op's ``OpDef`` (JAX's ``batching.py`` in
miniature): how to run an op on a whole batch of examples at once.

The ``vmap`` transform (``passes/vmap.py``) walks a function body once and
asks ``BatchingBuilder`` for each op. A value is either *unbatched* (the same
for every example: a weight, a constant) or *batched* with the batch
dimension first (``n`` examples). Every rule only sees the second case in
that one layout (the pass moves each input's mapped axis to the front and
the batch axis of each output to its ``out_axes``), so a rule is a dimension
shift, an alignment of ranks or a materialized broadcast:

    rule(b, values, batched, n, **attrs) -> one batched value per result

``b`` is the builder interface of ``dialects/ad.py`` (``b.op``, ``b.shape``,
``b.<opname>``...) on plain values; ``values[i]`` has the batch dimension in
front when ``batched[i]``. An op whose inputs are all unbatched is emitted
unchanged and needs no rule. An op without a rule but with a
``decomposition`` (softmax, the fused chains) is batched through it; any
other op fails, naming it (``BatchingError``).

Ops by family: elementwise (with numpy broadcasting and scalar operands;
also the fused elementwise chains), reductions and argmax/argmin, scans,
sort, softmax/log_softmax/logsumexp (dimension shift), matmul (rank
alignment; vectors as matrices), shape ops (reshape, permute,
broadcast_to, slice, concat, split, pad), gather/scatter_add and
select_along/scatter_add_along (both operands batched, dimension shift),
max_pool/max_pool_grad (one more leading dim).
There are no random primitives (random tensors are host data: one draw per
trace, shared by every example, PyTorch's ``randomness="same"``).

Plain Python: importing this module must not import xDSL.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from . import ad
from .decomp import DECOMPOSITIONS
from .linalg import matmul_shape
from .opdef import OPS, OpDef, Shape, get_op

Value = Any
Builder = Any
BatchRule = Callable[..., "list[Value]"]

# rule(b, values, batched, n, **attrs) -> one batched value per result
BATCHING: dict[OpDef, BatchRule] = {}


class BatchingError(ValueError):
    """An op that vmap cannot batch (no rule), or a rule's precondition broken."""


def defbatch(name: str, rule: BatchRule) -> None:
    opdef = get_op(name)
    assert opdef not in BATCHING, name
    BATCHING[opdef] = rule


# ---- helpers ----

def materialize(b: Builder, v: Value, n: int) -> Value:
    """An unbatched value as a batched one (the same for every example)."""
    shape = tuple(b.shape(v))
    return b.op("broadcast_to", ad.reshape(b, v, (1, *shape)), shape=(n, *shape))


def _all_batched(b: Builder, values: Sequence[Value], batched: Sequence[bool], n: int
                 ) -> list[Value]:
    return [v if bt else materialize(b, v, n) for v, bt in zip(values, batched)]


def _lift_rank(b: Builder, v: Value, rank: int) -> Value:
    """A batched value whose example has rank < ``rank``: size-1 dims after the
    batch dim, so that numpy broadcasting lines examples up as before."""
    n, *shape = b.shape(v)
    if len(shape) >= rank:
        return v
    return ad.reshape(b, v, (n, *([1] * (rank - len(shape))), *shape))


def _example_shape(b: Builder, v: Value, batched: bool) -> Shape:
    s = tuple(b.shape(v))
    return s[1:] if batched else s


# ---- generic rules by family ----

def _elementwise(name: str) -> BatchRule:
    """Broadcasting ops: batched operands get the batch dim in front of the
    broadcast rank; unbatched ones broadcast as they did."""
    def rule(b: Builder, values, batched, n, **attrs):
        rank = max(len(_example_shape(b, v, bt)) for v, bt in zip(values, batched))
        args = [_lift_rank(b, v, rank) if bt else v for v, bt in zip(values, batched)]
        out = b.op(name, *args, **attrs)
        return out if isinstance(out, list) else [out]
    return rule


def _shift_dims(name: str, keys: Sequence[str], materialize_all: bool = False) -> BatchRule:
    """Ops along dimension attributes (``dim``/``dims``): every dim moves by one."""
    def rule(b: Builder, values, batched, n, **attrs):
        new = dict(attrs)
        for k in keys:
            v = attrs[k]
            if isinstance(v, tuple):
                new[k] = tuple(d + 1 for d in v)
            elif v is not None:
                new[k] = v + 1
        args = _all_batched(b, values, batched, n) if materialize_all else list(values)
        out = b.op(name, *args, **new)
        return out if isinstance(out, list) else [out]
    return rule


def _arg_reduce(name: str) -> BatchRule:
    """argmax/argmin: a whole-tensor reduction (dim None) flattens each example."""
    def rule(b: Builder, values, batched, n, dim, keepdim):
        (x,) = values
        shape = tuple(b.shape(x))[1:]
        if dim is not None and shape:
            return [b.op(name, x, dim=dim + 1, keepdim=keepdim)]
        flat = ad.reshape(b, x, (n, max(1, _numel(shape))))
        out = b.op(name, flat, dim=1, keepdim=False)
        return [ad.reshape(b, out, (n, *((1,) * len(shape) if keepdim else ())))]
    return rule


def _numel(shape: Shape) -> int:
    k = 1
    for d in shape:
        k *= d
    return k


# ---- shape ops ----

def _reshape(b, values, batched, n, shape):
    return [b.reshape(values[0], shape=(n, *shape))]


def _permute(b, values, batched, n, perm):
    return [b.permute(values[0], perm=(0, *(p + 1 for p in perm)))]


def _broadcast_to(b, values, batched, n, shape):
    x = _lift_rank(b, values[0], len(shape))
    return [ad.broadcast(b, x, (n, *shape))]


def _slice(b, values, batched, n, start, limit, stride):
    return [b.slice(values[0], start=(0, *start), limit=(n, *limit), stride=(1, *stride))]


def _pad(b, values, batched, n, low, high, interior):
    return [b.pad(values[0], low=(0, *low), high=(0, *high), interior=(0, *interior))]


def _gather_like(name: str) -> BatchRule:
    """gather/scatter_add/select_along/scatter_add_along: index and data of
    one rank, so both get the batch dim (the batch dim is never indexed)."""
    def rule(b: Builder, values, batched, n, **attrs):
        if any(len(_example_shape(b, v, bt)) == 0 for v, bt in zip(values, batched)):
            raise BatchingError(f"pyflame.{name}: no batching rule for rank-0 operands")
        args = _all_batched(b, values, batched, n)
        out = b.op(name, *args, **{**attrs, "dim": attrs["dim"] + 1})
        return [out]
    return rule


# ---- linalg ----

def _matmul(b, values, batched, n):
    (x, y), (bx, by) = values, batched
    sx, sy = _example_shape(b, x, bx), _example_shape(b, y, by)
    out_shape = matmul_shape(sx, sy)
    if bx and not by and len(sy) == 2:
        # (n, ..., k) @ (k, p): the batch dim is one more row dim of x
        return [b.matmul(x, y)]
    if by and not bx and len(sx) >= 2 and len(sy) >= 2 and len(sx) <= len(sy):
        # x broadcasts against y's batch dims, the batch dim among them
        return [b.matmul(x, y)]
    x, y = _all_batched(b, [x, y], [bx, by], n)
    if len(sx) == 1:
        x, sx = ad.reshape(b, x, (n, 1, sx[0])), (1, sx[0])
    if len(sy) == 1:
        y, sy = ad.reshape(b, y, (n, sy[0], 1)), (sy[0], 1)
    rank = max(len(sx), len(sy))
    z = b.matmul(_lift_rank(b, x, rank), _lift_rank(b, y, rank))
    return [ad.reshape(b, z, (n, *out_shape))]


# ---- the table ----

for _opdef in list(OPS.values()):
    if _opdef.elementwise:  # unary, binary, where, convert, gelu, fused elementwise chains
        defbatch(_opdef.name, _elementwise(_opdef.name))

for _name in ("sum", "mean", "prod", "max", "min", "logsumexp"):
    defbatch(_name, _shift_dims(_name, ("dims",)))
for _name in ("argmax", "argmin"):
    defbatch(_name, _arg_reduce(_name))
for _name in ("cumsum", "cumprod", "logcumsumexp", "cummax", "cummin", "sort", "softmax",
              "log_softmax", "split"):
    defbatch(_name, _shift_dims(_name, ("dim",)))
defbatch("concat", _shift_dims("concat", ("dim",), materialize_all=True))
for _name in ("gather", "scatter_add", "select_along", "scatter_add_along"):
    defbatch(_name, _gather_like(_name))
defbatch("reshape", _reshape)
defbatch("permute", _permute)
defbatch("broadcast_to", _broadcast_to)
defbatch("slice", _slice)
defbatch("pad", _pad)
defbatch("matmul", _matmul)


# ---- matrix decompositions and solvers (dialects/decomp.py): the batch dim is
# one more leading batch dim; a solve's two operands get it both ----

def _decomposition(name: str) -> BatchRule:
    def rule(b: Builder, values, batched, n, **attrs):
        out = b.op(name, *_all_batched(b, values, batched, n), **attrs)
        return out if isinstance(out, list) else [out]
    return rule


for _name in DECOMPOSITIONS:
    defbatch(_name, _decomposition(_name))

# max pooling (dialects/pooling.py) windows the last len(kernel) dims and maps
# any leading dims: the batch dim is one more (max_pool_grad's offsets get it too)
for _name in ("max_pool", "max_pool_grad"):
    defbatch(_name, _decomposition(_name))


# ---- the interpreter over (value, batched) pairs ----

class BValue:
    """A value in the batched program: ``value`` has the batch dim in front
    when ``batched``."""

    __slots__ = ("value", "batched")

    def __init__(self, value: Value, batched: bool):
        self.value, self.batched = value, batched


class BatchingBuilder:
    """The builder interface of ``dialects/ad.py`` over ``BValue``s: each op
    is emitted through ``b`` as its batched form (its rule, else its
    decomposition), so decompositions written for one example batch too."""

    def __init__(self, b: Builder, n: int):
        self.b, self.n = b, n

    def shape(self, v: BValue) -> Shape:
        return _example_shape(self.b, v.value, v.batched)

    def dtype(self, v: BValue) -> Any:
        return self.b.dtype(v.value)

    def scalar(self, value: float, like: BValue) -> BValue:
        return BValue(self.b.scalar(value, like=like.value), False)

    def materialize(self, v: BValue) -> Value:
        return v.value if v.batched else materialize(self.b, v.value, self.n)

    def op(self, name: str, *inputs: BValue, **attrs: Any) -> BValue | list[BValue]:
        opdef = OPS[name]
        many = opdef.num_results != 1
        if not any(v.batched for v in inputs):
            out = self.b.op(name, *[v.value for v in inputs], **attrs)
            return [BValue(o, False) for o in out] if many else BValue(out, False)
        rule = BATCHING.get(opdef)
        if rule is None:
            if opdef.decomposition is None:
                raise BatchingError(f"vmap: pyflame.{name} has no batching rule (operands "
                                    + ", ".join(str(list(self.shape(v))) for v in inputs)
                                    + ")")
            outs = opdef.decomposition(self, list(inputs), **attrs)
            return outs if many else outs[0]
        outs = rule(self.b, [v.value for v in inputs], [v.batched for v in inputs], self.n,
                    **attrs)
        res = [BValue(o, True) for o in outs]
        return res if many else res[0]

    def __getattr__(self, name: str) -> Any:
        if name in OPS:
            return lambda *inputs, **attrs: self.op(name, *inputs, **attrs)
        raise AttributeError(name)
