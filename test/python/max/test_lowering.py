"""The MAX lowering without compiling: table coverage, result types of every
rule, errors that name the op, device selection, MO text, cache keys."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("max.graph", reason="the MAX backend needs `max`: "
                                        "pip install 'pyflame-mlir[max]'")

import _graphs  # noqa: E402
from pyflame_mlir.dialects import OPS  # noqa: E402
from pyflame_mlir.lowering import to_max  # noqa: E402

import pyflame_mlir as pf  # noqa: E402
from pyflame_mlir.compiler import build_module, make_context, pipeline_spec, run_pipeline  # noqa: E402
from pyflame_mlir.core import collect  # noqa: E402
from pyflame_mlir.runtime import max_backend  # noqa: E402


def module_of(*outs: pf.Tensor, optimize: bool = True):
    m = build_module(collect(list(outs)))
    if optimize:
        run_pipeline(m, pipeline_spec())
    run_pipeline(m, "legalize-for-max")  # what the backend and -t max run first
    return m


def test_every_op_has_a_max_lowering() -> None:
    # an op without a rule of its own reaches MAX as its decomposition (legalize-for-max)
    assert to_max.missing_lowerings() == []
    assert all(to_max.rule_for(name) is not None or OPS[name].decomposition is not None
               for name in OPS)
    assert all(to_max.rule_for(name) is not None for name in OPS if OPS[name].family != "fused")


def test_max_rules_are_keyed_by_op_table_entry() -> None:
    assert all(key is OPS[key.name] for key in to_max.MAX_LOWERINGS)
    assert to_max.rule_for("add") is to_max.rule_for(OPS["add"]) is not None
    with pytest.raises(KeyError, match="unknown pyflame op 'nosuch'"):
        to_max.rule_for("nosuch")
    with pytest.raises(KeyError, match="unknown pyflame op 'nosuch'"):
        to_max.lowers("nosuch")


def test_legalize_for_max_unfuses_and_rejects_ops_without_rules(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from xdsl.parser import Parser

    src = """
    func.func @f(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
      %0 = pyflame.fused_add_relu %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
      %1 = pyflame.erf %0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
      func.return %1 : tensor<4x8xf32>
    }
    """
    module = Parser(make_context(), src).parse_module()
    with pytest.raises(to_max.MaxLoweringError, match="legalize-for-max"):
        to_max.check_supported(to_max.find_main(module))  # fused ops: legalize first
    monkeypatch.delitem(to_max.MAX_LOWERINGS, OPS["erf"])
    with pytest.raises(to_max.MaxLoweringError, match=r"pyflame\.erf: no MAX lowering"):
        run_pipeline(module, "legalize-for-max")
    names = [op.name for op in to_max.find_main(module).body.block.ops]
    assert names == ["pyflame.add", "pyflame.relu", "pyflame.erf", "func.return"]


def test_the_all_ops_graph_uses_every_op() -> None:
    # the execution test compiles this graph: it must keep covering the whole table
    assert _graphs.missing_from_all_ops() == set()


def test_all_ops_graph_lowers_with_the_declared_types() -> None:
    outs, _ = _graphs.all_ops(decompositions=False)  # MAX refuses those (no LAPACK)
    lowered = to_max.lower_module(module_of(*outs))
    # _lower_op checks every op's MAX result type against its pyflame result type
    assert len(lowered.result_specs) == len(outs)
    assert [(t.shape, t.dtype) for t in outs] == lowered.result_specs
    assert lowered.text.startswith("mo.graph @pyflame_main(")
    assert lowered.graph.output_types and len(lowered.graph.output_types) == len(outs)


def test_semantic_branches_in_the_mo_text() -> None:
    b = pf.from_numpy(np.array([True, False]))
    c = pf.from_numpy(np.array([False, False]))
    i = pf.from_numpy(np.arange(4, dtype=np.int32).reshape(2, 2))
    text = to_max.lower_module(module_of(b + c, b * c, i.sum(0), pf.relu(i))).text
    assert "rmo.or(%arg0, %arg1)" in text  # numpy: bool + bool is logical or
    assert "rmo.and(%arg0, %arg1)" in text  # bool * bool is logical and
    assert "mo.cast(%arg2) : (!mo.tensor<[2, 2], si32>) -> !mo.tensor<[2, 2], si64>" in text
    assert "rmo.mo.reduce.add" in text  # the int32 sum accumulates in int64
    assert "rmo.mo.relu" not in text and "rmo.max(%arg2" in text  # integer relu: max(x, 0)


def test_op_without_rule_fails_before_compiling_and_names_the_op(
        monkeypatch: pytest.MonkeyPatch, max_cache: Path) -> None:
    monkeypatch.delitem(to_max.MAX_LOWERINGS, OPS["erf"])
    x = pf.from_numpy(np.ones((2, 3), np.float32))
    before = max_backend.stats()
    with pf.backend("max"), pytest.raises(to_max.MaxLoweringError, match=r"pyflame\.erf"):
        pf.erf(x * 2).numpy()
    after = max_backend.stats()
    assert after["compiles"] == before["compiles"]
    assert after["graph_builds"] == before["graph_builds"]


def test_builder_rejection_is_reported_with_the_op(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(cx, xs, op):  # a rule that produces the wrong type
        return [cx.ops.cast(xs[0], cx.dt(pf.float64))]

    monkeypatch.setitem(to_max.MAX_LOWERINGS, OPS["tanh"], broken)
    x = pf.from_numpy(np.ones((2, 3), np.float32))
    with pytest.raises(to_max.MaxLoweringError, match=r"pyflame\.tanh: result #0 lowered to "
                                                      r"float64"):
        to_max.lower_module(module_of(pf.tanh(x)))


def test_unavailable_reason_and_devices() -> None:
    assert max_backend.unavailable_reason() is None
    assert pf.BACKENDS["max"].available() is None
    assert to_max.device_spec("cpu") == "cpu"
    assert to_max.device_spec("GPU") == "gpu:0"
    assert to_max.device_spec("gpu:3") == "gpu:3"
    with pytest.raises(ValueError, match="unknown MAX device"):
        to_max.device_spec("tpu")
    with pytest.raises(RuntimeError, match="accelerator"):
        max_backend.set_device("gpu:999")
    assert max_backend.current_device() in ("cpu", "gpu:0")


def test_gpu_device_ref_in_the_graph() -> None:
    # building a graph for a GPU needs no GPU: only compiling does
    x = pf.from_numpy(np.ones((2, 3), np.float32))
    text = to_max.lower_module(module_of(pf.exp(x)), device="gpu:1").text
    assert "gpu" in text


def test_print_max_prints_one_graph_per_function() -> None:
    src = """
    func.func @first(%x: tensor<4xf32>) -> tensor<4xf32> {
      %0 = pyflame.exp %x : (tensor<4xf32>) -> tensor<4xf32>
      func.return %0 : tensor<4xf32>
    }
    func.func @second(%x: tensor<4xi1>, %y: tensor<4xi1>) -> (tensor<4xi1>, tensor<4xi1>) {
      %0 = pyflame.add %x, %y : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
      func.return %0, %x : tensor<4xi1>, tensor<4xi1>
    }
    """
    from xdsl.parser import Parser

    module = Parser(make_context(), src).parse_module()
    out = io.StringIO()
    to_max.print_max(module, out)
    text = out.getvalue()
    assert text.count("mo.graph @") == 2
    assert "mo.graph @first" in text and "mo.graph @second" in text
    with pytest.raises(to_max.MaxLoweringError, match="one func.func"):
        to_max.lower_module(module)


def test_cache_key_is_stable_across_processes_and_covers_device() -> None:
    x = pf.from_numpy(np.ones((2, 3), np.float32))
    text = max_backend.module_text(module_of(pf.exp(x) + 1.0))
    key = max_backend.cache_key(text, "cpu")
    assert key != max_backend.cache_key(text, "gpu:0")
    assert key != max_backend.cache_key(text.replace("exp", "log"), "cpu")
    code = ("import sys; from pyflame_mlir.runtime import max_backend as m; "
            "print(m.cache_key(sys.stdin.read(), 'cpu'))")
    out = subprocess.run([sys.executable, "-c", code], input=text, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == key


def test_environment_defaults() -> None:
    import os

    assert os.environ.get("MODULAR_TELEMETRY_ENABLED") is not None
    assert os.environ.get("MODULAR_CACHE_DIR")


# ---- symbolic batch (analysis and lowering; execution is in test_execution) ----

def _step_module(batch: int, mean: bool):
    x, y = _graphs.batch(batch, 16, 4)
    params = _graphs.init_mlp([16, 32, 4])
    h = pf.relu(x @ params[0] + params[1])
    logits = h @ params[2] + params[3]
    per_row = -(pf.log_softmax(logits, dim=1) * y).sum(dim=1)
    loss = per_row.mean() if mean else per_row.sum()
    loss.backward()
    with pf.no_grad():
        new = [p - 0.1 * p.grad for p in params]
    from pyflame_mlir.compiler import expand_transforms

    m = build_module(collect([loss, logits, *new]))
    expand_transforms(m)
    run_pipeline(m, pipeline_spec("max"))
    return to_max.find_main(m)


def test_batch_analysis_of_a_training_step() -> None:
    fn = _step_module(8, mean=False)
    plan = to_max.analyze_batch(fn)
    args = fn.body.block.args
    # x and the labels carry the batch; the two weights and two biases do not
    assert [sorted(plan.of(a)) for a in args] == [[0], [], [], [], [], [0]]
    lowered = to_max.lower_function(fn, plan=plan)
    assert "<batch>" in lowered.text and "[batch, 16]" in lowered.text
    assert lowered.result_sym[1] == frozenset({0})  # logits [batch, 4]


def test_one_symbolic_key_for_every_batch_size_unless_a_constant_depends_on_it() -> None:
    def text(batch: int, mean: bool) -> str:
        fn = _step_module(batch, mean)
        return to_max.abstract_text(fn, to_max.analyze_batch(fn))

    assert text(8, mean=False) == text(5, mean=False)
    # the gradient of a mean scales by 1/batch, a constant of the graph: the
    # two graphs are different computations and must not share a model
    assert text(8, mean=True) != text(5, mean=True)


@pytest.mark.parametrize("make, op", [
    (lambda x: x.reshape(-1), "reshape"),  # merges the batch into another dim
    (lambda x: x[1:], "slice"),  # takes part of the batch
    (lambda x: pf.cat([x, x], 0), "concat"),  # works along the batch
    (lambda x: pf.argmax(x), "argmax"),  # flattens
])
def test_graphs_that_pin_the_batch_are_refused_with_the_op(make, op: str) -> None:
    x = pf.from_numpy(np.ones((6, 3), np.float32))
    fn = to_max.find_main(module_of(pf.exp(make(x))))
    with pytest.raises(to_max.MaxLoweringError, match=rf"pyflame\.{op}: symbolic batch"):
        to_max.analyze_batch(fn)


def test_symbolic_shapes_through_shape_ops() -> None:
    x = pf.from_numpy(np.ones((6, 3, 4), np.float32))
    w = pf.from_numpy(np.ones((4, 5), np.float32))
    outs = [(x @ w).permute(2, 0, 1), x.reshape(6, 12), x[:, 1:, ::2],
            pf.broadcast_to(x[:, :1], (6, 3, 4)), x.sum((1, 2)), pf.softmax(x, 0),
            pf.ones(6, 3, 4) * x, pf.logsumexp(x, 1)]
    fn = to_max.find_main(module_of(*outs))
    plan = to_max.analyze_batch(fn)
    text = to_max.lower_function(fn, plan=plan).text
    for want in ("[5, batch, 3]", "[batch, 12]", "[batch, 2, 2]", "[batch, 3, 4]", "[batch]"):
        assert want in text, want
    res = fn.body.block.last_op.operands
    assert [sorted(plan.of(v)) for v in res] == [[1], [0], [0], [0], [0], [0], [0], [0]]


def test_config_token_follows_device_and_symbolic_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(max_backend, "_symbolic_override", None)
    monkeypatch.setenv("PYFLAME_MAX_SYMBOLIC_BATCH", "1")
    monkeypatch.setenv("PYFLAME_MAX_DEVICE", "cpu")
    assert max_backend.config_token() == ("cpu", True)
    max_backend.set_symbolic_batch(False)
    assert max_backend.config_token() == ("cpu", False)
