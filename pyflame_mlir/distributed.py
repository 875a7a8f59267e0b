"""Collectives across processes over ``torch.distributed`` (issue 17, extra ``[dist]``).

One process per device, started by ``python -m pyflame_mlir.launch --nproc N
script.py`` or by ``torchrun`` (the same environment variables: ``RANK``,
``WORLD_SIZE``, ``MASTER_ADDR``, ``MASTER_PORT``); gloo on CPU, NCCL where
the backend's tensors live on GPUs. Each process runs its device's program;
a collective evaluates its operand, exchanges the numpy data through
``torch.distributed`` and continues with the result as a new leaf. Gradients
do not flow through these collectives: data-parallel training differentiates
each process's local loss and averages the gradients (``all_reduce_grads``),
as DistributedDataParallel does. ``shard_map`` runs the calling process's
device only (``process_shard_map``), with the same collective functions
(``pf.all_reduce``...) exchanging across processes.

Not imported by ``import pyflame_mlir``: torch loads only for programs that use it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
import torch.distributed as dist

from . import autograd, sharding
from .core import Tensor
from .creation import tensor
from .dialects.sharding import bytes_sent

_REDUCE_OPS = {"sum": dist.ReduceOp.SUM, "mean": dist.ReduceOp.SUM,
               "max": dist.ReduceOp.MAX, "min": dist.ReduceOp.MIN}


def init(backend: str = "gloo") -> None:
    """Join the process group described by the environment (torchrun's variables)."""
    if dist.is_initialized():
        return
    missing = [v for v in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
               if v not in os.environ]
    if missing:
        raise RuntimeError(f"pyflame_mlir.distributed.init: {', '.join(missing)} not set; start "
                           "the script with python -m pyflame_mlir.launch --nproc N (or torchrun)")
    dist.init_process_group(backend)


def shutdown() -> None:
    if dist.is_initialized():
        dist.destroy_process_group()


def rank() -> int:
    return dist.get_rank() if dist.is_initialized() else int(os.environ.get("RANK", 0))


def world_size() -> int:
    return dist.get_world_size() if dist.is_initialized() else \
        int(os.environ.get("WORLD_SIZE", 1))


def _to_torch(t: Tensor) -> torch.Tensor:
    # (not np.ascontiguousarray: it makes a 0-d array 1-d)
    return torch.from_numpy(np.array(t.numpy(), order="C", copy=True))


def _group(ranks: Sequence[int] | None) -> Any:
    """A process group of ``ranks`` (None: the world). Every process must create
    every group in the same order (torch.distributed's rule): ``_MESH_GROUPS``
    builds all groups of a mesh axis set at once."""
    return None if ranks is None else _MESH_GROUPS.get(tuple(ranks))


_MESH_GROUPS: dict[tuple[int, ...], Any] = {}


def _mesh_group(mesh: sharding.DeviceMesh, axes: tuple[str, ...]) -> list[int]:
    """Create (once, collectively) the groups of ``axes``; return this rank's."""
    me = rank()
    mine: list[int] = []
    for g in mesh.groups(axes):
        ranks = tuple(mesh.devices[p] for p in g)
        if ranks not in _MESH_GROUPS and len(ranks) < world_size():
            _MESH_GROUPS[ranks] = dist.new_group(list(ranks))
        if me in ranks:
            mine = list(ranks)
    return mine


def all_reduce(t: Tensor, op: str = "sum", ranks: Sequence[int] | None = None) -> Tensor:
    """The sum (``"mean"``, ``"max"``, ``"min"``) of ``t`` over the processes."""
    buf = _to_torch(t)
    dist.all_reduce(buf, _REDUCE_OPS[op], group=_group(ranks))
    if op == "mean":
        buf /= len(ranks) if ranks is not None else world_size()
    return tensor(buf.numpy())


def all_gather(t: Tensor, dim: int = 0, ranks: Sequence[int] | None = None) -> Tensor:
    """The processes' ``t`` concatenated along ``dim`` in rank order."""
    buf = _to_torch(t)
    n = len(ranks) if ranks is not None else world_size()
    parts = [torch.empty_like(buf) for _ in range(n)]
    dist.all_gather(parts, buf, group=_group(ranks))
    return tensor(torch.cat(parts, dim).numpy())


def broadcast(t: Tensor, src: int = 0) -> Tensor:
    buf = _to_torch(t)
    dist.broadcast(buf, src)
    return tensor(buf.numpy())


def barrier() -> None:
    dist.barrier()


def all_reduce_grads(params: Sequence[Tensor]) -> None:
    """Average each parameter's ``.grad`` over the processes (data parallel), in
    one exchange of the flattened gradients."""
    grads = [p.grad for p in params]
    flat = torch.cat([_to_torch(g).reshape(-1) for g in grads])
    dist.all_reduce(flat, dist.ReduceOp.SUM)
    flat /= world_size()
    off = 0
    for p, g in zip(params, grads, strict=True):
        n = int(np.prod(g.shape))
        p.grad = tensor(flat[off:off + n].reshape(g.shape).numpy())
        off += n


class _ProcessRun:
    """The calling process's device of a ``shard_map``: the interface the
    collectives of ``pyflame_mlir.sharding`` call (``collective``, ``mesh``)."""

    def __init__(self, mesh: sharding.DeviceMesh):
        self.mesh = mesh
        self.report = sharding.CommReport()

    def collective(self, name: str, axes: tuple[str, ...], params: tuple, x: Tensor) -> Tensor:
        return _Exchange.apply(x, self, name, axes, params)

    def exchange(self, name: str, axes: tuple[str, ...], params: tuple, x: Tensor) -> Tensor:
        ranks = _mesh_group(self.mesh, axes)
        n = len(ranks)
        data = x.numpy()
        nbytes = data.nbytes
        if name == "all_reduce":
            out = all_reduce(x, params[0], ranks)
        elif name == "all_gather":
            dim, tiled = params
            g = all_gather(x if tiled else tensor(np.expand_dims(data, dim)), dim, ranks)
            out = g
        elif name in ("reduce_scatter", "all_to_all", "ppermute"):
            # through all_gather: simple and exact (the volume is reported as the
            # ring algorithm's, what a native collective would move)
            gathered = all_gather(tensor(data[None]), 0, ranks).numpy()
            me = ranks.index(rank())
            out = tensor(_local_rule(name, params, list(gathered), me))
        else:
            raise ValueError(f"{name} is not a collective")
        self.report.collectives.append(sharding.CollectiveCost(
            name, axes, n, bytes_sent(name, n, nbytes), bytes_sent(name, n, nbytes) * n))
        return out


def _transpose(name: str, params: tuple) -> tuple[str, tuple]:
    """The collective carrying the cotangent back (``dialects/sharding.py:
    collective_transpose`` in the frontend's parameter order)."""
    if name == "all_reduce":
        if params[0] not in ("sum", "mean"):
            raise ValueError(f"all_reduce: the {params[0]} reduction has no gradient rule")
        return name, params
    if name == "all_gather":
        return "reduce_scatter", params
    if name == "reduce_scatter":
        return "all_gather", params
    if name == "all_to_all":
        return name, (params[1], params[0])
    return name, (tuple((d, s) for s, d in params[0]),)


class _Exchange(autograd.Function):
    """A collective across processes; its backward is the transpose collective,
    run by every process in the same order (backward visits them in reverse)."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, run: _ProcessRun, name: str, axes: tuple[str, ...],
                params: tuple) -> Tensor:
        ctx.meta = (run, name, axes, params)
        return run.exchange(name, axes, params, x)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple:
        run, name, axes, params = ctx.meta
        tname, tparams = _transpose(name, params)
        return run.exchange(tname, axes, tparams, g), None, None, None, None


def _local_rule(name: str, params: tuple, xs: list[np.ndarray], me: int) -> np.ndarray:
    n = len(xs)
    if name == "reduce_scatter":
        dim, tiled = params
        total = np.sum(xs, axis=0)
        part = np.split(total, n, axis=dim)[me]
        return part if tiled else np.squeeze(part, dim)
    if name == "all_to_all":
        split_dim, concat_dim = params
        return np.concatenate([np.split(x, n, axis=split_dim)[me] for x in xs], concat_dim)
    pairs = dict((d, s) for s, d in params[0])
    return xs[pairs[me]] if me in pairs else np.zeros_like(xs[me])


def process_shard_map(f: Callable, mesh: sharding.DeviceMesh, in_specs: Any, out_specs: Any
                      ) -> Callable:
    """``shard_map`` with one device per process: the mesh's devices are ranks;
    each process passes the global inputs (or any array of their shape whose
    block it holds) and gets its own device's outputs (local blocks)."""
    if mesh.size != world_size():
        raise ValueError(f"process_shard_map: a mesh of {mesh.size} devices needs as many "
                         f"processes, the world has {world_size()}")

    def mapped(*args: Tensor) -> Any:
        pos = mesh.devices.index(rank())
        specs = sharding._flat_specs(in_specs, len(args), "in_specs")
        local = []
        for x, spec in zip(args, specs, strict=True):
            s = sharding.NamedSharding(mesh, spec)
            s.check(tuple(x.shape), "shard_map")
            local.append(x[s.block(pos, tuple(x.shape))])
        run = _ProcessRun(mesh)
        sharding._DEVICE.run, sharding._DEVICE.position = run, pos
        try:
            out = f(*local)
        finally:
            sharding._DEVICE.run = None
        mapped.last_comm = run.report
        return out

    return mapped


def partition(f: Callable) -> Callable:
    """``pf.sharding.partition`` with one device per process: the same
    propagation and device program, each process running its own device (its
    ranks are the mesh's devices) with the collectives over ``torch.distributed``.
    Outputs are this process's blocks (a replicated output, such as a loss, is
    the global value). Every process backpropagates from its copy of a
    replicated loss, so each parameter's gradient is its device's contribution,
    and the processes' contributions add up to ``world_size`` times the global
    gradient (every copy being the same function of all inputs):
    ``all_reduce_grads(params)`` (their mean) gives every process the global
    gradients, and a replicated optimizer step keeps the parameters identical."""
    return sharding.partition(f, mapper=process_shard_map)

