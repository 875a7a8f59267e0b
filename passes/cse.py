"""``cse``: merge pure ops that compute the same thing.

Two ops are the same when they have the same name, operands, attributes
(compared as IR attributes, so constants by their bytes: ``0.0`` and
``-0.0`` differ, as do NaN payloads), properties and result types. Operands
of ``add mul eq ne logical_and logical_or`` are compared as a set, since
those ops are exactly commutative in IEEE arithmetic (``maximum`` and
``minimum`` are not: they pick between ``-0.0`` and ``0.0`` by position).
Ops with regions are left alone. One sweep per block with a hash table:
linear in the size of the module.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from ..dialects.pyflame import op_class
from .common import PyflamePass, blocks_of, is_pure

COMMUTATIVE = frozenset(op_class(n) for n in ("add", "mul", "eq", "ne", "logical_and",
                                              "logical_or"))


def operand_key(op: Operation) -> tuple | None:
    """(name, operand identities) of an op CSE may merge, else None. Cheap to
    hash: most ops differ here already, so the full key is rarely needed."""
    if op.regions or op.successors or not op.results or not is_pure(op):
        return None
    ids = tuple(map(id, op.operands))  # values outlive the sweep: ids are stable
    if type(op) in COMMUTATIVE:
        ids = tuple(sorted(ids))
    return (op.name, ids)


def attribute_key(op: Operation) -> tuple:
    """The rest of what makes two ops with the same operands interchangeable."""
    attrs = tuple(sorted(op.attributes.items())) if op.attributes else ()
    props = tuple(sorted(op.properties.items())) if op.properties else ()
    return (attrs, props, tuple(r.type for r in op.results))


@dataclass(frozen=True)
class CommonSubexpressionElimination(PyflamePass):
    """Merge structurally equal pure ops (attributes included)."""

    name = "cse"

    def run(self, ctx: Context, module: ModuleOp) -> dict[str, int]:
        # a hand-written sweep: CSE keeps a table of what came before in the
        # block, which is not a local rewrite of one op
        merged = 0
        for block in list(blocks_of(module)):
            # operand key -> the first op with it, or a table by attribute key
            # once two ops share it
            seen: dict[tuple, Operation | dict[tuple, Operation]] = {}
            op = block.first_op
            while op is not None:
                nxt = op.next_op
                key = operand_key(op)
                if key is not None:
                    found = seen.get(key)
                    if found is None:
                        seen[key] = op
                    else:
                        if isinstance(found, dict):
                            table = found
                        else:
                            table = seen[key] = {attribute_key(found): found}
                        akey = attribute_key(op)
                        first = table.get(akey)
                        if first is None:
                            table[akey] = op
                        else:
                            for r, v in zip(op.results, first.results):
                                r.replace_all_uses_with(v)
                            block.erase_op(op)
                            merged += 1
                op = nxt
        return {"merged": merged}
