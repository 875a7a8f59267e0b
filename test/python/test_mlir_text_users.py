"""MLIR text written by hand, the way other tools print it, into
``pf.load_mlir`` and ``pyflame-opt``: upstream constants and calls,
aliases, locations, generic form; bad text is a located error, never a
traceback. Values are checked against numpy."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest
from pyflame_mlir.tools.pyflame_opt import flat_pipeline, main, mlir_style_argv

import pyflame_mlir as pf

A = np.arange(4, dtype=np.float32)


def test_upstream_constant_alias_loc_and_generic_form_run() -> None:
    prog = pf.load_mlir('''
// a comment, a type alias, locations and both op forms
!t = tensor<4xf32>
#loc = loc("model.py":3:4)
module attributes {pf.version = 1 : i64} {
  func.func @main(%a: !t loc("in":1:1), %b: !t) -> (!t, !t) {
    %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : !t
    %s = arith.constant dense<0.5> : tensor<f32>
    %0 = "pyflame.mul"(%a, %c) : (!t, !t) -> !t loc(#loc)
    %1 = pyflame.mul %0, %s : (!t, tensor<f32>) -> !t loc(fused["x", "y"])
    %2 = pyflame.add %1, %b : (!t, !t) -> !t
    return %2, %1 : !t, !t
  } loc(unknown)
}''')
    out, half = prog(A, np.ones(4, np.float32))
    np.testing.assert_allclose(half.numpy(), A * np.array([1, 2, 3, 4]) * 0.5)
    np.testing.assert_allclose(out.numpy(), A * np.array([1, 2, 3, 4]) * 0.5 + 1)


def test_calls_are_inlined(monkeypatch: pytest.MonkeyPatch) -> None:
    prog = pf.load_mlir('''
func.func private @h(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = pyflame.exp %a : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @g(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = func.call @h(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = pyflame.add %0, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1, %0 : tensor<4xf32>, tensor<4xf32>
}
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0, %1 = func.call @g(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  %2 = pyflame.mul %0, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}''')
    np.testing.assert_allclose(prog(A).numpy(), (np.exp(A) + A) * np.exp(A), rtol=1e-6)
    monkeypatch.setattr(pf.CONFIG, "eager", False)  # to_mlir prints what is still lazy
    x = pf.tensor(A)  # a differentiated program (private function + pyflame.vjp) still runs
    text = pf.to_mlir(pf.grad(lambda v: (v.sin() * v).sum())(x))
    np.testing.assert_allclose(pf.load_mlir(text)(A).numpy(), np.sin(A) + A * np.cos(A),
                               rtol=1e-6)


@pytest.mark.parametrize(("text", "where", "message"), [
    ("func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
     "  %0 = pyflame.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<5xf32>\n"
     "  return %0 : tensor<5xf32>\n}", "<string>:2:3", "'pyflame.add' op result #0"),
    ("func.func @f(%a: tensor<?xf32>) -> tensor<?xf32> {\n"
     "  %0 = pyflame.add %a, %a : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>\n"
     "  return %0 : tensor<?xf32>\n}", "<string>:2:3", "static shape"),
    ("func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
     "  %c = arith.constant 2.0 : f32\n"
     "  %0 = arith.addf %c, %c : f32\n"
     "  return %a : tensor<4xf32>\n}", "<string>:2:3", "'arith.constant' is not supported"),
    ("func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
     "  %0 = func.call @f(%a) : (tensor<4xf32>) -> tensor<4xf32>\n"
     "  return %0 : tensor<4xf32>\n}", "<string>:2:3", "func.call"),
    ("func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
     "  %c = arith.constant 1.0 : f32\n"
     "  %e = tensor.from_elements %c, %c, %c, %c : tensor<4xf32>\n"
     "  return %e : tensor<4xf32>\n}", "<string>:3:3", "'tensor.from_elements' is not supported"),
])
def test_bad_text_is_a_located_error(text: str, where: str, message: str) -> None:
    with pytest.raises(pf.MlirLoadError) as e:
        pf.load_mlir(text)
    assert str(e.value).startswith(where) and ": error: " in str(e.value)
    assert message in str(e.value)


def test_flat_pipeline_and_mlir_style_argv() -> None:
    assert flat_pipeline("builtin.module(func.func(cse,dce),canonicalize)") == \
        "cse,dce,canonicalize"
    assert flat_pipeline('fixed-point{pipeline="cse,dce" max-iterations=2},fuse') == \
        'fixed-point{pipeline="cse,dce" max-iterations=2},fuse'
    assert mlir_style_argv(["in.mlir", "-split-input-file", "--cse", "-dce",
                            "--algebraic-simplify=fast-math=true", "-o", "-"],
                           ["cse", "dce", "algebraic-simplify"]) == \
        ["in.mlir", "--split-input-file", "-o", "-", "--passes",
         "cse,dce,algebraic-simplify{fast-math=true}"]


@pytest.mark.parametrize("argv", [["-p", "cse{"], ["--bogus"], ["-p", "builtin.module(cse"],
                                  ["--pass-pipeline", "cse(dce)"]])
def test_bad_command_lines_exit_1_without_traceback(argv: list[str], tmp_path) -> None:
    path = tmp_path / "in.mlir"
    path.write_text("func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                    "  return %a : tensor<4xf32>\n}\n")
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        assert main([str(path), *argv]) == 1
    assert "error" in err.getvalue() and "Traceback" not in err.getvalue()
