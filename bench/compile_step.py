"""The MLP training step (batch 64, 784 -> 256 -> 256 -> 10, ReLU, softmax
cross-entropy, SGD) five ways, each in its own process, side by side:

- ``pf.compile``: the step traced once, then replayed (no recording);
- the implicit cache: the same step recorded every call, its graph found in
  the compile cache by structure;
- a hand-written numpy forward + backward (the floor for the reference
  backend: the same BLAS calls, nothing else);
- torch eager; jax.jit (the ``bench`` extra).

Every implementation's loss after two steps from the same start must agree,
or the run fails. Prints a markdown table (docs/PERFORMANCE.md). ``--pair``:
the ``pf.compile`` / hand numpy ratio in one process, in thread CPU time.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from statistics import median

import numpy as np

B, D, H, C, LR = 64, 784, 256, 10, 0.01
rng = np.random.default_rng(0)
X = rng.standard_normal((B, D)).astype(np.float32)
Y = np.eye(C, dtype=np.float32)[rng.integers(0, C, B)]
INIT = [(rng.standard_normal((D, H)) * 0.05).astype(np.float32), np.zeros(H, np.float32),
        (rng.standard_normal((H, H)) * 0.05).astype(np.float32), np.zeros(H, np.float32),
        (rng.standard_normal((H, C)) * 0.05).astype(np.float32), np.zeros(C, np.float32)]

Step = Callable[[], float]  # one training step; returns its loss


def pyflame_step(compiled: bool) -> tuple[Step, dict[str, int]]:
    import pyflame_mlir as pf

    params = [pf.tensor(p.copy(), requires_grad=True) for p in INIT]
    x, y = pf.tensor(X), pf.tensor(Y)
    w1, b1, w2, b2, w3, b3 = params

    def step(x: pf.Tensor, y: pf.Tensor) -> pf.Tensor:
        for p in params:
            p.grad = None
        h = pf.relu(pf.relu(x @ w1 + b1) @ w2 + b2)
        loss = -(pf.log_softmax(h @ w3 + b3, dim=1) * y).sum(dim=1).mean()
        loss.backward()
        with pf.no_grad():
            for p in params:
                p.sub_(p.grad * LR)
        return loss

    f = pf.compile(step) if compiled else step
    counters = {"recorded": 0}

    def run() -> float:
        before = pf.COUNTERS.ops_recorded
        loss = f(x, y).item()
        counters["recorded"] = pf.COUNTERS.ops_recorded - before
        return loss
    return run, counters


def numpy_step() -> tuple[Step, dict[str, int]]:
    # the same one-time OpenBLAS warm-up as pyflame's backends (runtime/openblas.py):
    # without it this floor's first product runs at a third of BLAS's rate; and the
    # same malloc settings (runtime/malloc.py)
    from pyflame_mlir.runtime.malloc import keep_freed_memory
    from pyflame_mlir.runtime.openblas import warm_sgemm

    warm_sgemm()
    keep_freed_memory()
    w1, b1, w2, b2, w3, b3 = [p.copy() for p in INIT]

    def run() -> float:
        h1 = X @ w1 + b1
        a1 = np.maximum(h1, 0)
        h2 = a1 @ w2 + b2
        a2 = np.maximum(h2, 0)
        logits = a2 @ w3 + b3
        z = logits - logits.max(1, keepdims=True)
        e = np.exp(z)
        s = e.sum(1, keepdims=True)
        loss = -((z - np.log(s)) * Y).sum(1).mean()
        d = (e / s - Y) * (1.0 / B)
        dw3, db3 = a2.T @ d, d.sum(0)
        d2 = (d @ w3.T) * (h2 > 0)
        dw2, db2 = a1.T @ d2, d2.sum(0)
        d1 = (d2 @ w2.T) * (h1 > 0)
        dw1, db1 = X.T @ d1, d1.sum(0)
        for p, g in ((w1, dw1), (b1, db1), (w2, dw2), (b2, db2), (w3, dw3), (b3, db3)):
            p -= LR * g
        return float(loss)
    return run, {}


def torch_step() -> tuple[Step, dict[str, int]]:
    import torch

    torch.set_num_threads(1)
    params = [torch.tensor(p.copy(), requires_grad=True) for p in INIT]
    x, y = torch.tensor(X), torch.tensor(Y)
    w1, b1, w2, b2, w3, b3 = params

    def run() -> float:
        h = torch.relu(torch.relu(x @ w1 + b1) @ w2 + b2)
        loss = -(torch.log_softmax(h @ w3 + b3, dim=1) * y).sum(1).mean()
        loss.backward()
        with torch.no_grad():
            for p in params:
                p -= LR * p.grad
                p.grad = None
        return loss.item()
    return run, {}


def jax_step() -> tuple[Step, dict[str, int]]:
    import jax
    import jax.numpy as jnp

    def loss_fn(ps, x, y):
        w1, b1, w2, b2, w3, b3 = ps
        h = jax.nn.relu(jax.nn.relu(x @ w1 + b1) @ w2 + b2)
        return -(jax.nn.log_softmax(h @ w3 + b3, axis=1) * y).sum(1).mean()

    @jax.jit
    def update(ps, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(ps, x, y)
        return [p - LR * g for p, g in zip(ps, grads)], loss

    state = {"ps": [jnp.asarray(p) for p in INIT]}
    x, y = jnp.asarray(X), jnp.asarray(Y)

    def run() -> float:
        state["ps"], loss = update(state["ps"], x, y)
        return float(loss)
    return run, {}


IMPLS: dict[str, tuple[str, Callable[[], tuple[Step, dict[str, int]]]]] = {
    "compile": ("pyflame pf.compile", lambda: pyflame_step(True)),
    "implicit": ("pyflame implicit cache", lambda: pyflame_step(False)),
    "numpy": ("hand-written numpy", numpy_step),
    "torch": ("torch eager", torch_step),
    "jax": ("jax.jit", jax_step),
}


def _child(impl: str, n: int) -> None:
    step, counters = IMPLS[impl][1]()
    t0 = time.perf_counter()
    step()
    first = time.perf_counter() - t0
    loss2 = step()
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            step()
        best = min(best, (time.perf_counter() - t0) / n)
    print(json.dumps({"ms": best * 1e3, "first": first, "loss2": loss2, **counters}))


def _run(impl: str, n: int) -> dict | None:
    # one BLAS thread for every implementation (torch's set_num_threads(1) below):
    # on a shared 2-core machine OpenBLAS's spinning threads make numpy's timings noise
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, __file__, "--child", impl, str(n)],
                         capture_output=True, text=True, env=env)
    if out.returncode != 0:
        if "ModuleNotFoundError" in out.stderr or "ImportError" in out.stderr:
            return None
        raise RuntimeError(f"{impl} failed:\n{out.stderr}")
    return json.loads(out.stdout)


def main(n: int = 50, rounds: int = 3) -> None:
    got: dict[str, list[dict]] = {}
    for k in range(rounds):
        names = list(IMPLS)
        for impl in names[k % len(names):] + names[:k % len(names)]:
            r = _run(impl, n)
            if r is not None:
                got.setdefault(impl, []).append(r)
    ref = got["numpy"][0]["loss2"]
    for impl, rs in got.items():
        if abs(rs[0]["loss2"] - ref) > 1e-4 * abs(ref):
            raise RuntimeError(f"{impl}: loss after two steps {rs[0]['loss2']}, numpy {ref}")
    best = {impl: min(r["ms"] for r in rs) for impl, rs in got.items()}
    try:
        load = " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        load = "unknown"
    print(f"machine: {platform.machine()}, Python {platform.python_version()}, numpy "
          f"{np.__version__}, date {time.strftime('%Y-%m-%d %H:%M')}, load average {load}; "
          f"each in its own process; best of 5x{n} steps, {rounds} rounds\n")
    print("| implementation | ms/step (best) | vs hand numpy (median of rounds) | first step | "
          "ops recorded per step |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for impl, (name, _) in IMPLS.items():
        rs = got.get(impl)
        if rs is None:
            print(f"| {name} | not installed | — | — | — |")
            continue
        ratios = [r["ms"] / q["ms"] for r, q in zip(rs, got["numpy"])]
        rec = rs[-1].get("recorded")
        print(f"| {name} | {best[impl]:.2f} | {median(ratios):.2f}x | "
              f"{rs[0]['first'] * 1e3:.0f} ms | {'—' if rec is None else rec} |")


def pair(rounds: int = 6, n: int = 40) -> None:
    """``--pair [ROUNDS]``: ``pf.compile`` and the hand numpy step in one process,
    alternated, timed in thread CPU time (best of 5x``n`` steps each, per round):
    on a machine other jobs load, the ratio in one process moves less than
    wall-clock figures from separate processes (a reading, not the table's).
    Run it with ``OPENBLAS_NUM_THREADS=1`` (the table's children's setting)."""
    compiled, _ = pyflame_step(True)
    hand, _ = numpy_step()
    if abs(compiled() - hand()) > 1e-4 * abs(hand()):
        raise RuntimeError("pf.compile and the hand numpy step disagree")
    for _ in range(5):
        compiled()
        hand()

    def best(step: Step) -> float:
        b = float("inf")
        for _ in range(5):
            t0 = time.thread_time()
            for _ in range(n):
                step()
            b = min(b, (time.thread_time() - t0) / n)
        return b * 1e3

    ratios = []
    for _ in range(rounds):
        c, h = best(compiled), best(hand)
        ratios.append(c / h)
        print(f"pf.compile {c:.3f} ms, hand numpy {h:.3f} ms (thread CPU): {c / h:.3f}x")
    print(f"median {median(ratios):.3f}x, range {min(ratios):.3f}-{max(ratios):.3f}x")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _child(sys.argv[2], int(sys.argv[3]))
    elif len(sys.argv) > 1 and sys.argv[1] == "--pair":
        pair(*(int(a) for a in sys.argv[2:]))
    else:
        main(*(int(a) for a in sys.argv[1:]))
