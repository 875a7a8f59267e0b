"""The training-step benchmark computes the same step in every implementation
(its table is only worth reading if it does). Nothing here is timed."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).parents[2] / "bench" / "train_step.py"


@pytest.fixture(scope="module")
def train_step():
    spec = importlib.util.spec_from_file_location("bench_train_step", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_pyflame_and_torch_steps_agree_step_by_step(train_step):
    pf_step, _, pf_loss = train_step.pyflame_bench()
    torch_step, _, torch_loss = train_step.torch_bench()
    np.testing.assert_allclose(pf_loss, torch_loss, rtol=1e-5)
    losses = [(float(pf_step().item()), torch_step()) for _ in range(5)]
    for ours, theirs in losses:
        np.testing.assert_allclose(ours, theirs, rtol=1e-4)
    assert losses[-1][0] < pf_loss  # it trains


def test_jax_step_agrees_when_installed(train_step):
    res = train_step.jax_bench()
    if res is None:
        pytest.skip("jax is not installed (the bench extra)")
    _, _, jax_loss = res
    _, _, pf_loss = train_step.pyflame_bench()
    np.testing.assert_allclose(jax_loss, pf_loss, rtol=1e-4)


def test_table_reports_median_and_range_of_round_ratios(train_step):
    best = {"pyflame": {"sps": 300.0, "first": 0.2, "ratios": [1.2, 0.9, 1.5]},
            "torch": {"sps": 250.0, "first": 0.0, "ratios": [1.0, 1.0, 1.0]}}
    rows = train_step.table(best)
    assert "| pyflame (reference backend) | 300 | 1.20 (0.90–1.50) | 200 ms |" in rows
    assert "| torch eager | 250 | 1.00 | — |" in rows
    assert "| jax.jit | not installed | — | — |" in rows
