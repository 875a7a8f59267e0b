"""Every pass in the registry is exercised by a lit test, from text, as
``pyflame-opt -p`` runs it (DESIGN.md principle 5: IR is the contract)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from pyflame_mlir.passes import PASSES, PIPELINES

TEST_ROOT = Path(__file__).resolve().parents[1]
_RUN = re.compile(r"^\s*//\s*RUN:(.*)$")


def pipeline_args(text: str) -> list[str]:
    """The pipeline arguments (``-p X``, ``-p=X``, ``--passes X``) of a lit file's RUN lines."""
    out: list[str] = []
    for line in text.splitlines():
        m = _RUN.match(line)
        if not m:
            continue
        try:
            words = shlex.split(m.group(1))
        except ValueError:  # an unbalanced quote in a shell pipeline: read it raw
            words = m.group(1).split()
        for i, w in enumerate(words):
            if w in ("-p", "--passes") and i + 1 < len(words):
                out.append(words[i + 1])
            elif w.startswith(("-p=", "--passes=")):
                out.append(w.split("=", 1)[1])
    return out


def passes_named(spec: str) -> set[str]:
    """Registered pass names a pipeline mentions, nested pipelines (``fixed-point``'s
    ``pipeline="..."`` option) and named pipelines included."""
    spec = PIPELINES.get(spec, spec)
    names = set(re.findall(r"[A-Za-z][\w-]*", spec))
    return {n for n in names if n in PASSES}


def lit_coverage(root: Path) -> dict[str, list[str]]:
    seen: dict[str, list[str]] = {}
    for f in sorted(root.rglob("*.mlir")):
        for spec in pipeline_args(f.read_text()):
            for name in passes_named(spec):
                seen.setdefault(name, []).append(str(f.relative_to(root)))
    return seen


def test_pipeline_args_are_read_from_run_lines() -> None:
    text = ("// RUN: pyflame-opt %s -p 'fixed-point{pipeline=\"cse,dce\"}',fuse | filecheck %s\n"
            "// RUN: pyflame-opt %s -p=unfuse\n// not a RUN line: -p constant-fold\n")
    specs = pipeline_args(text)
    assert specs == ['fixed-point{pipeline="cse,dce"},fuse', "unfuse"]
    assert set().union(*map(passes_named, specs)) == {"fixed-point", "cse", "dce", "fuse",
                                                       "unfuse"}


def test_every_registered_pass_has_a_lit_test() -> None:
    covered = lit_coverage(TEST_ROOT)
    missing = sorted(set(PASSES) - set(covered))
    assert not missing, (f"registered passes with no lit test running them through "
                         f"`pyflame-opt -p`: {', '.join(missing)} (add one under test/)")
