"""GPT training throughput (issue 14): the model of ``examples/gpt.py`` (2
layers, d=128, 4 heads, context 64, vocab 256, batch 16) trained with AdamW
and gradient clipping, steps/s side by side in one run:

- pyflame on the reference backend (the example's own code), stepped
  eagerly as the example does and under ``pf.compile`` (the step replayed:
  nothing recorded after the first calls; torch.compile's counterpart),
- torch eager (the same source with torch imported in pyflame's place), at
  its default thread count and with ``torch.set_num_threads(1)``,
- jax.jit + optax (a functional transcription; the ``bench`` extra).

All three start from the same weights and see the same batches; their losses
after the timed steps must agree or the run fails. Rounds alternate between
the implementations and the median round counts, since the machine is shared.

    python bench/gpt.py [--steps 20] [--rounds 3] [--numpy-kernels]
"""

from __future__ import annotations

import argparse
import math
import os
import pathlib
import platform
import time
from collections.abc import Callable
from statistics import median

import numpy as np

import pyflame_mlir as pf

EXAMPLE = pathlib.Path(__file__).parent.parent / "examples" / "gpt.py"
BATCH, LR, WD, CLIP = 16, 3e-3, 0.1, 1.0


def load_example(use_torch: bool) -> dict:
    src = EXAMPLE.read_text()
    if use_torch:
        src = src.replace("import pyflame_mlir as pf\nfrom pyflame_mlir import nn\n"
                          "from pyflame_mlir.nn import functional as F",
                          "import torch as pf\nfrom torch import nn\n"
                          "from torch.nn import functional as F")
    ns: dict = {"__name__": "gpt_torch" if use_torch else "gpt_pf", "__file__": str(EXAMPLE)}
    exec(compile(src, str(EXAMPLE), "exec"), ns)
    return ns


def lib_runner(lib, state: dict[str, np.ndarray], data: list,
               compiled: bool = False) -> Callable[[int], float]:
    """The example's model and training step under ``lib`` (pyflame or torch);
    ``compiled``: the step under ``pf.compile`` (replayed: nothing recorded
    once the optimizer state exists)."""
    ex = load_example(use_torch=lib is not pf)
    model = ex["GPT"]()
    model.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
    opt = lib.optim.AdamW(model.parameters(), lr=LR, weight_decay=WD)

    def step(x, y):
        _, loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), CLIP)
        opt.step()
        return loss

    fn = pf.compile(step) if compiled else step

    def run(n: int) -> float:
        for i in range(n):
            x, y = data[i % len(data)]
            value = fn(lib.tensor(x), lib.tensor(y)).item()
        return value
    return run


def one_thread(torch, run: Callable[[int], float]) -> Callable[[int], float]:
    """``run`` with torch's intra-op pool at one thread (its default restored
    after): torch's own figure without its second thread."""
    def go(n: int) -> float:
        default = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return run(n)
        finally:
            torch.set_num_threads(default)
    return go


def numpy_kernels(run: Callable[[int], float]) -> Callable[[int], float]:
    """``run`` with the reference kernels' numpy bodies (the C loops of
    ``dialects/_kernels.c`` off around its rounds): what those loops buy."""
    from pyflame_mlir.dialects import native_kernels

    def go(n: int) -> float:
        saved, native_kernels.KERNELS = native_kernels.KERNELS, None
        try:
            return run(n)
        finally:
            native_kernels.KERNELS = saved
    return go


def spread(times: list[float], torch_times: list[float]) -> str:
    """The per-round ratios to torch eager (rounds alternate: round i of each
    ran in the same minute), min-max."""
    r = [t / s for s, t in zip(times, torch_times)]
    return f"{min(r):.2f}-{max(r):.2f}"


def jax_runner(state: dict[str, np.ndarray], data: list) -> Callable[[int], float] | None:
    try:
        import jax
        import jax.numpy as jnp
        import optax
    except ImportError:
        return None
    ex = load_example(False)
    n_head, pad = ex["N_HEAD"], ex["PAD_TARGET"]
    params = {k: jnp.asarray(v) for k, v in state.items()
              if k != "head.weight" and not k.endswith("causal")}
    n_layer = ex["N_LAYER"]

    def layer_norm(x, p, prefix):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / jnp.sqrt(var + 1e-5) * p[prefix + ".weight"] + p[prefix + ".bias"]

    def linear(x, p, prefix):
        y = x @ p[prefix + ".weight"].T
        return y + p[prefix + ".bias"] if prefix + ".bias" in p else y

    def forward_loss(p, x, y):
        B, T = x.shape
        h = p["tok_emb.weight"][x] + p["pos_emb.weight"][jnp.arange(T)]
        mask = jnp.tril(jnp.ones((T, T), bool))
        for i in range(n_layer):
            pre = f"blocks.{i}."
            a = layer_norm(h, p, pre + "ln1")
            C = a.shape[-1]
            q, k, v = jnp.split(linear(a, p, pre + "attn.qkv"), 3, axis=2)
            q, k, v = (t.reshape(B, T, n_head, C // n_head).transpose(0, 2, 1, 3)
                       for t in (q, k, v))
            att = (q @ k.transpose(0, 1, 3, 2)) * (1.0 / math.sqrt(C // n_head))
            att = jax.nn.softmax(jnp.where(mask, att, -jnp.inf), axis=-1)
            o = (att @ v).transpose(0, 2, 1, 3).reshape(B, T, C)
            h = h + linear(o, p, pre + "attn.proj")
            m = layer_norm(h, p, pre + "ln2")
            m = jax.nn.gelu(linear(m, p, pre + "mlp.0"), approximate=False)
            h = h + linear(m, p, pre + "mlp.2")
        h = layer_norm(h, p, "ln_f")
        logits = (h @ p["tok_emb.weight"].T).reshape(B * T, -1)
        t = y.reshape(-1)
        valid = t != pad
        logp = jax.nn.log_softmax(logits, axis=-1)
        nll = -jnp.take_along_axis(logp, jnp.where(valid, t, 0)[:, None], axis=1)[:, 0]
        return jnp.sum(jnp.where(valid, nll, 0.0)) / jnp.sum(valid)

    tx = optax.chain(optax.clip_by_global_norm(CLIP),
                     optax.adamw(LR, b1=0.9, b2=0.999, eps=1e-8, weight_decay=WD))
    opt_state = tx.init(params)

    @jax.jit
    def step(p, s, x, y):
        loss, g = jax.value_and_grad(forward_loss)(p, x, y)
        updates, s = tx.update(g, s, p)
        return optax.apply_updates(p, updates), s, loss

    box = [params, opt_state]

    def run(n: int) -> float:
        for i in range(n):
            x, y = data[i % len(data)]
            box[0], box[1], loss = step(box[0], box[1], x, y)
            value = float(loss)
        return value
    return run


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--numpy-kernels", action="store_true",
                        help="a pf.compile row with the C kernel loops off")
    args = parser.parse_args()
    ex = load_example(False)
    pf.manual_seed(0)
    state = {k: v.numpy() for k, v in ex["GPT"]().state_dict().items()}
    data = list(ex["batches"](BATCH, args.steps))
    import torch

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
    for name, run in runners.items():  # compile / warm up: two steps
        t0 = time.perf_counter()
        first[name] = (run(2), time.perf_counter() - t0)
    times: dict[str, list[float]] = {name: [] for name in runners}
    cpu: dict[str, list[float]] = {name: [] for name in runners}
    final: dict[str, float] = {}
    for _ in range(args.rounds):
        for name, run in runners.items():
            t0, c0 = time.perf_counter(), time.process_time()
            final[name] = run(args.steps)
            times[name].append(time.perf_counter() - t0)
            cpu[name].append(time.process_time() - c0)
    losses = [v for v, _ in first.values()]
    if max(losses) - min(losses) > 1e-3 * abs(losses[0]):
        raise SystemExit(f"the implementations disagree after two steps: {first}")
    torch_rate = args.steps / median(times["torch eager"])
    print(f"GPT training step, batch {BATCH}: {platform.processor() or platform.machine()}, "
          f"{time.strftime('%Y-%m-%d')}")
    torch_cpu = median(cpu["torch eager"])
    print(f"load average {' '.join(f'{v:.1f}' for v in os.getloadavg())}; CPU ms/step: "
          "process time of all threads (with one thread each, the load-independent figure)")
    print("| implementation | steps/s | vs torch eager (rounds) | CPU ms/step | CPU vs torch | "
          "first 2 steps (s) | loss |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name in runners:
        rate = args.steps / median(times[name])
        c = median(cpu[name])
        print(f"| {name} | {rate:.1f} | {rate / torch_rate:.2f}x "
              f"({spread(times[name], times['torch eager'])}) | {c / args.steps * 1e3:.0f} | "
              f"{torch_cpu / c:.2f}x | {first[name][1]:.2f} | {final[name]:.4f} |")


if __name__ == "__main__":
    main()
