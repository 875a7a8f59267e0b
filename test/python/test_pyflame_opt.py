"""pyflame-opt as a user runs it: output, options, and bad input without tracebacks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import pyflame_mlir as pf

OPT = str(Path(sys.executable).parent / "pyflame-opt")

GOOD = """\
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = pyflame.exp %a : (tensor<4xf32>) -> tensor<4xf32>
  %1 = pyflame.exp %a : (tensor<4xf32>) -> tensor<4xf32>
  %2 = pyflame.add %0, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = pyflame.sin %a : (tensor<4xf32>) -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}
"""


def opt(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([OPT, *args], input=stdin, capture_output=True, text=True)


def test_passes_run_from_text():
    r = opt("-p", "cse,dce", stdin=GOOD)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("pyflame.exp") == 1 and "pyflame.sin" not in r.stdout


def test_output_file_and_generic_form(tmp_path):
    out = tmp_path / "o.mlir"
    r = opt("--print-op-generic", "-o", str(out), stdin=GOOD)
    assert r.returncode == 0 and r.stdout == ""
    assert '"pyflame.add"(%0, %1)' in out.read_text()


def test_split_input_file_and_statistics():
    r = opt("--split-input-file", "-p", "cse,dce", "--pass-statistics",
            stdin=GOOD + "// -----\n" + GOOD)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("// -----") == 1
    assert "cse" in r.stderr and "dce" in r.stderr and "->" in r.stderr


def test_list_passes():
    r = opt("--list-passes")
    assert r.returncode == 0 and "cse" in r.stdout.split() and "dce" in r.stdout.split()


@pytest.mark.parametrize("text, where, message", [
    ("func.func @f(%a: tensor<4xf32>) {\n  %0 = pyflame.nope %a\n}\n", ":2:",
     "pyflame.nope is not registered"),
    ("func.func @f(%a: tensor<4xf32>, %b: tensor<3xf32>) {\n"
     "  %0 = pyflame.add %a, %b : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32>\n"
     "  func.return\n}\n", ":2:3: error: 'pyflame.add' op", "cannot be broadcast"),
    ("func.func @f(%a: tensor<4xf32>) {\n  %0 = pyflame.sum %a {dims = array<i64: 0>, "
     "keepdim = false} : (tensor<4xf32>) -> tensor<4xf32>\n  func.return\n}\n", ":2:3:",
     "result #0 has type tensor<4xf32>, but the operands give tensor<f32>"),
    ("func.func @f(%a: tensor<4xf32> {\n", ":1:", "error"),
])
def test_bad_input_is_located_without_traceback(text, where, message):
    r = opt(stdin=text)
    assert r.returncode == 1
    assert "Traceback" not in r.stderr
    assert where in r.stderr and message in r.stderr, r.stderr


def test_bad_options_and_files():
    for args in (["-p", "no-such-pass"], ["/no/such/file.mlir"]):
        r = opt(*args, stdin=GOOD)
        assert r.returncode != 0 and "Traceback" not in r.stderr
        assert "error" in r.stderr


def test_frontend_ir_round_trips_through_the_tool(lazy):
    """Lazy-only: it prints a recorded graph (eager mode records none)."""
    x, w = pf.randn(8, 4), pf.randn(4, 3)
    parts = pf.split(pf.log_softmax(pf.relu(x @ w - 1.0), 1), [1, 2], dim=1)
    y = pf.cat([parts[1].exp(), parts[0][:, None, 0].reshape(8, 1).int().float()], 1)
    text = pf.to_mlir(y)
    r = opt(stdin=text)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == text.strip()


def test_named_pipelines():
    r = opt("-p", "default", stdin=GOOD)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("pyflame.exp") == 1 and "pyflame.sin" not in r.stdout
    none = opt("-p", "none", stdin=GOOD)
    assert none.returncode == 0 and none.stdout.count("pyflame.exp") == 2
    assert "named pipelines:" in opt("--list-passes").stdout


def test_non_finite_constants_round_trip_bit_exact(lazy):
    """Lazy-only: it prints recorded graphs (eager mode records none)."""
    x = pf.randn(3)
    ys = [x + float("nan"), x * float("-inf"), pf.full([4], float("inf")), x * -0.0]
    text = pf.to_mlir(ys)
    assert 'dense<"0x0000C07F">' in text and 'dense<"0x000080FF">' in text
    r = opt(stdin=text)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == text.strip()
