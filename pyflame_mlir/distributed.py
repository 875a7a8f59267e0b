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
from .autodiff import no_grad
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


def _place(p: Tensor) -> tuple[tuple[slice, ...], list[int], tuple[str, ...]]:
    """This process's block of parameter ``p`` (its layout's block: the whole of a
    parameter without one), the ranks holding the same block (the processes it
    is replicated over, sorted: torch.distributed's group order) and their mesh
    axes (``()`` for a parameter without a layout: replicated on every process)."""
    s = sharding.sharding_of(p)
    if s is None:
        return tuple(slice(None) for _ in p.shape), list(range(world_size())), ()
    if s.mesh.size != world_size():
        raise ValueError(f"a parameter {tuple(p.shape)} laid out over {s.mesh} "
                         f"({s.mesh.size} devices) in a world of {world_size()} processes: "
                         "one device per process")
    pos = s.mesh.devices.index(rank())
    split = {a for d in range(len(s.spec)) for a in s.spec.axes_of(d)}
    rest = tuple(a for a in s.mesh.axis_names if a not in split)
    ranks = _mesh_group(s.mesh, rest) if s.mesh.axis_size(rest) > 1 else [rank()]
    return s.block(pos, tuple(p.shape)), sorted(ranks), rest


def _with_block(p: Tensor, blk: tuple[slice, ...], block: np.ndarray) -> Tensor:
    """A tensor of ``p``'s shape holding ``block`` at ``blk`` and NaN elsewhere:
    the blocks other processes own are not kept here, and NaN makes any use of
    them loud rather than silently stale."""
    if all(b == slice(None) for b in blk):
        return tensor(block.reshape(p.shape))
    full = np.full(p.shape, np.nan, dtype=block.dtype)
    full[blk] = block
    return tensor(full)


def _record(report: sharding.CommReport, name: str, axes: tuple[str, ...], n: int,
            nbytes: int) -> None:
    per_device = bytes_sent(name, n, nbytes)
    report.collectives.append(sharding.CollectiveCost(name, axes, n, per_device,
                                                      per_device * world_size(), "gradient"))


def all_reduce_grads(params: Sequence[Tensor]) -> sharding.CommReport:
    """Give every process the global gradient of each parameter's block it holds:
    a parameter's gradient is summed over the processes it is replicated on
    only (all of them for a parameter without a layout, data parallel; the
    "data" axis for one split on "model"), one exchange per group of
    processes, and divided by the number of processes (each backpropagated its
    copy of the loss, see ``partition``). Where a parameter is split, the
    blocks other processes own are NaN in ``.grad`` (never stale values): clip
    with ``clip_grad_norm_`` here, not ``pf.nn.utils``'s. Returns what was
    exchanged (``CollectiveCost``s, phase ``"gradient"``)."""
    report = sharding.CommReport()
    buckets: dict[tuple[tuple[int, ...], tuple[str, ...]], list] = {}
    for p in params:
        if p.grad is not None:
            blk, ranks, axes = _place(p)
            buckets.setdefault((tuple(ranks), axes), []).append((p, blk))
    for (ranks, axes), items in buckets.items():
        blocks = [np.asarray(p.grad.numpy()[blk]) for p, blk in items]
        flat = torch.cat([torch.from_numpy(np.array(b, order="C")).reshape(-1) for b in blocks])
        if len(ranks) > 1:
            dist.all_reduce(flat, dist.ReduceOp.SUM, group=_group(ranks))
            _record(report, "all_reduce", axes, len(ranks), flat.numel() * flat.element_size())
        flat /= world_size()
        off = 0
        for (p, blk), b in zip(items, blocks, strict=True):
            n = b.size
            p.grad = _with_block(p, blk, flat[off:off + n].numpy().reshape(b.shape))
            off += n
    return report


def clip_grad_norm_(params: Sequence[Tensor], max_norm: float) -> Tensor:
    """``pf.nn.utils.clip_grad_norm_`` (the 2-norm) of gradients reduced by
    ``all_reduce_grads``: each process adds the squares of its blocks, each
    counted once over the processes holding it, and one scalar all-reduce
    gives every process the total norm (FSDP's ``clip_grad_norm_``)."""
    grads = [(p, *_place(p)[:2]) for p in params if p.grad is not None]
    if not grads:
        return tensor(0.0)
    dt = grads[0][0].grad.numpy().dtype
    local = sum(float(np.sum(np.square(p.grad.numpy()[blk], dtype=np.float64))) / len(ranks)
                for p, blk, ranks in grads)
    total = _global_norm(local)
    coef = min(max_norm / (total + 1e-6), 1.0)
    with no_grad():
        for p, _, _ in grads:
            p.grad = tensor((p.grad.numpy() * coef).astype(dt))
    return tensor(np.asarray(total, dtype=dt))


def _global_norm(local_sum_of_squares: float) -> float:
    buf = torch.tensor([local_sum_of_squares], dtype=torch.float64)
    dist.all_reduce(buf, dist.ReduceOp.SUM)
    return float(np.sqrt(buf.item()))


class _Bucket:
    """The parameters replicated over the same processes: their flattened
    blocks, each zero-padded to ``k`` equal chunks (``k`` processes), laid out
    chunk-major so that one reduce-scatter gives process ``j`` chunk ``j`` of
    every parameter, and one all-gather gives every process all of them."""

    def __init__(self, ranks: tuple[int, ...], axes: tuple[str, ...]):
        self.ranks, self.axes = ranks, axes
        self.items: list[tuple[Tensor, tuple[slice, ...], tuple[int, ...], int]] = []
        self.slices: list[Tensor] = []  # this process's chunk of each parameter

    @property
    def me(self) -> int:
        return self.ranks.index(rank())

    def add(self, p: Tensor, blk: tuple[slice, ...]) -> None:
        block = np.asarray(p.numpy()[blk])
        chunk = -(-block.size // len(self.ranks))
        self.items.append((p, blk, block.shape, chunk))
        self.slices.append(tensor(self._chunks(block)[self.me]).requires_grad_())

    def _chunks(self, block: np.ndarray) -> np.ndarray:
        k = len(self.ranks)
        padded = np.zeros(k * -(-block.size // k), block.dtype)
        padded[:block.size] = block.ravel()
        return padded.reshape(k, -1)

    def reduce_scatter(self, report: sharding.CommReport) -> None:
        """Each slice's ``.grad``: its chunk of the gradient summed over the
        bucket's processes, divided by the world size (see ``all_reduce_grads``)."""
        rows = np.concatenate([self._chunks(np.asarray(p.grad.numpy()[blk]))
                               for p, blk, _, _ in self.items], axis=1)
        if len(self.ranks) > 1:
            out = torch.empty(rows.shape[1], dtype=torch.from_numpy(rows).dtype)
            dist.reduce_scatter_single(out, torch.from_numpy(np.array(rows, order="C")).reshape(-1),
                                       group=_group(self.ranks))
            _record(report, "reduce_scatter", self.axes, len(self.ranks), rows.nbytes)
            mine = out.numpy()
        else:
            mine = rows[0]
        mine = mine / world_size()
        off = 0
        for (_, _, _, c), s in zip(self.items, self.slices, strict=True):
            s.grad = tensor(mine[off:off + c])
            off += c

    def all_gather(self, report: sharding.CommReport) -> None:
        """Every process's updated chunks, written into its parameters' blocks."""
        mine = np.concatenate([s.numpy() for s in self.slices])
        if len(self.ranks) > 1:
            out = torch.empty(len(self.ranks) * mine.size, dtype=torch.from_numpy(mine).dtype)
            dist.all_gather_single(out, torch.from_numpy(mine), group=_group(self.ranks))
            _record(report, "all_gather", self.axes, len(self.ranks), mine.nbytes)
            rows = out.numpy().reshape(len(self.ranks), -1)
        else:
            rows = mine[None]
        off = 0
        with no_grad():
            for p, blk, shape, c in self.items:
                block = rows[:, off:off + c].reshape(-1)[:int(np.prod(shape))].reshape(shape)
                p.copy_(_with_block(p, blk, block))
                off += c


class ZeroRedundancyOptimizer:
    """An elementwise optimizer (``pf.optim.SGD``, ``Adam``, ``AdamW``...) sharded
    across processes, ZeRO stage 2 (PyTorch's ``ZeroRedundancyOptimizer`` with
    the gradients reduce-scattered, FSDP's ``SHARD_GRAD_OP``): of each
    parameter's block (its layout's, ``dist.partition``; the whole of one
    without a layout) the ``k`` processes holding it own one chunk each
    (``1/k``, zero-padded). A step reduce-scatters the gradients over those
    processes (each gets the sum of its chunk; the parameters' ``.grad`` are
    dropped), runs ``optimizer_class`` on the chunks (its state exists for
    them only: ``1/world`` of the replicated optimizer's for a mesh-wide
    layout, ``state_bytes()``), and all-gathers the updated chunks into the
    parameters' blocks (other processes' blocks are NaN, as in
    ``all_reduce_grads``). One reduce-scatter and one all-gather per group of
    processes and step, the volume of an all-reduce; ``last_comm`` reports them.
    ``clip_grad_norm_(max_norm)`` (before ``step``) clips by the global norm."""

    def __init__(self, params: Sequence[Tensor], optimizer_class: Callable[..., Any],
                 **defaults: Any):
        self.params = list(params)
        buckets: dict[tuple[tuple[int, ...], tuple[str, ...]], _Bucket] = {}
        for p in self.params:
            blk, ranks, axes = _place(p)
            key = (tuple(ranks), axes)
            if key not in buckets:
                buckets[key] = _Bucket(*key)
            buckets[key].add(p, blk)
        self._buckets = list(buckets.values())
        self.optim = optimizer_class([s for b in self._buckets for s in b.slices], **defaults)
        self.last_comm = sharding.CommReport()
        self._reduced = False

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.params:
            p.grad = None
        self.optim.zero_grad(set_to_none)
        self._reduced = False

    def reduce_gradients(self) -> None:
        """Reduce-scatter the parameters' gradients into the chunks' (once a step)."""
        if self._reduced:
            return
        self.last_comm = sharding.CommReport()
        missing = [tuple(p.shape) for p in self.params if p.grad is None]
        if missing:
            raise ValueError(f"ZeroRedundancyOptimizer: parameters of shapes {missing} have no "
                             "gradient; every process must reduce every gradient")
        for b in self._buckets:
            b.reduce_scatter(self.last_comm)
        for p in self.params:
            p.grad = None
        self._reduced = True

    def clip_grad_norm_(self, max_norm: float) -> Tensor:
        """Scale the gradients so that their global 2-norm is at most ``max_norm``
        (``pf.nn.utils.clip_grad_norm_``'s rule); returns the norm before."""
        self.reduce_gradients()
        slices = [s for b in self._buckets for s in b.slices]
        local = sum(float(np.sum(np.square(s.grad.numpy(), dtype=np.float64))) for s in slices)
        total = _global_norm(local)
        coef = min(max_norm / (total + 1e-6), 1.0)
        for s in slices:
            g = s.grad.numpy()
            s.grad = tensor((g * coef).astype(g.dtype))
        return tensor(np.asarray(total, dtype=slices[0].grad.numpy().dtype))

    def step(self) -> None:
        self.reduce_gradients()
        self.optim.step()
        for b in self._buckets:
            b.all_gather(self.last_comm)
        self._reduced = False

    def state_bytes(self) -> int:
        """Bytes of optimizer state this process holds (measured on its arrays)."""
        return sum(v.numpy().nbytes for st in self.optim.state.values() for v in st.values()
                   if isinstance(v, Tensor))


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
    ``all_reduce_grads(params)`` sums each block over the processes holding it
    and divides by ``world_size``; ``ZeroRedundancyOptimizer`` reduce-scatters
    them instead and shards the optimizer."""
    return sharding.partition(f, mapper=process_shard_map)

