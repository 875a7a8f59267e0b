"""What the csl backend refuses, and how: unsupported ops before anything is
emitted, the SRAM budget (an error on a fixed grid, a larger grid when automatic),
programs needing more colors than the fabric has, WSE-3 queue limits."""

from __future__ import annotations

import numpy as np
import pytest
from _csl_harness import parse_wse, run_wse, wse_type
from pyflame_mlir.lowering.to_csl import ColorBudgetError, lower_to_csl
from pyflame_mlir.lowering.to_wse import CslUnsupportedError, WseOptions, lower_to_wse
from pyflame_mlir.lowering.wse_memory import MemoryBudgetError

import pyflame_mlir as pf
from pyflame_mlir.runtime import csl_backend


@pytest.fixture
def csl():
    prev_backend, prev = pf.get_backend(), csl_backend.configure(mode="simulator")
    pf.set_backend("csl")
    yield
    pf.set_backend(prev_backend)
    csl_backend.configure(**vars(prev))


@pytest.mark.parametrize("build,op,why", [
    # argmax, gelu, slice and element-moving reshapes are lowered since issue #16
    # (test_grid_ops.py); these still are not:
    (lambda x: pf.argmax(x), "argmax", "over the flattened tensor"),
    (lambda x: pf.cumsum(x, 1), "cumsum", "no CSL lowering"),
    (lambda x: pf.gather(x, 1, pf.tensor(np.zeros((4, 2), np.int64))), "gather",
     "only row lookups"),
    # f16 is lowered since issue #16 (test_f16.py); bf16 has no DSD math on either arch:
    (lambda x: x.to(pf.bfloat16).abs(), "convert", "element type bfloat16: WSE-2: .*WSE-3"),
    (lambda x: x.to(pf.int32).abs(), "convert", "element type int32"),
    # rank 3 folds into rank 2 since issue #16, unless alternate dims broadcast:
    (lambda x: x.reshape(2, 2, 6) * pf.randn([2, 1, 6]), "mul", "rank-3 tensor"),
    (lambda x: x ** 3.0, "pow", "constant exponent"),
])
def test_unsupported_ops_fail_first(csl, build, op, why):
    x = pf.randn([4, 6])
    with pytest.raises(CslUnsupportedError, match=rf"csl backend: op pyflame\.{op} is not "
                                                   rf"supported \(.*{why}"):
        build(x).numpy()


def test_sram_budget_error_on_a_fixed_grid(csl):
    csl_backend.configure(grid=(1, 1))
    x = pf.randn([128, 128])  # 64 KiB on one PE
    with pytest.raises(MemoryBudgetError, match=r"the 1x1 grid needs \d+ bytes of SRAM per PE"
                                                 r".*budget is 43008 bytes.*larger grid"):
        (x * 2.0).numpy()


def test_automatic_grid_grows_until_it_fits(csl):
    csl_backend.configure(grid=None)
    x = pf.randn([128, 128])
    y = (x * 2.0 + 1.0).numpy()
    np.testing.assert_allclose(y, x.numpy() * 2.0 + 1.0, rtol=1e-6)
    low = lower_to_wse(_module(lambda: x * 2.0 + 1.0))
    assert low.grid.pes > 1
    assert low.memory.bytes <= 43008


def test_nothing_fits(csl):
    with pytest.raises(MemoryBudgetError, match="does not fit any grid of at most 4 PEs"):
        lower_to_wse(_module(lambda: pf.randn([256, 256]) * 2.0), WseOptions(max_pes=4))


def _module(fn):
    from pyflame_mlir.compiler import build_module
    from pyflame_mlir.core import collect

    return build_module(collect([fn()]))


def _shift_program(width: int, distance: int) -> str:
    t = wse_type(f"{width}", "[x], y = 0")
    return f"""wse.program @main {{width = {width}, height = 1}} {{
^bb0(%a: {t}):
  %b = wse.shift "x" %a {{distance = {distance} : i64}} : {t} -> {t}
  wse.return %b : {t}
}}"""


@pytest.mark.parametrize("distance", [1, 2, -3])
def test_shift_moves_tiles(distance):
    a = np.arange(1, 8, dtype=np.float32)
    (out,), _ = run_wse(parse_wse(_shift_program(7, distance)), [a])
    want = np.zeros(7, np.float32)
    if distance > 0:
        want[distance:] = a[:-distance]
    else:
        want[:distance] = a[-distance:]
    np.testing.assert_array_equal(out, want)


def test_more_colors_than_the_fabric_has():
    module = parse_wse(_shift_program(24, 21))  # a shift by 21 needs 22 colors
    with pytest.raises(ColorBudgetError, match=r"needs 22 colors \(shift along x by 21 \(22\)\)"
                                               r" but only 21 are routable"):
        lower_to_csl(module)


def test_wse3_queue_limit_and_run():
    t = wse_type("8", "[x], y = 0")
    h = wse_type("8", "[-], x = 3, y = 0")
    r = wse_type("8", "[-], x = *, y = 0")
    body = "\n".join(f'  %s{k + 3} = wse.shift "x" %a {{distance = {k} : i64}} : {t} -> {t}'
                     for k in (1, -1, 2, -2, 3))  # 5 channels, 14 colors
    text = f"""wse.program @main {{width = 8, height = 1}} {{
^bb0(%a: {t}, %b: {h}):
{body}
  %c = wse.broadcast "x" %b : {h} -> {r}
  wse.return %s4, %c : {t}, {r}
}}"""  # the broadcast from column 3 adds the bcast and relay channels: 7 in all
    with pytest.raises(Exception, match="WSE-3 has 6 input and 6 output queues"):
        lower_to_csl(parse_wse(text), "wse3")
    lower_to_csl(parse_wse(text), "wse2")  # WSE-2 queues are not bound to one color
    a = np.arange(8, dtype=np.float32)
    (out,), report = run_wse(parse_wse(_shift_program(8, 1)), [a], arch="wse3")
    assert report.arch == "wse3"
    np.testing.assert_array_equal(out[1:], a[:-1])
