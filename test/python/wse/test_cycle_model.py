"""The cycle model table and the report built on it."""

from __future__ import annotations

from dataclasses import fields, replace

import numpy as np
import pytest
from _wse_harness import D1, dsd, make_program, run_main, simulate

from pyflame_mlir.runtime.wse import CycleModel
from pyflame_mlir.runtime.wse.machine import FIGURES


def test_every_figure_has_a_unit_and_a_source():
    names = {f.name for f in fields(CycleModel)}
    assert names == set(FIGURES)
    for name, (unit, source) in FIGURES.items():
        assert unit and source, name
    table = CycleModel().format_table()
    assert all(n in table for n in names) and "estimate" in table
    assert CycleModel().clock_ghz == 0.85 and CycleModel().clock_ghz_alt == 1.1


def _fmacs_program(n: int) -> str:
    return make_program(
        f"""{dsd("y", n)}
      {dsd("a", n)}
      %s = arith.constant 2.0 : f32
      "csl.fmacs"(%y_dsd, %y_dsd, %a_dsd, %s) : ({D1}, {D1}, {D1}, f32) -> ()""",
        arrays={"y": ("f32", n), "a": ("f32", n)},
    )


def test_dsd_cycles_scale_with_length_and_rate():
    def busy(n: int, model: CycleModel) -> float:
        sim = run_main(simulate(_fmacs_program(n), model=model), {})
        return sim.pes[(0, 0)].busy

    m = CycleModel()
    assert busy(200, m) - busy(100, m) == pytest.approx(100 / m.f32_elems_per_cycle)
    fast = replace(m, f32_elems_per_cycle=2.0)
    assert busy(200, fast) - busy(100, fast) == pytest.approx(50)


def test_f16_uses_simd_width_per_arch():
    text = make_program(
        f"""{dsd("d", 64, "f16")}
      {dsd("a", 64, "f16")}
      "csl.faddh"(%d_dsd, %a_dsd, %a_dsd) : ({D1}, {D1}, {D1}) -> ()""",
        arrays={"d": ("f16", 64), "a": ("f16", 64)},
    )
    b2 = run_main(simulate(text, arch="wse2"), {}).pes[(0, 0)].busy
    b3 = run_main(simulate(text, arch="wse3"), {}).pes[(0, 0)].busy
    assert b2 - b3 == pytest.approx(64 / 4 - 64 / 8)


def test_report_accounts_flops_busy_and_utilization():
    n = 100
    sim = run_main(simulate(_fmacs_program(n)), {"a": np.ones(n, np.float32)})
    r = sim.report()
    assert r.flops == 2 * n
    (p,) = r.pes
    assert 0 < p.busy <= r.total_cycles and r.idle(p) == r.total_cycles - p.busy
    assert r.utilization == pytest.approx(2 * n / (2 * r.total_cycles))
    assert r.seconds() == pytest.approx(r.total_cycles / 0.85e9)
    text = str(r)
    assert "utilization" in text and "0.85 GHz" in text and "1.1 GHz" in text
