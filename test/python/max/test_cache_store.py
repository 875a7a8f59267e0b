"""The persistent compiled-model store without compiling: entries check
themselves, corrupt ones are deleted (never returned), writes are atomic even
with two processes writing the same key."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("max.graph", reason="the MAX backend needs `max`: "
                                        "pip install 'pyflame-mlir[max]'")

from pyflame_mlir.runtime import disk_cache, max_backend  # noqa: E402
from pyflame_mlir.runtime.max_backend import CorruptEntry, MefStore  # noqa: E402

KEY = "ab" * 20


def test_roundtrip(tmp_path: Path) -> None:
    st = MefStore(tmp_path)
    payload = os.urandom(5000)
    p = st.write(KEY, payload, {"device": "cpu"})
    assert p == tmp_path / f"{KEY}.mef"
    assert st.read(KEY) == payload
    assert st.read("cd" * 20) is None
    assert not list(tmp_path.glob(".*.tmp"))  # no temporaries left behind


def test_cache_dir_follows_pyflame_cache_dir(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYFLAME_CACHE_DIR", str(tmp_path))
    assert max_backend.mef_dir() == tmp_path / "max" / "mef"
    monkeypatch.delenv("PYFLAME_CACHE_DIR")
    assert disk_cache.cache_root() == Path.home() / ".cache" / "pyflame"


@pytest.mark.parametrize("damage", ["truncate", "flip", "magic", "header", "empty",
                                    "other-key"])
def test_corrupt_entry_is_deleted_not_used(tmp_path: Path, damage: str) -> None:
    st = MefStore(tmp_path)
    payload = os.urandom(4096)
    p = st.write(KEY, payload, {})
    blob = bytearray(p.read_bytes())
    if damage == "truncate":
        blob = blob[:-100]
    elif damage == "flip":
        blob[-10] ^= 0xFF
    elif damage == "magic":
        blob[:4] = b"XXXX"
    elif damage == "header":
        i = blob.index(b'"sha256"')
        blob[i:i + 8] = b'"sha25X"'
    elif damage == "empty":
        blob = bytearray()
    elif damage == "other-key":
        blob = bytearray(MefStore.encode(payload, {"key": "ef" * 20}))
    p.write_bytes(bytes(blob))
    before = max_backend.STATS.corrupt_entries
    assert st.read(KEY) is None
    assert not p.exists()  # deleted, so the next compile rebuilds it
    assert max_backend.STATS.corrupt_entries == before + 1


def test_decode_rejects_bad_lengths() -> None:
    good = MefStore.encode(b"x" * 10, {"key": KEY})
    assert MefStore.decode(good)[0] == b"x" * 10
    with pytest.raises(CorruptEntry):
        MefStore.decode(good + b"extra")
    with pytest.raises(CorruptEntry):
        MefStore.decode(good[:len(max_backend.MAGIC) + 2])


WRITER = textwrap.dedent("""
    import hashlib, os, sys
    from pathlib import Path
    from pyflame_mlir.runtime.max_backend import MefStore
    root, key, seed, n = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    st = MefStore(root)
    bad = 0
    for i in range(n):
        payload = hashlib.sha256(f"{seed}-{i}".encode()).digest() * 65536  # 2 MiB
        st.write(key, payload, {"writer": seed})
        got = st.read(key)  # whatever a concurrent writer left: whole, or (never) nothing
        if got is None or len(got) != len(payload):
            bad += 1
    print(bad)
""")


def test_two_processes_writing_one_key_leave_one_good_entry(tmp_path: Path) -> None:
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), KEY, str(seed),
                               "15"], stdout=subprocess.PIPE, text=True)
             for seed in (1, 2)]
    outs = [p.communicate(timeout=300)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert [int(o) for o in outs] == [0, 0]  # no reader ever saw a partial entry
    payload = MefStore(tmp_path).read(KEY)
    assert payload is not None and len(payload) == 32 * 65536
    assert [p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")] == \
        [f"{KEY}.mef"]


def test_an_unusable_cache_directory_does_not_break_the_lock(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_bytes(b"")
    st = MefStore(blocker / "mef")  # cannot be created: a file is in the way
    with st.lock(KEY):  # degrades to no lock instead of failing the evaluation
        pass
    assert st.read(KEY) is None
    with pytest.raises(OSError):
        st.write(KEY, b"x", {})  # lower_and_compile turns this into a warning
