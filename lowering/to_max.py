"""``pyflame`` module -> a Modular MAX graph (``max.graph.Graph``, MO dialect).

Each ``func.func`` becomes one ``mo.graph``: the function's arguments are the
graph inputs (``TensorType`` with the element type and ``DeviceRef`` of the
target device), every ``pyflame`` op is rewritten by its rule in
``MAX_LOWERINGS`` (keyed by the op's ``OpDef``, so a misspelt name fails at
import), and the returned values are the graph outputs (several for
``pf.eval(a, b)``).

The rules reproduce the reference kernels' semantics (``dialects/*.py``), not
MAX's defaults where the two differ: bool ``add``/``mul`` are logical, integer
``sum`` widens to int64, half precision reductions/softmax accumulate in
float32, ``sign`` is 0 at NaN and at -0.0 (PyTorch's), ``logsumexp`` shifts by the max
only where it is finite, reductions over several dims are applied one dim at
a time and then reshaped to the declared result.

The module must first go through the ``legalize-for-max`` pass
(``passes/legalize_for_max.py``), which checks every op against the table
(``check_supported``) before anything is built, so a module with an op MAX
cannot run fails naming that op, never in the MAX compiler.
After each rule, the MAX result types are checked against the ``pyflame``
result types (shape and dtype), so a lowering that drifts from the op's shape
rule fails here with the op's name.

There are no fused ops here: MAX's graph compiler fuses elementwise chains
and matmul epilogues itself, so ``legalize-for-max`` runs ``unfuse`` first
(named fused ops become their chains, by their decompositions, and
``pyflame.fused`` regions are inlined).

Symbolic batch (``plan=analyze_batch(fn)``): dim 0 of the first argument and
every dim the ops tie to it become the symbolic dim ``batch``, so one compiled
model serves every batch size; ``abstract_text`` is the module with the batch
sizes abstracted, the key under which such models are shared.

``print_max(module, stream)`` (``pyflame-opt -t max``) prints the MO text of
the built graphs without compiling them (``PYFLAME_MAX_DEVICE`` and
``PYFLAME_MAX_SYMBOLIC_BATCH`` apply). ``max`` is imported lazily: this module
imports without it, and only building a graph needs it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import IO, TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue

from ..dialects import OPS
from ..dialects.decomp import DECOMPOSITIONS
from ..dialects.dtypes import FLOAT, DType, bool_, float32, int32, int64
from ..dialects.opdef import OpDef, by_op, get_op, numel
from ..dialects.pyflame import PyflameOp, narrow_int_use, spec_of_type
from ..dialects.scan import SCANS

if TYPE_CHECKING:
    from max.graph import DeviceRef, Graph, TensorValue

Shape = tuple[int, ...]
Spec = tuple[Shape, DType]

# Bump when a rule changes what it emits: part of the compiled-model cache key.
LOWERING_VERSION = "1"
DEVICE_ENV = "PYFLAME_MAX_DEVICE"
SYMBOLIC_ENV = "PYFLAME_MAX_SYMBOLIC_BATCH"
BATCH_DIM = "batch"


class MaxLoweringError(ValueError):
    """A module the MAX lowering cannot handle; ``op`` names the culprit."""

    def __init__(self, op: str, message: str):
        super().__init__(f"MAX lowering of pyflame.{op}: {message}" if op else message)
        self.op = op


# ---- devices ----

def device_spec(spec: str | None = None) -> str:
    """Normalize a device spelling to ``cpu`` or ``gpu:N``.

    ``None`` reads ``PYFLAME_MAX_DEVICE`` (default ``auto``); ``auto`` is
    ``gpu:0`` when MAX sees an accelerator, else ``cpu``; ``gpu`` is ``gpu:0``.
    """
    s = (spec if spec is not None else os.environ.get(DEVICE_ENV, "auto")).strip().lower()
    if s == "auto":
        from max.driver import accelerator_count

        return "gpu:0" if accelerator_count() > 0 else "cpu"
    if s in ("cpu", "cpu:0"):
        return "cpu"
    if s == "gpu":
        return "gpu:0"
    if s.startswith("gpu:") and s[4:].isdigit():
        return f"gpu:{int(s[4:])}"
    raise ValueError(f"unknown MAX device {s!r}; expected 'auto', 'cpu', 'gpu' or 'gpu:N' "
                     f"(set with {DEVICE_ENV} or pf max_backend.set_device)")


def device_ref(spec: str) -> DeviceRef:
    from max.graph import DeviceRef

    spec = device_spec(spec)
    return DeviceRef.CPU() if spec == "cpu" else DeviceRef.GPU(int(spec[4:]))


# ---- the lowering context handed to every rule ----

@dataclass
class OpCall:
    """One op being lowered: its table entry, Python attributes and operand/result specs."""

    opdef: OpDef
    attrs: dict[str, Any]
    ins: list[Spec]
    outs: list[Spec]
    # symbolic-batch mode: the batch positions of each operand / result
    in_sym: list[frozenset[int]] = field(default_factory=list)
    out_sym: list[frozenset[int]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.opdef.name

    def isym(self, k: int) -> frozenset[int]:
        return self.in_sym[k] if self.in_sym else frozenset()

    def osym(self, k: int = 0) -> frozenset[int]:
        return self.out_sym[k] if self.out_sym else frozenset()


@dataclass
class Ctx:
    ops: ModuleType  # max.graph.ops
    device: DeviceRef
    plan: BatchPlan | None = None  # symbolic-batch mode
    batch: Any = None  # the symbolic Dim

    def dt(self, d: DType) -> Any:
        return max_dtype(d)

    def scalar(self, v: float | int | bool, d: DType) -> TensorValue:
        """A rank-0 constant of pyflame dtype ``d`` on the graph's device."""
        if d.is_bool:
            v = bool(v)
        elif d.category != FLOAT:
            v = int(v)
        else:
            v = float(v)
        return self.ops.constant(v, self.dt(d), device=self.device)

    def cast(self, x: TensorValue, d: DType) -> TensorValue:
        if x.dtype == self.dt(d):
            return x
        if d is bool_:  # numpy's astype(bool): nonzero (NaN included) is True
            return self.ops.not_equal(x, self.ops.constant(0, x.dtype, device=self.device))
        return self.ops.cast(x, self.dt(d))

    def shape(self, shape: Iterable[Any], sym: frozenset[int] = frozenset()) -> list[Any]:
        """A MAX shape: the batch positions ``sym`` symbolic, the rest as given."""
        return [self.batch if i in sym else d for i, d in enumerate(shape)]

    def reshape(self, x: TensorValue, shape: Sequence[Any],
                sym: frozenset[int] = frozenset()) -> TensorValue:
        target = self.shape(shape, sym)
        if [str(d) for d in x.shape] == [str(d) for d in target]:
            return x
        return self.ops.reshape(x, target)


Rule = Callable[[Ctx, list[Any], OpCall], list[Any]]
MAX_LOWERINGS: dict[OpDef, Rule] = {}


def lowers(*names: str) -> Callable[[Rule], Rule]:
    """Register a rule for the named ops (an unknown name fails at import)."""
    opdefs = [get_op(n) for n in names]

    def register(fn: Rule) -> Rule:
        for opdef in opdefs:
            assert opdef not in MAX_LOWERINGS, f"two MAX lowerings for {opdef.name}"
            MAX_LOWERINGS[opdef] = fn
        return fn
    return register


_MAX_DTYPE_NAMES = {"bool": "bool", "int32": "int32", "int64": "int64", "float16": "float16",
                    "bfloat16": "bfloat16", "float32": "float32", "float64": "float64"}


def max_dtype(d: DType) -> Any:
    from max.dtype import DType as MaxDType

    return getattr(MaxDType, _MAX_DTYPE_NAMES[d.name])


def _static_shape(x: Any) -> tuple[Any, ...]:
    out = []
    for d in x.shape:
        try:
            out.append(int(d))
        except TypeError:
            out.append(str(d))
    return tuple(out)


def _is_static(d: Any) -> bool:
    try:
        int(d)
    except TypeError:
        return False
    return True


def _is_half(d: DType) -> bool:
    return d.category == FLOAT and d.itemsize < 4


# ---- elementwise ----

_UNARY_DIRECT = by_op({"neg": "negate", "abs": "abs", "exp": "exp", "log": "log",
                       "log1p": "log1p", "sqrt": "sqrt", "rsqrt": "rsqrt", "sin": "sin",
                       "cos": "cos", "tanh": "tanh", "sigmoid": "sigmoid", "erf": "erf"})


def _unary_direct(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    return [getattr(cx.ops, _UNARY_DIRECT[op.opdef])(xs[0])]


lowers(*(d.name for d in _UNARY_DIRECT))(_unary_direct)


@lowers("square")
def _square(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    return [cx.ops.mul(xs[0], xs[0])]


@lowers("relu")
def _relu(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    (x,), ((_, d),) = xs, op.ins
    if d.category == FLOAT:
        return [cx.ops.relu(x)]
    return [cx.ops.max(x, cx.scalar(0, d))]


@lowers("sign")
def _sign(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    # where(x > 0, 1, where(x < 0, -1, 0)): PyTorch's, 0 at NaN and +0.0 at -0.0
    (x,), ((_, d),) = xs, op.ins
    zero = cx.scalar(0, d)
    inner = cx.ops.where(cx.ops.greater(zero, x), cx.scalar(-1, d), zero)
    return [cx.ops.where(cx.ops.greater(x, zero), cx.scalar(1, d), inner)]


@lowers("reciprocal")
def _reciprocal(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    return [cx.ops.div(cx.scalar(1, op.ins[0][1]), xs[0])]


@lowers("gelu")
def _gelu(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    return [cx.ops.gelu(xs[0], approximate=op.attrs["approximate"])]


@lowers("logical_not")
def _logical_not(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    (x,), ((_, d),) = xs, op.ins
    if d is bool_:
        return [cx.ops.logical_not(x)]
    return [cx.ops.equal(x, cx.scalar(0, d))]


# name -> (MAX op, swap operands); bool operands use the logical op of numpy's ufunc.
_BINARY = by_op({"add": ("add", False), "mul": ("mul", False), "sub": ("sub", False),
                 "div": ("div", False), "pow": ("pow", False), "maximum": ("max", False),
                 "minimum": ("min", False), "eq": ("equal", False),
                 "ne": ("not_equal", False), "gt": ("greater", False),
                 "ge": ("greater_equal", False), "lt": ("greater", True),
                 "le": ("greater_equal", True)})
_BOOL_BINARY = by_op({"add": "logical_or", "maximum": "logical_or", "mul": "logical_and",
                      "minimum": "logical_and", "ne": "logical_xor"})
_EQ = get_op("eq")


def _binary(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    a, b = xs
    d = op.ins[0][1]
    if d is bool_:
        if op.opdef in _BOOL_BINARY:
            return [getattr(cx.ops, _BOOL_BINARY[op.opdef])(a, b)]
        if op.opdef is _EQ:
            return [cx.ops.logical_not(cx.ops.logical_xor(a, b))]
        # ordered comparisons of bools: compare as integers (False < True)
        a, b = cx.cast(a, int32), cx.cast(b, int32)
    name, swap = _BINARY[op.opdef]
    if swap:
        a, b = b, a
    return [getattr(cx.ops, name)(a, b)]


lowers(*(d.name for d in _BINARY))(_binary)


_LOGICAL = by_op({"logical_and": "logical_and", "logical_or": "logical_or"})


@lowers(*(d.name for d in _LOGICAL))
def _logical(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    a, b = (cx.cast(x, bool_) for x in xs)
    return [getattr(cx.ops, _LOGICAL[op.opdef])(a, b)]


@lowers("where")
def _where(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    return [cx.ops.where(*xs)]


@lowers("convert")
def _convert(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    return [cx.cast(xs[0], op.attrs["dtype"])]


# ---- reductions ----

def _reduce_each(cx: Ctx, x: Any, fn: Callable[..., Any], dims: Sequence[int]) -> Any:
    """Reduce ``dims`` keeping them (size 1). MAX reduces one axis per op, so
    a run of adjacent dims is first merged by a reshape into one axis (one
    kernel for ``x.sum()``); other dims are reduced one after the other."""
    dims = sorted(dims)
    shape = list(x.shape)  # MAX dims: static or the symbolic batch
    if len(dims) > 1 and dims == list(range(dims[0], dims[-1] + 1)) \
            and all(_is_static(d) for d in shape[dims[0]:dims[-1] + 1]):
        lo, hi = dims[0], dims[-1] + 1
        n = 1
        for d in shape[lo:hi]:
            n *= int(d)
        merged = fn(cx.reshape(x, (*shape[:lo], n, *shape[hi:])), axis=lo)
        return cx.reshape(merged, (*shape[:lo], *([1] * (hi - lo)), *shape[hi:]))
    for dim in dims:
        x = fn(x, axis=dim)
    return x


# op -> the MAX reduction over one axis (given max.graph.ops)
_REDUCERS: dict[OpDef, Callable[[Any], Callable[..., Any]]] = by_op({
    "sum": lambda o: o.sum, "mean": lambda o: o.mean,
    "max": lambda o: lambda v, axis: o.max(v, axis=axis),
    "min": lambda o: lambda v, axis: o.min(v, axis=axis)})
_ACCUMULATING = frozenset(by_op({"sum": 0, "mean": 0}))


@lowers(*(d.name for d in _REDUCERS))
def _reduce(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    (x,), ((_, d),), ((out_shape, out_d),) = xs, op.ins, op.outs
    dims = op.attrs["dims"]
    acc = float32 if _is_half(d) else out_d  # half accumulates in float32, ints in int64
    if op.opdef in _ACCUMULATING:
        x = cx.cast(x, acc)
    fn = _REDUCERS[op.opdef](cx.ops)
    r = _reduce_each(cx, x, fn, dims)
    return [cx.cast(cx.reshape(r, out_shape, op.osym()), out_d)]


_ARG = by_op({"argmax": "argmax", "argmin": "argmin"})


@lowers(*(d.name for d in _ARG))
def _arg(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    (x,), ((shape, _),), ((out_shape, _),) = xs, op.ins, op.outs
    dim = op.attrs["dim"]
    if not shape:  # a rank-0 tensor: its only index
        return [cx.reshape(cx.scalar(0, int64), out_shape)]  # (no batch: rank 0)
    if dim is None:
        n = 1
        for s in shape:
            n *= s
        x, dim = cx.reshape(x, (n,)), 0
    fn = getattr(cx.ops, _ARG[op.opdef])
    return [cx.reshape(fn(x, axis=dim), out_shape, op.osym())]


# ---- linalg ----

@lowers("matmul")
def _matmul(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    (a, b), ((sa, da), (sb, _)), ((out_shape, _),) = xs, op.ins, op.outs
    if len(sa) == 1:
        a = cx.reshape(a, (1, *a.shape))
    if len(sb) == 1:
        b = cx.reshape(b, (*b.shape, 1))
    if _is_half(da):  # accumulate in float32, round once (as the reference kernel)
        r = cx.ops.matmul(cx.cast(a, float32), cx.cast(b, float32))
        return [cx.cast(cx.reshape(r, out_shape, op.osym()), da)]
    return [cx.reshape(cx.ops.matmul(a, b), out_shape, op.osym())]


# ---- shape ops ----

@lowers("reshape")
def _reshape(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    return [cx.ops.reshape(xs[0], cx.shape(op.attrs["shape"], op.osym()))]


@lowers("permute")
def _permute(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    return [cx.ops.permute(xs[0], list(op.attrs["perm"]))]


@lowers("broadcast_to")
def _broadcast_to(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    if op.ins[0][0] == tuple(op.attrs["shape"]) and op.isym(0) == op.osym():
        return [xs[0]]
    return [cx.ops.broadcast_to(xs[0], cx.shape(op.attrs["shape"], op.osym()))]


@lowers("slice")
def _slice(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    (shape, _), a = op.ins[0], op.attrs
    if all(s == 0 and e == n and k == 1 for s, e, k, n in
           zip(a["start"], a["limit"], a["stride"], shape)):
        return [xs[0]]
    index = [slice(None) if (s == 0 and e == n and k == 1) else slice(s, e, k)
             for s, e, k, n in zip(a["start"], a["limit"], a["stride"], shape)]
    return [cx.ops.slice_tensor(xs[0], index)]


@lowers("concat")
def _concat(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    if len(xs) == 1:
        return [xs[0]]
    return [cx.ops.concat(xs, axis=op.attrs["dim"])]


@lowers("split")
def _split(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    sizes, dim = list(op.attrs["sizes"]), op.attrs["dim"]
    if len(sizes) == 1:
        return [xs[0]]
    return list(cx.ops.split(xs[0], sizes, dim))


# ---- nn ----

_SOFTMAX = by_op({"softmax": False, "log_softmax": True})


@lowers(*(d.name for d in _SOFTMAX))
def _softmax(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    """Shift by the max, exp, sum: written out, not MAX's ``softmax`` op. MAX
    26.7's CPU softmax, fused after a matmul, scale and a ``-inf`` causal
    mask (the GPT block), returned NaN for every element, while the same ops
    with the scores materialized were right (examples/gpt.py on MAX; the test
    test_attention_block_with_a_causal_mask in test/python/max)."""
    (x,), ((_, d),) = xs, op.ins
    o, dim = cx.ops, op.attrs["dim"]
    w = cx.cast(x, float32) if _is_half(d) else x
    shifted = w - o.max(w, axis=dim)
    e = o.exp(shifted)
    total = o.sum(e, axis=dim)
    r = shifted - o.log(total) if _SOFTMAX[op.opdef] else e / total
    return [cx.cast(r, d) if _is_half(d) else r]


@lowers("logsumexp")
def _logsumexp(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    (x,), ((_, d),), ((out_shape, _),) = xs, op.ins, op.outs
    dims = op.attrs["dims"]
    w = cx.cast(x, float32) if _is_half(d) else x
    o = cx.ops
    m = _reduce_each(cx, w, lambda v, axis: o.max(v, axis=axis), dims)
    finite = o.logical_not(o.logical_or(o.is_inf(m), o.is_nan(m)))
    wd = float32 if _is_half(d) else d
    m = o.where(finite, m, cx.scalar(0, wd))  # an all -inf (or inf) slice shifts by 0
    s = _reduce_each(cx, o.exp(o.sub(w, m)), o.sum, dims)
    r = o.add(o.log(s), m)
    return [cx.cast(cx.reshape(r, out_shape, op.osym()), d)]


@lowers("pad")
def _pad(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    """Interior padding first (per dim: a new axis padded with k zeros, merged
    back, the trailing zeros sliced off), then one constant pad for low/high."""
    (x,), ((shape, d),), ((out_shape, _),) = xs, op.ins, op.outs
    low, high, interior = op.attrs["low"], op.attrs["high"], op.attrs["interior"]
    zero: float | int | bool = False if d is bool_ else 0 if d.category != FLOAT else 0.0
    if 0 in shape:  # nothing to place: the result is all padding
        return [cx.ops.broadcast_to(cx.scalar(zero, d), cx.shape(out_shape, op.osym()))]
    for dim, k in enumerate(interior):
        n = shape[dim]
        if k == 0 or n <= 1:
            continue
        cur = list(x.shape)
        x = cx.reshape(x, (*cur[:dim + 1], 1, *cur[dim + 1:]))
        pads = [0] * (2 * (len(cur) + 1))
        pads[2 * (dim + 1) + 1] = k
        x = cx.ops.pad(x, pads, value=zero)
        x = cx.reshape(x, (*cur[:dim], n * (k + 1), *cur[dim + 1:]))
        index: list[slice] = [slice(None)] * len(cur)
        index[dim] = slice(0, (n - 1) * (k + 1) + 1)
        x = cx.ops.slice_tensor(x, index)
    if any(low) or any(high):
        x = cx.ops.pad(x, [p for lo, hi in zip(low, high) for p in (lo, hi)], value=zero)
    return [x]


# ---- issue 14's math primitives (asin, atan, atan2, expm1: their decompositions) ----

_ROUNDING = by_op({"floor": "floor", "ceil": "ceil", "round": "round", "trunc": "trunc",
                   "acos": "acos"})


@lowers(*(d.name for d in _ROUNDING))
def _rounding(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    return [getattr(cx.ops, _ROUNDING[op.opdef])(xs[0])]


@lowers("floor_divide")
def _floor_divide(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    return [cx.ops.floor_div(*xs)]


@lowers("fmod")
def _fmod(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    # fmod has the dividend's sign: MAX's mod, moved by one divisor where its
    # remainder has the other sign
    (a, b), d = xs, op.ins[0][1]
    r = cx.ops.mod(a, b)
    zero = cx.scalar(0, d)
    sign_differs = cx.ops.not_equal(cx.ops.greater(zero, r), cx.ops.greater(zero, a))
    fix = cx.ops.logical_and(cx.ops.not_equal(r, zero), sign_differs)
    return [cx.ops.where(fix, cx.ops.sub(r, b), r)]


_BITWISE = by_op({"bitwise_and": "logical_and", "bitwise_or": "logical_or",
                  "bitwise_xor": "logical_xor", "bitwise_not": "logical_not"})


@lowers(*(d.name for d in _BITWISE))
def _bitwise(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    if op.ins[0][1] is not bool_:
        raise MaxLoweringError(op.opdef.name, "on integer tensors is not supported by the "
                                              "max backend (MAX has no bitwise ops)")
    return [getattr(cx.ops, _BITWISE[op.opdef])(*xs)]



class _Traced:
    """A MAX value with its pyflame spec, for ``_DecompositionBuilder``."""

    def __init__(self, value: Any, spec: Spec):
        self.value, self.spec = value, spec


class _DecompositionBuilder:
    """The builder interface of the op table's rules over MAX values: each op
    is emitted by its own MAX rule, so an op's decomposition is its MAX rule."""

    def __init__(self, cx: Ctx):
        self.cx = cx

    def op(self, name: str, *vals: _Traced, **attrs: Any) -> _Traced:
        opdef = get_op(name)
        ins = [v.spec for v in vals]
        outs = list(opdef.check([s for s, _ in ins], [d for _, d in ins], attrs))
        (r,) = MAX_LOWERINGS[opdef](self.cx, [v.value for v in vals],
                                    OpCall(opdef, attrs, ins, outs))
        return _Traced(r, outs[0])

    def scalar(self, v: float, like: _Traced) -> _Traced:
        return _Traced(self.cx.scalar(v, like.spec[1]), ((), like.spec[1]))

    def shape(self, v: _Traced) -> Shape:
        return v.spec[0]

    def dtype(self, v: _Traced) -> DType:
        return v.spec[1]

    def isnan(self, v: _Traced) -> _Traced:
        """MO's is_nan (a NaN test as ``x != x`` may be folded away)."""
        return _Traced(self.cx.ops.is_nan(v.value), (v.spec[0], bool_))

    def __getattr__(self, name: str) -> Callable[..., _Traced]:
        return lambda *vals, **attrs: self.op(name, *vals, **attrs)


@lowers("atan", "asin", "atan2", "expm1", "max_pool", "max_pool_grad", "gelu_grad")
def _decomposed(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    # MAX has no such op: the table's decomposition (Cephes' atan; Kahan's
    # expm1; max pooling's stacked windows), emitted through the MAX rules of the ops it is made of
    b = _DecompositionBuilder(cx)
    outs = op.opdef.decomposition(b, [_Traced(x, s) for x, s in zip(xs, op.ins)], **op.attrs)
    return [v.value for v in outs]
# ---- indexing (dialects/indexing.py): gather and scatter_add ----

@lowers("gather")
def _gather(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    """torch.gather as ``ops.gather`` (numpy's take) on the flattened input at
    flat positions: the index at ``dim``, the output's own coordinates elsewhere."""
    (x, index), ((xshape, _), (ishape, _)), dim = xs, op.ins, op.attrs["dim"]
    if not ishape:
        return [x]
    flat: Any = None
    stride = 1
    for d in range(len(xshape) - 1, -1, -1):
        if d == dim:
            coord = cx.cast(index, int64)
        else:
            r = cx.ops.range(0, ishape[d], 1, dtype=cx.dt(int64), device=cx.device)
            coord = cx.reshape(r, (ishape[d],) + (1,) * (len(ishape) - d - 1))
        term = coord if stride == 1 else cx.ops.mul(coord, cx.scalar(stride, int64))
        flat = term if flat is None else cx.ops.add(flat, term)
        stride *= xshape[d]
    flat = cx.ops.broadcast_to(flat, list(ishape))
    return [cx.ops.gather(cx.reshape(x, (numel(xshape),)), flat, axis=0)]


@lowers("scatter_add")
def _scatter_add(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    """``ops.scatter_add`` (torch's semantics); bool accumulates as int32, then != 0."""
    (x, index, src), ((_, d), _, _), dim = xs, op.ins, op.attrs["dim"]
    if not op.ins[0][0]:
        return [cx.ops.add(x, src) if d is not bool_ else cx.ops.logical_or(x, src)]
    if d is bool_:
        out = cx.ops.scatter_add(cx.cast(x, int32), cx.cast(src, int32), index, axis=dim)
        return [cx.cast(out, bool_)]
    return [cx.ops.scatter_add(x, src, index, axis=dim)]
# ---- reductions, scans and sorting (dialects/reduction.py prod, scan.py, sorting.py) ----

def _accumulator(d: DType) -> DType:
    """numpy's: half precision in float32, integers and bool in int64."""
    if d.category == FLOAT:
        return float32 if _is_half(d) else d
    return int64


@lowers("prod")
def _prod(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    (x,), ((_, d),), ((out_shape, out_d),) = xs, op.ins, op.outs
    r = _reduce_each(cx, cx.cast(x, _accumulator(d)), cx.ops.prod, op.attrs["dims"])
    return [cx.cast(cx.reshape(r, out_shape, op.osym()), out_d)]


@lowers("cumsum")
def _cumsum(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    (x,), ((_, d),), ((_, out_d),) = xs, op.ins, op.outs
    r = cx.ops.cumsum(cx.cast(x, _accumulator(d)), axis=op.attrs["dim"],
                      reverse=op.attrs["reverse"])
    return [cx.cast(r, out_d)]


def _static(cx: Ctx, op: OpCall) -> None:
    if any(op.isym(k) for k in range(len(op.ins))):
        raise MaxLoweringError(op.name, "is not supported with a symbolic batch dimension")


@lowers("cumprod", "logcumsumexp", "cummax", "cummin")
def _log_depth_scan(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    """MAX has ``cumsum`` only: the other scans as ``dialects/scan.py: SCANS``,
    Hillis-Steele steps of the other ops' rules (O(n log n), log depth)."""
    _static(cx, op)
    b = _DecompositionBuilder(cx)
    outs = SCANS[op.name](b, [_Traced(x, s) for x, s in zip(xs, op.ins)], **op.attrs)
    return [v.value for v in outs]


def _along(cx: Ctx, x: Any, spec: Spec, index: Any, ispec: Spec, dim: int) -> Any:
    """``x`` gathered along ``dim`` at ``index`` (numpy's take_along_axis)."""
    call = OpCall(get_op("gather"), {"dim": dim}, [spec, ispec], [(ispec[0], spec[1])])
    return _gather(cx, [x, index], call)[0]


@lowers("select_along")
def _select_along(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    _static(cx, op)
    return _gather(cx, xs, op)


@lowers("scatter_add_along")
def _scatter_add_along(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    """``ops.scatter_add`` into zeros of the result's shape."""
    _static(cx, op)
    (src, index), ((shape, d),) = xs, op.outs
    zeros = cx.ops.broadcast_to(cx.scalar(0, d), list(shape))
    return [cx.ops.scatter_add(zeros, src, index, axis=op.attrs["dim"])]


@lowers("sort")
def _sort(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    """Stable sort from two of MAX's ``top_k``/``bottom_k`` (O(n log n); MAX
    leaves their order among equal keys open, so neither relies on it):

    1. sort a key (NaN as +inf, half precision in f32, integers in i64): equal
       values end up adjacent, in some order;
    2. number the runs of equal keys (a cumsum of "differs from the previous")
       and sort the distinct int64 keys ``(run * 2 + nan) * n + position``:
       runs in order, within a run NaN after +inf ascending (before it
       descending), then the original position: the stable order.
    The position is the final key mod n; the values are gathered from x."""
    _static(cx, op)
    (x,), ((shape, d),), dim, descending = xs, op.ins, op.attrs["dim"], op.attrs["descending"]
    rank, n = len(shape), shape[dim]
    if n == 0:
        return [x, cx.ops.cast(x, cx.dt(int64))]
    last = rank - 1
    perm = [k for k in range(rank) if k != dim] + [dim]
    xt = x if dim == last else cx.ops.permute(x, perm)
    tshape = tuple(shape[k] for k in perm)
    if d.category == FLOAT:
        wide = xt if d.itemsize >= 4 else cx.cast(xt, float32)
        nan = cx.ops.is_nan(wide)
        key = cx.ops.where(nan, cx.ops.constant(np.inf, wide.dtype, device=cx.device), wide)
    else:
        nan, key = None, cx.cast(xt, int64)
    select = cx.ops.top_k if descending else cx.ops.bottom_k
    run_values, first = select(key, n, axis=-1)
    lead = [slice(None)] * (rank - 1)
    later = cx.ops.not_equal(run_values[(*lead, slice(1, None))],
                             run_values[(*lead, slice(0, n - 1))])
    starts = cx.ops.concat([cx.ops.broadcast_to(cx.scalar(0, int64), [*tshape[:-1], 1]),
                            cx.cast(later, int64)], axis=-1)
    run = cx.ops.cumsum(starts, axis=-1)
    key2 = cx.ops.mul(run, cx.scalar(2, int64))
    if nan is not None:
        nan_first = _along(cx, cx.cast(nan, int64), (tshape, int64), first, (tshape, int64),
                           last)
        if descending:  # NaN before +inf
            nan_first = cx.ops.sub(cx.scalar(1, int64), nan_first)
        key2 = cx.ops.add(key2, nan_first)
    key2 = cx.ops.add(cx.ops.mul(key2, cx.scalar(n, int64)), first)
    final, _ = cx.ops.bottom_k(key2, n, axis=-1)
    indices = cx.ops.mod(final, cx.scalar(n, int64))
    values = _along(cx, xt, (tshape, d), indices, (tshape, int64), last)
    if dim != last:
        back = [perm.index(k) for k in range(rank)]
        values, indices = cx.ops.permute(values, back), cx.ops.permute(indices, back)
    return [values, indices]


# ---- matrix decompositions and solvers (dialects/decomp.py) ----

@lowers(*DECOMPOSITIONS)
def _decomposition(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    """MAX has no LAPACK (no factorization or triangular solve op): refuse by name."""
    raise MaxLoweringError(op.name, "is not supported by the MAX backend (it has no matrix "
                                    "factorizations); run it on the reference backend")


def rule_for(op: OpDef | str) -> Rule | None:
    """The MAX rule of an op (by table entry or name); None if it has none."""
    return MAX_LOWERINGS.get(op if isinstance(op, OpDef) else get_op(op))


# ---- data ----

def is_splat(v: Any) -> bool:
    """One value repeated (IR attributes hold a splat's every element)."""
    if v.is_splat:
        return True
    raw = v.array.tobytes()
    n = v.dtype.itemsize
    return raw == raw[:n] * (len(raw) // n)


@lowers("constant")
def _constant(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    v = op.attrs["value"]
    shape, d = v.shape, v.dtype
    if is_splat(v):  # one value: a scalar, broadcast
        c = cx.scalar(v.scalar(), d)
        if not shape:
            return [c]
        return [cx.ops.broadcast_to(c, cx.shape(shape, op.osym()))]
    arr = np.ascontiguousarray(v.array)
    if d is bool_:  # canonical 0/1 bytes (a parsed i1 literal may hold 0xFF for true)
        arr = arr.view(np.uint8) != 0
    if d.name == "bfloat16":  # numpy has no DLPack bfloat16: exact through float32
        c = cx.ops.constant(arr.astype(np.float32), device=cx.device)
        return [cx.ops.cast(c, cx.dt(d))]
    return [cx.ops.constant(arr, cx.dt(d), device=cx.device)]


@lowers("iota")
def _iota(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    shape, dim, d = tuple(op.attrs["shape"]), op.attrs["dim"], op.attrs["dtype"]
    n = shape[dim]
    r = cx.ops.range(0, n, 1, dtype=cx.dt(int64), device=cx.device)
    r = cx.reshape(cx.cast(r, d), (n,) + (1,) * (len(shape) - dim - 1))
    if _static_shape(r) == shape and not op.osym():
        return [r]
    return [cx.ops.broadcast_to(r, cx.shape(shape, op.osym()))]


# ---- symbolic batch: which dims are the batch ----
#
# Union-find over (value, dim) nodes. Seed: dim 0 of the first argument (the
# first leaf the computation uses, ``x`` in ``x @ w``). Each op links the dims
# that must be the same size by its semantics (broadcasting alignment, matmul
# rows/columns/contraction, kept dims of reductions, permutations, reshapes
# that keep a dim in place, ...); dims an op needs static (a reshape merging
# them, a partial slice, a dense literal, ...) are recorded. The batch is the
# seed's class; a static-only dim in it makes the graph not batch-polymorphic.

Ref = tuple[str, int, int]  # ("i" operand | "o" result, index, dim)


@dataclass
class BatchPlan:
    size: int  # the batch size the module was traced with
    dims: dict[Any, frozenset[int]]  # value -> its batch positions

    def of(self, v: Any) -> frozenset[int]:
        return self.dims.get(v, frozenset())


def _align(links: list[tuple[Ref, Ref]], k: int, src: Shape, dst: Shape) -> None:
    """numpy broadcasting: operand ``k``'s dims aligned from the right with the result."""
    off = len(dst) - len(src)
    for d, n in enumerate(src):
        if off + d >= 0 and n == dst[off + d]:
            links.append((("i", k, d), ("o", 0, off + d)))


(_BROADCAST_TO, _MATMUL, _PERMUTE, _RESHAPE, _SLICE, _PAD, _CONSTANT, _IOTA) = map(
    get_op, ("broadcast_to", "matmul", "permute", "reshape", "slice", "pad", "constant", "iota"))
_ALONG_DIM = frozenset(by_op({"softmax": 0, "log_softmax": 0}))
_CONCAT_SPLIT = frozenset(by_op({"concat": 0, "split": 0}))
_ARG_OPS = frozenset(by_op({"argmax": 0, "argmin": 0}))
_REDUCING_OPS = frozenset(by_op({n: 0 for n in ("sum", "mean", "max", "min", "logsumexp")})
                          ) | _ARG_OPS


def _op_links(opdef: OpDef, attrs: dict[str, Any], ins: Sequence[Shape], outs: Sequence[Shape]
              ) -> tuple[list[tuple[Ref, Ref]], list[tuple[Ref, str]]]:
    """(dims that are one dim, dims that must stay static with why) of one op."""
    links: list[tuple[Ref, Ref]] = []
    fixed: list[tuple[Ref, str]] = []
    name = opdef.name
    if opdef.elementwise:
        for k, s in enumerate(ins):
            _align(links, k, s, outs[0])
    elif opdef is _BROADCAST_TO:
        _align(links, 0, ins[0], outs[0])
    elif opdef is _MATMUL:
        a, b = ins
        a2 = (1, *a) if len(a) == 1 else a
        b2 = (*b, 1) if len(b) == 1 else b
        ia = (lambda d: d - 1) if len(a) == 1 else (lambda d: d)
        links.append((("i", 0, len(a) - 1), ("i", 1, 0 if len(b) == 1 else len(b) - 2)))
        nb = max(len(a2), len(b2)) - 2
        out_m = nb if len(a) > 1 else None
        out_n = (nb + (1 if len(a) > 1 else 0)) if len(b) > 1 else None
        if out_m is not None:
            links.append((("i", 0, ia(len(a2) - 2)), ("o", 0, out_m)))
        if out_n is not None:
            links.append((("i", 1, len(b2) - 1), ("o", 0, out_n)))
        batch_out = outs[0][:nb]
        for k, (full, idx) in enumerate(((a2, ia), (b2, lambda d: d))):
            part = full[:-2]
            off = nb - len(part)
            for d, n in enumerate(part):
                if n == batch_out[off + d]:
                    links.append((("i", k, idx(d)), ("o", 0, off + d)))
    elif opdef in _REDUCING_OPS:
        shape = ins[0]
        if opdef in _ARG_OPS and attrs["dim"] is None:
            fixed += [(("i", 0, d), f"{name} without a dim flattens the tensor")
                      for d in range(len(shape))]
            return links, fixed
        dims = attrs["dims"] if "dims" in attrs else (attrs["dim"],)
        j = 0
        for d in range(len(shape)):
            if d in dims:
                j += 1 if attrs["keepdim"] else 0
                continue
            links.append((("i", 0, d), ("o", 0, j)))
            j += 1
    elif opdef in _ALONG_DIM:
        links += [(("i", 0, d), ("o", 0, d)) for d in range(len(ins[0]))]
    elif opdef is _PERMUTE:
        links += [(("i", 0, p), ("o", 0, j)) for j, p in enumerate(attrs["perm"])]
    elif opdef is _RESHAPE:
        src, dst = ins[0], outs[0]
        pre_dst = [numel(dst[:j]) for j in range(len(dst))]
        for d, n in enumerate(src):
            pre = numel(src[:d])
            js = [j for j in range(len(dst)) if dst[j] == n and pre_dst[j] == pre]
            if n > 1 and js:
                links.append((("i", 0, d), ("o", 0, js[0])))
            elif n > 1:
                fixed.append((("i", 0, d), "reshape merges or splits this dim"))
    elif opdef is _SLICE:
        for d, n in enumerate(ins[0]):
            if (attrs["start"][d], attrs["limit"][d], attrs["stride"][d]) == (0, n, 1):
                links.append((("i", 0, d), ("o", 0, d)))
            else:
                fixed.append((("i", 0, d), "slice takes part of this dim"))
    elif opdef in _CONCAT_SPLIT:
        dim = attrs["dim"]
        rank = len(ins[0])
        for d in range(rank):
            if d == dim:
                fixed.append((("i", 0, d), f"{name} works along this dim"))
                continue
            links += [(("i", k, d), ("o", 0, d)) for k in range(len(ins))]
            links += [(("i", 0, d), ("o", k, d)) for k in range(len(outs))]
    elif opdef is _PAD:
        for d in range(len(ins[0])):
            if (attrs["low"][d], attrs["high"][d], attrs["interior"][d]) == (0, 0, 0):
                links.append((("i", 0, d), ("o", 0, d)))
            else:
                fixed.append((("i", 0, d), "pad changes this dim"))
    elif opdef is _CONSTANT:
        if not is_splat(attrs["value"]):
            fixed += [(("o", 0, d), "a dense literal has a fixed size")
                      for d in range(len(outs[0]))]
    elif opdef is _IOTA:
        fixed.append((("o", 0, attrs["dim"]), "iota counts along this dim"))
    else:  # an op this analysis does not know: every dim static
        fixed += [(("i", k, d), f"{name} is not known to the batch analysis")
                  for k, s in enumerate(ins) for d in range(len(s))]
        fixed += [(("o", k, d), f"{name} is not known to the batch analysis")
                  for k, s in enumerate(outs) for d in range(len(s))]
    return links, fixed


def analyze_batch(fn: func.FuncOp) -> BatchPlan:
    """The batch dims of every value of ``fn``, seeded by dim 0 of its first
    argument; raises MaxLoweringError naming the op that pins the batch."""
    block = fn.body.block
    if not block.args:
        raise MaxLoweringError("", "symbolic batch: the function has no arguments")
    shape0, _ = spec_of_type(block.args[0].type, "argument #0")
    if not shape0 or shape0[0] <= 1:
        raise MaxLoweringError("", f"symbolic batch: the first argument's leading dim "
                                   f"must be > 1 (shape {list(shape0)})")
    parent: dict[Any, Any] = {}

    def find(n: Any) -> Any:
        root = n
        while parent.get(root, root) != root:
            root = parent[root]
        while n != root:
            parent[n], n = root, parent.get(n, n)
        return root

    def union(a: Any, b: Any) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[ra] = rb

    shapes: dict[Any, Shape] = {}
    dtypes: dict[Any, DType] = {}
    pinned: list[tuple[Any, str, str]] = []  # (node, op, why)

    def apply(opdef: OpDef, attrs: dict[str, Any], in_keys: list[Any], out_keys: list[Any]
              ) -> None:
        links, fixed = _op_links(opdef, attrs, [shapes[k] for k in in_keys],
                                 [shapes[k] for k in out_keys])

        def node(ref: Ref) -> Any:
            side, k, d = ref
            return ((in_keys if side == "i" else out_keys)[k], d)

        for a, b in links:
            union(node(a), node(b))
        pinned.extend((node(r), opdef.name, why) for r, why in fixed)

    for a in block.args:
        shapes[a], dtypes[a] = spec_of_type(a.type, "argument")
    for op in block.ops:
        for r in op.results:
            shapes[r], dtypes[r] = spec_of_type(r.type, "result")
        if isinstance(op, PyflameOp):
            apply(op.OPDEF, op.py_attrs(), list(op.operands), list(op.results))

    seed = find((block.args[0], 0))
    for n, name, why in pinned:
        if find(n) == seed:
            raise MaxLoweringError(name, f"symbolic batch: {why}, but it is the batch dim "
                                         f"(size {shape0[0]})")
    dims: dict[Any, set[int]] = {}
    for key, shape in shapes.items():
        for d in range(len(shape)):
            if find((key, d)) == seed:
                dims.setdefault(key, set()).add(d)
    return BatchPlan(shape0[0], {k: frozenset(v) for k, v in dims.items()})


def abstract_text(fn: func.FuncOp, plan: BatchPlan) -> str:
    """``fn`` with every batch size replaced by ``?`` (in types and in the
    attributes that spell it): two modules with the same abstract text are one
    computation at two batch sizes, so one symbolic model serves both. Constants
    stay exact (a ``1/1024`` folded from the batch size makes another text)."""
    ids: dict[Any, int] = {}

    def vid(v: Any) -> str:
        return f"%{ids.setdefault(v, len(ids))}"

    def ty(v: Any) -> str:
        shape, d = spec_of_type(v.type, "value")
        sym = plan.of(v)
        return "x".join("?" if i in sym else str(n) for i, n in enumerate(shape)) + d.short

    def canon(v: Any) -> str:
        if isinstance(v, float):
            return v.hex()
        if isinstance(v, DType):
            return v.name
        return repr(v)

    lines = ["(" + ", ".join(f"{vid(a)}: {ty(a)}" for a in fn.body.block.args) + ")"]

    def walk(blk: Block, depth: int) -> None:
        for op in blk.ops:
            pad = "  " * depth
            head = f"{pad}{', '.join(vid(r) for r in op.results)} = {op.name}(" \
                   f"{', '.join(vid(v) for v in op.operands)})"
            sig = f" : ({', '.join(ty(v) for v in op.operands)}) -> " \
                  f"({', '.join(ty(r) for r in op.results)})"
            attrs = dict(op.py_attrs()) if isinstance(op, PyflameOp) else {}
            osym = plan.of(op.results[0]) if op.results else frozenset()
            for k in ("shape",):  # reshape, broadcast_to, iota
                if k in attrs:
                    attrs[k] = tuple("?" if i in osym else n for i, n in enumerate(attrs[k]))
            if "limit" in attrs:  # slice: the batch dims are taken whole
                isym = plan.of(op.operands[0])
                attrs["limit"] = tuple("?" if i in isym else n
                                       for i, n in enumerate(attrs["limit"]))
            if "value" in attrs:
                dv = attrs["value"]
                attrs["value"] = (dv.dtype.name, tuple("?" if i in osym else n for i, n in
                                                       enumerate(dv.shape)),
                                  dv.array.reshape(-1)[:1].tobytes().hex() if is_splat(dv)
                                  else dv.array.tobytes().hex())
            body = ", ".join(f"{k}={canon(v)}" for k, v in attrs.items())
            lines.append(head + (" {" + body + "}" if body else "") + sig)

    walk(fn.body.block, 0)
    return "\n".join(lines) + "\n"


# ---- building graphs ----

@dataclass
class LoweredGraph:
    """A built (not compiled) MAX graph and the pyflame signature it implements."""

    graph: Graph
    arg_specs: list[Spec]
    result_specs: list[Spec]
    device: str
    plan: BatchPlan | None = None  # symbolic batch: the analysis it was built with
    arg_sym: list[frozenset[int]] = field(default_factory=list)  # batch positions per argument
    result_sym: list[frozenset[int]] = field(default_factory=list)  # ... per result

    @property
    def text(self) -> str:
        return str(self.graph)


def functions(module: ModuleOp) -> list[func.FuncOp]:
    return [op for op in module.ops if isinstance(op, func.FuncOp)]


def find_main(module: ModuleOp) -> func.FuncOp:
    fns = functions(module)
    if len(fns) != 1:
        raise MaxLoweringError("", f"MAX backend: expected one func.func in the module, "
                                   f"found {len(fns)}")
    return fns[0]


def check_supported(fn: func.FuncOp) -> None:
    """Fail before building anything if some op has no MAX lowering (the
    ``legalize-for-max`` pass runs this after unfusing and decomposing)."""
    narrow = narrow_int_use(fn)
    if narrow is not None:
        raise MaxLoweringError(narrow[0].removeprefix("pyflame."),
                               f"{narrow[1].name} tensors are not supported by the MAX backend "
                               "yet (the reference backend runs them; cast to int32 first)")
    for op in fn.body.block.ops:
        if isinstance(op, func.ReturnOp):
            continue
        if not isinstance(op, PyflameOp):
            raise MaxLoweringError("", f"MAX backend: cannot lower {op.name} (pyflame ops "
                                       "and func.return only; run the transforms and "
                                       "legalize-for-max first)")
        if rule_for(op.OPDEF) is None:
            hint = ("run legalize-for-max first: it decomposes it" if
                    op.OPDEF.decomposition is not None else
                    "add one to lowering/to_max.py")
            raise MaxLoweringError(op.OPDEF.name, f"no MAX lowering is defined for this op "
                                                  f"({hint})")


def lower_function(fn: func.FuncOp, device: str = "cpu", name: str | None = None,
                   plan: BatchPlan | None = None) -> LoweredGraph:
    """Build the MAX graph of one ``func.func`` (no compilation); with a
    ``plan`` (``analyze_batch``) its batch dims are the symbolic dim ``batch``."""
    from max.graph import Dim, Graph, TensorType, ops

    check_supported(fn)
    spec = device_spec(device)
    dev = device_ref(spec)
    block = fn.body.block
    arg_specs = [spec_of_type(a.type, f"argument #{i}") for i, a in enumerate(block.args)]
    cx = Ctx(ops, dev, plan, Dim(BATCH_DIM) if plan else None)
    input_types = [TensorType(max_dtype(d), cx.shape(shape, plan.of(a) if plan else frozenset()),
                              dev) for a, (shape, d) in zip(block.args, arg_specs)]
    graph = Graph(name or fn.sym_name.data, input_types=input_types)
    with graph:
        env: dict[SSAValue, Any] = {a: v.tensor for a, v in zip(block.args, graph.inputs)}
        ret = _lower_block(cx, block, env)
        graph.output(*[env[v] for v in ret.operands])
    result_specs = [spec_of_type(v.type, "result") for v in ret.operands]
    return LoweredGraph(graph, arg_specs, result_specs, spec, plan,
                        [plan.of(a) for a in block.args] if plan else [],
                        [plan.of(v) for v in ret.operands] if plan else [])


def _lower_block(cx: Ctx, block: Block, env: dict[SSAValue, Any]) -> Operation:
    """Lower the ops of ``block`` into ``env``; returns its terminator."""
    for op in block.ops:
        if isinstance(op, func.ReturnOp):
            return op
        assert isinstance(op, PyflameOp)
        _lower_op(cx, op, env)
    raise MaxLoweringError("", "block has no terminator")


def _lower_op(cx: Ctx, op: PyflameOp, env: dict[SSAValue, Any]) -> None:
    name = op.OPDEF.name
    call = OpCall(op.OPDEF, op.py_attrs(),
                  [spec_of_type(v.type, "operand") for v in op.operands],
                  [spec_of_type(r.type, "result") for r in op.results])
    if cx.plan is not None:
        call.in_sym = [cx.plan.of(v) for v in op.operands]
        call.out_sym = [cx.plan.of(r) for r in op.results]
    try:
        rule = MAX_LOWERINGS.get(op.OPDEF)
        assert rule is not None  # check_supported ran first
        outs = rule(cx, [env[v] for v in op.operands], call)
    except MaxLoweringError:
        raise
    except Exception as e:  # MAX's graph builder rejected what the rule emitted
        raise MaxLoweringError(name, f"{type(e).__name__}: {e}") from e
    if len(outs) != len(op.results):
        raise MaxLoweringError(name, f"rule returned {len(outs)} values for "
                                     f"{len(op.results)} results")
    for i, (v, r, (shape, d)) in enumerate(zip(outs, op.results, call.outs)):
        got = [str(x) for x in v.shape]
        want = [str(x) for x in cx.shape(shape, call.osym(i))]
        if got != want or v.dtype != max_dtype(d):
            raise MaxLoweringError(name, f"result #{i} lowered to "
                                         f"{getattr(v.dtype, 'name', v.dtype)} [{', '.join(got)}], "
                                         f"expected {d.name} {list(shape)}")
        env[r] = v


def lower_module(module: ModuleOp, device: str = "cpu", plan: BatchPlan | None = None
                 ) -> LoweredGraph:
    """The backend's entry point: the module's single ``func.func`` as a graph."""
    return lower_function(find_main(module), device, "pyflame_main", plan)


def max_text(module: ModuleOp, device: str = "cpu", symbolic_batch: bool = False) -> str:
    """MO text of every function of ``module`` (one ``mo.graph`` each), uncompiled."""
    return "\n".join(lower_function(fn, device, plan=analyze_batch(fn) if symbolic_batch
                                     else None).text for fn in functions(module)) + "\n"


def print_max(module: ModuleOp, stream: IO[str]) -> None:
    """``pyflame-opt -t max``: the MO text of the module's graphs.

    The device is ``PYFLAME_MAX_DEVICE`` when set, else ``cpu`` (not ``auto``,
    so the printed text does not depend on the machine).
    """
    try:
        import max.graph  # noqa: F401
    except ImportError as e:
        raise MaxLoweringError("", f"-t max needs the `max` package: pip install "
                                   f"'pyflame-mlir[max]' ({e})") from None
    device = os.environ.get(DEVICE_ENV, "cpu")
    symbolic = os.environ.get(SYMBOLIC_ENV, "") not in ("", "0")
    stream.write(max_text(module, device, symbolic))


def missing_lowerings() -> list[str]:
    """Ops of the op table MAX can run neither by a rule of its own nor by a
    decomposition (``legalize-for-max``); a test keeps this empty."""
    return sorted(n for n, d in OPS.items() if rule_for(d) is None and d.decomposition is None)
