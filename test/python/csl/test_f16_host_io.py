"""16-bit host I/O for f16 tensors (issue #16 leftovers): an f16 input is copied into
an f16 buffer with ``memcpy_h2d(..., data_type=MEMCPY_16BIT)`` and an f16 output read
with ``memcpy_d2h(..., MEMCPY_16BIT)`` (the SDK's host array holds one u32 per element,
the half's bits in the low 16: ``sdk_utils.input_array_to_u32``), instead of f32 words
converted on the PEs. The host-traffic counters count 2 bytes per f16 element: the same
program moves half the bytes of its f32 twin, and there is no ``@fs2h``/``@fh2s`` at
the program's edges."""

from __future__ import annotations

import re

import numpy as np
import pytest
from pyflame_mlir.dialects import wse
from pyflame_mlir.lowering.emit_csl import emit
from pyflame_mlir.lowering.to_csl import lower_to_csl
from pyflame_mlir.lowering.to_wse import WseOptions, lower_to_wse

import pyflame_mlir as pf
from pyflame_mlir.compiler import build_module, run_pipeline
from pyflame_mlir.core import collect
from pyflame_mlir.runtime.wse.compile import compile_program
from pyflame_mlir.runtime.wse.run_host import run_script

GRIDS = [(1, 1), (2, 2), (4, 4)]
X = np.random.default_rng(11).standard_normal((6, 5))
Y = np.random.default_rng(12).standard_normal((6, 5))


def _step(dtype):
    x, y = pf.tensor(X.astype(dtype)), pf.tensor(Y.astype(dtype))
    return [(x * y + x).T, pf.relu(x - y)]


@pytest.mark.parametrize("grid", GRIDS)
def test_f16_crosses_memcpy_as_16_bit_data(on_grid, csl, grid):
    traffic = {}
    for dtype in (np.float32, np.float16):
        ref, got = on_grid(grid, lambda dtype=dtype: _step(dtype))
        for r, g in zip(ref, got):
            assert g.dtype == r.dtype == dtype
            np.testing.assert_array_equal(g, r)  # f16 products and sums round as numpy's
        run = csl.last_run()
        traffic[dtype] = (run.traffic.h2d_bytes, run.traffic.d2h_bytes)
        builtins = set(re.findall(r"csl\.(f\w+)", str(run.program.module)))
        if dtype == np.float16:
            assert not builtins & {"fs2h", "fh2s"}, builtins  # no conversion at the edges
            assert all(io.half for io in (*run.program.inputs, *run.program.outputs))
    h2d32, d2h32 = traffic[np.float32]
    assert h2d32 >= 4 * 2 * X.size and d2h32 >= 4 * 2 * X.size  # (+ the padding of tiles)
    assert traffic[np.float16] == (h2d32 // 2, d2h32 // 2), traffic


def test_emitted_run_py_moves_f16_as_16_bit_data(tmp_path):
    """The SDK project's run.py copies f16 symbols with MEMCPY_16BIT (the simulator's
    SdkRuntime refuses a 32-bit memcpy into a 16-bit buffer) and gets the values."""
    outs = _step(np.float16)
    sub = collect(outs)
    module = build_module(sub)
    run_pipeline(module, "legalize-for-wse")
    low = lower_to_wse(module, WseOptions(grid=wse.Grid(2, 2)))
    prog = lower_to_csl(low.module, plan=low.memory)
    leaves = [t._value for t in sub.leaves]
    proj = emit(prog, tmp_path / "proj", inputs=[leaves[d] if k == "arg" else d
                                                 for k, d in low.inputs])
    assert "MEMCPY_16BIT" in (proj / "run.py").read_text()
    layout = (proj / "layout.csl").read_text()
    for name in ("in_0", "in_1", "out_0", "out_1"):  # exported as 16-bit symbols
        assert f'@export_name("{name}", [*]f16, true);' in layout, layout
    compiled = compile_program(proj / "program.mlir", tmp_path / "out")
    run_script(proj / "run.py", ["--name", str(compiled)], quiet=True)
    x, y = X.astype(np.float16), Y.astype(np.float16)
    for i, want in enumerate([(x * y + x).T, np.maximum(x - y, 0)]):
        got = np.load(proj / f"out_{i}.npy")
        np.testing.assert_array_equal(got.astype(np.float16), want)
