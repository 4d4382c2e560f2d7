"""Channel templates beyond the plain FIFO: the FIFO with multiplicity and the addressable buffer
with its synchronization unit.  Lint cleanliness over a range of sizes, and cocotb simulations
against Python models (tests/rtl/cocotb_fifo_mult.py, tests/rtl/cocotb_buffer_sync.py).

As for the FIFO, each template is rendered once and the sizes are set per build through
parameters; builds land in the session-wide `rtl_cache`, so xdist workers share them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hls.rtl.render import render, render_to_file
from sim.rtl_runner import build_verilator, lint_verilator, run_cocotb

FIFO_TOP = "dpn_fifo"  # the exact-depth FIFO that fifo_mult instantiates
FM_TOP = "dpn_fifo_mult"
BS_TOP = "dpn_buffer_sync"
SIM_TIMEOUT_S = 120.0


def _clog2(n: int) -> int:
    return (n - 1).bit_length()


def _addr_width(size: int) -> int:
    return max(1, _clog2(size))


@pytest.fixture(scope="session")
def fifo_mult_sources(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """fifo_mult and the FIFO it needs, each in a file named after its module."""
    d = tmp_path_factory.mktemp("fifo_mult_src")
    return [
        render_to_file(d / f"{FIFO_TOP}.v", "fifo.v.j2", module_name=FIFO_TOP, width=8, depth=4),
        render_to_file(
            d / f"{FM_TOP}.v", "fifo_mult.v.j2",
            module_name=FM_TOP, fifo_module_name=FIFO_TOP, width=8, depth=4,
        ),
    ]


@pytest.fixture(scope="session")
def buffer_sync_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return render_to_file(
        tmp_path_factory.mktemp("buffer_sync_src") / f"{BS_TOP}.v", "buffer_sync.v.j2",
        module_name=BS_TOP, width=8, size=4, addr_width=2,
    )


# --------------------------------------------------------------------------------------------------
# simulation (each case is one Verilator build: keep the lists short)

FM_CASES = [(8, 1), (32, 5)]  # (WIDTH, DEPTH); the FIFO itself is covered by test_fifo.py


@pytest.mark.parametrize(("width", "depth"), FM_CASES, ids=lambda v: str(v))
def test_fifo_mult_simulation(
    width: int, depth: int, fifo_mult_sources: list[Path], rtl_cache: Path, tmp_path: Path
) -> None:
    build = build_verilator(
        fifo_mult_sources, FM_TOP, parameters={"WIDTH": width, "DEPTH": depth}, cache_root=rtl_cache
    )
    result = run_cocotb(
        build, "tests.rtl.cocotb_fifo_mult", test_dir=tmp_path / "sim",
        extra_env={"FM_WIDTH": str(width), "FM_DEPTH": str(depth), "FM_CYCLES": "4000"},
        timeout_s=SIM_TIMEOUT_S,
    )
    assert result.ok, result.summary()
    assert result.passed == 1


# (WIDTH, SIZE, AW): a single slot with the exact address width, an odd size with an address one
# bit wider than needed (the other decode branches are only linted), a buffer with an input register
# (more than 64 slots), and one above the 8 kbit kept in distributed RAM (the block RAM branch: read
# at the announced address, with forwarding).
BS_CASES = [(8, 1, 1), (32, 17, 6), (8, 70, 7), (64, 130, 8)]


@pytest.mark.parametrize(("width", "size", "aw"), BS_CASES, ids=lambda v: str(v))
def test_buffer_sync_simulation(
    width: int, size: int, aw: int, buffer_sync_source: Path, rtl_cache: Path, tmp_path: Path
) -> None:
    build = build_verilator(
        [buffer_sync_source], BS_TOP, parameters={"WIDTH": width, "SIZE": size, "AW": aw},
        cache_root=rtl_cache,
    )
    result = run_cocotb(
        build, "tests.rtl.cocotb_buffer_sync", test_dir=tmp_path / "sim",
        extra_env={"BS_WIDTH": str(width), "BS_SIZE": str(size), "BS_AW": str(aw), "BS_CYCLES": "4000"},
        timeout_s=SIM_TIMEOUT_S,
    )
    assert result.ok, result.summary()
    assert result.passed == 1


# --------------------------------------------------------------------------------------------------
# lint

LINT_SIZES = [1, 2, 3, 4, 17]
# and buffers with input registers (more than 64 slots), one of them in block RAM at 64 bits
BS_LINT_SIZES = [*LINT_SIZES, 65, 320]
LINT_WIDTHS = [1, 32, 64]


@pytest.mark.parametrize("depth", LINT_SIZES)
@pytest.mark.parametrize("width", LINT_WIDTHS)
def test_fifo_mult_lint_clean(width: int, depth: int, fifo_mult_sources: list[Path], tmp_path: Path) -> None:
    """Rendered with these sizes as defaults, and the shared sources overridden via -G."""
    name = f"fifo_mult_w{width}_d{depth}"
    fifo = render_to_file(tmp_path / f"{FIFO_TOP}.v", "fifo.v.j2", module_name=FIFO_TOP, width=3, depth=2)
    src = render_to_file(
        tmp_path / f"{name}.v", "fifo_mult.v.j2",
        module_name=name, fifo_module_name=FIFO_TOP, width=width, depth=depth,
    )
    assert f"module {name} " in src.read_text()
    assert lint_verilator([fifo, src], name) == []
    assert lint_verilator(fifo_mult_sources, FM_TOP, parameters={"WIDTH": width, "DEPTH": depth}) == []


@pytest.mark.parametrize("size", BS_LINT_SIZES)
@pytest.mark.parametrize("width", LINT_WIDTHS)
def test_buffer_sync_lint_clean(width: int, size: int, buffer_sync_source: Path, tmp_path: Path) -> None:
    """Exact address width as rendered; wider and (where possible) narrower ones via -G."""
    name = f"buffer_sync_w{width}_s{size}"
    aw = _addr_width(size)
    src = render_to_file(
        tmp_path / f"{name}.v", "buffer_sync.v.j2", module_name=name, width=width, size=size, addr_width=aw
    )
    assert f"module {name} " in src.read_text()
    assert lint_verilator([src], name) == []
    for other_aw in sorted({aw + 3, max(1, aw - 1)} - {aw}):
        params = {"WIDTH": width, "SIZE": size, "AW": other_aw}
        assert lint_verilator([buffer_sync_source], BS_TOP, parameters=params) == [], params


def test_channel_templates_are_strict() -> None:
    """A missing context variable is an error, never an empty hole in the Verilog."""
    import jinja2

    with pytest.raises(jinja2.UndefinedError):
        render("fifo_mult.v.j2", module_name="x", width=8, depth=2)  # no fifo_module_name
    with pytest.raises(jinja2.UndefinedError):
        render("buffer_sync.v.j2", module_name="x", width=8, size=2)  # no addr_width
    with pytest.raises(jinja2.UndefinedError):
        render("mem_model.v.j2", module_name="x", width=8, addr_width=2, depth=4)  # no name
