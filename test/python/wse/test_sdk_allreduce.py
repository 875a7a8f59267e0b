"""The SDK's allreduce library (benchmark-libs/allreduce, used by power-method,
conjugateGradient and BiCGStab), transcribed with a driver (test/fixtures/csl/
allreduce.mlir): its host script checks allreduce(ADD), allreduce(MAX) and nrm2 on every
PE against numpy on WSE-2 and WSE-3 and several rectangles, nrm2 also at magnitudes
whose squares overflow or underflow f32 (the library's scaling by a power of two);
the printed CSL; and what breaks when a piece of its protocol is missing (the switch
position that lets a PE's data on, the end of the teardown, ring mode, the teardown
handler)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pyflame_mlir.runtime.wse import parse_program
from pyflame_mlir.runtime.wse.compile import compile_program
from pyflame_mlir.runtime.wse.errors import (
    DeadlockError,
    ProgramError,
    UnsupportedError,
)
from pyflame_mlir.runtime.wse.run_host import run_script
from pyflame_mlir.runtime.wse.simulator import Simulator

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "csl"
SOURCE = (FIXTURES / "allreduce.mlir").read_text()


@pytest.mark.parametrize(("arch", "w", "h", "n", "scale"), [
    ("wse2", 2, 2, 4, 1.0),
    ("wse3", 2, 2, 4, 1.0),
    ("wse2", 4, 3, 3, 1.0),
    ("wse3", 3, 4, 1, 1e30),   # nrm2: the squares would overflow f32
    ("wse2", 3, 2, 2, 1e-30),  # and underflow
])
def test_allreduce_library_runs_unchanged(arch: str, w: int, h: int, n: int, scale: float,
                                          tmp_path: Path):
    out = compile_program(FIXTURES / "allreduce.mlir", tmp_path / "ar",
                          {"width": w, "height": h, "MAX_N": n}, arch)
    reports = run_script(FIXTURES / "allreduce_run.py",
                         ["--name", str(out), "--scale", str(scale)], quiet=True)
    (report,) = reports
    assert report.arch == arch
    if (w, h, n) == (2, 2, 4):
        # allreduce of n words: each row's first PE sends n data words, switch_cmd_11
        # and the teardown one hop (2 rows), so does each column's (2 columns: every
        # column reduces, only the east one's sum is used), the broadcast tree carries
        # n words and the teardown over 3 links: 2(n+2) + 2(n+2) + 3(n+1) = 39 for n = 4;
        # ADD and MAX once each, nrm2 twice with n = 1 (18 each)
        assert report.wavelet_hops == 2 * 39 + 2 * 18
    launches = dict(report.launches)
    assert set(launches) == {"f_allreduce_add", "f_allreduce_max", "f_nrm2"}
    # nrm2 is two allreduces and some scalar work: about twice one allreduce
    assert 1.5 < launches["f_nrm2"] / launches["f_allreduce_max"] < 3
    assert 0 < report.total_cycles < 20_000


def _run(text: str, w: int = 3, h: int = 2, n: int = 2) -> np.ndarray:
    sim = Simulator(parse_program(text), {"width": w, "height": h, "MAX_N": n})
    for y in range(h):
        for x in range(w):
            sim.symbol("x", x, y)[:] = x + 10 * y + 1
    sim.launch("f_allreduce_add", [n])
    sim.stop()
    return np.array([[sim.symbol("x", x, y) for x in range(w)] for y in range(h)])


def test_a_row_reduction_then_a_column_reduction_then_the_broadcast():
    np.testing.assert_array_equal(_run(SOURCE), np.full((2, 3, 2), 42.0))


@pytest.mark.parametrize(("old", "new", "error", "match"), [
    # without position 1 (rx RAMP) a middle PE's data never gets onto the line
    ('csl_ext.tile_config "set_rx_switch_pos1" %tile_config, %C_ROUTE {port = "ramp"}', "",
     DeadlockError, r"wavelets on color 0 wait at the router of PE \(1, [01]\): .* do not "
                    "take them from RAMP"),
    # a router left torn down holds the row's data for ever
    ('csl_ext.tile_config "teardown_exit" %tile_config, %C_ROUTE\n      csl.return\n    }\n\n'
     '    csl.func @colReduce', 'csl.return\n    }\n\n    csl.func @colReduce',
     DeadlockError, "never unblock the command stream"),
    ("ring_mode, pop = pop_on_advance", "pop = pop_on_advance",
     UnsupportedError, "past its last position \\(1\\) without .ring_mode"),
    ("csl_ext.set_teardown_handler @teardown_allreduce, %C_ROUTE", "",
     ProgramError, "a teardown command on color 0 reaches this router, but no "
                   "@set_teardown_handler names the color"),
])
def test_each_piece_of_the_protocol_is_needed(old: str, new: str, error: type, match: str):
    assert old in SOURCE
    with pytest.raises(error, match=match):
        _run(SOURCE.replace(old, new))


def test_allreduce_prints_as_csl(tmp_path: Path):
    out = compile_program(FIXTURES / "allreduce.mlir", tmp_path / "ar",
                          {"width": 2, "height": 2, "MAX_N": 1}, "wse2")
    pe = (out / "allreduce_pe.csl").read_text()
    layout = (out / "layout.csl").read_text()
    assert (".switches = .{ .pos1 = .{ .rx = RAMP }, .current_switch_pos = 0, "
            ".ring_mode = true, .pop_mode = .{ .pop_on_advance = true } }, "
            ".teardown = true });") in layout
    for line in [
        'const switches : imported_module = @import_module("<memcpy/memcpy_switches>");',
        "const ctrl_11_word : u32 = switches.ctrl(cmd_adv_adv);",
        "@set_teardown_handler(teardown_allreduce, C_ROUTE);",
        "tile_config.color_config.reset_routes(tile_config.color_config."
        "get_color_config_addr(C_ROUTE), .{ .tx = [3]direction{WEST, RAMP, NORTH}, "
        ".rx = SOUTH });",
        "tile_config.switch_config.clear_current_position(C_ROUTE);",
        "tile_config.switch_config.set_invalid_for_all_switch_positions(C_ROUTE);",
        "tile_config.switch_config.set_rx_switch_pos1(C_ROUTE, RAMP);",
        "tile_config.teardown.exit(C_ROUTE);",
        "@fmaxs(dest_dsr, src0_dsr, src1_dsr, .{ .async = true });",
    ]:
        assert line in pe, line
    # the input queue is set up on both archs, the output queue on WSE-3 only
    assert "comptime {\n  @initialize_queue(@get_input_queue(2), .{ .color = C_ROUTE });" in pe
    assert ('if (@is_arch("wse3")) {\n    @initialize_queue(@get_output_queue(2), '
            ".{ .color = C_ROUTE });") in pe
