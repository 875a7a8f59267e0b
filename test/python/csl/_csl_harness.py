"""Helpers of the csl backend tests."""

from __future__ import annotations

import numpy as np


def assert_close(ref: list[np.ndarray], got: list[np.ndarray], rtol: float = 2e-5,
                 atol: float = 2e-6) -> None:
    assert len(ref) == len(got)
    for i, (r, g) in enumerate(zip(ref, got)):
        assert r.shape == g.shape, f"output #{i}: shape {g.shape} != {r.shape}"
        assert r.dtype == g.dtype, f"output #{i}: dtype {g.dtype} != {r.dtype}"
        if r.dtype == np.bool_:
            np.testing.assert_array_equal(g, r, err_msg=f"output #{i}")
        else:
            np.testing.assert_allclose(g, r, rtol=rtol, atol=atol, err_msg=f"output #{i}")


def parse_wse(text: str):
    """A module holding one wse.program, parsed and verified."""
    from pyflame_mlir.dialects.wse import WSE
    from xdsl.context import Context
    from xdsl.dialects.builtin import Builtin
    from xdsl.parser import Parser

    ctx = Context()
    ctx.load_dialect(Builtin)
    ctx.load_dialect(WSE)
    module = Parser(ctx, text).parse_module()
    module.verify()
    return module


def run_wse(module, inputs: list[np.ndarray], arch: str = "wse2"):
    """Lower a wse module to CSL and run it on the simulator; (outputs, cycle report)."""
    from pyflame_mlir.lowering.emit_csl import program_spec, run_program
    from pyflame_mlir.lowering.to_csl import lower_to_csl

    from pyflame_mlir.runtime.wse.sdkruntime import MemcpyDataType, MemcpyOrder, SdkRuntime

    prog = lower_to_csl(module, arch)
    rt = SdkRuntime.for_module(prog.module, arch=arch)
    rt.load()
    rt.run()
    outs = run_program(rt, program_spec(prog), inputs, MemcpyOrder.ROW_MAJOR,
                       MemcpyDataType.MEMCPY_32BIT)
    rt.stop()
    return outs, rt.report


def wse_type(shape: str, layout: str) -> str:
    return f"!wse.tensor<{shape}xf32, #wse.layout<{layout}>>"
