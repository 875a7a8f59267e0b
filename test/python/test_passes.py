"""The optimization passes from Python: what they change and what they keep,
statistics, the pipeline API, and the fused kernels of the reference backend
(bit-identical to the unfused chains)."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from pyflame_mlir.dialects import OPS
from pyflame_mlir.dialects.fused import CHAINS, FusedProgram, ProgramOp, plan_layout
from pyflame_mlir.lowering.reference import lower
from pyflame_mlir.passes import DEFAULT_PIPELINE, PASSES, PIPELINES, PORTABLE_PIPELINE
from pyflame_mlir.passes.common import count_ops
from pyflame_mlir.passes.pipeline import PipelineError
from xdsl.parser import Parser

import pyflame_mlir as pf
from pyflame_mlir.compiler import make_context, pipeline_spec, run_pipeline
from pyflame_mlir.runtime.reference import ReferenceExecutable

OPT = str(Path(sys.executable).parent / "pyflame-opt")
F32 = np.float32


def parse(text: str):
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


def optimize(text: str, spec: str):
    module = parse(text)
    stats = run_pipeline(module, spec)
    module.verify()
    return module, stats


def op_names(module) -> list[str]:
    return [op.name for op in module.walk()]


def execute(module, *args: np.ndarray) -> list[np.ndarray]:
    return ReferenceExecutable(lower(module)).run(list(args))


@pytest.fixture
def pipeline():
    """Restore the default pipeline after the test."""
    yield
    pf.set_pipeline(None)


# ---- constant folding ----

FOLD = """
func.func @f() -> tensor<3xf32> {
  %a = pyflame.constant {value = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %b = pyflame.constant {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %0 = pyflame.mul %a, %b : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %1 = pyflame.exp %0 : (tensor<3xf32>) -> tensor<3xf32>
  func.return %1 : tensor<3xf32>
}
"""


def test_folding_calls_the_op_tables_kernels(monkeypatch):
    calls: list[str] = []
    for name in ("mul", "exp"):
        kernel = OPS[name].kernel

        def spy(*args, _k=kernel, _n=name, **kw):
            calls.append(_n)
            return _k(*args, **kw)
        monkeypatch.setattr(OPS[name], "kernel", spy)
    module, stats = optimize(FOLD, "constant-fold")
    assert calls == ["mul", "exp"]
    assert op_names(module).count("pyflame.constant") == 1
    (result,) = execute(module)
    np.testing.assert_array_equal(result, np.exp(np.array([2, 4, 6], F32)))
    assert stats.records["constant-fold"].counters == {"folded": 2, "removed": 3}


def test_folding_respects_the_size_limit():
    module, _ = optimize(FOLD, "constant-fold{size-limit=2}")
    assert "pyflame.mul" in op_names(module) and "pyflame.exp" in op_names(module)


def test_folding_keeps_ieee_results():
    text = """
    func.func @f() -> (tensor<2xf32>, tensor<2xf32>) {
      %z = pyflame.constant {value = dense<[0.0, -0.0]> : tensor<2xf32>} : () -> tensor<2xf32>
      %nan = pyflame.div %z, %z : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      %0 = pyflame.mul %nan, %z : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      %1 = pyflame.add %z, %z : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      func.return %0, %1 : tensor<2xf32>, tensor<2xf32>
    }
    """
    raw = execute(parse(text))
    module, _ = optimize(text, "constant-fold")
    assert op_names(module).count("pyflame.constant") == 2
    folded = execute(module)
    assert np.isnan(folded[0]).all()
    np.testing.assert_array_equal(np.signbit(folded[1]), [False, True])
    for a, b in zip(raw, folded):
        np.testing.assert_array_equal(bits(a), bits(b))


# ---- algebraic simplification: the default never changes a bit ----

SPECIALS = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -2.5, 3e38], F32)
NOT_EXACT = """
func.func @f(%x: T8) -> (T8, T8, T8, T8, T8, T8) {
  %zero = pyflame.constant {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %0 = pyflame.mul %x, %zero : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %1 = pyflame.sub %x, %x : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %2 = pyflame.add %x, %zero : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %3 = pyflame.div %x, %x : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %l = pyflame.log %x : (tensor<8xf32>) -> tensor<8xf32>
  %4 = pyflame.exp %l : (tensor<8xf32>) -> tensor<8xf32>
  %n = pyflame.neg %x : (tensor<8xf32>) -> tensor<8xf32>
  %d = pyflame.sub %x, %x : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %5 = pyflame.neg %d : (tensor<8xf32>) -> tensor<8xf32>
  func.return %0, %1, %2, %3, %4, %5 : T8, T8, T8, T8, T8, T8
}
""".replace("T8", "tensor<8xf32>")


def bits(a: np.ndarray) -> np.ndarray:
    """The bits of each value, every NaN as one pattern: IEEE leaves the sign
    and payload of an arithmetic NaN unspecified (x + -NaN may be either)."""
    return np.where(np.isnan(a), np.uint32(0x7FC00000), np.ascontiguousarray(a).view(np.uint32))


def test_default_simplification_keeps_nan_inf_and_signed_zeros():
    raw = execute(parse(NOT_EXACT), SPECIALS)
    module, stats = optimize(NOT_EXACT, "algebraic-simplify,cse,dce")
    assert stats.records["algebraic-simplify"].counters["rewritten"] == 0
    for a, b in zip(raw, execute(module, SPECIALS)):
        np.testing.assert_array_equal(bits(a), bits(b))


def test_fast_math_changes_what_the_default_keeps():
    raw = execute(parse(NOT_EXACT), SPECIALS)
    module, stats = optimize(NOT_EXACT, "algebraic-simplify{fast-math=true},dce")
    assert stats.records["algebraic-simplify"].counters["rewritten"] >= 5
    fast = execute(module, SPECIALS)
    assert np.isnan(raw[0][:3]).all() and (fast[0] == 0).all()  # NaN*0, inf*0 were NaN
    assert np.isnan(raw[1][:3]).all() and (fast[1] == 0).all()  # inf-inf was NaN
    assert np.signbit(raw[2][3]) == 0 and np.signbit(fast[2][3]) == 1  # -0.0 + 0.0


EXACT = """
func.func @f(%x: T8, %y: T8) -> (T8, T8, T8, T8) {
  %one = pyflame.constant {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %nz = pyflame.constant {value = dense<-0.0> : tensor<f32>} : () -> tensor<f32>
  %z = pyflame.constant {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %a = pyflame.mul %x, %one : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %b = pyflame.add %a, %nz : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %c = pyflame.sub %b, %z : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %0 = pyflame.div %c, %one : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %ny = pyflame.neg %y : (tensor<8xf32>) -> tensor<8xf32>
  %1 = pyflame.add %x, %ny : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %2 = pyflame.sub %x, %ny : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %n1 = pyflame.neg %x : (tensor<8xf32>) -> tensor<8xf32>
  %n2 = pyflame.neg %n1 : (tensor<8xf32>) -> tensor<8xf32>
  %3 = pyflame.abs %n2 : (tensor<8xf32>) -> tensor<8xf32>
  func.return %0, %1, %2, %3 : T8, T8, T8, T8
}
""".replace("T8", "tensor<8xf32>")


def test_exact_rewrites_are_bit_identical_on_specials():
    y = SPECIALS[::-1].copy()
    raw = execute(parse(EXACT), SPECIALS, y)
    module, stats = optimize(EXACT, "algebraic-simplify,dce")
    assert stats.records["algebraic-simplify"].counters["rewritten"] >= 6
    assert op_names(module).count("pyflame.neg") == 0
    for a, b in zip(raw, execute(module, SPECIALS, y)):
        np.testing.assert_array_equal(bits(a), bits(b))


# ---- cse / dce ----

def test_cse_merges_equal_ops_and_dce_removes_the_rest():
    text = """
    func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
      %0 = pyflame.exp %x : (tensor<4xf32>) -> tensor<4xf32>
      %1 = pyflame.exp %x : (tensor<4xf32>) -> tensor<4xf32>
      %2 = pyflame.mul %0, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %3 = pyflame.mul %x, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %4 = pyflame.sub %2, %3 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %5 = pyflame.sin %4 : (tensor<4xf32>) -> tensor<4xf32>
      func.return %4 : tensor<4xf32>
    }
    """
    module, stats = optimize(text, "cse,dce")
    assert op_names(module).count("pyflame.exp") == 1
    assert op_names(module).count("pyflame.mul") == 1
    assert "pyflame.sin" not in op_names(module)
    assert stats.records["cse"].counters == {"merged": 2}
    assert stats.records["dce"].counters == {"removed": 1}


# ---- fusion in the IR ----

def test_fusion_leaves_multi_use_producers_and_runs_right():
    text = """
    func.func @f(%x: tensor<64x32xf32>, %b: tensor<32xf32>) -> (tensor<64x32xf32>,
                                                                 tensor<64x32xf32>) {
      %0 = pyflame.add %x, %b : (tensor<64x32xf32>, tensor<32xf32>) -> tensor<64x32xf32>
      %1 = pyflame.relu %0 : (tensor<64x32xf32>) -> tensor<64x32xf32>
      %2 = pyflame.tanh %1 : (tensor<64x32xf32>) -> tensor<64x32xf32>
      %3 = pyflame.mul %2, %1 : (tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
      func.return %3, %0 : tensor<64x32xf32>, tensor<64x32xf32>
    }
    """
    rng = np.random.default_rng(0)
    x, b = rng.standard_normal((64, 32)).astype(F32), rng.standard_normal(32).astype(F32)
    raw = execute(parse(text), x, b)
    module, stats = optimize(text, "fuse")
    names = op_names(module)
    # %0 is a result and relu has two users: both stay outside the region
    assert names[:4] == ["builtin.module", "func.func", "pyflame.add", "pyflame.relu"]
    assert names[4:8] == ["pyflame.fused", "pyflame.tanh", "pyflame.mul", "pyflame.yield"]
    assert stats.records["fuse"].counters == {"fused": 1, "ops_fused": 2}
    for a, c in zip(raw, execute(module, x, b)):
        np.testing.assert_array_equal(a, c)


def test_unfuse_restores_plain_ops():
    text = """
    func.func @f(%x: tensor<8xf32>, %w: tensor<8x8xf32>) -> tensor<8xf32> {
      %0 = pyflame.matmul %x, %w : (tensor<8xf32>, tensor<8x8xf32>) -> tensor<8xf32>
      %1 = pyflame.gelu %0 {approximate = "none"} : (tensor<8xf32>) -> tensor<8xf32>
      %2 = pyflame.exp %1 : (tensor<8xf32>) -> tensor<8xf32>
      %3 = pyflame.sin %2 : (tensor<8xf32>) -> tensor<8xf32>
      func.return %3 : tensor<8xf32>
    }
    """
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal(8).astype(F32), rng.standard_normal((8, 8)).astype(F32)
    fused, _ = optimize(text, "fuse")
    assert "pyflame.fused_matmul_gelu" in op_names(fused) and "pyflame.fused" in op_names(fused)
    back, _ = optimize(text, "fuse,unfuse")
    assert not any("fused" in n for n in op_names(back))
    expected = execute(parse(text), x, w)[0]
    np.testing.assert_array_equal(execute(fused, x, w)[0], expected)
    np.testing.assert_array_equal(execute(back, x, w)[0], expected)


# ---- fused kernels: bit-identical to the chains they replace ----

def chain_reference(name: str, *xs: np.ndarray, **attrs) -> np.ndarray:
    prev = None
    for op, refs, attr_names in CHAINS[name]:
        args = [prev if r < 0 else xs[r] for r in refs]
        prev = OPS[op].kernel(*args, **{k: attrs[k] for k in attr_names})
    return np.asarray(prev)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, "bfloat16"])
@pytest.mark.parametrize("shapes", [((7,), (7,)), ((300, 257), (257,)),
                                    ((3, 1, 70000), (5, 1)), ((), ())])
def test_named_fused_kernels_match_their_chains(dtype, shapes):
    d = pf.dtype(dtype).np
    rng = np.random.default_rng(2)
    a, b = (rng.standard_normal(s).astype(d) for s in shapes)
    c = rng.standard_normal(shapes[1]).astype(d)
    for name, args in (("fused_add_relu", (a, b)), ("fused_mul_sigmoid", (a, b)),
                       ("fused_fma", (a, b, c))):
        got = OPS[name].kernel(*args)
        want = chain_reference(name, *args)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
        out = np.empty_like(want)  # with a planned buffer too
        assert OPS[name].kernel(*args, out=out) is out
        np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_matmul_epilogue_kernels(approximate):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((70, 40)).astype(F32), rng.standard_normal((40, 1500)).astype(F32)
    np.testing.assert_array_equal(OPS["fused_matmul_relu"].kernel(a, b),
                                  chain_reference("fused_matmul_relu", a, b))
    np.testing.assert_array_equal(
        OPS["fused_matmul_gelu"].kernel(a, b, approximate=approximate),
        chain_reference("fused_matmul_gelu", a, b, approximate=approximate))


def test_named_kernels_are_thread_safe():
    rng = np.random.default_rng(4)
    xs = [rng.standard_normal((200, 1000)).astype(F32) for _ in range(4)]
    errors: list[str] = []

    def work(x: np.ndarray) -> None:
        for _ in range(5):
            if not np.array_equal(OPS["fused_mul_sigmoid"].kernel(x, x),
                                  chain_reference("fused_mul_sigmoid", x, x)):
                errors.append("mismatch")
    threads = [threading.Thread(target=work, args=(x,)) for x in xs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def program_op(name: str, inputs, out_shape, dtype=F32, **attrs) -> ProgramOp:
    return ProgramOp.of(OPS[name], inputs, attrs, out_shape, dtype)


def test_chunked_program_with_broadcasts_constants_and_invariants():
    shape = (6, 5, 40)
    rng = np.random.default_rng(5)
    x = rng.standard_normal(shape).astype(F32)
    row = rng.standard_normal((5, 1)).astype(F32)
    two = np.broadcast_to(np.asarray(2.0, F32), ())
    ops = [program_op("exp", (1,), (5, 1)),          # 3: invariant along the chunked axis
           program_op("mul", (0, 3), shape),          # 4
           program_op("broadcast_to", (2,), (5, 40), shape=(5, 40)),  # 5
           program_op("add", (4, 5), shape),          # 6
           program_op("sigmoid", (6,), shape),        # 7
           program_op("mul", (7, 4), shape)]          # 8
    for chunk in (8, 40, 1 << 20):
        prog = FusedProgram([(shape, F32), ((5, 1), F32)], [two], ops, chunk_elems=chunk)
        t4 = x * np.exp(row)
        want = OPS["sigmoid"].kernel(t4 + np.broadcast_to(two, (5, 40))) * t4
        np.testing.assert_array_equal(prog(x, row), want)
        assert (prog.layout is None) == (chunk == 1 << 20)


def test_small_program_passes_out_positionally_only_where_numpy_takes_it():
    """Unchunked (small) programs give numpy ufuncs their output positionally,
    except ``maximum``/``minimum`` (numpy 2.4 deprecates it: relu stays ``out=``);
    the values equal the ops' own kernels step by step, with no warning."""
    import warnings

    shape = (4, 4)
    rng = np.random.default_rng(7)
    x, y = (rng.standard_normal(shape).astype(F32) for _ in range(2))
    x[0, 0] = np.nan  # relu keeps NaN (maximum, not fmax)
    ops = [program_op("mul", (0, 1), shape),     # 2
           program_op("add", (2, 0), shape),     # 3
           program_op("relu", (3,), shape),      # 4
           program_op("sub", (4, 1), shape),     # 5
           program_op("tanh", (5,), shape),      # 6
           program_op("maximum", (6, 1), shape),  # 7
           program_op("minimum", (7, 0), shape)]  # 8
    prog = FusedProgram([(shape, F32), (shape, F32)], [], ops)
    assert prog.layout is None
    assert "k0(x0, x1, oc)" in prog.source and "k4(t5, oc)" in prog.source
    for i in (2, 5, 6):  # relu (numpy's maximum against zeros), maximum, minimum
        assert f"k{i}(" in prog.source and all("out=oc" in line for line in
                                               prog.source.splitlines() if f"k{i}(" in line)
    k = {name: OPS[name].kernel for name in ("mul", "add", "relu", "sub", "tanh", "maximum",
                                             "minimum")}
    want = k["minimum"](k["maximum"](k["tanh"](k["sub"](k["relu"](k["add"](
        k["mul"](x, y), x)), y)), y), x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = prog(x, y)
        out = np.empty(shape, F32)
        assert prog(x, y, out=out) is out
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(out, want)
    assert np.isnan(got[0, 0])


@pytest.mark.parametrize("dims, keepdim", [((2,), False), ((1, 2), True), ((0,), False),
                                           ((0, 1, 2), False)])
@pytest.mark.parametrize("reduction", ["sum", "mean", "max", "min", "logsumexp"])
def test_chunked_reduction_prologue(dims, keepdim, reduction):
    shape = (8, 6, 50)
    x = np.random.default_rng(6).standard_normal(shape).astype(F32)
    out_shape = tuple(1 if i in dims else d for i, d in enumerate(shape) if keepdim or
                      i not in dims)
    ops = [program_op("tanh", (0,), shape), program_op("mul", (1, 0), shape),
           program_op(reduction, (2,), out_shape, dims=dims, keepdim=keepdim)]
    prog = FusedProgram([(shape, F32)], [], ops, chunk_elems=64)
    assert prog.layout is not None
    assert prog.materialize == (0 in dims)
    want = OPS[reduction].kernel(np.tanh(x) * x, dims=dims, keepdim=keepdim)
    got = prog(x)
    assert got.shape == want.shape
    if reduction in ("max", "min"):
        np.testing.assert_array_equal(got, want)
    else:  # a sum of whole rows may be a BLAS product with ones (reduction.row_sums),
        # whose order of additions depends on how many rows it is given: a chunk's
        # sums may round differently in the last bit
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)


def test_fused_results_do_not_alias_scratch():
    text = """
    func.func @f(%x: tensor<300x300xf32>) -> (tensor<300x300xf32>, tensor<300xf32>) {
      %0 = pyflame.exp %x : (tensor<300x300xf32>) -> tensor<300x300xf32>
      %1 = pyflame.sin %0 : (tensor<300x300xf32>) -> tensor<300x300xf32>
      %2 = pyflame.tanh %x : (tensor<300x300xf32>) -> tensor<300x300xf32>
      %3 = pyflame.mul %2, %x : (tensor<300x300xf32>, tensor<300x300xf32>) -> tensor<300x300xf32>
      %4 = pyflame.sum %3 {dims = array<i64: 0>, keepdim = false}
           : (tensor<300x300xf32>) -> tensor<300xf32>
      func.return %1, %4 : tensor<300x300xf32>, tensor<300xf32>
    }
    """
    module, _ = optimize(text, "fuse")
    exe = ReferenceExecutable(lower(module))
    rng = np.random.default_rng(7)
    x1, x2 = (rng.standard_normal((300, 300)).astype(F32) for _ in range(2))
    first = exe.run([x1])
    kept = [r.copy() for r in first]
    second = exe.run([x2])
    for a, b in zip(first, kept):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(second[0], np.sin(np.exp(x2)))
    assert exe.nbytes >= 300 * 300 * 4  # the full buffer of the reduction counts


def test_layout_choice():
    assert plan_layout((100,), 64, 0) is None  # small: one piece
    lay = plan_layout((1000, 3000), 32768, 1)
    assert lay is not None and lay.axis == 0 and lay.step == 10
    lay = plan_layout((2, 3, 1_000_000), 32768, 2)
    assert lay is not None and lay.axis == 2 and lay.step == 32768
    assert plan_layout((1000, 3000), 32768, -1) is None  # nothing may be cut


# ---- the pipeline manager and its API ----

def test_default_pipeline_is_printable_and_settable(pipeline):
    assert pf.get_pipeline() == DEFAULT_PIPELINE and "fuse" in DEFAULT_PIPELINE
    assert "max-iterations=8" in DEFAULT_PIPELINE
    pf.set_pipeline("portable")
    assert pf.get_pipeline() == PORTABLE_PIPELINE == PIPELINES["portable"]
    pf.set_pipeline("cse,dce")
    assert pf.get_pipeline() == "cse,dce"
    with pytest.raises(PipelineError, match="no-such-pass"):
        pf.set_pipeline("cse,no-such-pass")
    with pytest.raises(PipelineError):
        pf.set_pipeline("constant-fold{no-such-option=1}")
    assert pf.get_pipeline() == "cse,dce"  # a bad pipeline changes nothing
    pf.set_pipeline(None)
    assert pf.get_pipeline() == DEFAULT_PIPELINE


def test_saving_and_restoring_the_pipeline_round_trips(pipeline):
    prev_backend = pf.CONFIG.backend
    try:
        pf.CONFIG.backend = "max"  # a backend whose default is the portable pipeline
        saved = pf.get_pipeline()
        assert saved == PORTABLE_PIPELINE
        pf.set_pipeline("default")
        assert pf.get_pipeline() == DEFAULT_PIPELINE  # an override there
        pf.set_pipeline(saved)
        assert pf.CONFIG.pipeline is None  # back to following the default
    finally:
        pf.CONFIG.backend = prev_backend
    assert pf.get_pipeline() == DEFAULT_PIPELINE


def test_backends_without_fused_kernels_get_the_portable_pipeline():
    assert pipeline_spec("reference") == DEFAULT_PIPELINE
    assert pipeline_spec("max") == PORTABLE_PIPELINE and "fuse" not in PORTABLE_PIPELINE


def test_pipeline_choice_changes_the_cache_key(pipeline):
    x = pf.randn(16)
    y = pf.relu(x + 1.0)
    default_key = pf.compile_graph(y).key
    pf.set_pipeline("none")
    none = pf.compile_graph(y)
    assert none.key != default_key and none.ops_before == none.ops_after == 3
    np.testing.assert_array_equal(y.numpy(), np.maximum(x.numpy() + F32(1), 0))


def test_compile_graph_reports_pass_statistics():
    x, w = pf.randn(8, 16), pf.randn(16, 4)
    y = (pf.relu(x @ w + 0.0) * (pf.full([4], 2.0) * 0.5)).sum(1)
    report = pf.compile_graph(y)
    stats = report.pass_statistics
    assert list(stats)[:2] == ["fixed-point", "fixed-point/cse"]
    assert stats["fixed-point/constant-fold"]["folded"] == 1  # 2.0 * 0.5
    assert stats["fixed-point/algebraic-simplify"]["rewritten"] >= 1  # * 1.0
    assert stats["fuse"]["fused"] >= 1
    assert report.ops_after < report.ops_before
    text = str(report)
    assert "fixed-point/constant-fold" in text and "folded 1" in text
    expected = (np.maximum(x.numpy() @ w.numpy(), 0) * F32(1.0)).sum(1)
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-5)


def test_fixed_point_stops_at_max_iterations():
    text = """
    func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
      %n = pyflame.neg %y : (tensor<4xf32>) -> tensor<4xf32>
      %0 = pyflame.add %x, %n : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %1 = pyflame.sub %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %2 = pyflame.mul %0, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      func.return %2 : tensor<4xf32>
    }
    """
    inner = '"cse,algebraic-simplify,dce"'
    once, stats = optimize(text, f"fixed-point{{pipeline={inner} max-iterations=1}}")
    assert op_names(once).count("pyflame.sub") == 2  # CSE would need a second round
    assert stats.records["fixed-point"].counters["stopped_at_max_iterations"] == 1
    done, stats = optimize(text, f"fixed-point{{pipeline={inner} max-iterations=8}}")
    assert op_names(done).count("pyflame.sub") == 1
    assert stats.records["fixed-point"].counters == {"rounds_that_changed": 2,
                                                     "stopped_at_max_iterations": 0}
    assert stats.records["fixed-point/cse"].runs == 3


def test_every_pass_is_registered_and_listed():
    for name in ("constant-fold", "dce", "cse", "algebraic-simplify", "fuse", "unfuse",
                 "fixed-point"):
        assert name in PASSES and PASSES[name]().name == name
    r = subprocess.run([OPT, "--list-passes"], capture_output=True, text=True)
    assert r.returncode == 0 and "algebraic-simplify" in r.stdout and "fuse" in r.stdout


def test_pyflame_opt_pass_statistics_show_counters():
    r = subprocess.run([OPT, "-p", DEFAULT_PIPELINE, "--pass-statistics"], input=FOLD,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "fixed-point/constant-fold" in r.stderr and "folded 2" in r.stderr


def test_the_demo_mlp_is_folded_and_fused():
    pf.manual_seed(0)
    x = pf.randn([64, 32])
    w1, w2 = (pf.randn([32, 16]) * 0.1).eval(), (pf.randn([16, 10]) * 0.1).eval()
    b1 = pf.full([16], 0.01)
    h = pf.relu(x @ w1 + b1)
    loss = -pf.log(pf.softmax(h @ w2, dim=1)).sum()
    text = pf.to_mlir(loss, optimize=True)
    assert "pyflame.fused_add_relu" in text  # bias + relu after the matmul
    assert "pyflame.fused " in text  # log and the sum it feeds
    report = pf.compile_graph(loss)
    assert report.ops_after == report.ops_before - 2
    xn, w1n, w2n = x.numpy(), w1.numpy(), w2.numpy()
    z = np.maximum(xn @ w1n + F32(0.01), 0) @ w2n
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    np.testing.assert_allclose(loss.item(), -np.log(p).sum(), rtol=1e-5)


def test_count_ops_counts_a_region_once():
    text = """
    func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
      %0 = pyflame.exp %x : (tensor<4xf32>) -> tensor<4xf32>
      %1 = pyflame.sin %0 : (tensor<4xf32>) -> tensor<4xf32>
      %2 = pyflame.cos %1 : (tensor<4xf32>) -> tensor<4xf32>
      func.return %2 : tensor<4xf32>
    }
    """
    module = parse(text)
    assert count_ops(module) == 3  # func.return is not counted
    run_pipeline(module, "fuse")
    assert count_ops(module) == 1  # the region, not the ops in it
