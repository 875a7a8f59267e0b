"""JAX's runtime queries and debug helpers on pf: devices, the default
backend, ``debug.print``/``callback`` with the arrays' values (also inside
transforms, where printing must not change a gradient), and
``Array.block_until_ready``."""

from __future__ import annotations

import numpy as np
import pytest

import pyflame_mlir as pf


def test_devices_and_backend():
    assert len(pf.devices()) == pf.device_count() == pf.local_device_count() == 1
    assert str(pf.devices()[0]) == "cpu" and pf.local_devices() == pf.devices("cpu")
    assert pf.default_backend() == "cpu"
    with pytest.raises(RuntimeError, match="Unknown backend gpu"):
        pf.devices("gpu")


def test_debug_print_formats_values(capsys):
    x = pf.tensor([1.0, 2.0])
    pf.debug.print("x={} y={y}", x * 2, y=x.sum())
    assert capsys.readouterr().out == f"x={np.array([2.0, 4.0], np.float32)} y=3.0\n"


def test_debug_print_inside_grad_keeps_the_gradient(capsys):
    def f(w):
        y = (w ** 3).sum()
        pf.debug.print("loss {}", y)
        return y
    g = pf.grad(f)(pf.tensor([1.0, 2.0]))
    np.testing.assert_allclose(g.numpy(), [3.0, 12.0])
    assert capsys.readouterr().out == "loss 9.0\n"


def test_debug_callback_and_block_until_ready():
    seen = []
    x = pf.tensor([1.0, -1.0])
    pf.debug.callback(lambda a, b=None: seen.append((a, b)), pf.relu(x), b=[x])
    assert isinstance(seen[0][0], np.ndarray) and seen[0][0].tolist() == [1.0, 0.0]
    assert seen[0][1][0].tolist() == [1.0, -1.0]
    y = pf.exp(x)
    assert y.block_until_ready() is y
    np.testing.assert_allclose(y.numpy(), np.exp([1.0, -1.0]), rtol=1e-6)
