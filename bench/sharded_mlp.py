"""Data-parallel training of the large MLP (batch 1024, 1024 -> 1024 -> 1024 -> 10,
float32, SGD) in 1 process vs N processes over torch.distributed (gloo):
steps/s and the bytes each step's gradient all-reduce moves.

    python bench/sharded_mlp.py [--nproc 2] [--steps 10]
    python bench/sharded_mlp.py --zero [--nproc 2]   # AdamW replicated vs ZeRO-2

Without ``RANK`` in the environment it launches itself through
``python -m pyflame_mlir.launch`` for 1 and N processes and prints the table;
each rank trains on its rows of the global batch and averages the gradients.
``--zero``: AdamW on N processes, replicated (``all_reduce_grads``) and sharded
(``dist.ZeroRedundancyOptimizer``), in one run: steps/s, the optimizer state
each process holds and the bytes it sends per step (measured).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any

import numpy as np

SIZES = (1024, 1024, 1024, 10)
BATCH = 1024


def worker(steps: int, out: str, optimizer: str = "sgd") -> None:
    import pyflame_mlir as pf
    from pyflame_mlir import distributed as dist

    dist.init()
    rank, world = dist.rank(), dist.world_size()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
    y = np.eye(SIZES[-1], dtype=np.float32)[rng.integers(0, SIZES[-1], BATCH)]
    b = BATCH // world
    xb, yb = pf.tensor(x[rank * b:(rank + 1) * b]), pf.tensor(y[rank * b:(rank + 1) * b])
    params = []
    for i, o in zip(SIZES[:-1], SIZES[1:], strict=True):
        params += [pf.tensor((rng.standard_normal((i, o)) / np.sqrt(i)).astype(np.float32))
                   .requires_grad_(), pf.tensor(np.zeros(o, np.float32)).requires_grad_()]

    opt: Any = None
    if optimizer == "adamw":
        opt = pf.optim.AdamW(params, lr=1e-3)
    elif optimizer == "zero":
        opt = dist.ZeroRedundancyOptimizer(params, pf.optim.AdamW, lr=1e-3)
    measured = [0]

    def step() -> float:
        h = xb
        for j in range(0, len(params) - 2, 2):
            h = pf.relu(h @ params[j] + params[j + 1])
        loss = -(pf.log_softmax(h @ params[-2] + params[-1], dim=1) * yb).sum(dim=1).mean()
        loss.backward()
        if optimizer == "zero":
            opt.step()
            opt.zero_grad()
            measured[0] = sum(c.bytes_per_device for c in opt.last_comm.collectives)
            return loss.item()
        if world > 1:
            comm = dist.all_reduce_grads(params)
            measured[0] = sum(c.bytes_per_device for c in comm.collectives)
        if opt is not None:
            opt.step()
            opt.zero_grad()
            return loss.item()
        with pf.no_grad():
            for p in params:
                p -= 0.05 * p.grad
                p.grad = None
        return loss.item()

    for _ in range(2):  # compile, warm the caches
        step()
    dist.barrier()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    dist.barrier()
    dt = time.perf_counter() - t0
    nbytes = sum(int(np.prod(p.shape)) * 4 for p in params)
    # ring all-reduce: each process sends 2 (n - 1) / n of the gradients
    sent = 2 * (world - 1) * nbytes // world
    if optimizer != "sgd":
        state = opt.state_bytes() if optimizer == "zero" else sum(
            v.numpy().nbytes for st in opt.state.values() for v in st.values()
            if isinstance(v, pf.Tensor))
        last = step()  # every rank: a step is collective
        if rank == 0:
            with open(out, "w") as fh:
                json.dump({"optimizer": optimizer, "world": world, "steps_per_s": steps / dt,
                           "state_bytes": state, "sent": measured[0], "loss": last}, fh)
        dist.shutdown()
        return
    assert measured[0] == sent or world == 1  # the measured exchange is the ring count
    if rank == 0:
        with open(out, "w") as fh:
            json.dump({"world": world, "steps_per_s": steps / dt, "grad_bytes": nbytes,
                       "bytes_sent_per_process": sent, "bytes_total": sent * world}, fh)
    dist.shutdown()


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--nproc", type=int, default=2)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--worker-out", default=None)
    p.add_argument("--zero", action="store_true", help="AdamW replicated vs ZeRO-2")
    p.add_argument("--optimizer", default="sgd", help=argparse.SUPPRESS)
    a = p.parse_args()
    if "RANK" in os.environ:
        worker(a.steps, a.worker_out, a.optimizer)
        return
    if a.zero:
        compare_zero(a.nproc, a.steps)
        return
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (1, a.nproc):
            out = os.path.join(tmp, f"{n}.json")
            subprocess.run([sys.executable, "-m", "pyflame_mlir.launch", "--nproc", str(n),
                            __file__, "--steps", str(a.steps), "--worker-out", out], check=True)
            with open(out) as fh:
                rows.append(json.load(fh))
    print(f"data-parallel MLP {' -> '.join(map(str, SIZES))}, batch {BATCH}, f32, "
          f"{a.steps} steps, load {os.getloadavg()[0]:.1f}")
    print("| processes | steps/s | speedup | gradient bytes | sent per process | total |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['world']} | {r['steps_per_s']:.2f} | "
              f"{r['steps_per_s'] / rows[0]['steps_per_s']:.2f}x | {r['grad_bytes']:,} | "
              f"{r['bytes_sent_per_process']:,} | {r['bytes_total']:,} |")


def compare_zero(nproc: int, steps: int) -> None:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for opt in ("adamw", "zero"):
            out = os.path.join(tmp, f"{opt}.json")
            subprocess.run([sys.executable, "-m", "pyflame_mlir.launch", "--nproc", str(nproc),
                            __file__, "--steps", str(steps), "--worker-out", out,
                            "--optimizer", opt], check=True)
            with open(out) as fh:
                rows.append(json.load(fh))
    print(f"AdamW, data-parallel MLP {' -> '.join(map(str, SIZES))}, batch {BATCH}, f32, "
          f"{nproc} processes, {steps} steps, load {os.getloadavg()[0]:.1f}")
    print("| optimizer | steps/s | ratio | state bytes per process | sent per process per step "
          "| loss after |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['optimizer']} | {r['steps_per_s']:.2f} | "
              f"{r['steps_per_s'] / rows[0]['steps_per_s']:.2f}x | {r['state_bytes']:,} | "
              f"{r['sent']:,} | {r['loss']:.6f} |")


if __name__ == "__main__":
    main()
