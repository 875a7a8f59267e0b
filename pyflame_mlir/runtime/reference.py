"""Runs a reference plan. The plan is turned into one straight-line Python
function (``v3 = k3(v1, v2, out=b3)`` per step), so a cache hit pays one
call per kernel and no interpretation loop."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..lowering.reference import Plan
from .malloc import keep_freed_memory
from .openblas import warm_sgemm


def _source(plan: Plan) -> tuple[str, dict[str, Any]]:
    env: dict[str, Any] = {}
    # a donated argument's array comes in again as ``d<k>`` (None: not donated
    # on this call) and is the ``out=`` of the step its plan reserves it for
    args = ", ".join([f"v{s}" for s in plan.arg_slots] +
                     [f"d{k}=None" for k in sorted(plan.donations)])
    donated_at = {i: k for k, i in plan.donations.items()}
    lines = [f"def program({args}):"]
    for i, st in enumerate(plan.steps):
        if st.name == "constant" and not st.inputs:  # made once: bound, not called
            env[f"c{i}"] = st.kernel()
            lines.append(f"    v{st.outputs[0]} = c{i}")
            continue
        env[f"k{i}"] = st.kernel
        call = [f"v{s}" for s in st.inputs]
        for j, value in enumerate(st.consts):
            env[f"a{i}_{j}"] = value
            call.append(f"a{i}_{j}")
        for name, value in st.attrs.items():
            env[f"a{i}_{name}"] = value
            call.append(f"{name}=a{i}_{name}")
        if st.out_buffer is not None:
            call.append(f"out=b{st.out_buffer}")
        elif i in donated_at:
            call.append(f"out=d{donated_at[i]}")
        outs = ", ".join(f"v{s}" for s in st.outputs)
        if len(st.outputs) > 1:
            outs += ","
        lines.append(f"    {outs} = k{i}({', '.join(call)})")
    lines.append(f"    return [{', '.join(f'v{s}' for s in plan.result_slots)}]")
    return "\n".join(lines) + "\n", env


def _errstate_ignore() -> tuple[Callable[[], Any], Callable[[Any], None]]:
    """Enter and leave ``np.errstate(all="ignore")``. numpy 2 keeps the error
    state in a context variable: setting it to one value made once costs less
    than building and entering an ``errstate`` per call (measured: 1.5 vs
    3.8 us). Other numpy versions: ``np.errstate`` itself."""
    try:
        from numpy._core._ufunc_config import _extobj_contextvar, _make_extobj
        ignore = _make_extobj(all="ignore")
    except (ImportError, TypeError):
        def enter() -> Any:
            state = np.errstate(all="ignore")
            state.__enter__()
            return state
        return enter, lambda state: state.__exit__(None, None, None)
    return (lambda: _extobj_contextvar.set(ignore)), _extobj_contextvar.reset


_quiet_floats, _loud_floats = _errstate_ignore()


def _sole_view(r: np.ndarray) -> bool:
    """Whether ``r`` is a writeable C-ordered view of all of a new array nothing
    else holds (a kernel's ``reshape`` of its own result, as a reduction's ones
    product): handing ``r`` out then aliases nothing, so it needs no copy. An
    input, a planned buffer, a constant or another view of that array holds a
    reference to it."""
    b = r.base
    # held by: r.base, ``b`` and getrefcount's argument
    if type(b) is not np.ndarray or b.base is not None or sys.getrefcount(b) != 3 \
            or b.nbytes != r.nbytes or not b.flags.writeable:
        return False
    f = r.flags
    return f.writeable and f.c_contiguous


def step_label(step: Any) -> str:
    """A plan step as a profile names it: the op, a fused program's ops and
    result shape, a matmul's operand shapes (``T``: a transposed view)."""
    k = step.kernel
    ops = getattr(k, "ops", None)
    if ops is not None:
        return f"fused[{','.join(op.name for op in ops)}] -> {tuple(k.result_shape)}"
    return step.name


class ReferenceExecutable:
    def __init__(self, plan: Plan):
        warm_sgemm()  # before the first program runs: see runtime/openblas.py
        keep_freed_memory()  # no page faults on every step's fresh arrays: runtime/malloc.py
        self.plan = plan
        self.source, env = _source(plan)
        self._env = env
        for i, (shape, d) in enumerate(plan.buffers):
            env[f"b{i}"] = np.empty(shape, d)
        exec(compile(self.source, "<pyflame reference plan>", "exec"), env)  # noqa: S102
        self._program = env["program"]
        self._lock = threading.Lock()  # the buffers belong to one run at a time
        self._arg_specs = [(tuple(shape), np.dtype(d.np)) for shape, d in plan.arg_specs]
        self._result_specs = [(tuple(shape), np.dtype(d.np)) for shape, d in plan.result_specs]
        self.nbytes = plan.buffer_bytes
        # the argument positions whose donated array a result may be written into
        self.donatable_args = frozenset(plan.donations)
        self._donation_names = {k: f"d{k}" for k in plan.donations}

    can_donate = True  # run(args, donated) may write results into donated arrays

    def profile_into(self, totals: dict[str, float]) -> None:
        """From now on, add each step's thread CPU time (seconds) to
        ``totals[label]`` (``step_label``; a matmul's label adds its operands'
        shapes). For ``bench/plan_profile.py``: it slows every call."""
        clock = time.thread_time
        for i, st in enumerate(self.plan.steps):
            if f"k{i}" not in self._env:  # (a constant: bound, not called)
                continue
            kernel, label = self._env[f"k{i}"], step_label(st)

            def timed(*args: Any, _kernel: Any = kernel, _label: str = label, **kw: Any) -> Any:
                if _label in ("matmul", "gemm_update", "reshape", "concat", "scatter_add", "gather",
                              "argmax"):
                    _label += " " + ", ".join(
                        f"{a.shape}{'' if a.flags.c_contiguous else 'T'}" for a in args)
                t0 = clock()
                r = _kernel(*args, **kw)
                totals[_label] = totals.get(_label, 0.0) + clock() - t0
                return r
            self._env[f"k{i}"] = timed

    def _reuse(self, args: list[np.ndarray], donated: Sequence[int]) -> dict[str, np.ndarray]:
        """The program's ``d<k>`` keywords: the donated arrays it may write into
        (planned for a result, C-ordered, writeable; an array passed twice stays
        read-only)."""
        names = self._donation_names
        distinct = len({id(a) for a in args}) == len(args)
        reuse = {}
        for k in donated:
            name = names.get(k)
            if name is None:
                continue
            a = args[k]
            if not distinct and sum(x is a for x in args) != 1:
                continue
            f = a.flags
            if f.c_contiguous and f.writeable:
                reuse[name] = a
        return reuse

    def run(self, args: list[np.ndarray], donated: Sequence[int] = ()) -> list[np.ndarray]:
        """The results for ``args``. The arrays at the ``donated`` positions
        are the caller's to give away: one may come back as a result (its
        memory reused), and none may be read after this call."""
        specs = self._arg_specs
        if len(args) != len(specs):
            raise ValueError(f"{len(args)} arguments for a program compiled for {len(specs)}")
        for a, (shape, d) in zip(args, specs):  # (a dtype is mostly numpy's own instance)
            if a.shape != shape or (a.dtype is not d and a.dtype != d):
                raise ValueError(f"argument of shape {a.shape} {a.dtype} does not match "
                                 f"the compiled {shape} {d}")
        reuse = self._reuse(args, donated) if donated else None
        # IEEE results (inf, nan) are the answer, as in PyTorch: no numpy warnings
        with self._lock:
            quiet = _quiet_floats()
            try:
                results = self._program(*args, **reuse) if reuse else self._program(*args)
            finally:
                _loud_floats(quiet)
        out = []
        specs = self._result_specs
        if len(results) != len(specs):
            raise RuntimeError(f"reference executor produced {len(results)} results, expected "
                               f"{len(specs)} (a kernel broke its rule)")
        for r, (shape, d) in zip(results, specs):
            if type(r) is not np.ndarray:
                r = np.asarray(r)
            if (r.base is not None or not r.flags.writeable) and not _sole_view(r):
                r = r.copy()  # results never alias inputs, views or buffers
            if r.shape != shape or (r.dtype is not d and r.dtype != d):
                raise RuntimeError(f"reference executor produced {r.shape} {r.dtype}, "
                                   f"expected {shape} {d} (a kernel broke its rule)")
            out.append(r)
        return out
