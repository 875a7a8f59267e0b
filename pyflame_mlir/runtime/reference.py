"""Runs a reference plan: one kernel call per step, over preallocated buffers."""

from __future__ import annotations

import threading

import numpy as np

from ..lowering.reference import Plan


class ReferenceExecutable:
    def __init__(self, plan: Plan):
        self.plan = plan
        self._buffers = [np.empty(s, d) for s, d in plan.buffers]
        self._program = [(st.kernel, st.inputs, st.outputs, st.attrs,
                          None if st.out_buffer is None else self._buffers[st.out_buffer])
                         for st in plan.steps]
        self._lock = threading.Lock()  # the buffers belong to one run at a time
        self.nbytes = plan.buffer_bytes

    def run(self, args: list[np.ndarray]) -> list[np.ndarray]:
        plan = self.plan
        for a, (shape, d) in zip(args, plan.arg_specs):
            if a.shape != shape or a.dtype != d.np:
                raise ValueError(f"argument of shape {a.shape} {a.dtype} does not match the "
                                 f"compiled {shape} {d.name}")
        slots: list = [None] * plan.num_slots
        for s, a in zip(plan.arg_slots, args):
            slots[s] = a
        with self._lock:
            for kernel, ins, outs, attrs, buf in self._program:
                if buf is not None:
                    slots[outs[0]] = kernel(*[slots[i] for i in ins], out=buf, **attrs)
                elif len(outs) == 1:
                    slots[outs[0]] = kernel(*[slots[i] for i in ins], **attrs)
                else:
                    for o, v in zip(outs, kernel(*[slots[i] for i in ins], **attrs)):
                        slots[o] = v
            results = [slots[s] for s in plan.result_slots]
        out = []
        for r, (shape, d) in zip(results, plan.result_specs):
            r = np.asarray(r)
            if r.dtype != d.np or r.shape != shape:
                raise RuntimeError(f"reference executor produced {r.shape} {r.dtype}, "
                                   f"expected {shape} {d.name} (a kernel broke its rule)")
            if not r.flags.writeable or r.base is not None and not r.flags.owndata:
                r = r.copy()  # results never alias inputs, views or buffers
            out.append(r)
        return out
