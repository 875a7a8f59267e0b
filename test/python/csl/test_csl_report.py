"""Issue 16: ``pf.csl_report()`` of a training step on the simulator, and its PNG."""

from __future__ import annotations

import struct
import zlib

import numpy as np
import pytest
from test_resident import BATCH, DIM, HIDDEN, OUT, _train

import pyflame_mlir as pf
from pyflame_mlir.csl_report import png_bytes
from pyflame_mlir.runtime import csl_backend


@pytest.fixture
def csl():
    prev_backend = pf.get_backend()
    prev = csl_backend.configure(mode="simulator")
    try:
        yield csl_backend
    finally:
        pf.set_backend(prev_backend)
        csl_backend.configure(**vars(prev))


def _read_png(data: bytes) -> np.ndarray:
    """A minimal decoder (8-bit RGB, filter 0, as png_bytes writes) that checks every
    chunk's CRC."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, {}
    while pos < len(data):
        n, = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        crc, = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF, kind
        chunks[kind] = chunks.get(kind, b"") + body
        pos += 12 + n
    w, h, depth, color = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert (depth, color) == (8, 2) and b"IEND" in chunks
    rows = np.frombuffer(zlib.decompress(chunks[b"IDAT"]), np.uint8).reshape(h, 1 + 3 * w)
    assert (rows[:, 0] == 0).all()
    return rows[:, 1:].reshape(h, w, 3)


def test_png_round_trip():
    rgb = np.random.default_rng(0).integers(0, 256, (5, 7, 3), dtype=np.uint8)
    np.testing.assert_array_equal(_read_png(png_bytes(rgb)), rgb)


def test_report_of_a_training_step(csl, tmp_path):
    _train(csl, "csl", "sgd", 2)
    r = pf.csl_report(tmp_path)
    assert r.grid == (1, 1) and r.cycles > 0
    # the MLP step's matmuls alone: forward 2*B*(D*H + H*O), backward twice that
    # (minus the input gradient, which is not computed): a lower bound on its FLOPs
    matmul = 2 * BATCH * (DIM * HIDDEN + HIDDEN * OUT)
    assert r.flops >= matmul + 2 * BATCH * DIM * HIDDEN
    assert r.roofline_flops_per_cycle == 2.0  # one f32 FMA per cycle on the one PE
    assert 0 < r.roofline_fraction <= 1
    assert r.flops_per_cycle == pytest.approx(r.flops / r.cycles)
    # host traffic: the batch and the learning rate in, the loss out; weights resident
    assert r.h2d_bytes == 4 * (BATCH * DIM + BATCH * OUT + 1)
    assert r.d2h_bytes == 4
    assert r.resident_bytes == _param_bytes_of_mlp()
    assert sum(n for _, n in r.sram_by_tensor) == r.sram_bytes_per_pe <= r.sram_budget_bytes
    assert sum("resident state" in what for what, _ in r.sram_by_tensor) == 4
    assert r.busy.shape == (1, 1) and 0 < r.busy[0, 0] <= 1
    assert r.resident_pe_bytes[0, 0] == _param_bytes_of_mlp()
    img = _read_png((tmp_path / "grid.png").read_bytes())
    assert img.shape == (24, 2 * 24 + 24, 3)  # two panels of one 24-pixel PE and a gap
    assert "f32 roofline" in str(r) and "resident" in str(r)


def _param_bytes_of_mlp() -> int:
    return 4 * (DIM * HIDDEN + HIDDEN + HIDDEN * OUT + OUT)


def test_no_run_yet_raises(monkeypatch):
    monkeypatch.setattr(csl_backend, "_LAST_RUN", [None])
    with pytest.raises(RuntimeError, match="no csl-backend run"):
        pf.csl_report()

