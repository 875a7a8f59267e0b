"""core.record's hot path (a memo hit builds the node inline) against its slow
path, and the process-wide counts that let it skip the thread-local reads
(grad mode, graph scopes): the flags must stay exact per thread."""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest
import torch

import pyflame_mlir as pf
from pyflame_mlir import core


@pytest.fixture(autouse=True)
def lazy_mode(monkeypatch):
    """These tests look at recorded nodes: lazy mode also under PYFLAME_EAGER=1
    (eager mode runs the same record, then realizes)."""
    monkeypatch.setattr(core.CONFIG, "eager", False)


_FIELDS = ("op", "attrs", "specs", "nograd", "rg", "freed", "keep", "_sig_id")


def _node_fields(t: pf.Tensor) -> tuple:
    n = t._node
    return tuple(getattr(n, f) for f in _FIELDS) + (len(n.cells), n.seq > 0)


@pytest.mark.parametrize("make", [
    lambda a, b: a * b, lambda a, b: a.tanh(), lambda a, b: a.sum(dim=1, keepdim=True),
    lambda a, b: pf.cat([a, b, a], dim=0), lambda a, b: a.reshape(2, 8),
])
def test_a_memo_hit_makes_the_node_the_slow_path_makes(make):
    a, b = pf.randn(4, 4), pf.randn(4, 4)
    for op in {n.op for n in [make(a, b)._node]}:
        op.memo.clear()
    first = make(a, b)  # miss: the shape rule, OpNode.__init__
    second = make(a, b)  # hit: inlined
    assert _node_fields(first) == _node_fields(second)
    assert (first.shape, first.dtype) == (second.shape, second.dtype)
    assert second._node.seq > first._node.seq  # creation order still topological
    np.testing.assert_array_equal(first.numpy(), second.numpy())


def test_a_memo_hit_with_several_results_returns_a_list():
    x = pf.randn(6, 2)
    first = pf.split(x, 2)
    second = pf.split(x, 2)
    assert isinstance(second, list | tuple) and len(second) == 3
    assert [t.shape for t in first] == [t.shape for t in second] == [(2, 2)] * 3
    for p, q in zip(first, second):
        np.testing.assert_array_equal(p.numpy(), q.numpy())


def test_hits_keep_requires_grad_and_no_grad_exact():
    w = pf.tensor([1.0, -2.0, 3.0], requires_grad=True)
    x = pf.tensor([0.5, 0.25, 2.0])
    for _ in range(2):  # miss, then hit
        y = w * x
        assert y.requires_grad and not y._node.nograd
        z = x * x
        assert not z.requires_grad
        with pf.no_grad():
            u = w * x
        assert not u.requires_grad and u._node.nograd
        k = (w > 0)  # an integer/bool result never requires grad
        assert not k.requires_grad
    (w * x).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), x.numpy())


def test_grad_mode_of_one_thread_does_not_leak_into_another():
    w = pf.tensor([1.0, 2.0], requires_grad=True)
    inside, release = threading.Event(), threading.Event()
    seen: dict[str, bool] = {}

    def worker() -> None:
        with pf.no_grad():
            seen["worker"] = (w * 2.0).requires_grad
            inside.set()
            release.wait(10)
            seen["worker_late"] = (w * 3.0).requires_grad
        seen["worker_after"] = (w * 4.0).requires_grad

    th = threading.Thread(target=worker)
    th.start()
    assert inside.wait(10)
    assert core._GRAD_OFF[0] >= 1  # the other thread disabled grad...
    assert (w * 5.0).requires_grad  # ...this one still records with grad
    with pf.no_grad():
        assert not (w * 6.0).requires_grad
    release.set()
    th.join(10)
    assert seen == {"worker": False, "worker_late": False, "worker_after": True}
    assert (w * 7.0).requires_grad


def test_a_thread_that_ends_with_grad_disabled_changes_no_other_thread():
    def worker() -> None:
        pf.set_grad_enabled(False)  # never restored: the thread ends so

    th = threading.Thread(target=worker)
    th.start()
    th.join(10)
    w = pf.tensor([1.0], requires_grad=True)
    assert (w * 2.0).requires_grad
    with pf.no_grad():
        assert not (w * 2.0).requires_grad
    assert (w * 2.0).requires_grad


def test_graph_scope_counts_per_thread_while_another_records():
    x = pf.randn(3)
    inside, release = threading.Event(), threading.Event()
    box: dict[str, object] = {}

    def worker() -> None:
        with pf.graph_scope("worker") as g:
            x + x  # (tensor operands: no shared scalar constant recorded once)
            x * x
            inside.set()
            release.wait(10)
            x - x
        box["g"] = g

    default = core.GRAPH
    before = default.ops_recorded
    th = threading.Thread(target=worker)
    th.start()
    assert inside.wait(10)
    x * x  # this thread records into the default graph meanwhile
    mid = default.ops_recorded
    release.set()
    th.join(10)
    x * x
    assert mid - before == 1
    assert default.ops_recorded - before == 2
    assert box["g"].ops_recorded == 3
    assert core._SCOPES[0] == 0


def test_anomaly_stacks_end_at_the_users_line_on_hit_and_miss():
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    with pf.autograd.detect_anomaly():
        lines = []
        for _ in range(2):  # the memo misses, then hits: the same stack
            y = x * x  # the recording line
            lines.append(y._node.trace[-1].line)
    assert lines == ["y = x * x  # the recording line"] * 2


def test_hot_path_values_against_torch():
    r = np.random.default_rng(0)
    a, b = r.standard_normal((4, 4)).astype(np.float32), r.standard_normal((4, 4)).astype(
        np.float32)
    pa, pb, ta, tb = pf.tensor(a), pf.tensor(b), torch.tensor(a), torch.tensor(b)
    for _ in range(3):
        h, th = pa, ta
        for _ in range(5):
            h, th = (h * pb + pa).relu() - pb, (th * tb + ta).relu() - tb
            h, th = h.tanh(), th.tanh()
        np.testing.assert_allclose(h.numpy(), th.numpy(), rtol=1e-5, atol=1e-6)


def test_threads_evaluating_shared_subgraphs_get_their_own_numbering():
    """collect numbers nodes in a slot of the node: threads evaluating graphs
    that share nodes (at different positions in each) must each get their own
    exact wiring (against numpy)."""
    xv = np.arange(16, dtype=np.float32).reshape(4, 4) / 16
    x = pf.tensor(xv)
    pres = []  # per thread, nodes recorded before the shared ones: the shared
    for k in range(4):  # ones sit at another position in each thread's graph
        p = x
        for _ in range(5 * k + 1):
            p = p * x
        pres.append(p)
    shared = (x * x + x).tanh()  # lazy, read by every thread's graph
    s = np.tanh(xv * xv + xv)
    errors: list[BaseException] = []

    def worker(k: int) -> None:
        try:
            pre = xv ** (5 * k + 2)
            for _ in range(40):
                h = pres[k] * shared
                for _ in range(k + 1):
                    h = h - shared
                got = h.numpy()  # (pres and shared stay lazy: each graph computes them)
                np.testing.assert_allclose(got, pre * s - (k + 1) * s, rtol=1e-4, atol=1e-5)
        except BaseException as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch inside collect's walks
    try:
        for th in threads:
            th.start()
        for th in threads:
            th.join(60)
    finally:
        sys.setswitchinterval(interval)
    assert not errors, errors[0]
    assert core._COLLECTING[0] == 0


def test_collect_is_the_same_after_an_in_place_update():
    """The numbered walk with in-place updates (older states, pending): values
    against torch's."""
    r = np.random.default_rng(1)
    a = r.standard_normal((3, 3)).astype(np.float32)
    p, t = pf.tensor(a), torch.tensor(a)
    for _ in range(3):
        y, ty = p * 2.0, t * 2.0
        p.add_(y), t.add_(ty)  # p is read by y before the update
        z, tz = (y * p).relu(), (ty * t).relu()
        np.testing.assert_allclose(z.numpy(), tz.numpy(), rtol=1e-6)
        np.testing.assert_allclose(p.numpy(), t.numpy(), rtol=1e-6)


def test_ops_without_attributes_share_one_read_only_empty_dict():
    a, b = pf.randn(2), pf.randn(2)
    n1, n2 = (a + b)._node, a.tanh()._node
    assert n1.attrs is n2.attrs is core.NO_ATTRS and n1.attrs == {} and not n1.attrs
    for change in (lambda d: d.__setitem__("k", 1), lambda d: d.update(k=1),
                   lambda d: d.setdefault("k", 1), lambda d: d.pop("k", None), lambda d: d.clear(),
                   lambda d: d.popitem()):
        with pytest.raises(TypeError, match="read-only"):
            change(core.NO_ATTRS)
    with pytest.raises(TypeError, match="read-only"):
        d = core.NO_ATTRS
        d |= {"k": 1}
    assert core.NO_ATTRS == {} and dict(core.NO_ATTRS) == {}
    assert (dict(core.NO_ATTRS) | {"k": 1}) == {"k": 1}  # a copy changes freely
