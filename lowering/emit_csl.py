"""Write a lowered CSL program as a complete Cerebras SDK project.

``emit(program, out_dir)`` writes:

* ``layout.csl`` and ``pe_program.csl`` (the names ``@set_tile_code`` uses),
  printed by ``lowering/csl_printer.py``;
* ``program.mlir``: the same program as ``csl`` IR, which the project's WSE
  simulator and its ``cslc`` stand-in read;
* ``program.json``: the inputs and outputs (memcpy symbol, shape, placement,
  PE region) that ``run.py`` reads;
* ``run.py``: an SDK host script (``cs_python run.py --name out``) that reads
  the inputs from ``.npy`` files, copies them in with ``memcpy_h2d``,
  launches ``compute``, copies the outputs out with ``memcpy_d2h`` and saves
  them as ``.npy``. Its tile helpers are the functions of this module below
  (copied in, so the script needs only numpy and the SDK). With ``--steps N``
  (a training step, issue 16) it loads the resident state (``program.json``'s
  ``resident``: parameters and optimizer state updated in place) once, loops
  over the batches (an input file holding N stacked values gives one per step),
  copies the requested outputs (the loss) out after every step and the state
  and the other outputs once at the end;
* ``commands.sh``: the ``cslc`` invocation (fabric dims and offsets for the
  rectangle, ``--memcpy --channels=1``) and the run command, with the
  simulator stand-ins as a fallback when ``cslc`` is absent;
* ``README.md``.

Nothing is written unless the whole program prints: ops the CSL printer would
drop are rejected first (``CslPrintError``).
"""

from __future__ import annotations

import inspect
import json
import math
from io import StringIO
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from .csl_printer import print_csl, split_csl_files
from .wse_to_csl.host import PROGRAM_FILE, CslProgram, IoSpec

LAYOUT_FILE = "layout"
FABRIC_OFFSETS = (4, 1)  # memcpy: 3 columns west (+1), a row above the kernel


# ---- host-side helpers: copied verbatim into run.py ----

def host_tiles(arr, shape, dims, tile, region):
    """A host array -> the flat (h, w, elems) array memcpy_h2d copies to ``region``.

    PE (x, y) gets the block of ``arr`` at its coordinates (a dim on "x" takes
    the x-th block of ``tile`` elements, "y" the y-th, "-" the whole dim),
    zero-padded to the tile shape.
    """
    import numpy as np

    x0, y0, w, h = region
    arr = np.asarray(arr, dtype=np.float32).reshape(shape)
    tshape = tuple(tile) if tile else (1,)
    out = np.zeros((h, w) + tshape, np.float32)
    for j in range(h):
        for i in range(w):
            idx = []
            for n, d, t in zip(shape, dims, tile):
                p = x0 + i if d == "x" else y0 + j if d == "y" else None
                lo = 0 if p is None else min(p * t, n)
                idx.append(slice(lo, min(n, lo + t) if p is not None else n))
            block = arr[tuple(idx)] if shape else arr.reshape(1)
            out[(j, i) + tuple(slice(0, s) for s in block.shape)] = block
    return out.reshape(-1)


def host_untile(flat, shape, dims, tile, region):
    """The inverse of ``host_tiles``: memcpy_d2h's flat array -> the host array."""
    import numpy as np

    x0, y0, w, h = region
    tshape = tuple(tile) if tile else (1,)
    tiles = np.asarray(flat, np.float32).reshape((h, w) + tshape)
    out = np.zeros(shape, np.float32)
    if not shape:
        return tiles.reshape(-1)[:1].reshape(())
    for j in range(h):
        for i in range(w):
            idx, src = [], []
            for n, d, t in zip(shape, dims, tile):
                p = x0 + i if d == "x" else y0 + j if d == "y" else None
                lo = 0 if p is None else min(p * t, n)
                hi = min(n, lo + t) if p is not None else n
                idx.append(slice(lo, hi))
                src.append(slice(0, hi - lo))
            out[tuple(idx)] = tiles[(j, i) + tuple(src)]
    return out


def memcpy_words(io, data, memcpy_type):
    """memcpy_h2d's host array for ``io`` and its data type: f32 words, or for an f16
    symbol 16-bit data (``MEMCPY_16BIT``: one u32 per element, the half's bits in
    the low 16, as the SDK's ``sdk_utils.input_array_to_u32`` makes it)."""
    import numpy as np

    if io.get("half"):
        bits = np.asarray(data, np.float32).astype(np.float16).view(np.uint16)
        return bits.astype(np.uint32), type(memcpy_type).MEMCPY_16BIT
    return np.asarray(data, np.float32), memcpy_type


def memcpy_values(io, words):
    """The f32 values of memcpy_d2h's host array for ``io`` (see ``memcpy_words``)."""
    import numpy as np

    if io.get("half"):
        return (np.asarray(words, np.uint32) & 0xFFFF).astype(np.uint16).view(
            np.float16).astype(np.float32)
    return words


def read_symbol(runner, io, memcpy_order, memcpy_type):
    """memcpy_d2h of ``io``: its host array (f32 values; an f16 symbol as 16-bit data)."""
    import numpy as np

    x0, y0, w, h = io["region"]
    elems = max(1, int(np.prod(io["tile"])))
    words, dtype = memcpy_words(io, np.zeros(w * h * elems, np.float32), memcpy_type)
    runner.memcpy_d2h(words, runner.get_id(io["name"]), x0, y0, w, h, elems,
                      streaming=False, order=memcpy_order, data_type=dtype, nonblock=False)
    out = host_untile(memcpy_values(io, words), io["shape"], io["dims"], io["tile"],
                      io["region"])
    return out != 0 if io["mask"] else out


def write_symbol(runner, io, arr, memcpy_order, memcpy_type):
    """memcpy_h2d of ``arr`` to ``io`` (an f16 symbol as 16-bit data)."""
    x0, y0, w, h = io["region"]
    data = host_tiles(arr, io["shape"], io["dims"], io["tile"], io["region"])
    words, dtype = memcpy_words(io, data, memcpy_type)
    runner.memcpy_h2d(runner.get_id(io["name"]), words, x0, y0, w, h, data.size // (w * h),
                      streaming=False, order=memcpy_order, data_type=dtype, nonblock=False)


def run_program(runner, spec, inputs, memcpy_order, memcpy_type):
    """Copy ``inputs`` in, launch, copy the outputs out (one SdkRuntime session)."""
    for io, arr in zip(spec["inputs"], inputs):
        write_symbol(runner, io, arr, memcpy_order, memcpy_type)
    runner.launch(spec["launch"], nonblock=False)
    return [read_symbol(runner, io, memcpy_order, memcpy_type) for io in spec["outputs"]]


def run_steps(runner, spec, inputs, steps, memcpy_order, memcpy_type):
    """``steps`` launches of a training step: state loaded once, batches streamed.

    ``spec["resident"]`` pairs an input with the output that updates it in place
    (one buffer on the PEs): it is copied in before the first step only. An
    input given as ``steps`` stacked values sends one per step, others are sent
    before every step. After each step the first ``spec["requested"]`` outputs
    (the loss) are copied out; the rest (the weights, read from the buffers they
    were updated in) once, after the last step. Returns the outputs (requested
    ones stacked over the steps when ``steps`` > 1)."""
    import numpy as np

    resident = {i for i, _ in spec.get("resident", [])}
    n_req = spec.get("requested", len(spec["outputs"]))
    per_step = [np.asarray(a).shape == (steps, *io["shape"]) and steps > 1
                for io, a in zip(spec["inputs"], inputs)]

    def copy_in(io, arr):
        write_symbol(runner, io, arr, memcpy_order, memcpy_type)

    def copy_out(io):
        return read_symbol(runner, io, memcpy_order, memcpy_type)

    losses = [[] for _ in range(n_req)]
    for step in range(steps):
        for i, (io, arr) in enumerate(zip(spec["inputs"], inputs)):
            if step == 0 or (i not in resident):
                copy_in(io, np.asarray(arr)[step] if per_step[i] else arr)
        runner.launch(spec["launch"], nonblock=False)
        for k in range(n_req):
            losses[k].append(copy_out(spec["outputs"][k]))
    outputs = [np.stack(v) if steps > 1 else v[0] for v in losses]
    return outputs + [copy_out(io) for io in spec["outputs"][n_req:]]


_RUN_PY = '''#!/usr/bin/env cs_python
"""Host script generated by pyflame-mlir: runs {name} on a Cerebras system or simulator.

    cs_python run.py --name out [--inputs DIR] [--outputs DIR] [--cmaddr IP:PORT]
                     [--steps N]

Reads in_<i>.npy from --inputs (default: this directory), copies them to the
PEs, launches `{launch}`, copies the outputs back and saves out_<i>.npy.
With --steps N (a training step): the resident state is copied in once, an
input holding N stacked values gives one per step, the requested outputs (the
loss) are copied out after every step (saved stacked) and the state at the end.
"""

import argparse
import json
import os

import numpy as np
from cerebras.sdk.runtime.sdkruntimepybind import (  # pylint: disable=no-name-in-module
    MemcpyDataType,
    MemcpyOrder,
    SdkRuntime,
)

HERE = os.path.dirname(os.path.abspath(__file__))

{helpers}

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", help="the cslc output directory", default="out")
    parser.add_argument("--cmaddr", help="IP:port of a CS system (default: simulator)")
    parser.add_argument("--inputs", default=HERE, help="directory with in_<i>.npy")
    parser.add_argument("--outputs", default=HERE, help="directory for out_<i>.npy")
    parser.add_argument("--steps", type=int, default=1, help="launches (training steps)")
    args = parser.parse_args()
    with open(os.path.join(HERE, "program.json"), encoding="utf-8") as f:
        spec = json.load(f)
    inputs = [np.load(os.path.join(args.inputs, io["name"] + ".npy"))
              for io in spec["inputs"]]
    runner = SdkRuntime(args.name, cmaddr=args.cmaddr)
    runner.load()
    runner.run()
    outputs = run_steps(runner, spec, inputs, args.steps, MemcpyOrder.ROW_MAJOR,
                        MemcpyDataType.MEMCPY_32BIT)
    runner.stop()
    os.makedirs(args.outputs, exist_ok=True)
    for io, out in zip(spec["outputs"], outputs):
        np.save(os.path.join(args.outputs, io["name"] + ".npy"), out)
    print("outputs:", ", ".join(f"{{io['name']}} {{list(o.shape)}}"
                                for io, o in zip(spec["outputs"], outputs)))


if __name__ == "__main__":
    main()
'''

_COMMANDS = '''#!/usr/bin/env bash
# Compile and run {name} (generated by pyflame-mlir), as the SDK examples do:
#   bash commands.sh [run.py args]            simulator build: a fabric just large
#                                             enough for the {w}x{h} rectangle + memcpy
#   bash commands.sh --hardware W,H --cmaddr IP:PORT [run.py args]
#                                             hardware build: the system's fabric
#                                             dims (e.g. 757,996 on a CS-2)
# Without the Cerebras SDK the simulator build runs on the pyflame-mlir WSE
# simulator and its cslc stand-in; a hardware build needs the SDK.
set -euo pipefail
cd "$(dirname "$0")"
dims={fw},{fh}
out=out
if [ "${{1:-}}" = "--hardware" ]; then
  if [ -z "${{2:-}}" ]; then
    echo "commands.sh: --hardware needs the system's fabric dims, e.g. --hardware 757,996" >&2
    exit 2
  fi
  dims=$2
  out=out_hw
  shift 2
  if ! command -v cslc >/dev/null 2>&1; then
    echo "commands.sh: a hardware build needs the Cerebras SDK (cslc, cs_python)" >&2
    exit 2
  fi
else
  for arg in "$@"; do
    case $arg in --cmaddr*)
      echo "commands.sh: --cmaddr runs on a system: build for it with --hardware W,H" \\
           "(the system's fabric dims)" >&2
      exit 2;;
    esac
  done
fi
if command -v cslc >/dev/null 2>&1 && command -v cs_python >/dev/null 2>&1; then
  cslc {layout}.csl --arch={arch} --fabric-dims=$dims --fabric-offsets={ox},{oy} \\
    --memcpy --channels=1 -o $out
  cs_python run.py --name $out "$@"
else
  python -m pyflame_mlir.runtime.wse.compile program.mlir --arch={arch} -o out
  python -m pyflame_mlir.runtime.wse.run_host run.py --name out "$@"
fi
'''

_README = '''# {name}: CSL program generated by pyflame-mlir

A {w}x{h} rectangle of PEs ({arch}); every PE runs `pe_program.csl` with its
coordinates as params; `layout.csl` places it and sets the routes
(colors {colors}). The host launches `compute` once per run.

| file | what |
| --- | --- |
| `layout.csl`, `pe_program.csl` | the CSL program (`cslc layout.csl ...`) |
| `program.mlir` | the same program as xDSL `csl` IR (for the pyflame-mlir simulator) |
| `program.json` | inputs and outputs: memcpy symbol, shape, placement, PE region |
| `run.py` | SDK host script: `in_<i>.npy` in, `out_<i>.npy` out |
| `commands.sh` | compile and run (the SDK when present, else the simulator) |

Inputs: {inputs}.
Outputs: {outputs}.
SRAM for data per PE: {mem} bytes ({nbuf} buffers).

    bash commands.sh                 # writes out_<i>.npy next to run.py
'''


def host_helpers_source() -> str:
    return "\n\n".join(inspect.getsource(f) for f in (
        host_tiles, host_untile, memcpy_words, memcpy_values, read_symbol, write_symbol,
        run_steps))


def program_spec(prog: CslProgram, name: str = "main", requested: int | None = None) -> dict:
    """``program.json``; ``requested``: how many leading outputs a training loop copies
    out after every step (the loss; default all)."""
    return {"name": name, "arch": prog.arch, "rectangle": [prog.grid.width, prog.grid.height],
            "launch": prog.launch, "inputs": [io.to_json() for io in prog.inputs],
            "outputs": [io.to_json() for io in prog.outputs],
            "resident": [[i, k] for i, k in sorted(prog.resident.items())],
            "requested": len(prog.outputs) if requested is None else requested,
            "memory_bytes_per_pe": prog.memory_bytes, "colors": prog.colors}


def bare_ir_text(module: ModuleOp) -> str:
    """The IR of ``module`` without its module attributes (the host interface the
    conversions record there lives in ``program.json``)."""
    attrs = dict(module.attributes)
    module.attributes.clear()
    try:
        return str(module)
    finally:
        module.attributes.update(attrs)


def print_program(module: ModuleOp) -> dict[str, str]:
    """{file stem: CSL source}; raises CslPrintError before anything is written."""
    text = StringIO()
    print_csl(module, text)
    return split_csl_files(text.getvalue())


def _describe(ios: list[IoSpec]) -> str:
    return ", ".join(f"`{i.name}` {list(i.shape)} on [{', '.join(i.dims)}]" for i in ios) or "none"


def emit(prog: CslProgram, out_dir: str | Path, name: str = "main",
         inputs: list[np.ndarray] | None = None, requested: int | None = None) -> Path:
    """Write the project (see the module docstring); ``inputs`` are saved as in_<i>.npy;
    ``requested``: the outputs a training loop copies out every step (default all)."""
    files = print_program(prog.module)  # may raise: nothing written yet
    if set(files) != {LAYOUT_FILE, PROGRAM_FILE}:
        raise ValueError(f"expected {LAYOUT_FILE} and {PROGRAM_FILE} modules, got {sorted(files)}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for stem, text in files.items():
        (out / f"{stem}.csl").write_text(text)
    (out / "program.mlir").write_text(bare_ir_text(prog.module) + "\n")
    spec = program_spec(prog, name, requested)
    (out / "program.json").write_text(json.dumps(spec, indent=1) + "\n")
    (out / "run.py").write_text(_RUN_PY.format(name=name, launch=prog.launch,
                                               helpers=host_helpers_source()))
    w, h = prog.grid.width, prog.grid.height
    cmds = _COMMANDS.format(name=name, layout=LAYOUT_FILE, arch=prog.arch, w=w, h=h,
                            fw=w + 7, fh=h + 2,
                            ox=FABRIC_OFFSETS[0], oy=FABRIC_OFFSETS[1])
    (out / "commands.sh").write_text(cmds)
    (out / "commands.sh").chmod(0o755)
    colors = ", ".join(f"{k}: {v}" for k, v in prog.colors.items()) or "none"
    (out / "README.md").write_text(_README.format(
        name=name, w=w, h=h, arch=prog.arch, colors=colors, inputs=_describe(prog.inputs),
        outputs=_describe(prog.outputs), mem=prog.memory_bytes, nbuf=len(prog.memory.sizes)))
    for i, arr in enumerate(inputs or []):
        np.save(out / f"in_{i}.npy", np.asarray(arr))
    for k, arr in prog.constants.items():
        np.save(out / f"{k}.npy", np.asarray(arr))
    return out


def elems(io: IoSpec) -> int:
    return max(1, math.prod(io.tile))
