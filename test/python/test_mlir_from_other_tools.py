# ruff: noqa: E501  (embedded MLIR lines)
"""MLIR text as other tools print it, into ``pf.load_mlir`` and ``pyflame-opt``:
hexadecimal float elements (how mlir-opt prints NaN and infinities: bit patterns),
``dense_resource`` constants with their ``{-# dialect_resources #-}`` blobs (torch-mlir,
StableHLO exports), a called function returning its own argument, an empty file, and
our IR round-tripped through upstream ``mlir-opt --allow-unregistered-dialect``.
Values against numpy bit patterns; bad text is a located error, never a traceback."""

from __future__ import annotations

import contextlib
import io
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pyflame_mlir.tools.pyflame_opt import main

import pyflame_mlir as pf


def _bits(values: list[int], dtype: type) -> np.ndarray:
    width = {np.float16: np.uint16, np.float32: np.uint32, np.float64: np.uint64}[dtype]
    return np.array(values, width).view(dtype)


def _const(literal: str, t: str, n: int = 3) -> str:
    return (f"func.func @main(%a: tensor<{n}x{t}>) -> tensor<{n}x{t}> {{\n"
            f"  %c = arith.constant {literal} : tensor<{n}x{t}>\n"
            f"  %0 = pyflame.add %a, %c : (tensor<{n}x{t}>, tensor<{n}x{t}>) -> tensor<{n}x{t}>\n"
            f"  return %0 : tensor<{n}x{t}>\n}}")


@pytest.mark.parametrize(("literal", "t", "dtype", "bits"), [
    ("dense<0x7FC00000>", "f32", np.float32, [0x7FC00000] * 3),  # NaN splat
    ("dense<[0x7F800000, 0xFF800000, 1.5]>", "f32", np.float32,
     [0x7F800000, 0xFF800000, 0x3FC00000]),
    ("dense<[0x7C00, 0x8000, 0x0001]>", "f16", np.float16, [0x7C00, 0x8000, 0x0001]),
    ("dense<0x3FF0000000000000>", "f64", np.float64, [0x3FF0000000000000] * 3),
])
def test_hexadecimal_float_elements_are_bit_patterns(literal: str, t: str, dtype: type,
                                                     bits: list[int]) -> None:
    out = pf.load_mlir(_const(literal, t))(np.zeros(3, dtype)).numpy()
    expect = _bits(bits, dtype) + dtype(0)  # the add of zero: NaN stays NaN, -0 + 0 = 0
    np.testing.assert_array_equal(out, expect)


def test_hexadecimal_integer_elements_keep_their_value() -> None:
    out = pf.load_mlir(_const("dense<[0x10, 0x7FFFFFFF, -0x1]>", "i32"))(np.zeros(3, np.int32))
    np.testing.assert_array_equal(out.numpy(), [16, 2**31 - 1, -1])


@pytest.mark.parametrize(("literal", "t", "col", "message"), [
    ("dense<-0x7FC00000>", "f32", 29, "hexadecimal float literal should not have a leading"),
    ("dense<[0x7C00, 0x10000, 0x0]>", "f16", 38, "out of range for type f16"),
    ("dense<0x1FFFFFFFF>", "f32", 29, "out of range for type f32"),
])
def test_bad_hexadecimal_floats_are_located_errors(literal: str, t: str, col: int,
                                                   message: str, tmp_path: Path) -> None:
    with pytest.raises(pf.MlirLoadError, match=f"^<string>:2:{col}: error: .*{message}"):
        pf.load_mlir(_const(literal, t))
    path = tmp_path / "bad.mlir"
    path.write_text(_const(literal, t))
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        assert main([str(path)]) == 1
    assert f"bad.mlir:2:{col}: error: " in err.getvalue() and message in err.getvalue()
    assert "Traceback" not in err.getvalue()


@pytest.mark.parametrize(("literal", "t", "message"), [
    ('dense<"0x0000803F000000400000404000">', "f32",
     "dense literal of 13 bytes, but tensor<3xf32> holds 3 elements of 4 bytes"),
    ("dense<[5, 1, 0]>", "i1", "dense literal: Integer value 5 is out of range for type i1"),
    ("dense<[0x7FC00000, 1, 0]>", "i1", "dense literal: Integer value 2143289344 is out of"),
])
def test_dense_literals_that_do_not_fit_their_type_are_located_errors(
        literal: str, t: str, message: str, tmp_path: Path) -> None:
    # they were unlocated: a ValueError while parsing, or a failure only when printed
    with pytest.raises(pf.MlirLoadError, match=f"^<string>:2:28: error: {message}"):
        pf.load_mlir(_const(literal, t))
    path = tmp_path / "bad.mlir"
    path.write_text(_const(literal, t))
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        assert main([str(path)]) == 1
    assert f"bad.mlir:2:28: error: {message}" in err.getvalue()
    assert "Traceback" not in err.getvalue()


RESOURCE = """module {
  func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
    %c = arith.constant dense_resource<blob1> : tensor<2xf32>
    %0 = pyflame.mul %a, %c : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}
{-#
  dialect_resources: {
    builtin: {
      blob1: "0x04000000BLOB"
    }
  }
#-}
"""


def test_dense_resource_constants_run() -> None:
    data = np.array([1.5, -2.0], np.float32)
    prog = pf.load_mlir(RESOURCE.replace("BLOB", data.tobytes().hex().upper()))
    np.testing.assert_array_equal(prog(np.array([2.0, 3.0], np.float32)).numpy(), [3.0, -6.0])


@pytest.mark.parametrize(("blob", "handle", "message"), [
    ("0000803F", "blob1",
     "dense_resource<blob1> holds 4 bytes, but tensor<2xf32> needs 2 elements of f32"),
    ("0000803F0000803F", "__elided__", "dense_resource<__elided__> has no data"),
])
def test_bad_dense_resources_are_located_errors(blob: str, handle: str, message: str) -> None:
    text = RESOURCE.replace("BLOB", blob).replace("dense_resource<blob1>",
                                                  f"dense_resource<{handle}>")
    with pytest.raises(pf.MlirLoadError, match=f"^<string>:3:5: error: {message}"):
        pf.load_mlir(text)


def test_a_called_function_may_return_its_argument() -> None:
    prog = pf.load_mlir("""
func.func @main(%a: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %0:2 = call @two(%a) : (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  return %0#1, %0#0 : tensor<2xf32>, tensor<2xf32>
}
func.func private @two(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %0 = pyflame.neg %x : (tensor<2xf32>) -> tensor<2xf32>
  return %x, %0 : tensor<2xf32>, tensor<2xf32>
}""")
    a = np.array([1.0, -2.0], np.float32)
    neg, same = prog(a)
    np.testing.assert_array_equal(neg.numpy(), -a)
    np.testing.assert_array_equal(same.numpy(), a)


@pytest.mark.parametrize("text", ["", "// only a comment\n", "#map = affine_map<(d0) -> (d0)>\n"])
def test_text_without_operations_is_an_empty_module(text: str, tmp_path: Path) -> None:
    path = tmp_path / "empty.mlir"
    path.write_text(text)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([str(path)]) in (0, None)
    assert out.getvalue().split() == ["builtin.module", "{", "}"]
    with pytest.raises(pf.MlirLoadError, match="expected one public function"):
        pf.load_mlir(text + "\n")


MLIR_OPT = Path(sys.executable).parent.parent / "lib" / \
    f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages" / "mlir" / \
    "bin" / "mlir-opt"


@pytest.mark.skipif(not MLIR_OPT.exists() and shutil.which("mlir-opt") is None,
                    reason="upstream mlir-opt (the [mlir] extra) is not installed")
@pytest.mark.parametrize("flags", [[], ["--mlir-print-op-generic", "--mlir-print-debuginfo"],
                                   ["--mlir-print-debuginfo", "--mlir-print-local-scope"]])
def test_mlir_opt_round_trip(flags: list[str], tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(pf.CONFIG, "eager", False)
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    text = pf.to_mlir(pf.grad(lambda v: (v.sin() * v).sum())(pf.tensor(x)))
    # a constant mlir-opt prints in hexadecimal: NaN and infinities
    text = text.replace("dense<1.000000e+00> : tensor<f32>", "dense<0x7FC00000> : tensor<f32>")
    src = tmp_path / "ours.mlir"
    src.write_text(text)
    generic = io.StringIO()
    with contextlib.redirect_stdout(generic):
        main([str(src), "--mlir-print-op-generic"])  # mlir-opt needs unknown ops generic
    (tmp_path / "generic.mlir").write_text(generic.getvalue())
    assert np.isnan(pf.load_mlir(generic.getvalue())(x).numpy()).all()  # our generic form
    tool = str(MLIR_OPT) if MLIR_OPT.exists() else "mlir-opt"
    printed = subprocess.run([tool, "--allow-unregistered-dialect", *flags,
                              str(tmp_path / "generic.mlir")], capture_output=True, text=True,
                             check=True).stdout
    assert "0x7FC00000" in printed
    out = pf.load_mlir(printed)(x).numpy()  # the cotangent is NaN: every element NaN
    assert np.isnan(out).all()
    (tmp_path / "back.mlir").write_text(printed)
    with contextlib.redirect_stdout(io.StringIO()):
        assert main([str(tmp_path / "back.mlir"), "-p", "cse"]) in (0, None)


GENERIC = """"builtin.module"() ({
  "func.func"() <{function_type = (tensor<2xf32>) -> tensor<2xf32>, sym_name = "helper", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<2xf32> loc("h.py":1:2)):
    %0 = "pyflame.exp"(%arg0) : (tensor<2xf32>) -> tensor<2xf32>
    "func.return"(%0) : (tensor<2xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<2xf32>) -> tensor<2xf32>, sym_name = "main", arg_attrs = [{pf.x}], res_attrs = [{pf.y = 1 : i64}]}> ({
  ^bb0(%arg0: tensor<2xf32>):
    %0 = "func.call"(%arg0) <{callee = @helper}> : (tensor<2xf32>) -> tensor<2xf32>
    "func.return"(%0) : (tensor<2xf32>) -> ()
  }) : () -> () loc("m.py":1:1)
}) {sym_name = "m"} : () -> ()
"""
ALIASED = """#cst = dense<[1.0, 2.0]> : tensor<2xf32>
!t = tensor<2xf32>
module @named attributes {a.b = "c\\u00e9 \\u2713"} {
  // a comment with unicode: \\u00fc \\u2713
  func.func @main(%a: !t {pf.note = "na\\u00efve"}) -> !t {
    %c = arith.constant #cst
    %h = arith.constant dense<"0x0000803F00000040"> : !t
    %0 = "pyflame.add"(%a, %c) {} : (!t, !t) -> !t
    %1 = "pyflame.mul"(%0, %h) : (!t, !t) -> !t
    return %1 : !t
  }
}
"""


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_generic_functions_attributes_aliases_and_line_endings(newline: str, tmp_path: Path
                                                               ) -> None:
    a = np.array([0.5, -1.0], np.float32)
    generic = GENERIC.replace("\n", newline).replace("    ", "\t")
    np.testing.assert_allclose(pf.load_mlir(generic)(a).numpy(), np.exp(a), rtol=1e-6)
    aliased = ALIASED.encode().decode("unicode_escape").replace("\n", newline)
    np.testing.assert_array_equal(pf.load_mlir(aliased)(a).numpy(), (a + [1, 2]) * [1, 2])
    for i, text in enumerate((generic, aliased)):
        path = tmp_path / f"in{i}.mlir"
        path.write_bytes(text.encode())
        with contextlib.redirect_stdout(io.StringIO()):
            assert main([str(path), "-p", "cse"]) in (0, None)


# ---- elementwise arith/math ops on tensors, as upstream tools print pointwise programs ----

POINTWISE = """
func.func @f(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %i: tensor<3xi32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xi32>) {
  %0 = arith.addf %a, %b : tensor<2x3xf32>
  %1 = arith.mulf %0, %a fastmath<contract> : tensor<2x3xf32>
  %2 = math.tanh %1 : tensor<2x3xf32>
  %3 = arith.divf %2, %b : tensor<2x3xf32>
  %4 = arith.maximumf %3, %a : tensor<2x3xf32>
  %5 = math.roundeven %4 : tensor<2x3xf32>
  %6 = math.powf %a, %b : tensor<2x3xf32>
  %7 = math.absf %6 : tensor<2x3xf32>
  %8 = arith.negf %7 : tensor<2x3xf32>
  %j = arith.muli %i, %i : tensor<3xi32>
  %k = arith.maxsi %j, %i : tensor<3xi32>
  return %5, %8, %k : tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xi32>
}
"""


def test_elementwise_arith_and_math_ops_on_tensors_run_as_their_pyflame_ops() -> None:
    a = np.array([[0.5, -1.0, 2.0], [3.0, np.nan, -0.25]], np.float32)
    b = np.array([[1.0, -2.0, 2.5], [0.25, 1.0, 3.0]], np.float32)
    i = np.array([-3, 2, 70000], np.int32)
    r, p, k = pf.load_mlir(POINTWISE)(a, b, i)
    with np.errstate(all="ignore"):
        want_r = np.round(np.maximum(np.tanh((a + b) * a) / b, a))
        want_p = -np.abs(np.power(a, b))
        want_k = np.maximum(i * i, i)  # (70000 squared wraps, as arith.muli)
    np.testing.assert_array_equal(r.numpy(), want_r)  # NaN propagates, as arith.maximumf
    np.testing.assert_array_equal(p.numpy(), want_p)
    np.testing.assert_array_equal(k.numpy(), want_k)


@pytest.mark.parametrize("line", [
    "%0 = arith.maxnumf %a, %a : tensor<4xf32>",  # NaN rule of no pyflame op
    "%0 = arith.addf %a, %a fastmath<fast> : tensor<4xf32>",
    "%0 = math.round %a : tensor<4xf32>",  # ties away from zero
    "%0 = arith.addf %c, %c : f32",  # a scalar program
])
def test_upstream_ops_without_a_pyflame_meaning_are_located_errors(line: str) -> None:
    text = ("func.func @f(%a: tensor<4xf32>, %c: f32) -> tensor<4xf32> {\n  " + line +
            "\n  return %a : tensor<4xf32>\n}\n")
    with pytest.raises(pf.MlirLoadError,
                       match=r"<string>:2:3: error: '(arith|math)\.\w+' is not supported"):
        pf.load_mlir(text)


_ADD = ("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %0 = pyflame.add %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
        "  func.return %0 : tensor<2xf32>\n}\n")


def test_bytes_that_are_not_utf8_in_a_comment_are_skipped_as_mlir_opt_does(tmp_path: Path
                                                                           ) -> None:
    # mlir-opt's lexer skips a comment's bytes; pyflame-opt and load_mlir refused the file
    path = tmp_path / "latin1.mlir"
    path.write_bytes(b"// caf\xe9 \xff\xfe\n" + _ADD.encode())
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert main([str(path), "--split-input-file"]) in (0, None)
    assert "pyflame.add" in out.getvalue() and err.getvalue() == ""
    a = np.array([1.5, -2.0], np.float32)
    np.testing.assert_array_equal(pf.load_mlir(path)(a).numpy(), a + a)


@pytest.mark.parametrize(("data", "where", "byte"), [
    (b"func.func @ma\xffin() {\n  func.return\n}\n", "1:14", "0xFF"),
    (b'func.func @main() attributes {s = "a\xe9"} {\n  func.return\n}\n', "1:37", "0xE9"),
])
def test_bytes_that_are_not_utf8_outside_comments_are_located_errors(
        data: bytes, where: str, byte: str, tmp_path: Path) -> None:
    path = tmp_path / "bad.mlir"
    path.write_bytes(data)
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        assert main([str(path)]) == 1
    assert err.getvalue().startswith(f"{path}:{where}: error: invalid UTF-8 byte {byte}")
    with pytest.raises(pf.MlirLoadError, match=f"bad.mlir:{where}: error: invalid UTF-8 byte"):
        pf.load_mlir(path)


@pytest.mark.parametrize(("spelling", "keep"), [
    ('pyflame.sum %x {dims = array<i64: 1>, keepdim}', True),  # a unit: true
    ('pyflame.sum %x {dims = array<i64: 1>, keepdim = true}', True),
    ('pyflame.sum %x {dims = array<i64: 1>}', False),  # absent: false
    ('"pyflame.sum"(%x) {dims = array<i64: 1>, keepdim}', True),  # the same in generic form
    ('"pyflame.sum"(%x) {dims = array<i64: 1>}', False),
])
def test_bool_attributes_read_as_mlir_unit_attributes(spelling: str, keep: bool,
                                                      tmp_path: Path) -> None:
    t = "tensor<4x1xf32>" if keep else "tensor<4xf32>"
    text = (f"func.func @main(%x: tensor<4x3xf32>) -> {t} {{\n"
            f"  %0 = {spelling} : (tensor<4x3xf32>) -> {t}\n  func.return %0 : {t}\n}}\n")
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    np.testing.assert_array_equal(pf.load_mlir(text)(x).numpy(), x.sum(1, keepdims=keep))
    path = tmp_path / "unit.mlir"  # pyflame-opt takes every spelling, prints true/false
    path.write_text(text)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([str(path)]) in (0, None)
    assert f"keepdim = {str(keep).lower()}" in out.getvalue() or (
        spelling.startswith('"') and ("keepdim" in out.getvalue()) == keep)


_SIN_OF_PRODUCT = """func.func @main(%a: tensor<3xf32>, %b: tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>) {
  %0 = arith.mulf %a, %b : tensor<3xf32>
  %1 = math.sin %0 : tensor<3xf32>
  %2 = pyflame.sum %1 {dims = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  func.return %2, %0 : tensor<f32>, tensor<3xf32>
}"""


def test_gradients_flow_through_a_loaded_function() -> None:
    # the loaded callable ran outside the graph: pf.grad of it was silently zero
    torch = pytest.importorskip("torch")
    f = pf.load_mlir(_SIN_OF_PRODUCT)
    a = np.array([0.1, -0.7, 0.3], np.float32)
    b = np.array([1.0, 2.0, -3.0], np.float32)
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    torch.sin(ta * tb).sum().backward()
    ga, gb = pf.grad(lambda x, y: f(x, y)[0], argnums=(0, 1))(pf.tensor(a), pf.tensor(b))
    np.testing.assert_allclose(ga.numpy(), ta.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(gb.numpy(), tb.grad.numpy(), rtol=1e-6)
    x = pf.tensor(a)
    x.requires_grad_(True)
    f(x, pf.tensor(b))[0].backward()
    np.testing.assert_allclose(x.grad.numpy(), ta.grad.numpy(), rtol=1e-6)
    # and vmap and jit see through it (vmap read the traced values and refused)
    s = pf.vmap(lambda x, y: f(x, y)[0])(pf.tensor(np.stack([a, b])), pf.tensor(np.stack([b, a])))
    np.testing.assert_allclose(s.numpy(), np.sin(a * b).sum().repeat(2), rtol=1e-6)
    np.testing.assert_allclose(pf.jit(lambda x, y: f(x, y)[1])(pf.tensor(a), pf.tensor(b)).numpy(),
                               a * b)


def test_tensor_and_linalg_shape_plumbing_and_products_run_against_numpy() -> None:
    # what mlir-opt prints for a matmul on tensors (empty + fill + matmul) and
    # static reshapes/slices: load_mlir refused every tensor and linalg op
    text = """func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>, %c: tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<6x4xf32>, tensor<3x2xf32>, tensor<2x1x3xf32>) {
  %e = tensor.empty() : tensor<3x5xf32>
  %z = arith.constant 0.5 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<3x5xf32>) -> tensor<3x5xf32>
  %s = tensor.extract_slice %a[1, 0, 0] [1, 3, 4] [1, 1, 1] : tensor<2x3x4xf32> to tensor<3x4xf32>
  %m = linalg.matmul ins(%s, %b : tensor<3x4xf32>, tensor<4x5xf32>) outs(%f : tensor<3x5xf32>) -> tensor<3x5xf32>
  %n = linalg.matmul ins(%s, %b : tensor<3x4xf32>, tensor<4x5xf32>) outs(%c : tensor<3x5xf32>) -> tensor<3x5xf32>
  %r = arith.addf %m, %n : tensor<3x5xf32>
  %flat = tensor.collapse_shape %a [[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
  %t = tensor.extract_slice %a[1, 0, 1] [1, 3, 2] [1, 1, 2] : tensor<2x3x4xf32> to tensor<3x2xf32>
  %v = tensor.collapse_shape %t [[0, 1]] : tensor<3x2xf32> into tensor<6xf32>
  %u = tensor.expand_shape %v [[0, 1, 2]] output_shape [2, 1, 3] : tensor<6xf32> into tensor<2x1x3xf32>
  func.return %r, %flat, %t, %u : tensor<3x5xf32>, tensor<6x4xf32>, tensor<3x2xf32>, tensor<2x1x3xf32>
}"""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3, 4)).astype(np.float32)
    b = rng.standard_normal((4, 5)).astype(np.float32)
    c = rng.standard_normal((3, 5)).astype(np.float32)
    r, flat, t, u = pf.load_mlir(text)(a, b, c)
    np.testing.assert_allclose(r.numpy(), 2 * a[1] @ b + 0.5 + c, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(flat.numpy(), a.reshape(6, 4))
    np.testing.assert_array_equal(t.numpy(), a[1, 0:3, 1:4:2])
    np.testing.assert_array_equal(u.numpy(), a[1, 0:3, 1:4:2].reshape(2, 1, 3))


@pytest.mark.parametrize(("body", "message"), [
    ("%i = arith.constant 0 : index\n  %0 = tensor.extract_slice %a[%i, 0] [1, 3] [1, 1] : "
     "tensor<2x3xf32> to tensor<1x3xf32>", "'tensor.extract_slice' is not supported here"),
    ("%e = tensor.empty() : tensor<1x3xf32>\n  %0 = tensor.insert_slice %e into %a[0, 0] [1, 3] "
     "[1, 1] : tensor<1x3xf32> into tensor<2x3xf32>", "'tensor.insert_slice' is not supported"),
])
def test_tensor_ops_without_a_pyflame_meaning_are_located_errors(body: str, message: str
                                                                 ) -> None:
    t = "tensor<1x3xf32>" if "extract" in body else "tensor<2x3xf32>"
    text = (f"func.func @main(%a: tensor<2x3xf32>) -> {t} {{\n  {body}\n"
            f"  func.return %0 : {t}\n}}\n")
    with pytest.raises(pf.MlirLoadError, match=f"<string>:[23]:3: error: {message}"):
        pf.load_mlir(text)


@pytest.mark.parametrize(("text", "where", "cycle"), [
    ("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
     "  %0 = func.call @main(%a) : (tensor<2xf32>) -> tensor<2xf32>\n"
     "  func.return %0 : tensor<2xf32>\n}", "2:3", "@main -> @main"),
    ("func.func private @g(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
     "  %0 = func.call @h(%a) : (tensor<2xf32>) -> tensor<2xf32>\n"
     "  func.return %0 : tensor<2xf32>\n}\n"
     "func.func private @h(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
     "  %0 = func.call @g(%a) : (tensor<2xf32>) -> tensor<2xf32>\n"
     "  func.return %0 : tensor<2xf32>\n}\n"
     "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
     "  %0 = func.call @g(%a) : (tensor<2xf32>) -> tensor<2xf32>\n"
     "  func.return %0 : tensor<2xf32>\n}", "6:3", "@g -> @h -> @g"),
])
def test_recursive_calls_are_refused_naming_the_cycle(text: str, where: str, cycle: str) -> None:
    # (it was "nested more than 64 deep (a recursive function?)" after 64 rounds of inlining)
    with pytest.raises(pf.MlirLoadError, match=f"<string>:{where}: error: 'func.call' of @"
                       f"[a-z]+ is recursive \\({cycle}\\)"):
        pf.load_mlir(text)


def test_a_long_chain_of_calls_is_checked_without_recursion() -> None:
    n = 1200  # deeper than Python's stack would take with a recursive cycle check
    funcs = [f"func.func private @f{i}(%a: tensor<2xf32>) -> tensor<2xf32> {{\n"
             f"  %0 = func.call @f{i + 1}(%a) : (tensor<2xf32>) -> tensor<2xf32>\n"
             f"  func.return %0 : tensor<2xf32>\n}}" for i in range(n)]
    funcs.append(f"func.func private @f{n}(%a: tensor<2xf32>) -> tensor<2xf32> {{\n"
                 f"  %0 = func.call @f0(%a) : (tensor<2xf32>) -> tensor<2xf32>\n"
                 "  func.return %0 : tensor<2xf32>\n}")
    with pytest.raises(pf.MlirLoadError, match=f":{3 * n + 2 + n}:3: error: 'func.call' of "
                       "@f0 is recursive"):
        pf.load_mlir("\n".join(funcs))


@pytest.mark.parametrize(("line", "message"), [
    ("%0 = tensor.extract_slice %a[1, 1] [4, 2] [1, 1] : tensor<2x3xf32> to tensor<4x2xf32>",
     "slice along dimension 0 runs out-of-bounds: 4 >= 2"),
    ("%0 = tensor.collapse_shape %a [[0, 1]] : tensor<2x3xf32> into tensor<3xf32>",
     "expected dimension 0 of collapsed type"),
])
def test_upstream_ops_mlir_opt_rejects_are_not_run(line: str, message: str) -> None:
    # xDSL's verifiers accept these; load_mlir would have made a wrong slice/reshape
    t = line.rsplit(" ", 1)[-1]
    text = (f"func.func @main(%a: tensor<2x3xf32>) -> {t} {{\n  {line}\n"
            f"  func.return %0 : {t}\n}}\n")
    with pytest.raises(pf.MlirLoadError, match=f"<string>:2:3: error: .*{message}"):
        pf.load_mlir(text)


@pytest.mark.parametrize(("scalar", "t", "want"), [
    ("200 : i8", "i8", -56),  # a signless int's bits
    ("true", "i1", True),
    ("-7.5 : f16", "f16", -7.5),
    ("-7.5 : f32", "i32", "expected fill value type ('f32') to match output element type"),
    ("-1 : i8", "i32", "expected fill value type ('i8') to match output element type"),
])
def test_linalg_fill_takes_a_scalar_of_the_element_type(scalar: str, t: str, want: object
                                                        ) -> None:
    # mlir-opt refuses a fill of another type; xDSL accepted it and load_mlir cast the
    # value (an OverflowError for -1 into ui8)
    st = scalar.split(": ")[1] if ": " in scalar else "i1"
    text = (f"func.func @main() -> tensor<2x{t}> {{\n  %e = tensor.empty() : tensor<2x{t}>\n"
            f"  %s = arith.constant {scalar}\n"
            f"  %f = linalg.fill ins(%s : {st}) outs(%e : tensor<2x{t}>) -> tensor<2x{t}>\n"
            f"  func.return %f : tensor<2x{t}>\n}}\n")
    if isinstance(want, str):
        with pytest.raises(pf.MlirLoadError, match=f"<string>:4:3: error: .*{re.escape(want)}"):
            pf.load_mlir(text)
    else:
        np.testing.assert_array_equal(pf.load_mlir(text)().numpy(), [want] * 2)


_LOOPS = """func.func @main(%x: tensor<3xf32>, %w: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c5 = arith.constant 5 : index
  %r:2 = scf.for %i = %c0 to %c5 step %c2 iter_args(%h = %x, %s = %x) -> (tensor<3xf32>, tensor<3xf32>) {
    %inner = scf.for %j = %c0 to %c2 step %c1 iter_args(%t = %h) -> (tensor<3xf32>) {
      %m = arith.mulf %t, %w : tensor<3xf32>
      %n = math.tanh %m : tensor<3xf32>
      scf.yield %n : tensor<3xf32>
    }
    %acc = arith.addf %s, %inner : tensor<3xf32>
    scf.yield %inner, %acc : tensor<3xf32>, tensor<3xf32>
  }
  %none = scf.for %k = %c5 to %c0 step %c1 iter_args(%u = %x) -> (tensor<3xf32>) {
    %v = arith.negf %u : tensor<3xf32>
    scf.yield %v : tensor<3xf32>
  }
  %out = arith.addf %r#1, %none : tensor<3xf32>
  func.return %r#0, %out : tensor<3xf32>, tensor<3xf32>
}"""


def test_scf_for_of_constant_bounds_is_unrolled() -> None:
    # scf.for with tensor iter_args (what lowering a recurrence to scf prints) was refused
    torch = pytest.importorskip("torch")
    f = pf.load_mlir(_LOOPS)
    x = np.array([0.3, -0.2, 0.9], np.float32)
    w = np.array([1.5, 0.5, -1.0], np.float32)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w)
    h, s = tx, tx
    for _ in range(3):  # 0, 2, 4: three trips of two inner ones
        for _ in range(2):
            h = torch.tanh(h * tw)
        s = s + h
    out = s + tx  # the zero-trip loop yields its init
    h_pf, out_pf = f(x, w)
    np.testing.assert_allclose(h_pf.numpy(), h.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(out_pf.numpy(), out.detach().numpy(), rtol=1e-6)
    out.sum().backward()
    g = pf.grad(lambda a: f(a, pf.tensor(w))[1].sum())(pf.tensor(x))
    np.testing.assert_allclose(g.numpy(), tx.grad.numpy(), rtol=1e-5)


@pytest.mark.parametrize(("loop", "message"), [
    ("scf.for %i = %c0 to %n step %c1", "with bounds or step that are not arith.constant"),
    ("scf.for %i = %c0 to %c1 step %c1", None),  # reads %i: below
])
def test_scf_for_that_cannot_be_unrolled_is_a_located_error(loop: str, message: str | None
                                                            ) -> None:
    body = ("    %k = arith.index_cast %i : index to i64\n" if message is None else "")
    text = ("func.func @main(%x: tensor<3xf32>, %n: index) -> tensor<3xf32> {\n"
            "  %c0 = arith.constant 0 : index\n  %c1 = arith.constant 1 : index\n"
            f"  %r = {loop} iter_args(%t = %x) -> (tensor<3xf32>) {{\n{body}"
            "    scf.yield %t : tensor<3xf32>\n  }\n  func.return %r : tensor<3xf32>\n}")
    with pytest.raises(pf.MlirLoadError, match="<string>:4:3: error: 'scf.for' " + (
            message or "whose body reads its induction variable")):
        pf.load_mlir(text)


def test_division_by_a_zero_splat_on_the_csl_backend_is_ieee() -> None:
    # the WSE planner turned x / c into x * (1/c) and divided by zero in Python
    text = """func.func @main(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %zero = pyflame.constant {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %nzero = pyflame.constant {value = dense<-0.0> : tensor<f32>} : () -> tensor<f32>
  %0 = pyflame.div %x, %zero : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  %1 = pyflame.div %x, %nzero : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  func.return %0, %1 : tensor<4x4xf32>, tensor<4x4xf32>
}"""
    x = np.array([[1.0, -1.0, 0.0, np.nan]] * 4, np.float32)
    with np.errstate(all="ignore"):
        want = (x / np.float32(0.0), x / np.float32(-0.0))
    with pf.backend("csl"):
        got = pf.load_mlir(text)(pf.tensor(x))
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.numpy(), w)


# ---- StableHLO as JAX prints it (dialects/stablehlo.py, passes/convert_stablehlo.py) ----

_X = np.array([[0.5, -2.5, 1.25], [-0.0, np.nan, 3.0], [np.inf, -1.5, 0.0], [2.5, -0.75, -4.0]],
              np.float32)
_I = np.array([[7, -7, 3], [-3, 0, 5], [9, -9, 1], [-1, 4, -8]], np.int32)


def _jax_cases() -> dict[str, tuple[Any, np.ndarray]]:
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    lax = jax.lax
    w = np.linspace(-1, 1, 15, dtype=np.float32).reshape(3, 5)
    return {
        "mlp_log_softmax": (lambda x: jax.nn.log_softmax(jnp.tanh(x @ w + 1.0), axis=-1),
                            np.nan_to_num(_X, posinf=2.0, nan=0.5)),
        "softmax_logsumexp": (lambda x: (jax.nn.softmax(x, 0), jax.scipy.special.logsumexp(x, 1)),
                              np.nan_to_num(_X, posinf=2.0, nan=0.5)),
        "where_compare_select": (lambda x: (jnp.where(x > 0, x, 2 * x), x == x, x != x, x <= 0,
                                            jnp.logical_xor(x > 0, x < 1)), _X),
        "unary": (lambda x: (jnp.exp(x), jnp.log(jnp.abs(x)), jnp.tanh(x), jax.nn.sigmoid(x),
                             lax.rsqrt(jnp.abs(x)), jnp.sqrt(jnp.abs(x)), jnp.expm1(x),
                             jnp.log1p(jnp.abs(x)), jnp.sin(x), jnp.cos(x), jnp.tan(x),
                             jax.scipy.special.erf(x), jnp.arctan(x), jnp.square(x)), _X),
        "rounding_and_sign": (lambda x: (jnp.floor(x), jnp.ceil(x), jnp.round(x),
                                         lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO),
                                         jnp.sign(x), jnp.isfinite(x), x // 2, x % 2), _X),
        "dot_general_batch_and_transposed": (
            lambda x: (jnp.einsum("bij,bjk->bik", x[:, :2].reshape(2, 2, 2),
                                  x[:, 1:].reshape(2, 2, 2)),
                       jnp.einsum("ij,kj->ik", x, x[:2]), x.T @ x[:, 0], x[0] @ x.T),
            np.nan_to_num(_X, posinf=2.0, nan=0.5)),
        "shape_plumbing": (lambda x: (x.reshape(3, 4).T, x[:, None, :] + x[None, :2, :],
                                      jnp.concatenate([x, x[:2] ** 2], 0), x[1:4:2, ::2],
                                      jnp.flip(x, (0, 1)), jnp.pad(x, 1),
                                      lax.pad(x, -1.5, [(1, -1, 1), (-1, 2, 0)])), _X),
        "dynamic_slices": (lambda x: (lax.dynamic_slice(x, (3, 1), (2, 2)),
                                      lax.dynamic_update_slice(x, jnp.ones((2, 2)), (1, 2))), _X),
        "reductions": (lambda x: (x.sum(0), x.max(1), jnp.min(x, 0), x.prod(1), x.mean(),
                                  x.var(0), (x > 0).all(1), (x > 0).any(0)), _X),
        "clip_iota_convert": (lambda x: (jnp.clip(x, -1, 1), jnp.arange(12.0).reshape(4, 3) * x,
                                         x.astype(jnp.int32), x.astype(jnp.bfloat16),
                                         (x > 0).astype(jnp.float32)),
                              np.nan_to_num(_X, nan=0.5, posinf=7.0)),
        "integers": (lambda a: (a // 3, a % 3, lax.div(a, 3), lax.rem(a, 3), a * a - a,
                                jnp.maximum(a, 0), ~a, a & 3, a | 8, a ^ 5, jnp.sign(a),
                                jnp.abs(a), a.sum(0), a.max(1), a.prod(0), a > 1), _I),
        "one_hot_times_nan": (lambda x: jax.nn.one_hot(jnp.array([0, 2, 1, 1]), 3) * x, _X),
        "fori_loop_and_scan": (lambda x: (
            lax.fori_loop(0, 3, lambda i, h: jnp.tanh(h * 0.5 + i), x),
            *lax.scan(lambda c, r: (c + r, c * r[::-1]), jnp.zeros(3), x)),
            np.nan_to_num(_X, nan=0.5, posinf=3.0)),
        "cumulative": (lambda x: (jnp.cumsum(x, 0), jnp.cumsum(x, 1), lax.cummax(x, 0),
                                  lax.cummin(x, 1), jnp.cumprod(x, 1),
                                  lax.cumsum(x, 0, reverse=True)), _X),
        "argmax_accuracy": (lambda x: (jnp.argmax(x, -1) == jnp.array([1, 2, 0, 2])).mean(),
                            np.nan_to_num(_X, nan=0.5)),
    }


_JAX_CASES = ["mlp_log_softmax", "softmax_logsumexp", "where_compare_select", "unary",
              "rounding_and_sign", "dot_general_batch_and_transposed", "shape_plumbing",
              "dynamic_slices", "reductions", "clip_iota_convert", "integers",
              "one_hot_times_nan", "argmax_accuracy", "fori_loop_and_scan", "cumulative"]


def _jax_text(fn: Any, *args: np.ndarray, generic: bool = False) -> str:
    import jax

    lowered = jax.jit(fn).lower(*args)
    if generic:  # the form mlir-opt --mlir-print-op-generic prints
        return lowered.compiler_ir("stablehlo").operation.get_asm(print_generic_op_form=True)
    return lowered.as_text()


@pytest.mark.parametrize("generic", [False, True], ids=["pretty", "generic"])
@pytest.mark.parametrize("case", _JAX_CASES)
def test_jax_stablehlo_runs_as_jax_computes_it(case: str, generic: bool) -> None:
    # StableHLO (what jax.jit(f).lower(x).as_text() prints) was a parse error
    import jax

    fn, x = _jax_cases()[case]
    with np.errstate(all="ignore"):
        want = fn(jax.numpy.asarray(x))  # op by op: StableHLO's semantics, no XLA rewrites
        got = pf.load_mlir(_jax_text(fn, x, generic=generic))(x)
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        g, w = g.numpy(), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (i, g.dtype, w.dtype)
        if w.dtype.kind == "f" or w.dtype.name == "bfloat16":
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=3e-6,
                                       atol=3e-6, equal_nan=True, err_msg=f"result {i}")
            zeros = w == 0  # the sign of each zero, as the spec keeps it
            np.testing.assert_array_equal(np.signbit(g[zeros]), np.signbit(w[zeros]))
        else:
            np.testing.assert_array_equal(g, w, err_msg=f"result {i}")


@pytest.mark.parametrize("case", ["mlp", "softmax_weighted", "where_pow_sin", "batch_dot",
                                  "pad_dynamic_slice_update", "concat_max_flip"])
def test_gradients_of_loaded_jax_programs_match_jax_grad(case: str) -> None:
    jax = pytest.importorskip("jax")
    jnp, lax = jax.numpy, jax.lax
    w = np.linspace(-1, 1, 15, dtype=np.float32).reshape(3, 5)
    fn = {
        "mlp": lambda x: jax.nn.log_softmax(jnp.tanh(x @ w + 0.5) @ w.T, -1).sum(),
        "softmax_weighted": lambda x: (jax.nn.softmax(x, -1) * jnp.arange(3.0)).sum()
        + jax.scipy.special.logsumexp(x, 0).sum(),
        "where_pow_sin": lambda x: jnp.where(x > 0, x ** 3, jnp.sin(x)).sum(),
        "batch_dot": lambda x: (jnp.einsum("bij,bkj->bik", x[:, :2].reshape(2, 2, 2),
                                           x[:, 1:].reshape(2, 2, 2)) ** 2).sum(),
        "pad_dynamic_slice_update": lambda x: (lax.pad(x, 1.5, [(1, -1, 1), (-1, 2, 0)]) ** 2
                                               ).sum() + lax.dynamic_slice(x, (1, 1), (2, 2)
                                                                           ).prod()
        + (lax.dynamic_update_slice(x, x[:2, :2] * 3, (1, 1)) ** 2).sum(),
        "concat_max_flip": lambda x: (jnp.concatenate([x, x[:2] ** 2], 0).max(0)
                                      * jnp.flip(x, 0).min(0) * jnp.clip(x, -0.5, 0.5).mean(0)
                                      ).sum(),
    }[case]
    x = np.random.default_rng(3).standard_normal((4, 3)).astype(np.float32)
    f = pf.load_mlir(_jax_text(fn, x))
    np.testing.assert_allclose(pf.grad(f)(pf.tensor(x)).numpy(), np.asarray(jax.grad(fn)(x)),
                               rtol=2e-5, atol=2e-6)


def test_a_jax_mlp_runs_on_every_backend() -> None:
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype(np.float32) for s in [(4, 3), (3, 5), (5,), (5, 2), (2,)]]

    def mlp(x, w1, b1, w2, b2):
        return jax.nn.log_softmax(jnp.tanh(x @ w1 + b1) @ w2 + b2)

    f = pf.load_mlir(_jax_text(mlp, *args))
    want = np.asarray(mlp(*args))
    ran = []
    for name, backend in pf.BACKENDS.items():
        if backend.available() is not None:
            continue
        with pf.backend(name):
            np.testing.assert_allclose(f(*args).numpy(), want, rtol=1e-5, atol=1e-6,
                                       err_msg=name)
            np.testing.assert_allclose(f(*map(pf.tensor, args)).numpy(), want, rtol=1e-5,
                                       atol=1e-6, err_msg=name)
        ran.append(name)
    assert "reference" in ran and "csl" in ran


def _hlo(body: str, args: str, results: str) -> str:
    ret = ", ".join(f"%r{i}" for i in range(results.count("tensor<")))
    return (f"func.func public @main({args}) -> ({results}) {{\n{body}\n"
            f"  return {ret} : {results}\n}}\n")


def test_stablehlo_edge_values_follow_the_specification() -> None:
    # hand-written: the rules where the nearest pyflame op differs (sign, ties away
    # from zero, truncating integer division, a sum's +0.0 init, clamped dynamic
    # slices), against numpy
    text = _hlo("""  %r0 = stablehlo.sign %x : tensor<6xf32>
  %r1 = stablehlo.round_nearest_afz %x : tensor<6xf32>
  %r2 = stablehlo.divide %i, %j : tensor<4xi32>
  %r3 = stablehlo.remainder %i, %j : tensor<4xi32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %nz = stablehlo.constant dense<-0.0> : tensor<f32>
  %s = stablehlo.slice %x [3:5] : (tensor<6xf32>) -> tensor<2xf32>
  %r4 = stablehlo.reduce(%s init: %z) applies stablehlo.add across dimensions = [0] : (tensor<2xf32>, tensor<f32>) -> tensor<f32>
  %r5 = stablehlo.reduce(%s init: %nz) applies stablehlo.add across dimensions = [0] : (tensor<2xf32>, tensor<f32>) -> tensor<f32>
  %c9 = stablehlo.constant dense<9> : tensor<i64>
  %r6 = stablehlo.dynamic_slice %x, %c9, sizes = [2] : (tensor<6xf32>, tensor<i64>) -> tensor<2xf32>
  %r7 = stablehlo.is_finite %x : (tensor<6xf32>) -> tensor<6xi1>
  %r8 = stablehlo.reverse %i, dims = [0] : tensor<4xi32>""",
                "%x: tensor<6xf32>, %i: tensor<4xi32>, %j: tensor<4xi32>",
                "tensor<6xf32>, tensor<6xf32>, tensor<4xi32>, tensor<4xi32>, tensor<f32>, "
                "tensor<f32>, tensor<2xf32>, tensor<6xi1>, tensor<4xi32>")
    x = np.array([np.nan, -0.0, 2.5, -0.0, -0.0, -0.49999997], np.float32)
    i = np.array([7, -7, 7, -7], np.int32)
    j = np.array([2, 2, -2, -2], np.int32)
    out = [r.numpy() for r in pf.load_mlir(text)(x, i, j)]
    np.testing.assert_array_equal(out[0], [np.nan, -0.0, 1.0, -0.0, -0.0, -1.0])
    assert np.signbit(out[0][[1, 3, 4]]).all()
    np.testing.assert_array_equal(out[1], [np.nan, -0.0, 3.0, -0.0, -0.0, -0.0])
    assert np.signbit(out[1][[1, 3, 4, 5]]).all()
    np.testing.assert_array_equal(out[2], np.trunc(i / j).astype(np.int32))  # [3, -3, -3, 3]
    np.testing.assert_array_equal(out[3], np.fmod(i, j))
    assert out[4] == 0 and not np.signbit(out[4])  # +0.0 + -0.0 + -0.0
    assert out[5] == 0 and np.signbit(out[5])
    np.testing.assert_array_equal(out[6], x[4:6])  # the start 9 clamps to 6 - 2
    np.testing.assert_array_equal(out[7], np.isfinite(x))
    np.testing.assert_array_equal(out[8], i[::-1])


def test_stablehlo_shape_ops_follow_the_specification() -> None:
    text = _hlo("""  %r0 = stablehlo.broadcast_in_dim %a, dims = [2, 0] : (tensor<3x2xf32>) -> tensor<2x4x3xf32>
  %r1 = stablehlo.dot_general %b, %c, batching_dims = [1] x [0], contracting_dims = [0] x [2], precision = [DEFAULT, HIGHEST] : (tensor<3x2x4xbf16>, tensor<2x5x3xbf16>) -> tensor<2x4x5xf32>
  %v = stablehlo.constant dense<7.0> : tensor<f32>
  %r2 = stablehlo.pad %a, %v, low = [-1, 2], high = [1, -1], interior = [1, 0] : (tensor<3x2xf32>, tensor<f32>) -> tensor<5x3xf32>
  %r3 = stablehlo.transpose %b, dims = [2, 0, 1] : (tensor<3x2x4xbf16>) -> tensor<4x3x2xbf16>
  %u = stablehlo.constant dense<[[1.0, 2.0]]> : tensor<1x2xf32>
  %k = stablehlo.constant dense<-3> : tensor<i32>
  %r4 = stablehlo.dynamic_update_slice %a, %u, %k, %k : (tensor<3x2xf32>, tensor<1x2xf32>, tensor<i32>, tensor<i32>) -> tensor<3x2xf32>""",
                "%a: tensor<3x2xf32>, %b: tensor<3x2x4xbf16>, %c: tensor<2x5x3xbf16>",
                "tensor<2x4x3xf32>, tensor<2x4x5xf32>, tensor<5x3xf32>, tensor<4x3x2xbf16>, "
                "tensor<3x2xf32>")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 2)).astype(np.float32)
    bf16 = pf.bfloat16.np
    b = rng.standard_normal((3, 2, 4)).astype(bf16)
    c = rng.standard_normal((2, 5, 3)).astype(bf16)
    r0, r1, r2, r3, r4 = (r.numpy() for r in pf.load_mlir(text)(a, b, c))
    np.testing.assert_array_equal(r0, np.broadcast_to(a.T[:, None, :], (2, 4, 3)))
    want = np.einsum("kbi,bjk->bij", b.astype(np.float32), c.astype(np.float32))
    np.testing.assert_allclose(r1, want, rtol=1e-6, atol=1e-6)
    padded = np.full((6, 4), 7.0, np.float32)  # the positive padding, then -1 crops
    padded[0:5:2, 2:4] = a
    np.testing.assert_array_equal(r2, padded[1:, :3])
    np.testing.assert_array_equal(r3, b.transpose(2, 0, 1))
    np.testing.assert_array_equal(r4, np.concatenate([[[1.0, 2.0]], a[1:]]))


@pytest.mark.parametrize(("text", "where", "message"), [
    (_hlo("  %r0 = stablehlo.add %x, %y : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>",
          "%x: tensor<4xf32>, %y: tensor<1xf32>", "tensor<4xf32>"),
     "2:3", r"'stablehlo.add' operand 1 has shape \[1\], the result \[4\]"),
    (_hlo("  %r0 = stablehlo.compare LT, %x, %x, TOTALORDER : (tensor<4xf32>, tensor<4xf32>) "
          "-> tensor<4xi1>", "%x: tensor<4xf32>", "tensor<4xi1>"),
     "2:3", "compares float32 tensors as TOTALORDER"),
    (_hlo("  %r0 = stablehlo.dynamic_slice %x, %k, sizes = [2] : (tensor<4xf32>, tensor<2xi32>) "
          "-> tensor<2xf32>", "%x: tensor<4xf32>, %k: tensor<2xi32>", "tensor<2xf32>"),
     "2:3", "start index 0 is not an integer scalar"),
    (_hlo("  %r0 = stablehlo.exponential %x : (tensor<4xf32>) -> tensor<4xf16>",
          "%x: tensor<4xf32>", "tensor<4xf16>"),
     "2:3", "declares the result type tensor<4xf16>, but its operands give tensor<4xf32>"),
    (_hlo("  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
          "  %r0 = stablehlo.reduce(%x init: %z) applies stablehlo.subtract across dimensions = "
          "[0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>", "%x: tensor<4xf32>",
          "tensor<f32>"),
     "3:3", "'stablehlo.reduce' whose body is not one add, multiply, maximum or minimum"),
    (_hlo("  %r0 = stablehlo.popcnt %x : tensor<4xf32>", "%x: tensor<4xf32>", "tensor<4xf32>"),
     "2:3", "'stablehlo.popcnt' is not defined on float32 tensors"),
    (_hlo("  %r0 = stablehlo.sort %x : tensor<4xf32>", "%x: tensor<4xf32>", "tensor<4xf32>"),
     r"2:\d+", "'stablehlo.sort' is read in the generic form only"),
    (_hlo("  %r0 = stablehlo.shift_left %x, %x : tensor<4xi1>", "%x: tensor<4xi1>",
          "tensor<4xi1>"), r"2:\d+", "'stablehlo.shift_left' is not defined on bool tensors"),
])
def test_stablehlo_without_a_pyflame_meaning_is_a_located_error(text: str, where: str,
                                                               message: str) -> None:
    with pytest.raises(pf.MlirLoadError, match=f"^<string>:{where}: error: .*{message}"):
        pf.load_mlir(text)


def test_dynamic_slices_at_indices_known_when_run_match_jax() -> None:
    # x[i] with i an argument (and dynamic_update_slice at one) was refused
    jax = pytest.importorskip("jax")
    jnp, lax = jax.numpy, jax.lax
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    u = -np.arange(6, dtype=np.float32).reshape(2, 3)
    for fn in (lambda x, i: x[i], lambda x, i: lax.dynamic_slice(x, (i, i + 1), (2, 3)),
               lambda x, i: lax.dynamic_update_slice(x, jnp.asarray(u) * x[:2, :3], (i, 2 * i)),
               lambda x, i: lax.dynamic_update_slice(x, jnp.asarray(u), (1, i))):
        f = pf.load_mlir(_jax_text(fn, x, np.int32(0)))
        for i in (-7, -1, 0, 1, 2, 3, 9):  # clamped into range, as the spec says
            np.testing.assert_array_equal(f(x, np.int32(i)).numpy(),
                                          np.asarray(fn(jnp.asarray(x), jnp.int32(i))))
        g = pf.grad(lambda a, f=f: (f(a, pf.tensor(np.int32(1))) ** 2).sum())(pf.tensor(x))
        np.testing.assert_array_equal(g.numpy(),
                                      np.asarray(jax.grad(lambda a, fn=fn: (fn(a, 1) ** 2
                                                                            ).sum())(x)))


def test_jax_loops_of_a_fixed_length_are_unrolled_and_others_refused(tmp_path: Path) -> None:
    # stablehlo.while (fori_loop, scan) was a parse error
    jax = pytest.importorskip("jax")
    jnp, lax = jax.numpy, jax.lax

    def fn(x):
        return lax.scan(lambda c, r: (jnp.tanh(c * r), c + r), x[0], x[1:])

    x = np.random.default_rng(2).standard_normal((5, 3)).astype(np.float32)
    text = _jax_text(fn, x)
    f = pf.load_mlir(text)
    for got, want in zip(f(x), fn(jnp.asarray(x))):
        np.testing.assert_allclose(got.numpy(), np.asarray(want), rtol=1e-6, atol=1e-6)
    g = pf.grad(lambda a: (f(a)[0] ** 2).sum() + f(a)[1].sum())(pf.tensor(x))
    np.testing.assert_allclose(g.numpy(), jax.grad(
        lambda a: (fn(a)[0] ** 2).sum() + fn(a)[1].sum())(x), rtol=1e-5, atol=1e-6)
    src = tmp_path / "scan.mlir"  # pyflame-opt prints the loop (generic form) and reads it
    src.write_text(text)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([str(src)]) in (0, None)
    assert '"stablehlo.while"' in out.getvalue()
    np.testing.assert_allclose(pf.load_mlir(out.getvalue())(x)[0].numpy(), f(x)[0].numpy())
    # a loop on data runs as lax.while_loop (test_load_stablehlo_jax3.py)
    data_dependent = _jax_text(lambda v: lax.while_loop(lambda h: h.sum() < 10.0,
                                                        lambda h: h * 2.0, v), x[0])
    np.testing.assert_allclose(pf.load_mlir(data_dependent)(x[0]).numpy(), lax.while_loop(
        lambda h: h.sum() < 10.0, lambda h: h * 2.0, x[0]))


def test_jax_gathers_match_jax_and_its_gradients() -> None:
    # x[i], take_along_axis, vmapped indexing (stablehlo.gather, with batching
    # dimensions) were refused
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    x = np.arange(15, dtype=np.float32).reshape(5, 3)
    y = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    i = np.array([0, 4, -2, 3, 0], np.int32)
    cases = [(lambda x, i: x[i], x), (lambda x, i: x[:, i % 3], x),
             (lambda x, i: jnp.take_along_axis(x[:3], i[:3, None] % 3, axis=1), x),
             (lambda y, i: y[i[:4] % 2, :, i[:4] % 4], y), (lambda y, i: y[..., i[:3] % 4], y),
             (lambda y, i: jax.vmap(lambda a, j: a[j])(y, i[:2] % 3), y)]
    for fn, a in cases:
        f = pf.load_mlir(_jax_text(fn, a, i))
        np.testing.assert_array_equal(f(a, i).numpy(), np.asarray(fn(jnp.asarray(a), i)))
        g = pf.grad(lambda v, f=f: (f(v, pf.tensor(i)) ** 2).sum())(pf.tensor(a))
        np.testing.assert_array_equal(g.numpy(), np.asarray(jax.grad(
            lambda v, fn=fn: (fn(v, i) ** 2).sum())(a)))
    # out of range, the start is clamped so the slice fits (as the spec says)
    far = np.array([7, -9], np.int32)
    got = pf.load_mlir(_jax_text(lambda x, j: jnp.take(x, j, axis=0, mode="clip"), x, far))
    np.testing.assert_array_equal(got(x, far).numpy(), x[[4, 0]])


def test_jax_scatter_adds_and_gradients_of_gathers_match_jax() -> None:
    # x.at[i].add(u) and jax.grad of x[i] print stablehlo.scatter: it was refused
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    x = np.arange(15, dtype=np.float32).reshape(5, 3)
    u = x[::-1] * 0.5
    i = np.array([1, 3, 1, 7, -9], np.int32)  # repeated, and out of range (skipped)
    for fn in (lambda x, i, u: x.at[i].add(u),
               lambda x, i, u: x.at[:, i[:3] % 3].add(u[:, :3]),
               lambda x, i, u: x.at[i[:2], i[2:4] % 3].add(u[0, :2])):
        f = pf.load_mlir(_jax_text(fn, x, i, u))
        np.testing.assert_array_equal(f(x, i, u).numpy(), np.asarray(fn(jnp.asarray(x), i, u)))
        got = pf.grad(lambda a, b, f=f: (f(a, pf.tensor(i), b) ** 2).sum(), argnums=(0, 1))(
            pf.tensor(x), pf.tensor(u))
        want = jax.grad(lambda a, b, fn=fn: (fn(a, i, b) ** 2).sum(), argnums=(0, 1))(x, u)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.numpy(), np.asarray(w))

    def loss(x, j):
        return (jnp.tanh(x[j]) ** 2).sum()

    j = np.array([1, 3, 1], np.int32)
    small = x * 0.05
    text = _jax_text(jax.grad(loss), small, j)
    assert "stablehlo.scatter" in text
    np.testing.assert_allclose(pf.load_mlir(text)(small, j).numpy(), jax.grad(loss)(small, j),
                               rtol=1e-5, atol=1e-7)
    with pytest.raises(pf.MlirLoadError, match="'stablehlo.scatter' whose update computation "
                       "is not a set"):  # (repeated indices: the products would combine)
        pf.load_mlir(_jax_text(lambda x, i: x.at[i].multiply(2.0), x, i))


def test_jax_argmax_runs_and_other_pair_reductions_are_located_errors() -> None:
    # jnp.argmax/argmin reduce (value, iota) pairs: the first NaN or extreme wins
    jax = pytest.importorskip("jax")
    jnp = jax.numpy

    def fn(x):
        return jnp.argmax(x, 1), jnp.argmin(x, 0), jnp.argmax(x.reshape(-1))

    x = np.array([[1, 3, 3], [np.nan, 2, np.nan], [-np.inf] * 3, [0, -0.0, 5]], np.float32)
    text = _jax_text(fn, x)
    for got, want in zip(pf.load_mlir(text)(x), fn(jnp.asarray(x))):
        assert got.numpy().dtype == np.int32
        np.testing.assert_array_equal(got.numpy(), np.asarray(want))
    # ties to the larger index: not argmax's body, refused rather than guessed
    changed = re.sub(r"compare +LT, (%\w+), (%\w+), +SIGNED", r"compare GT, \1, \2, SIGNED",
                     text)
    assert changed != text
    with pytest.raises(pf.MlirLoadError, match=r"<string>:\d+:\d+: error: 'stablehlo.reduce' "
                       "of 2 operands at once is not supported"):
        pf.load_mlir(changed)


def test_pyflame_opt_prints_stablehlo_back_and_converts_it(tmp_path: Path) -> None:
    jax = pytest.importorskip("jax")
    fn = _jax_cases()["softmax_logsumexp"][0]
    x = np.nan_to_num(_X, posinf=2.0, nan=0.5)
    src = tmp_path / "jax.mlir"
    src.write_text(_jax_text(fn, x))

    def opt(*args: str) -> str:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main([*args]) in (0, None)
        return out.getvalue()

    printed = opt(str(src))
    assert "stablehlo.reduce(%" in printed and "applies stablehlo.maximum" in printed
    (tmp_path / "printed.mlir").write_text(printed)
    assert opt(str(tmp_path / "printed.mlir")) == printed  # a fixed point
    (tmp_path / "generic.mlir").write_text(opt(str(src), "--mlir-print-op-generic"))
    assert opt(str(tmp_path / "generic.mlir")) == printed
    converted = opt(str(src), "-p", "convert-stablehlo-to-pyflame")
    assert "stablehlo." not in converted and "pyflame.max" in converted
    want = fn(jax.numpy.asarray(x))
    for text in (printed, converted):
        for g, w in zip(pf.load_mlir(text)(x), want):
            np.testing.assert_allclose(g.numpy(), np.asarray(w), rtol=2e-6, atol=1e-6)


# ---- linalg.generic on tensors (pyflame_mlir/linalg_generic_import.py) ----

# what `mlir-opt --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,
# tosa-to-linalg),linalg-generalize-named-ops,canonicalize)"` prints for
# clamp(matmul(a, b) + c, 0, 6), its reduce_sum over axis 1, and exp(a)
TOSA_AS_GENERIC = """
#map = affine_map<(d0, d1, d2) -> ()>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#map3 = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
#map4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map5 = affine_map<(d0, d1, d2) -> (0, 0, d2)>
#map6 = affine_map<(d0, d1) -> ()>
#map7 = affine_map<(d0, d1) -> (d0, d1)>
#map8 = affine_map<(d0, d1, d2) -> (d0, d2)>
module {
  func.func @main(%arg0: tensor<2x4x3xf32>, %arg1: tensor<2x3x5xf32>, %arg2: tensor<1x1x5xf32>) -> (tensor<2x4x5xf32>, tensor<2x1x5xf32>, tensor<2x4x3xf32>) {
    %cst = arith.constant 6.000000e+00 : f32
    %cst_0 = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<2x4x5xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_0 : f32) outs(%0 : tensor<2x4x5xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x4x5xf32>
    %2 = linalg.generic {indexing_maps = [#map2, #map3, #map4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : tensor<2x4x3xf32>, tensor<2x3x5xf32>) outs(%1 : tensor<2x4x5xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %12 = arith.mulf %in, %in_1 : f32
      %13 = arith.addf %out, %12 : f32
      linalg.yield %13 : f32
    } -> tensor<2x4x5xf32>
    %3 = tensor.empty() : tensor<2x4x5xf32>
    %4 = linalg.generic {indexing_maps = [#map1, #map5, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%2, %arg2 : tensor<2x4x5xf32>, tensor<1x1x5xf32>) outs(%3 : tensor<2x4x5xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %12 = arith.addf %in, %in_1 : f32
      linalg.yield %12 : f32
    } -> tensor<2x4x5xf32>
    %5 = tensor.empty() : tensor<2x4x5xf32>
    %6 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%4 : tensor<2x4x5xf32>) outs(%5 : tensor<2x4x5xf32>) {
    ^bb0(%in: f32, %out: f32):
      %12 = arith.minimumf %in, %cst : f32
      %13 = arith.maximumf %12, %cst_0 : f32
      linalg.yield %13 : f32
    } -> tensor<2x4x5xf32>
    %7 = tensor.empty() : tensor<2x5xf32>
    %8 = linalg.generic {indexing_maps = [#map6, #map7], iterator_types = ["parallel", "parallel"]} ins(%cst_0 : f32) outs(%7 : tensor<2x5xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x5xf32>
    %9 = linalg.generic {indexing_maps = [#map1, #map8], iterator_types = ["parallel", "reduction", "parallel"]} ins(%6 : tensor<2x4x5xf32>) outs(%8 : tensor<2x5xf32>) {
    ^bb0(%in: f32, %out: f32):
      %12 = arith.addf %in, %out : f32
      linalg.yield %12 : f32
    } -> tensor<2x5xf32>
    %expanded = tensor.expand_shape %9 [[0], [1, 2]] output_shape [2, 1, 5] : tensor<2x5xf32> into tensor<2x1x5xf32>
    %10 = tensor.empty() : tensor<2x4x3xf32>
    %11 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0 : tensor<2x4x3xf32>) outs(%10 : tensor<2x4x3xf32>) {
    ^bb0(%in: f32, %out: f32):
      %12 = math.exp %in : f32
      linalg.yield %12 : f32
    } -> tensor<2x4x3xf32>
    return %6, %expanded, %11 : tensor<2x4x5xf32>, tensor<2x1x5xf32>, tensor<2x4x3xf32>
  }
}

"""


def test_tosa_lowered_to_linalg_generic_runs_against_numpy() -> None:
    # linalg.generic (a matmul as a reduction, broadcasts by constant-0 maps, a
    # generalized fill, a clamp reading captured constants) was refused
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 4, 3)).astype(np.float32)
    b = rng.standard_normal((2, 3, 5)).astype(np.float32)
    c = rng.standard_normal((1, 1, 5)).astype(np.float32)
    clamped, summed, e = pf.load_mlir(TOSA_AS_GENERIC)(a, b, c)
    want = np.clip(a @ b + c, 0, 6)
    np.testing.assert_allclose(clamped.numpy(), want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(summed.numpy(), want.sum(1, keepdims=True), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(e.numpy(), np.exp(a), rtol=1e-6)
    torch = pytest.importorskip("torch")
    ta = torch.tensor(a, requires_grad=True)
    torch.clamp(ta @ torch.tensor(b) + torch.tensor(c), 0, 6).sum(1).square().sum().backward()
    g = pf.grad(lambda x: (pf.load_mlir(TOSA_AS_GENERIC)(x, pf.tensor(b), pf.tensor(c))[1]
                           ** 2).sum())(pf.tensor(a))
    np.testing.assert_allclose(g.numpy(), ta.grad.numpy(), rtol=1e-5, atol=1e-6)


_GENERIC = """#id = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @main(%a: tensor<4x3xf32>, %b: tensor<3xf32>, %i: tensor<4x3xi32>) -> (tensor<3x4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4x3xf32>, tensor<3x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x4xf32>
  %0 = linalg.generic {indexing_maps = [#id, #col, #t], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<4x3xf32>, tensor<3xf32>) outs(%e : tensor<3x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.cmpf ugt, %x, %y : f32
    %q = arith.select %p, %x, %zero : f32
    linalg.yield %q : f32
  } -> tensor<3x4xf32>
  %m = tensor.empty() : tensor<4xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %mf = linalg.fill ins(%ninf : f32) outs(%m : tensor<4xf32>) -> tensor<4xf32>
  %1 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<4x3xf32>) outs(%mf : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = math.exp %x : f32
    %r = arith.maximumf %o, %s : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %n = tensor.empty() : tensor<4xi32>
  %seven = arith.constant 7 : i32
  %nf = linalg.fill ins(%seven : i32) outs(%n : tensor<4xi32>) -> tensor<4xi32>
  %2 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%i : tensor<4x3xi32>) outs(%nf : tensor<4xi32>) {
  ^bb0(%x: i32, %o: i32):
    %r = arith.addi %x, %o : i32
    linalg.yield %r : i32
  } -> tensor<4xi32>
  %3:2 = linalg.generic {indexing_maps = [#id, #id, #t], iterator_types = ["parallel", "parallel"]} ins(%i : tensor<4x3xi32>) outs(%a, %0 : tensor<4x3xf32>, tensor<3x4xf32>) {
  ^bb0(%x: i32, %o: f32, %o2: f32):
    %f = arith.sitofp %x : i32 to f32
    %g = arith.mulf %f, %o : f32
    linalg.yield %g, %o2 : f32, f32
  } -> (tensor<4x3xf32>, tensor<3x4xf32>)
  return %0, %1, %2, %3#0, %3#1 : tensor<3x4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4x3xf32>, tensor<3x4xf32>
}"""


def test_linalg_generic_maps_compares_casts_and_reductions_against_numpy() -> None:
    a = np.array([[0.5, -1.0, np.nan], [2.0, 0.1, -3.0], [1.0, 1.0, 1.0], [0.0, -0.0, 4.0]],
                 np.float32)
    b = np.array([1.0, -2.0, 0.5], np.float32)
    i = np.array([[1, 2, 3], [-4, 5, 6], [7, -8, 9], [0, 0, 2**31 - 1]], np.int32)
    r0, r1, r2, r3, r4 = (r.numpy() for r in pf.load_mlir(_GENERIC)(a, b, i))
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(r0, np.where(~(a <= b), a, 0).T)  # ugt: NaN is true
    np.testing.assert_array_equal(r1, np.exp(a).max(1))  # NaN propagates, as maximumf
    np.testing.assert_array_equal(r2, (i.sum(1) + 7).astype(np.int32))  # wraps in i32
    np.testing.assert_array_equal(r3, i.astype(np.float32) * a)
    np.testing.assert_array_equal(r4, r0)  # an output the body passes through


@pytest.mark.parametrize(("body", "maps", "kinds", "message"), [
    ("%k = linalg.index 0 : index\n    linalg.yield %x : f32", "#id, #id", '"parallel", "parallel"',
     "linalg.index in its body is not supported"),
    ("%r = arith.subf %x, %o : f32\n    linalg.yield %r : f32", "#id, #row",
     '"parallel", "reduction"', "a reduction whose body does not yield addf"),
    ("%r = arith.maxnumf %x, %x : f32\n    linalg.yield %r : f32", "#id, #id",
     '"parallel", "parallel"', "'arith.maxnumf' in its body is not supported"),
    ("linalg.yield %x : f32", "#one, #id", '"parallel", "parallel"',
     "is not a projected permutation"),
    ("linalg.yield %x : f32", "#id, #row", '"parallel", "reduction"',
     "a reduction whose body does not yield"),
])
def test_linalg_generic_without_a_pyflame_meaning_is_a_located_error(
        body: str, maps: str, kinds: str, message: str) -> None:
    out = "tensor<4xf32>" if "reduction" in kinds else "tensor<4x3xf32>"
    text = ("#id = affine_map<(d0, d1) -> (d0, d1)>\n#row = affine_map<(d0, d1) -> (d0)>\n"
            "#one = affine_map<(d0, d1) -> (d0, 1)>\n"
            f"func.func @main(%a: tensor<4x3xf32>, %c: {out}) -> {out} {{\n"
            f"  %0 = linalg.generic {{indexing_maps = [{maps}], iterator_types = [{kinds}]}} "
            f"ins(%a : tensor<4x3xf32>) outs(%c : {out}) {{\n  ^bb0(%x: f32, %o: f32):\n"
            f"    {body}\n  }} -> {out}\n  func.return %0 : {out}\n}}\n")
    with pytest.raises(pf.MlirLoadError, match=f"^<string>:5:3: error: 'linalg.generic' "
                       f".*{re.escape(message)}"):
        pf.load_mlir(text)


@pytest.mark.skipif(not MLIR_OPT.exists() and shutil.which("mlir-opt") is None,
                    reason="upstream mlir-opt (the [mlir] extra) is not installed")
@pytest.mark.parametrize("flags", [["--convert-elementwise-to-linalg"],
                                   ["--linalg-generalize-named-ops"]])
def test_what_mlir_opt_lowers_to_linalg_generic_computes_the_same(flags: list[str],
                                                                   tmp_path: Path) -> None:
    text = """func.func @main(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>, %c: tensor<4x5xf32>) -> (tensor<4x5xf32>, tensor<4x3xf32>) {
  %m = linalg.matmul ins(%a, %b : tensor<4x3xf32>, tensor<3x5xf32>) outs(%c : tensor<4x5xf32>) -> tensor<4x5xf32>
  %t = math.tanh %a : tensor<4x3xf32>
  %s = arith.mulf %t, %a : tensor<4x3xf32>
  %q = arith.maximumf %s, %a : tensor<4x3xf32>
  func.return %m, %q : tensor<4x5xf32>, tensor<4x3xf32>
}"""
    src = tmp_path / "in.mlir"
    src.write_text(text)
    tool = str(MLIR_OPT) if MLIR_OPT.exists() else "mlir-opt"
    printed = subprocess.run([tool, *flags, str(src)], capture_output=True, text=True,
                             check=True).stdout
    assert "linalg.generic" in printed
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(s).astype(np.float32) for s in [(4, 3), (3, 5), (4, 5)]]
    for got, want in zip(pf.load_mlir(printed)(*args), pf.load_mlir(text)(*args)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)


TOSA = """func.func @main(%a: tensor<1x4x3xf32>, %b: tensor<1x3x5xf32>, %c: tensor<1x1x5xf32>) -> (tensor<1x4x5xf32>, tensor<1x1x5xf32>, tensor<1x4x5xf32>, tensor<2x4x5xf32>) {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = tosa.matmul %a, %b, %zp, %zp : (tensor<1x4x3xf32>, tensor<1x3x5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x5xf32>
  %1 = tosa.add %0, %c : (tensor<1x4x5xf32>, tensor<1x1x5xf32>) -> tensor<1x4x5xf32>
  %2 = tosa.clamp %1 {min_val = 0.0 : f32, max_val = 6.0 : f32} : (tensor<1x4x5xf32>) -> tensor<1x4x5xf32>
  %3 = tosa.reduce_sum %2 {axis = 1 : i32} : (tensor<1x4x5xf32>) -> tensor<1x1x5xf32>
  %sh = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %4 = tosa.mul %2, %1, %sh : (tensor<1x4x5xf32>, tensor<1x4x5xf32>, tensor<1xi8>) -> tensor<1x4x5xf32>
  %5 = tosa.sin %4 : (tensor<1x4x5xf32>) -> tensor<1x4x5xf32>
  %6 = tosa.reciprocal %c : (tensor<1x1x5xf32>) -> tensor<1x1x5xf32>
  %7 = tosa.sub %5, %6 : (tensor<1x4x5xf32>, tensor<1x1x5xf32>) -> tensor<1x4x5xf32>
  %8 = tosa.concat %7, %0 {axis = 0 : i32} : (tensor<1x4x5xf32>, tensor<1x4x5xf32>) -> tensor<2x4x5xf32>
  return %2, %3, %7, %8 : tensor<1x4x5xf32>, tensor<1x1x5xf32>, tensor<1x4x5xf32>, tensor<2x4x5xf32>
}
"""


def test_tosa_ops_run_against_numpy_and_torch_gradients() -> None:
    # tosa ops (xDSL parses them; mlir-opt accepts this text) were refused
    rng = np.random.default_rng(0)
    a = rng.standard_normal((1, 4, 3)).astype(np.float32)
    b = rng.standard_normal((1, 3, 5)).astype(np.float32)
    c = rng.standard_normal((1, 1, 5)).astype(np.float32)
    f = pf.load_mlir(TOSA)
    clamped, summed, waved, joined = (r.numpy() for r in f(a, b, c))
    m = a @ b
    want = np.clip(m + c, 0, 6)
    wave = np.sin(want * (m + c)) - 1 / c
    np.testing.assert_allclose(clamped, want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(summed, want.sum(1, keepdims=True), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(waved, wave, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(joined, np.concatenate([wave, m]), rtol=1e-5, atol=1e-6)
    torch = pytest.importorskip("torch")
    ta = torch.tensor(a, requires_grad=True)
    tm = ta @ torch.tensor(b) + torch.tensor(c)
    (torch.sin(torch.clamp(tm, 0, 6) * tm) - 1 / torch.tensor(c)).sum().backward()
    g = pf.grad(lambda x: f(x, pf.tensor(b), pf.tensor(c))[2].sum())(pf.tensor(a))
    np.testing.assert_allclose(g.numpy(), ta.grad.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("line", "message"), [
    ('%s = "tosa.const"() <{values = dense<1> : tensor<1xi8>}> : () -> tensor<1xi8>\n'
     "  %0 = tosa.mul %a, %a, %s : (tensor<1x4xf32>, tensor<1x4xf32>, tensor<1xi8>) -> "
     "tensor<1x4xf32>", "'tosa.mul' with a shift that is not a constant 0"),
    ("%0 = tosa.clamp %a {min_val = 0.0 : f32, max_val = 1.0 : f32, nan_mode = #tosa.nan_mode<"
     "IGNORE>} : (tensor<1x4xf32>) -> tensor<1x4xf32>", "'tosa.clamp' with nan_mode"),
])
def test_tosa_without_a_pyflame_meaning_is_a_located_error(line: str, message: str) -> None:
    text = (f"func.func @main(%a: tensor<1x4xf32>) -> tensor<1x4xf32> {{\n  {line}\n"
            "  func.return %0 : tensor<1x4xf32>\n}\n")
    with pytest.raises(pf.MlirLoadError, match=rf"^<string>:\d:3: error: {re.escape(message)}"):
        pf.load_mlir(text)


def test_reduce_windows_too_large_to_compose_are_located_errors() -> None:
    # pooling windows run (test_load_stablehlo_jax.py), one strided slice per element
    jax = pytest.importorskip("jax")
    lax = jax.lax
    x = np.ones((40, 40), np.float32)
    for fn in (lambda x: lax.reduce_window(x, -np.inf, lax.max, (40, 40), (1, 1), "VALID"),
               lambda x: lax.reduce_window(x, 1.0, lax.add, (33, 33), (1, 1), "SAME")):
        with pytest.raises(pf.MlirLoadError, match=r"<string>:\d+:\d+: error: "
                           "'stablehlo.reduce_window' of a \\d+-element window: more than "
                           "1024"):
            pf.load_mlir(_jax_text(fn, x))


def test_refusals_in_jax_text_with_debug_info_point_at_the_python_source() -> None:
    # jax's locations are names around call sites around file positions: the
    # error was unlocated ("<string>: error: ..."); mlir-opt shows the file position
    jax = pytest.importorskip("jax")
    pool = jax.jit(lambda x: jax.lax.reduce_window(x, -np.inf, jax.lax.max, (40, 40), (1, 1),
                                                   "VALID"))
    text = pool.lower(np.ones((40, 40), np.float32)).as_text(debug_info=True)
    line = sys._getframe().f_lineno - 3
    with pytest.raises(pf.MlirLoadError, match=rf"test_mlir_from_other_tools.py:{line}:\d+: "
                       "error: 'stablehlo.reduce_window' of a 1600-element window"):
        pf.load_mlir(text)
