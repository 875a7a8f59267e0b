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


def test_control_and_data_wavelets_on_one_color_are_refused():
    # the SDK's tutorial topic-05-sentinels sends its sentinel as a control wavelet on the
    # color its data task takes: sending it as data would hand over a wrong value, and
    # the order of control and data wavelets in the queue is not modeled
    body = """%one = arith.constant 1 : i16
      %out = "csl.get_fab_dsd"(%one) <{fabric_color = 0 : ui5, queue_id = 4 : i3, control = true}> : (i16) -> !csl<dsd fabout_dsd>
      %ws = arith.constant 2752512 : i32
      %w = "csl.mlir.signedness_cast"(%ws) : (i32) -> ui32
      "csl.mov32"(%out, %w) : (!csl<dsd fabout_dsd>, ui32) -> ()"""
    extra = """
    csl.task @on_data(%x: i32) attributes {kind = #csl<task_kind data>, id = 0 : ui5} {
      csl.return
    }
    csl.task @sentinel(%x: ui16) attributes {kind = #csl<task_kind control>, id = 42 : ui6} {
      csl.return
    }"""
    layout = """
      %c0 = arith.constant 0 : i16
      %col = "csl.get_color"(%c0) : (i16) -> !csl.color
      csl_ext.set_color_config %c0, %c0, %col routes <rx = [ramp], tx = [ramp]> : i16, i16"""
    sim = simulate(make_program(body, layout=layout, extra=extra))
    with pytest.raises(UnsupportedError, match=r"mixing control and data wavelets on one color is not modeled"):
        sim.launch("main")
