"""Graphs compiled with MAX on this machine's device give the reference
backend's results, and compiled models are reused from disk.

Each compile takes minutes on 2 CPU cores, so this file compiles three
graphs in all (every op; the README demo MLP forward, with a symbolic batch;
one autograd training step) and proves the cache behaviour with them: the
demo serves a ragged batch without compiling, a second process loads it from
disk without compiling, and a corrupted entry planted at the training step's
key is detected, deleted and rebuilt.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("max.graph", reason="the MAX backend needs `max`: "
                                        "pip install 'pyflame-mlir[max]'")

import _graphs  # noqa: E402
from _graphs import assert_matches, reference  # noqa: E402

import pyflame_mlir as pf  # noqa: E402
from pyflame_mlir.runtime import max_backend  # noqa: E402
from pyflame_mlir.runtime.max_backend import MefStore  # noqa: E402

pytestmark = pytest.mark.slow

HERE = Path(__file__).parent


def test_every_op_matches_the_reference_backend(on_max: Path) -> None:
    ref = reference(_graphs.all_ops()[0])
    outs, _ = _graphs.all_ops()
    before = max_backend.stats()
    pf.eval(*outs)
    after = max_backend.stats()
    # one MAX model for the whole multi-output graph
    assert (after["compiles"] + after["disk_loads"]) - \
        (before["compiles"] + before["disk_loads"]) == 1
    for k, (t, r) in enumerate(zip(outs, ref)):
        assert_matches(t.numpy(), r, f"output #{k} ({t.dtype.name}{list(t.shape)})")


SECOND_PROCESS = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, sys.argv[1])
    import numpy as np
    import _graphs
    import pyflame_mlir as pf
    from pyflame_mlir.runtime import max_backend
    pf.set_backend("max")
    loss, logits = _graphs.demo_mlp()
    pf.eval(loss, logits)
    small = _graphs.demo_mlp(batch=37)
    pf.eval(*small)
    print(json.dumps({"stats": max_backend.stats(), "loss": float(loss.item()),
                      "logits": logits.numpy().tolist(), "small": float(small[0].item())}))
""")


def test_demo_mlp_with_a_symbolic_batch_and_a_second_process_loads_it_from_disk(
        on_max: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(max_backend, "_symbolic_override", True)
    ref_loss, ref_logits = reference(list(_graphs.demo_mlp()))
    before = max_backend.stats()
    loss, logits = _graphs.demo_mlp()
    pf.eval(loss, logits)
    mid = max_backend.stats()
    assert mid["symbolic_fallbacks"] == before["symbolic_fallbacks"], mid["last_fallback"]
    assert (mid["compiles"] + mid["disk_loads"]) - (before["compiles"] + before["disk_loads"]) == 1
    assert_matches(logits.numpy(), ref_logits, "logits", rtol=1e-4)
    assert_matches(loss.numpy(), ref_loss, "loss", rtol=1e-4)

    # a ragged batch: the same symbolic model, nothing compiled or loaded
    ref_small = reference(list(_graphs.demo_mlp(batch=100)))
    small = _graphs.demo_mlp(batch=100)
    pf.eval(*small)
    after = max_backend.stats()
    assert after["compiles"] == mid["compiles"] and after["disk_loads"] == mid["disk_loads"]
    assert after["memory_hits"] == mid["memory_hits"] + 1
    assert small[1].shape == (100, 10)
    for t, r, what in zip(small, ref_small, ("loss", "logits")):
        assert_matches(t.numpy(), r, f"batch 100 {what}", rtol=1e-4)

    # a new process: the model comes from disk, for both batch sizes
    env = dict(os.environ, PYFLAME_CACHE_DIR=str(on_max), PYFLAME_MAX_SYMBOLIC_BATCH="1")
    out = subprocess.run([sys.executable, "-c", SECOND_PROCESS, str(HERE)], env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    second = json.loads(out.stdout.strip().splitlines()[-1])
    st = second["stats"]
    assert st["compiles"] == 0 and st["graph_builds"] == 0, st  # nothing compiled
    assert st["disk_loads"] == 1 and st["memory_hits"] == 1, st
    assert st["corrupt_entries"] == 0 and st["symbolic_fallbacks"] == 0, st
    # the same model: bit-identical results
    assert second["loss"] == float(loss.item())
    np.testing.assert_array_equal(np.array(second["logits"], np.float32), logits.numpy())
    ref37 = reference(list(_graphs.demo_mlp(batch=37)))[0]
    assert_matches(np.float32(second["small"]), ref37, "batch 37 loss", rtol=1e-4)


def test_training_step_rebuilds_a_corrupt_entry_then_hits_the_cache(
        on_max: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sizes, n = [32, 64, 64, 10], 16
    x, y = _graphs.batch(n, sizes[0], sizes[-1])
    # separate (equal) parameters per backend: backward() accumulates into .grad
    ref = reference(_flat(_graphs.train_step(_graphs.init_mlp(sizes), x, y)))

    # when the backend computes the step's key, plant a truncated entry there,
    # as a crash or a full disk could leave one (the key is whatever the
    # compile driver's pipeline makes of the graph)
    st = MefStore(max_backend.mef_dir())
    real_key, real_compile = max_backend.cache_key, max_backend.lower_and_compile
    planted: list[str] = []
    compiled: list[max_backend.MaxExecutable] = []

    def planting_key(text: str, device: str) -> str:
        key = real_key(text, device)
        if not planted:
            blob = MefStore.encode(os.urandom(200_000), {"key": key})
            st.root.mkdir(parents=True, exist_ok=True)
            st.path(key).write_bytes(blob[:-50_000])
            planted.append(key)
        return key

    def recording_compile(module, device=None):  # noqa: ANN001, ANN202
        compiled.append(real_compile(module, device))
        return compiled[-1]

    monkeypatch.setattr(max_backend, "cache_key", planting_key)
    monkeypatch.setattr(max_backend, "lower_and_compile", recording_compile)
    outs = _flat(_graphs.train_step(_graphs.init_mlp(sizes), x, y))
    before = max_backend.stats()
    pf.eval(*outs)
    after = max_backend.stats()
    (key,), (exe,) = planted, compiled
    assert exe.key == key and exe.source == "compiled"
    assert after["corrupt_entries"] == before["corrupt_entries"] + 1
    assert after["compiles"] == before["compiles"] + 1  # rebuilt, not used
    assert after["disk_writes"] == before["disk_writes"] + 1
    assert st.read(key) is not None  # a good entry replaced it
    got = [t.numpy() for t in outs]
    for k, (g, r) in enumerate(zip(got, ref)):
        assert_matches(g, r, f"step 1 output #{k}", rtol=1e-4)

    # the next step: new parameter values, same graph -> in-memory cache hit
    def fresh() -> list[pf.Tensor]:
        return [pf.tensor(p.numpy(), requires_grad=True) for p in outs[2:]]

    x2, y2 = _graphs.batch(n, sizes[0], sizes[-1], seed=2)
    ref2 = reference(_flat(_graphs.train_step(fresh(), x2, y2)))
    hits = pf.cache_stats()["hits"]
    step2 = _flat(_graphs.train_step(fresh(), x2, y2))
    pf.eval(*step2)
    assert pf.cache_stats()["hits"] == hits + 1
    assert max_backend.stats()["compiles"] == after["compiles"]
    for k, (t, r) in enumerate(zip(step2, ref2)):
        assert_matches(t.numpy(), r, f"step 2 output #{k}", rtol=1e-4)
    assert float(step2[0].item()) < float(outs[0].item()) + 1.0  # a sane loss

    # a valid file holding a model of another signature is refused too
    payload = st.read(key)
    assert payload is not None
    model = max_backend._load(max_backend.session(exe.device)[0], payload)
    assert max_backend._model_matches(model, exe.arg_specs)
    assert not max_backend._model_matches(model, [((n, 7), pf.float32)] + exe.arg_specs[1:])


def _flat(step: tuple[pf.Tensor, pf.Tensor, list[pf.Tensor]]) -> list[pf.Tensor]:
    loss, logits, new = step
    return [loss, logits, *new]


def test_out_of_range_lazy_indices_raise_not_read_anywhere(on_max: Path) -> None:
    """MAX's gather reads wherever an index points: the ``check-indices``
    counts make a bad index an IndexError naming the op (one compile serves
    good and bad data; the indices are leaves)."""
    good = ([3, 0, 1], [2, 2], [0, 3, 3])
    got = pf.eval(*_graphs.lazy_indexing(*good))
    for g, want in zip(got, _graphs.expected_lazy_indexing(*good)):
        np.testing.assert_array_equal(g.numpy(), want)
    for data, op in ((([3, 4, 1], [2, 2], [0, 3, 3]), "gather"),
                     (([3, 0, 1], [2, -9], [0, 3, 3]), "gather"),
                     (([3, 0, 1], [2, 2], [0, 7, 3]), "scatter_add")):
        with pytest.raises(IndexError, match=rf"pyflame\.{op}: .*out of bounds"):
            pf.eval(*_graphs.lazy_indexing(*data))
