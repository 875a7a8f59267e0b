"""``pf.to_dot`` / ``pf.to_svg`` / ``print_graph(file=)`` (issue 19)."""

from __future__ import annotations

import io
import re
import shutil

import numpy as np
import pytest

import pyflame_mlir as pf


def _graph() -> tuple[pf.Tensor, pf.Tensor]:
    x = pf.from_numpy(np.ones((4, 6), np.float32))
    b = pf.from_numpy(np.zeros(6, np.float64))
    h = pf.gelu(x + 1.5, approximate="tanh")
    parts = pf.split(h, [2, 4], 1)
    return parts[1].sum(0), pf.convert(h, pf.float64) + b


def test_print_graph_writes_to_a_file():
    outs = list(_graph())
    buf = io.StringIO()
    pf.print_graph(outs, file=buf)
    assert buf.getvalue() == pf.format_graph(outs) + "\n"


def test_dot_labels_are_the_print_graph_lines(lazy):
    """Lazy-only: the DOT text of a recorded graph."""
    outs = list(_graph())
    dot = pf.to_dot(outs)
    assert dot.startswith('digraph "pyflame" {') and dot.rstrip().endswith("}")
    lines = pf.format_graph(outs).splitlines()[1:-1]  # without "Graph:" and "outputs:"
    labels = re.findall(r'^  (?:in|n)\d+ \[label="(.*?)"', dot, re.M)
    assert labels == [ln.strip() for ln in lines]
    assert "0x" not in dot and "object at" not in dot and "DenseValue" not in dot
    # op name, shape and dtype are there
    assert any(lb.startswith("%") and "= gelu(" in lb and "approximate=" in lb for lb in labels)
    assert any("= convert(" in lb and "-> [4, 6] f64" in lb for lb in labels)


def test_dot_edges_follow_the_operands(lazy):
    """Lazy-only: the edges of a recorded graph."""
    x = pf.from_numpy(np.ones(3, np.float32))
    y = pf.from_numpy(np.ones(3, np.float32))
    z = (x * y + x).exp()
    dot = pf.to_dot(z)
    edges = re.findall(r"^  (\w+) -> (\w+)", dot, re.M)
    # mul(x, y), add(mul, x), exp(add), and the output
    assert edges == [("in0", "n0"), ("in1", "n0"), ("n0", "n1"), ("in0", "n1"),
                     ("n1", "n2"), ("n2", "out0")]
    assert '"#0"' in dot and '"#1"' in dot


def test_multi_result_edges_name_the_result(lazy):
    """Lazy-only: the edges of a recorded graph."""
    x = pf.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))
    _, idx = pf.sort(x, 1)
    dot = pf.to_dot(idx + 1)
    assert re.search(r'n1 -> n2 \[label="#0 \(result 1\)"\]', dot), dot


@pytest.mark.skipif(shutil.which("dot") is None,
                    reason="Graphviz's 'dot' program is not installed")
def test_svg_through_graphviz(tmp_path):
    svg = pf.to_svg(list(_graph()), tmp_path / "g.svg")
    assert svg.lstrip().startswith(("<?xml", "<svg", "<!DOCTYPE")) and "</svg>" in svg
    assert (tmp_path / "g.svg").read_text() == svg
    assert "gelu" in svg


def test_svg_without_graphviz_says_so(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="'dot' program is not on PATH"):
        pf.to_svg(_graph()[0])
