"""Issue 16, placement of whole training steps: SRAM per PE by tensor without a run
(what ``bench/csl_train.py --plan`` prints), and the error when a plan does not fit
names the largest live tensors and separates live data from free buffers."""

from __future__ import annotations

import numpy as np
import pytest
from pyflame_mlir.lowering.wse_memory import MemoryBudgetError

import pyflame_mlir as pf
from pyflame_mlir.csl_report import sram_by_tensor
from pyflame_mlir.runtime import csl_backend


@pytest.fixture
def csl():
    prev_backend = pf.get_backend()
    prev = csl_backend.configure(mode="simulator")
    try:
        yield csl_backend
    finally:
        pf.set_backend(prev_backend)
        csl_backend.configure(**vars(prev))


def test_sram_by_tensor_of_a_planned_step(csl, tmp_path):
    """An SGD step of a Linear layer planned on 1x1 PEs (nothing simulated): the
    resident weight and bias and the batch are listed at their own sizes, and the
    rows add up to the plan's high-water mark."""
    pf.set_backend("csl")
    rng = np.random.default_rng(0)
    lin = pf.nn.Linear(12, 5)
    opt = pf.optim.SGD(lin.parameters(), lr=0.1)
    x = pf.tensor(rng.standard_normal((6, 12)).astype(np.float32))
    opt.zero_grad()
    loss = (lin(x) ** 2).mean()
    loss.backward()
    opt.step()
    _, exe = pf.export_csl(loss, tmp_path, grid=(1, 1))
    prog = exe.current.program
    rows = dict(sram_by_tensor(prog))
    assert sum(rows.values()) == prog.memory_bytes
    sizes = sorted(n for what, n in rows.items() if "(resident state)" in what)
    assert sizes == [4 * 5, 4 * 5 * 12]  # bias and weight, each in its own buffer
    assert [n for what, n in rows.items() if "[6, 12] (input)" in what] == [4 * 6 * 12]
    assert [v for v in rows.values()] == sorted(rows.values(), reverse=True)


def test_budget_error_separates_live_data_from_free_buffers(csl):
    csl.configure(grid=(1, 1))
    pf.set_backend("csl")
    x = pf.randn([128, 128])  # 64 KiB on one PE: the input alone is past the budget
    with pytest.raises(MemoryBudgetError, match=r"largest live values: !wse\.tensor<128x128xf32"
                                                 r".*\(65536 B/PE\); 65536 B/PE live, 0 B/PE "
                                                 r"in buffers free at this op\)"):
        (x * 2.0).numpy()
