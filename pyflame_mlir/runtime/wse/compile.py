"""`cslc` stand-in: turn a `csl`-dialect program into an SDK-style compile directory.

The directory holds what a host script expects from `cslc` (`out.json` with
the layout params) plus, for the simulator, the IR (`program.mlir`) and, for a
user with the real SDK, the printed CSL files (`<module>.csl`).

    python -m pyflame_mlir.runtime.wse.compile prog.mlir --params=M:8,N:8 -o out

A module the program imports from a file (`@import_module("lib/pe.csl", ...)`, found
beside the importing file or under an `--import-path`) is printed at its path relative
to the program's file (`out/lib/pe.csl`), so the printed tree compiles as it is; if a
path leaves the program's directory (`"../lib.csl"` from `src/kernel.mlir`), the
program's own files go that many directories down, into directories named as the
program's (`out/src/kernel.csl`, `out/lib.csl`).
"""

from __future__ import annotations

import argparse
import io
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from pyflame_mlir.lowering.csl_printer import print_csl, split_csl_files

from .layout import evaluate_layout
from .machine import ARCHS, CycleModel
from .program import load_module

IR_FILE = "program.mlir"
META_FILE = "out.json"
FABRIC_OFFSETS = (4, 1)


def parse_params(spec: str) -> dict[str, str]:
    """`M:8,N:16` -> {"M": "8", "N": "16"} (the syntax of `cslc --params`)."""
    out = {}
    for item in filter(None, spec.split(",")):
        name, _, value = item.partition(":")
        out[name.strip()] = value.strip()
    return out


def compile_program(
    source: str | Path | ModuleOp,
    out_dir: str | Path,
    params: dict[str, Any] | None = None,
    arch: str = "wse2",
    import_paths: Sequence[str | Path] = (),
) -> Path:
    if arch not in ARCHS:
        raise ValueError(f"arch must be one of {ARCHS}")
    module = load_module(source, import_paths)
    params = {k: str(v) for k, v in (params or {}).items()}
    layout = evaluate_layout(module, params, CycleModel())  # checks params, fills defaults
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / IR_FILE).write_text(str(module) + "\n")
    text = io.StringIO()
    print_csl(module, text)
    files = split_csl_files(text.getvalue())
    # how many directories imported files reach above the program's
    up = max((next((i for i, part in enumerate(Path(n).parts) if part != ".."), 0)
              for n in files), default=0)
    # the program's own files go as many directories down, named as its own (so that
    # an import coming back down, "../k/x.csl" from a file in k/, finds them), "_" for
    # a program not read from a file
    names = ["_"] * up
    if up and isinstance(source, str | Path) and Path(source).suffix == ".mlir":
        names = list(Path(source).resolve().parent.parts[-up:])
    base = out.joinpath(*names)
    for name, body in files.items():
        if Path(name).is_absolute():
            raise ValueError(f"module '{name}': an absolute import path has no place in the "
                             "compile directory")
        dest = Path(os.path.normpath(base / f"{name}.csl"))
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(body)
    meta = {
        # numbers only: a task-id or queue param's default has no --params spelling
        # (the layout makes it again when the program is loaded)
        "params": {k: str(v) for k, v in layout.params.items()
                   if isinstance(v, int | float | np.number)},
        "arch": arch,
        "rectangle": [layout.width, layout.height],
        # memcpy needs 3 columns west, 2 east and a row above and below the kernel
        "fabric_dims": [layout.width + 7, layout.height + 2],
        # the kernel's north-west PE in fabric coordinates (cslc --fabric-offsets=4,1),
        # which the SDK's debug_util takes
        "fabric_offsets": list(FABRIC_OFFSETS),
        "simulator": "pyflame_mlir.runtime.wse",
    }
    (out / META_FILE).write_text(json.dumps(meta, indent=2) + "\n")
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("program", help="csl-dialect .mlir file")
    ap.add_argument("--params", default="", help="layout params, e.g. M:8,N:16")
    ap.add_argument("--arch", default="wse2", choices=ARCHS)
    ap.add_argument("-o", "--output", default="out")
    ap.add_argument("--import-path", action="append", default=[],
                    help="a directory to look for imported modules in (cslc's option)")
    a = ap.parse_args(argv)
    print(compile_program(a.program, a.output, parse_params(a.params), a.arch, a.import_path))


if __name__ == "__main__":
    main()
