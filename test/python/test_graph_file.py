"""PFGB graph files (issue 19): ``pf.save_graph`` / ``pf.load_graph``.

Round trips are compared with what the graph computes before saving on the
reference backend and, for the MLP, with a numpy forward pass; hostile files
are built byte by byte here (from the format in docs/guide/graph_files.md, not
with the writer) and must raise ``GraphFileError`` naming the offset and rule.
"""

from __future__ import annotations

import re
import struct
import subprocess
import sys
import tracemalloc
import zlib
from pathlib import Path

import numpy as np
import pytest
from max._graphs import all_ops, assert_matches
from pyflame_mlir.dialects import OPS

import pyflame_mlir as pf
from pyflame_mlir.graph_file import OP_CODES, OP_NAMES, GraphFileError, parse_graph

DOC = Path(__file__).resolve().parents[2] / "docs" / "guide" / "graph_files.md"

# The op codes as files in the wild use them: append-only. A new op is added
# at the end of graph_file.OP_NAMES, here, and in the docs table.
PINNED = (
    "constant iota neg abs sign square relu exp log sqrt rsqrt sin cos tanh log1p reciprocal "
    "sigmoid erf gelu logical_not floor ceil round trunc expm1 atan asin acos bitwise_not add "
    "sub mul div pow maximum minimum eq ne lt le gt ge logical_and logical_or atan2 fmod "
    "floor_divide bitwise_and bitwise_or bitwise_xor where convert sum mean max min argmax "
    "argmin prod cumsum cumprod logcumsumexp cummax cummin sort select_along "
    "scatter_add_along matmul reshape permute broadcast_to slice concat split pad gather "
    "scatter_add softmax log_softmax logsumexp fused_add_relu fused_mul_sigmoid fused_fma "
    "fused_matmul_relu fused_matmul_gelu").split()


def test_op_codes_are_pinned_and_cover_the_op_table():
    assert list(OP_NAMES[:len(PINNED)]) == PINNED, "op codes are append-only: never reorder"
    missing = sorted(set(OPS) - set(OP_CODES))
    assert not missing, f"ops without a PFGB code (append them to graph_file.OP_NAMES): {missing}"
    assert len(OP_NAMES) <= 255 and len(set(OP_NAMES)) == len(OP_NAMES)


def test_docs_list_every_op_code():
    rows = dict(re.findall(r"^\| (\d+) \| `(\w+)` \|", DOC.read_text(), re.M))
    assert {int(k): v for k, v in rows.items()} == {c: n for n, c in OP_CODES.items()}


def test_every_op_round_trips(tmp_path, lazy):
    """Lazy-only: it saves the recorded graph of every op; in eager mode the
    outputs are realized values, leaves of an empty graph."""
    outs, used = all_ops()
    assert used == set(OPS)
    with pf.backend("reference"):
        pf.save_graph(outs, tmp_path / "all.pfgb")
        prog = pf.load_graph(tmp_path / "all.pfgb")
        assert len(prog.outputs) == len(outs)
        pf.eval(*outs, *prog.outputs)
        for i, (a, b) in enumerate(zip(outs, prog.outputs)):
            assert_matches(b.numpy(), a.numpy(), f"output {i}", rtol=0)
        # the program on the stored inputs (positional) gives the same again
        again = prog(*prog.inputs)
        pf.eval(*again)
        for i, (a, b) in enumerate(zip(outs, again)):
            assert_matches(b.numpy(), a.numpy(), f"output {i} (call)", rtol=0)


def _mlp(x: pf.Tensor, w1: pf.Tensor, b1: pf.Tensor, w2: pf.Tensor) -> pf.Tensor:
    return pf.softmax(pf.relu(x @ w1 + b1) @ w2, dim=1)


def _mlp_np(x, w1, b1, w2):
    h = np.maximum(x @ w1 + b1, 0) @ w2
    e = np.exp(h - h.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def _mlp_data(seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in ((5, 8), (8, 6), (6,), (6, 3))]


def test_program_runs_on_new_inputs_and_checks_them(tmp_path, lazy):
    """Lazy-only: the saved program is the recorded MLP (4 inputs); in eager
    mode the output is already a value and the graph saved is that value."""
    args = [pf.from_numpy(a) for a in _mlp_data(0)]
    pf.save_graph(_mlp(*args), tmp_path / "mlp.pfgb", include_inputs=False)
    prog = pf.load_graph(tmp_path / "mlp.pfgb")
    assert prog.inputs is None and prog.outputs is None
    assert [s for s, _ in prog.input_specs] == [(5, 8), (8, 6), (6,), (6, 3)]
    new = _mlp_data(1)
    np.testing.assert_allclose(prog(*new).numpy(), _mlp_np(*new), rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError, match=r"input 2 must be float32\[6\], got float64\[6\]"):
        prog(new[0], new[1], new[2].astype(np.float64), new[3])
    with pytest.raises(TypeError, match="expects 4 inputs, got 1"):
        prog(new[0])


def test_program_runs_on_another_backend(tmp_path, lazy):
    """Lazy-only: it calls the saved graph with the MLP's 4 inputs, which only
    a recorded graph has (in eager mode the output is a realized leaf)."""
    data = _mlp_data(2)
    pf.save_graph(_mlp(*[pf.from_numpy(a) for a in data]), tmp_path / "mlp.pfgb")
    prog = pf.load_graph(tmp_path / "mlp.pfgb")
    with pf.backend("csl"):  # the WSE simulator
        got = prog(*data).numpy()
    np.testing.assert_allclose(got, _mlp_np(*data), rtol=1e-4, atol=1e-5)


def test_demo_graph_reloads_in_a_new_process(lazy, tmp_path):
    """The README demo's forward graph (examples/mlp.py, small batch), saved
    here and run by a fresh interpreter: the same loss. (Lazy-only: eager
    mode records no graph to save.)"""
    from max._graphs import demo_mlp

    loss, _ = demo_mlp(batch=16)
    pf.save_graph(loss, tmp_path / "demo.pfgb")
    expected = loss.item()
    code = ("import sys, pyflame_mlir as pf\n"
            "prog = pf.load_graph(sys.argv[1])\n"
            "print(repr(prog.outputs[0].item()))\n")
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "demo.pfgb")],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    assert float(proc.stdout.strip()) == pytest.approx(expected, rel=1e-6)


def test_multi_result_ops_and_attributes_round_trip(lazy, tmp_path):
    # (lazy-only: the ops' recorded graph is what round-trips)
    x = pf.from_numpy(np.array([[3.0, -1.0, 2.0], [0.5, 4.0, -2.0]], np.float32))
    vals, idx = pf.sort(x, 1, descending=True)
    parts = pf.split(x, [1, 2], 1)
    outs = [idx, parts[1], pf.gelu(x, approximate="tanh"), x.sum(1, keepdim=True)]
    pf.save_graph(outs, tmp_path / "m.pfgb")
    got = [t.numpy() for t in pf.load_graph(tmp_path / "m.pfgb").outputs]
    xn = x.numpy()
    np.testing.assert_array_equal(got[0], np.argsort(-xn, 1, kind="stable"))
    np.testing.assert_array_equal(got[1], xn[:, 1:])
    t = np.tanh(np.sqrt(2 / np.pi) * (xn + 0.044715 * xn ** 3))
    np.testing.assert_allclose(got[2], 0.5 * xn * (1 + t), rtol=1e-6)
    np.testing.assert_allclose(got[3], xn.sum(1, keepdims=True), rtol=1e-6)


def test_saving_a_traced_function_raises_naming_it(tmp_path, lazy):
    """Lazy-only: in eager mode the vjp node has run already, so there is no
    traced function in the graph to refuse."""
    x = pf.tensor(np.ones(3, np.float32), requires_grad=True)
    y, vjp_fn = pf.vjp(lambda t: (t * t).sum(), x)
    (gx,) = vjp_fn(pf.ones([]))
    with pytest.raises(ValueError, match="cannot store op vjp"):
        pf.save_graph(gx, tmp_path / "v.pfgb")


# ---- hostile files, built by hand ----

def _node(node_id: int, kind: int, code: int, name: str, shape: tuple, dt: int, inputs=(),
          data: bytes = b"", layout: bytes = b"\x00", rank: int | None = None) -> bytes:
    r = len(shape) if rank is None else rank
    b = name.encode()
    return (struct.pack("<QBBH", node_id, kind, code, len(b)) + b
            + struct.pack("<B", r) + struct.pack(f"<{len(shape)}q", *shape)
            + struct.pack("<B", dt) + layout
            + struct.pack("<H", len(inputs)) + struct.pack(f"<{len(inputs)}Q", *inputs)
            + struct.pack("<Q", len(data)) + data)


F32 = 5
NEG = OP_CODES["neg"]


def _file(nodes: list[bytes], outputs=(1,), version: int = 1, flags: int = 1,
          count: int | None = None, crc: bool = True) -> bytes:
    body = (b"PFGB" + struct.pack("<HHQ", version, flags, len(nodes) if count is None else count)
            + b"".join(nodes) + struct.pack("<I", len(outputs))
            + struct.pack(f"<{len(outputs)}Q", *outputs))
    return body + struct.pack("<I", zlib.crc32(body) if crc else 0)


LEAF = _node(0, 0, 0, "x", (2,), F32, data=np.array([1.5, -2], np.float32).tobytes())
NEG_NODE = _node(1, 2, NEG, "neg", (2,), F32, inputs=(0,), data=struct.pack("<H", 0))


def test_hand_built_file_loads():
    """The documented layout, written by hand, is what the reader accepts."""
    prog = parse_graph(_file([LEAF, NEG_NODE]))
    np.testing.assert_array_equal(prog.outputs[0].numpy(), [-1.5, 2.0])


HOSTILE = [
    (b"PFG", 3, "fewer than a header"),
    (b"XXXX" + bytes(30), 0, "not b'PFGB'"),
    (_file([LEAF, NEG_NODE], version=2), 4, "format version 2"),
    (_file([LEAF, NEG_NODE], crc=False), None, "CRC32 mismatch"),
    (_file([LEAF, NEG_NODE], flags=0x80), 6, "unknown flags"),
    (_file([LEAF, NEG_NODE], count=2**63), 8, "node count 9223372036854775808 cannot fit"),
    (_file([LEAF, NEG_NODE], count=3), None, "truncated file or a length"),
    (_file([LEAF, _node(1, 2, NEG, "neg", (2,), F32, inputs=(7,), data=b"\0\0")]), None,
     "refers to node id 7, which is not defined before it"),
    (_file([_node(1, 2, NEG, "neg", (2,), F32, inputs=(1,), data=b"\0\0")], outputs=(1,)),
     None, "(a dangling id, or a cycle"),
    (_file([LEAF, _node(1, 2, NEG, "neg", (2,), F32, inputs=(2,), data=b"\0\0"),
            _node(2, 2, NEG, "neg", (2,), F32, inputs=(1,), data=b"\0\0")]), None,
     "not defined before it"),
    (_file([LEAF, _node(0, 2, NEG, "neg", (2,), F32, inputs=(0,), data=b"\0\0")]), 58,
     "duplicate node id 0"),
    (_file([LEAF, _node(1, 2, 250, "", (2,), F32, inputs=(0,), data=b"\0\0")]), 67,
     "unknown op code 250"),
    (_file([LEAF, _node(1, 2, NEG, "neg", (2,), 99, inputs=(0,), data=b"\0\0")]), None,
     "unknown dtype code 99"),
    (_file([_node(0, 0, 0, "x", (2,) * 200, F32, rank=200)]), 29, "rank 200"),
    (_file([_node(0, 0, 0, "x", (2**62,), F32)], flags=0), 29, "negative or above 2**40"),
    (_file([_node(0, 0, 0, "x", (2**39,) * 3, F32)], flags=0), 29, "more than 2**48 elements"),
    (_file([_node(0, 0, 0, "x", (-1,), F32)], flags=0), 29, "negative"),
    (_file([_node(0, 0, 0, "x", (2,), F32, data=b"\0" * 4)]), None, "4 data bytes, expected 8"),
    (_file([LEAF]) [:-40] + struct.pack("<Q", 2**62) + bytes(36), None, "CRC32"),
    (_file([LEAF, _node(1, 2, NEG, "neg", (2,), F32, inputs=(0,), data=b"\0\0",
                        layout=b"\x07")]), None, "unknown layout type 7"),
    (_file([LEAF, _node(1, 2, NEG, "neg", (3,), F32, inputs=(0,), data=b"\0\0")]), None,
     "shape rule gives float32[2]"),
    (_file([LEAF, _node(1, 2, NEG, "abs", (2,), F32, inputs=(0,), data=b"\0\0")]), None,
     "named 'abs' but its op code is neg"),
    (_file([LEAF, _node(1, 2, OP_CODES["sum"], "sum", (), F32, inputs=(0,),
                        data=struct.pack("<H", 1) + struct.pack("<H", 4) + b"what" + b"\0")]),
     None, "op sum has no attribute 'what'"),
    (_file([LEAF, _node(1, 2, NEG, "neg", (2,), F32, inputs=(1 << 48,), data=b"\0\0")]), None,
     "refers to result 1 of node id 0, which has 1"),
    (_file([LEAF, NEG_NODE], outputs=(5,)), None, "an output refers to node id 5"),
    (_file([_node(0, 1, OP_CODES["constant"], "", (2,), 0, data=b"\x01\x02")],
           outputs=(0,)), None, "a bool byte other than 0 or 1"),
    (_file([LEAF, NEG_NODE], outputs=()), None, "no outputs"),
    (_file([LEAF, _node(1, 2, NEG, "neg", (2,), F32, inputs=(0,),
                        data=struct.pack("<H", 9))]), None, "has 0 attributes, the block"),
    (_file([LEAF, NEG_NODE])[:-4] + b"junk", None, "CRC32 mismatch"),
]


@pytest.mark.parametrize("data, offset, rule", HOSTILE, ids=[r for _, _, r in HOSTILE])
def test_hostile_files_raise_clear_errors(data, offset, rule):
    with pytest.raises(GraphFileError) as e:
        parse_graph(data, "hostile.pfgb")
    msg = str(e.value)
    assert rule in msg, msg
    assert msg.startswith("hostile.pfgb: invalid PFGB graph file at byte ")
    if offset is not None:
        assert e.value.offset == offset, msg


def test_huge_claims_allocate_nothing():
    """Counts and lengths are checked against the file size before anything is
    allocated: a file claiming 2**60 inputs or an exabyte of data costs bytes."""
    claims = [
        _file([LEAF, _node(1, 2, NEG, "neg", (2,), F32, inputs=(0,), data=b"\0\0")],
              count=2**60),
        _file([LEAF, NEG_NODE], outputs=(1,) * 3)[:-16] + struct.pack("<I", 2**32 - 1)
        + bytes(8),
        _file([_node(0, 0, 0, "x", (2**20, 2**20), F32)]),
    ]
    tracemalloc.start()
    try:
        for data in claims:
            with pytest.raises(GraphFileError):
                parse_graph(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, f"peak {peak} bytes"


def test_truncations_of_a_real_file_all_raise(lazy, tmp_path):
    # (lazy-only: a file of a recorded graph)
    x = pf.from_numpy(np.ones((2, 3), np.float32))
    pf.save_graph([pf.softmax(x, 1), x.sum(0)], tmp_path / "t.pfgb")
    data = (tmp_path / "t.pfgb").read_bytes()
    for cut in range(len(data)):
        with pytest.raises(GraphFileError):
            parse_graph(data[:cut])


def test_save_graph_in_eager_mode_says_nothing_was_recorded(eager, tmp_path: Path):
    """Eager mode ran every op already: the 'graph' of a result would be its
    stored value, not the computation; save_graph says so instead."""
    y = pf.relu(pf.randn([3, 4])) * 2
    with pytest.raises(ValueError, match="nothing recorded to save.*eager mode"):
        pf.save_graph(y, tmp_path / "g.pfgb")
