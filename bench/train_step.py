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


def main(n: int = 100, rounds: int = 7) -> None:
    """Interleaved rounds of ``n`` steps each; the best round of each counts."""
    ours, first = pyflame_bench()
    steps = {"pyflame": ours, "torch": torch_bench()}
    best: dict[str, float] = {}
    for _ in range(rounds):
        for name, step in steps.items():
            if step is not None:
                best[name] = max(best.get(name, 0.0), timed(step, n))
    # jax last: once imported, XLA's threads compete with the others for the cores
    jax_res = jax_bench()
    if jax_res:
        best["jax"] = max(timed(jax_res[0], n) for _ in range(rounds))
    ours, torch_sps = best["pyflame"], best.get("torch")
    print(f"machine: {platform.machine()}, Python {platform.python_version()}, "
          f"numpy {np.__version__}, date {time.strftime('%Y-%m-%d')}; "
          f"best of {rounds} interleaved rounds of {n} steps")
    print()
    print("| implementation | steps/s | ratio to torch eager | first step (compile) |")
    print("| --- | ---: | ---: | ---: |")
    rows = [("pyflame (reference backend)", ours, f"{first * 1e3:.0f} ms")]
    rows.append(("torch eager", torch_sps, "—"))
    rows.append(("jax.jit", best.get("jax"),
                 f"{jax_res[1] * 1e3:.0f} ms" if jax_res else "—"))
    for name, sps, fs in rows:
        if sps is None:
            print(f"| {name} | not installed | — | — |")
            continue
        ratio = f"{sps / torch_sps:.2f}" if torch_sps else "—"
        print(f"| {name} | {sps:.0f} | {ratio} | {fs} |")


if __name__ == "__main__":
    main()
