"""The example kernels the tests run, with the arguments each needs."""

from __future__ import annotations

import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.c"))
POLYBENCH = ROOT / "tests" / "polybench_like"
POLYBENCH_KERNELS = sorted(p for p in POLYBENCH.rglob("*.c") if p.parent.name != "utilities")
POLYBENCH_FLAGS = ["-I", str(POLYBENCH / "utilities"), "-DMINI_DATASET", "-DPOLYBENCH_USE_SCALAR_LB"]


def example_params(path: Path) -> dict[str, int]:
    """Parameters from the file's `// dpn-synth-args: --param n=16` first line."""
    first = path.read_text().splitlines()[0]
    params: dict[str, int] = {}
    if first.startswith("// dpn-synth-args:"):
        words = shlex.split(first.split(":", 1)[1])
        for k, w in enumerate(words):
            if w == "--param":
                name, value = words[k + 1].split("=")
                params[name] = int(value)
    return params


def cli_args(path: Path) -> list[str]:
    return [a for k, v in example_params(path).items() for a in ("--param", f"{k}={v}")]


def ids(paths) -> list[str]:
    return [p.stem for p in paths]


def run_cli(argv: list[str], capsys) -> tuple[int, str, str]:
    """`dpn-synth argv` in-process: (exit status, stdout, stderr), usage errors included."""
    from hls.cli import main

    try:
        rc = main(argv)
    except SystemExit as e:
        rc = e.code if isinstance(e.code, int) else 1
    out, err = capsys.readouterr()
    return rc, out, err
