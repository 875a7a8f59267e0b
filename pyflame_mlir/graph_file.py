"""PFGB: recorded graphs in a small binary file (``pf.save_graph`` / ``pf.load_graph``).

The format, byte by byte, is documented in ``docs/guide/graph_files.md``; in
short (little-endian throughout)::

    header   magic "PFGB" | version u16 | flags u16 | node count u64          (16 bytes)
    node     id u64 | node type u8 | op code u8 | name u16 + UTF-8 |
             rank u8 | dims i64 x rank | dtype u8 | layout u8 (+ params) |
             input count u16 | input refs u64 x n | data length u64 + bytes
    footer   output count u32 | output refs u64 x n | CRC32 u32 of everything before it

A node's *data* is a leaf's value (when ``FLAG_LEAF_DATA`` is set), a
constant's elements, or an op's attribute block. An input or output
*reference* is a node id, with the result index of a multi-result op in its
top 16 bits. Nodes come in topological order; leaves, in file order, are the
program's arguments.

Reading never trusts the file: every count and length is checked against the
bytes that are left before anything is allocated, ids must be unique and
defined before use (no cycles), every op is re-checked by its shape rule, and
any violation raises ``GraphFileError`` naming the byte offset and the rule.
"""

from __future__ import annotations

import os
import struct
import sys
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .core import CONFIG, Tensor, collect, record, split_ref
from .dialects.data import DenseValue
from .dialects.dtypes import ALL_DTYPES, DType
from .dialects.opdef import OPS, OpDef, ShapeError

__all__ = ["GraphFileError", "GraphProgram", "load_graph", "save_graph"]

MAGIC = b"PFGB"
VERSION = 1
FLAG_LEAF_DATA = 1  # leaves carry their values (the program's default inputs)
KNOWN_FLAGS = FLAG_LEAF_DATA

LEAF, CONSTANT, OP = 0, 1, 2  # node types
LAYOUT_ROW_MAJOR = 0  # dense, row-major; no parameters
MAX_RANK = 32
MAX_DIM = 1 << 40  # a dimension above this is corrupt, not a tensor
MAX_ELEMENTS = 1 << 48
RESULT_SHIFT = 48  # a reference: result index << 48 | node id
MAX_NODE_ID = (1 << RESULT_SHIFT) - 1

# Element types: the code is the position (append-only).
DTYPE_CODES: dict[DType, int] = {d: i for i, d in enumerate(ALL_DTYPES)}

# Op codes: the position in this list plus one (0 is "no op", for leaves).
# APPEND-ONLY: a new op goes at the end; never reorder or remove (files in the
# wild name ops by these numbers). test_graph_file.py pins the list and checks
# every op of the op table has a code; docs/guide/graph_files.md prints it.
OP_NAMES: tuple[str, ...] = (
    "constant", "iota",
    # elementwise unary
    "neg", "abs", "sign", "square", "relu", "exp", "log", "sqrt", "rsqrt", "sin", "cos",
    "tanh", "log1p", "reciprocal", "sigmoid", "erf", "gelu", "logical_not", "floor", "ceil",
    "round", "trunc", "expm1", "atan", "asin", "acos", "bitwise_not",
    # elementwise binary and ternary
    "add", "sub", "mul", "div", "pow", "maximum", "minimum", "eq", "ne", "lt", "le", "gt",
    "ge", "logical_and", "logical_or", "atan2", "fmod", "floor_divide", "bitwise_and",
    "bitwise_or", "bitwise_xor", "where", "convert",
    # reductions, scans, sorting
    "sum", "mean", "max", "min", "argmax", "argmin", "prod", "cumsum", "cumprod",
    "logcumsumexp", "cummax", "cummin", "sort", "select_along", "scatter_add_along",
    # linalg, shape, indexing, nn
    "matmul", "reshape", "permute", "broadcast_to", "slice", "concat", "split", "pad",
    "gather", "scatter_add", "softmax", "log_softmax", "logsumexp",
    # fused
    "fused_add_relu", "fused_mul_sigmoid", "fused_fma", "fused_matmul_relu",
    "fused_matmul_gelu",
    # matrix decompositions and solvers (dialects/decomp.py)
    "solve", "solve_triangular", "cholesky", "slogdet", "det", "qr", "eigh", "svd", "pinv",
    "matrix_exp",
    # issue 14 (s10-surface14): LU with partial pivoting
    "lu_factor",
    # issue 14 (s12-pool): max pooling and its transpose
    "max_pool", "max_pool_grad",
    # issue 14 (s12-pool): gelu's derivative from its forward
    "gelu_grad",
)
OP_CODES: dict[str, int] = {name: i + 1 for i, name in enumerate(OP_NAMES)}

# attribute kinds (opdef.ATTR_KINDS) -> their code in an attribute block
ATTR_KIND_CODES: dict[str, int] = {"int": 0, "bool": 1, "float": 2, "str": 3, "ints": 4,
                                   "opt_int": 5, "opt_str": 6, "dtype": 7, "dense": 8}
_KIND_OF_CODE = {c: k for k, c in ATTR_KIND_CODES.items()}


class GraphFileError(ValueError):
    """A PFGB file that is not valid: names the file, the byte offset and the rule."""

    def __init__(self, where: str, offset: int, rule: str):
        super().__init__(f"{where}: invalid PFGB graph file at byte {offset}: {rule}")
        self.offset = offset
        self.rule = rule


def _le(a: np.ndarray) -> bytes:
    a = np.ascontiguousarray(a)
    if sys.byteorder == "big" and a.dtype.itemsize > 1:
        a = a.byteswap()
    return a.tobytes()


# ---- writing ----

class _Out:
    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def pack(self, fmt: str, *v: Any) -> None:
        self.parts.append(struct.pack("<" + fmt, *v))

    def raw(self, b: bytes) -> None:
        self.parts.append(b)

    def text(self, s: str) -> None:
        b = s.encode()
        if len(b) > 0xFFFF:
            raise ValueError(f"save_graph: a name or string of {len(b)} bytes (at most 65535)")
        self.pack("H", len(b))
        self.raw(b)

    def spec(self, shape: Sequence[int], d: DType) -> None:
        if len(shape) > MAX_RANK:
            raise ValueError(f"save_graph: rank {len(shape)} above {MAX_RANK}")
        self.pack("B", len(shape))
        self.pack(f"{len(shape)}q", *shape)
        self.pack("B", DTYPE_CODES[d])

    def value(self) -> bytes:
        return b"".join(self.parts)


def _attr_block(op: OpDef, attrs: dict[str, Any]) -> bytes:
    out = _Out()
    out.pack("H", len(attrs))
    for name, v in attrs.items():
        kind = op.attrs.get(name)
        if kind not in ATTR_KIND_CODES:
            raise ValueError(f"save_graph: op {op.name}: attribute {name!r} of kind {kind} "
                             "cannot be stored in a graph file")
        out.text(name)
        out.pack("B", ATTR_KIND_CODES[kind])
        if kind in ("opt_int", "opt_str"):
            out.pack("B", v is not None)
            if v is None:
                continue
            kind = kind[4:]
        if kind == "int":
            out.pack("q", v)
        elif kind == "bool":
            out.pack("B", bool(v))
        elif kind == "float":
            out.pack("d", v)
        elif kind == "str":
            out.text(v)
        elif kind == "ints":
            out.pack("H", len(v))
            out.pack(f"{len(v)}q", *v)
        elif kind == "dtype":
            out.pack("B", DTYPE_CODES[v])
        else:  # dense
            out.spec(v.shape, v.dtype)
            out.pack("B", v.array.ndim == 0)
            data = _le(v.array)
            out.pack("Q", len(data))
            out.raw(data)
    return out.value()


def save_graph(tensors: Tensor | Sequence[Tensor], path: str | os.PathLike,
               include_inputs: bool = True) -> None:
    """Write the graph computing ``tensors`` to ``path`` in the PFGB format.
    The realized tensors it reads are its leaves (the loaded program's
    arguments, in order); their values are stored too unless
    ``include_inputs`` is false. Nothing is computed."""
    outs = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    if not outs or not all(isinstance(t, Tensor) for t in outs):
        raise TypeError("save_graph: expects a Tensor or a non-empty sequence of Tensors")
    sub = collect(outs)
    if not sub.nodes and CONFIG.eager:  # not the graph the user means: its stored value
        raise ValueError("save_graph: nothing recorded to save (eager mode, PYFLAME_EAGER=1: "
                         "every op ran when it was recorded); record the graph lazily with "
                         "pf.CONFIG.eager = False")
    for n in sub.nodes:
        if n.op.name not in OP_CODES:
            why = ("a traced function (grad, vjp, jvp or vmap of a function); compute it "
                   "first or save the graph before the transform"
                   ) if n.op.family == "transform" else \
                "it has no PFGB op code (append it to graph_file.OP_NAMES)"
            raise ValueError(f"save_graph: cannot store op {n.op.name}: {why}")
    out = _Out()
    n_nodes = len(sub.leaves) + len(sub.nodes)
    out.raw(MAGIC)
    out.pack("HHQ", VERSION, FLAG_LEAF_DATA if include_inputs else 0, n_nodes)

    n_leaves = len(sub.leaves)

    def ref(r: int) -> int:  # a subgraph reference -> a file reference
        pos, idx = split_ref(r)
        return -1 - pos if pos < 0 else (idx << RESULT_SHIFT) | (n_leaves + pos)

    for i, leaf in enumerate(sub.leaves):
        out.pack("QBB", i, LEAF, 0)
        out.text(f"arg{i}")
        out.spec(leaf.shape, leaf.dtype)
        out.pack("BH", LAYOUT_ROW_MAJOR, 0)
        data = _le(leaf._value) if include_inputs else b""
        out.pack("Q", len(data))
        out.raw(data)
    for pos, (node, refs) in enumerate(zip(sub.nodes, sub.refs)):
        op = node.op
        is_const = op.name == "constant"
        out.pack("QBB", n_leaves + pos, CONSTANT if is_const else OP, OP_CODES[op.name])
        out.text(op.name)
        shape, d = node.specs[0]
        out.spec(shape, d)
        out.pack("BH", LAYOUT_ROW_MAJOR, len(refs))
        out.pack(f"{len(refs)}Q", *[ref(r) for r in refs])
        if is_const:
            v: DenseValue = node.attrs["value"]
            data = _le(v.array)
        else:
            data = _attr_block(op, node.attrs)
        out.pack("Q", len(data))
        out.raw(data)
    refs_out = [ref(r) for r in sub.outputs[:len(outs)]]
    out.pack("I", len(refs_out))
    out.pack(f"{len(refs_out)}Q", *refs_out)
    body = out.value()
    blob = body + struct.pack("<I", zlib.crc32(body))
    path = os.fspath(path)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(blob)
    os.replace(tmp, path)  # never a half-written file under the name


# ---- reading ----

class _In:
    """A cursor over the file's bytes; every read is checked against the end."""

    def __init__(self, data: bytes, end: int, where: str):
        self.data = data
        self.pos = 0
        self.end = end  # the footer's CRC is not readable as a node
        self.where = where

    def fail(self, rule: str, at: int | None = None) -> GraphFileError:
        return GraphFileError(self.where, self.pos if at is None else at, rule)

    def need(self, n: int, what: str) -> None:
        if n < 0 or self.pos + n > self.end:
            raise self.fail(f"{what} needs {n} bytes, {self.end - self.pos} are left "
                            "(truncated file or a length that is too large)")

    def unpack(self, fmt: str, what: str) -> tuple:
        size = struct.calcsize("<" + fmt)
        self.need(size, what)
        v = struct.unpack_from("<" + fmt, self.data, self.pos)
        self.pos += size
        return v

    def one(self, fmt: str, what: str) -> Any:
        return self.unpack(fmt, what)[0]

    def raw(self, n: int, what: str) -> bytes:
        self.need(n, what)
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def text(self, what: str) -> str:
        at = self.pos
        n = self.one("H", f"the length of {what}")
        try:
            return self.raw(n, what).decode()
        except UnicodeDecodeError:
            raise self.fail(f"{what} is not UTF-8", at) from None

    def dtype(self, what: str) -> DType:
        at = self.pos
        code = self.one("B", what)
        if code >= len(ALL_DTYPES):
            raise self.fail(f"unknown dtype code {code} for {what}", at)
        return ALL_DTYPES[code]

    def spec(self, what: str) -> tuple[tuple[int, ...], DType, int]:
        """A shape and dtype, and the element count (checked not to overflow)."""
        at = self.pos
        rank = self.one("B", f"the rank of {what}")
        if rank > MAX_RANK:
            raise self.fail(f"rank {rank} of {what} is above {MAX_RANK}", at)
        dims = self.unpack(f"{rank}q", f"the dims of {what}")
        numel = 1
        for d in dims:
            if not 0 <= d <= MAX_DIM:
                raise self.fail(f"dimension {d} of {what} is negative or above 2**40", at)
            numel *= d
            if numel > MAX_ELEMENTS:
                raise self.fail(f"{what} of shape {list(dims)} has more than 2**48 elements",
                                at)
        return tuple(dims), self.dtype(f"the dtype of {what}"), numel

    def array(self, n_bytes: int, shape: tuple[int, ...], d: DType, what: str) -> np.ndarray:
        at = self.pos
        raw = self.raw(n_bytes, what)  # checked against the file before any allocation
        a = np.frombuffer(raw, dtype=d.np).copy()
        if sys.byteorder == "big" and d.itemsize > 1:
            a = a.byteswap()
        if d.category == 0 and a.view(np.uint8).max(initial=0) > 1:
            raise self.fail(f"{what}: a bool byte other than 0 or 1", at)
        return a.reshape(shape)


def _read_attrs(src: _In, op: OpDef, end: int) -> dict[str, Any]:
    count = src.one("H", "the attribute count")
    if count > len(op.attrs):
        raise src.fail(f"op {op.name} has {len(op.attrs)} attributes, the block claims {count}")
    attrs: dict[str, Any] = {}
    for _ in range(count):
        at = src.pos
        name = src.text("an attribute name")
        kind = op.attrs.get(name)
        if kind is None:
            raise src.fail(f"op {op.name} has no attribute {name!r}", at)
        if name in attrs:
            raise src.fail(f"attribute {name!r} of op {op.name} given twice", at)
        code = src.one("B", "an attribute kind")
        if _KIND_OF_CODE.get(code) != kind:
            raise src.fail(f"attribute {name!r} of op {op.name} is a {kind}, the file says "
                           f"kind code {code}", at)
        if kind in ("opt_int", "opt_str"):
            if src.one("B", f"the presence flag of {name!r}") == 0:
                attrs[name] = None
                continue
            kind = kind[4:]
        if kind == "int":
            v: Any = src.one("q", name)
        elif kind == "bool":
            v = bool(src.one("B", name))
        elif kind == "float":
            v = src.one("d", name)
        elif kind == "str":
            v = src.text(name)
        elif kind == "ints":
            n = src.one("H", f"the length of {name!r}")
            v = src.unpack(f"{n}q", name)
        elif kind == "dtype":
            v = src.dtype(name)
        else:  # dense
            shape, d, numel = src.spec(f"attribute {name!r}")
            splat = src.one("B", f"the splat flag of {name!r}")
            n_bytes = src.one("Q", f"the data length of {name!r}")
            want = d.itemsize if splat else numel * d.itemsize
            if n_bytes != want:
                raise src.fail(f"attribute {name!r}: {n_bytes} data bytes, expected {want}")
            arr = src.array(n_bytes, () if splat else shape, d, f"attribute {name!r}")
            v = DenseValue(arr, shape, d)
        attrs[name] = v
    if src.pos != end:
        raise src.fail(f"the attribute block of op {op.name} has {end - src.pos} bytes left over")
    return attrs


@dataclass
class _Node:
    kind: int
    op: OpDef | None
    attrs: dict[str, Any]
    inputs: tuple[int, ...]
    shape: tuple[int, ...]
    dtype: DType
    value: np.ndarray | None  # a leaf's stored value
    specs: tuple = ()  # every result's (shape, dtype), from the op's shape rule


class GraphProgram:
    """A graph read from a PFGB file. Call it with one array or Tensor per
    leaf (``input_specs``) to record the graph on them; it returns the output
    tensors, lazy (they run on the current backend when read). ``inputs``
    holds the stored leaf values (None when the file has none) and
    ``outputs`` the graph recorded on them."""

    def __init__(self, nodes: list[_Node], outputs: list[int], where: str):
        self._nodes = nodes
        self._outputs = outputs
        self.where = where
        leaves = [n for n in nodes if n.kind == LEAF]
        self.input_specs: list[tuple[tuple[int, ...], DType]] = [(n.shape, n.dtype)
                                                                  for n in leaves]
        self.inputs: list[Tensor] | None = None
        self.outputs: list[Tensor] | None = None
        if all(n.value is not None for n in leaves):
            self.inputs = [Tensor._leaf(n.value) for n in leaves]
            self.outputs = self._record(self.inputs)

    def __call__(self, *args: Any) -> Tensor | tuple[Tensor, ...]:
        if len(args) != len(self.input_specs):
            raise TypeError(f"graph program {self.where}: expects {len(self.input_specs)} "
                            f"inputs, got {len(args)}")
        ins = []
        for i, (a, (shape, d)) in enumerate(zip(args, self.input_specs)):
            t = a if isinstance(a, Tensor) else Tensor._leaf(np.asarray(a))
            if t.shape != shape or t.dtype is not d:
                raise TypeError(f"graph program {self.where}: input {i} must be "
                                f"{d.name}{list(shape)}, got {t.dtype.name}{list(t.shape)}")
            ins.append(t)
        outs = self._record(ins)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _record(self, ins: list[Tensor]) -> list[Tensor]:
        values: list[list[Tensor]] = []
        leaves = iter(ins)
        for n in self._nodes:
            if n.kind == LEAF:
                values.append([next(leaves)])
                continue
            args = tuple(values[r & MAX_NODE_ID][r >> RESULT_SHIFT] for r in n.inputs)
            out = record(n.op, args, n.attrs)
            values.append(out if isinstance(out, list) else [out])
        return [values[r & MAX_NODE_ID][r >> RESULT_SHIFT] for r in self._outputs]


_MIN_NODE = 8 + 1 + 1 + 2 + 1 + 1 + 1 + 2 + 8  # a node with no name, dims, inputs or data


def load_graph(path: str | os.PathLike) -> GraphProgram:
    """Read a PFGB file (``save_graph``) into a ``GraphProgram``; any defect
    raises ``GraphFileError``."""
    where = os.fspath(path)
    with open(where, "rb") as f:
        data = f.read()
    return parse_graph(data, where)


def parse_graph(data: bytes, where: str = "<bytes>") -> GraphProgram:
    """``load_graph`` on bytes in memory."""
    if len(data) < 16 + 4 + 4:
        raise GraphFileError(where, len(data), f"the file has {len(data)} bytes, fewer than "
                             "a header and a footer (truncated?)")
    if data[:4] != MAGIC:
        raise GraphFileError(where, 0, f"magic {data[:4]!r} is not b'PFGB' (not a graph file)")
    version, flags, n_nodes = struct.unpack_from("<HHQ", data, 4)
    if version != VERSION:
        raise GraphFileError(where, 4, f"format version {version}; this reader knows version "
                             f"{VERSION}")
    body_end = len(data) - 4
    (crc,) = struct.unpack_from("<I", data, body_end)
    if zlib.crc32(data[:body_end]) != crc:
        raise GraphFileError(where, body_end, "CRC32 mismatch (corrupted or truncated file)")
    if flags & ~KNOWN_FLAGS:
        raise GraphFileError(where, 6, f"unknown flags 0x{flags:04x}")
    src = _In(data, body_end, where)
    src.pos = 16
    if n_nodes * _MIN_NODE > body_end - 16:
        raise GraphFileError(where, 8, f"node count {n_nodes} cannot fit in the "
                             f"{body_end - 16} bytes of the file")
    nodes: list[_Node] = []
    index: dict[int, int] = {}  # node id -> position
    for _ in range(n_nodes):
        nodes.append(_read_node(src, nodes, index, flags))
    at = src.pos
    n_out = src.one("I", "the output count")
    src.need(n_out * 8, f"{n_out} output references")
    outputs = [_resolve(src, nodes, index, r, at, "an output")
               for r in src.unpack(f"{n_out}Q", "the output references")]
    if not outputs:
        raise src.fail("the graph has no outputs", at)
    if src.pos != body_end:
        raise src.fail(f"{body_end - src.pos} bytes after the footer's output list")
    return GraphProgram(nodes, outputs, where)


def _resolve(src: _In, nodes: list[_Node], index: dict[int, int], r: int, at: int,
             what: str) -> int:
    """A file reference -> (result << 48 | position), checked."""
    node_id, result = r & MAX_NODE_ID, r >> RESULT_SHIFT
    pos = index.get(node_id)
    if pos is None:
        raise src.fail(f"{what} refers to node id {node_id}, which is not defined before it "
                       "(a dangling id, or a cycle: nodes must be in topological order)", at)
    n = nodes[pos]
    n_results = max(len(n.specs), 1)
    if result >= n_results:
        raise src.fail(f"{what} refers to result {result} of node id {node_id}, which has "
                       f"{n_results}", at)
    return (result << RESULT_SHIFT) | pos


def _read_node(src: _In, nodes: list[_Node], index: dict[int, int], flags: int) -> _Node:
    start = src.pos
    node_id, kind, code = src.unpack("QBB", "a node header")
    if node_id > MAX_NODE_ID:
        raise src.fail(f"node id {node_id} is above 2**48 - 1", start)
    if node_id in index:
        raise src.fail(f"duplicate node id {node_id}", start)
    if kind not in (LEAF, CONSTANT, OP):
        raise src.fail(f"node id {node_id}: unknown node type {kind}", start + 8)
    op: OpDef | None = None
    if kind == LEAF:
        if code != 0:
            raise src.fail(f"leaf node id {node_id} has op code {code} (must be 0)", start + 9)
    else:
        name = OP_NAMES[code - 1] if 0 < code <= len(OP_NAMES) else None
        if name is None or name not in OPS:
            raise src.fail(f"node id {node_id}: unknown op code {code}", start + 9)
        if (kind == CONSTANT) != (name == "constant"):
            raise src.fail(f"node id {node_id}: node type {kind} with op {name}", start + 8)
        op = OPS[name]
    name_at = src.pos
    label = src.text("a node name")
    if op is not None and label and label != op.name:
        raise src.fail(f"node id {node_id} is named {label!r} but its op code is {op.name}",
                       name_at)
    shape, d, numel = src.spec(f"node id {node_id}")
    layout_at = src.pos
    layout = src.one("B", "the layout type")
    if layout != LAYOUT_ROW_MAJOR:
        raise src.fail(f"node id {node_id}: unknown layout type {layout}", layout_at)
    ins_at = src.pos
    n_in = src.one("H", "the input count")
    src.need(n_in * 8, f"{n_in} input references")
    refs = [_resolve(src, nodes, index, r, ins_at, f"input {i} of node id {node_id}")
            for i, r in enumerate(src.unpack(f"{n_in}Q", "input references"))]
    data_at = src.pos
    n_bytes = src.one("Q", "the data length")
    src.need(n_bytes, f"the {n_bytes} data bytes of node id {node_id}")
    value = None
    attrs: dict[str, Any] = {}
    if kind == LEAF:
        if n_in:
            raise src.fail(f"leaf node id {node_id} has {n_in} inputs", ins_at)
        want = numel * d.itemsize if flags & FLAG_LEAF_DATA else 0
        if n_bytes != want:
            raise src.fail(f"leaf node id {node_id}: {n_bytes} data bytes, expected {want}",
                           data_at)
        if want:
            value = src.array(n_bytes, shape, d, f"the value of leaf node id {node_id}")
    elif kind == CONSTANT:
        if n_in:
            raise src.fail(f"constant node id {node_id} has {n_in} inputs", ins_at)
        if n_bytes not in (d.itemsize, numel * d.itemsize):
            raise src.fail(f"constant node id {node_id}: {n_bytes} data bytes, expected "
                           f"{numel * d.itemsize} (or {d.itemsize} for a splat)", data_at)
        splat = n_bytes == d.itemsize and numel != 1
        arr = src.array(n_bytes, () if splat else shape, d, f"constant node id {node_id}")
        attrs = {"value": DenseValue(arr, shape, d)}
    else:
        attrs = _read_attrs(src, op, src.pos + n_bytes)
    assert op is not None or kind == LEAF
    if op is not None:
        in_specs = [_spec_of(nodes, r) for r in refs]
        try:
            specs = op.check([s for s, _ in in_specs], [t for _, t in in_specs], attrs)
        except ShapeError as e:
            raise src.fail(f"node id {node_id}: {e}", start) from None
        except Exception as e:  # noqa: BLE001  (a rule given values no recording makes)
            raise src.fail(f"node id {node_id}: op {op.name} rejects its attributes or "
                           f"inputs ({type(e).__name__}: {e})", start) from None
        if specs[0] != (shape, d):
            raise src.fail(f"node id {node_id}: the file says {d.name}{list(shape)}, op "
                           f"{op.name}'s shape rule gives {specs[0][1].name}"
                           f"{list(specs[0][0])}", start)
        node = _Node(kind, op, attrs, tuple(refs), shape, d, None, specs)
    else:
        node = _Node(kind, None, {}, (), shape, d, value, ((shape, d),))
    index[node_id] = len(nodes)
    return node


def _spec_of(nodes: list[_Node], r: int) -> tuple[tuple[int, ...], DType]:
    return nodes[r & MAX_NODE_ID].specs[r >> RESULT_SHIFT]
