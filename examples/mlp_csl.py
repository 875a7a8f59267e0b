"""The README demo MLP compiled to CSL for the Cerebras Wafer-Scale Engine.

The same model and data as examples/mlp.py: x[1024, 512] @ w1[512, 256] + b1,
relu, @ w2[256, 10], softmax, log, sum, neg. The loss is compiled through the
csl backend (pyflame -> wse -> csl), written out as a complete SDK project
(layout.csl, pe_program.csl, run.py, commands.sh, README.md) with the input
data, and the written project is then run as a user would run it: the cslc
stand-in compiles program.mlir and the emitted run.py runs unchanged against
the WSE simulator's SdkRuntime. The loss must equal the reference backend's.

    python examples/mlp_csl.py            # full size: a 16x16 grid, about 2-3 minutes
    python examples/mlp_csl.py --small    # 256x128 @ 128x64 @ 64x10, seconds
    python examples/mlp_csl.py --out DIR  # the project in DIR (default: the csl cache)
"""

import argparse
import contextlib
import io
import time
from pathlib import Path

import numpy as np

import pyflame_mlir as pf
from pyflame_mlir.runtime.wse.compile import compile_program
from pyflame_mlir.runtime.wse.run_host import run_script

# The loss's recorded graph is what is exported, so this demo records lazily
# even under PYFLAME_EAGER=1 (which runs every op at once: there would be no graph).
pf.CONFIG.eager = False

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--small", action="store_true", help="a scaled-down MLP (fast)")
ap.add_argument("--out", help="directory for the SDK project (default: the csl cache, "
                "a directory named by the program's key; `python -m pyflame_mlir cache info`)")
ap.add_argument("--arch", default="wse2", choices=("wse2", "wse3"))
args = ap.parse_args()
batch, dim, hidden, classes = (256, 128, 64, 10) if args.small else (1024, 512, 256, 10)

pf.manual_seed(0)
x = pf.randn([batch, dim])
w1 = (pf.randn([dim, hidden]) * 0.05).eval()
b1 = pf.full([hidden], 0.01)
w2 = (pf.randn([hidden, classes]) * 0.05).eval()


def demo_loss():
    h = pf.relu(x @ w1 + b1)
    probs = pf.softmax(h @ w2, dim=1)
    return -pf.log(probs).sum()


reference = demo_loss().item()  # the default backend
print(f"reference loss = {reference:.6f}")

t0 = time.perf_counter()
project, exe = pf.export_csl(demo_loss(), Path(args.out) / "mlp" if args.out else None,
                             arch=args.arch)
print(f"\ncompiled to CSL in {time.perf_counter() - t0:.2f} s: {exe.describe()}")
print("wrote " + ", ".join(sorted(p.name for p in project.iterdir())) + f" to {project}")

# run the written project: cslc stand-in, then the emitted run.py, unchanged
compiled = compile_program(project / "program.mlir", project / "out", arch=args.arch)
t0 = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()):
    (report,) = run_script(project / "run.py", ["--name", str(compiled)])
loss = float(np.load(project / "out_0.npy"))
print(f"\nsimulated the program in {time.perf_counter() - t0:.1f} s")
print(report)
print(f"\nCSL loss       = {loss:.6f}")
print(f"reference loss = {reference:.6f}   relative difference "
      f"{abs(loss - reference) / abs(reference):.2e}")
assert abs(loss - reference) <= 1e-5 * abs(reference), "the CSL loss differs"
