"""A PE's DSD unit: operands, lengths, synchronous and asynchronous DSD builtins, timing.

`DsdUnit` is mixed into `pe.PE` and uses its clock (`t`, `stall`, `end_t`,
`async_cycles`, `flops`, `dsd_ops`), input `queues`, `pending` async ops,
task actions (`activate`, `set_blocked`) and `sim` (cycle model, fabric).
A synchronous op that waits for wavelets stalls the core until they arrive;
an asynchronous one runs beside the core and fires its completion action.

Bounded queues: a send of more words than the queues and router buffers on its
path hold (``fabric.path_room``) is held back until its receivers read. A
synchronous send stalls the core (it yields a `Drain`); an asynchronous one
keeps streaming beside the core and completes, firing its action, only when
its last wavelet has left.

Asynchronous ops read their memory operands as they run, not at issue: element
i of a source is read at the op's start plus i element times (the stream's
schedule). The simulator executes an op in one numpy call, so it corrects for
the core's writes afterwards: a write the core made *before* the op ran but
*after* the op read an element is undone for the op (the write log kept while
ops are pending), and a write the core makes while the op runs reaches every
element the op reads later (its result, and the wavelets it sent if no receiver
has used them yet; if one has, the race cannot be replayed and is an error).
Either way the race is recorded on the PE (``races``) and warned about
(`AsyncRaceWarning`): a program whose result depends on it is not silently
given the "read at issue" answer.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from xdsl.dialects import csl
from xdsl.dialects.builtin import MemRefType

from pyflame_mlir.dialects import csl_ext

from . import dsd as D
from .builtins import Builtin
from .dsd import element_addrs
from .errors import (
    ArchRuleError,
    AsyncRaceError,
    AsyncRaceWarning,
    DsdBoundsError,
    ProgramError,
    UnsupportedError,
)
from .fabric import Chunk
from .interpreter import Drain, Wait
from .machine import ARCH

_F32 = np.dtype(np.float32)


@dataclass(eq=False)  # identity: two pending ops with equal fields are still two ops
class AsyncOp:
    """An asynchronous DSD op: pending (waiting for its input wavelets), then running
    (its reads watched), then held back (its sends wait for room) until complete."""

    builtin: Builtin
    operands: list
    issue_t: float
    then: csl_ext.AsyncAttr
    needs: dict[int, int]  # color -> wavelets
    ut: int | None = None  # its microthread (None: no fabric operand, no .ut_id)
    t_end: float = 0.0  # when its last element was computed (set when it runs)
    drain: Drain | None = None  # its send, while the queues on the way are full
    t_done: float | None = None  # when it completed (its action fired)

    def __str__(self) -> str:
        return f"async @{self.builtin.name} issued at cycle {self.issue_t:,.0f}"


@dataclass(eq=False)
class SourceRead:
    """One memory operand of a running async op: the byte address of each element
    and the cycle the op reads it at."""

    pos: int  # index into the op's sources
    dsd: Any
    want: np.dtype | None
    addrs: np.ndarray
    times: np.ndarray


@dataclass(eq=False)
class Running:
    """An async op whose result is computed but whose reads are not all past: the
    core's writes to its sources before a read reach the result."""

    op: AsyncOp
    srcs: list[np.ndarray]
    reads: list[SourceRead]
    result: np.ndarray
    last_read: float
    words: np.ndarray | None = None  # the wavelets it sent (shared with the queues)
    receivers: list[tuple[Any, int]] = field(default_factory=list)  # (queue, pushed before)


@dataclass(eq=False)
class CoreWrite:
    """A write of the core, kept while async ops are pending: what the memory held."""

    addrs: np.ndarray
    old: np.ndarray  # in the written array's dtype
    times: np.ndarray


def _dsd_addrs(v: Any) -> np.ndarray:
    return element_addrs(v.buf, v.index())


def _convert(raw: np.ndarray, want: np.dtype | None) -> np.ndarray:
    """Values as an op's source sees them (as `_execute` reads a memory operand)."""
    arr = D._typed(raw, want or raw.dtype)
    return arr.astype(np.float32) if want is None else arr


def scalar_operand(v: Any, want: np.dtype | None) -> np.generic:
    """A scalar operand as a builtin reads it: a float in the op's float type (f32 for
    mixed precision), an integer as its bit pattern in the op's width (an i16 -1 is
    0xFFFF to @add16, as two's complement hardware reads it)."""
    want = want or _F32
    if want.kind in "ui":
        return want.type(int(v) & ((1 << (8 * want.itemsize)) - 1))
    return want.type(v)


def words_to(words: np.ndarray, dtype: np.dtype) -> np.ndarray:
    if dtype.itemsize == 4:
        return words.view(dtype)
    return (words & 0xFFFF).astype(np.uint16).view(dtype)  # 16-bit data rides in the low half


def to_words(values: np.ndarray) -> np.ndarray:
    if values.dtype.itemsize == 4:
        return values.view(np.uint32)
    return values.astype(values.dtype).view(np.uint16).astype(np.uint32)


def _fit_to_destination(operands: list) -> list:
    """A memory source longer than a memory destination is read for the destination's
    length only: the SDK's cholesky benchmark relies on it (`@fmacs(dest_row_dsd,
    dest_row_dsd, left_col_dsd, s)` with dest_row_dsd re-lengthened to i - ti and
    left_col_dsd of length Nt, whose tail lies past the tile: its published factor is
    right only so). A shorter source, or a fabric operand of another length, is still
    refused (`_length`): what the hardware does then is not documented."""
    dest_kind, dest = operands[0]
    if dest_kind != "mem":
        return operands
    n = dest.length
    out = [operands[0]]
    for kind, v in operands[1:]:
        if kind == "mem" and v.length > n:
            v = replace(v, length=n) if isinstance(v, D.MemDsd) else replace(v, idx=v.idx[:n])
        out.append((kind, v))
    return out


class DsdUnit:
    """The DSD builtins of one PE (see the module docstring for what it uses)."""

    watching = False  # async ops are pending or running: the core's writes are checked

    def dsd_op(self, b: Builtin, types: tuple, then, vals: list):
        name = b.name
        operands = _fit_to_destination(
            [self._operand(v, t, i) for i, (v, t) in enumerate(zip(vals, types))])
        needs: dict[int, int] = {}
        n = self._length(name, operands)
        for kind, v in operands[1:]:
            if kind == "fab":
                if v.kind not in ("fabin_dsd", "fifo"):
                    raise ProgramError(f"{self.where}: @{name} reads from a {v.kind}")
                if v.kind == "fifo" and n > self.fifo_capacity[v.color]:
                    raise self._through_fifo(name, n, v)
                needs[v.color] = needs.get(v.color, 0) + n
        self.dsd_ops += 1
        if isinstance(then, csl_ext.AsyncAttr):
            self.t += self.sim.model.dsd_issue_cycles
            a = AsyncOp(b, operands, self.t, then, needs, self._microthread(b, then, operands))
            self._claim_microthread(a)
            self.pending.append(a)
            self.watching = True
            self.try_async()
            return None
        queues = self.queues
        if any(queues[color].count < k for color, k in needs.items()):
            return self._wait_then_run(b, operands, n, needs)
        drain = self._run_sync(b, operands, n)
        return None if drain is None else iter((drain,))

    def _through_fifo(self, name: str, n: int, fifo: D.FabDsd) -> UnsupportedError:
        return UnsupportedError(
            f"{self.where}: @{name} moves {n} elements through a FIFO of "
            f"{self.fifo_capacity[fifo.color]}: the simulator runs an operation whole, so "
            "streaming more than a FIFO holds (its producer and consumer taking turns) is "
            "not modeled")

    # --- microthreads ----------------------------------------------------------------

    def _microthread(self, b: Builtin, then: csl_ext.AsyncAttr, operands: list) -> int | None:
        """The microthread an async op runs on: its ``.ut_id`` (WSE-3 only), else the
        queue of its highest-priority fabric operand (destination, then src0, then src1;
        SDK documentation, "Microthread IDs"); None for an op with neither."""
        rules = ARCH[self.sim.arch]
        ut = then.ut_id
        if ut is not None:
            if not rules.microthread_ids:
                raise ArchRuleError(
                    f"{self.where}: async @{b.name} names microthread {ut} "
                    f"(.ut_id = @get_ut_id({ut})): {rules.title} exposes no microthread ids "
                    "(@get_ut_id is a WSE-3 builtin; an async op's microthread is the queue "
                    "of its fabric operand)")
            if ut not in rules.microthread_ids:
                lo, hi = rules.microthread_ids[0], rules.microthread_ids[-1]
                raise ArchRuleError(
                    f"{self.where}: async @{b.name}: @get_ut_id({ut}) is outside "
                    f"{rules.title}'s microthread ids {lo}-{hi}")
            return ut
        for kind, v in operands[:3]:
            if kind == "fab" and v.kind != "fifo":
                return v.queue
        return None

    def _claim_microthread(self, a: AsyncOp) -> None:
        """Two operations must not use one microthread at the same time (SDK
        documentation, "Microthread IDs"): an op issued on a microthread whose previous
        op has not completed by then is an error. An earlier op still pending is checked
        when it completes (`_complete`)."""
        if a.ut is None:
            return
        ops = self.microthreads.setdefault(a.ut, [])
        ops[:] = [o for o in ops if o.t_done is None or o.t_done > a.issue_t]
        for o in ops:
            if o.t_done is not None:
                raise self._busy(a, o, o.t_done)
        ops.append(a)

    def _busy(self, later: AsyncOp, earlier: AsyncOp, t_done: float) -> ProgramError:
        return ProgramError(
            f"{self.where}: {later} while {earlier} still uses microthread {later.ut} "
            f"(it completes at cycle {t_done:,.0f}): two operations cannot use one "
            "microthread at the same time (SDK documentation, \"Microthread IDs\"); wait for "
            "the first one's completion task, or give the second another queue"
            + (" or .ut_id" if ARCH[self.sim.arch].microthread_ids else ""))

    def _out_of_bounds(self, b: Builtin, e: DsdBoundsError) -> ProgramError:
        return ProgramError(f"{self.where}: @{b.name}: {e} (on hardware it would touch "
                            "whatever lies beside the array)")

    def dsd_local(self, b: Builtin, whole: tuple[bool, ...], vals: list) -> bool:
        try:
            return self._dsd_local(b, whole, vals)
        except DsdBoundsError as e:
            raise self._out_of_bounds(b, e) from None

    def _dsd_local(self, b: Builtin, whole: tuple[bool, ...], vals: list) -> bool:
        """The common case in fewer steps: a synchronous op over memory DSDs and
        scalars only (no fabric, no pointer), with no async op of this PE running.
        Does what `dsd_op` does for it (same result, cycles, FLOPs) and returns True;
        False, having done nothing, for anything else (`dsd_op` then runs it, and
        raises what it raises)."""
        n = -1
        unit = True
        operands = []
        for v, w in zip(vals, whole):
            if w:
                v = D.MemDsd(v.reshape(-1), 0, 1, v.size)
            cls = v.__class__
            if cls is D.MemDsd or cls is D.Mem4dDsd:
                length = v.length
                if n != length:
                    if n >= 0:
                        return False  # different lengths: the general path's error
                    n = length
                unit = unit and v.unit_stride
                operands.append((True, v))
            elif cls is D.FabDsd or not operands:
                return False  # a fabric operand, or a destination that is not memory
            else:
                operands.append((False, v))
        dest = operands[0][1]
        for pos, (mem, v) in enumerate(operands[1:]):
            if mem and D.order_dependent(dest, v):
                raise self._aliasing(b, pos)
        srcs = []
        for (mem, v), want in zip(operands[1:], b.srcs):
            arr = D.read(v, want or v.buf.dtype) if mem else scalar_operand(v, want)
            srcs.append(arr.astype(np.float32) if want is None else arr)
        m = self.sim.model
        family = b.family
        if family == "f16":
            rate = float(m.f16_simd(self.sim.arch) if unit else m.strided_f16_simd)
        elif family == "int":
            rate = m.int_elems_per_cycle
        else:
            rate = m.f32_elems_per_cycle
        self.dsd_ops += 1
        self.t += m.dsd_cycles(n, rate)
        self.flops += b.flops * n
        D.write(operands[0][1], self._compute(b, srcs, n, "mem"))
        return True

    def _aliasing(self, b: Builtin, pos: int) -> ProgramError:
        return ProgramError(
            f"{self.where}: @{b.name} writes memory its source {pos} reads at a later "
            "element (e.g. a[i] = a[i-1] + ..., or a stride-0 destination accumulating "
            "over itself): the result depends on how far the DSD pipeline reads ahead of "
            "its writes, which is not documented; not simulated (use a pointer "
            "destination to fold, or a copy)")

    def _wait_then_run(self, b: Builtin, operands: list, n: int, needs: dict[int, int]):
        for color, k in needs.items():
            while self.queues[color].count < k:
                yield Wait(color, k)
        drain = self._run_sync(b, operands, n)
        if drain is not None:
            yield drain

    def _run_sync(self, b: Builtin, operands: list, n: int) -> Drain | None:
        """Run a synchronous op whose wavelets are queued; return the `Drain` to wait
        on when it sent more than the queues and router buffers on the way hold (a
        synchronous send of the running core returns only once its receivers have
        taken all but that: backpressure)."""
        t_end, compute, sent = self._execute(b, operands, n, self.t)
        self.stall += max(0.0, t_end - self.t - compute)
        self.t = t_end
        if sent is not None and self is self.sim.stepping:
            drain = Drain(*sent[:3])
            if not drain.done():
                self.sim.draining.append((self, drain))
                return drain
        return None

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
        """The op's length: its DSD operands' common length. A fabout destination's
        extent does not bound a send whose sources are DSDs: the SDK's game-of-life
        benchmark sends a length-2 memory DSD through a fabout DSD of extent 1 and
        its receivers count both wavelets (so the sources' length it is; unverified
        in the documentation, as CSL_NOTES records)."""
        operands = [(k, v) for k, v in operands
                    if not (k == "fab" and v.kind == "fifo")] or operands  # a FIFO has none
        dest_kind, dest = operands[0]
        srcs = [v.length for kind, v in operands[1:] if kind in ("mem", "fab")]
        if dest_kind == "fab" and dest.kind == "fabout_dsd" and srcs:
            operands = operands[1:]
        lengths = [v.length for kind, v in operands if kind in ("mem", "fab")]
        if not lengths:
            raise ProgramError(f"{self.where}: @{name} has no DSD operand")
        if operands[0][0] != "ptr" and len(set(lengths)) > 1:
            raise ProgramError(f"{self.where}: @{name} operands have different lengths {lengths}")
        return lengths[0] if operands[0][0] != "ptr" else lengths[-1]

    def try_async(self) -> None:
        """Run, in issue order, the pending async ops whose input wavelets are all queued.
        One whose send does not fit in the queues on its path is held back until its
        receivers read (`async_sent`); it completes then."""
        ran = True
        while ran:  # again while one ran: it may have filled a FIFO another one pops
            ran = False
            held: set[int] = set()
            for a in list(self.pending):
                if a not in self.pending:  # a nested call (a loopback send) ran it
                    continue
                if held & a.needs.keys() or any(self.queues[c].count < k
                                                for c, k in a.needs.items()):
                    held |= a.needs.keys()  # later ops on the same queue wait behind this one
                    continue
                self.pending.remove(a)
                ran = True
                self._run_async(a)
        if not self.pending:
            self.write_log.clear()
        self.watching = bool(self.pending or self.streaming)

    def _run_async(self, a: AsyncOp) -> None:
        n = self._length(a.builtin.name, a.operands)
        t_end, compute, sent = self._execute(a.builtin, a.operands, n, a.issue_t, a)
        self.async_cycles += compute
        a.t_end = t_end
        if sent is not None:
            drain = Drain(*sent[:3], op=a)
            if not drain.done():
                a.drain = drain
                self.held.append(a)
                self.sim.draining.append((self, drain))
                return
        self._complete(a, t_end)

    def async_sent(self, a: AsyncOp, ready_t: float) -> None:
        """A held-back async send's receivers made room for its last wavelets."""
        self.held.remove(a)
        a.drain = None
        self._complete(a, max(a.t_end, ready_t))

    def _complete(self, a: AsyncOp, t_done: float) -> None:
        self.end_t = max(self.end_t, t_done)
        a.t_done = t_done
        if a.ut is not None:
            for o in self.microthreads.get(a.ut, ()):
                if o is not a and o.t_done is None and a.issue_t < o.issue_t < t_done:
                    raise self._busy(o, a, t_done)
        action = a.then.action.data
        if action == "activate":
            self.activate(a.then.kind.data, a.then.id.data, at=t_done)
        elif action == "unblock":
            self.set_blocked(a.then.kind.data, a.then.id.data, False, at=t_done)

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

    @staticmethod
    def _compute(b: Builtin, srcs: list, n: int, dest_kind: str) -> np.ndarray:
        if dest_kind == "ptr":
            vals = np.asarray(srcs[-1], b.dest).reshape(-1)
            if b.fold is not None:
                acc = np.asarray(srcs[0], b.dest).reshape(1)
                return b.fold(np.concatenate([acc, vals]))
            return vals[-1:]
        result = np.asarray(b.kernel(*srcs), dtype=b.dest)
        if result.shape != (n,):
            result = np.broadcast_to(result, (n,))
        return result

    def _execute(self, b: Builtin, operands: list, n: int, t_start: float,
                 op: AsyncOp | None = None) -> tuple[float, float, tuple | None]:
        try:
            return self._execute_op(b, operands, n, t_start, op)
        except DsdBoundsError as e:
            raise self._out_of_bounds(b, e) from None

    def _execute_op(self, b: Builtin, operands: list, n: int, t_start: float,
                    op: AsyncOp | None = None) -> tuple[float, float, tuple | None]:
        """Do the op now (one numpy call); return (completion time, compute cycles, its
        send: (color, words, targets, receivers) or None). An async op (`op`) reads
        its memory operands as it runs: see the module docstring."""
        m = self.sim.model
        dest_kind, dest = operands[0]
        if dest_kind == "mem":
            for pos, (kind, v) in enumerate(operands[1:]):
                if kind == "mem" and D.order_dependent(dest, v):
                    raise self._aliasing(b, pos)
        first = last = -np.inf
        srcs = []
        mems: list[tuple[int, Any, np.dtype | None]] = []
        for (kind, v), want in zip(operands[1:], b.srcs):
            if kind == "fab":
                words, f, la = self.queues[v.color].take(n)
                first, last = max(first, f), max(last, la)
                arr = words_to(words, want or np.dtype(np.float32))
            elif kind == "mem":
                arr = D.read(v, want or v.buf.dtype)
                mems.append((len(srcs), v, want))
            else:
                arr = scalar_operand(v, want)
            srcs.append(arr.astype(np.float32) if want is None else arr)
        compute = m.dsd_cycles(n, self._rate(b, operands))
        t_first = max(t_start + m.dsd_issue_cycles, first + 1)
        t_end = max(t_start + compute, last + 1)
        step = (t_end - t_first) / max(n, 1)
        reads: list[SourceRead] = []
        if op is not None and mems and n and (t_end > self.t or self.write_log):
            times = t_first + step * np.arange(n)
            for pos, v, want in mems:
                srcs[pos] = np.array(srcs[pos], copy=True)  # no view of memory the core writes
                reads.append(SourceRead(pos, v, want, _dsd_addrs(v), times))
            self._undo_later_writes(op, srcs, reads)
        result = self._compute(b, srcs, n, dest_kind)
        if dest_kind == "ptr":
            dest[0] = result[0]
        self.flops += b.flops * n
        sent = None
        if dest_kind == "mem":
            if self.watching and op is None:  # the core writes: running async ops may read it
                times = t_first + step * (np.arange(n) + 1)
                self.core_write(D._typed(dest.buf, result.dtype), dest.index(), result, times)
            else:
                D.write(dest, result)
        elif dest_kind == "fab" and dest.kind == "fifo":
            q = self.queues[dest.color]
            if q.count + n > self.fifo_capacity[dest.color]:
                raise self._through_fifo(b.name, n + q.count, dest)
            q.push(Chunk(to_words(np.array(result, copy=True, order="C")), t_first,
                         max(1.0, step)))
        elif dest_kind == "fab":
            if dest.kind != "fabout_dsd":
                raise ProgramError(f"{self.where}: @{b.name} writes to a {dest.kind}")
            rules = ARCH[self.sim.arch]
            if (rules.queue_per_color and dest.color not in self.sim.stream_colors
                    and (True, dest.queue) not in self.queue_colors):
                raise ArchRuleError(
                    f"{self.where}: @{b.name} sends on color {dest.color} through output "
                    f"queue {dest.queue}, which no @initialize_queue binds to a color: on "
                    f"{rules.title} the data does not go into an unbound output queue "
                    "(the SDK's allreduce library: \"necessary, otherwise the data is not "
                    "sent into the output queue\")")
            gap = max(1.0, step)
            # a copy: the wavelets are in flight, the sender may overwrite its memory
            words = to_words(np.array(result, copy=True, order="C"))
            targets, receivers = self.sim.send(self, dest.color, Chunk(words, t_first, gap),
                                               dest.control)
            if targets:
                sent = (dest.color, words.size, targets, receivers)
        if reads and reads[0].times[-1] > self.t:
            self.streaming = [r for r in self.streaming if r.last_read > self.t]
            self.streaming.append(Running(op, srcs, reads, np.array(result, copy=True),
                                          float(reads[0].times[-1]),
                                          words if sent else None, sent[3] if sent else []))
            self.watching = True
        return t_end, compute, sent

    # --- the core's writes meet running async ops -------------------------------------

    def core_write(self, arr: np.ndarray, index: Any, values: Any, times: Any) -> None:
        """``arr[index] = values``, done by the core at `times` (one per element, or one
        for all) while async ops are pending or running (see the module docstring)."""
        addrs = element_addrs(arr, index)
        times = np.broadcast_to(np.asarray(times, np.float64), addrs.shape)
        if self.pending:
            old = np.array(arr[index], copy=True).reshape(-1)
            self.write_log.append(CoreWrite(addrs, old, times))
        arr[index] = values
        self.streaming = [r for r in self.streaming if r.last_read > self.t]
        for r in self.streaming:
            self._replay(r, addrs, times)
        self.watching = bool(self.pending or self.streaming)

    @staticmethod
    def _match(addrs: np.ndarray, times: np.ndarray,
               at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each address of `at`: whether a write hit it, and that write's index."""
        order = np.argsort(addrs, kind="stable")
        sorted_addrs = addrs[order]
        pos = np.clip(np.searchsorted(sorted_addrs, at), 0, max(addrs.size - 1, 0))
        hit = sorted_addrs[pos] == at if addrs.size else np.zeros(at.shape, bool)
        return hit, order[pos]

    def _undo_later_writes(self, op: AsyncOp, srcs: list, reads: list[SourceRead]) -> None:
        """An op that runs only now (its wavelets came late) read each element at its own
        time: undo, for the op, the core's writes made after that (newest first)."""
        for w in reversed(self.write_log):
            for s in reads:
                hit, j = self._match(w.addrs, w.times, s.addrs)
                late = hit & (w.times[j] > s.times)
                if late.any():
                    srcs[s.pos][late] = _convert(w.old[j[late]], s.want)
                    self._race(op, s, late, "before the op read them (it saw the old values)")

    def _replay(self, r: Running, addrs: np.ndarray, times: np.ndarray) -> None:
        """The core wrote while `r` runs: the elements `r` reads after the write see it."""
        changed_any = False
        for s in r.reads:
            hit, j = self._match(addrs, times, s.addrs)
            early = hit & (times[j] < s.times)
            if not early.any():
                continue
            current = D.read(s.dsd, s.want or s.dsd.buf.dtype)
            r.srcs[s.pos][early] = (current.astype(np.float32) if s.want is None
                                    else current)[early]
            self._race(r.op, s, early, "before the op read them (it sends/uses the new values)")
            changed_any = True
        if not changed_any:
            return
        dest_kind, dest = r.op.operands[0]
        n = r.result.size
        result = self._compute(r.op.builtin, r.srcs, n, dest_kind)
        diff = to_words(np.ascontiguousarray(result)) != to_words(np.ascontiguousarray(r.result))
        if not diff.any():
            return
        r.result = np.array(result, copy=True)
        if dest_kind == "ptr":
            dest[0] = result[0]
        elif dest_kind == "mem":
            flat = np.arange(dest.buf.size)[dest.index()]
            D._typed(dest.buf, result.dtype)[flat[diff]] = result[diff]
        elif r.words is not None:
            first = int(np.flatnonzero(diff)[0])
            for q, base in r.receivers:
                if q.taken > base + first:
                    raise AsyncRaceError(
                        f"{self.where}: the core overwrote element {first} of a source of "
                        f"{r.op} before the op sent it, but a receiver already used that "
                        "wavelet in this simulation: the race cannot be replayed")
            r.words[diff] = to_words(np.ascontiguousarray(result))[diff]

    def _race(self, op: AsyncOp, s: SourceRead, mask: np.ndarray, what: str) -> None:
        idx = np.flatnonzero(mask)
        shown = ", ".join(str(i) for i in idx[:6]) + (", ..." if idx.size > 6 else "")
        msg = (f"{self.where}: the core wrote element(s) {shown} of source {s.pos} of {op} "
               f"{what}: a race in the program")
        self.races.append(msg)
        warnings.warn(AsyncRaceWarning(msg), stacklevel=2)
