"""Sharding rules (issue 17): meshes and shardings as plain values, the
collectives' shape, cost and transpose (VJP) rules, and each op family's factor
rule for sharding propagation, in tables keyed by ``OpDef``.

Plain Python (no xDSL): the frontend (``pyflame_mlir/sharding.py``) checks
collectives with these shape rules at record time, and the xDSL ops of
``dialects/sharding_ir.py`` verify with the very same functions.

Factor rules follow Shardy: an op's rule names a *factor* per dimension of
each operand and result (``matmul``: ``m k, k n -> m n``). Dimensions with the
same factor must be sharded alike; a factor that appears in operands but in no
result is a *reduction* factor (``k``): sharding it leaves each device a
partial result, which the partitioner resolves with an all-reduce (or a
reduce-scatter when the consumer wants the result sharded). A factor listed in
``blocked`` cannot be sharded at all (the dimension ``softmax`` normalizes).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .opdef import OPS, OpDef, ShapeError, by_op

Shape = tuple[int, ...]

# ---- meshes and shardings as values ----


@dataclass(frozen=True)
class Mesh:
    """Named axes with their sizes, major first (``["data"=2, "model"=2]``)."""

    axes: tuple[tuple[str, int], ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(n for n, _ in self.axes)

    def size(self, names: Sequence[str] = ()) -> int:
        sizes = dict(self.axes)
        out = 1
        for n in names:
            if n not in sizes:
                raise ShapeError("sharding", f"mesh axis {n!r} is not one of {self.names}")
            out *= sizes[n]
        return out

    def __str__(self) -> str:
        return "[" + ", ".join(f'"{n}"={s}' for n, s in self.axes) + "]"


@dataclass(frozen=True)
class Sharding:
    """A value's layout: per dimension the mesh axes splitting it (major first),
    and the axes over which it is a pending partial sum."""

    mesh: Mesh
    dims: tuple[tuple[str, ...], ...]
    partial: tuple[str, ...] = ()

    def check(self, shape: Shape, op: str = "sharding") -> None:
        if len(self.dims) != len(shape):
            raise ShapeError(op, f"sharding {self} has {len(self.dims)} dimensions for a "
                                 f"tensor of rank {len(shape)}")
        used = [a for d in self.dims for a in d] + list(self.partial)
        if len(set(used)) != len(used):
            raise ShapeError(op, f"sharding {self} uses a mesh axis twice")
        for i, (n, axes) in enumerate(zip(shape, self.dims, strict=True)):
            k = self.mesh.size(axes)
            if n % k:
                raise ShapeError(op, f"dimension {i} (size {n}) is split over {list(axes)} "
                                     f"({k} devices): it must be divisible by {k}")

    def local_shape(self, shape: Shape) -> Shape:
        return tuple(n // self.mesh.size(a) for n, a in zip(shape, self.dims, strict=True))

    def __str__(self) -> str:
        dims = ", ".join("{" + ", ".join(f'"{a}"' for a in d) + "}" for d in self.dims)
        text = f"{self.mesh}, [{dims}]"
        if self.partial:
            text += ", partial = {" + ", ".join(f'"{a}"' for a in self.partial) + "}"
        return text


# ---- collectives: shape, cost and transpose rules ----


def collective_shape(name: str, shape: Shape, n: int, attrs: dict[str, Any]) -> Shape:
    """The local result shape of collective ``name`` over a group of ``n`` devices."""
    s = list(shape)

    def dim(key: str) -> int:
        d = attrs[key]
        if not 0 <= d < len(s):
            raise ShapeError(name, f"{key} {d} is out of range for rank {len(s)}")
        return d

    if name in ("all_reduce", "ppermute"):
        return shape
    if name == "all_gather":
        s[dim("dim")] *= n
    elif name == "reduce_scatter":
        d = dim("dim")
        if s[d] % n:
            raise ShapeError(name, f"dimension {d} of {list(shape)} must be divisible by "
                                   f"the group size {n}")
        s[d] //= n
    elif name == "all_to_all":
        sd, cd = dim("split_dim"), dim("concat_dim")
        if s[sd] % n:
            raise ShapeError(name, f"split dimension {sd} of {list(shape)} must be divisible "
                                   f"by the group size {n}")
        s[sd] //= n
        s[cd] *= n
    else:
        raise ShapeError(name, "is not a collective")
    return tuple(s)


def bytes_sent(name: str, n: int, nbytes: int) -> int:
    """Bytes one device sends for an operand of ``nbytes`` in a group of ``n``
    (ring algorithms; ppermute: a device that sends at all sends its operand)."""
    if name == "all_reduce":  # reduce-scatter then all-gather
        return 2 * (n - 1) * nbytes // n
    if name == "all_gather":
        return (n - 1) * nbytes
    if name in ("reduce_scatter", "all_to_all"):
        return (n - 1) * nbytes // n
    if name == "ppermute":
        return nbytes
    raise ValueError(f"{name} is not a collective")


@dataclass(frozen=True)
class CollectiveCost:
    """Bytes one collective moves, by the ring algorithms' counts: each device
    sends ``bytes_per_device``; ``total_bytes`` sums over all devices. ``phase``:
    ``"forward"``, ``"backward"`` (the transpose collective carrying the
    cotangent back) or ``"gradient"`` (the all-reduce of a parameter's gradient
    over the mesh axes it is replicated on, as data parallelism does)."""

    name: str
    axes: tuple[str, ...]
    group_size: int
    bytes_per_device: int
    total_bytes: int
    phase: str = "forward"


def collective_transpose(name: str, attrs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The collective that carries the cotangent back (its VJP; the JVP is the
    collective itself, all of them being linear): psum <-> identity-broadcast
    (a summed value is replicated, so its cotangent is summed again: all_reduce),
    all_gather <-> reduce_scatter, all_to_all with its dimensions swapped,
    ppermute with its pairs inverted."""
    if name == "all_reduce":
        if attrs.get("reduction", "sum") not in ("sum", "mean"):
            raise ShapeError(name, f"the {attrs['reduction']} reduction is not linear: "
                                   "only 'sum' and 'mean' have a transpose rule")
        return "all_reduce", dict(attrs)
    if name == "all_gather":
        return "reduce_scatter", dict(attrs)
    if name == "reduce_scatter":
        return "all_gather", dict(attrs)
    if name == "all_to_all":
        return "all_to_all", {**attrs, "split_dim": attrs["concat_dim"],
                              "concat_dim": attrs["split_dim"]}
    if name == "ppermute":
        return "ppermute", {**attrs, "pairs": tuple((d, s) for s, d in attrs["pairs"])}
    raise ValueError(f"{name} is not a collective")


# ---- factor rules for propagation ----


@dataclass(frozen=True)
class FactorRule:
    """One factor name (or None: a dimension no factor crosses) per dimension of
    each operand and result; ``reduction`` maps a factor that no result has to
    how partial results combine (``"sum"``, ``"max"``, ...); ``blocked`` factors
    must stay replicated."""

    operands: tuple[tuple[str | None, ...], ...]
    results: tuple[tuple[str | None, ...], ...]
    reduction: dict[str, str] = field(default_factory=dict)
    blocked: frozenset[str] = frozenset()


RuleFn = Callable[[Sequence[Shape], Sequence[Shape], dict[str, Any]], FactorRule]


def _letters(n: int, start: int = 0) -> tuple[str, ...]:
    return tuple(f"f{i}" for i in range(start, start + n))


def _broadcasting(ins: Sequence[Shape], outs: Sequence[Shape], attrs: dict[str, Any]
                  ) -> FactorRule:
    """Elementwise with numpy broadcasting: a size-1 operand dimension facing a
    larger result dimension is broadcast (no factor)."""
    out = outs[0]
    f = _letters(len(out))
    operands = []
    for s in ins:
        off = len(out) - len(s)
        operands.append(tuple(None if n == 1 and out[off + i] != 1 else f[off + i]
                              for i, n in enumerate(s)))
    return FactorRule(tuple(operands), tuple(f for _ in outs))


def _matmul(ins: Sequence[Shape], outs: Sequence[Shape], attrs: dict[str, Any]
            ) -> FactorRule:
    """``... m k, ... k n -> ... m n`` (batch dimensions broadcast; a vector
    operand has no ``m`` or ``n``)."""
    a, b = ins
    out = outs[0]
    nb = max(len(a), len(b)) - 2 if min(len(a), len(b)) >= 2 else 0
    batch = _letters(nb, 3)

    def side(s: Shape, inner: tuple[str, ...]) -> tuple[str | None, ...]:
        bs = s[:len(s) - len(inner)]
        off = nb - len(bs)
        return tuple(None if n == 1 and out[off + i] != 1 else batch[off + i]
                     for i, n in enumerate(bs)) + inner

    lhs = ("k",) if len(a) == 1 else ("m", "k")
    rhs = ("k",) if len(b) == 1 else ("k", "n")
    res = batch + tuple(x for x in (lhs[0] if len(a) > 1 else None,
                                    rhs[1] if len(b) > 1 else None) if x)
    return FactorRule((side(a, lhs), side(b, rhs)), (res,), {"k": "sum"})


def _reduction(kind: str) -> RuleFn:
    def rule(ins: Sequence[Shape], outs: Sequence[Shape], attrs: dict[str, Any]
             ) -> FactorRule:
        (s,) = ins
        f = _letters(len(s))
        dims = set(attrs["dims"])
        kept = [x for i, x in enumerate(f) if i not in dims]
        if attrs["keepdim"]:
            res = tuple(None if i in dims else x for i, x in enumerate(f))
        else:
            res = tuple(kept)
        return FactorRule((f,), (res,), {f[d]: kind for d in dims})
    return rule


def _permute(ins: Sequence[Shape], outs: Sequence[Shape], attrs: dict[str, Any]
             ) -> FactorRule:
    f = _letters(len(ins[0]))
    return FactorRule((f,), (tuple(f[p] for p in attrs["perm"]),))


def _reshape(ins: Sequence[Shape], outs: Sequence[Shape], attrs: dict[str, Any]
             ) -> FactorRule:
    """Dimensions grouped where the running products of sizes agree; in each
    group the leading operand and result dimensions share the major factor
    (splitting ``[12] -> [4, 3]`` keeps a split of the 12 on the 4), the rest
    are their own factors, so they cannot carry a sharding across."""
    full_src, full_dst = ins[0], outs[0]
    # size-1 dimensions carry no factor (none can be split): group the others
    si = [k for k, n in enumerate(full_src) if n != 1]
    di = [k for k, n in enumerate(full_dst) if n != 1]
    src, dst = [full_src[k] for k in si], [full_dst[k] for k in di]
    fin: list[str | None] = [None] * len(src)
    fout: list[str | None] = [None] * len(dst)
    i = j = g = 0
    while i < len(src) and j < len(dst):
        i0, j0, pi, pj = i, j, src[i], dst[j]
        i, j = i + 1, j + 1
        while pi != pj:
            if pi < pj:
                pi *= src[i]
                i += 1
            else:
                pj *= dst[j]
                j += 1
        fin[i0] = fout[j0] = f"g{g}"
        for k in range(i0 + 1, i):
            fin[k] = f"g{g}_in{k}"
        for k in range(j0 + 1, j):
            fout[k] = f"g{g}_out{k}"
        g += 1
    ops_in: list[str | None] = [None] * len(full_src)
    ops_out: list[str | None] = [None] * len(full_dst)
    for k, f in zip(si, fin, strict=True):
        ops_in[k] = f
    for k, f in zip(di, fout, strict=True):
        ops_out[k] = f
    return FactorRule((tuple(ops_in),), (tuple(ops_out),))


def _broadcast_to(ins: Sequence[Shape], outs: Sequence[Shape], attrs: dict[str, Any]
                  ) -> FactorRule:
    return _broadcasting(ins, outs, attrs)


def _along(ins: Sequence[Shape], outs: Sequence[Shape], attrs: dict[str, Any]) -> FactorRule:
    """Shape-preserving along one dimension that must stay whole (softmax: the
    attention weights over keys, whole where the values are)."""
    f = _letters(len(ins[0]))
    return FactorRule((f,), (f,), blocked=frozenset({f[attrs["dim"]]}))


def _normalized(ins: Sequence[Shape], outs: Sequence[Shape], attrs: dict[str, Any]
                ) -> FactorRule:
    """``softmax``/``log_softmax`` along ``dim``: shape-preserving, every
    dimension may stay split. A split normalized dimension (logits split by
    vocabulary: the head's weight split by columns) is computed where it lies:
    ``spmd-partition`` writes the shard's max and its all-reduce (max), the
    shard's sum of exponentials and its all-reduce (sum) (Megatron's
    vocabulary-parallel cross entropy; the target logit's pick is a sum over
    the split dimension, a partial sum all-reduced by the reduction rule).
    Propagation keeps it split only where every use reduces it along ``dim``
    (``passes/sharding_propagation.py: op_rule``): a result needed whole (the
    attention weights before their matmul) is computed whole."""
    f = _letters(len(ins[0]))
    return FactorRule((f,), (f,))


def _concat(ins: Sequence[Shape], outs: Sequence[Shape], attrs: dict[str, Any]) -> FactorRule:
    """Every operand and the result share their factors; the joined dimension
    stays whole (a split of it would interleave the operands' blocks)."""
    f = _letters(len(outs[0]))
    return FactorRule(tuple(f for _ in ins), (f,), blocked=frozenset({f[attrs["dim"]]}))


def _blocked_reduction(ins: Sequence[Shape], outs: Sequence[Shape], attrs: dict[str, Any]
                       ) -> FactorRule:
    """A reduction whose partial results do not combine by a collective (``prod``,
    ``logsumexp``): the reduced dimensions stay whole, the others keep their split."""
    r = _reduction("sum")(ins, outs, attrs)
    return FactorRule(r.operands, r.results, blocked=frozenset(r.reduction))


def _logsumexp(ins: Sequence[Shape], outs: Sequence[Shape], attrs: dict[str, Any]
               ) -> FactorRule:
    """``logsumexp`` over ``dims``: the kept dimensions keep their split; a reduced
    dimension split where the operand lies (its factor is the operand's only)
    is reduced in place: ``spmd-partition`` writes the shard's max and its
    all-reduce (max), the shard's sum of ``exp(x - max)`` and its all-reduce
    (sum), then ``max + log(sum)``: scalars per row exchanged, no gather."""
    r = _reduction("sum")(ins, outs, attrs)
    return FactorRule(r.operands, r.results)


def _arg_reduction(ins: Sequence[Shape], outs: Sequence[Shape], attrs: dict[str, Any]
                   ) -> FactorRule:
    """argmax/argmin over ``dim`` (None: the flattened tensor): the reduced
    dimension stays whole (a device's local index is not the global one)."""
    (s,) = ins
    dim = attrs["dim"]
    dims = tuple(range(len(s))) if dim is None else (dim,)
    return _blocked_reduction(ins, outs, {"dims": dims, "keepdim": len(outs[0]) == len(s)})


def _along_all(ins: Sequence[Shape], outs: Sequence[Shape], attrs: dict[str, Any]
               ) -> FactorRule:
    """Shape-preserving with every result along one dimension that stays whole:
    sort, split."""
    f = _letters(len(ins[0]))
    return FactorRule((f,), tuple(f for _ in outs), blocked=frozenset({f[attrs["dim"]]}))


def _scan(ins: Sequence[Shape], outs: Sequence[Shape], attrs: dict[str, Any]) -> FactorRule:
    """``cumsum``/``cumprod``/``logcumsumexp``, ``cummax``/``cummin`` (values and
    indices): shape-preserving, the scanned dimension may stay split:
    ``spmd-partition`` scans each block, all-gathers the blocks' totals (for
    cummax/cummin the running extreme and its global index) and combines each
    block with the totals of the blocks before it (a carry exchange).
    Propagation keeps it whole where a result is needed whole
    (``passes/sharding_propagation.py: op_rule``)."""
    f = _letters(len(ins[0]))
    return FactorRule((f,), tuple(f for _ in outs))


SPLIT_SCANS = ("cumsum", "cumprod", "logcumsumexp", "cummax", "cummin")
# normalized along a dimension that may stay split (a max and a sum all-reduced)
SPLIT_NORMALIZED = ("softmax", "log_softmax")


def _untouched(ins: Sequence[Shape], outs: Sequence[Shape], keep: Sequence[bool]
               ) -> FactorRule:
    f = tuple(x if k else None for x, k in zip(_letters(len(ins[0])), keep, strict=True))
    return FactorRule((f,), (f,))


def _slice(ins: Sequence[Shape], outs: Sequence[Shape], attrs: dict[str, Any]) -> FactorRule:
    """A dimension the slice takes whole (``0:n:1``), or every ``k``-th element of
    from its first ``k`` (``x[..., 1::2]``: RoPE's odd features; ``n`` divisible
    by ``k``), keeps its split: the selection is periodic, so each block of the
    result is the same slice of the operand's block (propagation splits both
    only where the device count divides both sizes, so ``k`` divides the
    block; the partitioner slices the block up to its local size). A slice of a
    sub-range has no factor: the partitioner gathers it first (a sub-range
    aligned with the blocks lives on some devices only: correct, not optimal)."""
    keep = [n % k == 0 and 0 <= a < k and b >= n - k + a + 1 for n, a, b, k in
            zip(ins[0], attrs["start"], attrs["limit"], attrs["stride"], strict=True)]
    return _untouched(ins, outs, keep)


def _pad(ins: Sequence[Shape], outs: Sequence[Shape], attrs: dict[str, Any]) -> FactorRule:
    """An unpadded dimension keeps its split; a padded one is gathered first."""
    keep = [lo == hi == k == 0 for lo, hi, k in
            zip(attrs["low"], attrs["high"], attrs["interior"], strict=True)]
    return _untouched(ins, outs, keep)


def _select_along(ins: Sequence[Shape], outs: Sequence[Shape], attrs: dict[str, Any]
                  ) -> FactorRule:
    """``select_along(x, idx; dim)`` (sort's and topk's plumbing): a dimension
    ``d != dim`` is one factor of ``x``, ``idx`` and the result (each device
    selects from its own block); along ``dim`` the index and the result share
    a factor (a device selects its share of the positions) and ``x``'s
    dimension has none: it is gathered if it arrives split."""
    x, idx = ins
    dim = attrs["dim"]
    f = _letters(len(idx))
    fi = tuple(f[d] if d == dim or x[d] == idx[d] else None for d in range(len(idx)))
    fx = tuple(None if d == dim else fi[d] for d in range(len(x)))
    return FactorRule((fx, fi), (fi,))


TABLE_FACTOR = "table"  # gather's factor of the looked-up dimension of x


def _gather(ins: Sequence[Shape], outs: Sequence[Shape], attrs: dict[str, Any]
            ) -> FactorRule:
    """``gather(x, index; dim)`` (``torch.gather``; ``embedding``, ``index_select``,
    ``take_along_dim`` and advanced indexing record it): as ``select_along``
    (a dimension the index covers whole shares ``x``'s split; a partly covered
    one has no factor), and the table dimension of ``x`` is a *reduction*
    factor: split (an embedding table split by vocabulary), each device looks
    up the positions in its block and zeros the others (Megatron's masked
    lookup, written by ``spmd-partition``), and the result is a partial sum
    over those axes, resolved by an all-reduce."""
    rule = _select_along(ins, outs, attrs)
    fx = list(rule.operands[0])
    fx[attrs["dim"]] = TABLE_FACTOR
    return FactorRule((tuple(fx), rule.operands[1]), rule.results, {TABLE_FACTOR: "sum"})


def _scatter_add(ins: Sequence[Shape], outs: Sequence[Shape], attrs: dict[str, Any]
                 ) -> FactorRule:
    """``scatter_add(x, index, src; dim)``: a dimension ``d != dim`` that the index
    covers whole is one factor of all four; ``dim`` and the partly covered
    dimensions have none (a device adding its share of ``src`` into a whole
    ``x`` would add ``x`` once per device)."""
    x, idx, _ = ins
    dim = attrs["dim"]
    f = tuple(None if d == dim or x[d] != idx[d] else f"f{d}" for d in range(len(x)))
    return FactorRule((f, f, f), (f,))


def _scatter_add_along(ins: Sequence[Shape], outs: Sequence[Shape], attrs: dict[str, Any]
                       ) -> FactorRule:
    """``scatter_add_along(src, idx; dim, size)``: the other dimensions keep their
    split, ``dim`` stays whole."""
    f = _letters(len(ins[0]))
    return FactorRule((f, f), (f,), blocked=frozenset({f[attrs["dim"]]}))


_BY_NAME: dict[str, RuleFn] = {
    "slice": _slice, "pad": _pad, "split": _along_all,
    "gather": _gather, "select_along": _select_along, "scatter_add": _scatter_add,
    "scatter_add_along": _scatter_add_along,
    "prod": _blocked_reduction, "argmax": _arg_reduction, "argmin": _arg_reduction,
    "cumsum": _scan, "cumprod": _scan, "logcumsumexp": _scan,
    "cummax": _scan, "cummin": _scan, "sort": _along_all,
    "matmul": _matmul,
    "sum": _reduction("sum"), "mean": _reduction("mean"),
    "max": _reduction("max"), "min": _reduction("min"),
    "permute": _permute, "reshape": _reshape, "broadcast_to": _broadcast_to, "concat": _concat,
    "softmax": _normalized, "log_softmax": _normalized, "logsumexp": _logsumexp,
    "fused_matmul_relu": _matmul, "fused_matmul_gelu": _matmul,
}
_BY_NAME.update({name: _broadcasting for name, op in OPS.items()
                 if op.family == "elementwise" or name in ("fused_add_relu",
                                                           "fused_mul_sigmoid", "fused_fma")})
_NONLINEAR_AFTER = {"fused_matmul_relu", "fused_matmul_gelu"}

# OpDef -> its factor rule. An op not here is replicated by propagation (with
# a warning): correct, only not parallel.
FACTOR_RULES: dict[OpDef, RuleFn] = by_op(_BY_NAME)


def factor_rule(op: OpDef, ins: Sequence[Shape], outs: Sequence[Shape],
                attrs: dict[str, Any]) -> FactorRule | None:
    fn = FACTOR_RULES.get(op)
    if fn is None:
        return None
    rule = fn(ins, outs, attrs)
    if op.name in _NONLINEAR_AFTER:  # relu(sum of partials) != sum of relus
        rule = FactorRule(rule.operands, rule.results, blocked=frozenset(rule.reduction))
    # a factor of results only (a minor dimension a reshape makes) has no
    # operand block to compute a split from: it stays whole
    made = {f for fs in rule.results for f in fs if f} - {f for fs in rule.operands for f in fs}
    if made - rule.blocked:
        rule = FactorRule(rule.operands, rule.results, rule.reduction, rule.blocked | made)
    return rule
