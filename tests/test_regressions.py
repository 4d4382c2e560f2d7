"""Every kernel in `tests/regressions/` against gcc: interpreter, DPN simulator, and RTL for integer kernels.

A file whose first line contains `xfail:` is a known, not yet fixed bug (usually a shrunk fuzzing
failure saved by `tests/fuzz/shrink.py`): it is marked `xfail(strict=True)` with the rest of that
line as the reason, so the test starts failing (XPASS) the day the bug is fixed - then delete the
`xfail:` line.  A `check-seeds: 3 4` header line gives the input seeds that reproduce a failure
(default: 0 and 1); `check-compiles: 8` compiles the kernel that many times and checks every distinct
network and design (for failures that depend on which of several equal isl representations a run gets);
`check-tile: auto` also checks the kernel compiled with that `--tile`.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.fuzz.check import check_file

REGRESSIONS = Path(__file__).resolve().parent / "regressions"
FILES = sorted(REGRESSIONS.glob("*.c"))


def _param(path: Path):
    first = (path.read_text(errors="replace").splitlines() or [""])[0]
    marks = []
    if "xfail:" in first:
        marks.append(pytest.mark.xfail(strict=True, reason=first.split("xfail:", 1)[1].strip()))
    return pytest.param(path, id=path.stem, marks=marks)


def _seeds(text: str) -> tuple[int, ...]:
    m = re.search(r"check-seeds:\s*([\d ]+)", text)
    return tuple(int(x) for x in m.group(1).split()) if m else (0, 1)


def _tile(text: str):
    m = re.search(r"check-tile:\s*(\S+)", text)
    return m.group(1) if m else None


def _compiles(text: str) -> int:
    m = re.search(r"check-compiles:\s*(\d+)", text)
    return int(m.group(1)) if m else 1


def test_regressions_exist():
    assert any(p.name == "war_through_memory.c" for p in FILES)


@pytest.mark.parametrize("path", [_param(p) for p in FILES])
def test_regression(path: Path, tmp_path: Path, rtl_cache: Path):
    text = path.read_text()
    v = check_file(path, seeds=_seeds(text), rtl=True, workdir=tmp_path, cache_root=rtl_cache,
                   compiles=_compiles(text), tile=_tile(text))
    detail = "\n".join(f.detail for f in v.failures if f.detail)[-2000:]
    assert v.ok, f"{path.name}: {v.summary()}\n{detail}"
