"""Issue 17: the bytes each collective of a partitioned training step moves,
reported by ``pf.compile_graph`` (``CompileReport.collectives``), against
counts by hand (ring algorithms: an all-reduce sends 2 (n - 1) / n of its
operand per device, an all-gather (n - 1) times it, a reduce-scatter
(n - 1) / n; totals are summed over every device of the mesh).

Lazy-only (the ``lazy`` fixture, every test): compile_graph reports on a
recorded graph, and eager mode runs each step as it is recorded."""

from __future__ import annotations

import numpy as np
import pytest

import pyflame_mlir as pf
from pyflame_mlir import P

pytestmark = pytest.mark.usefixtures("lazy")


def _mlp_step(shape, names, sx, s1, s2):
    rng = np.random.default_rng(0)
    mesh = pf.DeviceMesh(shape, names)
    x, y = pf.tensor(rng.standard_normal((8, 6))), pf.tensor(rng.standard_normal((8, 3)))
    params = [pf.shard(pf.tensor(rng.standard_normal((6, 4))).requires_grad_(), mesh, s1),
              pf.shard(pf.tensor(rng.standard_normal((4, 3))).requires_grad_(), mesh, s2)]
    fn = pf.sharding.partition(lambda a, b, w1, w2: ((pf.relu(a @ w1) @ w2 - b) ** 2).mean())
    loss = fn(pf.shard(x, mesh, sx), pf.shard(y, mesh, sx), *params)
    forward_only = pf.compile_graph([loss])
    loss.backward()
    step = pf.compile_graph([loss] + [p.grad for p in params])
    return forward_only, step, fn.last


def _by_phase(report) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in report.collectives:
        out[c.phase] = out.get(c.phase, 0) + c.total_bytes
    return out


def test_megatron_mlp_step_bytes_by_hand():
    fwd, step, last = _mlp_step((2,), ("m",), P(), P(None, "m"), P("m"))
    # forward: one all-reduce of the (8, 3) f64 partial sums (192 B) over 2
    # devices: each sends 2 * 1/2 * 192 = 192, both 384; backward: its transpose,
    # the all-reduce of the (8, 3) cotangent, 384 again; the weights are split
    # over the whole mesh: no gradient all-reduce
    assert [(c.name, c.phase, c.total_bytes) for c in fwd.collectives] == \
        [("all_reduce", "forward", 384)]
    assert _by_phase(step) == {"forward": 384, "backward": 384}
    assert step.collective_bytes == 768 == sum(c.total_bytes for c in last.step)


def test_mixed_parallel_mlp_step_bytes_by_hand():
    fwd, step, _ = _mlp_step((2, 2), ("d", "m"), P("d"), P(None, "m"), P("m"))
    # forward: the (4, 3) f64 partial sums (96 B) all-reduced over "m" in each of
    # the 2 "d" groups: 4 devices x 96 = 384; the loss's partial mean (8 B) over
    # "d": 4 x 8 = 32. Backward: the same two, transposed.
    assert _by_phase(fwd) == {"forward": 384 + 32}
    # gradients: w1's local (6, 2) block (96 B) and w2's (2, 3) (48 B) are
    # replicated over "d": all-reduced over 2 devices, 4 x 96 and 4 x 48
    assert _by_phase(step) == {"forward": 416, "backward": 416, "gradient": 384 + 192}
    assert step.collective_bytes == 1408
    grads = [c for c in step.collectives if c.phase == "gradient"]
    assert [(c.name, c.axes, c.group_size, c.bytes_per_device) for c in grads] == \
        [("all_reduce", ("d",), 2, 96), ("all_reduce", ("d",), 2, 48)]


def test_unsharded_graph_reports_no_collectives():
    a = pf.tensor(np.ones((2, 2)))
    assert pf.compile_graph([a @ a]).collectives == ()
