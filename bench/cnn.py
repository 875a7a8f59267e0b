"""CNN training throughput (issue 14): two conv layers on MNIST-sized input
(batch 64, 1x28x28, 10 classes), trained with SGD + momentum, steps/s side by
side in one run: pyflame (reference backend; stepped eagerly and under
``pf.compile``), torch eager (its default threads and one thread), and
jax.jit + optax (the ``bench`` extra). The
model is written once against the torch API (``lib`` is ``pyflame_mlir`` or
``torch``); the jax version is a functional transcription. All start from
the same weights; their losses after two steps must agree or the run fails.

    python bench/cnn.py [--steps 20] [--rounds 3] [--numpy-kernels]
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from collections.abc import Callable
from statistics import median

import numpy as np
from gpt import numpy_kernels, one_thread, spread  # (bench/ is the script's directory)

import pyflame_mlir as pf

BATCH, LR, MOMENTUM = 64, 0.05, 0.9


def make_model(lib):
    nn = lib.nn
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 7 * 7, 10))


def make_data(steps: int) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(0)
    return [(rng.standard_normal((BATCH, 1, 28, 28)).astype(np.float32),
             rng.integers(0, 10, BATCH)) for _ in range(steps)]


def lib_runner(lib, state: dict[str, np.ndarray], data: list,
               compiled: bool = False) -> Callable[[int], float]:
    """``compiled``: the step under ``pf.compile`` (replayed, nothing recorded)."""
    model = make_model(lib)
    model.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
    opt = lib.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    loss_fn = lib.nn.CrossEntropyLoss()

    def step(x, y):
        loss = loss_fn(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    fn = pf.compile(step) if compiled else step

    def run(n: int) -> float:
        for i in range(n):
            x, y = data[i % len(data)]
            value = fn(lib.tensor(x), lib.tensor(y)).item()
        return value
    return run


def jax_runner(state: dict[str, np.ndarray], data: list) -> Callable[[int], float] | None:
    try:
        import jax
        import jax.numpy as jnp
        import optax
    except ImportError:
        return None
    params = {k: jnp.asarray(v) for k, v in state.items()}

    def conv_relu_pool(x, w, b):
        y = jax.lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (1, 1)),
                                         dimension_numbers=("NCHW", "OIHW", "NCHW"))
        y = jax.nn.relu(y + b[None, :, None, None])
        return jax.lax.reduce_window(y, -jnp.inf, jax.lax.max, (1, 1, 2, 2), (1, 1, 2, 2),
                                     "VALID")

    def loss_fn(p, x, y):
        h = conv_relu_pool(x, p["0.weight"], p["0.bias"])
        h = conv_relu_pool(h, p["3.weight"], p["3.bias"])
        logits = h.reshape(h.shape[0], -1) @ p["7.weight"].T + p["7.bias"]
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

    tx = optax.sgd(LR, momentum=MOMENTUM)
    box = [params, tx.init(params)]

    @jax.jit
    def step(p, s, x, y):
        loss, g = jax.value_and_grad(loss_fn)(p, x, y)
        updates, s = tx.update(g, s, p)
        return optax.apply_updates(p, updates), s, loss

    def run(n: int) -> float:
        for i in range(n):
            x, y = data[i % len(data)]
            box[0], box[1], loss = step(box[0], box[1], x, y)
            value = float(loss)
        return value
    return run


def main() -> None:
    import torch

    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--numpy-kernels", action="store_true",
                        help="a pf.compile row with the C kernel loops off")
    args = parser.parse_args()
    torch.manual_seed(0)
    state = {k: v.numpy() for k, v in make_model(torch).state_dict().items()}
    data = make_data(args.steps)
    runners = {"pyflame (reference)": lib_runner(pf, state, data),
               "pyflame (reference, pf.compile)": lib_runner(pf, state, data, compiled=True),
               "torch eager": lib_runner(torch, state, data),
               "torch eager, 1 thread": one_thread(torch, lib_runner(torch, state, data))}
    if args.numpy_kernels:
        runners["pyflame (pf.compile, numpy kernels)"] = numpy_kernels(
            lib_runner(pf, state, data, compiled=True))
    jax_run = jax_runner(state, data)
    if jax_run is not None:
        runners["jax.jit + optax"] = jax_run
    first = {}
    for name, run in runners.items():
        t0 = time.perf_counter()
        first[name] = (run(2), time.perf_counter() - t0)
    times: dict[str, list[float]] = {name: [] for name in runners}
    cpu: dict[str, list[float]] = {name: [] for name in runners}
    for _ in range(args.rounds):
        for name, run in runners.items():
            t0, c0 = time.perf_counter(), time.process_time()
            run(args.steps)
            times[name].append(time.perf_counter() - t0)
            cpu[name].append(time.process_time() - c0)
    losses = [v for v, _ in first.values()]
    if max(losses) - min(losses) > 1e-3 * abs(losses[0]):
        raise SystemExit(f"the implementations disagree after two steps: {first}")
    torch_rate = args.steps / median(times["torch eager"])
    print(f"CNN training step, batch {BATCH}: {platform.processor() or platform.machine()}, "
          f"{time.strftime('%Y-%m-%d')}")
    torch_cpu = median(cpu["torch eager"])
    print(f"load average {' '.join(f'{v:.1f}' for v in os.getloadavg())}; CPU ms/step: "
          "process time of all threads (with one thread each, the load-independent figure)")
    print("| implementation | steps/s | vs torch eager (rounds) | CPU ms/step | CPU vs torch | "
          "first 2 steps (s) |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name in runners:
        rate = args.steps / median(times[name])
        c = median(cpu[name])
        print(f"| {name} | {rate:.1f} | {rate / torch_rate:.2f}x "
              f"({spread(times[name], times['torch eager'])}) | {c / args.steps * 1e3:.0f} | "
              f"{torch_cpu / c:.2f}x | {first[name][1]:.2f} |")


if __name__ == "__main__":
    main()
