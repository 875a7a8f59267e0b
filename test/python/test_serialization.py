"""pf.save / pf.load: safetensors round trips (nested structures, optimizer
state dicts, every dtype incl. bf16), interop with safetensors' own torch
reader, and clear errors for truncated, corrupted or foreign files."""

from __future__ import annotations

import io
import json
import pickle
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
        with pytest.raises(ValueError, match=f"pf.load: .*{name} (is not a valid safetensors|"
                                             "is a plain pickle)"):
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


# ---- torch.save files (PyTorch's zip format), read as torch.load(weights_only=True) ----

class _Net(torch.nn.Module):
    def __init__(self, lib):
        super().__init__()
        self.body = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(),
                                      lib.nn.BatchNorm1d(4), lib.nn.Linear(4, 2))

    def forward(self, x):
        return self.body(x)


class _PfNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.BatchNorm1d(4), nn.Linear(4, 2))

    def forward(self, x):
        return self.body(x)


def test_a_torch_checkpoint_resumes_training_with_torch_s_numbers(tmp_path):
    torch.manual_seed(0)
    tm = _Net(torch)
    topt = torch.optim.AdamW(tm.parameters(), lr=1e-2)
    x = np.random.default_rng(0).standard_normal((8, 3)).astype(np.float32)
    for _ in range(3):
        topt.zero_grad()
        tm(torch.tensor(x)).pow(2).mean().backward()
        topt.step()
    path = tmp_path / "ckpt.pt"
    torch.save({"model": tm.state_dict(), "opt": topt.state_dict(), "epoch": 3,
                "note": "hello", "betas": (0.9, 0.99), "bf16": torch.ones(2, dtype=torch.bfloat16),
                "strided": torch.arange(12.0).reshape(3, 4).t()[1:, ::2],
                "param": torch.nn.Parameter(torch.ones(2))}, path)
    got = pf.load(str(path), map_location="cpu")
    assert got["epoch"] == 3 and got["note"] == "hello" and got["betas"] == (0.9, 0.99)
    assert got["bf16"].dtype is pf.bfloat16
    np.testing.assert_array_equal(got["strided"].numpy(),
                                  torch.arange(12.0).reshape(3, 4).t()[1:, ::2].numpy())
    assert isinstance(got["param"], nn.Parameter) and got["param"].requires_grad
    pm = _PfNet()
    pm.load_state_dict(got["model"])
    popt = optim.AdamW(pm.parameters(), lr=1e-2)
    popt.load_state_dict(got["opt"])
    for _ in range(3):  # both continue from the checkpoint
        topt.zero_grad()
        tl = tm(torch.tensor(x)).pow(2).mean()
        tl.backward()
        topt.step()
        popt.zero_grad()
        pl = pm(pf.tensor(x)).pow(2).mean()
        pl.backward()
        popt.step()
        np.testing.assert_allclose(pl.item(), tl.item(), rtol=1e-5)
    for (name, p), tp in zip(pm.named_parameters(), tm.parameters()):
        np.testing.assert_allclose(p.numpy(), tp.detach().numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=name)


class _Evil:
    def __reduce__(self):
        return (print, ("this must never run",))


def test_a_torch_checkpoint_with_other_objects_is_refused_by_name(tmp_path, capsys):
    path = tmp_path / "evil.pt"
    torch.save({"w": torch.ones(2), "x": _Evil()}, path)
    with pytest.raises(ValueError, match=r"holds a .*print, which is not read"):
        pf.load(path)
    assert "must never run" not in capsys.readouterr().out
    with pytest.raises(ValueError, match=r"holds a .*print, which is not read"):
        pf.load(path, weights_only=False)  # still weights only: never runs the pickle
    assert "must never run" not in capsys.readouterr().out
    good = tmp_path / "good.pt"
    torch.save({"w": torch.ones(2)}, good)  # (checkpoint loaders pass weights_only=False)
    np.testing.assert_array_equal(pf.load(good, weights_only=False)["w"].numpy(), [1.0, 1.0])


def test_damaged_torch_checkpoints_raise_naming_the_file(tmp_path):
    good = tmp_path / "good.pt"
    torch.save({"w": torch.arange(100.0)}, good)
    data = good.read_bytes()
    for name, bad in (("truncated", data[: len(data) // 2]), ("cut", data[:300])):
        path = tmp_path / f"{name}.pt"
        path.write_bytes(bad)
        with pytest.raises(ValueError, match=rf"pf.load: .*{name}.pt"):
            pf.load(path)
    plain = tmp_path / "plain.pkl"
    plain.write_bytes(pickle.dumps({"a": list(range(10))}, protocol=4))
    with pytest.raises(ValueError, match="plain pickle"):
        pf.load(plain)
