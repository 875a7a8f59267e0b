"""Session 15's review: silent wrong answers and errors torch/jax do not raise,
each checked against torch 2.13 / jax."""

import numpy as np
import pytest
import torch

import pyflame_mlir as pf


@pytest.mark.parametrize("make", [
    lambda m, o: m.zeros(2, 2, out=o(np.ones((2, 2), np.int64))),
    lambda m, o: m.full((3,), 1.5, out=o(np.zeros(3, np.int32))),
    lambda m, o: m.eye(2, out=o(np.zeros((2, 2), np.bool_))),
    lambda m, o: m.linspace(0, 1, 7, out=o(np.zeros(7, np.float64))),
    lambda m, o: m.arange(5, out=o(np.zeros(5, np.float32))),
])
def test_factory_takes_dtype_from_out(make):
    # torch's factories take their dtype from out= (zeros(out=int64) raised; linspace
    # into a float64 out was computed in float32)
    got = make(pf, pf.tensor).numpy()
    want = make(torch, torch.tensor).numpy()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_factory_out_dtype_mismatch_still_raises():
    with pytest.raises(RuntimeError):
        pf.zeros(2, dtype=pf.float32, out=pf.zeros(2, dtype=pf.int32))
