"""Issue 15: a pipelined five-point stencil in the style of the SDK's stencil
examples (test/fixtures/csl/stencil_5pt.mlir): neighbour exchange over a
checkerboard of colors, several sweeps, for WSE-2 and WSE-3, run unchanged through
its SDK-style host script (which compares with numpy bit for bit). The SDK
documents no cycle count for a program of this size, so none is compared. The
same program with every PE sending before it receives deadlocks once a column
exceeds what the queues hold, as it would on hardware."""

from __future__ import annotations

from pathlib import Path

import pytest
from _wse_harness import FIXTURES

from pyflame_mlir.runtime.wse import CycleModel, DeadlockError
from pyflame_mlir.runtime.wse.compile import compile_program
from pyflame_mlir.runtime.wse.fabric import path_room
from pyflame_mlir.runtime.wse.run_host import run_script

CASES = [("wse2", 3, 3, 12, 2), ("wse3", 3, 3, 12, 2), ("wse3", 4, 2, 5, 2)]


@pytest.mark.parametrize(("arch", "w", "h", "z", "t"), CASES)
def test_stencil_runs_unchanged(arch: str, w: int, h: int, z: int, t: int, tmp_path: Path):
    params = dict(width=w, height=h, zdim=z, iterations=t)
    out = compile_program(FIXTURES / "stencil_5pt.mlir", tmp_path / "st", params, arch)
    (r,) = run_script(FIXTURES / "stencil_5pt_run.py", ["--name", str(out)], quiet=True)
    assert r.arch == arch
    assert r.flops == 6 * z * w * h * t  # 3 adds, a multiply and a multiply-add per element
    # each sweep moves every column once over every link, both ways
    links = (w - 1) * h + (h - 1) * w
    assert r.wavelet_hops == 2 * links * z * t


def test_stencil_with_every_pe_sending_first_deadlocks(tmp_path: Path):
    """The high member of each pair sending before it receives: a send/send exchange."""
    text = (FIXTURES / "stencil_5pt.mlir").read_text()
    lines = text.splitlines()
    for i, line in enumerate(lines):  # swap the high member's receive and send
        if line.strip().startswith("scf.if %high") and "fmovs" in lines[i + 1]:
            lines[i + 1], lines[i + 2] = lines[i + 2], lines[i + 1]
    src = tmp_path / "stencil_send_first.mlir"
    src.write_text("\n".join(lines))
    z = path_room(CycleModel(), 1) + 8
    out = compile_program(src, tmp_path / "st", dict(width=2, height=1, zdim=z, iterations=1),
                          "wse3")
    with pytest.raises(DeadlockError, match=r"(?s)PE \(0, 0\).*is blocked.*sending "
                                            rf"{z} wavelets on color 0.*PE \(1, 0\).*sending "
                                            rf"{z} wavelets on color 1"):
        run_script(FIXTURES / "stencil_5pt_run.py", ["--name", str(out)], quiet=True)
