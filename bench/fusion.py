"""Fused kernels of the reference executor vs plain numpy, side by side in one run.

- An elementwise chain of 8 ops on 4M float32 values
  (``exp(relu(tanh(x*y + x) * 0.5 - y) + x)``): plain numpy (one temporary
  per op), the reference executor without passes (one kernel per op into
  planned buffers), and with the default pipeline (one ``pyflame.fused``
  region, run in cache-sized chunks).
- The same chain ending in a reduction (``sum`` over the last axis of a
  2048x2048 array: per-chunk reduction; and over everything: the chain is
  written once and reduced once).
- Each named fused op on 4M values vs the numpy pair it replaces.
- The chunk size of the fused evaluator (``DEFAULT_CHUNK_ELEMS``).

Best of several interleaved repeats; prints markdown and, with ``--write``,
updates its section of docs/perf/passes.md.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from pyflame_mlir.dialects import OPS
from pyflame_mlir.dialects.fused import DEFAULT_CHUNK_ELEMS
from pyflame_mlir.lowering.reference import lower
from pyflame_mlir.passes import DEFAULT_PIPELINE

import pyflame_mlir as pf
from pyflame_mlir.compiler import build_module, run_pipeline
from pyflame_mlir.core import collect
from pyflame_mlir.runtime.reference import ReferenceExecutable

N = 4 * 1024 * 1024
DOC = Path(__file__).resolve().parent.parent / "docs" / "perf" / "passes.md"


def best_ms(fns: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """Best time of each function, the functions interleaved in every repeat."""
    best = {k: float("inf") for k in fns}
    for _ in range(repeat):
        for k, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            best[k] = min(best[k], time.perf_counter() - t0)
    return {k: v * 1e3 for k, v in best.items()}


def chain_pf(x, y):
    return pf.exp(pf.relu(pf.tanh(x * y + x) * 0.5 - y) + x)


def chain_np(x, y):
    return np.exp(np.maximum(np.tanh(x * y + x) * np.float32(0.5) - y, 0) + x)


def executable(build: Callable[[], list], spec: str, chunk: int | None = None
               ) -> ReferenceExecutable:
    outs = build()
    module = build_module(collect(outs))
    run_pipeline(module, spec)
    plan = lower(module) if chunk is None else lower(module, chunk_elems=chunk)
    return ReferenceExecutable(plan)


def chain_table(repeat: int) -> tuple[list[str], dict]:
    rng = np.random.default_rng(0)
    xn = rng.standard_normal(N).astype(np.float32)
    yn = rng.standard_normal(N).astype(np.float32)

    def build():
        return [chain_pf(pf.from_numpy(xn), pf.from_numpy(yn))]

    unfused = executable(build, "")
    fused = executable(build, DEFAULT_PIPELINE)
    want = chain_np(xn, yn)
    for exe in (unfused, fused):
        np.testing.assert_array_equal(exe.run([xn, yn])[0], want)

    def via_frontend():
        return chain_pf(pf.from_numpy(xn), pf.from_numpy(yn)).numpy()

    via_frontend()  # compile once: the loop measures cache hits
    times = best_ms({"numpy": lambda: chain_np(xn, yn),
                     "unfused": lambda: unfused.run([xn, yn]),
                     "fused": lambda: fused.run([xn, yn]),
                     "frontend": via_frontend}, repeat)
    base = times["numpy"]
    rows = [
        "| 8-op chain on 4M float32 | ms | vs numpy |",
        "| --- | ---: | ---: |",
        f"| plain numpy (a temporary per op) | {base:.1f} | 1.00 |",
        f"| reference executor, no passes (a kernel per op, planned buffers) | "
        f"{times['unfused']:.1f} | {times['unfused'] / base:.2f} |",
        f"| reference executor, default pipeline (one `pyflame.fused`, chunked) | "
        f"{times['fused']:.1f} | {times['fused'] / base:.2f} |",
        f"| the same through the frontend (record 8 ops + cache hit + run) | "
        f"{times['frontend']:.1f} | {times['frontend'] / base:.2f} |",
    ]
    return rows, times


def reduction_table(repeat: int) -> list[str]:
    rng = np.random.default_rng(1)
    xn = rng.standard_normal((2048, 2048)).astype(np.float32)
    yn = rng.standard_normal((2048, 2048)).astype(np.float32)
    rows = ["| chain + reduction, 2048x2048 float32 | numpy ms | fused ms | fused/numpy |",
            "| --- | ---: | ---: | ---: |"]
    for label, dims in (("sum over the last axis (reduced chunk by chunk)", 1),
                        ("sum over everything (chain written once, reduced once)", None)):
        def build(dims=dims):
            x, y = pf.from_numpy(xn), pf.from_numpy(yn)
            return [chain_pf(x, y).sum(dims)]

        fused = executable(build, DEFAULT_PIPELINE)
        def np_fn(dims=dims):
            return chain_np(xn, yn).sum(dims)

        np.testing.assert_allclose(fused.run([xn, yn])[0], np_fn(), rtol=1e-4)
        t = best_ms({"numpy": np_fn, "fused": lambda f=fused: f.run([xn, yn])}, repeat)
        rows.append(f"| {label} | {t['numpy']:.1f} | {t['fused']:.1f} | "
                    f"{t['fused'] / t['numpy']:.2f} |")
    return rows


def named_table(repeat: int) -> list[str]:
    """Each named fused op against the pair of ops it replaces, both in the
    reference executor (the result escapes: a fresh array either way), and
    against plain numpy."""
    rng = np.random.default_rng(2)
    a, b, c = (rng.standard_normal(N).astype(np.float32) for _ in range(3))
    m1 = rng.standard_normal((1024, 512)).astype(np.float32)
    m2 = rng.standard_normal((512, 1024)).astype(np.float32)
    sigmoid, gelu = OPS["sigmoid"].kernel, OPS["gelu"].kernel
    cases = [
        ("fused_add_relu, 4M", (a, b), lambda x, y: pf.relu(x + y),
         lambda: np.maximum(a + b, 0)),
        ("fused_mul_sigmoid, 4M", (a, b), lambda x, y: pf.sigmoid(x * y),
         lambda: sigmoid(a * b)),
        ("fused_fma, 4M", (a, b, c), lambda x, y, z: x * y + z, lambda: a * b + c),
        ("fused_matmul_relu, 1024x512 @ 512x1024", (m1, m2), lambda x, y: pf.relu(x @ y),
         lambda: np.maximum(m1 @ m2, 0)),
        ("fused_matmul_gelu, 1024x512 @ 512x1024", (m1, m2), lambda x, y: pf.gelu(x @ y),
         lambda: gelu(m1 @ m2)),
    ]
    rows = ["| named fused op | numpy ms | executor, unfused ms | executor, fused ms | "
            "fused/unfused |", "| --- | ---: | ---: | ---: | ---: |"]
    for label, args, fn, np_fn in cases:
        def build(fn=fn, args=args):
            return [fn(*(pf.from_numpy(x) for x in args))]

        unfused = executable(build, "")
        fused = executable(build, "fuse")
        assert fused.plan.steps[0].name.startswith("fused_"), fused.plan.steps
        want = np_fn()
        for exe in (unfused, fused):
            np.testing.assert_array_equal(exe.run(list(args))[0], want)
        t = best_ms({"numpy": np_fn, "unfused": lambda e=unfused, x=args: e.run(list(x)),
                     "fused": lambda e=fused, x=args: e.run(list(x))}, repeat)
        rows.append(f"| {label} | {t['numpy']:.1f} | {t['unfused']:.1f} | {t['fused']:.1f} | "
                    f"{t['fused'] / t['unfused']:.2f} |")
    return rows


def chunk_table(repeat: int) -> list[str]:
    rng = np.random.default_rng(3)
    xn = rng.standard_normal(N).astype(np.float32)
    yn = rng.standard_normal(N).astype(np.float32)

    def build():
        return [chain_pf(pf.from_numpy(xn), pf.from_numpy(yn))]

    sizes = [4096, 16384, 32768, 65536, 262144, 1 << 22]
    exes = {s: executable(build, DEFAULT_PIPELINE, chunk=s) for s in sizes}
    t = best_ms({s: (lambda e=e: e.run([xn, yn])) for s, e in exes.items()}, repeat)
    rows = ["| chunk (elements) | 8-op chain ms |", "| ---: | ---: |"]
    for s in sizes:
        mark = " (default)" if s == DEFAULT_CHUNK_ELEMS else ""
        label = f"{s}{mark}" if s < N else f"{s} (whole array, no chunks)"
        rows.append(f"| {label} | {t[s]:.1f} |")
    return rows


def write_section(text: str, name: str) -> None:
    begin, end = f"<!-- begin {name} -->", f"<!-- end {name} -->"
    doc = DOC.read_text() if DOC.exists() else "# Optimization passes: performance\n"
    block = f"{begin}\n{text}\n{end}"
    if begin in doc:
        doc = doc[:doc.index(begin)] + block + doc[doc.index(end) + len(end):]
    else:
        doc = doc.rstrip("\n") + "\n\n" + block + "\n"
    DOC.parent.mkdir(parents=True, exist_ok=True)
    DOC.write_text(doc)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--write", action="store_true", help="update docs/perf/passes.md")
    args = ap.parse_args()
    chain_rows, _ = chain_table(args.repeat)
    parts = ["## Fused kernels (`bench/fusion.py`)", "",
             f"Best of {args.repeat} interleaved repeats, in one process.", "",
             *chain_rows, "", *reduction_table(args.repeat), "",
             *named_table(args.repeat), "", *chunk_table(args.repeat)]
    text = "\n".join(parts)
    print(text)
    if args.write:
        write_section(text, "bench/fusion.py")


if __name__ == "__main__":
    main()
