"""Anomaly detection in the functional transforms (grad, vjp, jacrev), and
``pf.autograd.grad`` freeing the graph by default, as PyTorch (issue 13)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyflame_mlir as pf

X = np.array([-1.0, 4.0])  # sqrt's backward at -1 gives NaN


def _f(lib):
    return lambda x: (lib.sqrt(x) * 2).sum()


@pytest.mark.filterwarnings("ignore::UserWarning")  # torch prints the forward's stack
@pytest.mark.parametrize("transform", ["grad", "vjp", "jacrev"])
def test_anomaly_detection_names_the_op_in_functional_transforms(mode, transform):
    calls = {
        "grad": lambda lib, x: (pf.grad if lib is pf else torch.func.grad)(_f(lib))(x),
        "vjp": lambda lib, x: (pf.vjp if lib is pf else torch.func.vjp)(_f(lib), x)[1](
            lib.tensor(1.0, dtype=lib.float64)),
        "jacrev": lambda lib, x: (pf.jacrev if lib is pf else torch.func.jacrev)(
            lambda v: lib.sqrt(v) * 2)(x),
    }
    call = calls[transform]
    messages = []
    for lib in (pf, torch):
        with lib.autograd.detect_anomaly():
            with pytest.raises(RuntimeError) as err:
                call(lib, lib.tensor(X))
        messages.append(str(err.value))
    for m in messages:
        assert "Function 'SqrtBackward0' returned nan values in its 0th output." in m
    assert "test_autograd_anomaly_and_freeing.py" in messages[0] and "sqrt(" in messages[0]
    # without anomaly detection: the NaN, as torch
    ours, theirs = call(pf, pf.tensor(X)), call(torch, torch.tensor(X))
    ours, theirs = (ours[0], theirs[0]) if transform == "vjp" else (ours, theirs)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy())
    with pf.autograd.detect_anomaly():  # no NaN: the gradient as without
        g = pf.grad(_f(pf))(pf.tensor([1.0, 4.0]))
    np.testing.assert_allclose(g.numpy(), [1.0, 0.5])


def test_autograd_grad_frees_the_graph_unless_retained(mode):
    for lib in (pf, torch):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        loss = (a * a).sum()
        (g,) = lib.autograd.grad(loss, [a])
        np.testing.assert_allclose(g.detach().numpy(), [2.0, 4.0])
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            lib.autograd.grad(loss, [a])
        loss = (a * a).sum()
        lib.autograd.grad(loss, [a], retain_graph=True)
        (g,) = lib.autograd.grad(loss, [a])  # retained once: a second call works
        np.testing.assert_allclose(g.detach().numpy(), [2.0, 4.0])
        loss = (a ** 3).sum()
        (g,) = lib.autograd.grad(loss, [a], create_graph=True)  # create_graph retains
        (h,) = lib.autograd.grad(g.sum(), [a])
        (g2,) = lib.autograd.grad(loss, [a])
        np.testing.assert_allclose(h.detach().numpy(), [6.0, 12.0])
        np.testing.assert_allclose(g2.detach().numpy(), [3.0, 12.0])
