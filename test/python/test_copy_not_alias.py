"""Functions PyTorch documents as returning a new tensor return one here too,
even in their no-op cases (``cat`` of one tensor, ``repeat`` by ones, ``roll``
by 0, ``flip`` of no dim, ``pad`` by zeros): writing the result in place must
leave the input alone. Views (``x[:]``, ``narrow``, ``reshape``) share the
input's memory in both libraries."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyflame_mlir as pf

CASES = {
    "cat of one": lambda L, x: L.cat([x]),
    "cat of one, dim 1": lambda L, x: L.cat([x], 1),
    "stack of one": lambda L, x: L.stack([x])[0],
    "hstack of one": lambda L, x: L.hstack([x]),
    "repeat by ones": lambda L, x: x.repeat(1, 1),
    "tile by one": lambda L, x: L.tile(x, (1,)),
    "roll by 0": lambda L, x: L.roll(x, 0),
    "roll by the length": lambda L, x: L.roll(x, 2, 1),
    "flip of no dim": lambda L, x: L.flip(x, []),
    "pad by zeros": lambda L, x: L.nn.functional.pad(x, (0, 0)),
    "reflect pad by zeros": lambda L, x: L.nn.functional.pad(x[None], (0, 0), mode="reflect")[0],
    "clone": lambda L, x: x.clone(),
    "x[:] (a view)": lambda L, x: x[:],
    "narrow all (a view)": lambda L, x: x.narrow(1, 0, 2),
    "reshape to its shape (a view)": lambda L, x: x.reshape(1, 2),
    "contiguous (itself)": lambda L, x: x.contiguous(),
}


@pytest.mark.parametrize("name", list(CASES))
def test_in_place_write_of_the_result_reaches_the_input_only_for_views(name):
    seen = {}
    for L in (torch, pf):
        x = L.tensor([[1.0, 2.0]])
        y = CASES[name](L, x)
        y.add_(10)
        seen[L.__name__] = (x.numpy().copy(), y.numpy().copy())
    np.testing.assert_array_equal(seen["pyflame_mlir"][0], seen["torch"][0])
    np.testing.assert_array_equal(seen["pyflame_mlir"][1], seen["torch"][1])


def test_gradient_flows_through_the_copies():
    x = pf.tensor([[1.0, 2.0]], requires_grad=True)
    y = pf.cat([x]) * 1 + x.repeat(1, 1) + pf.roll(x, 0) + pf.flip(x, []) \
        + pf.nn.functional.pad(x, (0, 0))
    (y * y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 50 * np.array([[1.0, 2.0]]))
