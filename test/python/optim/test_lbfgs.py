"""pf.optim.LBFGS against torch.optim.LBFGS 2.13, step by step: the same
iterates (float64) on Rosenbrock and a logistic regression, with and
without the strong-Wolfe line search, and small histories."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyflame_mlir as pf


def _rosenbrock(x, lib):
    return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2


def _run(lib_params, opt, loss_fn, steps):
    losses, iterates = [], []
    for _ in range(steps):
        def closure():
            opt.zero_grad()
            loss = loss_fn(*lib_params)
            loss.backward()
            return loss
        losses.append(float(opt.step(closure).detach()))
        iterates.append(np.concatenate([np.asarray(p.detach().numpy()).reshape(-1)
                                        for p in lib_params]))
    return np.array(losses), np.array(iterates)


@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
@pytest.mark.parametrize("history", [100, 2])
def test_rosenbrock_matches_torch(line_search, history):
    x0 = np.array([-1.5, 2.0])
    kw = {"lr": 1 if line_search else 0.1, "max_iter": 5, "history_size": history,
          "line_search_fn": line_search}
    pp = pf.tensor(x0, requires_grad=True)
    tp = torch.tensor(x0, requires_grad=True)
    lp, ip = _run([pp], pf.optim.LBFGS([pp], **kw), lambda x: _rosenbrock(x, pf), 6)
    lt, it = _run([tp], torch.optim.LBFGS([tp], **kw), lambda x: _rosenbrock(x, torch), 6)
    # 30 iterations on an ill-conditioned valley amplify last-bit differences
    # (pow, summation order) to ~1e-9 relative
    np.testing.assert_allclose(lp, lt, rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(ip, it, rtol=1e-7, atol=1e-12)
    if line_search:
        assert lp[-1] < 0.1 * lp[0]  # it descends: the comparison covers real steps


@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
def test_logistic_regression_matches_torch(line_search):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 3))
    y = (x @ np.array([1.0, -2.0, 0.5]) + 0.3 * rng.normal(size=32) > 0).astype(np.float64)
    w0, b0 = rng.normal(size=(3, 1)) * 0.1, np.zeros(1)

    def loss_pf(w, b):
        return pf.nn.functional.binary_cross_entropy_with_logits(
            (pf.tensor(x) @ w).reshape(-1) + b, pf.tensor(y)) + 1e-3 * (w * w).sum()

    def loss_torch(w, b):
        return torch.nn.functional.binary_cross_entropy_with_logits(
            (torch.tensor(x) @ w).reshape(-1) + b, torch.tensor(y)) + 1e-3 * (w * w).sum()

    kw = {"lr": 1, "max_iter": 10, "history_size": 5, "line_search_fn": line_search,
          "tolerance_grad": 1e-9}
    pw, pb = pf.tensor(w0, requires_grad=True), pf.tensor(b0, requires_grad=True)
    tw, tb = torch.tensor(w0, requires_grad=True), torch.tensor(b0, requires_grad=True)
    popt, topt = pf.optim.LBFGS([pw, pb], **kw), torch.optim.LBFGS([tw, tb], **kw)
    lp, ip = _run([pw, pb], popt, loss_pf, 3)
    lt, it = _run([tw, tb], topt, loss_torch, 3)
    np.testing.assert_allclose(lp, lt, rtol=1e-9)
    np.testing.assert_allclose(ip, it, rtol=1e-7, atol=1e-10)
    tstate = topt.state[topt.param_groups[0]["params"][0]]
    pstate = popt.state[pw]
    assert pstate["func_evals"] == tstate["func_evals"]
    assert pstate["n_iter"] == tstate["n_iter"]


def test_lbfgs_errors_and_float32():
    p = pf.zeros(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="strong_wolfe"):
        pf.optim.LBFGS([p], line_search_fn="armijo")
    with pytest.raises(ValueError, match="parameter groups"):
        pf.optim.LBFGS([{"params": [p]}, {"params": [pf.zeros(1, requires_grad=True)]}])
    with pytest.raises(RuntimeError, match="closure"):
        pf.optim.LBFGS([p]).step()
    # float32 parameters: the iterates stay float32 and converge as torch's do
    x0 = np.array([-1.5, 2.0], dtype=np.float32)
    pp, tp = pf.tensor(x0, requires_grad=True), torch.tensor(x0, requires_grad=True)
    kw = {"line_search_fn": "strong_wolfe", "max_iter": 20}
    lp, ip = _run([pp], pf.optim.LBFGS([pp], **kw), lambda x: _rosenbrock(x, pf), 3)
    lt, it = _run([tp], torch.optim.LBFGS([tp], **kw), lambda x: _rosenbrock(x, torch), 3)
    assert pp.dtype == pf.float32
    np.testing.assert_allclose(ip[-1], it[-1], atol=1e-3)
    np.testing.assert_allclose(ip[-1], [1.0, 1.0], atol=1e-3)


def test_state_dict_round_trip_and_torch_state():
    """Resuming from a state dict (ours or torch's) continues the same
    iterates as an optimizer that never stopped."""
    x0 = np.array([-1.5, 2.0])
    kw = {"max_iter": 3, "history_size": 4, "line_search_fn": "strong_wolfe"}
    pp = pf.tensor(x0, requires_grad=True)
    opt = pf.optim.LBFGS([pp], **kw)
    _run([pp], opt, lambda x: _rosenbrock(x, pf), 2)
    sd = opt.state_dict()
    assert isinstance(sd["state"][0]["d"], pf.Tensor)
    resumed_p = pf.tensor(pp.numpy().copy(), requires_grad=True)
    resumed = pf.optim.LBFGS([resumed_p], **kw)
    resumed.load_state_dict(sd)
    _, a = _run([pp], opt, lambda x: _rosenbrock(x, pf), 2)
    _, b = _run([resumed_p], resumed, lambda x: _rosenbrock(x, pf), 2)
    np.testing.assert_array_equal(a, b)
    # torch's state dict after two steps continues as torch does
    tp = torch.tensor(x0, requires_grad=True)
    topt = torch.optim.LBFGS([tp], **kw)
    _run([tp], topt, lambda x: _rosenbrock(x, torch), 2)
    from_torch = pf.tensor(tp.detach().numpy().copy(), requires_grad=True)
    popt = pf.optim.LBFGS([from_torch], **kw)
    popt.load_state_dict(topt.state_dict())
    _, it = _run([tp], topt, lambda x: _rosenbrock(x, torch), 2)
    _, ip = _run([from_torch], popt, lambda x: _rosenbrock(x, pf), 2)
    np.testing.assert_allclose(ip, it, rtol=1e-9)
