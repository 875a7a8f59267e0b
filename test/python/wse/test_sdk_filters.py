"""Fabric range filters (`.filter` of @set_color_config, #csl_ext.filter): the SDK
tutorial topic-08-filters runs unchanged through its host script on WSE-2 and WSE-3
(each receiver's router hands its core only the wavelets whose index field is in its
range and forwards all of them east); the printed `.filter`; without the filters the
same program fails (every receiver gets all 12 wavelets); the verifier's rules."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.utils.exceptions import VerifyException

from pyflame_mlir.runtime.wse import Simulator, parse_program
from pyflame_mlir.runtime.wse.compile import compile_program
from pyflame_mlir.runtime.wse.errors import ProgramError, RouteError
from pyflame_mlir.runtime.wse.run_host import run_script

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "csl"


@pytest.mark.parametrize("arch", ["wse2", "wse3"])
def test_filters_tutorial_runs_unchanged(arch: str, tmp_path: Path):
    out = compile_program(FIXTURES / f"filters_{arch}.mlir", tmp_path / "f", {}, arch)
    (report,) = run_script(FIXTURES / "filters_run.py", ["--name", str(out)], quiet=True)
    assert report.arch == arch
    assert report.wavelet_hops == 36  # the 12 wavelets cross each of the three links
    layout = (out / "layout.csl").read_text()
    assert ("@set_color_config(2, 0, @get_color(1), .{ .routes = .{ .rx = .{ WEST }, "
            ".tx = .{ RAMP, EAST } }, .filter = .{ .kind = .{ .range = true }, "
            ".min_idx = 6, .max_idx = 8 } });") in layout


def test_without_the_filters_every_receiver_takes_all_twelve(tmp_path: Path):
    text = (FIXTURES / "filters_wse2.mlir").read_text()
    for lo in (3, 6, 9):
        text = text.replace(f" {{filter = #csl_ext.filter<range {lo} to {lo + 2}>}}", "")
    assert "#csl_ext.filter" not in text
    sim = Simulator(parse_program(text), arch="wse2")
    # the fourth wavelet's data task stores past the 3-element result array
    with pytest.raises(ProgramError, match=r"memref.store of element \[3\] of a \[3\] array "
                                           r"\(at csl.module .recv. > csl.task @recv_task"):
        sim.launch("main_fn")


def test_a_filter_on_a_color_not_going_to_the_core_is_refused():
    text = (FIXTURES / "filters_wse2.mlir").read_text().replace(
        "routes <rx = [west], tx = [ramp, east]> {filter = #csl_ext.filter<range 3 to 5>}",
        "routes <rx = [west], tx = [east]> {filter = #csl_ext.filter<range 3 to 5>}")
    with pytest.raises(RouteError, match=r"PE \(1, 0\): color 1 has a filter but does not go "
                                         r"to the core \(RAMP\)"):
        Simulator(parse_program(text), arch="wse2")


@pytest.mark.parametrize(("attr", "msg"), [
    ("#csl_ext.filter<counter 0 to 3>", "only range filters are modeled"),
    ("#csl_ext.filter<range 5 to 3>", "the bounds are 16-bit indices, min <= max"),
    ("#csl_ext.filter<range 0 to 65536>", "the bounds are 16-bit indices"),
])
def test_filter_verifier(attr: str, msg: str):
    text = (FIXTURES / "filters_wse2.mlir").read_text().replace(
        "#csl_ext.filter<range 3 to 5>", attr)
    with pytest.raises(VerifyException, match=msg):
        parse_program(text)
