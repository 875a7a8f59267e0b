# ruff: noqa: E501  (embedded MLIR lines)
"""The SDK's game-of-life benchmark (WSE-3 form) run unchanged through its host
script, every generation against a numpy reference; and the rule it relies on: a
send through a fabout DSD is as long as its source DSDs, whatever the fabout's extent
(its forwarding task sends two wavelets through an extent-1 fabout DSD, and the
receivers count both)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from _wse_harness import D1, FIXTURES, array, dsd, make_program, run_main, simulate

from pyflame_mlir.runtime.wse.compile import compile_program
from pyflame_mlir.runtime.wse.errors import ArchRuleError, ProgramError
from pyflame_mlir.runtime.wse.run_host import run_script


@pytest.mark.parametrize(("dims", "argv"), [
    ((6, 6), ["--iters", "8"]),
    ((4, 4), ["--iters", "6", "--initial-state", "random"]),
    ((2, 2), ["--iters", "3", "--initial-state", "random"]),
])
def test_game_of_life_runs_unchanged(dims: tuple[int, int], argv: list[str], tmp_path: Path):
    out = compile_program(FIXTURES / "game_of_life_wse3.mlir", tmp_path / "gol",
                          dict(x_dim=dims[0], y_dim=dims[1]), "wse3")
    (r,) = run_script(FIXTURES / "game_of_life_run.py", ["--name", str(out), *argv], quiet=True)
    assert r.launches[0][0] == "generate" and r.flops == 0
    assert r.wavelet_hops > 0


def test_the_wse3_form_is_refused_on_wse2(tmp_path: Path):
    out = compile_program(FIXTURES / "game_of_life_wse3.mlir", tmp_path / "gol",
                          dict(x_dim=2, y_dim=2), "wse2")
    with pytest.raises(ArchRuleError, match="WSE-2 data task ids come from a color"):
        run_script(FIXTURES / "game_of_life_run.py", ["--name", str(out)], quiet=True)


# PE 0 sends its 3-element array east through an extent-1 fabout DSD; PE 1 reads 3
SEND = f"""%one = arith.constant 1 : i16
      %c = arith.constant 3 : i16
      %col = "csl.get_color"(%c) : (i16) -> !csl.color
      %zero = arith.constant 0 : i16
      %first = arith.cmpi eq, %px, %zero : i16
      scf.if %first {{
        {dsd('a', 3)}
        %o = csl_ext.get_fab_dsd %one, %col {{queue_id = 2 : i3}} : i16 -> !csl<dsd fabout_dsd>
        "csl.fmovs"(%o, %a_dsd) : (!csl<dsd fabout_dsd>, {D1}) -> ()
      }} else {{
        {dsd('b', 3)}
        %n3 = arith.constant 3 : i16
        %i = csl_ext.get_fab_dsd %n3, %col {{queue_id = 2 : i3}} : i16 -> !csl<dsd fabin_dsd>
        "csl.fmovs"(%b_dsd, %i) : ({D1}, !csl<dsd fabin_dsd>) -> ()
      }}"""
ROUTES = """%c3 = arith.constant 3 : i16
      %rc = "csl.get_color"(%c3) : (i16) -> !csl.color
      csl_ext.set_color_config %i0, %i0, %rc routes <rx = [ramp], tx = [east]> : i16, i16
      csl_ext.set_color_config %i1, %i0, %rc routes <rx = [west], tx = [ramp]> : i16, i16"""


def test_a_fabout_extent_does_not_bound_a_send_of_a_longer_source():
    a = np.array([1.5, -2.0, 3.25], np.float32)
    sim = simulate(make_program(SEND, arrays={"a": ("f32", 3), "b": ("f32", 3)},
                                layout=ROUTES, width=2))
    sim.symbol("a", 0, 0)[:] = a
    sim.launch("main")
    sim.stop()  # no wavelet left unread: all three were sent and read
    np.testing.assert_array_equal(array(sim, "b", (1, 0)), a)


def test_memory_operands_of_different_lengths_are_still_an_error():
    body = f"""{dsd('a', 3)}
      {dsd('b', 2)}
      "csl.fadds"(%a_dsd, %a_dsd, %b_dsd) : ({D1}, {D1}, {D1}) -> ()"""
    with pytest.raises(ProgramError, match="different lengths"):
        run_main(simulate(make_program(body, arrays={"a": ("f32", 3), "b": ("f32", 3)})), {})
