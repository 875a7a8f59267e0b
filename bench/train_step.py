"""Training-step throughput: batch 64, MLP 784 -> 256 -> 10 with ReLU,
softmax cross-entropy and SGD; pyflame (reference backend) beside torch eager
and jax.jit (if jax is installed: the ``bench`` extra), in one run.
Also the first step's compile time (pyflame: IR build, autodiff, passes,
lowering; jax: tracing + XLA). ``--split``: the CPU time of each part of one
pyflame step instead (``split``), which the load of other processes barely
moves (steps/s on a shared machine does). ``--overhead [N]``: the step's
Python alone (``overhead``: the kernels' run replayed from its first results),
thread time, or instructions under valgrind.

Where the machine's environment pins OpenBLAS's kernels
(``OPENBLAS_CORETYPE``, with ``OPENBLAS_L2_SIZE``: a workaround some machines
here carry for old OpenBLAS builds), the run is made twice: with the
environment as given, and with both unset for the child processes, so that
numpy's current OpenBLAS picks its kernels for this CPU itself. Each table
names the kernels numpy ran (threadpoolctl, from the ``bench`` extra). torch
(MKL) and jax (XLA) do not read these variables. Every implementation's loss
after two steps from the same start must agree, or the run fails.
"""

from __future__ import annotations

import platform
import time
from collections.abc import Callable
from statistics import median

import numpy as np

import pyflame_mlir as pf

B, D, H, C, LR = 64, 784, 256, 10, 0.01
rng = np.random.default_rng(0)
X = rng.standard_normal((B, D)).astype(np.float32)
Y = np.eye(C, dtype=np.float32)[rng.integers(0, C, B)]
INIT = [(rng.standard_normal((D, H)) * 0.05).astype(np.float32), np.zeros(H, np.float32),
        (rng.standard_normal((H, C)) * 0.05).astype(np.float32), np.zeros(C, np.float32)]


def timed(step, n: int) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        step()
    return n / (time.perf_counter() - t0)


def pyflame_bench() -> tuple[Callable[[], object], float, float]:
    params = [pf.tensor(p, requires_grad=True) for p in INIT]
    x, y = pf.tensor(X), pf.tensor(Y)

    def step() -> pf.Tensor:
        # PyTorch's in-place idiom: the update runs lazily with the next step's graph
        w1, b1, w2, b2 = params
        logits = pf.relu(x @ w1 + b1) @ w2 + b2
        loss = -(pf.log_softmax(logits, dim=1) * y).sum(dim=1).mean()
        loss.backward()
        with pf.no_grad():
            for p in params:
                p -= LR * p.grad
                p.grad = None
        loss.item()
        return loss

    pf.clear_cache()
    t0 = time.perf_counter()
    step()
    first = time.perf_counter() - t0
    loss = step()  # warm
    return step, first, loss.item()


def split(n: int = 2000, rounds: int = 3) -> dict[str, float]:
    """CPU time (this thread's: other processes' load barely moves it) of each
    part of one pyflame step, µs: recording the forward, ``loss.backward()``,
    the four in-place updates, ``loss.item()`` and, of that, the reference
    executable's ``run`` (the plan's kernels); ``overhead`` is the step less
    ``run`` (Python: recording, tracing, the cache lookup). Best of ``rounds``
    runs of ``n`` steps."""
    from pyflame_mlir.runtime.reference import ReferenceExecutable

    params = [pf.tensor(p, requires_grad=True) for p in INIT]
    x, y = pf.tensor(X), pf.tensor(Y)
    clock = time.thread_time_ns
    parts = [0] * 5
    run = ReferenceExecutable.run

    def timed_run(self, *args, **kwargs):
        t0 = clock()
        out = run(self, *args, **kwargs)
        parts[4] += clock() - t0
        return out

    def step() -> None:
        t0 = clock()
        w1, b1, w2, b2 = params
        logits = pf.relu(x @ w1 + b1) @ w2 + b2
        loss = -(pf.log_softmax(logits, dim=1) * y).sum(dim=1).mean()
        t1 = clock()
        loss.backward()
        t2 = clock()
        with pf.no_grad():
            for p in params:
                p -= LR * p.grad
                p.grad = None
        t3 = clock()
        loss.item()
        t4 = clock()
        for i, d in enumerate((t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
            parts[i] += d

    ReferenceExecutable.run = timed_run
    try:
        for _ in range(200):
            step()
        best: list[float] | None = None
        for _ in range(rounds):
            parts[:] = [0] * 5
            for _ in range(n):
                step()
            us = [v / n / 1e3 for v in parts]
            if best is None or sum(us[:4]) < sum(best[:4]):
                best = us
    finally:
        ReferenceExecutable.run = run
    fwd, bwd, upd, item, run_us = best
    return {"forward": fwd, "backward": bwd, "updates": upd, "item": item, "run": run_us,
            "step": fwd + bwd + upd + item, "overhead": fwd + bwd + upd + item - run_us}


def overhead(n: int = 2000, rounds: int = 5) -> float:
    """The Python side of one pyflame step alone, µs of thread CPU time (best of
    ``rounds`` runs of ``n`` steps): after a warm-up, the reference executable's
    ``run`` returns the results of its first run again instead of running the
    plan's kernels (every step's graph is the same, so recording, autodiff, the
    trace, the cache lookup and the write-back run as in a real step). Without
    kernels the figure moves little with the load of other processes, and
    valgrind can count its instructions in seconds, not minutes:
    ``valgrind --tool=cachegrind --cache-sim=no python bench/train_step.py
    --overhead N`` for two N; the difference over the steps is exact."""
    from pyflame_mlir.runtime.reference import ReferenceExecutable

    step = pyflame_bench()[0]
    for _ in range(5):
        step()
    run = ReferenceExecutable.run
    first: dict[int, list] = {}

    def replayed(self, args, donated=()):
        r = first.get(id(self))
        if r is None:
            r = first[id(self)] = run(self, args, donated)
        return list(r)

    ReferenceExecutable.run = replayed
    try:
        for _ in range(5):
            step()
        clock = time.thread_time_ns
        best = float("inf")
        for _ in range(rounds):
            t0 = clock()
            for _ in range(n):
                step()
            best = min(best, (clock() - t0) / n / 1e3)
    finally:
        ReferenceExecutable.run = run
    return best


def torch_bench() -> tuple[Callable[[], object], float, float] | None:
    try:
        import torch
    except ImportError:
        return None
    params = [torch.tensor(p, requires_grad=True) for p in INIT]
    x, y = torch.tensor(X), torch.tensor(Y)

    def step() -> float:
        w1, b1, w2, b2 = params
        loss = -(torch.log_softmax(torch.relu(x @ w1 + b1) @ w2 + b2, 1) * y).sum(1).mean()
        loss.backward()
        with torch.no_grad():
            for p in params:
                p -= LR * p.grad
                p.grad = None
        return loss.item()

    step()
    return step, 0.0, step()


def jax_bench() -> tuple[Callable[[], object], float, float] | None:
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None

    def loss_fn(params, x, y):
        w1, b1, w2, b2 = params
        logits = jax.nn.relu(x @ w1 + b1) @ w2 + b2
        return -(jax.nn.log_softmax(logits, axis=1) * y).sum(1).mean()

    @jax.jit
    def update(params, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        return loss, [p - LR * g for p, g in zip(params, grads)]

    params = [jnp.asarray(p) for p in INIT]
    x, y = jnp.asarray(X), jnp.asarray(Y)
    t0 = time.perf_counter()
    loss, params = update(params, x, y)
    loss.block_until_ready()
    first = time.perf_counter() - t0

    def step() -> object:
        nonlocal params
        loss, params = update(params, x, y)
        return loss.block_until_ready()

    return step, first, float(step())


def _blas_kernels() -> str:
    """The BLAS numpy runs, and the kernels it chose (threadpoolctl)."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "unknown (threadpoolctl is not installed)"
    return ", ".join(f"{i['internal_api']} {i.get('architecture') or ''}".strip()
                     for i in threadpool_info() if i.get("user_api") == "blas") or "none"


_PINNING = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def _run_child(impl: str, n: int, env: dict[str, str]) -> dict | None:
    """One implementation measured in a fresh process, so no library's thread
    pool runs beside another's; None if it is not installed."""
    import json
    import subprocess
    import sys

    out = subprocess.run([sys.executable, __file__, "--child", impl, str(n)],
                         capture_output=True, text=True, env=env)
    if out.returncode != 0:
        if "ImportError" in out.stderr or "ModuleNotFoundError" in out.stderr:
            return None
        raise RuntimeError(f"{impl} benchmark failed:\n{out.stderr}")
    return json.loads(out.stdout)


def _child(impl: str, n: int) -> None:
    import json

    bench = {"pyflame": pyflame_bench, "torch": torch_bench, "jax": jax_bench}[impl]
    res = bench()
    if res is None:
        raise ImportError(impl)
    step, first, loss = res
    print(json.dumps({"sps": max(timed(step, n) for _ in range(3)), "first": first,
                      "loss": loss, "blas": _blas_kernels()}))


IMPLS = ("pyflame", "torch", "jax")


def measure(env: dict[str, str], n: int, rounds: int) -> tuple[dict[str, dict], str]:
    """Each implementation in its own process, one after another in every
    round (in turned order, so none always runs first). Per implementation:
    its best round's steps/s, and the ratio to torch eager of every round
    (measured minutes apart, runs drift more than within one round). Fails if
    the losses after two steps disagree."""
    best: dict[str, dict] = {}
    for k in range(rounds):
        order = IMPLS[k % len(IMPLS):] + IMPLS[:k % len(IMPLS)]
        got = {impl: r for impl in order if (r := _run_child(impl, n, env)) is not None}
        for impl, r in got.items():
            b = best.setdefault(impl, dict(r, ratios=[]))
            b["sps"], b["first"] = max(b["sps"], r["sps"]), min(b["first"], r["first"])
            if "torch" in got:
                b["ratios"].append(r["sps"] / got["torch"]["sps"])
    ref = best["pyflame"]["loss"]
    for impl, r in best.items():
        if abs(r["loss"] - ref) > 1e-4 * abs(ref):
            raise RuntimeError(f"{impl}'s loss after two steps is {r['loss']}, pyflame's "
                               f"{ref}: the implementations do not compute the same step")
    return best, best["pyflame"]["blas"]


def table(best: dict[str, dict]) -> list[str]:
    lines = ["| implementation | steps/s (best round) | ratio to torch eager: median "
             "(range) of the rounds | first step (compile) |",
             "| --- | ---: | ---: | ---: |"]
    for impl, name in (("pyflame", "pyflame (reference backend)"), ("torch", "torch eager"),
                       ("jax", "jax.jit")):
        r = best.get(impl)
        if r is None:
            lines.append(f"| {name} | not installed | — | — |")
            continue
        q = r["ratios"]
        ratio = "—" if not q else "1.00" if impl == "torch" else \
            f"{median(q):.2f} ({min(q):.2f}–{max(q):.2f})"
        first = f"{r['first'] * 1e3:.0f} ms" if impl != "torch" else "—"
        lines.append(f"| {name} | {r['sps']:.0f} | {ratio} | {first} |")
    return lines


def main(n: int = 100, rounds: int = 5) -> None:
    import os

    env = dict(os.environ)
    configs = [("the environment as given", env)]
    pinned = {k: env[k] for k in _PINNING if k in env}
    if pinned:
        configs.append((f"{' and '.join(pinned)} unset (OpenBLAS picks its kernels)",
                        {k: v for k, v in env.items() if k not in pinned}))
    print(f"machine: {platform.machine()}, Python {platform.python_version()}, "
          f"numpy {np.__version__}, date {time.strftime('%Y-%m-%d')}; "
          f"each in its own process; {rounds} rounds, each the best of 3x{n} steps "
          f"per implementation")
    for name, cenv in configs:
        best, blas = measure(cenv, n, rounds)
        print(f"\n{name}: numpy runs {blas}\n")
        print("\n".join(table(best)))


if __name__ == "__main__":
    import sys

    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _child(sys.argv[2], int(sys.argv[3]))
    elif len(sys.argv) > 1 and sys.argv[1] == "--overhead":
        n = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
        us = overhead(n)
        print(f"pyflame step without its kernels (the executable's run replayed), CPU µs "
              f"(thread time), best of 5x{n} steps, date {time.strftime('%Y-%m-%d %H:%M')}: "
              f"{us:.1f}")
    elif len(sys.argv) > 1 and sys.argv[1] == "--split":
        print(f"pyflame step, CPU µs (thread time), best of 3x2000 steps, "
              f"date {time.strftime('%Y-%m-%d %H:%M')}")
        print(" ".join(f"{k} {v:.1f}" for k, v in split().items()))
    else:
        main(rounds=int(sys.argv[1]) if len(sys.argv) > 1 else 5)
