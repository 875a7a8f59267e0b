# ruff: noqa: E501  (embedded MLIR lines)
"""The per-architecture rules ``cslc`` enforces (CSL_NOTES.md; the table is
``dialects/wse_target.py: ARCH``), checked by the simulator on every program,
whoever wrote it: task id ranges, queues that exist and queues memcpy owns, one
color per queue, route shapes, DSD field types."""

from __future__ import annotations

import pytest
from _wse_harness import make_program, run_main, simulate
from pyflame_mlir.dialects.wse_target import ARCH

from pyflame_mlir.runtime.wse import ReservedIdError
from pyflame_mlir.runtime.wse.errors import ArchRuleError


def _fab(kind: str, queue: int, color: int = 3) -> str:
    return (f'%n = arith.constant 4 : i16\n      %d = "csl.get_fab_dsd"(%n) '
            f"<{{fabric_color = {color} : ui5, queue_id = {queue} : i3}}> : (i16) -> !csl<dsd {kind}>")


def _task(id: int) -> str:
    return f"""
    csl.task @t() attributes {{kind = #csl<task_kind local>, id = {id} : ui5}} {{
      csl.return
    }}"""


def test_the_table_matches_the_notes():
    w2, w3 = ARCH["wse2"], ARCH["wse3"]
    assert w2.local_task_ids[0] == 0 and w3.local_task_ids[0] == 8
    assert max(w2.local_task_ids) == max(w3.local_task_ids) == 26  # 27-31: the runtime's
    assert 6 not in w2.output_queues and 7 not in w2.output_queues
    assert 6 in w2.input_queues and 7 in w3.output_queues
    assert w2.user_queues == (1, 2, 3, 4, 5) and w3.user_queues == (2, 3, 4, 5, 6, 7)
    assert w3.max_rx_per_color == 1 and w2.max_rx_per_color is None
    assert w3.data_task_from == "input_queue" and w2.data_task_from == "color"


@pytest.mark.parametrize("id", [0, 3, 7])
def test_wse3_local_task_ids_start_at_8(id: int):
    text = make_program("", extra=_task(id))
    simulate(text, arch="wse2")  # legal there
    with pytest.raises(ArchRuleError, match=f"local task id {id}; WSE-3 local task ids are 8-30"):
        simulate(text, arch="wse3")


@pytest.mark.parametrize("queue", [6, 7])
def test_wse2_has_no_output_queues_6_and_7(queue: int):
    run_main(simulate(make_program(_fab("fabin_dsd", queue)), arch="wse2"), {})  # input: exists
    run_main(simulate(make_program(_fab("fabout_dsd", queue)), arch="wse3"), {})
    with pytest.raises(ArchRuleError, match=f"output queue {queue}, which WSE-2 does not have"):
        run_main(simulate(make_program(_fab("fabout_dsd", queue)), arch="wse2"), {})


@pytest.mark.parametrize("arch", ["wse2", "wse3"])
def test_memcpy_queue_0_is_reserved_on_both_archs(arch: str):
    with pytest.raises(ReservedIdError, match="queue 0, reserved for memcpy"):
        run_main(simulate(make_program(_fab("fabin_dsd", 0)), arch=arch), {})


def test_wse2_output_queue_0_may_be_shared_with_memcpy():
    """The SDK's 25-pt-stencil sends on output queue 0 on WSE-2 ("multiple colors can
    share the same output_queue", its task.csl); WSE-3's memcpy queues stay reserved."""
    run_main(simulate(make_program(_fab("fabout_dsd", 0)), arch="wse2"), {})
    with pytest.raises(ReservedIdError, match="output queue 0, reserved for memcpy on WSE-3"):
        run_main(simulate(make_program(_fab("fabout_dsd", 0)), arch="wse3"), {})


def test_a_queue_bound_to_two_colors_is_rejected():
    extra = """
    %c3i = arith.constant 3 : i16
    %c3 = "csl.get_color"(%c3i) : (i16) -> !csl.color
    %c4i = arith.constant 4 : i16
    %c4 = "csl.get_color"(%c4i) : (i16) -> !csl.color
    csl_ext.initialize_queue %c3 {queue_id = 2 : i3}
    csl_ext.initialize_queue %c4 {queue_id = 2 : i3}"""
    with pytest.raises(ArchRuleError, match="queue 2 to color 4, but it is already bound to color 3"):
        run_main(simulate(make_program("", extra=extra), arch="wse3"), {})


def _relay_routes() -> str:
    return """
      %c5i = arith.constant 5 : i16
      %c5 = "csl.get_color"(%c5i) : (i16) -> !csl.color
      csl_ext.set_color_config %i0, %i0, %c5 routes <rx = [east], tx = [ramp]> : i16, i16
      csl_ext.set_color_config %i1, %i0, %c5 routes <rx = [ramp, east], tx = [west]> : i16, i16
      %x2 = arith.constant 2 : i16
      csl_ext.set_color_config %x2, %i0, %c5 routes <rx = [ramp], tx = [west]> : i16, i16"""


def test_wse3_routes_take_one_input_direction_per_color():
    text = make_program("", layout=_relay_routes(), width=3)
    simulate(text, arch="wse2")
    with pytest.raises(ArchRuleError, match=r"PE \(1, 0\) routes color 5 with rx=\{east, ramp\}.*"
                                            r"WSE-3 accepts at most 1 input direction"):
        simulate(text, arch="wse3")
