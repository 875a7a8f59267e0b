"""Where a training step's time goes on the reference backend: the thread CPU
time of every kernel of the cached step (``ReferenceExecutable.profile_into``),
summed by kernel label, beside the step's process CPU time; what is not in a
kernel is Python (recording, the cache lookup, autodiff, the replay).

    python bench/plan_profile.py gpt [--compiled] [--steps 5] [--top 40]

Models: ``mlp`` (``bench/train_step.py``'s step, the in-place idiom),
``mlp3`` (``bench/compile_step.py``'s), ``gpt`` (``bench/gpt.py``), ``cnn``
(``bench/cnn.py``). Run with ``OPENBLAS_NUM_THREADS=1`` for figures that
other jobs on the machine disturb least. The timing wrapper costs ~1 us per
kernel call, so small steps read high.
"""

from __future__ import annotations

import argparse
import gc
import pathlib
import sys
import time
import warnings
from collections.abc import Callable

sys.path.insert(0, str(pathlib.Path(__file__).parent))


def _step(model: str, compiled: bool) -> Callable[[int], object]:
    """Runs ``n`` steps of ``model``."""
    import pyflame_mlir as pf

    if model in ("mlp", "mlp3"):
        if model == "mlp":
            import train_step

            step = train_step.pyflame_bench()[0]
        else:
            import compile_step

            step = compile_step.pyflame_step(compiled)[0]

        def run(n: int) -> object:
            for _ in range(n):
                r = step()
            return r
        return run
    if model == "gpt":
        import gpt

        ex = gpt.load_example(False)
        pf.manual_seed(0)
        state = {k: v.numpy() for k, v in ex["GPT"]().state_dict().items()}
        return gpt.lib_runner(pf, state, list(ex["batches"](gpt.BATCH, 8)), compiled)
    import cnn
    import torch

    torch.manual_seed(0)
    state = {k: v.numpy() for k, v in cnn.make_model(torch).state_dict().items()}
    return cnn.lib_runner(pf, state, cnn.make_data(8), compiled)


def main() -> None:
    from pyflame_mlir.runtime.reference import ReferenceExecutable

    parser = argparse.ArgumentParser()
    parser.add_argument("model", choices=("mlp", "mlp3", "gpt", "cnn"))
    parser.add_argument("--compiled", action="store_true", help="the step under pf.compile")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()
    run = _step(args.model, args.compiled)
    run(3)  # compile, warm up
    c0 = time.process_time()
    run(args.steps)
    plain = (time.process_time() - c0) / args.steps
    totals: dict[str, float] = {}
    with warnings.catch_warnings():  # isinstance on every object: deprecated modules warn
        warnings.simplefilter("ignore")
        exes = [o for o in gc.get_objects() if isinstance(o, ReferenceExecutable)]
    for exe in exes:
        exe.profile_into(totals)
    c0 = time.process_time()
    run(args.steps)
    timed = (time.process_time() - c0) / args.steps
    kernels = sum(totals.values()) / args.steps
    print(f"{args.model}{' (pf.compile)' if args.compiled else ''}: CPU ms/step "
          f"{plain * 1e3:.1f} (profiled {timed * 1e3:.1f}: kernels {kernels * 1e3:.1f}, "
          f"outside {(timed - kernels) * 1e3:.1f})\n")
    print("| ms/step | share of kernels | kernel |\n| ---: | ---: | --- |")
    for label, t in sorted(totals.items(), key=lambda kv: -kv[1])[:args.top]:
        ms = t / args.steps * 1e3
        print(f"| {ms:.2f} | {t / args.steps / kernels:.1%} | {label} |")


if __name__ == "__main__":
    main()
