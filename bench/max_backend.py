"""MAX backend benchmark, in one run: the large MLP training step (batch 1024,
MLP 1024 -> 1024 -> 1024 -> 10 with ReLU, softmax cross-entropy, autograd,
SGD) on

* the MAX backend: first compile (fresh persistent cache, MAX's own kernel
  cache included), cached load in a fresh process (the compiled model read
  back from disk), and per-step time;
* the reference backend (numpy): first step (its compile) and per-step time;
* torch eager (autograd): per-step time.

Usage: ``python bench/max_backend.py [--steps N] [--cache-dir DIR]``. Without
``--cache-dir`` a new temporary ``PYFLAME_CACHE_DIR`` makes the first compile
a real one. Prints a Markdown table (docs/perf/max.md records a run).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from _torch_mlp import torch_mlp_step

B, SIZES, LR = 1024, (1024, 1024, 1024, 10), 0.01


def data() -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    init: list[np.ndarray] = []
    for k, n in zip(SIZES[:-1], SIZES[1:]):
        init.append((rng.standard_normal((k, n)) * np.sqrt(2.0 / k)).astype(np.float32))
        init.append(np.zeros(n, np.float32))
    x = rng.standard_normal((B, SIZES[0])).astype(np.float32)
    y = np.eye(SIZES[-1], dtype=np.float32)[rng.integers(0, SIZES[-1], B)]
    return init, x, y


def pyflame_step() -> Callable[[], float]:
    """One training step per call on the current backend; returns the loss."""
    import pyflame_mlir as pf

    init, xn, yn = data()
    params = [pf.tensor(p, requires_grad=True) for p in init]
    x, y = pf.tensor(xn), pf.tensor(yn)

    def step() -> float:
        nonlocal params
        h = x
        for j in range(0, len(params) - 2, 2):
            h = pf.relu(h @ params[j] + params[j + 1])
        logits = h @ params[-2] + params[-1]
        loss = -(pf.log_softmax(logits, dim=1) * y).sum(dim=1).mean()
        loss.backward()
        with pf.no_grad():
            params = [p - LR * p.grad for p in params]
        pf.eval(loss, *params)
        params = [p.requires_grad_() for p in params]
        return float(loss.item())
    return step


def torch_step() -> Callable[[], float] | None:
    init, xn, yn = data()
    return torch_mlp_step(xn, yn, init, LR)


def per_step(step: Callable[[], float], n: int) -> tuple[float, float]:
    """(median, min) seconds per step over ``n`` steps, after one warm-up step."""
    step()
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times)


def child() -> None:
    """The fresh process: import, then one step with the model from disk."""
    t0 = time.perf_counter()
    import pyflame_mlir as pf
    from pyflame_mlir.runtime import max_backend

    pf.set_backend("max")
    t1 = time.perf_counter()
    step = pyflame_step()
    loss = step()
    t2 = time.perf_counter()
    print(json.dumps({"import": t1 - t0, "first_step": t2 - t1, "loss": loss,
                      "stats": max_backend.stats()}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=10, help="timed steps per backend")
    ap.add_argument("--cache-dir", help="PYFLAME_CACHE_DIR (default: a new temporary one)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child()
        return

    cache = args.cache_dir or tempfile.mkdtemp(prefix="pyflame-max-bench-")
    os.environ["PYFLAME_CACHE_DIR"] = cache  # before the MAX backend picks its dirs
    import pyflame_mlir as pf
    from pyflame_mlir.runtime import max_backend

    why = max_backend.unavailable_reason()
    if why:
        sys.exit(f"MAX backend unavailable: {why}")
    rows: list[tuple[str, str, str, str]] = []
    res: dict[str, Any] = {"device": max_backend.current_device(),
                           "max": max_backend.max_version(), "cache": cache,
                           "modular_cache": os.environ.get("MODULAR_CACHE_DIR")}

    # MAX: first step = trace + autodiff + passes + MAX graph + compile + export + run
    pf.set_backend("max")
    step = pyflame_step()
    t0 = time.perf_counter()
    loss_max = step()
    first = time.perf_counter() - t0
    st = max_backend.stats()
    res["max_first"], res["max_stats"] = first, st
    med, best = per_step(step, args.steps)
    res["max_step"] = (med, best)

    # a fresh process loads the compiled model from disk
    out = subprocess.run([sys.executable, __file__, "--child"], capture_output=True,
                         text=True, env=dict(os.environ, PYFLAME_CACHE_DIR=cache), check=True)
    second = json.loads(out.stdout.strip().splitlines()[-1])
    res["fresh"] = second

    # reference backend
    pf.set_backend("reference")
    step = pyflame_step()
    t0 = time.perf_counter()
    loss_ref = step()
    ref_first = time.perf_counter() - t0
    ref_med, ref_best = per_step(step, args.steps)

    tstep = torch_step()
    torch_med = torch_best = None
    if tstep is not None:
        import torch

        res["torch_threads"] = torch.get_num_threads()
        torch_med, torch_best = per_step(tstep, args.steps)

    fs = second["stats"]
    rows.append(("MAX (CPU), first step: compile", f"{first:.1f} s",
                 f"compile {st['compile_seconds']:.1f} s, graph build "
                 f"{st['graph_build_seconds'] * 1e3:.0f} ms, {st['compiles']} compile(s)", ""))
    rows.append(("MAX, fresh process: load from disk", f"{fs['load_seconds'] * 1e3:.1f} ms",
                 f"first step {second['first_step']:.2f} s incl. IR build + autodiff; "
                 f"import {second['import']:.2f} s; compiles {fs['compiles']}, "
                 f"disk loads {fs['disk_loads']}", ""))
    rows.append(("MAX, per step", f"{med * 1e3:.1f} ms", f"min {best * 1e3:.1f} ms",
                 f"{ref_med / med:.2f}x reference"))
    rows.append(("reference (numpy), first step", f"{ref_first:.2f} s",
                 "IR build + autodiff + passes + numpy plan + run", ""))
    rows.append(("reference, per step", f"{ref_med * 1e3:.1f} ms",
                 f"min {ref_best * 1e3:.1f} ms", "1.00x reference"))
    if torch_med is not None:
        rows.append((f"torch eager, per step ({res['torch_threads']} threads)",
                     f"{torch_med * 1e3:.1f} ms", f"min {torch_best * 1e3:.1f} ms",
                     f"{ref_med / torch_med:.2f}x reference"))
    rel = abs(loss_max - loss_ref) / abs(loss_ref)
    print(f"MLP step, batch {B}, {' -> '.join(map(str, SIZES))}, SGD lr {LR}; "
          f"MAX {res['max']} on {res['device']}; {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs; first-step loss MAX {loss_max:.6f} vs reference "
          f"{loss_ref:.6f} (rel. diff {rel:.1e})")
    print(f"PYFLAME_CACHE_DIR={cache}  MODULAR_CACHE_DIR={res['modular_cache']}\n")
    print("| what | time | detail | vs reference |")
    print("| --- | --- | --- | --- |")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    if res["device"] == "cpu":
        print("\nGPU: not measured (no GPU on this machine).")


if __name__ == "__main__":
    main()
