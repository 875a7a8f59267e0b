"""Laziness, realization, the graph API and memory behaviour of long loops."""

from __future__ import annotations

import gc
import inspect
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import pyflame_mlir as pf
from pyflame_mlir.core import OpNode


def test_recording_runs_nothing_and_knows_metadata(lazy):
    """Lazy-only: it checks that recording runs nothing."""
    before = pf.counters()
    x = pf.randn(8, 4)
    y = pf.relu(x @ pf.randn(4, 3) + 1.8125).sum(dim=1, keepdim=True)
    assert y.shape == (8, 1) and y.dtype is pf.float32 and y.ndim == 2 and y.size == 8
    assert y.size() == (8, 1) and y.numel() == 8
    assert pf.is_lazy(y)
    after = pf.counters()
    assert after["evaluations"] == before["evaluations"]
    assert after["compiles"] == before["compiles"]
    assert after["ops_recorded"] - before["ops_recorded"] == 5  # matmul const add relu sum


def test_only_needed_subgraph_runs(lazy):
    """Lazy-only: it counts what one evaluation of a recorded graph runs."""
    x = pf.randn(16)
    a, b = x + 1, x * 2
    np.testing.assert_allclose(a.numpy(), x.numpy() + 1, rtol=1e-6)
    assert not pf.is_lazy(a) and pf.is_lazy(b)
    # b's node now reads the realized x only; a is not part of b's graph
    assert pf.get_graph_stats(b)["num_ops"] == 2  # constant + mul


def test_eval_several_in_one_graph(lazy):
    """Lazy-only: it counts the evaluations of a recorded graph."""
    x = pf.randn(5, 5)
    a, b, c = x.exp(), x.sum(), x.T
    before = pf.counters()["executions"]
    pf.eval(a, b, c)
    assert pf.counters()["executions"] == before + 1
    assert not any(pf.is_lazy(t) for t in (a, b, c))
    xn = x.numpy()
    np.testing.assert_allclose(a.numpy(), np.exp(xn), rtol=1e-6)
    np.testing.assert_allclose(b.numpy(), xn.sum(), rtol=1e-5)
    np.testing.assert_array_equal(c.numpy(), xn.T)


def test_realized_tensor_is_a_leaf_for_later_graphs(lazy):
    """Lazy-only: it counts the ops of a recorded graph
    (in eager mode ``y`` is realized: no ops)."""
    x = pf.randn(3)
    h = (x * 3).eval()
    assert h._node is None
    y = h + 1
    stats = pf.get_graph_stats(y)
    assert stats["num_inputs"] == 1 and stats["num_ops"] == 2


def test_memory_stays_flat_in_long_loops():
    """A training-style loop that realizes each step keeps no history alive."""
    w = pf.zeros(64)
    for _ in range(5):  # warm up the cache
        w = (w - 0.01 * (w * 2.0 - 1.0)).eval()
    gc.collect()
    nodes_before = sum(type(o) is OpNode for o in gc.get_objects())
    for _ in range(300):
        w = (w - 0.01 * (w * 2.0 - 1.0)).eval()
    gc.collect()
    nodes_after = sum(type(o) is OpNode for o in gc.get_objects())
    assert nodes_after - nodes_before < 10
    assert pf.get_graph_stats(w)["num_ops"] == 0
    np.testing.assert_allclose(w.numpy(), 0.5 * (1 - 0.98 ** 305), rtol=1e-4)


def test_split_evaluates_requested_output_only(lazy):
    """Lazy-only: it counts what one evaluation of a recorded graph runs."""
    a, b, c = pf.split(pf.arange(10), [3, 3, 4])
    np.testing.assert_array_equal(b.numpy(), [3, 4, 5])
    assert pf.is_lazy(a) and pf.is_lazy(c)
    np.testing.assert_array_equal(c.numpy(), [6, 7, 8, 9])


def test_graph_scopes_and_threads():
    assert pf.current_graph() is pf.GRAPH
    with pf.graph_scope("inner") as g:
        assert pf.current_graph() is g
        seen = []
        t = threading.Thread(target=lambda: seen.append(pf.current_graph()))
        t.start(), t.join()
        assert seen == [pf.GRAPH]  # the current graph is thread-local
        x = pf.ones(3) + 3.375
        assert g.ops_recorded == 3
    assert pf.current_graph() is pf.GRAPH
    g2 = pf.create_graph("mine")
    with pf.reuse_graph(g2):
        (x * 2.625).eval()
    with pf.reuse_graph(g2):
        pf.ones(2).eval()
    assert g2.ops_recorded == 3 and g2.evaluations == 2


def test_graph_stats_counts_and_bytes(lazy):
    """Lazy-only: the statistics of a recorded graph."""
    x = pf.randn(10, 4)            # 160 bytes
    y = (x @ pf.randn(4, 2)).relu()  # leaf 32 bytes, matmul 80, relu 80
    s = pf.get_graph_stats(y)
    assert s == {"num_nodes": 4, "num_ops": 2, "num_inputs": 2,
                 "estimated_memory_bytes": 160 + 32 + 80 + 80}


def test_print_graph_format(capsys, lazy):
    """Lazy-only: the text of a recorded graph."""
    x, w = pf.randn(1024, 512), pf.randn(512, 256)
    b = pf.zeros(256)
    y = pf.softmax(pf.relu(x @ w + b), dim=1)
    pf.print_graph(y)
    assert capsys.readouterr().out.splitlines() == [
        "Graph:",
        "  %0 = input([1024, 512], f32)",
        "  %1 = input([512, 256], f32)",
        "  %2 = constant([256], f32)",
        "  %3 = matmul(%0, %1) -> [1024, 256]",
        "  %4 = add(%3, %2) -> [1024, 256]",
        "  %5 = relu(%4) -> [1024, 256]",
        "  %6 = softmax(%5, dim=1) -> [1024, 256]",
        "  outputs: [%6]",
    ]


def test_to_mlir_and_compile_graph(lazy):
    """Lazy-only: the IR of a recorded graph (eager mode: see
    test_nothing_to_compile_in_eager_mode_says_why_and_how)."""
    x = pf.randn(4, 4)
    y = (x + x).exp()
    text = pf.to_mlir(y)
    assert "func.func @main(%0: tensor<4x4xf32>) -> tensor<4x4xf32>" in text
    assert "pyflame.add %0, %0" in text and "pyflame.exp" in text
    rep = pf.compile_graph(y)
    # the default pipeline fuses add and exp into one pyflame.fused op
    assert not rep.cached and rep.ops_before == 2 and rep.ops_after == 1
    assert rep.pass_statistics["fuse"]["fused"] == 1
    assert set(rep.timings) == {"ir_build", "passes", "lowering", "total"}
    assert all(v >= 0 for v in rep.timings.values())
    assert pf.is_lazy(y)  # compiling does not run
    hits = pf.cache_stats()["hits"]
    y.numpy()
    assert pf.cache_stats()["hits"] == hits + 1
    assert pf.compile_graph(pf.exp(x + x)).cached


def test_compile_graph_counts_removed_ops(lazy):
    """Lazy-only: it compiles a recorded graph."""
    x = pf.randn(4)
    y = pf.exp(x) + pf.exp(x)  # two structurally equal exps: CSE merges them
    rep = pf.compile_graph(y)
    assert rep.ops_before == 3 and rep.ops_after == 1  # then exp and add fuse
    assert rep.pass_statistics["fixed-point/cse"]["merged"] == 1
    raw = pf.compile_graph(y, optimize=False)
    assert raw.ops_after == 3 and raw.key != rep.key


def test_eager_mode_env():
    code = ("import pyflame_mlir as pf, numpy as np; x = pf.randn(3); y = x.exp() * 2; "
            "assert not pf.is_lazy(y); "
            "np.testing.assert_allclose(y.numpy(), np.exp(x.numpy()) * 2, rtol=1e-6); "
            "print(pf.counters()['evaluations'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "PYFLAME_EAGER": "1"}, check=True)
    assert int(out.stdout) == 2  # exp, then mul (with the constant 2 in its graph, as lazily)


def test_exact_dtypes_survive_the_plan():
    for dt in (pf.float16, pf.bfloat16, pf.float32, pf.float64):
        x = pf.randn(8, dtype=dt)
        y = (x * 2 + 1).exp().sum()
        assert y.dtype is dt and y.numpy().dtype == dt.np


def test_results_are_not_clobbered_by_buffer_reuse():
    def f(x):
        return ((x * 2 + 1) * 3 - x).relu() * (x + 5)

    x1 = pf.randn(32)
    y1 = f(x1).numpy().copy()
    r1 = f(x1)
    r1.numpy()
    for _ in range(3):
        f(pf.randn(32)).numpy()
    np.testing.assert_array_equal(r1.numpy(), y1)



def test_constants_are_made_once_per_plan_and_never_shared_with_results():
    """A plan makes each constant once (a splat as a read-only view); a
    constant returned as a result is the user's own writable array, run after
    run, and the plan's value stays intact."""
    dense = np.arange(6, dtype=np.float32).reshape(2, 3)

    def folded():  # a full (not splat) constant, returned and also read by another op
        c = pf.arange(6, dtype=pf.float32).reshape(2, 3) * 2.0
        return pf.stack([c, pf.tensor(dense) + c])

    for make in (lambda: pf.full([2, 3], 1.5),
                 lambda: pf.tensor(dense) * 1.0 + pf.full([2, 3], 0.0), folded,
                 lambda: pf.arange(6, dtype=pf.float32).reshape(2, 3) * 2.0):
        want = make().numpy().copy()
        for _ in range(3):  # a miss, then hits
            got = make().numpy()
            np.testing.assert_array_equal(got, want)
            assert got.flags.writeable and got.base is None
            got[...] = -7.0


def test_setitem_updates_the_tensor_in_place():
    """Issue 13: ``t[idx] = v`` works as in PyTorch (tensors were immutable)."""
    t = pf.ones(3)
    t[0] = 5
    np.testing.assert_allclose(t.numpy(), [5, 1, 1])


def test_reference_executable_guards_its_arguments_and_results(lazy):
    """The compiled plan refuses arguments of another shape or dtype, and a
    kernel that breaks its op's rule is reported, never returned.
    Lazy-only: it compiles the recorded graph of
    ``(x * 2.0).exp()`` (in eager mode a realized leaf)."""
    from pyflame_mlir.compiler import compile_subgraph, config_key
    from pyflame_mlir.core import collect

    x = pf.tensor(np.ones((2, 3), np.float32))
    sub = collect([(x * 2.0).exp()])
    ex = compile_subgraph(sub, sub.key(config_key())).executable
    np.testing.assert_allclose(ex.run([np.ones((2, 3), np.float32)])[0], np.exp(2.0), rtol=1e-6)
    with pytest.raises(ValueError, match=r"argument of shape \(3, 2\) float32"):
        ex.run([np.ones((3, 2), np.float32)])
    with pytest.raises(ValueError, match="float64 does not match"):
        ex.run([np.ones((2, 3), np.float64)])
    ex._program = lambda a: [np.zeros((2, 3), np.float64)]
    with pytest.raises(RuntimeError, match="a kernel broke its rule"):
        ex.run([np.ones((2, 3), np.float32)])


def test_elementwise_api_and_methods_come_from_the_op_table():
    """Every unary and binary elementwise op of the table (without attributes)
    is a ``pf`` function and a Tensor method, one definition for both; the
    operators are the same functions."""
    from pyflame_mlir.dialects import OPS

    table = [op.name for op in OPS.values()
             if op.family == "elementwise" and not op.attrs and op.num_inputs in (1, 2)]
    assert len(table) > 25
    # (pf.<name> may wrap the method's function for torch's ``out=``, and with the C
    # extension the Tensor method is a native method wrapping it: unwrapped, the same)
    for name in table:
        assert inspect.unwrap(getattr(pf.Tensor, name)) is inspect.unwrap(getattr(pf, name)), \
            name
        assert name in pf.__all__
    x = pf.randn(3)
    # ``+`` is the table's wrapper itself; pf.add adds torch's ``alpha=`` around it
    assert inspect.unwrap(pf.Tensor.__add__) is pf.ops.ELEMENTWISE["add"]
    assert inspect.unwrap(pf.Tensor.__eq__) is inspect.unwrap(pf.eq)
    np.testing.assert_allclose((2.0 - x).numpy(), 2.0 - x.numpy(), rtol=1e-6)
    assert {x: 1}[x] == 1  # setting __eq__ after the class kept its identity hash


def test_core_computes_through_the_installed_driver():
    """core.realize calls the evaluator compiler.py installed (the core never
    imports the driver)."""
    from pyflame_mlir import compiler, core

    assert core._evaluator == [compiler.evaluate]


def test_export_csl_writes_the_sdk_project_with_the_graphs_inputs(tmp_path, lazy):
    """pf.export_csl: the frontend builds and optimizes the module, the csl
    runtime (csl_backend.export_module) writes the project.
    Lazy-only: it exports a recorded graph."""
    x = pf.tensor(np.arange(8, dtype=np.float32).reshape(2, 4))
    project, exe = pf.export_csl((x * 2.0).relu().sum(), tmp_path / "p", grid=(1, 1))
    names = {p.name for p in project.iterdir()}
    assert {"layout.csl", "pe_program.csl", "run.py", "program.mlir"} <= names
    np.testing.assert_array_equal(np.load(project / "in_0.npy"), x.numpy())
    assert "1x1 grid" in exe.describe()
    with pytest.raises(ValueError, match="nothing to compile"):
        pf.export_csl(x, tmp_path / "q")


def test_to_mlir_of_a_function_says_how_to_get_its_ir():
    with pytest.raises(TypeError, match=r"expects tensors, got function .*pf.trace"):
        pf.to_mlir(lambda x: x)
    with pytest.raises(TypeError, match="expects tensors, got int"):
        pf.to_mlir([pf.ones(2), 3])


def test_nothing_to_compile_in_eager_mode_says_why_and_how(both_modes):
    """In eager mode an op's result is a value, not a graph: to_mlir and
    compile_graph say so and name the ways to get a graph; lazy mode records
    one (the result's IR has the op)."""
    y = pf.tensor(np.ones(3, np.float32)) * 2.0
    if both_modes == "lazy":
        assert "pyflame.mul" in pf.to_mlir(y)
        return
    with pytest.raises(ValueError, match=r"nothing to compile.*PYFLAME_EAGER=1.*pf.compile"):
        pf.to_mlir(y)
    with pytest.raises(ValueError, match=r"nothing to compile.*pf.CONFIG.eager = False"):
        pf.compile_graph(y)
    text = pf.compile(lambda t: t * 2.0).lower(pf.tensor(np.ones(3, np.float32))).as_text()
    assert "pyflame.mul" in text
