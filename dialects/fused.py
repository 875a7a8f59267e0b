"""Fused ops: the named ones the fusion pass emits, and the chunked evaluator
behind them and behind the general ``pyflame.fused`` region op.

Every fused op means exactly the chain of existing ops it replaces: its shape
rule composes their rules and its kernel calls their kernels from ``OPS``
(one source of semantics). What fusion buys on the reference backend is
memory traffic: a ``FusedProgram`` runs the whole chain over cache-sized
chunks of the output, writing each step into the output chunk itself or into
a small reused scratch buffer, instead of one full-size temporary per op.

    fused_add_relu(a, b)        = relu(add(a, b))
    fused_mul_sigmoid(a, b)     = sigmoid(mul(a, b))
    fused_fma(a, b, c)          = add(mul(a, b), c)       (two roundings, like the chain)
    fused_matmul_relu(a, b)     = relu(matmul(a, b))
    fused_matmul_gelu(a, b)     = gelu(matmul(a, b), approximate)

Plain Python and numpy: importing this module must not import xDSL.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import elementwise, linalg  # noqa: F401  (the ops fused here are defined first)
from .dtypes import DType
from .opdef import OPS, OpDef, Shape, ShapeError, Spec, define, numel

# Elements per chunk: a few chunk-sized buffers stay in L2 (1 MiB here).
# bench/fusion.py measures the choice.
DEFAULT_CHUNK_ELEMS = 65536
# Reductions a program may end with: each output element depends only on the
# input elements along ``dims``, so chunks along other axes reduce on their own.
REDUCTIONS = frozenset({"sum", "mean", "max", "min", "logsumexp"})


# ---- programs: an elementwise chain (optionally ending in a reduction) ----

@dataclass
class ProgramOp:
    """One step of a program. ``inputs`` index values: the program's inputs
    first, then its constants, then the results of earlier steps."""

    name: str
    kernel: Callable[..., Any]
    inputs: tuple[int, ...]
    attrs: dict[str, Any]
    shape: Shape
    dtype: np.dtype
    accepts_out: bool  # the kernel takes ``out=`` (a numpy ufunc or a wrapper of one)
    kind: str = "elementwise"  # "elementwise" | "broadcast" | "reduce" | "other"

    @staticmethod
    def of(opdef: OpDef, inputs: Sequence[int], attrs: dict[str, Any], shape: Shape,
           dtype: np.dtype) -> ProgramOp:
        """A step running ``opdef``'s own kernel; ``kind`` from the op table."""
        if opdef.elementwise:
            kind = "elementwise"
        elif opdef.name == "broadcast_to":
            kind = "broadcast"
        elif opdef.name in REDUCTIONS:
            kind = "reduce"
        else:
            kind = "other"
        return ProgramOp(opdef.name, opdef.kernel, tuple(inputs), dict(attrs), tuple(shape),
                         np.dtype(dtype), opdef.ufunc and kind == "elementwise", kind)


@dataclass
class _Layout:
    """How the iteration space ``shape`` is cut: axes before ``axis`` one index
    at a time, ``axis`` in runs of ``step``; later axes whole."""

    shape: Shape
    axis: int
    step: int

    def chunks(self) -> list[tuple[tuple[int, ...], int, int]]:
        prefixes = itertools.product(*(range(d) for d in self.shape[:self.axis]))
        size = self.shape[self.axis]
        return [(p, j, min(j + self.step, size)) for p in prefixes
                for j in range(0, size, self.step)]

    def index(self, vshape: Shape, prefix: tuple[int, ...], j0: int, j1: int) -> tuple:
        """Index of one chunk into a value of shape ``vshape`` (broadcastable to
        ``shape``): leading axes by integers, the chunk axis by a slice."""
        off = len(self.shape) - len(vshape)
        idx: list[Any] = []
        for a in range(max(off, 0), self.axis):
            idx.append(0 if vshape[a - off] == 1 else prefix[a])
        if self.axis >= off:
            idx.append(slice(0, 1) if vshape[self.axis - off] == 1 else slice(j0, j1))
        return tuple(idx)

    def varies(self, vshape: Shape) -> bool:
        """Whether a value of this shape has different data in different chunks."""
        off = len(self.shape) - len(vshape)
        return any(vshape[a - off] > 1 for a in range(max(off, 0), self.axis + 1))

    def chunk_shape(self, vshape: Shape) -> Shape:
        """Shape of the largest chunk of a value."""
        off = len(self.shape) - len(vshape)
        if self.axis < off:
            return tuple(vshape)
        k = self.axis - off
        n = 1 if vshape[k] == 1 else min(self.step, vshape[k])
        return (n,) + tuple(vshape[k + 1:])


def plan_layout(shape: Shape, chunk_elems: int, max_axis: int) -> _Layout | None:
    """Chunks of about ``chunk_elems`` elements, cut along axes ``<= max_axis``;
    None when the space is small or cannot be cut."""
    n = numel(shape)
    if not shape or n <= 2 * chunk_elems or max_axis < 0:
        return None
    max_axis = min(max_axis, len(shape) - 1)
    inner = n
    for k in range(max_axis + 1):
        inner //= shape[k]
        if inner <= chunk_elems:
            return _Layout(tuple(shape), k, max(1, chunk_elems // max(inner, 1)))
    return _Layout(tuple(shape), max_axis, 1)


class FusedProgram:
    """Evaluates a chain of elementwise steps (with broadcasting, explicit
    ``broadcast_to`` views and constants), optionally ending in one reduction,
    in one pass over cache-sized chunks of the data.

    Called as ``program(*inputs, out=None)``. Steps whose values are the same
    in every chunk (they only see broadcast dimensions) run once, before the
    loop. Inside the loop every ``out=``-capable step writes into the output
    chunk (when it feeds the output directly) or into a chunk-sized scratch
    buffer that is reused as soon as its value is dead, so the data is read
    once and written once. A reduction reduces each chunk on its own when the
    chunks run along axes it keeps; otherwise the chain is written chunk by
    chunk into one full buffer that is reduced once. A program with a step the
    chunked form does not support (``kind == "other"``) runs unchunked, step
    by step, with the same scratch reuse; so does a chain of at most two
    ``out=`` ufuncs, in place on the output (cheaper than a chunk loop).

    Results never alias inputs or scratch. Scratch belongs to the program, so
    one program must not run in two threads at once.
    """

    def __init__(self, input_specs: Sequence[tuple[Shape, np.dtype]],
                 constants: Sequence[np.ndarray], ops: Sequence[ProgramOp],
                 chunk_elems: int = DEFAULT_CHUNK_ELEMS):
        if not ops:
            raise ValueError("a fused program needs at least one step")
        self.input_specs = [(tuple(s), np.dtype(d)) for s, d in input_specs]
        self.constants = list(constants)
        self.ops = list(ops)
        self.chunk_elems = chunk_elems
        self.shapes: list[Shape] = [s for s, _ in self.input_specs] + \
            [tuple(c.shape) for c in self.constants] + [op.shape for op in self.ops]
        self.dtypes: list[np.dtype] = [d for _, d in self.input_specs] + \
            [c.dtype for c in self.constants] + [op.dtype for op in self.ops]
        self.first_op_value = len(self.input_specs) + len(self.constants)
        for op in self.ops[:-1]:
            if op.kind == "reduce":
                raise ValueError(f"{op.name}: a reduction may only be the last step")
        last = self.ops[-1]
        self.reduction = last if last.kind == "reduce" else None
        self.result_shape, self.result_dtype = last.shape, last.dtype
        # the iteration space: the reduction's input, or the result
        self.root = last.inputs[0] if self.reduction is not None else len(self.shapes) - 1
        self.space = self.shapes[self.root]
        chain = self.ops[:-1] if self.reduction is not None else self.ops
        chunkable = all(op.kind in ("elementwise", "broadcast") for op in chain) \
            and self.root >= self.first_op_value
        self.materialize = False
        # two out=-ufuncs run in place on the whole output faster than chunk by
        # chunk (the loop costs more than the second pass over memory saves);
        # kernels with temporaries of their own (sigmoid, gelu, where) and
        # longer chains win from chunks (bench/fusion.py)
        cheap = self.reduction is None and len(chain) <= 2 and \
            all(op.accepts_out or op.kind == "broadcast" for op in chain)
        if not chunkable or cheap:
            self.layout = None
        elif self.reduction is None:
            self.layout = plan_layout(self.space, chunk_elems, len(self.space) - 1)
        else:
            dims = self.reduction.attrs["dims"]
            first_reduced = min(dims) if dims else len(self.space)
            self.layout = plan_layout(self.space, chunk_elems, first_reduced - 1)
            if self.layout is None:
                self.layout = plan_layout(self.space, chunk_elems, len(self.space) - 1)
                self.materialize = self.layout is not None
        self.scratch: list[np.ndarray] = []
        self.source = self._generate()

    @property
    def nbytes(self) -> int:
        """Bytes of scratch the program keeps between calls."""
        return sum(b.nbytes for b in self.scratch)

    def __call__(self, *inputs: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        return self._run(*inputs, out=out)

    # ---- analysis ----

    def _varying(self) -> list[bool]:
        """Per value: does its data differ between chunks?"""
        lay = self.layout
        if lay is None:
            return [True] * len(self.shapes)
        varies = [lay.varies(s) for s in self.shapes]
        first = self.first_op_value
        for i, op in enumerate(self.ops):
            if op.kind in ("elementwise", "broadcast"):
                varies[first + i] = any(varies[v] for v in op.inputs)
        if not varies[self.root]:  # the chain's end is written chunk by chunk anyway
            for i in range(self.root - first + 1):
                varies[first + i] = True
        return varies

    def _into_output(self, uses: list[list[int]]) -> set[int]:
        """Values computed straight into the output chunk: the chain's end and,
        back from it, each single-use producer of the same shape and dtype."""
        first, ops = self.first_op_value, self.ops
        into: set[int] = set()
        if self.reduction is not None and not self.materialize:
            return into
        v = self.root
        while True:
            op = ops[v - first]
            if op.kind != "elementwise" or not op.accepts_out or op.shape != self.space \
                    or op.dtype != self.dtypes[self.root]:
                return into
            into.add(v)
            src = next((u for u in op.inputs if u >= first and len(uses[u]) == 1
                        and ops[u - first].kind == "elementwise"), None)
            if src is None:
                return into
            v = src

    # ---- code generation ----

    def _generate(self) -> str:
        lay, ops, first = self.layout, self.ops, self.first_op_value
        n_in = len(self.input_specs)
        red = self.reduction
        uses: list[list[int]] = [[] for _ in self.shapes]
        for i, op in enumerate(ops):
            for v in op.inputs:
                uses[v].append(i)
        # a broadcast view keeps the buffer it looks into alive
        buffer_of = list(range(len(self.shapes)))
        end_of = [max(u) if u else -1 for u in uses]
        for i, op in enumerate(ops):
            if op.kind == "broadcast":
                b = buffer_of[first + i] = buffer_of[op.inputs[0]]
                end_of[b] = max(end_of[b], end_of[first + i])
        varies = self._varying()
        into = self._into_output(uses)
        write_out = red is None or self.materialize  # the chain's end goes to ``oc``

        env: dict[str, Any] = {"np": np, "broadcast_to": np.broadcast_to}
        pre: list[str] = []  # runs once, before the chunk loop
        body: list[str] = []  # runs per chunk
        row_names: list[str] = []  # per-chunk values, unpacked from the chunk table
        row_items: list[Callable[[tuple, int, int], Any]] = []
        name = [""] * len(self.shapes)

        def per_chunk(var: str, item: Callable[[tuple, int, int], Any]) -> None:
            row_names.append(var)
            row_items.append(item)

        def chunk_of(v: int) -> Shape:  # the largest chunk of value v
            return lay.chunk_shape(self.shapes[v]) if lay is not None else self.shapes[v]

        # inputs and constants: whole, indexed per chunk, or indexed once
        for v in range(first):
            shape = self.shapes[v]
            src = f"x{v}" if v < n_in else f"c{v}"
            if v >= n_in:
                env[src] = self.constants[v - n_in]
            if lay is None:
                name[v] = src
            elif varies[v] and v < n_in:
                per_chunk(f"i{v}", lambda p, j0, j1, s=shape: lay.index(s, p, j0, j1))
                body.append(f"a{v} = {src}[i{v}]")
                name[v] = f"a{v}"
            elif varies[v]:  # a constant: the chunk table holds its views
                const = self.constants[v - n_in]
                per_chunk(f"a{v}", lambda p, j0, j1, s=shape, c=const:
                          c[lay.index(s, p, j0, j1)])
                name[v] = f"a{v}"
            else:
                idx = lay.index(shape, (0,) * lay.axis, 0, 1)
                if idx:
                    env[f"j{v}"] = idx
                    pre.append(f"a{v} = {src}[j{v}]")
                    name[v] = f"a{v}"
                else:
                    name[v] = src

        # the steps; scratch comes from pools keyed by (chunk shape, dtype)
        pools: dict[tuple, list[int]] = {}
        scratch_specs: list[tuple[Shape, np.dtype]] = []
        held: dict[int, int] = {}  # value -> scratch buffer number

        def release(i: int, values: Sequence[int]) -> None:
            for u in values:
                b = buffer_of[u]
                if b in held and end_of[b] == i:
                    pools.setdefault((chunk_of(b), self.dtypes[b]), []).append(held.pop(b))

        for i, op in enumerate(ops):
            v = first + i
            if op.kind == "reduce":
                continue  # emitted with the loop below
            lines = body if varies[v] else pre
            args = [name[u] for u in op.inputs]
            for k, val in op.attrs.items():
                env[f"p{i}_{k}"] = val
                args.append(f"{k}=p{i}_{k}")
            name[v] = f"t{v}"
            if op.kind == "broadcast":
                if lay is not None and varies[v]:
                    per_chunk(f"bs{v}", lambda p, j0, j1, s=self.shapes[v]:
                              _chunk_target(lay, s, j0, j1))
                else:
                    env[f"bs{v}"] = (self.shapes[v] if lay is None
                                     else _chunk_target(lay, self.shapes[v], 0, 1))
                lines.append(f"t{v} = broadcast_to({name[op.inputs[0]]}, bs{v})")
                continue
            env[f"k{i}"] = op.kernel
            at_shape = getattr(op.kernel, "at_shape", None) if lay is None else None
            fixed = at_shape(op.shape, op.dtype) if at_shape is not None else None
            if fixed is not None:  # the kernel for this shape, called with no frame of ours
                env[f"k{i}"] = fixed[0]
                for j, extra in enumerate(fixed[1]):
                    env[f"e{i}_{j}"] = extra
                    args.insert(len(op.inputs) + j, f"e{i}_{j}")
            call = f"k{i}({', '.join(args)}"
            # numpy reads a positional ``out`` faster than the keyword (~45 ns a call:
            # a chain on small tensors is made of these calls); see _positional_out
            k = env[f"k{i}"]
            out_kw = ", " if type(k) is np.ufunc and not op.attrs and \
                _positional_out(k, len(args)) else ", out="  # (attrs: keyword arguments)
            if v in into:
                lines.append(f"t{v} = {call}{out_kw}oc)")
            elif op.accepts_out and varies[v]:
                release(i, op.inputs)  # dying inputs first: the step may run in place
                key = (chunk_of(v), op.dtype)
                pool = pools.get(key)
                b = pool.pop() if pool else len(scratch_specs)
                if b == len(scratch_specs):
                    scratch_specs.append(key)
                held[v] = b
                if lay is None:
                    lines.append(f"t{v} = {call}{out_kw}s{b})")
                else:
                    per_chunk(f"w{v}", lambda p, j0, j1, b=b, s=self.shapes[v]:
                              _scratch_view(self.scratch[b], _chunk_target(lay, s, j0, j1)))
                    lines.append(f"t{v} = {call}{out_kw}w{v})")
            else:
                lines.append(f"t{v} = {call})")
            if varies[v]:
                release(i, op.inputs)
        if write_out and self.root not in into:
            body.append(f"np.copyto(oc, {name[self.root]})")

        self.scratch = [np.empty(s, d) for s, d in scratch_specs]
        for b, arr in enumerate(self.scratch):
            env[f"s{b}"] = arr
        env["rshape"], env["rdtype"] = self.result_shape, self.result_dtype

        code = ["def program(" + "".join(f"x{v}, " for v in range(n_in)) + "out=None):"]
        if self.materialize:
            full = np.empty(self.space, self.dtypes[self.root])
            self.scratch.append(full)
            env["full"] = full
            code.append("    o = full")
        elif red is None or lay is not None:
            code.append("    o = np.empty(rshape, rdtype) if out is None else out")
        code += ["    " + line for line in pre]
        if red is not None:
            rattrs = dict(red.attrs)
            env["kred"] = red.kernel
            env["rkw"] = rattrs
        if lay is None:
            if write_out:
                code.append("    oc = o[...]")
            code += ["    " + line for line in body]
        else:
            reduce_chunks = red is not None and not self.materialize
            if reduce_chunks:
                env["rkw_chunk"] = dict(rattrs, dims=tuple(d - lay.axis
                                                           for d in rattrs["dims"]))
            table = []
            for p, j0, j1 in lay.chunks():
                row = [item(p, j0, j1) for item in row_items]
                row.append(tuple(p) + (slice(j0, j1),) if reduce_chunks
                           else lay.index(self.space, p, j0, j1))
                table.append(tuple(row))
            env["CHUNKS"] = table
            code.append("    for " + "".join(f"{n}, " for n in row_names) + "io in CHUNKS:")
            if write_out:
                code.append("        oc = o[io]")
            code += ["        " + line for line in body]
            if reduce_chunks:
                code.append(f"        o[io] = kred({name[self.root]}, **rkw_chunk)")
        if red is not None and (lay is None or self.materialize):
            source = "full" if self.materialize else name[self.root]
            code += [f"    r = np.asarray(kred({source}, **rkw))",
                     "    if out is None:",
                     "        return r",
                     "    np.copyto(out, r)",
                     "    return out"]
        else:
            code.append("    return o")
        source = "\n".join(code) + "\n"
        exec(compile(source, "<pyflame fused program>", "exec"), env)  # noqa: S102
        self._run = env["program"]
        return source


# numpy 2.4 deprecates a third positional argument of these two (gh-27639)
_KEYWORD_OUT = (np.maximum, np.minimum)


def _positional_out(kernel: np.ufunc, nargs: int) -> bool:
    """Whether ``kernel(*args, out)`` may pass its output positionally (the
    same call as ``out=out`` for a numpy ufunc): one output, called with
    exactly its ``nin`` operands, and not ``maximum``/``minimum``."""
    return kernel.nout == 1 and nargs == kernel.nin and kernel not in _KEYWORD_OUT


def _scratch_view(buf: np.ndarray, shape: Shape) -> np.ndarray:
    """The part of a chunk-sized scratch buffer a (possibly shorter) chunk uses."""
    return buf if buf.shape == shape else buf[: shape[0]]


def _chunk_target(lay: _Layout, vshape: Shape, j0: int, j1: int) -> Shape:
    """Shape of one chunk (``j0:j1`` along the chunk axis) of a value."""
    off = len(lay.shape) - len(vshape)
    if lay.axis < off:
        return tuple(vshape)
    k = lay.axis - off
    n = 1 if vshape[k] == 1 else j1 - j0
    return (n,) + tuple(vshape[k + 1:])


# ---- the named fused ops ----

# name -> the chain it stands for: (op, operand refs, attr names) per step;
# a ref >= 0 is an operand of the fused op, -1 the previous step's result.
# Backends without a kernel of their own lower a fused op as this chain: its
# OpDef's ``decomposition`` (what the ``unfuse`` pass runs) builds it.
CHAINS: dict[str, tuple[tuple[str, tuple[int, ...], tuple[str, ...]], ...]] = {}
# per thread: kernels keep chunk scratch between calls
_PROGRAMS = threading.local()
_PROGRAM_CACHE_LIMIT = 64  # each keeps at most a few chunks of scratch


def _chain_rule(name: str) -> Callable:
    def infer(shapes: Sequence[Shape], dtypes: Sequence[DType], attrs: dict
              ) -> tuple[Spec, ...]:
        prev: Spec | None = None
        for op, refs, attr_names in CHAINS[name]:
            specs = [prev if r < 0 else (shapes[r], dtypes[r]) for r in refs]
            try:
                (prev,) = OPS[op].check([s for s, _ in specs], [d for _, d in specs],
                                        {k: attrs[k] for k in attr_names})
            except ShapeError as e:
                raise ShapeError(name, f"{e.reason} (in its {op} step)") from None
        assert prev is not None
        return (prev,)
    return infer


def _programs() -> dict:
    cache = getattr(_PROGRAMS, "cache", None)
    if cache is None:
        cache = _PROGRAMS.cache = {}
    return cache


def _elementwise_chain_kernel(name: str) -> Callable[..., np.ndarray]:
    """Kernel of a chain of elementwise ops: one FusedProgram per input
    signature (and thread), built on first use."""
    chain = CHAINS[name]

    def kernel(*xs: np.ndarray, out: np.ndarray | None = None, **attrs: Any) -> np.ndarray:
        arrays = [np.asarray(x) for x in xs]
        key = (name, tuple((a.shape, a.dtype) for a in arrays),
               tuple(sorted(attrs.items())))
        cache = _programs()
        program = cache.get(key)
        if program is None:
            if len(cache) > _PROGRAM_CACHE_LIMIT:
                cache.clear()
            program = cache[key] = _chain_program(chain, [(a.shape, a.dtype) for a in arrays],
                                                  attrs)
        return program(*arrays, out=out)
    kernel.__name__ = name
    return kernel


def chain_program(name: str, input_specs: Sequence[tuple[Shape, np.dtype]],
                  attrs: dict[str, Any]) -> FusedProgram | None:
    """The program of the named elementwise chain ``name`` for inputs of these
    shapes and dtypes, built ahead of time (a plan knows its shapes); None for
    a chain that is not all elementwise (a matmul epilogue)."""
    chain = CHAINS[name]
    if not all(OPS[op].elementwise for op, _, _ in chain):
        return None
    return _chain_program(chain, input_specs, attrs)


def _chain_program(chain: Sequence[tuple[str, tuple[int, ...], tuple[str, ...]]],
                   input_specs: Sequence[tuple[Shape, np.dtype]], attrs: dict[str, Any]
                   ) -> FusedProgram:
    from .dtypes import dtype as to_dtype

    shapes = [s for s, _ in input_specs]
    dts = [to_dtype(d) for _, d in input_specs]
    ops: list[ProgramOp] = []
    prev: int | None = None
    for op, refs, attr_names in chain:
        ins = [prev if r < 0 else r for r in refs]
        opdef = OPS[op]
        a = {k: attrs[k] for k in attr_names}
        ((shape, d),) = opdef.check([shapes[i] for i in ins], [dts[i] for i in ins], a)
        ops.append(ProgramOp.of(opdef, ins, a, shape, d.np))
        shapes.append(shape)
        dts.append(d)
        prev = len(shapes) - 1
    return FusedProgram(input_specs, [], ops)


def _matmul_epilogue_kernel(name: str) -> Callable[..., np.ndarray]:
    """``matmul`` (its own kernel), then the activation in place, by chunks."""
    (_, _, _), (act, _, act_attrs) = CHAINS[name]
    matmul = OPS["matmul"].kernel

    def kernel(a: np.ndarray, b: np.ndarray, **attrs: Any) -> np.ndarray:
        r = np.asarray(matmul(a, b))
        if not r.flags.writeable or r.base is not None:
            r = r.copy()
        key = (name, r.shape, r.dtype, tuple(sorted(attrs.items())))
        cache = _programs()
        program = cache.get(key)
        if program is None:
            if len(cache) > _PROGRAM_CACHE_LIMIT:
                cache.clear()
            program = cache[key] = _chain_program(((act, (0,), act_attrs),),
                                                  [(r.shape, r.dtype)], attrs)
        return program(r, out=r)
    kernel.__name__ = name
    return kernel


def _chain_decomposition(name: str) -> Callable[..., list[Any]]:
    """The fused op as its chain, step by step, with the builder of dialects/ad.py."""
    chain = CHAINS[name]

    def decomposition(b: Any, inputs: Sequence[Any], **attrs: Any) -> list[Any]:
        prev: Any = None
        for op, refs, attr_names in chain:
            args = [prev if r < 0 else inputs[r] for r in refs]
            prev = b.op(op, *args, **{k: attrs[k] for k in attr_names})
        return [prev]
    return decomposition


def _define_fused(name: str, chain: tuple, attrs: dict[str, str] | None = None,
                  doc: str = "") -> OpDef:
    CHAINS[name] = chain
    n_inputs = 1 + max(r for _, refs, _ in chain for r in refs)
    pointwise = all(OPS[op].elementwise for op, _, _ in chain)
    kernel = _elementwise_chain_kernel(name) if pointwise else _matmul_epilogue_kernel(name)
    return define(OpDef(name, "fused", _chain_rule(name), kernel, n_inputs, attrs or {},
                        ufunc=pointwise, elementwise=pointwise, doc=doc,
                        decomposition=_chain_decomposition(name)))


_define_fused("fused_add_relu", (("add", (0, 1), ()), ("relu", (-1,), ())),
              doc="relu(add(a, b)) in one pass")
_define_fused("fused_mul_sigmoid", (("mul", (0, 1), ()), ("sigmoid", (-1,), ())),
              doc="sigmoid(mul(a, b)) in one pass")
_define_fused("fused_fma", (("mul", (0, 1), ()), ("add", (-1, 2), ())),
              doc="add(mul(a, b), c) in one pass (rounded after each step, like the chain)")
_define_fused("fused_matmul_relu", (("matmul", (0, 1), ()), ("relu", (-1,), ())),
              doc="relu(matmul(a, b)), the activation applied in place")
_define_fused("fused_matmul_gelu",
              (("matmul", (0, 1), ()), ("gelu", (-1,), ("approximate",))),
              {"approximate": "str"},
              doc="gelu(matmul(a, b)), the activation applied in place")

NAMED_FUSED = tuple(CHAINS)

__all__ = ["CHAINS", "DEFAULT_CHUNK_ELEMS", "NAMED_FUSED", "REDUCTIONS", "FusedProgram",
           "ProgramOp", "chain_program", "plan_layout"]
