"""uint8, int8 and int16 against torch 2.13: PyTorch's promotion between
them (uint8 with int8 is int16), wrap-around arithmetic, Python-number
operands converted as C casts, the overflow checks of ``tensor``/``full``,
reductions widening to int64, and the backends that refuse them by name.
(The dtype-exhaustive sweeps of test_promotion.py, test_ops_forward.py and
test_ops_hypothesis.py cover them too, through ``_oracles.ALL_DTYPES``.)"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyflame_mlir as pf

VALUES = {"uint8": [0, 1, 200, 255, 7], "int8": [-128, -1, 0, 100, 127],
          "int16": [-32768, -3, 0, 300, 32767]}
CASES = {
    "neg": lambda L, a: -a, "abs": lambda L, a: a.abs(), "sign": lambda L, a: a.sign(),
    "invert": lambda L, a: ~a, "add_self": lambda L, a: a + a, "mul_self": lambda L, a: a * a,
    "add_300": lambda L, a: a + 300, "sub_from_3": lambda L, a: 3 - a,
    "mul_float": lambda L, a: a * 2.5, "div": lambda L, a: a / 3, "floordiv": lambda L, a: a // 3,
    "mod": lambda L, a: a % 3, "sum": lambda L, a: a.sum(), "prod": lambda L, a: a.prod(),
    "cumsum": lambda L, a: a.cumsum(0), "max": lambda L, a: a.max(),
    "argmax": lambda L, a: a.argmax(), "sort": lambda L, a: a.sort().values,
    "to_float": lambda L, a: a.float(), "byte": lambda L, a: a.byte(),
    "char": lambda L, a: a.char(), "short": lambda L, a: a.short(),
    "from_float": lambda L, a: (a.float() * 0.5).to(a.dtype),
    "clamp": lambda L, a: a.clamp(0, 100), "eq": lambda L, a: a == 0,
    "where": lambda L, a: L.where(a > 5, a, 0), "pow": lambda L, a: a ** 2,
    "and": lambda L, a: a & 6, "matmul": lambda L, a: a.reshape(5, 1) @ a.reshape(1, 5),
    "cat_int64": lambda L, a: L.cat([a, a.long()]), "mask": lambda L, a: a[a > 0],
    "with_uint8": lambda L, a: a + L.tensor([1, 2, 3, 4, 250], dtype=L.uint8),
    "with_int8": lambda L, a: a * L.tensor([1, -2, 3, -4, 5], dtype=L.int8),
    "with_0d_int64": lambda L, a: a + L.tensor(1000),
    "scatter_add": lambda L, a: L.zeros(3, dtype=a.dtype).scatter_add(
        0, L.tensor([0, 1, 1, 2, 0]), a),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("name", sorted(VALUES))
def test_ops_match_torch(mode: str, name: str, case: str) -> None:
    f = CASES[case]
    theirs = f(torch, torch.tensor(VALUES[name], dtype=getattr(torch, name)))
    ours = f(pf, pf.tensor(VALUES[name], dtype=getattr(pf, name)))
    assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("make", [
    lambda L: L.tensor([300], dtype=L.uint8), lambda L: L.tensor([-1.5], dtype=L.uint8),
    lambda L: L.tensor([255.5], dtype=L.uint8), lambda L: L.tensor([128], dtype=L.int8),
    lambda L: L.full((2,), -129, dtype=L.int8), lambda L: L.full((2,), 300, dtype=L.uint8),
    lambda L: L.tensor([float("nan")], dtype=L.int16), lambda L: L.tensor([40000], dtype=L.int16),
])
def test_overflowing_python_values_raise_as_torch(make) -> None:
    with pytest.raises(RuntimeError, match="without overflow"):
        make(torch)
    with pytest.raises(RuntimeError, match="without overflow"):
        make(pf)


@pytest.mark.parametrize("make", [
    lambda L: L.tensor([-3], dtype=L.uint8), lambda L: L.full((2,), -2, dtype=L.uint8),
    lambda L: L.full((2,), 2.7, dtype=L.int8), lambda L: L.tensor([1.7, 255.0], dtype=L.uint8),
    lambda L: L.tensor(np.array([300, -1]), dtype=L.uint8),  # arrays: C casts, no check
    lambda L: L.tensor([1, 2], dtype=L.int32) + 2 ** 40,  # operands: C casts from 64 bits
])
def test_values_torch_accepts(make) -> None:
    np.testing.assert_array_equal(make(pf).numpy(), make(torch).numpy())


def test_names_and_limits() -> None:
    assert pf.dtype("byte") is pf.uint8 and pf.dtype("char") is pf.int8
    assert pf.short is pf.int16 and pf.dtype(torch.uint8) is pf.uint8
    for name in VALUES:
        ours, theirs = pf.iinfo(getattr(pf, name)), torch.iinfo(getattr(torch, name))
        assert (ours.min, ours.max, ours.bits) == (theirs.min, theirs.max, theirs.bits)
    assert pf.from_numpy(np.zeros(2, np.uint8)).dtype is pf.uint8


def test_checkpoint_and_graph_file_round_trip(tmp_path, lazy) -> None:
    x = {n: pf.tensor(v, dtype=getattr(pf, n)) for n, v in VALUES.items()}
    pf.save(x, tmp_path / "x.safetensors")
    back = pf.load(tmp_path / "x.safetensors")
    for n in VALUES:
        assert back[n].dtype is x[n].dtype
        np.testing.assert_array_equal(back[n].numpy(), x[n].numpy())
    a = pf.tensor(VALUES["uint8"], dtype=pf.uint8)
    out = (a.to(pf.int16) * 3 - 7).to(pf.int8)
    pf.save_graph([out], tmp_path / "g.pfgb")
    prog = pf.load_graph(tmp_path / "g.pfgb")
    got = prog(a)
    got = got[0] if isinstance(got, list | tuple) else got
    np.testing.assert_array_equal(got.numpy(), out.numpy())


@pytest.mark.parametrize("backend", ["mlir", "max"])
def test_backends_without_them_refuse_by_name(backend: str) -> None:
    pytest.importorskip("max.graph" if backend == "max" else "mlir.ir",
                        reason=f"the {backend} backend's extra is not installed")
    a = pf.tensor([1, 2, 3], dtype=pf.uint8)
    with pf.backend(backend), pytest.raises(ValueError, match="uint8 tensors are not supported"):
        (a + a).numpy()
