"""Training-step throughput: batch 64, MLP 784 -> 256 -> 10 with ReLU,
softmax cross-entropy and SGD; pyflame (reference backend) beside torch eager
and jax.jit (if jax is installed: a benchmark-only extra), in one run.
Also the first step's compile time (pyflame: IR build, autodiff, passes,
lowering; jax: tracing + XLA)."""

from __future__ import annotations

import platform
import time
from collections.abc import Callable

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


def pyflame_bench() -> tuple[Callable[[], None], float]:
    params = [pf.tensor(p, requires_grad=True) for p in INIT]
    x, y = pf.tensor(X), pf.tensor(Y)

    def step() -> None:
        nonlocal params
        w1, b1, w2, b2 = params
        logits = pf.relu(x @ w1 + b1) @ w2 + b2
        loss = -(pf.log_softmax(logits, dim=1) * y).sum(dim=1).mean()
        loss.backward()
        with pf.no_grad():
            params = [p - LR * p.grad for p in params]
        pf.eval(loss, *params)
        params = [p.requires_grad_() for p in params]

    pf.clear_cache()
    t0 = time.perf_counter()
    step()
    first = time.perf_counter() - t0
    step()  # warm
    return step, first


def torch_bench() -> Callable[[], None] | None:
    try:
        import torch
    except ImportError:
        return None
    params = [torch.tensor(p, requires_grad=True) for p in INIT]
    x, y = torch.tensor(X), torch.tensor(Y)

    def step() -> None:
        w1, b1, w2, b2 = params
        loss = -(torch.log_softmax(torch.relu(x @ w1 + b1) @ w2 + b2, 1) * y).sum(1).mean()
        loss.backward()
        with torch.no_grad():
            for p in params:
                p -= LR * p.grad
                p.grad = None
        loss.item()

    step()
    return step


def jax_bench() -> tuple[Callable[[], None], float] | None:
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

    def step() -> None:
        nonlocal params
        loss, params = update(params, x, y)
        loss.block_until_ready()

    return step, first


def _rate_in_subprocess(impl: str, n: int) -> tuple[float, float] | None:
    """(steps/s of the best of 3 rounds, first-step seconds) measured in a fresh
    process, so no library's thread pool runs beside another's."""
    import json
    import subprocess
    import sys

    out = subprocess.run([sys.executable, __file__, "--child", impl, str(n)],
                         capture_output=True, text=True)
    if out.returncode != 0:
        if "ImportError" in out.stderr or "ModuleNotFoundError" in out.stderr:
            return None
        raise RuntimeError(f"{impl} benchmark failed:\n{out.stderr}")
    return tuple(json.loads(out.stdout))  # type: ignore[return-value]


def _child(impl: str, n: int) -> None:
    import json

    first = 0.0
    if impl == "pyflame":
        step, first = pyflame_bench()
    elif impl == "torch":
        step = torch_bench()
        if step is None:
            raise ImportError("torch")
    else:
        res = jax_bench()
        if res is None:
            raise ImportError("jax")
        step, first = res
    print(json.dumps([max(timed(step, n) for _ in range(3)), first]))


def main(n: int = 100, rounds: int = 5) -> None:
    """Each implementation in its own process, alternating for ``rounds``
    rounds; the best round of each counts."""
    best: dict[str, float] = {}
    firsts: dict[str, float] = {}
    for _ in range(rounds):
        for impl in ("pyflame", "torch", "jax"):
            r = _rate_in_subprocess(impl, n)
            if r is not None:
                best[impl] = max(best.get(impl, 0.0), r[0])
                firsts[impl] = min(firsts.get(impl, float("inf")), r[1])
    ours, torch_sps = best["pyflame"], best.get("torch")
    first = firsts["pyflame"]
    jax_res = (best["jax"], firsts["jax"]) if "jax" in best else None
    print(f"machine: {platform.machine()}, Python {platform.python_version()}, "
          f"numpy {np.__version__}, date {time.strftime('%Y-%m-%d')}; "
          f"each in its own process, best of {rounds} alternating rounds of 3x{n} steps")
    print()
    print("| implementation | steps/s | ratio to torch eager | first step (compile) |")
    print("| --- | ---: | ---: | ---: |")
    rows = [("pyflame (reference backend)", ours, f"{first * 1e3:.0f} ms")]
    rows.append(("torch eager", torch_sps, "—"))
    rows.append(("jax.jit", jax_res[0] if jax_res else None,
                 f"{jax_res[1] * 1e3:.0f} ms" if jax_res else "—"))
    for name, sps, fs in rows:
        if sps is None:
            print(f"| {name} | not installed | — | — |")
            continue
        ratio = f"{sps / torch_sps:.2f}" if torch_sps else "—"
        print(f"| {name} | {sps:.0f} | {ratio} | {fs} |")


if __name__ == "__main__":
    import sys

    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _child(sys.argv[2], int(sys.argv[3]))
    else:
        main()
