"""In-place ops keep PyTorch's dtype rules: a result that cannot be cast to
the tensor's dtype without changing kind (float into an integer or bool
tensor, anything but bool into a bool tensor) raises instead of being
truncated; ops that write given values (fill_, copy_, masked_fill_,
``x[i] = v``) cast them; ops that write a source tensor (scatter_,
index_add_, index_copy_, index_put_, masked_scatter_, put_) need its dtype."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyflame_mlir as pf

OPS = {
    "add_ float": lambda L, x: x.add_(0.5),
    "add_ int": lambda L, x: x.add_(2),
    "mul_ float tensor": lambda L, x: x.mul_(L.tensor([1.5, 2.0])),
    "+= float": lambda L, x: x.__iadd__(0.5),
    "/= int": lambda L, x: x.__itruediv__(2),
    "div_ floor": lambda L, x: x.div_(2, rounding_mode="floor"),
    "div_ trunc": lambda L, x: x.div_(-2, rounding_mode="trunc"),
    "sqrt_": lambda L, x: x.sqrt_(),
    "pow_ float": lambda L, x: x.pow_(0.5),
    "pow_ int": lambda L, x: x.pow_(2),
    "clamp_ float": lambda L, x: x.clamp_(0.5),
    "clamp_ int": lambda L, x: x.clamp_(1),
    "fill_ float": lambda L, x: x.fill_(1.7),
    "copy_ float": lambda L, x: x.copy_(L.tensor([1.7, 2.2])),
    "masked_fill_": lambda L, x: x.masked_fill_(L.tensor([True, False]), 2.5),
    "setitem float": lambda L, x: x.__setitem__(0, 2.5),
    "index_put_ float": lambda L, x: x.index_put_((L.tensor([0]),), L.tensor([2.5])),
    "index_fill_": lambda L, x: x.index_fill_(0, L.tensor([1]), 3.5),
    "scatter_ value": lambda L, x: x.scatter_(0, L.tensor([1]), 3.5),
    "scatter_ src float": lambda L, x: x.scatter_(0, L.tensor([1]), L.tensor([3.5])),
    "index_add_ float": lambda L, x: x.index_add_(0, L.tensor([1]), L.tensor([3.5])),
    "index_copy_ float": lambda L, x: x.index_copy_(0, L.tensor([1]), L.tensor([3.5])),
    "masked_scatter_ float": lambda L, x: x.masked_scatter_(L.tensor([True, False]),
                                                            L.tensor([3.5])),
    "put_ float": lambda L, x: x.put_(L.tensor([1]), L.tensor([3.5])),
    "remainder_ float": lambda L, x: x.remainder_(1.5),
    "fmod_ int": lambda L, x: x.fmod_(2),
    "eq_": lambda L, x: x.eq_(1),
    "bitwise_and_": lambda L, x: x.bitwise_and_(3),
    "square_": lambda L, x: x.square_(),
    "sigmoid_": lambda L, x: x.sigmoid_(),
}


def _outcome(L, dtype: str, f) -> tuple:
    x = L.tensor([True, False] if dtype == "bool" else [1, 2], dtype=getattr(L, dtype))
    try:
        f(L, x)
    except (RuntimeError, TypeError, NotImplementedError, ValueError):
        return ("raises",)
    return np.asarray(x.numpy()).tolist(), str(x.dtype).split(".")[-1]


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool", "float32", "float64"])
@pytest.mark.parametrize("name", list(OPS))
def test_in_place_dtype_rules_match_torch(name, dtype):
    want = _outcome(torch, dtype, OPS[name])
    got = _outcome(pf, dtype, OPS[name])
    if len(want) == len(got) == 2 and "float" in dtype:
        np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
        assert got[1] == want[1]
        return
    assert got == want


def test_the_error_names_both_types():
    x = pf.tensor([1, 2])
    with pytest.raises(RuntimeError, match="add_: result type Float can't be cast to the "
                                           "desired output type Long"):
        x.add_(0.5)
    with pytest.raises(RuntimeError, match="index_add.*same dtype.*int64.*float32"):
        x.index_add_(0, pf.tensor([0]), pf.tensor([1.5]))
    np.testing.assert_array_equal(x.numpy(), [1, 2])  # nothing was written
