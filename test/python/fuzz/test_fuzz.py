"""Bounded fuzzing of everything that reads untrusted input (issue 19).

Three generators, each seeded (a failure names its seed and case, so it
replays): mutated lit inputs through ``pyflame-opt`` (in process), random and
mutated PFGB bytes through ``pf.load_graph``'s parser, and random MLIR token
streams through ``pf.load_mlir``. Every case runs under a per-case timeout.
The rule: no traceback, no hang, and either success or the reader's own
error (exit code 1 with a diagnostic; ``GraphFileError``; ``MlirLoadError``).

CI runs a few dozen cases of each (well under 30 s); ``PYFLAME_FUZZ_CASES=N``
runs N of each (``PYFLAME_FUZZ_SEED`` picks another seed).
"""

from __future__ import annotations

import os
import random
import signal
import struct
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from pyflame_mlir.tools.pyflame_opt import main as pyflame_opt

import pyflame_mlir as pf
from pyflame_mlir.graph_file import GraphFileError, parse_graph

ROOT = Path(__file__).resolve().parents[2]  # test/
LIT_INPUTS = sorted(p for p in ROOT.rglob("*.mlir") if "Output" not in p.parts)
SEED = int(os.environ.get("PYFLAME_FUZZ_SEED", "19"))
TIMEOUT = 10  # seconds per case


def _cases(default: int) -> int:
    return int(os.environ.get("PYFLAME_FUZZ_CASES", default))


@contextmanager
def time_limit(seconds: int, what: str) -> Iterator[None]:
    """Fail the case (as a hang) if it runs longer than ``seconds``."""
    def on_alarm(*_: object) -> None:  # (signum, frame)
        raise TimeoutError(f"{what}: no result after {seconds} s (a hang)")

    prev = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, prev)


# ---- mutations ----

_TOKENS = ["(", ")", "{", "}", "[", "]", "<", ">", "->", ":", ",", "=", "%0", "%arg0", "@main",
           "^bb0", '"', "\\", "tensor<", "xf32>", "f32", "i1", "i64", "bf16", "dense<",
           "dense<1.0> : tensor<4294967296xf32>", "99999999999999999999999", "-1", "0x7FF8",
           "1e999", "pyflame.add", "pyflame.constant", "pyflame.reshape", "func.func",
           "func.return", "builtin.module", "array<i64: ", "{dim = 1 : i64}", "\n", " ",
           "// expected-error {{x}}", "#loc", "loc(", "\x00", "\u00e9", "\t"]


def mutate(text: str, rng: random.Random) -> str:
    """One to four edits: delete, duplicate or swap a span, insert tokens,
    nest brackets deeply, or replace a number by a huge one."""
    for _ in range(rng.randint(1, 4)):
        n = len(text)
        i, j = sorted((rng.randrange(n + 1), rng.randrange(n + 1)))
        kind = rng.randrange(6)
        if kind == 0:
            text = text[:i] + text[j:]
        elif kind == 1:
            text = text[:j] + text[i:j] + text[j:]
        elif kind == 2:
            text = text[:i] + "".join(rng.choices(_TOKENS, k=rng.randint(1, 6))) + text[i:]
        elif kind == 3:
            depth = rng.choice([50, 200, 3000])
            o, c = rng.choice(["()", "{}", "[]", "<>"])
            text = text[:i] + o * depth + c * rng.choice([0, depth]) + text[i:]
        elif kind == 4:
            k = text.find(rng.choice("0123456789"), i)
            if k >= 0:
                text = text[:k] + rng.choice(["9" * 30, "4294967297", "-9" * 12, "9" * 5000]) \
                    + text[k + 1:]
        else:
            text = text[:i] + text[j:] + text[i:j]
    return text


def run_opt(argv: list[str], capsys: pytest.CaptureFixture[str], what: str) -> tuple[int, str]:
    with time_limit(TIMEOUT, what):
        try:
            rc = pyflame_opt(argv)
        except SystemExit as e:  # argparse and --verify-diagnostics exit this way
            rc = e.code if isinstance(e.code, int) else 1
    out = capsys.readouterr()
    return rc, out.err


def check_diagnostic(rc: int, err: str, what: str) -> None:
    assert rc in (0, 1), f"{what}: exit code {rc}\n{err[-2000:]}"
    assert "Traceback" not in err, f"{what}: a traceback\n{err[-3000:]}"
    if rc == 1:
        assert "error" in err, f"{what}: exit code 1 without a diagnostic\n{err[-2000:]}"


# ---- pyflame-opt on mutated lit inputs ----

_PIPELINES = [[], [], ["-p", "canonicalize,cse,dce"], ["-p", "default"]]


def test_pyflame_opt_mutated_lit_inputs(tmp_path, capsys):
    rng = random.Random(SEED)
    assert LIT_INPUTS, "no lit inputs found under test/"
    for case in range(_cases(24)):
        src = rng.choice(LIT_INPUTS)
        text = src.read_text()
        # the first split chunk, without its RUN lines' options (we pick our own)
        text = text.split("// -----")[0]
        bad = mutate(text, rng)
        path = tmp_path / f"case{case}.mlir"
        path.write_text(bad, errors="surrogatepass")
        argv = [str(path), "--allow-unregistered-dialect", *rng.choice(_PIPELINES)]
        what = f"seed {SEED} case {case} (from {src.name}, pyflame-opt {' '.join(argv[1:])})"
        rc, err = run_opt(argv, capsys, what)
        check_diagnostic(rc, err, what)


def test_pyflame_opt_mlir_token_streams(tmp_path, capsys):
    rng = random.Random(SEED + 1)
    for case in range(_cases(12)):
        text = " ".join(rng.choices(_TOKENS, k=rng.randint(1, 60)))
        path = tmp_path / f"tokens{case}.mlir"
        path.write_text(text)
        what = f"seed {SEED + 1} token case {case}: {text[:200]!r}"
        rc, err = run_opt([str(path)], capsys, what)
        check_diagnostic(rc, err, what)


@pytest.mark.parametrize("text", [
    "(" * 10000 + ")" * 10000,
    "builtin.module {\n" * 10000 + "}\n" * 10000,
    "func.func @f(%a: " + "tensor<" * 10000 + "f32" + ">" * 10000 + ") {\n  func.return\n}\n",
    '"test.op"() {a = ' + "[" * 10000 + "]" * 10000 + "} : () -> ()\n",
    "func.func @f(%a: tensor<" + "9" * 5000 + "xf32>) {\n  func.return\n}\n",
    "func.func @f() -> tensor<100000000xf32> {\n  %0 = pyflame.constant {value = dense<1.0> "
    ": tensor<100000000xf32>} : () -> tensor<100000000xf32>\n  func.return %0 : "
    "tensor<100000000xf32>\n}\n",
    "func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n  %0 = pyflame.nope %a" + " " * 100000
    + "x\n}\n",
    # xDSL's string regex backtracks exponentially on these (found by this fuzzer)
    '"test.op"() {a = "' + "abcdefghij" * 8 + '} : () -> ()\n',
    '"test.op"() {a = "abc\\q' + "abcdefghij" * 8 + '"} : () -> ()\n',
], ids=["parens", "regions", "types", "arrays", "huge-int", "huge-splat", "long-line",
        "unterminated-string", "bad-escape"])
def test_pyflame_opt_hostile_input(text, tmp_path, capsys):
    """Deep nesting, huge integers, huge splats, long lines: exit 1 with a
    located diagnostic (``file:line:col: error:`` where the parser knows it)."""
    path = tmp_path / "hostile.mlir"
    path.write_text(text)
    rc, err = run_opt([str(path), "--allow-unregistered-dialect"], capsys, path.name)
    check_diagnostic(rc, err, path.name)
    assert rc == 1
    first = err.splitlines()[0]
    assert first.startswith(f"{path}:") and "error:" in first, err[:500]
    assert max(map(len, err.splitlines())) < 1000, "the whole long line was echoed"


# ---- PFGB: random and mutated bytes ----

def _valid_pfgb(tmp_path: Path) -> bytes:
    x = pf.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))
    w = pf.from_numpy(np.ones((3, 2), np.float32))
    y = pf.softmax(pf.relu(x @ w) + 1.5, dim=1)
    parts = pf.split(y, [1, 1], 1)
    path = tmp_path / "g.pfgb"
    pf.save_graph([y.sum(0), parts[1], pf.cumsum(x, 1)], path)
    return path.read_bytes()


def _with_crc(body: bytes) -> bytes:
    return body + struct.pack("<I", zlib.crc32(body))


def test_pfgb_random_and_mutated_bytes(lazy, tmp_path):
    # (lazy-only: mutations of a recorded graph's file; eager mode records none)
    rng = random.Random(SEED + 2)
    valid = _valid_pfgb(tmp_path)
    for case in range(_cases(300)):
        kind = case % 4
        if kind == 0:  # random bytes behind a valid magic and version, CRC fixed
            body = b"PFGB" + struct.pack("<HH", 1, rng.randrange(2)) + rng.randbytes(
                rng.randrange(0, 200))
            data = _with_crc(body)
        elif kind == 1:  # flipped bytes, CRC fixed so the structure checks are reached
            body = bytearray(valid[:-4])
            for _ in range(rng.randint(1, 6)):
                body[rng.randrange(len(body))] = rng.randrange(256)
            data = _with_crc(bytes(body))
        elif kind == 2:  # truncated or extended, CRC fixed
            cut = rng.randrange(len(valid) - 4)
            data = _with_crc(valid[:cut] + rng.randbytes(rng.randrange(0, 16)))
        else:  # flipped bytes, CRC left alone
            body = bytearray(valid)
            body[rng.randrange(len(body))] ^= 1 << rng.randrange(8)
            data = bytes(body)
        what = f"seed {SEED + 2} PFGB case {case}"
        with time_limit(TIMEOUT, what):
            try:
                prog = parse_graph(data, what)
            except GraphFileError as e:
                assert "at byte" in str(e)
                continue
        # a mutation that still makes a valid graph must also run
        if prog.outputs is not None:
            with time_limit(TIMEOUT, what):
                pf.eval(*prog.outputs)


# ---- pf.load_mlir: random token streams and mutated pyflame text ----

def test_load_mlir_token_streams_and_mutations(lazy):
    """Lazy-only: its base text is a recorded graph's IR (eager mode records none)."""
    rng = random.Random(SEED + 3)
    x = pf.from_numpy(np.ones((2, 3), np.float32))
    base = pf.to_mlir(pf.softmax(x * 2.0, dim=1).sum(0))
    for case in range(_cases(60)):
        if case % 2:
            text = " ".join(rng.choices(_TOKENS, k=rng.randint(1, 60)))
        else:
            text = mutate(base, rng)
        what = f"seed {SEED + 3} load_mlir case {case}: {text[:200]!r}"
        with time_limit(TIMEOUT, what):
            try:
                pf.load_mlir(text)
            except pf.MlirLoadError as e:
                assert "error:" in str(e), what
