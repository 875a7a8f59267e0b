"""The ``mlir`` backend side by side with numpy / the reference backend, torch
eager and jax.jit (the ``bench`` extra), in one run:

1. ``tanh(relu(2x+1)*x-0.5)`` on 4M f32: per-call time (cache hit; a new
   output array each call) and the first call (compile) time;
2. MLP training steps (forward, autograd backward, SGD as one graph), small
   (batch 64, 784 -> 256 -> 10, as ``bench/train_step.py``) and large (batch
   512, 1024 -> 1024 -> 10): steps/s and the first step's time.

Every implementation's results are checked against numpy / the reference
backend before timing. Run: ``.venv/bin/python bench/mlir_backend.py
[--threads N]`` (``PYFLAME_CACHE_DIR`` is pointed at a fresh temporary
directory so the first call really compiles). ``--threads N`` caps every
library's thread pool (OpenBLAS, used by numpy and the ``mlir`` backend's
matmuls; torch; XLA) at N before any is imported: on a loaded shared machine
spinning BLAS workers otherwise distort the comparison. Times are reported
as the median and the best call: under load the best is the cleaner
measure of the work done, the median of what a user waited.
"""

from __future__ import annotations

import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from statistics import median

THREADS = int(sys.argv[sys.argv.index("--threads") + 1]) if "--threads" in sys.argv else None
if THREADS is not None:  # before numpy, torch or jax start their pools
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(THREADS)
    if THREADS == 1:
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                                   + " --xla_cpu_multi_thread_eigen=false").strip()

import numpy as np  # noqa: E402
from _torch_mlp import torch_mlp_step  # noqa: E402

os.environ["PYFLAME_CACHE_DIR"] = tempfile.mkdtemp(prefix="pyflame-bench-")

import pyflame_mlir as pf  # noqa: E402
from pyflame_mlir.compiler import CACHE  # noqa: E402

N = 1 << 22
X = np.random.default_rng(0).standard_normal(N).astype(np.float32)


def per_call(fn: Callable[[], object], n: int) -> tuple[float, float]:
    """(median, best) seconds per call over ``n`` calls (after one warm-up)."""
    fn()
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return median(ts), min(ts)


def first_call(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


# ---- 1. the elementwise chain ----

def chain_numpy(x: np.ndarray) -> np.ndarray:
    return np.tanh(np.maximum(2 * x + 1, 0) * x - 0.5)


def chain_pf(backend: str) -> tuple[Callable[[], np.ndarray], float]:
    x = pf.from_numpy(X)

    def run() -> np.ndarray:
        with pf.backend(backend):
            return pf.tanh(pf.relu(2 * x + 1) * x - 0.5).numpy()
    return run, first_call(run)


def chain_jax() -> tuple[Callable[[], object], float] | None:
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    f = jax.jit(lambda x: jnp.tanh(jnp.maximum(2 * x + 1, 0) * x - 0.5))
    x = jax.device_put(X)

    def run() -> object:
        return np.asarray(f(x).block_until_ready())
    return run, first_call(run)


def bench_chain(n: int) -> list[str]:
    ref = chain_numpy(X)
    rows = []
    impls: dict[str, tuple[Callable[[], object], float | None]] = {
        "numpy": (lambda: chain_numpy(X), None)}
    impls["pyflame mlir"] = chain_pf("mlir")
    impls["pyflame reference"] = chain_pf("reference")
    j = chain_jax()
    if j is not None:
        impls["jax.jit"] = j
    times = {}
    for name, (fn, first) in impls.items():
        got = np.asarray(fn())
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6, err_msg=name)
        times[name] = (per_call(fn, n), first)
    base = times.get("jax.jit", times["numpy"])[0]
    rows.append("| implementation | ms / call: median | best | × jax.jit: median | best "
                "| first call (s) |")
    rows.append("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, ((med, best), first) in times.items():
        f = "—" if first is None else f"{first:.2f}"
        rows.append(f"| {name} | {med * 1e3:.1f} | {best * 1e3:.1f} | {med / base[0]:.2f} "
                    f"| {best / base[1]:.2f} | {f} |")
    return rows


# ---- 2. MLP training steps ----

def mlp_data(batch: int, sizes: list[int]) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y = np.eye(sizes[-1], dtype=np.float32)[rng.integers(0, sizes[-1], batch)]
    params = []
    for k, m in zip(sizes[:-1], sizes[1:]):
        params += [(rng.standard_normal((k, m)) / np.sqrt(k)).astype(np.float32),
                   np.zeros(m, np.float32)]
    return x, y, params


LR = 0.01


def step_pf(backend: str, x_np, y_np, init) -> tuple[Callable[[], float], float]:
    params = [pf.tensor(p, requires_grad=True) for p in init]
    x, y = pf.tensor(x_np), pf.tensor(y_np)

    def step() -> float:
        nonlocal params
        with pf.backend(backend):
            h = x
            for j in range(0, len(params) - 2, 2):
                h = pf.relu(h @ params[j] + params[j + 1])
            logits = h @ params[-2] + params[-1]
            loss = -(pf.log_softmax(logits, dim=1) * y).sum(dim=1).mean()
            loss.backward()
            with pf.no_grad():
                new = [p - LR * p.grad for p in params]
            pf.eval(loss, *new)
        params = [pf.tensor(p.numpy(), requires_grad=True) for p in new]
        return float(loss.item())
    return step, first_call(step)


def step_torch(x_np, y_np, init) -> tuple[Callable[[], float], float] | None:
    step = torch_mlp_step(x_np, y_np, init, LR)
    if step is None:
        return None
    import torch

    torch.set_num_threads(THREADS or os.cpu_count() or 1)
    return step, first_call(step)


def step_jax(x_np, y_np, init) -> tuple[Callable[[], float], float] | None:
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None

    def loss_fn(params, x, y):
        h = x
        for j in range(0, len(params) - 2, 2):
            h = jax.nn.relu(h @ params[j] + params[j + 1])
        logits = h @ params[-2] + params[-1]
        return -(jax.nn.log_softmax(logits, axis=1) * y).sum(axis=1).mean()

    @jax.jit
    def update(params, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        return loss, [p - LR * g for p, g in zip(params, grads)]

    state = {"params": [jnp.asarray(p) for p in init]}
    x, y = jnp.asarray(x_np), jnp.asarray(y_np)

    def step() -> float:
        loss, state["params"] = update(state["params"], x, y)
        return float(loss.block_until_ready())
    return step, first_call(step)


def bench_step(batch: int, sizes: list[int], n: int) -> list[str]:
    x, y, init = mlp_data(batch, sizes)
    impls = {"pyflame mlir": step_pf("mlir", x, y, init),
             "pyflame reference": step_pf("reference", x, y, init)}
    for name, make in (("torch eager", step_torch), ("jax.jit", step_jax)):
        got = make(x, y, init)
        if got is not None:
            impls[name] = got
    # same start, same two steps: the losses must agree
    losses = {}
    for name in impls:
        fresh = {"pyflame mlir": lambda: step_pf("mlir", x, y, init),
                 "pyflame reference": lambda: step_pf("reference", x, y, init),
                 "torch eager": lambda: step_torch(x, y, init),
                 "jax.jit": lambda: step_jax(x, y, init)}[name]()
        assert fresh is not None
        fresh[0]()
        losses[name] = fresh[0]()
    ref = losses["pyflame reference"]
    for name, v in losses.items():
        assert abs(v - ref) <= 1e-4 * max(1.0, abs(ref)), (name, v, ref)
    rows = ["| implementation | steps/s: median | best | first step (s) |",
            "| --- | ---: | ---: | ---: |"]
    for name, (fn, first) in impls.items():
        med, best = per_call(fn, n)
        rows.append(f"| {name} | {1 / med:.1f} | {1 / best:.1f} | {first:.2f} |")
    return rows


def main(n: int = 20) -> None:
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"{platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"threads: {THREADS or 'library defaults'}, load average {os.getloadavg()[0]:.1f}")
    print("\n### tanh(relu(2x+1)*x-0.5), 4M f32\n")
    print("\n".join(bench_chain(n)))
    for label, batch, sizes in (("small: batch 64, 784 -> 256 -> 10", 64, [784, 256, 10]),
                                ("large: batch 512, 1024 -> 1024 -> 10", 512,
                                 [1024, 1024, 10])):
        CACHE.clear()
        print(f"\n### MLP training step, {label}\n")
        print("\n".join(bench_step(batch, sizes, n)))


if __name__ == "__main__":
    main()
