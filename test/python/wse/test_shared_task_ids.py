# ruff: noqa: E501  (embedded MLIR lines)
"""Local, data and control tasks share one task table (the SDK's task-id documentation:
a WSE-2 data task on color 12 has task id 12; WSE-3's local ids start at 8 because
its data task ids are the input queues 0-7). Binding a local task to the id a data
task holds is what cslc rejects; the simulator ran both."""

from __future__ import annotations

import pytest
from _wse_harness import make_program, run_main, simulate

from pyflame_mlir.runtime.wse.errors import ArchRuleError

LOCAL = """
    csl.task @work() attributes {kind = #csl<task_kind local>, id = ID : ui5} {
      csl.return
    }"""
DATA_WSE2 = """
    csl.task @recv(%v: f32) attributes {kind = #csl<task_kind data>, id = ID : ui5} {
      csl.return
    }"""
DATA_WSE3 = """
    %c5 = arith.constant 5 : i16
    %col = "csl.get_color"(%c5) : (i16) -> !csl.color
    csl_ext.initialize_queue %col {queue_id = ID : i3}
    csl.task @recv(%v: f32) attributes {kind = #csl<task_kind data>} {
      csl.return
    }
    csl_ext.bind_data_task @recv {queue_id = ID : i3}"""


def _run(extra: str, arch: str) -> None:
    run_main(simulate(make_program("", extra=extra), arch=arch), {})


@pytest.mark.parametrize("first", ["local", "data"])
def test_a_local_task_on_a_wse2_data_tasks_color_is_refused(first: str):
    local, data = LOCAL.replace("ID", "12"), DATA_WSE2.replace("ID", "12")
    extra = local + data if first == "local" else data + local
    with pytest.raises(ArchRuleError, match="task id 12, already bound to task '(recv|work)' "
                                            r"\((data|local) 12\): local, data and control"):
        _run(extra, "wse2")


def test_distinct_ids_share_the_table_peacefully():
    _run(LOCAL.replace("ID", "12") + DATA_WSE2.replace("ID", "13"), "wse2")
    _run(LOCAL.replace("ID", "8") + DATA_WSE3.replace("ID", "2"), "wse3")
