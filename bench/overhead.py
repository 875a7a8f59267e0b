"""Frontend overhead, side by side with torch eager in one run.

- µs to record one op (add, relu, matmul) on 4x4 tensors vs torch eager's
  dispatch of the same op;
- µs for one cache-hit evaluation of a 50-op graph (recording excluded) and
  for the whole step (record 50 ops + evaluate) vs torch eager running the
  same 50 ops;
- issue 19: one call of the 50-op function under ``pf.compile`` (replayed:
  nothing recorded) vs torch eager; a 1000-op elementwise chain recorded and
  run vs torch eager (and its recording alone); the README's forward example
  with new data each call vs the same forward in numpy.

Prints a markdown table; docs/PERFORMANCE.md records the results.
``--native-vs-python [ROUNDS]``: the table from runs with the C extension
(``pyflame_mlir/_native.c``) and without it (``PYFLAME_NO_NATIVE=1``), each in
its own process, alternating; per row the best of the rounds for each, and
each one's ratio to torch eager measured in its own process.
"""

from __future__ import annotations

import platform
import time
from collections.abc import Callable

import numpy as np

import pyflame_mlir as pf

try:
    import torch
except ImportError:  # torch is a test extra
    torch = None


def best_us(fn: Callable[[], object], number: int, repeat: int = 7) -> float:
    """µs per call: the best of ``5 * repeat`` timings of ``number // 5`` calls
    each (the work of ``repeat`` timings of ``number`` calls, in shorter
    windows: on a machine shared with other jobs, some of them run undisturbed)."""
    n = max(1, number // 5)
    best = float("inf")
    for _ in range(5 * repeat):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t0) / n)
    return best * 1e6


def mean_us(fn: Callable[[], object], number: int) -> float:
    """µs per call: the mean of ``number`` calls in a row (what a long loop pays,
    the collections of CPython's cyclic GC included; best-of figures hide them)."""
    fn()
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number * 1e6


def chain50(x, y):
    """50 elementwise ops (PyTorch and pyflame spell them the same)."""
    h = x
    for _ in range(10):
        h = h * y
        h = h + x
        h = h.relu() if hasattr(h, "relu") else h
        h = h - y
        h = h.tanh()
    return h


def chain1000(x, y):
    """1000 elementwise ops: the implicit path's per-op cost on a long graph."""
    h = x
    for _ in range(20):
        h = chain50(h, y)
    return h


def evaluation_parts(out, evaluation: float) -> list[tuple[str, float, float | None]]:
    """Where a cache-hit evaluation of the lazy ``out`` goes: the walk that
    orders the graph and writes its key (``collect``), the cache lookup (the
    key's hash and comparison), the compiled program's run, and the rest
    (freeing the recorded nodes once the result is realized, the results'
    checks) as ``evaluation`` minus those."""
    from pyflame_mlir import compiler, core

    sub = core.collect([out])
    config = compiler.config_key()
    key = sub.key(config)
    entry = compiler.CACHE.get(key)
    assert entry is not None, "evaluate the graph once first"
    args = [t._value for t in sub.leaves]
    walk = best_us(lambda: core.collect([out]), 20)
    lookup = best_us(lambda: compiler.CACHE.get(sub.key(config)), 20)
    run = best_us(lambda: entry.run(args), 20)
    return [("  of which: collect (walk, order, key)", walk, None),
            ("  of which: cache lookup", lookup, None),
            ("  of which: the compiled program's run", run, None),
            ("  of which: the rest (freeing the nodes, checks)",
             evaluation - walk - lookup - run, None)]


def issue19_rows(a, b, ta, tb) -> list[tuple[str, float, float | None]]:
    """Issue 19: a compiled 50-op call; the 1000-op chain recorded and run; the
    README's forward example with new data each call (against numpy)."""
    rows: list[tuple[str, float, float | None]] = []
    compiled = pf.compile(chain50)
    compiled(a, b)
    before = pf.COUNTERS.ops_recorded
    call = best_us(lambda: compiled(a, b), 2000)
    assert pf.COUNTERS.ops_recorded == before  # replays record nothing
    torch_chain = best_us(lambda: chain50(ta, tb), 2000) if ta is not None else None
    rows.append(("pf.compile'd 50-op call (4x4)", call, torch_chain))
    chain1000(a, b).numpy()
    long = best_us(lambda: chain1000(a, b).numpy(), 20)
    torch_long = best_us(lambda: chain1000(ta, tb), 20) if ta is not None else None
    long_record = best_us(lambda: chain1000(a, b), 20)
    rows.append(("record 1000 ops (4x4)", long_record, None))
    rows.append(("cache-hit evaluation of 1000 ops (whole - record)", long - long_record, None))
    rows += evaluation_parts(chain1000(a, b), long - long_record)
    rows.append(("record + evaluate 1000 ops (4x4)", long, torch_long))
    rows.append(("same, mean of 300 calls (the cyclic GC's full collections included)",
                 mean_us(lambda: chain1000(a, b).numpy(), 300),
                 mean_us(lambda: chain1000(ta, tb), 300) if ta is not None else None))

    r = np.random.default_rng(0)
    w1, b1 = (r.standard_normal((512, 256)) * 0.05).astype(np.float32), \
        np.full(256, 0.01, np.float32)
    w2 = (r.standard_normal((256, 10)) * 0.05).astype(np.float32)
    data = [r.standard_normal((1024, 512)).astype(np.float32) for _ in range(4)]
    pw1, pb1, pw2 = pf.tensor(w1), pf.tensor(b1), pf.tensor(w2)
    it = iter(range(1 << 60))

    def readme() -> float:
        x = pf.tensor(data[next(it) % 4])
        probs = pf.softmax(pf.relu(x @ pw1 + pb1) @ pw2, dim=1)
        return (-pf.log(probs).sum()).item()

    def numpy_readme() -> float:
        h = np.maximum(data[next(it) % 4] @ w1 + b1, 0) @ w2
        e = np.exp(h - h.max(1, keepdims=True))
        return float(-np.log(e / e.sum(1, keepdims=True)).sum())
    def readme_shared() -> float:  # the data shared, not copied: numpy's own work
        x = pf.from_numpy(data[next(it) % 4])
        probs = pf.softmax(pf.relu(x @ pw1 + pb1) @ pw2, dim=1)
        return (-pf.log(probs).sum()).item()
    readme()
    rows.append(("README forward, new data each call (vs numpy, not torch)",
                 best_us(readme, 20), best_us(numpy_readme, 20)))
    rows.append(("same, data by pf.from_numpy (no copy, as numpy) instead of pf.tensor",
                 best_us(readme_shared, 20), best_us(numpy_readme, 20)))
    return rows


def main() -> None:
    a, b = pf.randn(4, 4), pf.randn(4, 4)
    rows: list[tuple[str, float, float | None]] = []
    ta = tb = None
    if torch is not None:
        torch.set_num_threads(1)
        # torch gets copies: its in-place use must never reach pf's arrays
        ta, tb = torch.from_numpy(a.numpy().copy()), torch.from_numpy(b.numpy().copy())
    for name, pf_fn, torch_fn in [
        ("record add (4x4)", lambda: a + b, lambda: ta + tb),
        ("record pf.add(a, b) (4x4; the function, out= taken inside)", lambda: pf.add(a, b),
         lambda: torch.add(ta, tb)),
        ("record relu (4x4)", lambda: pf.relu(a), lambda: torch.relu(ta)),
        ("record matmul (4x4)", lambda: a @ b, lambda: ta @ tb),
    ]:
        rows.append((name, best_us(pf_fn, 20000), best_us(torch_fn, 20000) if ta is not None
                     else None))

    chain50(a, b).numpy()  # compile once
    record = best_us(lambda: chain50(a, b), 300)

    def step() -> None:
        chain50(a, b).numpy()
    whole = best_us(step, 300)
    torch_chain = best_us(lambda: chain50(ta, tb), 300) if ta is not None else None
    rows.append(("record 50 ops", record, None))
    rows.append(("cache-hit evaluation of 50 ops", whole - record, None))
    rows.append(("record + evaluate 50 ops", whole, torch_chain))
    assert pf.cache_stats()["misses"] >= 1
    rows += issue19_rows(a, b, ta, tb)

    print(f"machine: {platform.machine()}, {platform.python_implementation()} "
          f"{platform.python_version()}, numpy {np.__version__}, "
          f"torch {torch.__version__ if torch else 'absent'}, "
          f"date {time.strftime('%Y-%m-%d')}")
    print()
    print("| measurement | pyflame µs | torch eager µs | ratio pyflame/torch |")
    print("| --- | ---: | ---: | ---: |")
    for name, p, t in rows:
        ratio = f"{p / t:.2f}" if t else "—"
        ts = f"{t:.2f}" if t else "—"
        print(f"| {name} | {p:.2f} | {ts} | {ratio} |")


def native_vs_python(rounds: int) -> None:
    import os
    import subprocess
    import sys

    best: dict[str, dict[str, tuple[float, float | None]]] = {"native": {}, "python": {}}
    order: list[str] = []
    header = ""
    for r in range(rounds):
        for mode in ("native", "python") if r % 2 == 0 else ("python", "native"):
            env = dict(os.environ)
            env.pop("PYFLAME_NO_NATIVE", None)
            if mode == "python":
                env["PYFLAME_NO_NATIVE"] = "1"
            out = subprocess.run([sys.executable, __file__], env=env, capture_output=True,
                                 text=True, check=True).stdout.splitlines()
            header = out[0]
            for line in out:
                cells = [c.strip() for c in line.strip("|").split("|")]
                if len(cells) != 4 or not cells[1][:1].isdigit():
                    continue
                name, p, t = cells[0], float(cells[1]), cells[2]
                if name not in order:
                    order.append(name)
                tv = float(t) if t[:1].isdigit() else None
                old = best[mode].get(name)
                if old is None or p < old[0]:
                    best[mode][name] = (p, tv)
    print(header.replace("date", f"{rounds} rounds, best of each; date"))
    print()
    print("| measurement | native µs | pure Python µs | native/Python | native/torch | "
          "Python/torch |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name in order:
        (p, t), (q, u) = best["native"][name], best["python"][name]
        rt = f"{p / t:.2f}" if t else "—"
        ru = f"{q / u:.2f}" if u else "—"
        print(f"| {name} | {p:.2f} | {q:.2f} | {p / q:.2f} | {rt} | {ru} |")


if __name__ == "__main__":
    import sys

    if len(sys.argv) > 1 and sys.argv[1] == "--native-vs-python":
        native_vs_python(int(sys.argv[2]) if len(sys.argv) > 2 else 3)
    else:
        main()
