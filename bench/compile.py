"""Compile time of the default pipeline on traced graphs of 100 to 10,000 ops.

The graphs are traced through the frontend: residual MLP blocks with a
normalization (matmul, bias, gelu, mean, a repeated ``z - mu`` for CSE, a
constant-only scale for folding, ``* 1.0`` for the simplifier, chains and
reductions for fusion). For each size: IR build, the default pipeline, the
reference lowering, and the whole compile, as ops per second (ops = recorded
ops); the passes must keep a constant rate as graphs grow (linear time). For
scale, xDSL's own ``cse`` + ``dce`` on the same module. Then the time per
pass at the largest size.

Best of several repeats; prints markdown and, with ``--write``, updates its
section of docs/perf/passes.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from pathlib import Path

from pyflame_mlir.lowering.reference import lower
from pyflame_mlir.passes import DEFAULT_PIPELINE
from pyflame_mlir.passes.common import count_ops
from pyflame_mlir.passes.pipeline import gc_paused

import pyflame_mlir as pf
from pyflame_mlir.compiler import build_module, make_context, run_pipeline
from pyflame_mlir.core import collect
from pyflame_mlir.runtime.reference import ReferenceExecutable

_spec = importlib.util.spec_from_file_location("fusion_bench", Path(__file__).with_name(
    "fusion.py"))
assert _spec is not None and _spec.loader is not None
fusion_bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fusion_bench)

WIDTH = 32


def traced_graph(n_ops: int) -> list[pf.Tensor]:
    """Residual blocks until at least ``n_ops`` ops are recorded."""
    pf.manual_seed(0)
    weights = [(pf.randn(WIDTH, WIDTH) * 0.1, pf.randn(WIDTH), pf.randn(WIDTH))
               for _ in range(4)]
    weights = [tuple(t.eval() for t in w) for w in weights]  # realized leaves
    h = pf.randn(8, WIDTH)
    start = pf.counters()["ops_recorded"]
    i = 0
    while pf.counters()["ops_recorded"] - start < n_ops:
        w, b, g = weights[i % len(weights)]
        z = pf.gelu(h @ w + b)
        mu = z.mean(1, keepdim=True)
        var = ((z - mu) * (z - mu)).mean(1, keepdim=True)  # z - mu twice: CSE
        scale = pf.full([WIDTH], 2.0) * 0.5  # constant-only: folding
        z = (z - mu) * pf.rsqrt(var + 1e-5) * (g * scale)
        h = h + z * 1.0  # * 1.0: the simplifier
        i += 1
    return [h]


def measure(n_ops: int, repeat: int) -> dict[str, float]:
    best: dict[str, float] = {}

    def keep(name: str, seconds: float) -> None:
        best[name] = min(best.get(name, float("inf")), seconds)

    for _ in range(repeat):
        sub = collect(traced_graph(n_ops))
        best["ops"] = len(sub.nodes)
        with gc_paused():
            t0 = time.perf_counter()
            module = build_module(sub)
            t1 = time.perf_counter()
            stats = run_pipeline(module, DEFAULT_PIPELINE)
            t2 = time.perf_counter()
            ReferenceExecutable(lower(module))
            t3 = time.perf_counter()
            baseline = build_module(sub)
            t4 = time.perf_counter()
            from xdsl.transforms.common_subexpression_elimination import (
                CommonSubexpressionElimination,
            )
            from xdsl.transforms.dead_code_elimination import DeadCodeElimination

            ctx = make_context()
            CommonSubexpressionElimination().apply(ctx, baseline)
            DeadCodeElimination().apply(ctx, baseline)
            t5 = time.perf_counter()
        # the same pipeline with Python's cyclic GC on (compile_subgraph pauses it)
        with_gc = build_module(sub)
        t6 = time.perf_counter()
        run_pipeline(with_gc, DEFAULT_PIPELINE)
        t7 = time.perf_counter()
        keep("passes_gc", t7 - t6)
        keep("build", t1 - t0)
        keep("passes", t2 - t1)
        keep("lowering", t3 - t2)
        keep("total", t3 - t0)
        keep("xdsl", t5 - t4)
        best["after"] = count_ops(module)
        for name, rec in stats.records.items():
            keep("pass:" + name, rec.seconds)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sizes", type=int, nargs="*", default=[100, 1000, 10000])
    ap.add_argument("--write", action="store_true", help="update docs/perf/passes.md")
    args = ap.parse_args()
    measure(100, 1)  # imports and first-call costs out of the way
    results = {n: measure(n, args.repeat) for n in args.sizes}
    rows = ["| ops traced | ops after | IR build ops/s | default pipeline ops/s | "
            "reference lowering ops/s | whole compile ops/s | whole compile ms | "
            "xDSL cse+dce ops/s | default pipeline with GC on, ops/s |",
            "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in results.values():
        n = r["ops"]
        rows.append(f"| {n:.0f} | {r['after']:.0f} | {n / r['build']:,.0f} | "
                    f"{n / r['passes']:,.0f} | {n / r['lowering']:,.0f} | "
                    f"{n / r['total']:,.0f} | {r['total'] * 1e3:,.1f} | {n / r['xdsl']:,.0f} | "
                    f"{n / r['passes_gc']:,.0f} |")
    largest = results[max(results)]
    per_pass = [f"Time per pass at {largest['ops']:.0f} ops (`fixed-point/*` summed over "
                "its rounds; `fixed-point` includes them):", "",
                "| pass | ms | ops/s |", "| --- | ---: | ---: |"]
    for key, seconds in largest.items():
        if key.startswith("pass:"):
            per_pass.append(f"| {key[5:]} | {seconds * 1e3:.1f} | "
                            f"{largest['ops'] / seconds:,.0f} |")
    text = "\n".join(["## Compile time (`bench/compile.py`)", "",
                      f"Default pipeline: `{DEFAULT_PIPELINE}`. Best of {args.repeat} "
                      "repeats; ops/s = recorded ops / seconds.", "", *rows, "", *per_pass])
    print(text)
    if args.write:
        fusion_bench.write_section(text, "bench/compile.py")


if __name__ == "__main__":
    main()
