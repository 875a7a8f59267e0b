"""The csl backend through the frontend: the compile cache (new data runs the cached
program), option changes, the cycle report, bool outputs, the training loop shape
of use (one compile for many steps), and the layout pass."""

from __future__ import annotations

import numpy as np
import pytest

import pyflame_mlir as pf
from pyflame_mlir.core import COUNTERS
from pyflame_mlir.runtime import csl_backend
from pyflame_mlir.runtime.wse import CycleReport


@pytest.fixture
def csl():
    prev_backend, prev = pf.get_backend(), csl_backend.configure(mode="simulator", grid=(2, 2))
    pf.set_backend("csl")
    yield
    pf.set_backend(prev_backend)
    csl_backend.configure(**vars(prev))


def _step(w, x):
    return pf.relu(x @ w).sum(dim=1)


def test_cache_hit_runs_new_data(csl):
    rng = np.random.default_rng(0)
    w = pf.tensor(rng.standard_normal((6, 5)).astype(np.float32))
    results = []
    before = COUNTERS.compiles
    for _ in range(3):
        xn = rng.standard_normal((8, 6)).astype(np.float32)
        got = _step(w, pf.tensor(xn)).numpy()
        np.testing.assert_allclose(got, np.maximum(xn @ w.numpy(), 0).sum(1), rtol=1e-5,
                                   atol=1e-6)
        results.append(got)
    assert COUNTERS.compiles - before == 1
    report = csl_backend.last_report()
    assert isinstance(report, CycleReport)
    assert (report.width, report.height) == (2, 2) and report.total_cycles > 0
    assert report.flops > 0


def test_grid_change_relowers_the_cached_graph(csl):
    rng = np.random.default_rng(1)
    w = pf.tensor(rng.standard_normal((6, 5)).astype(np.float32))
    x = pf.tensor(rng.standard_normal((8, 6)).astype(np.float32))
    want = np.maximum(x.numpy() @ w.numpy(), 0).sum(1)
    np.testing.assert_allclose(_step(w, x).numpy(), want, rtol=1e-5, atol=1e-6)
    csl_backend.configure(grid=(4, 1))
    np.testing.assert_allclose(_step(w, x).numpy(), want, rtol=1e-5, atol=1e-6)
    assert csl_backend.last_report().width == 4


def test_bool_and_mask_outputs(csl):
    x = pf.tensor(np.array([[1.0, -2.0, 3.0], [0.0, 5.0, -1.0]], np.float32))
    m = x > 0.0
    pf.eval(m, pf.where(m, x, -x))
    assert m.numpy().dtype == np.bool_
    np.testing.assert_array_equal(m.numpy(), x.numpy() > 0)


def test_training_steps_compile_once(csl):
    """SGD on a tiny regression: forward, backward and update in one graph per step."""
    rng = np.random.default_rng(2)
    xs = rng.standard_normal((16, 4)).astype(np.float32)
    ys = xs @ np.array([[1.0], [-2.0], [0.5], [3.0]], np.float32)
    w = pf.zeros([4, 1])
    before = COUNTERS.compiles
    losses = []
    for _ in range(4):
        def loss_fn(w):
            d = pf.tensor(xs) @ w - pf.tensor(ys)
            return (d * d).mean()
        loss, g = pf.value_and_grad(loss_fn)(w)
        w = w - 0.1 * g
        pf.eval(loss, w)
        losses.append(loss.item())
    assert COUNTERS.compiles - before <= 2  # the first step may differ (w is a zeros leaf)
    assert losses[-1] < losses[0]
    pf.set_backend("reference")
    wr = pf.zeros([4, 1])
    for _ in range(4):
        gr = pf.grad(lambda w: ((pf.tensor(xs) @ w - pf.tensor(ys)) ** 2).mean())(wr)
        wr = (wr - 0.1 * gr).eval()
    np.testing.assert_allclose(w.numpy(), wr.numpy(), rtol=1e-4, atol=1e-5)


def test_layout_pass_annotates(csl):
    from pyflame_mlir.passes.wse_layout import WseLayout

    from pyflame_mlir.compiler import build_module
    from pyflame_mlir.core import collect

    a, v = pf.randn([16, 12]), pf.randn([12])
    module = build_module(collect([pf.softmax(a @ v, dim=0)]))
    WseLayout(width=4, height=4).apply(None, module)  # type: ignore[arg-type]
    text = str(module)
    assert 'wse.scheme = "matmul M:y K:x N:-' in text
    assert "wse.layout = #wse.layout<[y], x = 0>" in text
    assert 'wse.grid = "4x4"' in text


def test_sdk_mode_runs_the_emitted_project(csl, tmp_path, monkeypatch):
    """With cslc and cs_python on PATH the backend emits the project into the cache,
    compiles it with cslc once and runs run.py with cs_python. Here both are shims
    delegating to the project's stand-ins, so the SDK path's plumbing is exercised."""
    import os
    import stat
    import sys

    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "calls.log"
    py = sys.executable
    for name, body in (
        ("cslc", f'echo "cslc $*" >> {log}\n'
                 f'exec {py} -m pyflame_mlir.runtime.wse.compile program.mlir -o out'),
        ("cs_python", f'echo "cs_python $*" >> {log}\n'
                      f'exec {py} -m pyflame_mlir.runtime.wse.run_host "$@"'),
    ):
        f = bindir / name
        f.write_text(f"#!/bin/bash\n{body}\n")
        f.chmod(f.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("PYFLAME_CACHE_DIR", str(tmp_path / "cache"))
    csl_backend.configure(mode="auto")
    assert csl_backend.sdk_on_path()
    rng = np.random.default_rng(4)
    w = pf.tensor(rng.standard_normal((6, 5)).astype(np.float32))
    for _ in range(2):
        xn = rng.standard_normal((8, 6)).astype(np.float32)
        got = _step(w, pf.tensor(xn)).numpy()
        np.testing.assert_allclose(got, np.maximum(xn @ w.numpy(), 0).sum(1), rtol=1e-5,
                                   atol=1e-6)
    calls = log.read_text().splitlines()
    assert sum(c.startswith("cslc layout.csl --arch=wse2 --fabric-dims=9,4") for c in calls) == 1
    assert sum(c.startswith("cs_python run.py --name out") for c in calls) == 2
    assert list((tmp_path / "cache" / "csl").iterdir())


def test_fused_pipeline_is_lowered(csl):
    """Graphs optimized with fusion (named fused ops, pyflame.fused regions) lower too."""
    rng = np.random.default_rng(5)
    a = pf.tensor(rng.standard_normal((8, 6)).astype(np.float32))
    b = pf.tensor(rng.standard_normal((8, 6)).astype(np.float32))
    w = pf.tensor(rng.standard_normal((6, 4)).astype(np.float32))
    prev = pf.get_pipeline()
    pf.set_pipeline("default")
    try:
        out = (pf.sigmoid(a * b) + pf.relu(a + b) @ w.sum(dim=1, keepdim=True)).sum(dim=0)
        got = out.numpy()
    finally:
        pf.set_pipeline(None if prev is None else prev)
    an, bn, wn = a.numpy(), b.numpy(), w.numpy()
    want = (1 / (1 + np.exp(-an * bn)) + np.maximum(an + bn, 0) @ wn.sum(1, keepdims=True)
            ).sum(0)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
