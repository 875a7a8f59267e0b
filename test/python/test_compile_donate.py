"""pf.compile(donate_argnums=...): JAX's semantics. A donated argument's
buffer may hold a result (the reference executor writes into it), and the
donated tensor is deleted: using it raises. A buffer anyone else can see (a
numpy handle, a view, another tensor) is never written."""

from __future__ import annotations

import numpy as np
import pytest

import pyflame_mlir as pf


def _addr(t: pf.Tensor) -> int:
    return t._value.__array_interface__["data"][0]  # an int: holds no reference


def _f(x, y):  # the first result is made after the last read of x: it may take x's buffer
    s = (x * y).sum()
    return pf.tanh(y) * s + y, s


def _want(x, y):
    s = (x * y).sum()
    return np.tanh(y) * s + y, s


def test_donated_buffer_is_reused_and_the_tensor_deleted():
    cf = pf.compile(_f, donate_argnums=0)
    rng = np.random.default_rng(0)
    reused = 0
    for _ in range(4):
        xs, ys = rng.standard_normal((2, 3, 4)).astype(np.float32)
        x, y = pf.tensor(xs), pf.tensor(ys)
        at = _addr(x)
        out, s = cf(x, y)
        reused += _addr(out) == at
        want = _want(xs, ys)
        np.testing.assert_allclose(out.numpy(), want[0], rtol=1e-5)
        np.testing.assert_allclose(s.numpy(), want[1], rtol=1e-5)
        with pytest.raises(RuntimeError, match="donated .* deleted"):
            x.numpy()
        with pytest.raises(RuntimeError, match="pyflame.add: .*donated"):
            x + 1
        with pytest.raises(RuntimeError, match="deleted"):
            cf(x, y)
        assert x.shape == (3, 4)  # the metadata stays, as in JAX
        y.numpy()  # not donated: alive
    assert reused == 3  # every replay writes the result into the donated buffer


@pytest.mark.usefixtures("lazy")
def test_a_pending_op_reading_a_donated_tensor_raises():
    """Lazy-only: it needs an op still pending when its input is donated; in
    eager mode ``x * 2`` has run before the donation (nothing to refuse)."""
    cf = pf.compile(_f, donate_argnums=0)
    y = pf.tensor(np.ones((3, 4), np.float32))
    cf(pf.tensor(np.ones((3, 4), np.float32)), y)
    x = pf.tensor(np.ones((3, 4), np.float32))
    lazy = x * 2  # recorded before the donation, evaluated after
    cf(x, y)
    with pytest.raises(RuntimeError, match="donated"):
        lazy.numpy()


def test_a_shared_buffer_is_never_written():
    cf = pf.compile(_f, donate_argnums=0)
    rng = np.random.default_rng(1)
    ys = rng.standard_normal((3, 4)).astype(np.float32)
    cf(pf.tensor(ys), pf.tensor(ys))
    xs = rng.standard_normal((3, 4)).astype(np.float32)
    keep = xs.copy()
    x = pf.asarray(xs)  # shares xs: the caller still sees the buffer
    out, _ = cf(x, pf.tensor(ys))
    np.testing.assert_array_equal(xs, keep)
    np.testing.assert_allclose(out.numpy(), _want(keep, ys)[0], rtol=1e-5)
    # the same tensor passed as the donated and a plain argument
    z = pf.tensor(keep)
    zv = z._value
    out, s = cf(z, z)
    np.testing.assert_array_equal(zv, keep)
    np.testing.assert_allclose(out.numpy(), _want(keep, keep)[0], rtol=1e-5)
    del zv
    # a tensor sharing the value (a detached alias is a view: refused clearly)
    w = pf.tensor(keep)
    with pytest.raises(ValueError, match="cannot be donated"):
        cf(w.detach(), pf.tensor(ys))


def test_results_returned_earlier_are_never_overwritten():
    cf = pf.compile(lambda p, g: p - g * 0.5, donate_argnums=0)
    rng = np.random.default_rng(2)
    p0 = rng.standard_normal(5).astype(np.float32)
    gs = rng.standard_normal((6, 5)).astype(np.float32)
    p, kept, want = pf.tensor(p0), [], p0.copy()
    plain = pf.compile(lambda p, g: p - g * 0.5)
    q = pf.tensor(p0)
    for g in gs:
        p = cf(p, pf.tensor(g))  # JAX's idiom: the old state is donated
        q = plain(q, pf.tensor(g))
        want = want - g * np.float32(0.5)
        kept.append((plain(q, pf.tensor(g)), want - g * np.float32(0.5)))
        np.testing.assert_array_equal(p.numpy(), q.numpy())
        np.testing.assert_allclose(p.numpy(), want, rtol=1e-6)
    for t, w in kept:  # later calls never wrote into earlier results
        np.testing.assert_allclose(t.numpy(), w, rtol=1e-6)


def test_a_donated_argument_returned_as_is_stays_alive():
    cf = pf.compile(lambda x, y: (x, x + y), donate_argnums=0)
    for _ in range(2):
        x = pf.tensor(np.ones(3, np.float32))
        a, b = cf(x, pf.tensor(np.ones(3, np.float32)))
        assert a is x
        np.testing.assert_array_equal(x.numpy(), 1.0)
        np.testing.assert_array_equal(b.numpy(), 2.0)


# ---- captured tensors the program updates: their own arrays, updated in place ----

def _sgd_step(ws: list[pf.Tensor], lr: float = 0.1):
    def step(x: pf.Tensor) -> pf.Tensor:
        for w in ws:
            w.grad = None
        loss = pf.tanh(x @ ws[0] + ws[1]).sum()
        loss.backward()
        with pf.no_grad():
            for w in ws:
                w.sub_(w.grad * lr)
        return loss
    return step


def _sgd_numpy(w: np.ndarray, b: np.ndarray, x: np.ndarray, lr: float = 0.1):
    """The same step by hand (the oracle): loss, new w, new b, their grads."""
    h = np.tanh(x @ w + b)
    d = 1 - h * h
    gw, gb = x.T @ d, d.sum(0)
    return h.sum(), w - lr * gw, b - lr * gb, gw, gb


def _params(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    # w above the reference plan's BLAS threshold: its update is an in-place axpy
    return (rng.standard_normal((256, 160)) * 0.05, rng.standard_normal(160) * 0.1,
            rng.standard_normal((8, 256)))


def test_an_updated_captured_parameter_is_updated_in_its_own_array():
    w0, b0, x0 = _params()
    ws = [pf.tensor(w0.copy(), requires_grad=True), pf.tensor(b0.copy(), requires_grad=True)]
    cf = pf.compile(_sgd_step(ws))
    x = pf.tensor(x0)
    want_w, want_b = w0, b0
    addrs = []
    for _ in range(4):
        loss = cf(x)
        want_loss, want_w, want_b, gw, gb = _sgd_numpy(want_w, want_b, x0)
        np.testing.assert_allclose(loss.item(), want_loss, rtol=1e-12)
        np.testing.assert_allclose(ws[0].grad.numpy(), gw, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(ws[1].grad.numpy(), gb, rtol=1e-12, atol=1e-14)
        addrs.append(_addr(ws[0]))
    np.testing.assert_allclose(ws[0].numpy(), want_w, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ws[1].numpy(), want_b, rtol=1e-12, atol=1e-14)
    assert cf.stats()["hits"] == 3
    assert addrs[1] == addrs[2] == addrs[3]  # replays: the same memory, no new array
    assert ws[0]._version == 4  # one update per call, as the uncompiled step


def test_a_parameter_whose_views_are_gone_is_updated_in_its_own_array_again():
    """A view taken once and dropped (``p.data.normal_()``-style init) leaves
    no reader: the parameter's own array takes its updates again."""
    w0, b0, x0 = _params(4)
    ws = [pf.tensor(w0.copy(), requires_grad=True), pf.tensor(b0.copy(), requires_grad=True)]
    with pf.no_grad():
        view = ws[0][0]
        view.mul_(1.0)
    del view
    cf = pf.compile(_sgd_step(ws))
    x = pf.tensor(x0)
    want_w, want_b = w0, b0
    addrs = []
    for _ in range(4):
        cf(x)
        _, want_w, want_b, _, _ = _sgd_numpy(want_w, want_b, x0)
        addrs.append(_addr(ws[0]))
    assert addrs[1] == addrs[2] == addrs[3]
    np.testing.assert_allclose(ws[0].numpy(), want_w, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ws[1].numpy(), want_b, rtol=1e-12, atol=1e-14)


def test_an_updated_parameter_anyone_else_sees_is_never_written():
    """A numpy handle, a pending op reading the current state: each keeps the
    value it saw (as without pf.compile); a view follows the parameter (as
    torch's); the state is not given away."""
    w0, b0, x0 = _params(1)
    ws = [pf.tensor(w0.copy(), requires_grad=True), pf.tensor(b0.copy(), requires_grad=True)]
    cf = pf.compile(_sgd_step(ws))
    x = pf.tensor(x0)
    cf(x)
    cf(x)  # replayed from here on
    before = ws[0].numpy().copy()
    handle = ws[0].numpy()  # a numpy handle on the current state
    lazy = ws[0] * 2  # recorded, not evaluated: reads the current state
    with pf.no_grad():
        view = ws[0][3]  # a view of it
        view_before = view.numpy().copy()
    cf(x)
    assert cf.stats()["hits"] == 2
    np.testing.assert_array_equal(handle, before)
    np.testing.assert_array_equal(lazy.numpy(), before * 2)
    # a view shares the parameter's storage (torch): it shows the update, and
    # the state it viewed before was not written (``view_before`` is intact)
    np.testing.assert_array_equal(view.numpy(), ws[0].numpy()[3])
    assert not np.array_equal(view_before, ws[0].numpy()[3])
    assert not np.array_equal(ws[0].numpy(), before)  # (the step did update it)


def test_compiled_and_uncompiled_steps_agree_with_others_holding_states():
    """The same sequence of steps with and without pf.compile, with a numpy
    handle and a pending read taken between steps: what they hold is exactly
    the state they saw, and the two runs agree (to rounding: a large update in
    place is one BLAS axpy, which rounds ``w - lr * g`` once)."""
    w0, b0, x0 = _params(2)
    runs = []
    for compiled in (False, True):
        ws = [pf.tensor(w0.copy(), requires_grad=True), pf.tensor(b0.copy(), requires_grad=True)]
        step = _sgd_step(ws)
        f = pf.compile(step) if compiled else step
        x = pf.tensor(x0)
        seen = []
        for i in range(5):
            w_before, b_before = ws[0].numpy().copy(), ws[1].numpy().copy()
            held = ws[0].numpy() if i in (2, 3) else None
            lazy = ws[1] + 1 if i in (3, 4) else None
            seen += [f(x).item(), ws[0].numpy().copy(), ws[1].numpy().copy()]
            if held is not None:
                np.testing.assert_array_equal(held, w_before)
            if lazy is not None:
                np.testing.assert_array_equal(lazy.numpy(), b_before + 1)
            assert not np.array_equal(ws[0].numpy(), w_before)
        runs.append(seen)
        if compiled:
            assert f.stats()["hits"] == 4
    for a, b in zip(*runs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)


def test_a_failed_replay_deletes_the_parameters_it_gave_away():
    """The program got the parameter's array to write into and then failed:
    its value is not known any more, so using it raises (never silently a
    half-updated value)."""
    w0, b0, x0 = _params(3)
    ws = [pf.tensor(w0.copy(), requires_grad=True), pf.tensor(b0.copy(), requires_grad=True)]
    cf = pf.compile(_sgd_step(ws))
    x = pf.tensor(x0)
    cf(x)
    cf(x)
    prog = next(iter(cf._programs.values()))
    run = prog.executable.run

    def failing(arrays, donated=()):
        assert donated  # the parameters' arrays were given
        run(arrays, donated)
        raise MemoryError("a kernel failed")

    prog.executable.run = failing
    with pytest.raises(MemoryError):
        cf(x)
    with pytest.raises(RuntimeError, match="deleted"):
        ws[0].numpy()
