"""Issue 15: the SDK's tutorial topic 11 (<collectives_2d>: broadcast and
reduce_fadds along rows, scatter and gather along columns) transcribed in
test/fixtures/csl/collectives_2d.mlir, run unchanged through its SDK-style host
script for WSE-2 and WSE-3; the library model's resources are checked against the
arch and the program. The tutorial documents no cycle counts, so none is compared."""

from __future__ import annotations

from pathlib import Path

import pytest
from _wse_harness import FIXTURES

from pyflame_mlir.runtime.wse import DeadlockError
from pyflame_mlir.runtime.wse.compile import compile_program
from pyflame_mlir.runtime.wse.errors import ArchRuleError, ProgramError, RouteError
from pyflame_mlir.runtime.wse.run_host import run_script

SCRIPT = FIXTURES / "collectives_2d_run.py"


def _run(tmp_path: Path, arch: str, text: str | None = None, **params):
    src = FIXTURES / "collectives_2d.mlir"
    if text is not None:
        src = tmp_path / "variant.mlir"
        src.write_text(text)
    out = compile_program(src, tmp_path / "out", params, arch)
    return run_script(SCRIPT, ["--name", str(out)], quiet=True)


@pytest.mark.parametrize(("arch", "pw", "ph", "chunk"),
                         [("wse2", 4, 3, 3), ("wse3", 4, 3, 3), ("wse3", 2, 5, 1)])
def test_collectives_tutorial_runs_unchanged(arch, pw, ph, chunk, tmp_path: Path):
    (r,) = _run(tmp_path, arch, Pw=pw, Ph=ph, chunk_size=chunk)
    assert r.arch == arch
    nx, ny = pw * chunk, ph * chunk
    assert r.flops == ph * nx * (pw - 1)  # the reduction: Pw - 1 adds per element per row
    # broadcast and reduce: nx words over pw - 1 links per row; scatter and gather:
    # chunk words from/to each PE of a column over its distance to the root
    assert r.wavelet_hops == 2 * ph * nx * (pw - 1) + 2 * pw * chunk * sum(range(ph))
    assert ny == ph * chunk


def _variant(old: str, new: str) -> str:
    text = (FIXTURES / "collectives_2d.mlir").read_text()
    assert old in text
    return text.replace(old, new)


def test_library_queue_that_wse2_lacks_is_rejected(tmp_path: Path):
    text = _variant("%q4 = arith.constant 4 : i16", "%q4 = arith.constant 6 : i16")
    with pytest.raises(ArchRuleError, match=r"<collectives_2d/pe> \(x dim\) uses output queue 6, "
                                            "which WSE-2 does not have"):
        _run(tmp_path, "wse2", text, Pw=2, Ph=2, chunk_size=1)
    (r,) = _run(tmp_path, "wse3", text, Pw=2, Ph=2, chunk_size=1)  # WSE-3 has queue 6
    assert r.arch == "wse3"


def test_library_color_routed_by_the_layout_is_rejected(tmp_path: Path):
    text = _variant('      "csl.set_rectangle"(%Pw, %Ph) : (i16, i16) -> ()',
                    '      "csl.set_rectangle"(%Pw, %Ph) : (i16, i16) -> ()\n'
                    '      csl_ext.set_color_config %i0, %i0, %y_color_1 routes '
                    '<rx = [ramp], tx = [east]> : i16, i16')
    with pytest.raises(RouteError, match=r"PE \(0, 0\): color 5 belongs to <collectives_2d/pe> "
                                         r"\(y dim\), but the layout routes it"):
        _run(tmp_path, "wse3", text, Pw=2, Ph=2, chunk_size=1)


def test_program_task_on_a_library_entrypoint_is_rejected(tmp_path: Path):
    text = _variant("%task_y_state = ", "%dummy_state = ").replace(
        "csl.task @task_y() attributes {kind = #csl<task_kind local>, id = 16 : ui5}",
        "csl.task @task_y() attributes {kind = #csl<task_kind local>, id = 12 : ui5}").replace(
        "%task_y_state", "%dummy_state").replace("csl.activate local, 16", "csl.activate local, 12")
    with pytest.raises(ProgramError, match="local task id 12 is an entrypoint of "
                                           r"<collectives_2d/pe> \(y dim\)"):
        _run(tmp_path, "wse3", text, Pw=2, Ph=2, chunk_size=1)


def test_a_collective_only_some_pes_call_is_a_deadlock(tmp_path: Path):
    """Only the row's first PE broadcasts: the others never join."""
    text = _variant(
        '"csl.member_call"(%mpi_x, %zero, %ptr_broadcast_recv, %Nx, %task_x_id) '
        '<{field = "broadcast"}>', '"csl.member_call"(%sys_mod) <{field = "unblock_cmd_stream"}>')
    text = text.replace("(%sys_mod) <{field = \"unblock_cmd_stream\"}> : (!csl.imported_module, "
                        "i16, !csl.ptr<i32, #csl<ptr_kind many>, #csl<ptr_const var>>, i16, i16)",
                        "(%sys_mod) <{field = \"unblock_cmd_stream\"}> : (!csl.imported_module)")
    with pytest.raises(DeadlockError, match=r"PE \(0, 0\).*<collectives_2d/pe>.broadcast\(\) "
                                            "along row 0 waits for the other PEs"):
        _run(tmp_path, "wse3", text, Pw=2, Ph=1, chunk_size=1)
