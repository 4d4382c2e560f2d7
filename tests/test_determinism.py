"""Two `compile` runs in separate processes give byte-identical output trees.

Separate processes matter: isl's internal representations can depend on allocation order, which
changes from process to process (a bug of that kind only showed across runs, see
`tests/regressions/fuzz_9866efb6.c`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CASES = [
    ("tests/regressions/fuzz_9866efb6.c", []),
    pytest.param("examples/cholesky.c", [], marks=pytest.mark.slow),  # 40 s; gemm stays
    pytest.param("examples/jacobi-1d.c", ["--tile", "auto"], marks=pytest.mark.slow),  # 20 s; gemm stays
    ("examples/gemm.c", ["--tile", "auto"]),
    ("tests/frontend/constructs/stage_functions.c", []),  # stage functions inlined, their locals renamed
    ("tests/frontend/constructs/returned_value.c", []),  # pointers, an if on data, a returned value
    pytest.param("tests/frontend/constructs/pointer_rows.c", [], marks=pytest.mark.slow),
    pytest.param("examples/gemv-float.c", ["--param", "m=16", "--param", "n=20", "--parallel", "4"],
                 marks=pytest.mark.slow),  # 43 s: read channels per slab
]


def _id(case) -> str:
    kernel, opts = case.values if hasattr(case, "values") else case
    return Path(kernel).stem + "".join(opts)


def _tree(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("kernel,opts", CASES, ids=[_id(c) for c in CASES])
def test_compile_tree_is_byte_identical_across_processes(kernel, opts, tmp_path):
    trees = []
    for run in ("a", "b", "c"):
        out = tmp_path / run
        subprocess.run([sys.executable, "-m", "hls.cli", "compile", str(ROOT / kernel), *opts, "-o", str(out), "-q"],
                       check=True, cwd=tmp_path)
        trees.append(_tree(out))
    assert trees[0].keys() == trees[1].keys() == trees[2].keys()
    for name in trees[0]:
        assert trees[0][name] == trees[1][name] == trees[2][name], name
