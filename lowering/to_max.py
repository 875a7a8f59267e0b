"""``pyflame`` module -> a Modular MAX graph (``max.graph.Graph``, MO dialect).

Each ``func.func`` becomes one ``mo.graph``: the function's arguments are the
graph inputs (``TensorType`` with the element type and ``DeviceRef`` of the
target device), every ``pyflame`` op is rewritten by its rule in
``MAX_LOWERINGS`` (keyed by op name, like every other per-op table), and the
returned values are the graph outputs (several for ``pf.eval(a, b)``).

The rules reproduce the reference kernels' semantics (``dialects/*.py``), not
MAX's defaults where the two differ: bool ``add``/``mul`` are logical, integer
``sum`` widens to int64, half precision reductions/softmax accumulate in
float32, ``sign`` keeps NaN and signed zeros, ``logsumexp`` shifts by the max
only where it is finite, reductions over several dims are applied one dim at
a time and then reshaped to the declared result.

Every op is checked against the table before anything is built, so a module
with an op MAX cannot run fails naming that op, never in the MAX compiler.
After each rule, the MAX result types are checked against the ``pyflame``
result types (shape and dtype), so a lowering that drifts from the op's shape
rule fails here with the op's name.

``print_max(module, stream)`` (``pyflame-opt -t max``) prints the MO text of
the built graphs without compiling them. ``max`` is imported lazily: this
module imports without it, and only building a graph needs it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import IO, TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue

from ..dialects import OPS
from ..dialects.dtypes import FLOAT, DType, bool_, float32, int32, int64
from ..dialects.pyflame import PyflameOp, spec_of_type

if TYPE_CHECKING:
    from max.graph import DeviceRef, Graph, TensorValue

Shape = tuple[int, ...]
Spec = tuple[Shape, DType]

# Bump when a rule changes what it emits: part of the compiled-model cache key.
LOWERING_VERSION = "1"
DEVICE_ENV = "PYFLAME_MAX_DEVICE"


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
    """One op being lowered: its name, Python attributes and operand/result specs."""

    name: str
    attrs: dict[str, Any]
    ins: list[Spec]
    outs: list[Spec]


@dataclass
class Ctx:
    ops: ModuleType  # max.graph.ops
    device: DeviceRef

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

    def shape(self, shape: Iterable[int]) -> list[Any]:
        return [int(d) for d in shape]

    def reshape(self, x: TensorValue, shape: Sequence[int]) -> TensorValue:
        if _static_shape(x) == tuple(shape):
            return x
        return self.ops.reshape(x, self.shape(shape))


Rule = Callable[[Ctx, list[Any], OpCall], list[Any]]
MAX_LOWERINGS: dict[str, Rule] = {}


def lowers(*names: str) -> Callable[[Rule], Rule]:
    def register(fn: Rule) -> Rule:
        for n in names:
            assert n not in MAX_LOWERINGS, f"two MAX lowerings for {n}"
            MAX_LOWERINGS[n] = fn
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


def _is_half(d: DType) -> bool:
    return d.category == FLOAT and d.itemsize < 4


# ---- elementwise ----

_UNARY_DIRECT = {"neg": "negate", "abs": "abs", "exp": "exp", "log": "log", "sqrt": "sqrt",
                 "rsqrt": "rsqrt", "sin": "sin", "cos": "cos", "tanh": "tanh",
                 "sigmoid": "sigmoid", "erf": "erf"}


def _unary_direct(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    return [getattr(cx.ops, _UNARY_DIRECT[op.name])(xs[0])]


lowers(*_UNARY_DIRECT)(_unary_direct)


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
    # where(x > 0, 1, where(x < 0, -1, x)): zeros keep their sign, NaN stays NaN.
    (x,), ((_, d),) = xs, op.ins
    zero = cx.scalar(0, d)
    inner = cx.ops.where(cx.ops.greater(zero, x), cx.scalar(-1, d), x)
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
_BINARY = {"add": ("add", False), "mul": ("mul", False), "sub": ("sub", False),
           "div": ("div", False), "pow": ("pow", False), "maximum": ("max", False),
           "minimum": ("min", False), "eq": ("equal", False), "ne": ("not_equal", False),
           "gt": ("greater", False), "ge": ("greater_equal", False),
           "lt": ("greater", True), "le": ("greater_equal", True)}
_BOOL_BINARY = {"add": "logical_or", "maximum": "logical_or", "mul": "logical_and",
                "minimum": "logical_and", "ne": "logical_xor"}


def _binary(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    a, b = xs
    d = op.ins[0][1]
    if d is bool_:
        if op.name in _BOOL_BINARY:
            return [getattr(cx.ops, _BOOL_BINARY[op.name])(a, b)]
        if op.name == "eq":
            return [cx.ops.logical_not(cx.ops.logical_xor(a, b))]
        # ordered comparisons of bools: compare as integers (False < True)
        a, b = cx.cast(a, int32), cx.cast(b, int32)
    name, swap = _BINARY[op.name]
    if swap:
        a, b = b, a
    return [getattr(cx.ops, name)(a, b)]


lowers(*_BINARY)(_binary)


@lowers("logical_and", "logical_or")
def _logical(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    a, b = (cx.cast(x, bool_) for x in xs)
    return [getattr(cx.ops, op.name)(a, b)]


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
    if len(dims) > 1 and dims == list(range(dims[0], dims[-1] + 1)):
        shape = _static_shape(x)
        lo, hi = dims[0], dims[-1] + 1
        n = 1
        for d in shape[lo:hi]:
            n *= int(d)
        merged = fn(cx.reshape(x, (*shape[:lo], n, *shape[hi:])), axis=lo)
        return cx.reshape(merged, (*shape[:lo], *([1] * (hi - lo)), *shape[hi:]))
    for dim in dims:
        x = fn(x, axis=dim)
    return x


@lowers("sum", "mean", "max", "min")
def _reduce(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    (x,), ((_, d),), ((out_shape, out_d),) = xs, op.ins, op.outs
    dims = op.attrs["dims"]
    acc = float32 if _is_half(d) else out_d  # half accumulates in float32, ints in int64
    if op.name in ("sum", "mean"):
        x = cx.cast(x, acc)
    fn = {"sum": cx.ops.sum, "mean": cx.ops.mean,
          "max": lambda v, axis: cx.ops.max(v, axis=axis),
          "min": lambda v, axis: cx.ops.min(v, axis=axis)}[op.name]
    r = _reduce_each(cx, x, fn, dims)
    return [cx.cast(cx.reshape(r, out_shape), out_d)]


@lowers("argmax", "argmin")
def _arg(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    (x,), ((shape, _),), ((out_shape, _),) = xs, op.ins, op.outs
    dim = op.attrs["dim"]
    if not shape:  # a rank-0 tensor: its only index
        return [cx.reshape(cx.scalar(0, int64), out_shape)]
    if dim is None:
        n = 1
        for s in shape:
            n *= s
        x, dim = cx.reshape(x, (n,)), 0
    fn = cx.ops.argmax if op.name == "argmax" else cx.ops.argmin
    return [cx.reshape(fn(x, axis=dim), out_shape)]


# ---- linalg ----

@lowers("matmul")
def _matmul(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    (a, b), ((sa, da), (sb, _)), ((out_shape, _),) = xs, op.ins, op.outs
    if len(sa) == 1:
        a = cx.reshape(a, (1,) + sa)
    if len(sb) == 1:
        b = cx.reshape(b, sb + (1,))
    if _is_half(da):  # accumulate in float32, round once (as the reference kernel)
        r = cx.ops.matmul(cx.cast(a, float32), cx.cast(b, float32))
        return [cx.cast(cx.reshape(r, out_shape), da)]
    return [cx.reshape(cx.ops.matmul(a, b), out_shape)]


# ---- shape ops ----

@lowers("reshape")
def _reshape(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    return [cx.ops.reshape(xs[0], cx.shape(op.attrs["shape"]))]


@lowers("permute")
def _permute(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    return [cx.ops.permute(xs[0], list(op.attrs["perm"]))]


@lowers("broadcast_to")
def _broadcast_to(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    if op.ins[0][0] == tuple(op.attrs["shape"]):
        return [xs[0]]
    return [cx.ops.broadcast_to(xs[0], cx.shape(op.attrs["shape"]))]


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

@lowers("softmax", "log_softmax")
def _softmax(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    (x,), ((_, d),) = xs, op.ins
    fn = cx.ops.softmax if op.name == "softmax" else cx.ops.logsoftmax
    if _is_half(d):
        return [cx.cast(fn(cx.cast(x, float32), axis=op.attrs["dim"]), d)]
    return [fn(x, axis=op.attrs["dim"])]


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
    return [cx.cast(cx.reshape(r, out_shape), d)]


@lowers("pad")
def _pad(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    """Interior padding first (per dim: a new axis padded with k zeros, merged
    back, the trailing zeros sliced off), then one constant pad for low/high."""
    (x,), ((shape, d),), ((out_shape, _),) = xs, op.ins, op.outs
    low, high, interior = op.attrs["low"], op.attrs["high"], op.attrs["interior"]
    zero: float | int | bool = False if d is bool_ else 0 if d.category != FLOAT else 0.0
    if 0 in shape:  # nothing to place: the result is all padding
        return [cx.ops.broadcast_to(cx.scalar(zero, d), cx.shape(out_shape))]
    for dim, k in enumerate(interior):
        n = shape[dim]
        if k == 0 or n <= 1:
            continue
        cur = _static_shape(x)
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


# ---- fused ops: the chain each one stands for ----

def _fused_chains() -> dict[str, tuple]:
    try:
        from ..dialects.fused import CHAINS
    except ImportError:  # no fused ops in this op table
        return {}
    return CHAINS


def _fused_chain(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    """A named fused op lowers to its chain (MAX fuses elementwise chains and
    matmul epilogues itself), each step by its own rule."""
    prev: tuple[Any, Spec] | None = None
    for step, refs, attr_names in _fused_chains()[op.name]:
        args = [prev if r < 0 else (xs[r], op.ins[r]) for r in refs]
        assert all(a is not None for a in args)
        ins = [spec for _, spec in args]  # type: ignore[misc]
        attrs = {k: op.attrs[k] for k in attr_names}
        outs = list(OPS[step].check([s for s, _ in ins], [d for _, d in ins], attrs))
        rule = rule_for(step)
        if rule is None:
            raise MaxLoweringError(op.name, f"its {step} step has no MAX lowering")
        (v,) = rule(cx, [a for a, _ in args], OpCall(step, attrs, ins, outs))  # type: ignore[misc]
        prev = (v, outs[0])
    assert prev is not None
    return [prev[0]]


def rule_for(name: str) -> Rule | None:
    """The MAX rule of an op: its own, or its fused chain's; None if neither."""
    rule = MAX_LOWERINGS.get(name)
    if rule is None and name in _fused_chains():
        return _fused_chain
    return rule


# ---- data ----

@lowers("constant")
def _constant(cx: Ctx, xs: list[Any], op: OpCall) -> list[Any]:
    v = op.attrs["value"]
    shape, d = v.shape, v.dtype
    raw = v.array.tobytes()
    if v.is_splat or raw == raw[:d.itemsize] * (len(raw) // d.itemsize):
        # one value (a parsed ``dense<1.5>`` holds it repeated): scalar + broadcast
        c = cx.scalar(v.scalar(), d)
        if not shape:
            return [c]
        return [cx.ops.broadcast_to(c, cx.shape(shape))]
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
    if _static_shape(r) == shape:
        return [r]
    return [cx.ops.broadcast_to(r, cx.shape(shape))]


# ---- building graphs ----

@dataclass
class LoweredGraph:
    """A built (not compiled) MAX graph and the pyflame signature it implements."""

    graph: Graph
    arg_specs: list[Spec]
    result_specs: list[Spec]
    device: str

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


FUSED_REGION = "pyflame.fused"  # a region the fusion pass groups; MAX fuses on its own
REGION_YIELD = "pyflame.yield"


def check_supported(fn: func.FuncOp) -> None:
    """Fail before building anything if some op has no MAX lowering."""
    _check_ops(fn.body.block.ops, func.ReturnOp.name)


def _check_ops(ops: Iterable[Operation], terminator: str) -> None:
    for op in ops:
        if op.name == terminator:
            continue
        if op.name == FUSED_REGION and len(op.regions) == 1:
            _check_ops(op.regions[0].block.ops, REGION_YIELD)
            continue
        if not isinstance(op, PyflameOp):
            raise MaxLoweringError("", f"MAX backend: cannot lower {op.name} (pyflame ops, "
                                       f"{FUSED_REGION} and func.return only; run the "
                                       "transforms first)")
        if rule_for(op.OPDEF.name) is None:
            raise MaxLoweringError(op.OPDEF.name, "no MAX lowering is defined for this op "
                                                  "(add one to lowering/to_max.py)")


def lower_function(fn: func.FuncOp, device: str = "cpu", name: str | None = None
                   ) -> LoweredGraph:
    """Build the MAX graph of one ``func.func`` (no compilation)."""
    from max.graph import Graph, TensorType, ops

    check_supported(fn)
    spec = device_spec(device)
    dev = device_ref(spec)
    block = fn.body.block
    arg_specs = [spec_of_type(a.type, f"argument #{i}") for i, a in enumerate(block.args)]
    cx = Ctx(ops, dev)
    input_types = [TensorType(max_dtype(d), list(shape), dev) for shape, d in arg_specs]
    graph = Graph(name or fn.sym_name.data, input_types=input_types)
    with graph:
        env: dict[SSAValue, Any] = {a: v.tensor for a, v in zip(block.args, graph.inputs)}
        ret = _lower_block(cx, block, env)
        graph.output(*[env[v] for v in ret.operands])
    result_specs = [spec_of_type(v.type, "result") for v in ret.operands]
    return LoweredGraph(graph, arg_specs, result_specs, spec)


def _lower_block(cx: Ctx, block: Block, env: dict[SSAValue, Any]) -> Operation:
    """Lower the ops of ``block`` into ``env``; returns its terminator."""
    for op in block.ops:
        if op.name in (func.ReturnOp.name, REGION_YIELD):
            return op
        if op.name == FUSED_REGION:  # inline the body: block arguments are the operands
            body = op.regions[0].block
            inner = dict(env)
            inner.update({a: env[v] for a, v in zip(body.args, op.operands)})
            y = _lower_block(cx, body, inner)
            for r, v in zip(op.results, y.operands):
                env[r] = inner[v]
            continue
        assert isinstance(op, PyflameOp)
        _lower_op(cx, op, env)
    raise MaxLoweringError("", "block has no terminator")


def _lower_op(cx: Ctx, op: PyflameOp, env: dict[SSAValue, Any]) -> None:
    name = op.OPDEF.name
    call = OpCall(name, op.py_attrs(),
                  [spec_of_type(v.type, "operand") for v in op.operands],
                  [spec_of_type(r.type, "result") for r in op.results])
    try:
        rule = rule_for(name)
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
        want = [str(x) for x in cx.shape(shape)]
        if got != want or v.dtype != max_dtype(d):
            raise MaxLoweringError(name, f"result #{i} lowered to "
                                         f"{getattr(v.dtype, 'name', v.dtype)} [{', '.join(got)}], "
                                         f"expected {d.name} {list(shape)}")
        env[r] = v


def lower_module(module: ModuleOp, device: str = "cpu") -> LoweredGraph:
    """The backend's entry point: the module's single ``func.func`` as a graph."""
    return lower_function(find_main(module), device, "pyflame_main")


def max_text(module: ModuleOp, device: str = "cpu") -> str:
    """MO text of every function of ``module`` (one ``mo.graph`` each), uncompiled."""
    return "\n".join(lower_function(fn, device).text for fn in functions(module)) + "\n"


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
    stream.write(max_text(module, device))


def missing_lowerings() -> list[str]:
    """Ops of the op table without a MAX rule (a test keeps this empty)."""
    return sorted(n for n in OPS if rule_for(n) is None)
