"""The exact-depth FIFO template: lint cleanliness, cycle-accurate behaviour, and the build cache.

Verilator builds cost seconds each, so every simulation uses one rendered source and sets WIDTH and
DEPTH at build time through parameters; the builds land in the session-wide `rtl_cache`, shared
by all xdist workers.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hls.cache import SHARED_DIR
from hls.rtl.render import render, render_to_file
from hls.toolchain import find_yosys
from sim.rtl_runner import BUILD_MARKER, build_key, build_verilator, lint_verilator, run_cocotb

REPO_ROOT = Path(__file__).resolve().parents[2]
TOP = "dpn_fifo"
COCOTB_MODULE = "tests.rtl.cocotb_fifo"
SIM_TIMEOUT_S = 120.0


@pytest.fixture(scope="session")
def fifo_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The FIFO rendered once; identical bytes in every worker, hence identical cache keys."""
    # Verilator -Wall wants the file named after the module (DECLFILENAME).
    return render_to_file(
        tmp_path_factory.mktemp("fifo_src") / f"{TOP}.v", "fifo.v.j2", module_name=TOP, width=8, depth=4
    )


# --------------------------------------------------------------------------------------------------
# simulation

# (WIDTH, DEPTH, out_ready probability): odd and power-of-two depths, DEPTH=1 and 2 edge cases,
# light and heavy back-pressure.  Each line is one Verilator build, so keep the list short.
SIM_CASES = [
    (8, 1, 0.5),
    (8, 2, 0.3),
    (32, 3, 0.7),
    (1, 5, 0.5),
    (16, 8, 0.4),
    (64, 17, 0.6),
    (8, 70, 0.5),  # deeper than LUTRAM_DEPTH: both head words read synchronously (block RAM)
]


@pytest.mark.parametrize(("width", "depth", "ready_prob"), SIM_CASES, ids=lambda v: str(v))
def test_fifo_simulation(
    width: int, depth: int, ready_prob: float, fifo_source: Path, rtl_cache: Path, tmp_path: Path
) -> None:
    build = build_verilator(
        [fifo_source], TOP, parameters={"WIDTH": width, "DEPTH": depth}, cache_root=rtl_cache
    )
    result = run_cocotb(
        build,
        COCOTB_MODULE,
        test_dir=tmp_path / "sim",
        extra_env={
            "FIFO_WIDTH": str(width),
            "FIFO_DEPTH": str(depth),
            "FIFO_CYCLES": "4000",
            "FIFO_VALID_PROB": "0.6",
            "FIFO_READY_PROB": str(ready_prob),
        },
        timeout_s=SIM_TIMEOUT_S,
    )
    assert result.ok, result.summary()
    assert result.passed == 1


# --------------------------------------------------------------------------------------------------
# lint


@pytest.mark.parametrize("depth", [1, 2, 3, 5, 8, 17])
@pytest.mark.parametrize("width", [1, 8, 32, 64])
def test_fifo_lint_clean(width: int, depth: int, tmp_path: Path) -> None:
    """Rendered with these sizes as defaults, and also overridden via -G from another default."""
    name = f"fifo_w{width}_d{depth}"
    src = render_to_file(tmp_path / f"{name}.v", "fifo.v.j2", module_name=name, width=width, depth=depth)
    assert f"module {name} " in src.read_text()
    assert lint_verilator([src], name) == []
    other = render_to_file(tmp_path / "other" / f"{TOP}.v", "fifo.v.j2", module_name=TOP, width=3, depth=4)
    assert lint_verilator([other], TOP, parameters={"WIDTH": width, "DEPTH": depth}) == []


def test_lint_reports_warnings(tmp_path: Path) -> None:
    """The lint helper must actually surface warnings, or the clean results above mean nothing."""
    src = tmp_path / "sloppy.v"
    src.write_text(
        "module sloppy(input wire [7:0] a, output wire [3:0] y);\n"
        "    wire unused_w;\n"
        "    assign y = a;\n"
        "endmodule\n"
    )
    problems = lint_verilator([src], "sloppy")
    assert any("WIDTH" in p for p in problems), problems
    assert any("UNUSED" in p for p in problems), problems
    assert all(p.startswith("%") for p in problems)


def test_render_is_strict() -> None:
    """A missing context variable is an error, never an empty hole in the Verilog."""
    import jinja2

    with pytest.raises(jinja2.UndefinedError):
        render("fifo.v.j2", module_name="x", width=8)


def test_fifo_synthesizes_to_one_ram(fifo_source: Path) -> None:
    """Yosys (Verilog-2005 parser) sees the storage as one RAM with no latches or async resets.

    Skipped without the optional Yosys extra; the first YoWASP run also JIT-compiles Yosys once.
    """
    yosys = find_yosys()
    if yosys is None:
        pytest.skip("Yosys is not installed (optional extra: pip install 'dpn-synth[yosys]')")
    script = "; ".join(
        [
            f"read_verilog {fifo_source.name}",  # relative: YoWASP only sees the cwd tree
            f"chparam -set DEPTH 17 -set WIDTH 32 {TOP}",
            f"hierarchy -check -top {TOP}",
            "proc",
            "opt",
            "memory -nomap",
            "opt_clean",
            "select -assert-count 1 t:$mem_v2",
            "select -assert-none t:$dlatch t:$adff t:$adffe",
        ]
    )
    proc = subprocess.run(
        [*yosys, "-q", "-p", script], cwd=fifo_source.parent, capture_output=True, text=True, timeout=600
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-3000:]
    assert "warning" not in output.lower(), output[-3000:]


# --------------------------------------------------------------------------------------------------
# build cache


def _build_in_subprocess(src: Path, cache: Path, params: dict[str, int]) -> subprocess.Popen[str]:
    """Start another Python process asking for a build; it prints the build dir and freshness."""
    code = textwrap.dedent(
        f"""
        import json
        from pathlib import Path
        from sim.rtl_runner import build_verilator
        b = build_verilator([Path({str(src)!r})], {TOP!r}, parameters={params!r},
                            cache_root=Path({str(cache)!r}))
        print(json.dumps({{"dir": str(b.build_dir), "fresh": b.fresh}}))
        """
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.Popen(
        [sys.executable, "-c", code], cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )


def _result(proc: subprocess.Popen[str]) -> dict[str, object]:
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-3000:]
    return json.loads(out.strip().splitlines()[-1])


def test_build_cache_reuses_builds(fifo_source: Path, rtl_cache: Path) -> None:
    params = {"WIDTH": 8, "DEPTH": 2}  # shared with a simulation case: at most one compile
    first = build_verilator([fifo_source], TOP, parameters=params, cache_root=rtl_cache)
    marker = first.build_dir / BUILD_MARKER
    assert marker.is_file() and first.executable.is_file()
    built_at = marker.stat().st_mtime_ns

    again = build_verilator([fifo_source], TOP, parameters=params, cache_root=rtl_cache)
    assert again == first and again.build_dir == first.build_dir
    assert not again.fresh, "second request in the same process recompiled"

    other_process = _result(_build_in_subprocess(fifo_source, rtl_cache, params))
    assert other_process == {"dir": str(first.build_dir), "fresh": False}
    assert marker.stat().st_mtime_ns == built_at, "the cached build was rebuilt"


def test_build_key_tracks_inputs(fifo_source: Path, tmp_path: Path) -> None:
    base = build_key([fifo_source], TOP, parameters={"WIDTH": 8, "DEPTH": 2})
    assert base == build_key([fifo_source], TOP, parameters={"DEPTH": 2, "WIDTH": 8})
    # Same bytes elsewhere: same build (paths are not part of the key).
    copy = tmp_path / "elsewhere" / f"{TOP}.v"
    copy.parent.mkdir()
    copy.write_bytes(fifo_source.read_bytes())
    assert build_key([copy], TOP, parameters={"WIDTH": 8, "DEPTH": 2}) == base
    variants = {
        build_key([fifo_source], TOP, parameters={"WIDTH": 8, "DEPTH": 3}),
        build_key([fifo_source], TOP, parameters={"WIDTH": 9, "DEPTH": 2}),
        build_key([fifo_source], TOP, parameters={"WIDTH": 8, "DEPTH": 2}, defines={"X": 1}),
        build_key([fifo_source], TOP, parameters={"WIDTH": 8, "DEPTH": 2}, extra_args=["-O3"]),
        build_key([fifo_source], TOP, parameters={"WIDTH": 8, "DEPTH": 2}, trace="vcd"),
        build_key([fifo_source], "other_top", parameters={"WIDTH": 8, "DEPTH": 2}),
    }
    copy.write_text(fifo_source.read_text() + "// changed\n")
    variants.add(build_key([copy], TOP, parameters={"WIDTH": 8, "DEPTH": 2}))
    assert base not in variants and len(variants) == 7


def test_concurrent_requests_compile_once(fifo_source: Path, tmp_path: Path) -> None:
    """Two processes asking for the same new build at once: one compiles, the other waits and reuses."""
    cache = tmp_path / "cache"  # private, so the build is guaranteed to be new
    params = {"WIDTH": 8, "DEPTH": 2}
    procs = [_build_in_subprocess(fifo_source, cache, params) for _ in range(2)]
    results = [_result(p) for p in procs]
    assert results[0]["dir"] == results[1]["dir"]
    assert sorted(bool(r["fresh"]) for r in results) == [False, True]
    entries = sorted(p.name for p in cache.iterdir() if p.name != SHARED_DIR)
    key = Path(str(results[0]["dir"])).name
    assert entries == [key, f"{key}.lock"], f"leftovers in the cache: {entries}"


def _compiled(build_dir: Path) -> set[str]:
    """The C++ sources the build's make step compiled (from its log)."""
    log = (build_dir / "build.log").read_text()
    return {Path(m).name for m in re.findall(r" -c -o \S+ (\S+\.cpp)", log)}


@pytest.mark.slow  # 55 s; the shared build cache is covered by test_build_cache_reuses_builds
def test_runtime_is_compiled_once_and_shared(fifo_source: Path, tmp_path: Path) -> None:
    """Verilator's runtime (most of a small model's build) is compiled by the first build of a cache
    directory and linked by the next; a stored copy that does not link is dropped and rebuilt, and
    the model still simulates correctly."""
    cache_dir = tmp_path / "cache"
    first = build_verilator([fifo_source], TOP, parameters={"WIDTH": 8, "DEPTH": 2}, cache_root=cache_dir)
    assert {"verilated.cpp", "verilated_vpi.cpp"} <= _compiled(first.build_dir)
    stores = list((cache_dir / SHARED_DIR).iterdir())
    assert len(stores) == 1 and (stores[0] / "verilated.o").is_file()

    second = build_verilator([fifo_source], TOP, parameters={"WIDTH": 8, "DEPTH": 3}, cache_root=cache_dir)
    assert second.fresh and second.key != first.key
    assert not any(name.startswith("verilated") for name in _compiled(second.build_dir))
    assert str(stores[0] / "verilated.o") in (second.build_dir / "build.log").read_text()

    (stores[0] / "verilated_vpi.o").write_bytes(b"not an object file")
    third = build_verilator([fifo_source], TOP, parameters={"WIDTH": 8, "DEPTH": 5}, cache_root=cache_dir)
    assert "verilated_vpi.cpp" in _compiled(third.build_dir), "the broken copy was not rebuilt"
    assert (stores[0] / "verilated_vpi.o").read_bytes() != b"not an object file"
    for build, depth in ((second, 3), (third, 5)):
        result = run_cocotb(
            build, COCOTB_MODULE, test_dir=tmp_path / f"sim{depth}", timeout_s=SIM_TIMEOUT_S,
            extra_env={"FIFO_WIDTH": "8", "FIFO_DEPTH": str(depth), "FIFO_CYCLES": "2000",
                       "FIFO_VALID_PROB": "0.6", "FIFO_READY_PROB": "0.5"},
        )
        assert result.ok and result.passed == 1, result.summary()
