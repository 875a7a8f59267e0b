"""The ``mlir`` backend against the reference backend on the same graphs: one
graph using every op (``max/_graphs.py``, shared with the MAX tests), the demo
MLP and an SGD training step; the disk cache reused by a second process and
rebuilt when corrupted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mlir.execution_engine", reason="the mlir backend needs the upstream MLIR "
                    "Python bindings: pip install 'pyflame-mlir[mlir]'")

import _graphs  # noqa: E402
from _graphs import assert_matches, reference  # noqa: E402
from pyflame_mlir.dialects import OPS  # noqa: E402

import pyflame_mlir as pf  # noqa: E402
from pyflame_mlir.runtime import mlir_backend  # noqa: E402

HERE = Path(__file__).parent


def test_every_op_has_a_linalg_rule() -> None:
    from pyflame_mlir.lowering import to_linalg

    known = (set(to_linalg.UNARY) | set(to_linalg.BINARY) | set(to_linalg.LOGICAL)
             | set(to_linalg.RULES))
    # fused ops reach the lowering already unfused into their chains
    missing = {op.name for op in OPS.values() if op not in known and op.family != "fused"}
    assert missing == set()


def test_every_op_matches_the_reference_backend(on_mlir: Path, lazy: None) -> None:
    """Lazy-only: it counts one compile for the whole recorded graph (eager
    mode compiles each op)."""
    ref = reference(_graphs.all_ops()[0])
    outs, used = _graphs.all_ops()
    assert used == set(OPS) - _graphs.missing_from_all_ops()
    pf.eval(*outs)
    assert mlir_backend.STATS.compiles == 1  # the whole multi-output graph at once
    for k, (t, r) in enumerate(zip(outs, ref)):
        assert_matches(t.numpy(), r, f"output #{k} ({t.dtype.name}{list(t.shape)})")


def test_special_values_match_the_reference(on_mlir: Path) -> None:
    v = np.array([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan, 3.0], np.float32)
    w = np.array([np.nan, 1.0, 1.5, -np.inf, np.inf, 2.0, 0.0, -3.0], np.float32)

    def graph() -> list[pf.Tensor]:
        x, y = pf.from_numpy(v), pf.from_numpy(w)
        return [pf.sign(x), pf.relu(x), pf.maximum(x, y), pf.minimum(x, y), x != y, x == y,
                pf.argmax(x), pf.argmin(y), pf.amax(x, 0), pf.convert(x, pf.bool),
                pf.softmax(pf.from_numpy(np.full((2, 3), -np.inf, np.float32)), 1),
                pf.logsumexp(x.reshape(2, 4), 1), pf.sigmoid(x), pf.tanh(x)]

    ref = reference(graph())
    outs = graph()
    pf.eval(*outs)
    for k, (t, r) in enumerate(zip(outs, ref)):
        assert_matches(t.numpy(), r, f"output #{k}")


def test_inputs_are_never_written(on_mlir: Path) -> None:
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    keep = a.copy()
    x = pf.from_numpy(a)
    y = pf.exp(x) + 1.0
    np.testing.assert_allclose(y.numpy(), np.exp(keep) + 1, rtol=1e-6)
    np.testing.assert_array_equal(a, keep)


def test_demo_mlp_matches_the_reference(on_mlir: Path) -> None:
    ref_loss, ref_logits = reference(list(_graphs.demo_mlp()))
    loss, logits = _graphs.demo_mlp()
    pf.eval(loss, logits)
    assert_matches(logits.numpy(), ref_logits, "logits", rtol=1e-4)
    assert_matches(loss.numpy(), ref_loss, "loss", rtol=1e-4)


def _step(seed: int = 0) -> list[pf.Tensor]:
    params = _graphs.init_mlp([16, 32, 10], seed)
    x, y = _graphs.batch(64, 16, 10)
    loss, logits, new = _graphs.train_step(params, x, y)
    return [loss, logits, *new]


def test_training_step_matches_the_reference_and_hits_the_cache(on_mlir: Path,
                                                                lazy: None) -> None:
    """Lazy-only: it counts one compile for the recorded step (eager mode
    compiles each op)."""
    ref = reference(_step())
    for _ in range(2):  # the second step is a cache hit: nothing compiled
        outs = _step()
        pf.eval(*outs)
        for k, (t, r) in enumerate(zip(outs, ref)):
            assert_matches(t.numpy(), r, f"output #{k}", rtol=1e-4)
    assert mlir_backend.STATS.compiles == 1


SECOND_PROCESS = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, sys.argv[1])
    import numpy as np
    import pyflame_mlir as pf
    from pyflame_mlir.runtime import mlir_backend
    pf.set_backend("mlir")
    x = pf.from_numpy(np.linspace(-2, 2, 64, dtype=np.float32).reshape(8, 8))
    y = pf.tanh(pf.relu(2 * x + 1) * x - 0.5).sum(1)
    s = mlir_backend.STATS
    print(json.dumps({"y": y.numpy().tolist(), "compiles": s.compiles, "hits": s.disk_hits,
                      "writes": s.disk_writes, "corrupt": s.corrupt_entries}))
""")


def _run_process(cache: Path) -> dict:
    # lazy whatever the test run's PYFLAME_EAGER: the counts are of one recorded graph
    env = dict(os.environ, PYFLAME_CACHE_DIR=str(cache), PYFLAME_EAGER="0")
    out = subprocess.run([sys.executable, "-c", SECOND_PROCESS, str(HERE)], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_disk_cache_is_reused_by_a_second_process_and_rebuilt_when_corrupt(tmp_path: Path
                                                                           ) -> None:
    cache = tmp_path / "cache"
    first = _run_process(cache)
    assert (first["compiles"], first["hits"], first["writes"]) == (1, 0, 1)
    second = _run_process(cache)
    assert (second["compiles"], second["hits"]) == (0, 1)
    assert second["y"] == first["y"]
    # flip bytes in the middle of the library: detected by the checksum, rebuilt
    (lib,) = (cache / "mlir").glob("*.so")
    blob = bytearray(lib.read_bytes())
    blob[len(blob) // 2] ^= 0xFF
    lib.write_bytes(bytes(blob))
    third = _run_process(cache)
    assert (third["corrupt"], third["compiles"], third["writes"]) == (1, 1, 1)
    assert third["y"] == first["y"]
    assert _run_process(cache)["hits"] == 1


def test_a_missing_extra_gives_the_reason() -> None:
    code = ("import sys; sys.modules['mlir'] = None\n"
            "import pyflame_mlir as pf\n"
            "try:\n    pf.set_backend('mlir')\nexcept RuntimeError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert "backend 'mlir' is not available" in out and "pyflame-mlir[mlir]" in out


def test_one_value_returned_twice(on_mlir: Path) -> None:
    """``pf.eval(x + 1, x + 1)``: CSE leaves @main returning one value twice;
    two out-buffers of one bufferized value crashed the compiled code (a
    segfault), so it is returned once and copied."""
    x = pf.tensor(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    a, b, c = pf.eval(x + 1, x * 2, x + 1)
    np.testing.assert_array_equal(a.numpy(), np.arange(6.0).reshape(2, 3) + 1)
    np.testing.assert_array_equal(c.numpy(), a.numpy())
    np.testing.assert_array_equal(b.numpy(), np.arange(6.0).reshape(2, 3) * 2)
    assert a.numpy() is not c.numpy()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_log1p_expm1_keep_small_arguments_digits(on_mlir: Path, dtype: type) -> None:
    """upstream's math-to-llvm computes log(1 + x) and exp(x) - 1, 19% off at
    x = 1e-7 in float32; the lowering's Kahan forms are within a few ulps of
    numpy's float64 log1p/expm1 at tiny, moderate, huge and special arguments."""
    x = np.array([1e-7, -3e-6, 1e-4, 0.5, -0.9, 3.0, 30.0, -60.0, 0.0, -0.0, -1.0, -2.0,
                  np.inf, -np.inf, np.nan, 1e-30], dtype)
    with np.errstate(all="ignore"):
        want_l = np.log1p(x.astype(np.float64)).astype(dtype)
        want_e = np.expm1(x.astype(np.float64)).astype(dtype)
    t = pf.tensor(x)
    got_l, got_e = pf.log1p(t).numpy(), pf.expm1(t).numpy()
    rtol = {np.float32: 4e-7, np.float64: 1e-15, np.float16: 1e-3}[dtype]
    np.testing.assert_allclose(got_l, want_l, rtol=rtol, atol=0)
    np.testing.assert_allclose(got_e, want_e, rtol=rtol, atol=0)
    assert np.array_equal(np.signbit(got_l[8:10]), [False, True])  # log1p(-0.0) is -0.0
    assert np.array_equal(np.signbit(got_e[8:10]), [False, True])
