"""pf.compile with tensors an op without inputs made (pf.ones, pf.zeros,
pf.eye, pf.full): as arguments they are program inputs (a replay with other
data used the first call's constant), and captured ones updated in place
later are seen (a replay used the traced constant). Checked against numpy."""

from __future__ import annotations

import numpy as np

import pyflame_mlir as pf

X = np.array([1.0, 2.0], np.float32)


def test_constant_made_arguments_are_inputs() -> None:
    f = pf.compile(lambda a: a * 2)
    np.testing.assert_allclose(f(pf.ones(2)).numpy(), [2, 2])
    np.testing.assert_allclose(f(pf.full((2,), 5.0)).numpy(), [10, 10])
    np.testing.assert_allclose(f(pf.tensor(X)).numpy(), X * 2)
    h = pf.compile(lambda a, b: a @ b + 1)
    np.testing.assert_allclose(h(pf.eye(2), pf.ones(2, 2)).numpy(), np.full((2, 2), 2.0))
    np.testing.assert_allclose(h(pf.ones(2, 2) * 3, pf.eye(2)).numpy(), np.full((2, 2), 4.0))
    assert f.stats()["hits"] == 2 and h.stats()["hits"] == 1


def test_captured_constant_updated_in_place_is_seen() -> None:
    w = pf.ones(2)
    f = pf.compile(lambda a: a * w)
    x = pf.tensor(X)
    np.testing.assert_allclose(f(x).numpy(), X)
    with pf.no_grad():
        w.add_(1)
    np.testing.assert_allclose(f(x).numpy(), X * 2)
    np.testing.assert_allclose(f(x).numpy(), X * 2)
    w2 = pf.zeros(2)
    g = pf.compile(lambda a: a + w2 + pf.ones(2))  # a constant made inside: still replayed
    np.testing.assert_allclose(g(x).numpy(), X + 1)
    np.testing.assert_allclose(g(x).numpy(), X + 1)
    assert g.stats()["hits"] == 1
    w2.fill_(5.0)
    np.testing.assert_allclose(g(x).numpy(), X + 6)
