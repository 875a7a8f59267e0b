"""A PE's DSD unit: operands, lengths, synchronous and asynchronous DSD builtins, timing.

`DsdUnit` is mixed into `pe.PE` and uses its clock (`t`, `stall`, `end_t`,
`async_cycles`, `flops`, `dsd_ops`), input `queues`, `pending` async ops,
task actions (`activate`, `set_blocked`) and `sim` (cycle model, fabric).
A synchronous op that waits for wavelets stalls the core until they arrive;
an asynchronous one runs beside the core and fires its completion action.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import csl
from xdsl.dialects.builtin import MemRefType

from pyflame_mlir.dialects import csl_ext

from . import dsd as D
from .builtins import Builtin
from .errors import ProgramError
from .fabric import Chunk
from .interpreter import Wait


@dataclass(eq=False)  # identity: two pending ops with equal fields are still two ops
class AsyncOp:
    """An asynchronous DSD op waiting for its input wavelets."""

    builtin: Builtin
    operands: list
    issue_t: float
    then: csl_ext.AsyncAttr
    needs: dict[int, int]  # color -> wavelets


def words_to(words: np.ndarray, dtype: np.dtype) -> np.ndarray:
    if dtype.itemsize == 4:
        return words.view(dtype)
    return (words & 0xFFFF).astype(np.uint16).view(dtype)  # 16-bit data rides in the low half


def to_words(values: np.ndarray) -> np.ndarray:
    if values.dtype.itemsize == 4:
        return values.view(np.uint32)
    return values.astype(values.dtype).view(np.uint16).astype(np.uint32)


class DsdUnit:
    """The DSD builtins of one PE (see the module docstring for what it uses)."""

    def dsd_op(self, b: Builtin, types: tuple, then, vals: list):
        name = b.name
        operands = [self._operand(v, t, i) for i, (v, t) in enumerate(zip(vals, types))]
        needs: dict[int, int] = {}
        n = self._length(name, operands)
        for kind, v in operands[1:]:
            if kind == "fab":
                if v.kind != "fabin_dsd":
                    raise ProgramError(f"{self.where}: @{name} reads from a {v.kind}")
                needs[v.color] = needs.get(v.color, 0) + n
        self.dsd_ops += 1
        if isinstance(then, csl_ext.AsyncAttr):
            self.t += self.sim.model.dsd_issue_cycles
            self.pending.append(AsyncOp(b, operands, self.t, then, needs))
            self.try_async()
            return
        for color, k in needs.items():
            while self.queues[color].count < k:
                yield Wait(color, k)
        t_end, compute = self._execute(b, operands, n, self.t)
        self.stall += max(0.0, t_end - self.t - compute)
        self.t = t_end

    def _operand(self, v, type, i: int) -> tuple[str, Any]:
        if isinstance(v, D.FabDsd):
            return "fab", v
        if isinstance(v, D.MemDsd | D.Mem4dDsd):
            return "mem", v
        if isinstance(type, MemRefType):  # a whole array used as a DSD
            return "mem", D.MemDsd(v.reshape(-1), 0, 1, v.size)
        if isinstance(type, csl.PtrType):
            if i != 0:
                raise ProgramError(f"{self.where}: a pointer can only be the destination")
            return "ptr", v.reshape(-1)
        return "scalar", v

    def _length(self, name: str, operands: list) -> int:
        lengths = [v.length for kind, v in operands if kind in ("mem", "fab")]
        if not lengths:
            raise ProgramError(f"{self.where}: @{name} has no DSD operand")
        if operands[0][0] != "ptr" and len(set(lengths)) > 1:
            raise ProgramError(f"{self.where}: @{name} operands have different lengths {lengths}")
        return lengths[0] if operands[0][0] != "ptr" else lengths[-1]

    def try_async(self) -> None:
        """Run, in issue order, the pending async ops whose input wavelets are all queued."""
        held: set[int] = set()
        for a in list(self.pending):
            if held & a.needs.keys() or any(self.queues[c].count < k for c, k in a.needs.items()):
                held |= a.needs.keys()  # later ops on the same queue wait behind this one
                continue
            self.pending.remove(a)
            n = self._length(a.builtin.name, a.operands)
            t_end, compute = self._execute(a.builtin, a.operands, n, a.issue_t)
            self.async_cycles += compute
            self.end_t = max(self.end_t, t_end)
            action = a.then.action.data
            if action == "activate":
                self.activate(a.then.kind.data, a.then.id.data, at=t_end)
            elif action == "unblock":
                self.set_blocked(a.then.kind.data, a.then.id.data, False, at=t_end)

    def _rate(self, b: Builtin, operands: list) -> float:
        m = self.sim.model
        if b.family == "f16":
            simd = m.f16_simd(self.sim.arch)
            unit = all(v.unit_stride for kind, v in operands if kind == "mem")
            rate = float(simd if unit else m.strided_f16_simd)
        elif b.family == "int":
            rate = m.int_elems_per_cycle
        else:
            rate = m.f32_elems_per_cycle
        if any(kind == "fab" for kind, _ in operands):
            rate = min(rate, m.fabric_elems_per_cycle)
        return rate

    def _execute(self, b: Builtin, operands: list, n: int, t_start: float) -> tuple[float, float]:
        """Do the op now (one numpy call); return (completion time, compute cycles)."""
        m = self.sim.model
        first = last = -np.inf
        srcs = []
        for (kind, v), want in zip(operands[1:], b.srcs):
            if kind == "fab":
                words, f, la = self.queues[v.color].take(n)
                first, last = max(first, f), max(last, la)
                arr = words_to(words, want or np.dtype(np.float32))
            elif kind == "mem":
                arr = D.read(v, want or v.buf.dtype)
            else:
                arr = (want or np.dtype(np.float32)).type(v)
            srcs.append(arr.astype(np.float32) if want is None else arr)
        dest_kind, dest = operands[0]
        if dest_kind == "ptr":
            vals = np.asarray(srcs[-1], b.dest).reshape(-1)
            if b.fold is not None:
                acc = np.asarray(srcs[0], b.dest).reshape(1)
                result = b.fold(np.concatenate([acc, vals]))
            else:
                result = vals[-1:]
            dest[0] = result[0]
        else:
            result = np.asarray(b.kernel(*srcs), dtype=b.dest)
            if result.shape != (n,):
                result = np.broadcast_to(result, (n,))
        self.flops += b.flops * n
        compute = m.dsd_cycles(n, self._rate(b, operands))
        t_first = max(t_start + m.dsd_issue_cycles, first + 1)
        t_end = max(t_start + compute, last + 1)
        if dest_kind == "mem":
            D.write(dest, result)
        elif dest_kind == "fab":
            if dest.kind != "fabout_dsd":
                raise ProgramError(f"{self.where}: @{b.name} writes to a {dest.kind}")
            gap = max(1.0, (t_end - t_first) / max(n, 1))
            # a copy: the wavelets are in flight, the sender may overwrite its memory
            words = to_words(np.array(result, copy=True, order="C"))
            self.sim.send(self, dest.color, Chunk(words, t_first, gap))
        return t_end, compute
