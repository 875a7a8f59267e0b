# ruff: noqa: E501  (embedded MLIR lines)
"""What xDSL 0.74's csl dialect can spell but the simulator does not model is refused,
naming it, never run as something else (a control wavelet sent as data would reach
the receiver as a wrong value)."""

from __future__ import annotations

import pytest
from _wse_harness import make_program, simulate

from pyflame_mlir.runtime.wse import UnsupportedError


def test_wavelet_indexed_stores_are_refused():
    body = """%one = arith.constant 1 : i16
      %out = "csl.get_fab_dsd"(%one) <{fabric_color = 0 : ui5, queue_id = 4 : i3, wavelet_index_offset = true}> : (i16) -> !csl<dsd fabout_dsd>"""
    with pytest.raises(UnsupportedError, match=r"does not model wavelet-indexed stores.*\(at .*csl.func @main"):
        simulate(make_program(body))


def test_a_control_wavelet_for_a_core_is_refused():
    # the SDK's tutorial topic-05-sentinels sends its sentinel as a control wavelet to the
    # receiver's core (a control task): sending it as data would hand over a wrong value
    body = """%one = arith.constant 1 : i16
      %out = "csl.get_fab_dsd"(%one) <{fabric_color = 0 : ui5, queue_id = 4 : i3, control = true}> : (i16) -> !csl<dsd fabout_dsd>
      %ws = arith.constant 7 : i32
      %w = "csl.mlir.signedness_cast"(%ws) : (i32) -> ui32
      "csl.mov32"(%out, %w) : (!csl<dsd fabout_dsd>, ui32) -> ()"""
    layout = """
      %c0 = arith.constant 0 : i16
      %col = "csl.get_color"(%c0) : (i16) -> !csl.color
      csl_ext.set_color_config %c0, %c0, %col routes <rx = [ramp], tx = [ramp]> : i16, i16"""
    sim = simulate(make_program(body, layout=layout))
    with pytest.raises(UnsupportedError, match=r"reaches the core of PE \(0, 0\).*control tasks are not modeled"):
        sim.launch("main")
