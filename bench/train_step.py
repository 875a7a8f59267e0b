"""Training-step throughput: batch 64, MLP 784 -> 256 -> 10 with ReLU,
softmax cross-entropy and SGD; pyflame (reference backend) beside torch eager
and jax.jit (if jax is installed: a benchmark-only extra), in one run.
Also the first step's compile time (pyflame: IR build, autodiff, passes,
lowering; jax: tracing + XLA)."""

from __future__ import annotations

import platform
import time

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


def pyflame_bench(n: int) -> tuple[float, float]:
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
    return timed(step, n), first


def torch_bench(n: int) -> float | None:
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
    return timed(step, n)


def jax_bench(n: int) -> tuple[float, float] | None:
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

    return timed(step, n), first


def main(n: int = 200) -> None:
    ours, first = pyflame_bench(n)
    torch_sps = torch_bench(n)
    jax_res = jax_bench(n)
    print(f"machine: {platform.machine()}, Python {platform.python_version()}, "
          f"numpy {np.__version__}, date {time.strftime('%Y-%m-%d')}; {n} steps each")
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
    main()
