"""The emitted SDK project: its files, the names @set_tile_code uses, the emitted
run.py executed unchanged against the simulator's SdkRuntime, pyflame-opt's
``-t csl --output-dir``, and unprintable IR rejected before anything is written."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from pyflame_mlir.dialects import wse
from pyflame_mlir.lowering.csl_printer import CslPrintError
from pyflame_mlir.lowering.emit_csl import emit
from pyflame_mlir.lowering.to_csl import lower_to_csl
from pyflame_mlir.lowering.to_wse import WseOptions, lower_to_wse
from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, f32

import pyflame_mlir as pf
from pyflame_mlir.compiler import build_module, run_pipeline
from pyflame_mlir.core import collect
from pyflame_mlir.runtime.wse.compile import compile_program
from pyflame_mlir.runtime.wse.run_host import run_script

FILES = {"layout.csl", "pe_program.csl", "run.py", "commands.sh", "README.md",
         "program.json", "program.mlir"}


def _program(grid=(3, 2)):
    rng = np.random.default_rng(3)
    x = pf.tensor(rng.standard_normal((10, 7)).astype(np.float32))
    w = pf.tensor(rng.standard_normal((7, 4)).astype(np.float32))
    b = pf.tensor(rng.standard_normal(4).astype(np.float32))
    outs = [pf.softmax(x @ w + b, dim=1), (x @ w).sum(dim=0)]
    sub = collect(outs)
    module = build_module(sub)
    run_pipeline(module, "legalize-for-wse")  # the conversion takes legal IR
    low = lower_to_wse(module, WseOptions(grid=wse.Grid(*grid)))
    prog = lower_to_csl(low.module, plan=low.memory)
    leaves = [t._value for t in sub.leaves]
    inputs = [leaves[d] if k == "arg" else d for k, d in low.inputs]
    ref = [(np.exp(z - z.max(1, keepdims=True)) / np.exp(z - z.max(1, keepdims=True))
            .sum(1, keepdims=True)) for z in [leaves[0] @ leaves[1] + leaves[2]]]
    ref.append((leaves[0] @ leaves[1]).sum(0))
    return prog, inputs, ref


def test_project_files(tmp_path):
    prog, inputs, _ = _program()
    out = emit(prog, tmp_path / "proj", inputs=inputs)
    assert FILES <= {p.name for p in out.iterdir()}
    layout = (out / "layout.csl").read_text()
    assert re.search(r'@set_tile_code\(px\w*, py\w*, "pe_program.csl", tile_params\);', layout)
    assert "@set_rectangle(3, 2);" in layout
    pe = (out / "pe_program.csl").read_text()
    assert pe.count("sys_mod.unblock_cmd_stream();") == 1  # the end of the launched task
    assert '@export_symbol(compute, "compute");' in pe
    spec = json.loads((out / "program.json").read_text())
    assert [io["name"] for io in spec["inputs"]] == ["in_0", "in_1", "in_2"]
    cmds = (out / "commands.sh").read_text()
    assert "dims=10,4\n" in cmds  # the simulator build's fabric: rectangle + memcpy's margins
    assert "cslc layout.csl --arch=wse2 --fabric-dims=$dims --fabric-offsets=4,1" in cmds
    assert "--memcpy --channels=1" in cmds


def test_emitted_run_py_runs_unchanged_on_the_simulator(tmp_path):
    prog, inputs, ref = _program()
    proj = emit(prog, tmp_path / "proj", inputs=inputs)
    compiled = compile_program(proj / "program.mlir", tmp_path / "out")  # the cslc stand-in
    (report,) = run_script(proj / "run.py", ["--name", str(compiled)], quiet=True)
    got = [np.load(proj / f"out_{i}.npy") for i in range(2)]
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g, r, rtol=2e-5, atol=1e-6)
    assert report.total_cycles > 0 and (report.width, report.height) == (3, 2)


def test_commands_sh_falls_back_to_the_simulator(tmp_path):
    prog, inputs, ref = _program((2, 2))
    proj = emit(prog, tmp_path / "proj", inputs=inputs)
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
    r = subprocess.run(["bash", str(proj / "commands.sh")], capture_output=True, text=True,
                       env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "outputs: out_0 [10, 4], out_1 [4]" in r.stdout
    np.testing.assert_allclose(np.load(proj / "out_1.npy"), ref[1], rtol=2e-5, atol=1e-5)


def test_unprintable_ops_are_rejected_before_writing(tmp_path):
    prog, inputs, _ = _program()
    task = next(op for op in prog.module.walk() if op.name == "csl.task")
    body = task.body.block
    # arith.maximumf has no CSL spelling: the printer would drop it as a comment
    a = arith.ConstantOp(FloatAttr(1.0, f32))
    body.insert_op_before(a, body.first_op)
    body.insert_op_after(arith.MaximumfOp(a, a), a)
    target = tmp_path / "never"
    with pytest.raises(CslPrintError, match="no CSL spelling"):
        emit(prog, target)
    assert not target.exists()


def test_pyflame_opt_output_dir(tmp_path):
    src = tmp_path / "g.mlir"
    src.write_text('module attributes {wse.grid = "2x2"} {\n'
                   "  func.func @main(%0: tensor<8x6xf32>, %1: tensor<6xf32>) -> tensor<8xf32> {\n"
                   "    %2 = pyflame.matmul %0, %1 : (tensor<8x6xf32>, tensor<6xf32>) -> "
                   "tensor<8xf32>\n    func.return %2 : tensor<8xf32>\n  }\n}\n")
    opt = Path(sys.executable).parent / "pyflame-opt"
    r = subprocess.run([str(opt), str(src), "-t", "csl", "--output-dir", str(tmp_path / "p")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "// FILE: pe_program" in r.stdout and "@fmacs(" in r.stdout
    assert FILES <= {p.name for p in (tmp_path / "p").iterdir()}


def _fake_sdk(tmp_path: Path) -> Path:
    """cslc and cs_python stand-ins that log their arguments."""
    bindir = tmp_path / "sdk_bin"
    bindir.mkdir()
    for tool in ("cslc", "cs_python"):
        script = bindir / tool
        script.write_text(f'#!/bin/sh\necho "{tool} $*" >> "{tmp_path}/sdk.log"\n')
        script.chmod(0o755)
    return bindir


def test_commands_sh_hardware_build_takes_the_system_fabric_dims(tmp_path):
    """Issue 15: a simulator build sizes the fabric to the rectangle; a run on a
    system (--cmaddr) needs a build with the system's fabric dims (--hardware)."""
    prog, inputs, _ = _program((2, 2))
    proj = emit(prog, tmp_path / "proj", inputs=inputs)
    plain = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
    r = subprocess.run(["bash", str(proj / "commands.sh"), "--cmaddr", "10.0.0.1:9000"],
                       capture_output=True, text=True, env=plain, timeout=60)
    assert r.returncode == 2 and "build for it with --hardware W,H" in r.stderr
    r = subprocess.run(["bash", str(proj / "commands.sh"), "--hardware", "757,996"],
                       capture_output=True, text=True, env=plain, timeout=60)
    assert r.returncode == 2 and "needs the Cerebras SDK" in r.stderr
    sdk = {"PATH": f"{_fake_sdk(tmp_path)}:{plain['PATH']}"}
    r = subprocess.run(["bash", str(proj / "commands.sh"), "--hardware", "757,996",
                        "--cmaddr", "10.0.0.1:9000"], capture_output=True, text=True, env=sdk,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    subprocess.run(["bash", str(proj / "commands.sh")], check=True, env=sdk, timeout=60)
    log = (tmp_path / "sdk.log").read_text().splitlines()
    assert log[0] == ("cslc layout.csl --arch=wse2 --fabric-dims=757,996 --fabric-offsets=4,1 "
                      "--memcpy --channels=1 -o out_hw")
    assert log[1] == "cs_python run.py --name out_hw --cmaddr 10.0.0.1:9000"
    assert log[2].startswith("cslc layout.csl --arch=wse2 --fabric-dims=9,4 ")
    assert log[3] == "cs_python run.py --name out"


@pytest.mark.parametrize("arch", ["wse2", "wse3"])
def test_sdk_versions_write_their_idioms(tmp_path, arch):
    """Issue 15: SDK 2.x (the default) dropped `.fabric_color` from fabin DSDs (and
    from fabout DSDs on WSE-3) and initializes queues on both archs; SDK 1.x
    fabric DSDs name their color, and queue set-up is WSE-3 only."""
    pf.manual_seed(0)
    x, w = pf.randn(8, 6), pf.randn(6, 4)
    y = (x @ w).sum(1)
    texts = {}
    for sdk in (1, 2):
        out, _ = pf.export_csl(y, tmp_path / f"sdk{sdk}", grid=(2, 2), arch=arch,
                               sdk_version=sdk)
        texts[sdk] = (out / "pe_program.csl").read_text()
    fabin = re.compile(r"@get_dsd\(fabin_dsd, \.\{\n\s*\.extent = \w+,\n\s*(\.\w+)")
    fabout = re.compile(r"@get_dsd\(fabout_dsd, \.\{\n\s*\.extent = \w+,\n\s*(\.\w+)")
    assert set(fabin.findall(texts[2])) == {".input_queue"}
    assert set(fabout.findall(texts[2])) == {".output_queue" if arch == "wse3" else ".fabric_color"}
    assert set(fabin.findall(texts[1])) == set(fabout.findall(texts[1])) == {".fabric_color"}
    assert '@is_arch("wse3")' not in texts[2] and "@initialize_queue(@get_input_queue" in texts[2]
    assert '@is_arch("wse3")' in texts[1]
    with pytest.raises(ValueError, match="sdk must be 1 or 2"):
        pf.export_csl(y, tmp_path / "bad", grid=(2, 2), sdk_version=3)


def test_sdk2_fabin_needs_its_queue_bound(tmp_path):
    """Without `.fabric_color`, a fabin DSD reads whatever color its queue is bound
    to: printing one whose queue no @initialize_queue binds would change what it
    reads, so it is refused."""
    prog, _, _ = _program((2, 2))
    for op in list(prog.module.walk()):
        if op.name == "csl_ext.initialize_queue":
            op.detach()
            op.erase()
    with pytest.raises(CslPrintError, match="must be bound to the DSD's color"):
        emit(prog, tmp_path / "never")
