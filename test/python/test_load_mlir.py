"""``pf.load_mlir`` (issue 19): what ``pf.to_mlir`` prints and ``pyflame-opt``
writes, a user runs. Results are compared with numpy (and torch for a
gradient), never with our own output."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from pyflame_mlir.tools.pyflame_opt import main as pyflame_opt

import pyflame_mlir as pf

MLP = """
func.func @main(%x: tensor<4x3xf32>, %w: tensor<3x2xf32>) -> (tensor<4x2xf32>, tensor<f32>) {
  %0 = pyflame.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %1 = pyflame.relu %0 : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %2 = pyflame.softmax %1 {dim = 1 : i64} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %3 = pyflame.sum %2 {dims = array<i64: 0, 1>, keepdim = false} : (tensor<4x2xf32>) -> tensor<f32>
  func.return %2, %3 : tensor<4x2xf32>, tensor<f32>
}
"""


def _mlp_np(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    h = np.maximum(x @ w, 0)
    e = np.exp(h - h.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def _data(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((4, 3)).astype(np.float32),
            rng.standard_normal((3, 2)).astype(np.float32))


def test_handwritten_text_runs():
    run = pf.load_mlir(MLP)
    x, w = _data()
    probs, total = run(x, w)
    np.testing.assert_allclose(probs.numpy(), _mlp_np(x, w), rtol=1e-5, atol=1e-6)
    assert total.item() == pytest.approx(4.0, rel=1e-5)
    assert run.input_specs == [((4, 3), pf.float32), ((3, 2), pf.float32)]


@pytest.mark.parametrize("pipeline", ["", "default", "canonicalize,cse,fuse"])
def test_what_pyflame_opt_writes_runs(tmp_path, capsys, pipeline):
    src = tmp_path / "in.mlir"
    src.write_text(MLP)
    out = tmp_path / "out.mlir"
    argv = [str(src), "-o", str(out)] + (["-p", pipeline] if pipeline else [])
    assert pyflame_opt(argv) == 0, capsys.readouterr().err
    x, w = _data(1)
    probs, _ = pf.load_mlir(out)(pf.from_numpy(x), w)  # a path; a Tensor and an array
    np.testing.assert_allclose(probs.numpy(), _mlp_np(x, w), rtol=1e-5, atol=1e-6)


def test_to_mlir_round_trip_with_a_gradient(lazy):
    """A vjp (autodiff) node survives text: d/dx sum(tanh(x) * c) vs torch.
    Lazy-only: it prints the recorded vjp node (in eager mode it has run)."""
    xv = np.linspace(-2, 2, 6, dtype=np.float32).reshape(2, 3)
    x = pf.from_numpy(xv)
    _, vjp_fn = pf.vjp(lambda t: (pf.tanh(t) * 3.0).sum(), x)
    (gx,) = vjp_fn(pf.ones([]))
    run = pf.load_mlir(pf.to_mlir(gx))
    xt = torch.tensor(xv, requires_grad=True)
    (torch.tanh(xt) * 3.0).sum().backward()
    np.testing.assert_allclose(run(xv).numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_runs_on_another_backend():
    x, w = _data(2)
    with pf.backend("csl"):  # the WSE simulator
        probs, _ = pf.load_mlir(MLP)(x, w)
    np.testing.assert_allclose(probs.numpy(), _mlp_np(x, w), rtol=1e-4, atol=1e-5)


def test_arguments_are_checked_against_the_function_type():
    run = pf.load_mlir(MLP)
    x, w = _data()
    with pytest.raises(TypeError, match="takes 2 arguments, got 1"):
        run(x)
    with pytest.raises(TypeError, match=r"argument 1 must be float32\[3, 2\] "
                                        r"\(tensor<3x2xf32>\), got float32\[2, 3\]"):
        run(x, w.T)
    with pytest.raises(TypeError, match=r"argument 0 must be float32\[4, 3\].*got float64"):
        run(x.astype(np.float64), w)


@pytest.mark.parametrize("text, match", [
    ("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  %0 = pyflame.nope %a : "
     "(tensor<2xf32>) -> tensor<2xf32>\n  func.return %0 : tensor<2xf32>\n}\n",
     r"<string>:2:\d+: error: .*pyflame.nope"),
    ("func.func @main(%a: tensor<2xf32>) -> tensor<3xf32> {\n  %0 = pyflame.neg %a : "
     "(tensor<2xf32>) -> tensor<3xf32>\n  func.return %0 : tensor<3xf32>\n}\n",
     "does not verify"),
    ("builtin.module {\n" * 5000 + "}\n" * 5000, r"<string>:129:\d+: error: brackets nested"),
    ("func.func @a() {\n  func.return\n}\nfunc.func @b() {\n  func.return\n}\n",
     "expected one public function to run; found @a, @b"),
    ("func.func @main(%a: memref<2xf32>) {\n  func.return\n}\n", "argument 0 of @main"),
])
def test_bad_text_raises_a_located_error(text, match):
    with pytest.raises(pf.MlirLoadError, match=match):
        pf.load_mlir(text)


def test_entry_selects_the_function():
    text = MLP + MLP.replace("@main", "@other")
    run = pf.load_mlir(text, entry="other")
    assert run.entry == "other"
    x, w = _data(3)
    np.testing.assert_allclose(run(x, w)[0].numpy(), _mlp_np(x, w), rtol=1e-5, atol=1e-6)


def test_upstream_debug_info_locations_load_and_name_their_place():
    """What ``mlir-opt --mlir-print-op-generic --mlir-print-debuginfo`` prints:
    location aliases defined after their use, at the end of the module."""
    text = """
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<2x3xf32>) -> tensor<2x3xf32>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<2x3xf32> loc("in.mlir":3:8)):
    %0 = "pyflame.exp"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc(#loc4)
    "func.return"(%0) : (tensor<2x3xf32>) -> () loc(#loc5)
  }) : () -> () loc(#loc1)
}) : () -> () loc(#loc)
#loc = loc("in.mlir":1:1)
#loc1 = loc("in.mlir":2:3)
#loc4 = loc(callsite("model.py":4:10 at "train.py":9:1))
#loc5 = loc("in.mlir":6:5)
"""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(pf.load_mlir(text)(x).numpy(), np.exp(x), rtol=1e-6)
    bad = text.replace("-> tensor<2x3xf32> loc(#loc4)", "-> tensor<3x2xf32> loc(#loc4)") \
        .replace('"func.return"(%0) : (tensor<2x3xf32>)', '"func.return"(%0) : (tensor<3x2xf32>)')
    with pytest.raises(Exception, match=r"error: .*pyflame.exp"):
        pf.load_mlir(bad)
    named = bad.replace("loc(#loc4)", 'loc("model.py":4:10)')
    with pytest.raises(Exception, match=r"^model\.py:4:10: error: "):
        pf.load_mlir(named)
