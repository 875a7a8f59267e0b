"""Run by test_multiprocess.py under ``python -m pyflame_mlir.launch --nproc N``:
20 SGD steps of an MLP, data parallel (each rank its rows of the batch,
gradients averaged across processes) or Megatron tensor parallel inside
``process_shard_map``; rank 0 writes the global losses to argv[2] as JSON."""

import json
import sys

import numpy as np

import pyflame_mlir as pf
from pyflame_mlir import P
from pyflame_mlir import distributed as dist

modes, out_path = sys.argv[1].split(","), sys.argv[2]
dist.init()
rank, world = dist.rank(), dist.world_size()
rng = np.random.default_rng(0)
x, y = rng.standard_normal((8, 6)), rng.standard_normal((8, 3))
w1, w2 = rng.standard_normal((6, 4)) * 0.5, rng.standard_normal((4, 3)) * 0.5
results = {}


def data_parallel() -> list[float]:
    losses = []
    b = 8 // world
    xb, yb = pf.tensor(x[rank * b:(rank + 1) * b]), pf.tensor(y[rank * b:(rank + 1) * b])
    params = [pf.tensor(w1).requires_grad_(), pf.tensor(w2).requires_grad_()]
    for _ in range(20):
        loss = ((pf.relu(xb @ params[0]) @ params[1] - yb) ** 2).mean()
        loss.backward()
        dist.all_reduce_grads(params)
        with pf.no_grad():
            for p in params:
                p -= 0.1 * p.grad
                p.grad = None
        losses.append(dist.all_reduce(loss, "mean").item())
    return losses


def mixed() -> list[float]:
    """A 2 x (world/2) mesh, the batch over "d", the Megatron MLP over "m"."""
    losses = []
    mesh = pf.DeviceMesh((2, world // 2), ("d", "m"))

    def local_loss(xb, w1b, w2b, yb):
        h = pf.all_reduce(pf.relu(xb @ w1b) @ w2b, "m")
        # every "m" device holds a copy of the loss and differentiates it: the
        # all_reduce's backward sums the copies' cotangents, so each counts 1/n
        return ((h - yb) ** 2).mean() / (world // 2)

    def step(xb, w1b, w2b, yb):
        loss, (g1, g2) = pf.value_and_grad(local_loss, argnums=(1, 2))(xb, w1b, w2b, yb)
        # the data-parallel mean of the loss and of the local weight blocks' gradients
        return (pf.all_reduce(loss, "d", "mean") * (world // 2),
                w1b - 0.1 * pf.all_reduce(g1, "d", "mean"),
                w2b - 0.1 * pf.all_reduce(g2, "d", "mean"))

    w1b, w2b = pf.tensor(w1), pf.tensor(w2)
    # this process keeps its blocks of the weights (replicated over "d") across steps
    pos = mesh.devices.index(rank)
    s1, s2 = pf.NamedSharding(mesh, P(None, "m")), pf.NamedSharding(mesh, P("m"))
    w1b, w2b = w1b[s1.block(pos, w1.shape)], w2b[s2.block(pos, w2.shape)]
    local = dist.process_shard_map(step, mesh, (P("d"), P(), P(), P("d")), None)
    for _ in range(20):
        loss, w1b, w2b = local(pf.tensor(x), w1b, w2b, pf.tensor(y))
        pf.eval(w1b, w2b)
        losses.append(loss.item())
    return losses


def _partitioned(opt_factory):
    """``dist.partition`` of the MLP over a 2 x (world/2) mesh: the batch over "d",
    Megatron over "m" (w1 by columns, w2 by rows)."""
    mesh = pf.DeviceMesh((2, world // 2), ("d", "m"))
    params = [pf.shard(pf.tensor(w1).requires_grad_(), mesh, P(None, "m")),
              pf.shard(pf.tensor(w2).requires_grad_(), mesh, P("m"))]
    step = dist.partition(lambda a, b, v1, v2: ((pf.relu(a @ v1) @ v2 - b) ** 2).mean())
    xs, ys = pf.shard(pf.tensor(x), mesh, P("d")), pf.shard(pf.tensor(y), mesh, P("d"))
    return mesh, params, step, xs, ys, opt_factory(params)


def partitioned_sgd() -> list[float]:
    """Gradients all-reduced over the axes each parameter is replicated on only."""
    _, params, step, xs, ys, opt = _partitioned(lambda ps: pf.optim.SGD(ps, lr=0.1))
    losses, norms = [], []
    for _ in range(20):
        loss = step(xs, ys, *params)
        opt.zero_grad()
        loss.backward()
        comm = dist.all_reduce_grads(params)
        # the global norm from the blocks (a large bound: no clipping, SGD's losses)
        norms.append(dist.clip_grad_norm_(params, 1e6).item())
        opt.step()
        losses.append(loss.item())
    # w1's (6, 2) and w2's (2, 3) blocks over "d" only (f64): 144 bytes of all-reduce
    stats["sgd_grad_norms"] = norms
    stats["sgd_grad_bytes_per_device"] = sum(c.bytes_per_device for c in comm.collectives)
    return losses


def partitioned_zero() -> list[float]:
    """ZeRO-2 AdamW: gradients reduce-scattered over "d", chunks updated, all-gathered."""
    _, params, step, xs, ys, opt = _partitioned(
        lambda ps: dist.ZeroRedundancyOptimizer(ps, pf.optim.AdamW, lr=0.05, weight_decay=0.1))
    losses = []
    for i in range(20):
        loss = step(xs, ys, *params)
        opt.zero_grad()
        loss.backward()
        if i == 0:  # the compiler's count of the step's gradient exchange
            report = pf.compile_graph([loss] + [p.grad for p in params])
            stats["compiled_grad_bytes_per_device"] = sum(
                c.bytes_per_device for c in report.collectives if c.phase == "gradient")
        opt.clip_grad_norm_(10.0)
        opt.step()
        losses.append(loss.item())
    stats["zero_comm"] = [(c.name, c.group_size, c.bytes_per_device)
                          for c in opt.last_comm.collectives]
    stats["zero_state_bytes"] = dist.all_gather(pf.tensor([opt.state_bytes()])).tolist()
    return losses


stats: dict = {}
for mode in modes:
    results[mode] = {"dp": data_parallel, "mixed": mixed, "partition": partitioned_sgd,
                     "zero": partitioned_zero}[mode]()
if rank == 0:
    with open(out_path, "w") as fh:
        json.dump(results, fh)
    with open(out_path + ".stats.json", "w") as fh:
        json.dump(stats, fh)
dist.shutdown()
