# ruff: noqa: E501  (embedded MLIR lines)
"""What xDSL 0.74's csl dialect can spell but the simulator does not model is refused
before anything runs, naming it, never run as something else (a control wavelet sent
as data would reach the receiver as a wrong value)."""

from __future__ import annotations

import pytest
from _wse_harness import make_program, simulate

from pyflame_mlir.runtime.wse import UnsupportedError


@pytest.mark.parametrize(("flag", "what"), [
    ("control", r"control wavelets \(\.control = true\)"),
    ("wavelet_index_offset", r"wavelet-indexed stores"),
])
def test_fabout_dsd_options_the_simulator_does_not_model_are_refused(flag: str, what: str):
    # the SDK's tutorial topic-05-sentinels sends its sentinel through such a DSD
    body = f"""%one = arith.constant 1 : i16
      %out = "csl.get_fab_dsd"(%one) <{{fabric_color = 0 : ui5, queue_id = 4 : i3, {flag} = true}}> : (i16) -> !csl<dsd fabout_dsd>"""
    with pytest.raises(UnsupportedError, match=rf"does not model {what}.*\(at .*csl.func @main"):
        simulate(make_program(body))
