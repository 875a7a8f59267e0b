"""``check-indices``: make out-of-range indices an error on every backend.

An op that reads or writes at positions one of its operands holds (its
``OpDef.index_bounds``: gather, scatter_add, select_along, ...) is undefined
for an index outside ``[0, size)``. The reference kernels raise; MAX reads
anywhere and the linalg lowering clamps, so a lazy out-of-range index would
give a wrong number with no error. This pass adds, for each such op whose
index is not a constant (constants are checked when they are recorded), one
more result to its (public) function: the count of out-of-range indices (a float32
scalar, ``sum(idx < 0 | idx >= size)``). The function's ``pyflame.index_checks``
attribute names the op, dim and size of each added result, in order; the
compile driver strips those results after a run and raises ``IndexError``
when one is nonzero.

The driver runs it on backends whose kernels do not check; it is not part of
any default pipeline (``pyflame-opt -p check-indices`` shows what it adds).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr

from ..dialects.dtypes import float32
from ..dialects.pyflame import PyflameOp
from .common import IRBuilder, PyflamePass, constant_array, insert_before, spec_of_type

ATTR = "pyflame.index_checks"


def check_message(entry: str, count: int, backend: str) -> str:
    """The IndexError text for one entry of ``pyflame.index_checks``."""
    op, dim, size = entry.split(":")
    what = "an index is" if count == 1 else f"{count} indices are"
    return (f"pyflame.{op}: {what} out of bounds for dimension {dim} with size {size} "
            f"(checked after running on the {backend} backend)")


def index_checks(module: ModuleOp) -> list[str]:
    """The checks ``check-indices`` added to ``@main``, in result order."""
    for op in module.body.block.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == "main":
            a = op.attributes.get(ATTR)
            return [s.data for s in a.data] if isinstance(a, ArrayAttr) else []
    return []


@dataclass(frozen=True)
class CheckIndices(PyflamePass):
    """Return a count of out-of-range indices for each indexing op of each public function."""

    name = "check-indices"

    def run(self, ctx: Context, module: ModuleOp) -> dict[str, int]:
        added = 0
        for fn in module.body.block.ops:
            if not isinstance(fn, func.FuncOp) or (fn.sym_visibility is not None
                                                   and fn.sym_visibility.data == "private"):
                continue  # private functions are called, not run: their callers' results
            ret = fn.body.block.last_op
            assert isinstance(ret, func.ReturnOp)
            counts, entries = [], []
            # one count per (index, dim, size): ops sharing an index share its check
            # (a function must not return one value twice: the mlir backend's
            # buffers would alias)
            seen: dict[tuple, int] = {}
            b = IRBuilder(lambda new, ret=ret: insert_before(new, ret))
            for op in list(fn.body.block.ops):
                opdef = getattr(op, "OPDEF", None)
                if not isinstance(op, PyflameOp) or opdef is None or opdef.index_bounds is None:
                    continue
                shapes = [spec_of_type(v.type, "operand")[0] for v in op.operands]
                pos, dim, size = opdef.index_bounds(shapes, op.py_attrs())
                index = op.operands[pos]
                if constant_array(index) is not None or 0 in b.shape(index):
                    continue  # checked when recorded, or no index at all
                key = (index, dim, size)
                if key in seen:
                    k = seen[key]
                    name, rest = entries[k].split(":", 1)
                    if opdef.name not in name.split("/"):
                        entries[k] = f"{name}/{opdef.name}:{rest}"
                    continue
                bad = b.logical_or(b.lt(index, b.scalar(0, index)),
                                   b.ge(index, b.scalar(size, index)))
                # counted in float32 (exact below 2**24 bad indices; any count > 0
                # raises): every backend sums it, the PE grid included
                flags = b.convert(bad, dtype=float32)
                seen[key] = len(counts)
                counts.append(b.sum(flags, dims=tuple(range(len(b.shape(flags)))),
                                    keepdim=False))
                entries.append(f"{opdef.name}:{dim}:{size}")
            if not counts:
                continue
            outs = list(ret.operands) + counts
            ret.operands = outs
            fn.function_type = func.FunctionType.from_lists(
                list(fn.function_type.inputs.data), [v.type for v in outs])
            old = [s.data for s in fn.attributes[ATTR].data] if ATTR in fn.attributes else []
            fn.attributes[ATTR] = ArrayAttr([StringAttr(e) for e in old + entries])
            added += len(counts)
        return {"added": added}

