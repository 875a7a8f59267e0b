"""A partitioned (per-device) ``pyflame`` program -> one MAX graph over the
mesh's devices (issue 17).

The function ``spmd-partition`` produced is the program of every device; the
graph holds one copy per device ``DeviceRef.GPU(i)`` (device i is mesh
position i, row-major), each ``pyflame`` op lowered by its rule of
``to_max.MAX_LOWERINGS`` on that device, and the collectives as MAX's:
``all_reduce`` (sum) -> ``ops.allreduce.sum``, ``all_gather`` ->
``ops.allgather``, ``reduce_scatter`` -> ``ops.reducescatter.sum`` (each over
the mesh groups of its axes, ordered so every group is contiguous, MAX's
``group_size``), ``ppermute`` and ``all_to_all`` -> ``ops.transfer_to`` between
devices, ``local_slice`` -> a static slice (each device's block is known when
the graph is built). Graph inputs are every device's local arguments, device
by device, then one signal buffer per device (``max.nn.comm.Signals``); the
outputs are every device's results, device by device.

Building needs only the ``max`` package; compiling and running need the GPUs.
"""

from __future__ import annotations

import os
from typing import IO, Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import SSAValue

from ..dialects.pyflame import PyflameOp, spec_of_type
from ..dialects.sharding import Mesh
from ..dialects.sharding_ir import (
    SHARDING_KEY,
    AllGatherOp,
    AllReduceOp,
    AllToAllOp,
    LocalSliceOp,
    PpermuteOp,
    ReduceScatterOp,
    ShardingAttr,
)
from .to_max import Ctx, MaxLoweringError, _lower_op, functions, max_dtype, rule_for


def mesh_of(fn: func.FuncOp) -> Mesh:
    """The mesh of a partitioned function (its arguments' shardings)."""
    for d in fn.arg_attrs.data if fn.arg_attrs is not None else ():
        a = d.data.get(SHARDING_KEY)
        if isinstance(a, ShardingAttr):
            return a.sharding.mesh
    raise MaxLoweringError("", f"@{fn.sym_name.data} is not a partitioned function (no "
                               "sharding.sharding argument attributes: run "
                               "sharding-propagation,spmd-partition first)")


def _coords(mesh: Mesh, p: int) -> tuple[int, ...]:
    return tuple(int(c) for c in np.unravel_index(p, [s for _, s in mesh.axes]))


def _groups(mesh: Mesh, axes: tuple[str, ...]) -> list[list[int]]:
    """Device positions per group of ``axes``, each in group-index order."""
    names, sizes = mesh.names, dict(mesh.axes)
    rest = [k for k, n in enumerate(names) if n not in axes]
    out: dict[tuple[int, ...], list[int]] = {}

    def index(p: int) -> int:
        c, i = _coords(mesh, p), 0
        for a in axes:
            i = i * sizes[a] + c[names.index(a)]
        return i

    for p in range(mesh.size(names)):
        c = _coords(mesh, p)
        out.setdefault(tuple(c[k] for k in rest), []).append(p)
    return [sorted(g, key=index) for g in out.values()]


def lower_partitioned(fn: func.FuncOp, name: str | None = None) -> Any:
    """The MAX graph (``max.graph.Graph``, not compiled) of every device of ``fn``."""
    from max.graph import DeviceRef, Graph, ops
    from max.graph import TensorType as MaxTensorType
    from max.nn.comm.allreduce import Signals

    mesh = mesh_of(fn)
    n = mesh.size(mesh.names)
    devs = [DeviceRef.GPU(i) for i in range(n)]
    block = fn.body.block
    for op in block.ops:
        if isinstance(op, PyflameOp) and rule_for(op.OPDEF) is None:
            raise MaxLoweringError(op.OPDEF.name, "has no MAX rule (run legalize-for-max's "
                                                  "decompositions before partitioning)")
    specs = [spec_of_type(a.type, f"argument #{i}") for i, a in enumerate(block.args)]
    inputs = [MaxTensorType(max_dtype(d), list(s), dev) for dev in devs for s, d in specs]
    signals = Signals(devs)
    graph = Graph(name or fn.sym_name.data, input_types=[*inputs, *signals.input_types()])
    with graph:
        vals = graph.inputs
        k = len(block.args)
        env: list[dict[SSAValue, Any]] = [
            {a: vals[i * k + j].tensor for j, a in enumerate(block.args)} for i in range(n)]
        bufs = [v.buffer for v in vals[n * k:]]
        cxs = [Ctx(ops, dev) for dev in devs]
        for op in block.ops:
            if isinstance(op, func.ReturnOp):
                graph.output(*[env[i][v] for i in range(n) for v in op.operands])
                break
            if isinstance(op, PyflameOp):
                for i in range(n):
                    _lower_op(cxs[i], op, env[i])
            else:
                _lower_collective(ops, op, env, bufs, devs, mesh)
    return graph


def _lower_collective(ops: Any, op: Any, env: list[dict[SSAValue, Any]], bufs: list[Any],
                      devs: list[Any], mesh: Mesh) -> None:
    n = len(devs)
    if isinstance(op, LocalSliceOp):
        s = op.sharding.sharding
        assert isinstance(op.input.type, TensorType)
        shape = tuple(op.input.type.get_shape())
        local = s.local_shape(shape)
        for p in range(n):
            idx = []
            for d, axes in enumerate(s.dims):
                i = _index(mesh, p, axes)
                idx.append(slice(i * local[d], (i + 1) * local[d]))
            env[p][op.result] = env[p][op.input][tuple(idx)]
        return
    groups = _groups(mesh, op.axis_names)
    size = len(groups[0])
    order = [p for g in groups for p in g]
    xs = [env[p][op.input] for p in order]
    sig = [bufs[p] for p in order]
    if isinstance(op, AllReduceOp):
        kind = op.reduction.data
        if kind == "sum":
            outs = ops.allreduce.sum(xs, sig, group_size=size)
        elif kind in ("max", "min"):
            # MAX's allreduce sums only: gather every device's value along a
            # new leading axis (the reduced operands are small: per-shard
            # maxima of a split softmax) and reduce it on each device
            stacked = ops.allgather([ops.unsqueeze(x, 0) for x in xs], sig, axis=0,
                                    group_size=size)
            pick = ops.max if kind == "max" else ops.min
            outs = [ops.reshape(pick(t, axis=0), x.shape) for t, x in zip(stacked, xs)]
        else:
            raise MaxLoweringError("", f"sharding.all_reduce: no MAX lowering for a {kind} "
                                       "all-reduce")
    elif isinstance(op, AllGatherOp):
        outs = ops.allgather(xs, sig, axis=op.params()["dim"], group_size=size)
    elif isinstance(op, ReduceScatterOp):
        outs = ops.reducescatter.sum(xs, sig, axis=op.params()["dim"], group_size=size)
    elif isinstance(op, PpermuteOp):
        outs = list(xs)
        for g_start in range(0, n, size):
            sent = dict((d, s) for s, d in op.params()["pairs"])
            for j in range(size):
                dst = g_start + j
                if j in sent:
                    outs[dst] = ops.transfer_to(xs[g_start + sent[j]], devs[order[dst]])
                else:
                    outs[dst] = ops.mul(xs[dst], ops.constant(0, xs[dst].dtype,
                                                              device=devs[order[dst]]))
    elif isinstance(op, AllToAllOp):
        p = op.params()
        sd, cd = p["split_dim"], p["concat_dim"]
        outs = list(xs)
        for g_start in range(0, n, size):
            for j in range(size):
                parts = []
                for i in range(size):
                    x = xs[g_start + i]
                    step = int(x.shape[sd]) // size
                    idx = [slice(None)] * x.rank
                    idx[sd] = slice(j * step, (j + 1) * step)
                    parts.append(ops.transfer_to(x[tuple(idx)], devs[order[g_start + j]]))
                outs[g_start + j] = ops.concat(parts, cd)
    else:
        raise MaxLoweringError("", f"no MAX lowering for {op.name}")
    for p, o in zip(order, outs, strict=True):
        env[p][op.result] = o


def _index(mesh: Mesh, p: int, axes: tuple[str, ...]) -> int:
    names, sizes, c = mesh.names, dict(mesh.axes), _coords(mesh, p)
    i = 0
    for a in axes:
        i = i * sizes[a] + c[names.index(a)]
    return i


def print_max_sharded(module: ModuleOp, stream: IO[str]) -> None:
    """``pyflame-opt -t max-sharded``: the MO text of each partitioned function's
    multi-device graph (built, not compiled)."""
    try:
        import max.graph  # noqa: F401
    except ImportError as e:
        raise MaxLoweringError("", f"-t max-sharded needs the `max` package ({e})") from None
    os.environ.setdefault("MODULAR_TELEMETRY_ENABLED", "0")
    for fn in functions(module):
        stream.write(str(lower_partitioned(fn)) + "\n")
