"""The WSE target description is the one source of the CSL path's tables, and the
layers of the CSL path import only downward."""

from __future__ import annotations

import subprocess
import sys

import pytest
from pyflame_mlir.dialects import wse
from pyflame_mlir.dialects.wse_target import ARCH, DSD_FORMS, WSE_FNS, CycleModel, MapFn
from pyflame_mlir.lowering import wse_cost
from pyflame_mlir.lowering.pyflame_to_wse.support import ELEMENTWISE
from pyflame_mlir.lowering.wse_memory import default_budget
from pyflame_mlir.lowering.wse_to_csl.builder import _BUILTIN

from pyflame_mlir.runtime.wse import machine


def test_tables_come_from_the_records():
    assert wse.MAP_FNS == {f.name: f.arity for f in WSE_FNS.values()}
    assert wse.MASK_FNS == {f.name for f in WSE_FNS.values() if f.mask}
    assert wse_cost.DSD_FNS == {f.name for f in WSE_FNS.values() if f.dsd}
    assert wse_cost.MATH_FNS == {f.name for f in WSE_FNS.values() if f.math and not f.dsd}
    assert set(ELEMENTWISE.values()) <= set(WSE_FNS)
    assert ELEMENTWISE["logical_and"] == "and" and "copy" not in ELEMENTWISE
    assert {f.dsd for f in WSE_FNS.values() if f.dsd} <= set(_BUILTIN)
    assert default_budget() == CycleModel().sram_bytes - CycleModel().sram_reserve_bytes


def test_dsd_forms_are_checked():
    assert {f.form for f in WSE_FNS.values() if f.dsd} <= set(DSD_FORMS)
    with pytest.raises(ValueError, match="form 'unry' is not one of"):
        MapFn("copy2", 1, dsd="fmovs", form="unry")


def test_arch_rules():
    for rules in ARCH.values():
        assert not set(rules.routable_colors) & rules.reserved_ids
        assert len(rules.routable_colors) == 21
        assert not set(rules.local_task_ids) & rules.reserved_ids
    assert ARCH["wse3"].queue_per_color and not ARCH["wse2"].queue_per_color
    # the simulator reads the same facts
    assert machine.CycleModel is CycleModel and machine.ARCHS == tuple(ARCH)


def _imported_after(module: str) -> set[str]:
    code = (f"import sys, {module}\n"
            "print('\\n'.join(m for m in sys.modules if m.startswith('pyflame_mlir')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    return set(out.split())


def test_layers_import_downward():
    lowering = _imported_after("pyflame_mlir.lowering.to_csl") | _imported_after(
        "pyflame_mlir.lowering.to_wse")
    assert not {m for m in lowering if m.startswith("pyflame_mlir.passes")}
    passes = _imported_after("pyflame_mlir.passes.convert_wse_to_csl") | _imported_after(
        "pyflame_mlir.passes.wse_layout") | _imported_after("pyflame_mlir.passes.wse_memory")
    assert not {m for m in passes if m.startswith("pyflame_mlir.runtime")}
    assert "pyflame_mlir.dialects.wse_target" in passes
