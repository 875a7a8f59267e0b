"""``repr(tensor)`` and ``print(tensor)`` as torch prints them (the Tensors
tutorial prints ``f"First row: {tensor[0]}"``): number format, widths, line
wrapping, summarizing, suffixes and ``set_printoptions``; only the dtype's
module name differs (``pyflame.float64`` for ``torch.float64``)."""
import numpy as np
import pytest
import torch

import pyflame_mlir as pf

_RNG = np.random.default_rng(0)
_ARRAYS = [
    _RNG.standard_normal((3, 4)), _RNG.standard_normal(30) * 1e5,
    _RNG.standard_normal((2, 3, 4)), _RNG.standard_normal((40, 40)),
    _RNG.integers(-100, 100, (5, 7)), _RNG.integers(0, 2, (3, 3)).astype(bool),
    np.array([1e-5, 1.0, np.nan, np.inf]), np.array([0.0, 0.0]), np.array([np.nan, -np.inf]),
    np.array([1e9, 2.0]), np.array([1e3, 2e6]), _RNG.standard_normal((2, 2000)),
    np.zeros((0, 3)), np.zeros(0), np.zeros(0, dtype=np.int64), np.array(3.5), np.array(7),
    np.array(True), np.arange(100.0).reshape(10, 10) - 50, _RNG.integers(0, 10**12, 30),
    np.array([-0.0, 0.5]), np.array([1.5e-4, 3.0]), np.array([0.5, 1.25, 3.0]),
]


def _same(make):
    theirs = repr(make(torch)).replace("torch.", "pyflame.")
    ours = repr(make(pf))
    assert ours == theirs
    assert str(make(pf)) == ours


@pytest.mark.parametrize("i", range(len(_ARRAYS)))
@pytest.mark.parametrize("dtype", [None, "float32", "float16"])
def test_repr_as_torch(i, dtype):
    a = _ARRAYS[i]
    if dtype is not None:
        if a.dtype.kind != "f":
            pytest.skip("a float dtype for float data")
        a = a.astype(dtype)
    if a.dtype == np.float64 and a.ndim == 2 and a.shape[0] >= 40:
        pytest.skip("the dtype suffix's length decides the wrap (torch. vs pyflame.)")
    _same(lambda m: m.tensor(a))


@pytest.mark.parametrize("opts", [{"precision": 2}, {"threshold": 5, "edgeitems": 1},
                                  {"sci_mode": True}, {"sci_mode": False}, {"linewidth": 40},
                                  {"profile": "short"}, {"profile": "full"}])
def test_repr_under_printoptions(opts):
    try:
        for m in (torch, pf):
            m.set_printoptions(**opts)
        for a in (_ARRAYS[0], _ARRAYS[1], _ARRAYS[2], _ARRAYS[6].astype(np.float32),
                  _ARRAYS[4], _ARRAYS[22].astype(np.float32)):
            _same(lambda m, a=a: m.tensor(a))
    finally:
        for m in (torch, pf):
            m.set_printoptions(profile="default")
            m.set_printoptions(sci_mode=None)


def test_repr_suffixes_and_fstrings():
    _same(lambda m: m.tensor([1.5, 2.25], requires_grad=True) * 2)
    _same(lambda m: m.tensor([1.5, 2.25], requires_grad=True).sum())
    _same(lambda m: m.tensor([1.5, 2.25], requires_grad=True))
    _same(lambda m: m.zeros(2, 0, dtype=m.int32))
    _same(lambda m: m.ones(3, dtype=m.int32))
    assert repr(pf.nn.Parameter(pf.tensor([0.5, 1.0]))) == \
        repr(torch.nn.Parameter(torch.tensor([0.5, 1.0])))
    t, p = torch.eye(2) * 0.5, pf.eye(2) * 0.5
    assert f"First row: {p[0]}" == f"First row: {t[0]}"
    assert f"{p.sum()} {p.sum():.2f}" == f"{t.sum()} {t.sum():.2f}"
    prev = pf.get_default_dtype()
    try:
        torch.set_default_dtype(torch.float64)
        pf.set_default_dtype(pf.float64)
        _same(lambda m: m.tensor([0.1, 0.2]))
        _same(lambda m: m.tensor([0.1, 0.2], dtype=m.float32))
    finally:
        torch.set_default_dtype(torch.float32)
        pf.set_default_dtype(prev)
