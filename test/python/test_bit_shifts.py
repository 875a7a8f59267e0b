"""``<< >>`` and ``pf.bitwise_left_shift``/``bitwise_right_shift`` (issue 14)
against torch 2.13: wrapping left shifts, arithmetic right shifts, shift
amounts that are negative or at least the bit width (torch: 0 for ``<<``,
the sign fill for ``>>``), promotion with Python numbers and bool, the
reflected and in-place forms, lazy and eager, and the float error."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from _oracles import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import pyflame_mlir as pf

_NP = {pf.int32: np.int32, pf.int64: np.int64}
_TORCH = {pf.int32: torch.int32, pf.int64: torch.int64}


def _check(got: pf.Tensor, want: torch.Tensor) -> None:
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("dtype", [pf.int32, pf.int64])
@settings(max_examples=examples(15), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_shifts_match_torch(mode: str, dtype: Any, data: st.DataObject) -> None:
    bits = 32 if dtype is pf.int32 else 64
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=4))
    x = data.draw(hnp.arrays(_NP[dtype], shape))
    s = data.draw(hnp.arrays(_NP[dtype], shape, elements=st.integers(-3, bits + 3)))
    for pf_fn, t_fn in ((pf.bitwise_left_shift, torch.bitwise_left_shift),
                        (pf.bitwise_right_shift, torch.bitwise_right_shift)):
        _check(pf_fn(pf.from_numpy(x), pf.from_numpy(s)),
               t_fn(torch.from_numpy(x), torch.from_numpy(s)))
    _check(pf.from_numpy(x) << pf.from_numpy(s), torch.from_numpy(x) << torch.from_numpy(s))
    _check(pf.from_numpy(x) >> pf.from_numpy(s), torch.from_numpy(x) >> torch.from_numpy(s))


def test_edge_shift_amounts_and_promotion() -> None:
    x = np.array([5, -7, 1, 100, -1, np.iinfo(np.int32).min], np.int32)
    t = torch.from_numpy(x)
    for amount in [-1, 0, 1, 30, 31, 32, 33, 200]:
        _check(pf.from_numpy(x) << amount, t << amount)
        _check(pf.from_numpy(x) >> amount, t >> amount)
        _check(pf.from_numpy(x.astype(np.int64)) << amount, t.long() << amount)
        _check(pf.from_numpy(x.astype(np.int64)) >> amount, t.long() >> amount)
    _check(3 << pf.tensor([1, 2]), 3 << torch.tensor([1, 2]))
    _check(64 >> pf.tensor([1, 2]), 64 >> torch.tensor([1, 2]))
    _check(pf.tensor([True, False]) << 1, torch.tensor([True, False]) << 1)
    _check(pf.tensor([1, 2], dtype=pf.int32) << pf.tensor([1, 2]),
           torch.tensor([1, 2], dtype=torch.int32) << torch.tensor([1, 2]))
    _check(pf.tensor([1, 2]).bitwise_left_shift(3), torch.tensor([1, 2]).bitwise_left_shift(3))
    _check(pf.bitwise_right_shift(-9, pf.tensor([1, 70])),
           torch.bitwise_right_shift(-9, torch.tensor([1, 70])))


def test_in_place_forms(mode: str) -> None:
    for op in ("__ilshift__", "__irshift__", "bitwise_left_shift_", "bitwise_right_shift_",
               "__iand__", "__ior__", "__ixor__", "bitwise_and_", "bitwise_or_", "bitwise_xor_"):
        x, t = pf.tensor([1, -6, 12], dtype=pf.int32), torch.tensor([1, -6, 12],
                                                                   dtype=torch.int32)
        y = getattr(x, op)(pf.tensor([2, 1, 3]))
        getattr(t, op)(torch.tensor([2, 1, 3]))
        assert y is x
        _check(x, t)
    x = pf.tensor([1, 2])
    alias = x
    x <<= 2
    assert x is alias
    np.testing.assert_array_equal(alias.numpy(), [4, 8])


def test_floats_and_bools_raise() -> None:
    with pytest.raises(TypeError, match="bitwise_left_shift.*integer.*float32"):
        pf.tensor([1.5]) << 2
    with pytest.raises(TypeError, match="bitwise_right_shift.*integer"):
        pf.tensor([1, 2]) >> 1.5
    with pytest.raises(TypeError, match="bitwise_left_shift.*bool"):
        pf.tensor([True]) << pf.tensor([True])
    for bad in (lambda: torch.tensor([1.5]) << 2, lambda: torch.tensor([True]) << torch.tensor(
            [True])):
        with pytest.raises(RuntimeError):
            bad()


@pytest.mark.parametrize("name", ["uint8", "int8", "int16"])
def test_narrow_integer_shifts_match_torch(name: str) -> None:
    dt = getattr(pf, name)
    info = np.iinfo(dt.np)
    x = np.array([0, 1, 5, 100, info.max, info.min, info.max // 3], dtype=dt.np)
    for amount in range(0, 18):
        _check(pf.from_numpy(x) << amount, torch.from_numpy(x) << amount)
        _check(pf.from_numpy(x) >> amount, torch.from_numpy(x) >> amount)
        s = np.full_like(x, min(amount, info.max))
        _check(pf.from_numpy(x) >> pf.from_numpy(s), torch.from_numpy(x) >> torch.from_numpy(s))
