"""pf.save / pf.load: safetensors round trips (nested structures, optimizer
state dicts, every dtype incl. bf16), interop with safetensors' own torch
reader, and clear errors for truncated, corrupted or foreign files."""

from __future__ import annotations

import io
import json
import struct
from collections import OrderedDict

import ml_dtypes
import numpy as np
import pytest
import torch
from safetensors.torch import load_file, save_file

import pyflame_mlir as pf
from pyflame_mlir import nn, optim


def _arrays():
    rng = np.random.default_rng(0)
    return {
        "f64": rng.standard_normal((2, 3)),
        "f32": rng.standard_normal(4).astype(np.float32),
        "f16": rng.standard_normal((1, 2)).astype(np.float16),
        "bf16": rng.standard_normal(5).astype(ml_dtypes.bfloat16),
        "i64": rng.integers(-9, 9, (3,)),
        "i32": rng.integers(-9, 9, (2, 2)).astype(np.int32),
        "bool": rng.random(3) > 0.5,
        "scalar": np.float32(2.5).reshape(()),
    }


def test_every_dtype_round_trips_bit_exactly(tmp_path):
    arrays = _arrays()
    path = tmp_path / "t.safetensors"
    pf.save({k: pf.tensor(v) for k, v in arrays.items()}, path)
    back = pf.load(path)
    assert list(back) == list(arrays)
    for k, a in arrays.items():
        got = back[k].numpy()
        assert got.dtype == a.dtype and got.shape == a.shape, k
        assert got.tobytes() == a.tobytes(), k
    # safetensors' own torch reader reads the same file (the names are ours)
    theirs = load_file(str(path))
    assert theirs["bf16"].dtype == torch.bfloat16
    np.testing.assert_array_equal(theirs["bf16"].float().numpy(),
                                  arrays["bf16"].astype(np.float32))


def test_a_file_written_by_safetensors_torch_loads(tmp_path):
    path = tmp_path / "torch.safetensors"
    src = {"w": torch.randn(3, 2), "h": torch.randn(2).to(torch.bfloat16)}
    save_file(src, str(path))
    back = pf.load(path)
    np.testing.assert_array_equal(back["w"].numpy(), src["w"].numpy())
    assert back["h"].dtype == pf.bfloat16


def test_nested_structures_and_optimizer_state(tmp_path):
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2))
    opt = optim.Adam(m.parameters(), lr=0.01, amsgrad=True)
    m(pf.randn(5, 3)).sum().backward()
    opt.step()  # lazy: save computes it
    opt.zero_grad()
    obj = {"model": m.state_dict(), "optim": opt.state_dict(), "epoch": 7,
           "misc": [1.5, float("inf"), float("nan"), None, "text", True, (1, 2)],
           "ordered": OrderedDict(b=1, a=2)}
    buf = io.BytesIO()
    pf.save(obj, buf)
    buf.seek(0)
    back = pf.load(buf)
    assert back["epoch"] == 7 and back["misc"][0] == 1.5 and back["misc"][1] == float("inf")
    assert np.isnan(back["misc"][2]) and back["misc"][3:] == [None, "text", True, (1, 2)]
    assert isinstance(back["ordered"], OrderedDict) and list(back["ordered"]) == ["b", "a"]
    assert list(back["model"]) == list(m.state_dict())
    assert back["optim"]["param_groups"] == opt.state_dict()["param_groups"]
    assert list(back["optim"]["state"]) == [0, 1, 2, 3]  # int keys stay ints
    for k, s in opt.state_dict()["state"].items():
        for key, v in s.items():
            np.testing.assert_array_equal(back["optim"]["state"][k][key].numpy(), v.numpy())
    # the checkpoint restores a model and an optimizer that go on identically
    m2 = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2))
    m2.load_state_dict(back["model"])
    opt2 = optim.Adam(m2.parameters(), lr=0.01, amsgrad=True)
    opt2.load_state_dict(back["optim"])
    x = pf.randn(5, 3)
    for model, o in ((m, opt), (m2, opt2)):
        model(x).sum().backward()
        o.step()
    for p, q in zip(m.parameters(), m2.parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy())


def test_tied_weights_are_stored_once(tmp_path):
    w = pf.randn(4, 3)
    path = tmp_path / "tied.safetensors"
    pf.save({"a": w, "b": w}, path)
    assert list(load_file(str(path))) == ["a"]
    back = pf.load(path)
    assert back["a"] is back["b"]


def test_unsupported_objects_are_refused_not_pickled(tmp_path):
    with pytest.raises(TypeError, match="cannot save a builtins.object at x.0"):
        pf.save({"x": [object()]}, tmp_path / "bad.safetensors")
    with pytest.raises(TypeError, match="dict key"):
        pf.save({(1, 2): pf.zeros(1)}, tmp_path / "bad.safetensors")
    assert not (tmp_path / "bad.safetensors").exists()


def _valid(tmp_path):
    path = tmp_path / "ok.safetensors"
    pf.save({"w": pf.randn(8, 8), "n": 3}, path)
    return path.read_bytes()


def test_truncated_corrupted_and_foreign_files_raise_naming_the_file(tmp_path):
    data = _valid(tmp_path)
    cases = {
        "truncated.safetensors": data[: len(data) - 10],
        "tiny.safetensors": data[:5],
        "header.safetensors": data[:8] + b"{not json" + data[17:],
        "pickle.pt": b"\x80\x04\x95" + b"\x00" * 64,
        "text.txt": b"hello world, this is not a checkpoint at all",
    }
    for name, content in cases.items():
        path = tmp_path / name
        path.write_bytes(content)
        with pytest.raises(ValueError, match=f"pf.load: .*{name} is not a valid safetensors"):
            pf.load(path)
    # a valid safetensors file whose structure metadata was tampered with
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    header["__metadata__"]["pyflame"] = json.dumps({"version": 1, "tree": {"tensor": "zz"}})
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    path = tmp_path / "meta.safetensors"
    path.write_bytes(struct.pack("<Q", len(text)) + text + data[8 + n:])
    with pytest.raises(ValueError, match="meta.safetensors .*bad structure metadata"):
        pf.load(path)
    with pytest.raises(FileNotFoundError):
        pf.load(tmp_path / "missing.safetensors")
