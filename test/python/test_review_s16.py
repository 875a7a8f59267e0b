"""Session 16 review: pf.compile replays (s16-speed19), Parameter.data and
``x.data = y`` (s16-paramdata) against the uncompiled step and torch 2.13."""
from __future__ import annotations

import numpy as np
import pytest

import pyflame_mlir as pf

torch = pytest.importorskip("torch")

from test_compile_donate import _params, _sgd_step  # noqa: E402  (the same steps)


def _torch_steps(w0: np.ndarray, b0: np.ndarray, x0: np.ndarray, n: int, lr: float = 0.1):
    """torch's parameters after each of n steps (the oracle)."""
    w = torch.tensor(w0, requires_grad=True)
    b = torch.tensor(b0, requires_grad=True)
    x = torch.tensor(x0)
    out = []
    for _ in range(n):
        w.grad = b.grad = None
        torch.tanh(x @ w + b).sum().backward()
        with torch.no_grad():
            w.sub_(w.grad * lr)
            b.sub_(b.grad * lr)
        out.append((w.detach().numpy().copy(), b.detach().numpy().copy()))
    return out


@pytest.mark.parametrize("take", ["data", "detach", "index", "slice_t"])
def test_a_view_taken_between_replays_follows_the_update(take: str) -> None:
    """``d = p.data`` (or p.detach(), p[0], p[1:3].T) taken after the step was
    traced shares p's storage (torch): the next steps' updates show through
    it. A replay rebound p and left such a view with the old state."""
    w0, b0, x0 = _params()
    ws = [pf.tensor(w0.copy(), requires_grad=True), pf.tensor(b0.copy(), requires_grad=True)]
    cf = pf.compile(_sgd_step(ws))
    x = pf.tensor(x0)
    want = _torch_steps(w0, b0, x0, 4)
    cf(x)  # traced
    for i in range(1, 4):
        with pf.no_grad():
            d = {"data": lambda: ws[0].data, "detach": lambda: ws[0].detach(),
                 "index": lambda: ws[0][0], "slice_t": lambda: ws[0][1:3].T}[take]()
        cf(x)
        ww = want[i][0]
        sel = {"data": ww, "detach": ww, "index": ww[0], "slice_t": ww[1:3].T}[take]
        np.testing.assert_allclose(ws[0].numpy(), ww, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(d.numpy(), sel, rtol=1e-10, atol=1e-12)
    assert cf.stats()["hits"] == 3


def test_a_view_taken_between_replays_written_by_the_user_writes_the_parameter() -> None:
    w0, b0, x0 = _params(1)
    ws = [pf.tensor(w0.copy(), requires_grad=True), pf.tensor(b0.copy(), requires_grad=True)]
    tw = torch.tensor(w0, requires_grad=True)
    tb = torch.tensor(b0, requires_grad=True)
    tx = torch.tensor(x0)
    cf = pf.compile(_sgd_step(ws))
    x = pf.tensor(x0)
    for _ in range(4):
        d, td = ws[1].data, tb.data
        cf(x)
        tw.grad = tb.grad = None
        torch.tanh(tx @ tw + tb).sum().backward()
        with torch.no_grad():
            tw.sub_(tw.grad * 0.1)
            tb.sub_(tb.grad * 0.1)
        d.mul_(0.5)  # torch: b is halved too
        td.mul_(0.5)
        np.testing.assert_allclose(ws[1].numpy(), tb.detach().numpy(), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(d.numpy(), td.numpy(), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(ws[0].numpy(), tw.detach().numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kind", ["sub", "clamp"])
def test_an_update_through_p_data_in_a_compiled_step(kind: str) -> None:
    """``p.data.sub_(lr * p.grad)`` (and ``p.data.clamp_``) in a compiled step,
    against torch: since Parameter.data became a detached alias of p, the
    compile trace took the update for one a transform differentiates and
    refused it (``writing a value that requires grad into ... a detached
    alias``); pf.compile differentiates nothing."""
    w0, _, x0 = _params(2)
    tw = torch.nn.Parameter(torch.tensor(w0))
    tx = torch.tensor(x0)
    w = pf.nn.Parameter(pf.tensor(w0))
    x = pf.tensor(x0)

    def step(x: pf.Tensor) -> pf.Tensor:
        w.grad = None
        loss = pf.tanh(x @ w).sum()
        loss.backward()
        if kind == "sub":
            w.data.sub_(0.1 * w.grad)
        else:
            with pf.no_grad():
                w.sub_(0.1 * w.grad)
            w.data.clamp_(-0.06, 0.06)
        return loss

    cf = pf.compile(step)
    for _ in range(4):
        held = w.data
        loss = cf(x)
        tw.grad = None
        tloss = torch.tanh(tx @ tw).sum()
        tloss.backward()
        if kind == "sub":
            tw.data.sub_(0.1 * tw.grad)
        else:
            with torch.no_grad():
                tw.sub_(0.1 * tw.grad)
            tw.data.clamp_(-0.06, 0.06)
        np.testing.assert_allclose(loss.item(), tloss.item(), rtol=1e-10)
        np.testing.assert_allclose(w.numpy(), tw.detach().numpy(), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(held.numpy(), tw.detach().numpy(), rtol=1e-10, atol=1e-12)



@pytest.mark.parametrize("opt", ["sgd", "adam"])
def test_state_dicts_around_compiled_steps_as_torch(opt: str) -> None:
    """A plain ``model.state_dict()`` aliases the parameters (torch): it shows
    the later steps' values; ``copy.deepcopy`` of it keeps step k's values.
    Compiled and uncompiled steps against torch 2.13."""
    import copy
    rng = np.random.default_rng(7)
    w0 = (rng.standard_normal((4, 256)) * 0.05).astype(np.float32)
    b0 = (rng.standard_normal(4) * 0.1).astype(np.float32)
    x0 = rng.standard_normal((8, 256)).astype(np.float32)

    def make(lib):
        m = lib.nn.Linear(256, 4)
        with lib.no_grad():
            m.weight.copy_(lib.tensor(w0))
            m.bias.copy_(lib.tensor(b0))
        o = (lib.optim.SGD(m.parameters(), lr=0.1) if opt == "sgd"
             else lib.optim.Adam(m.parameters(), lr=1e-2))

        def step(x):
            o.zero_grad()
            loss = (m(x) ** 2).mean()
            loss.backward()
            o.step()
            return loss
        return m, step

    tm, tstep = make(torch)
    runs = []
    for compiled in (False, True):
        m, step = make(pf)
        f = pf.compile(step) if compiled else step
        runs.append((m, f))
    tx, x = torch.tensor(x0), pf.tensor(x0)
    kept = []
    for _ in range(4):
        tsd, tck = tm.state_dict(), copy.deepcopy(tm.state_dict())
        sds = [(m.state_dict(), copy.deepcopy(m.state_dict())) for m, _ in runs]
        tstep(tx)
        for _, f in runs:
            f(x)
        kept.append((tsd, tck, sds))
    for tsd, tck, sds in kept:
        for sd, ck in sds:
            for k in ("weight", "bias"):
                np.testing.assert_allclose(sd[k].numpy(), tsd[k].numpy(), rtol=1e-5, atol=1e-6)
                np.testing.assert_allclose(ck[k].numpy(), tck[k].numpy(), rtol=1e-5, atol=1e-6)


# ---- random programs: compiled and uncompiled steps with views, numpy handles,
# pending ops and writes through views between them ----

def _random_actions(seed: int, n: int = 30) -> list[tuple[int, int]]:
    rng = np.random.default_rng(seed)
    return [(int(rng.integers(0, 12)), int(rng.integers(0, 1 << 30))) for _ in range(n)]


def _run_actions(actions: list[tuple[int, int]], compiled: bool, seed: int) -> list[np.ndarray]:
    w0, b0, x0 = _params(seed)
    ws = [pf.tensor(w0.copy(), requires_grad=True), pf.tensor(b0.copy(), requires_grad=True)]
    step = _sgd_step(ws)
    f = pf.compile(step) if compiled else step
    x = pf.tensor(x0)
    held: list[tuple[str, object]] = []
    seen: list[np.ndarray] = []

    def look(kind: str, v: object) -> np.ndarray:
        return np.array(v) if kind == "np" else v.numpy().copy()  # type: ignore[attr-defined]

    for op, r in actions:
        w = ws[r % 2]
        if op <= 1:
            seen.append(f(x).numpy().copy())
            continue
        with pf.no_grad():
            if op == 2:
                held.append(("view", w.data))
            elif op == 3:
                held.append(("view", w.detach()))
            elif op == 4:
                held.append(("view", w[r % 3]))
            elif op == 5:
                held.append(("view", w.T if w.ndim == 2 else w[1:5]))
            elif op == 6:
                held.append(("np", w.numpy()))
            elif op == 7:
                held.append(("lazy", w * 2 + 1))
            elif op == 8 and held:
                kind, v = held[r % len(held)]
                if kind == "view":
                    v.mul_(0.5)  # type: ignore[attr-defined]
            elif op == 9 and held:
                held.pop(r % len(held))
            elif op == 10:
                held.append(("clone", w.clone()))
            elif op == 11:
                seen += [look(kind, v) for kind, v in held]
    seen += [look(kind, v) for kind, v in held]
    return seen + [w.numpy().copy() for w in ws]


@pytest.mark.parametrize("seed", [3, 16, 17, 21, 29, 34])
def test_random_programs_compiled_as_uncompiled(seed: int) -> None:
    actions = _random_actions(seed)
    want = _run_actions(actions, False, seed % 5)
    got = _run_actions(actions, True, seed % 5)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-11, err_msg=f"observation {i}")


def test_x_data_assigned_between_compiled_steps_shares_both_ways() -> None:
    """``b.data = y`` between compiled steps: y shares b's storage (torch), so
    the next step's update shows in y, and a write into y shows in b."""
    w0, b0, x0 = _params(5)
    tw = torch.tensor(w0, requires_grad=True)
    tb = torch.tensor(b0, requires_grad=True)
    tx = torch.tensor(x0)
    ws = [pf.tensor(w0.copy(), requires_grad=True), pf.tensor(b0.copy(), requires_grad=True)]
    cf = pf.compile(_sgd_step(ws))
    x = pf.tensor(x0)

    def tstep() -> None:
        tw.grad = tb.grad = None
        torch.tanh(tx @ tw + tb).sum().backward()
        with torch.no_grad():
            tw.sub_(tw.grad * 0.1)
            tb.sub_(tb.grad * 0.1)

    cf(x)
    tstep()
    for i in range(3):
        y, ty = pf.tensor(np.full(160, 0.01 * i)), torch.tensor(np.full(160, 0.01 * i))
        ws[1].data, tb.data = y, ty
        cf(x)
        tstep()
        np.testing.assert_allclose(y.numpy(), ty.numpy(), rtol=1e-10, atol=1e-12)
        with pf.no_grad():
            y.add_(1.0)
        with torch.no_grad():
            ty.add_(1.0)
        np.testing.assert_allclose(ws[1].numpy(), tb.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ws[0].numpy(), tw.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_a_parameter_a_compiled_step_returns_is_the_parameter() -> None:
    """``return loss, p`` from a step updating p: the call returns p itself
    (an update through it is p's), as the uncompiled step and torch do; a
    replay returned a new tensor holding p's value, which the user's update
    then silently left p without."""
    w0, b0, x0 = _params(6)
    tw = torch.tensor(w0, requires_grad=True)
    tb = torch.tensor(b0, requires_grad=True)
    tx = torch.tensor(x0)
    ws = [pf.tensor(w0.copy(), requires_grad=True), pf.tensor(b0.copy(), requires_grad=True)]
    step = _sgd_step(ws)
    cf = pf.compile(lambda x: (step(x), ws[0]))
    x = pf.tensor(x0)
    for _ in range(4):
        loss, w = cf(x)
        assert w is ws[0]
        with pf.no_grad():
            w.mul_(0.5)
        tw.grad = tb.grad = None
        torch.tanh(tx @ tw + tb).sum().backward()
        with torch.no_grad():
            tw.sub_(tw.grad * 0.1)
            tb.sub_(tb.grad * 0.1)
            tw.mul_(0.5)
        np.testing.assert_allclose(ws[0].numpy(), tw.detach().numpy(), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(ws[1].numpy(), tb.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert cf.stats()["hits"] == 3
