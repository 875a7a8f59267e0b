"""Every ```python block of README.md and docs/ runs (issue 20), so the docs
cannot drift from the code.

The blocks of one page run in order in one fresh process, sharing a namespace
(as a reader would paste them into one session), on the reference backend
unless a block selects another. A block that cannot run here says so, visibly,
on the line just above its fence:

    *Not run by the docs test: <the reason>.*
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
SKIP = re.compile(r"^\*Not run by the docs test: (.+)\*$")
FENCE = re.compile(r"^```(\S*)\s*$")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    code: str
    skip: str | None  # the reason, for a marked block


def blocks(page: Path) -> list[Block]:
    """The page's ```python blocks, with their skip markers."""
    lines = page.read_text().splitlines()
    found, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, lang = i, m.group(1)
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == "```"), None)
        assert end is not None, f"{page}:{i + 1}: unclosed code block"
        if lang == "python":
            above = next((lines[j] for j in range(start - 1, -1, -1) if lines[j].strip()), "")
            marker = SKIP.match(above.strip())
            found.append(Block(page, start + 1, "\n".join(lines[start + 1:end]) + "\n",
                               marker.group(1) if marker else None))
        i = end + 1
    return found


RUNNER = """
import sys
blocks = {blocks!r}
namespace = {{"__name__": "__main__"}}
for where, code in blocks:
    try:
        exec(compile(code, where, "exec"), namespace)
    except BaseException:
        print(f"the block at {{where}} failed", file=sys.stderr)
        raise
"""


@pytest.mark.parametrize("page", [p for p in PAGES if any(b.skip is None for b in blocks(p))],
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_page_code_blocks_run(page: Path, tmp_path: Path) -> None:
    runnable = [b for b in blocks(page) if b.skip is None]
    program = RUNNER.format(blocks=[(f"{page.relative_to(ROOT)}:{b.line}", b.code)
                                    for b in runnable])
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYFLAME_BACKEND", "PYFLAME_LOG", "PYFLAME_EAGER"))}
    env["PYFLAME_CACHE_DIR"] = str(tmp_path / "cache")  # leave the user's cache alone
    done = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-4000:]


def test_skipped_blocks_say_why() -> None:
    """Every page has runnable blocks or none; a skip marker carries a reason,
    and only blocks that need what CI lacks (MAX, a GPU) are skipped."""
    skipped = [b for p in PAGES for b in blocks(p) if b.skip is not None]
    for b in skipped:
        assert len(b.skip) > 20, f"{b.page}:{b.line}: give the reason a block is not run"
    assert {b.page.name for b in skipped} <= {"max.md"}
    assert any(b.skip is None for b in blocks(ROOT / "README.md"))


def test_the_marker_is_recognized(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("text\n\n*Not run by the docs test: needs a GPU and minutes.*\n"
                    "```python\nraise SystemExit(1)\n```\n\n```python\nx = 1\n```\n"
                    "```sh\nmake demo\n```\n")
    got = [(b.line, b.skip, b.code) for b in blocks(page)]
    assert got == [(4, "needs a GPU and minutes.", "raise SystemExit(1)\n"),
                   (8, None, "x = 1\n")]


def test_a_failing_block_fails() -> None:
    program = RUNNER.format(blocks=[("page.md:1", "x = 1\n"), ("page.md:5", "assert x == 2\n")])
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode != 0 and "the block at page.md:5 failed" in done.stderr
