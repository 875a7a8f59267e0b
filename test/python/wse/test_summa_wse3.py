"""Issue 15: SUMMA on WSE-3. Its panels reach line 0 store-and-forward through the
cores on two parity colors (WSE-3 routes take one input direction per color),
so the simulator's rules check passes, and the product matches numpy on 2x2 and
4x4 grids, synchronous and task-chained (overlapped)."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest
from pyflame_mlir.dialects.wse import WSE
from pyflame_mlir.lowering.csl_printer import print_csl
from pyflame_mlir.lowering.emit_csl import program_spec, run_program
from pyflame_mlir.lowering.to_csl import lower_to_csl
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin
from xdsl.parser import Parser

from pyflame_mlir.runtime.wse.sdkruntime import MemcpyDataType, MemcpyOrder, SdkRuntime

RNG = np.random.default_rng(15)


def _summa_module(grid: int, m: int, k: int, n: int):
    def t(r: int, c: int) -> str:
        return f"!wse.tensor<{r}x{c}xf32, #wse.layout<[y, x]>>"

    text = (f"wse.program @main {{width = {grid}, height = {grid}}} {{\n"
            f"^bb0(%a: {t(m, k)}, %b: {t(k, n)}):\n"
            f"  %c = wse.summa %a, %b : ({t(m, k)}, {t(k, n)}) -> {t(m, n)}\n"
            f"  wse.return %c : {t(m, n)}\n}}")
    ctx = Context()
    ctx.load_dialect(Builtin)
    ctx.load_dialect(WSE)
    module = Parser(ctx, text).parse_module()
    module.verify()
    return module


@pytest.mark.parametrize("grid,shape", [(2, (8, 6, 5)), (4, (16, 16, 8)), (4, (64, 64, 64))])
@pytest.mark.parametrize("overlap", [False, True])
def test_summa_on_wse3_matches_numpy(grid: int, shape, overlap: bool):
    m, k, n = shape
    module = _summa_module(grid, m, k, n)
    a = RNG.standard_normal((m, k)).astype(np.float32)
    b = RNG.standard_normal((k, n)).astype(np.float32)
    prog = lower_to_csl(module, "wse3", overlap=overlap)
    text = io.StringIO()
    print_csl(prog.module, text)
    assert ".rx = .{ RAMP }" in text.getvalue()
    assert not re.search(r"\.rx = \.\{ \w+, ", text.getvalue())  # one rx port per route
    rt = SdkRuntime.for_module(prog.module, arch="wse3")  # checks the WSE-3 rules on load
    rt.load()
    rt.run()
    (c,) = run_program(rt, program_spec(prog), [a, b], MemcpyOrder.ROW_MAJOR,
                       MemcpyDataType.MEMCPY_32BIT)
    rt.stop()
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
