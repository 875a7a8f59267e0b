"""f16 data movement on the PE grid (issue #16 leftovers): slice/narrow, split, concat,
pad, element-moving reshape, permute/transpose, ``wse.relayout``, gathers and
broadcasts along the fabric and the embedding's row lookup move f16 tensors as f16
(2 bytes per element in SRAM, ``@fmovh`` copies, one 16-bit value per wavelet), not
in f32 between conversions. Moving bits rounds nothing: the results are **bit-equal**
to the reference backend's (numpy on the same f16 values), on 1x1, 2x2 and 4x4 grids.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from pyflame_mlir.dialects.wse import Grid
from pyflame_mlir.lowering.to_wse import WseOptions, lower_to_wse
from pyflame_mlir.passes.legalize_for_wse import LegalizeForWse
from xdsl.context import Context

import pyflame_mlir as pf
from pyflame_mlir.compiler import build_module
from pyflame_mlir.core import collect
from pyflame_mlir.nn import functional as F

GRIDS = [(1, 1), (2, 2), (4, 4)]


def _moves(rng: np.random.Generator) -> list[pf.Tensor]:
    """Every f16 data-movement op on f16 inputs (no arithmetic in f32; the last one's f16
    multiplies and add round once each, as numpy's do, and on a square grid move one
    operand's dims to the other axis with ``wse.relayout``)."""
    a = pf.tensor(rng.standard_normal((7, 10)).astype(np.float16))
    bt = pf.tensor(rng.standard_normal((10, 7)).astype(np.float16))
    b = pf.tensor(rng.standard_normal((7, 3)).astype(np.float16))
    t3 = pf.tensor(rng.standard_normal((2, 3, 4)).astype(np.float16))
    table = pf.tensor(rng.standard_normal((6, 5)).astype(np.float16))
    ids = pf.tensor(np.array([3, 0, 5, 3, 1]))
    q, k = a.split([4, 6], dim=1)
    return [a[1:6, 2:9], a.narrow(1, 3, 4), q, k, pf.cat([a, b], dim=1),
            pf.cat([a[:2], a[5:]], dim=0), F.pad(a, (1, 2, 0, 1)),
            a.reshape(10, 7), a.reshape(70), t3.permute(2, 0, 1), t3.reshape(4, 6),
            a.T, F.embedding(ids, table), (a * 2.0).T + bt * 3.0]


@pytest.mark.parametrize("grid", GRIDS)
def test_f16_data_movement_is_bit_exact(on_grid, grid):
    ref, got = on_grid(grid, lambda: _moves(np.random.default_rng(7)))
    for i, (r, g) in enumerate(zip(ref, got)):
        assert r.dtype == np.float16 and g.dtype == np.float16, (i, r.dtype, g.dtype)
        np.testing.assert_array_equal(g.view(np.uint16), r.view(np.uint16), err_msg=f"#{i}")


@pytest.mark.parametrize("grid", [(2, 2), (4, 4)])
def test_f16_relayout_gather_broadcast_are_bit_exact(on_grid, csl, grid):
    """``(2a).T + 3b`` in f16 on a square grid moves one operand's dims to the other
    axis with ``wse.relayout``; ``a @ v`` broadcasts and gathers f16 tiles."""
    rng = np.random.default_rng(8)
    a0 = rng.standard_normal((7, 10)).astype(np.float16)
    b0 = rng.standard_normal((10, 7)).astype(np.float16)
    c0 = rng.standard_normal((10, 1)).astype(np.float16)

    def fn():
        a, b, c = pf.tensor(a0), pf.tensor(b0), pf.tensor(c0)
        s = (a * 2.0).T + b * 3.0  # f16 multiply and add: one rounding each, as numpy
        return [s, s.sum(1, keepdim=True) * 0.0 + s[:, :1], (s - c).T[2:5]]

    ref, got = on_grid(grid, fn)
    for r, g in zip(ref, got):
        np.testing.assert_array_equal(g.view(np.uint16), r.view(np.uint16))
    used = set(re.findall(r"csl\.(f\w+)", str(csl.last_run().program.module)))
    assert "fmovh" in used, f"no f16 copy in the program: {sorted(used)}"


def test_f16_moves_stay_f16_on_the_pes():
    """After legalize-for-wse no f16 data-movement op is rewritten into f32 (no
    ``pyflame.convert``), and every wse value they make is an f16 tile."""
    module = build_module(collect(_moves(np.random.default_rng(9))))
    stats = LegalizeForWse().apply(Context(), module)
    assert "pyflame.convert" not in str(module), "f16 data movement went through f32"
    low = lower_to_wse(module, WseOptions(grid=Grid(2, 2)))
    half_movers = set()
    for op in low.program.body.block.ops:
        if op.name in MOVERS and op.operands[0].type.is_half:
            assert op.results[0].type.is_half, f"{op.name} made {op.results[0].type}"
            half_movers.add(op.name)
    assert half_movers >= {"wse.slice", "wse.pad", "wse.concat", "wse.permute", "wse.reshape",
                           "wse.transpose", "wse.take_rows", "wse.relayout"}, half_movers
    assert stats is None or not stats.get("f16_in_f32"), stats


MOVERS = ("wse.slice", "wse.pad", "wse.concat", "wse.permute", "wse.reshape", "wse.transpose",
          "wse.take_rows", "wse.gather", "wse.broadcast", "wse.scatter", "wse.relayout")
