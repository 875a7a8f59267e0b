"""pf.compile and pf.trace: a compiled call replays without recording and
lands exactly where the uncompiled call lands (outputs, in-place updates,
gradients, versions), retraces when the signature or a guard changes, and
falls back to running Python when replay could be stale."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyflame_mlir as pf
from pyflame_mlir.runtime import csl_backend

rng = np.random.default_rng(0)


def _r(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def test_replay_skips_recording_and_matches_the_uncompiled_call():
    calls = []

    def f(x, w):
        calls.append(1)  # a Python side effect: runs once per trace (the caveat)
        return pf.tanh(x @ w).sum(0), x * 2

    cf = pf.compile(f)
    w = pf.tensor(_r(3, 2))
    for i in range(4):
        x = _r(4, 3)
        before = pf.COUNTERS.ops_recorded
        evals = pf.COUNTERS.evaluations
        got = cf(pf.tensor(x), w)
        if i > 0:
            assert pf.COUNTERS.ops_recorded == before  # nothing recorded on a replay
            assert pf.COUNTERS.evaluations == evals  # and no graph evaluated
        want = (np.tanh(x @ w.numpy()).sum(0), x * 2)
        for g, e in zip(got, want):
            np.testing.assert_allclose(g.numpy(), e, rtol=1e-5)
    assert len(calls) == 1
    assert cf.stats()["hits"] == 3 and cf.stats()["misses"] == 1


def test_a_changed_signature_retraces():
    cf = pf.compile(lambda x, k: x * k)
    cf(pf.tensor(_r(2)), 2.0)
    cf(pf.tensor(_r(2)), 2.0)
    np.testing.assert_allclose(cf(pf.tensor(np.ones(3, np.float32)), 3.0).numpy(), 3.0)
    cf(pf.tensor(np.ones(3, np.float64)), 3.0)
    s = cf.stats()
    assert (s["hits"], s["misses"], s["signatures"]) == (1, 3, 3)


def test_static_argnums_and_pytrees():
    def f(tree, n):
        return {"a": tree["x"] ** n, "b": [tree["y"].sum()] * n}

    cf = pf.compile(f, static_argnums=1)
    t = {"x": pf.tensor(_r(3)), "y": pf.tensor(_r(2))}
    out = cf(t, 2)
    out = cf(t, 2)
    assert cf.stats()["hits"] == 1
    np.testing.assert_allclose(out["a"].numpy(), t["x"].numpy() ** 2, rtol=1e-6)
    assert len(cf(t, 3)["b"]) == 3 and cf.stats()["misses"] == 2


def _mlp(seed):
    r = np.random.default_rng(seed)
    return [pf.tensor(r.standard_normal(s).astype(np.float32) * 0.3, requires_grad=True)
            for s in ((8, 6), (6,), (6, 3), (3,))]


def _sgd_step(params):
    w1, b1, w2, b2 = params

    def step(x, y, lr):
        for p in params:
            p.grad = None
        loss = ((pf.relu(x @ w1 + b1) @ w2 + b2 - y) ** 2).mean()
        loss.backward()
        with pf.no_grad():
            for p in params:
                p.sub_(p.grad * lr)
        return loss
    return step


def test_training_step_writes_back_updates_and_grads_step_by_step():
    plain, comp = _mlp(1), _mlp(1)
    f, cf = _sgd_step(plain), pf.compile(_sgd_step(comp))
    lr = pf.tensor(np.float32(0.05))
    tp = [torch.tensor(p.numpy(), requires_grad=True) for p in plain]
    for i in range(4):
        x, y = _r(5, 8), _r(5, 3)
        rec = pf.COUNTERS.ops_recorded
        lc = cf(pf.tensor(x), pf.tensor(y), lr).item()
        if i:
            assert pf.COUNTERS.ops_recorded == rec  # the step replays
        lp = f(pf.tensor(x), pf.tensor(y), lr).item()
        tl = ((torch.relu(torch.tensor(x) @ tp[0] + tp[1]) @ tp[2] + tp[3]
               - torch.tensor(y)) ** 2).mean()
        tl.backward()
        with torch.no_grad():
            for p in tp:
                p -= p.grad * 0.05
                p.grad = None
        assert lc == lp
        np.testing.assert_allclose(lc, tl.item(), rtol=1e-5)
        for p, q, t in zip(plain, comp, tp):
            np.testing.assert_array_equal(p.numpy(), q.numpy())
            np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())
            np.testing.assert_allclose(q.numpy(), t.detach().numpy(), rtol=1e-5, atol=1e-6)
            assert p._version == q._version == i + 1
    assert cf.stats()["hits"] == 3


@pytest.mark.parametrize("opt", ["SGD", "AdamW"])
def test_optimizer_steps_match_the_uncompiled_run(opt):
    def run(compiled):
        pf.manual_seed(0)
        model = pf.nn.Sequential(pf.nn.Linear(8, 6), pf.nn.ReLU(), pf.nn.Linear(6, 3))
        o = (pf.optim.SGD(model.parameters(), lr=0.1, momentum=0.9) if opt == "SGD"
             else pf.optim.AdamW(model.parameters(), lr=0.01))

        def step(x, y):
            o.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            o.step()
            return loss
        f = pf.compile(step) if compiled else step
        r = np.random.default_rng(2)
        losses = []
        for _ in range(4):
            losses.append(f(pf.tensor(r.standard_normal((4, 8)).astype(np.float32)),
                            pf.tensor(r.standard_normal((4, 3)).astype(np.float32))).item())
            losses.append([p.numpy().copy() for p in model.parameters()])
        return losses, f
    plain, (comp, cf) = run(False)[0], run(True)
    for a, b in zip(plain, comp):
        if isinstance(a, float):
            assert a == b
        else:
            for x, y in zip(a, b):
                np.testing.assert_array_equal(x, y)
    # the first call creates the optimizer state (run in Python), the second
    # traces; from then on the step replays (its scalars are per-call inputs)
    assert cf.stats()["python_calls"] == 1 and cf.stats()["hits"] == 2
    assert "host data" in cf.stats()["python_reasons"][0]


def test_replayed_states_and_grads_keep_their_dtypes_and_a_wrong_result_dtype_raises():
    """A replay labels each result with the dtype the trace computed (no
    lookup per result): float64 parameters and gradients stay float64, as
    the uncompiled step's; a program returning another dtype is an error,
    never a mislabelled tensor."""
    w = pf.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    x = pf.tensor(np.ones((4, 2)))

    def step(x):
        w.grad = None
        loss = (x @ w).sum()
        loss.backward()
        with pf.no_grad():
            w.sub_(w.grad * 0.5)
        return loss

    cf = pf.compile(step)
    for _ in range(3):
        loss = cf(x)
    assert cf.stats()["hits"] == 2
    assert loss.dtype == w.dtype == w.grad.dtype == pf.float64
    np.testing.assert_array_equal(w.numpy(), np.arange(6.0).reshape(2, 3) - 3 * 0.5 * 4)
    np.testing.assert_array_equal(w.grad.numpy(), np.full((2, 3), 4.0))
    prog = next(iter(cf._programs.values()))
    run = prog.executable.run
    prog.executable.run = lambda arrays, *d: [a.astype(np.float32) for a in run(arrays, *d)]
    with pytest.raises(RuntimeError, match="float32 where the trace computed float64"):
        cf(x)


def test_host_data_made_inside_f_is_never_replayed_stale():
    cf = pf.compile(lambda x: x + pf.randn([3]))
    x = pf.tensor(np.zeros(3, np.float32))
    a, b = cf(x).numpy(), cf(x).numpy()
    assert not np.array_equal(a, b)  # new random numbers each call, as uncompiled
    assert cf.stats()["python_calls"] == 2


def test_rebinding_a_global_retraces():
    global _W
    _W = pf.tensor(np.ones(2, np.float32))
    cf = pf.compile(lambda x: x * _W)
    x = pf.tensor(np.full(2, 3, np.float32))
    np.testing.assert_allclose(cf(x).numpy(), 3.0)
    _W = pf.tensor(np.full(2, 2, np.float32))
    np.testing.assert_allclose(cf(x).numpy(), 6.0)
    assert cf.stats()["retraces"] == 1


def test_a_captured_tensor_updated_outside_f_is_read_at_call_time():
    w = pf.tensor(np.ones(2, np.float32))
    cf = pf.compile(lambda x: x * w)
    x = pf.tensor(np.full(2, 3, np.float32))
    cf(x)
    w.add_(1.0)  # in place, outside f: the replay reads the new value
    np.testing.assert_allclose(cf(x).numpy(), 6.0)
    assert cf.stats()["hits"] == 1


def test_a_rebound_attribute_is_seen_when_the_old_tensor_is_gone():
    class Holder:
        pass
    h = Holder()
    h.w = pf.tensor(np.ones(2, np.float32))
    cf = pf.compile(lambda x: x * h.w)
    x = pf.tensor(np.full(2, 3, np.float32))
    cf(x)
    h.w = pf.tensor(np.full(2, 2, np.float32))  # the old tensor dies: its guard fails
    np.testing.assert_allclose(cf(x).numpy(), 6.0)
    assert cf.stats()["retraces"] == 1
    kept = h.w
    h.w = pf.tensor(np.full(2, 5, np.float32))  # the documented caveat: old one still alive
    np.testing.assert_allclose(cf(x).numpy(), 6.0)
    cf.clear()
    np.testing.assert_allclose(cf(x).numpy(), 15.0)
    del kept


def test_grad_inside_and_outside_compile():
    w = _r(3, 2)

    def loss(w, x):
        return pf.sin(x @ w).sum()
    cg = pf.compile(pf.grad(loss))
    x = _r(4, 3)
    for _ in range(2):
        g = cg(pf.tensor(w), pf.tensor(x))
    tw = torch.tensor(w, requires_grad=True)
    torch.sin(torch.tensor(x) @ tw).sum().backward()
    np.testing.assert_allclose(g.numpy(), tw.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert cg.stats()["hits"] == 1
    # grad of a compiled function: pf.grad traces through the (first) call
    outer = pf.grad(lambda w: pf.compile(loss)(w, pf.tensor(x)))(pf.tensor(w))
    np.testing.assert_allclose(outer.numpy(), tw.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_compile_of_vmap():
    cf = pf.compile(pf.vmap(lambda v: pf.exp(v).sum()))
    for _ in range(2):
        x = _r(3, 4)
        np.testing.assert_allclose(cf(pf.tensor(x)).numpy(), np.exp(x).sum(1), rtol=1e-5)
    assert cf.stats()["hits"] == 1


def test_lower_and_trace():
    cf = pf.compile(lambda x, w: pf.relu(x @ w))
    text = cf.lower(pf.tensor(_r(2, 3)), pf.tensor(_r(3, 4)))
    assert "pyflame.matmul" in text and "pyflame.relu" in text
    w = pf.tensor(_r(3, 4))
    prog = pf.trace(lambda x: pf.relu(x @ w), pf.tensor(_r(2, 3)))
    assert [t.shape for t in prog.inputs] == [(2, 3), (3, 4)]
    assert [t.shape for t in prog.outputs] == [(2, 4)]
    assert "func.func @main" in prog.ir and "pyflame.relu" in str(prog)


def test_static_and_donated_overlap_raises():
    with pytest.raises(ValueError, match="both static and donated"):
        pf.compile(lambda x: x, static_argnums=0, donate_argnums=0)


def test_compile_on_the_csl_simulator():
    prev_backend, prev = pf.get_backend(), csl_backend.configure(mode="simulator", grid=(2, 2))
    pf.set_backend("csl")
    try:
        cf = pf.compile(lambda x, y: x * y + x)
        for _ in range(2):
            a, b = _r(4, 4), _r(4, 4)
            np.testing.assert_allclose(cf(pf.tensor(a), pf.tensor(b)).numpy(), a * b + a,
                                       rtol=1e-5, atol=1e-6)
        assert cf.stats()["hits"] == 1
        x = _r(3, 4)  # and a vmap (expanded to plain pyflame IR before the csl lowering)
        np.testing.assert_allclose(pf.vmap(lambda v: v * v + v)(pf.tensor(x)).numpy(),
                                   x * x + x, rtol=1e-5, atol=1e-6)
    finally:
        pf.set_backend(prev_backend)
        csl_backend.configure(**vars(prev))


@pytest.mark.slow
@pytest.mark.parametrize("backend,module", [("max", "max.graph"),
                                            ("mlir", "mlir.execution_engine")])
def test_compile_and_vmap_on_optional_backends(backend, module):
    pytest.importorskip(module, reason=f"the {backend} backend is not installed")
    prev = pf.get_backend()
    pf.set_backend(backend)
    try:
        cf = pf.compile(pf.vmap(lambda v, w: pf.relu(v @ w).sum(), in_axes=(0, None)))
        w = _r(4, 3)
        for _ in range(2):
            x = _r(2, 4)
            np.testing.assert_allclose(cf(pf.tensor(x), pf.tensor(w)).numpy(),
                                       np.maximum(x @ w, 0).sum(1), rtol=1e-4, atol=1e-5)
        assert cf.stats()["hits"] == 1
    finally:
        pf.set_backend(prev)
