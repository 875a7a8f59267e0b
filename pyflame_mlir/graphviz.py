"""``pf.to_dot`` / ``pf.to_svg``: the recorded graph as Graphviz DOT.

One DOT node per leaf and per op, labelled with the very line
``print_graph`` writes for it (``%3 = add(%1, %2) -> [4, 6]``: op name,
attributes, shape, dtype); one edge per operand. ``to_svg`` runs the ``dot``
binary when Graphviz is installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Any

from .compiler import format_graph
from .core import Tensor, collect, split_ref

__all__ = ["to_dot", "to_svg"]


def _as_list(tensors: Any) -> list[Tensor]:
    return list(tensors) if isinstance(tensors, list | tuple) else [tensors]


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(tensors: Any, name: str = "pyflame") -> str:
    """The graph behind ``tensors`` as DOT text (nothing is computed)."""
    ts = _as_list(tensors)
    sub = collect(ts)
    # format_graph writes one line per leaf, then one per node, in this order
    lines = format_graph(ts).splitlines()[1:]
    n_leaves = len(sub.leaves)
    leaf_lines, node_lines = lines[:n_leaves], lines[n_leaves:n_leaves + len(sub.nodes)]
    out = [f"digraph {_quote(name)} {{", "  node [shape=box, fontname=monospace];"]
    for i, text in enumerate(leaf_lines):
        out.append(f"  in{i} [label={_quote(text.strip())}, shape=ellipse];")
    for pos, text in enumerate(node_lines):
        out.append(f"  n{pos} [label={_quote(text.strip())}];")

    def source(ref: int) -> tuple[str, int]:
        pos, idx = split_ref(ref)
        return (f"in{-1 - pos}", 0) if pos < 0 else (f"n{pos}", idx)

    for pos, refs in enumerate(sub.refs):
        for k, r in enumerate(refs):
            src, idx = source(r)
            label = f"#{k}" if len(refs) > 1 else ""
            if idx:
                label = f"{label} (result {idx})".strip()
            out.append(f"  {src} -> n{pos}" + (f" [label={_quote(label)}]" if label else "")
                       + ";")
    for k, r in enumerate(sub.outputs[:len(ts)]):
        src, idx = source(r)
        out.append(f"  out{k} [label={_quote(f'output {k}')}, shape=plaintext];")
        out.append(f"  {src} -> out{k}" + (f" [label={_quote(f'result {idx}')}]" if idx
                                            else "") + ";")
    out.append("}")
    return "\n".join(out) + "\n"


def to_svg(tensors: Any, path: str | os.PathLike | None = None, timeout: float = 60.0) -> str:
    """The graph rendered by Graphviz's ``dot`` as SVG text (also written to
    ``path`` when given). Raises RuntimeError when ``dot`` is not installed."""
    dot = shutil.which("dot")
    if dot is None:
        raise RuntimeError("to_svg: the Graphviz 'dot' program is not on PATH (install "
                           "graphviz); pf.to_dot gives the DOT text without it")
    proc = subprocess.run([dot, "-Tsvg"], input=to_dot(tensors), capture_output=True,
                          text=True, timeout=timeout, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"to_svg: dot failed ({proc.returncode}): {proc.stderr.strip()}")
    if path is not None:
        with open(path, "w") as f:
            f.write(proc.stdout)
    return proc.stdout
