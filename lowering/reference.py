"""``pyflame`` module -> a flat numpy plan (the reference backend's artifact).

A plan is a list of steps over numbered slots. Each step calls the op's
kernel from the op table; nothing here re-implements an op. Values whose op
accepts ``out=`` get a preallocated buffer, and buffers are shared between
values whose lifetimes do not overlap (views extend the lifetime of the
buffer they look into; a buffer reachable from a result is never reused,
since results are handed to the user).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from ..dialects.dtypes import DType
from ..dialects.pyflame import PyflameOp, spec_of_type

# Ops whose kernel may return a view of (an) input instead of new memory.
VIEW_OPS = frozenset({"reshape", "permute", "broadcast_to", "slice", "split"})


class LoweringError(Exception):
    pass


@dataclass
class Step:
    kernel: Any
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    attrs: dict[str, Any]
    name: str
    out_buffer: int | None = None  # index into Plan.buffers, for ``out=`` kernels


@dataclass
class Plan:
    num_slots: int
    arg_slots: list[int]
    arg_specs: list[tuple[tuple[int, ...], DType]]
    steps: list[Step]
    result_slots: list[int]
    result_specs: list[tuple[tuple[int, ...], DType]]
    buffers: list[tuple[tuple[int, ...], np.dtype]] = field(default_factory=list)

    @property
    def buffer_bytes(self) -> int:
        return sum(int(np.prod(s)) * d.itemsize for s, d in self.buffers)


def find_main(module: ModuleOp) -> func.FuncOp:
    funcs = [op for op in module.ops if isinstance(op, func.FuncOp)]
    if len(funcs) != 1:
        raise LoweringError(f"expected one func.func in the module, found {len(funcs)}")
    return funcs[0]


def lower(module: ModuleOp, preallocate: bool = True) -> Plan:
    fn = find_main(module)
    block = fn.body.block
    slot: dict[SSAValue, int] = {}
    for a in block.args:
        slot[a] = len(slot)
    steps: list[Step] = []
    results: list[SSAValue] = []
    for op in block.ops:
        if isinstance(op, func.ReturnOp):
            results = list(op.operands)
            break
        if not isinstance(op, PyflameOp):
            raise LoweringError(f"reference backend: cannot execute op {op.name}")
        for r in op.results:
            slot[r] = len(slot)
        steps.append(Step(op.OPDEF.kernel, tuple(slot[v] for v in op.operands),
                          tuple(slot[r] for r in op.results), op.py_attrs(),
                          op.OPDEF.name))
    plan = Plan(len(slot), [slot[a] for a in block.args],
                [spec_of_type(a.type, "argument") for a in block.args], steps,
                [slot[v] for v in results], [spec_of_type(v.type, "result") for v in results])
    if preallocate:
        _plan_buffers(plan, {slot[v]: spec_of_type(v.type, "value") for v in slot})
    return plan


def _plan_buffers(plan: Plan, specs: dict[int, tuple[tuple[int, ...], DType]]) -> None:
    """Give ``out=`` steps reusable buffers (see the module docstring)."""
    from ..dialects import OPS

    root = {s: s for s in range(plan.num_slots)}
    last_use = {s: -1 for s in range(plan.num_slots)}
    for i, st in enumerate(plan.steps):
        for s in st.inputs:
            last_use[root[s]] = i
        if st.name in VIEW_OPS:
            for o in st.outputs:
                root[o] = root[st.inputs[0]]
    escaping = {root[s] for s in plan.result_slots}
    free: dict[tuple, list[int]] = {}
    dying_at: dict[int, list[tuple[tuple, int]]] = {}
    for i, st in enumerate(plan.steps):
        out = st.outputs[0]
        if OPS[st.name].ufunc and out not in escaping and last_use[out] > i:
            shape, d = specs[out]
            key = (shape, d.np)
            pool = free.get(key)
            if pool:
                b = pool.pop()
            else:
                b = len(plan.buffers)
                plan.buffers.append((shape, d.np))
            st.out_buffer = b
            dying_at.setdefault(last_use[out], []).append((key, b))
        # a buffer is free again once the step that last reads it has run
        for key, b in dying_at.pop(i, []):
            free.setdefault(key, []).append(b)
