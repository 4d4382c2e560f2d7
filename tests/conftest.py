"""Project-wide pytest fixtures and markers (keep generic; suites add their own in sub-conftests)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

from hls.toolchain import find_iverilog

# Property tests draw the same examples on every run (Determinism): with random draws, one CI run in
# many met an isl problem that ran for minutes (test_monoparametric's tiled-domain equality).
hypothesis_settings.register_profile("dpn-synth", derandomize=True)
hypothesis_settings.load_profile("dpn-synth")

# Optional external tools: marker name -> (probe returning something truthy when present, tool).
_TOOL_MARKERS: dict[str, tuple[Callable[[], object], str]] = {
    "requires_iverilog": (find_iverilog, "Icarus Verilog (iverilog)"),
}

#: Decorator form for modules that prefer an import: ``from tests.conftest import requires_iverilog``.
requires_iverilog = pytest.mark.requires_iverilog


def pytest_configure(config: pytest.Config) -> None:
    os.environ.setdefault("DPN_SYNTH_VERILATOR_OPT", "-O0")  # short simulations: build time dominates
    for name, (_, tool) in _TOOL_MARKERS.items():
        config.addinivalue_line("markers", f"{name}: needs {tool}; skipped when it is not installed")


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip (with the reason) tests marked as needing a tool that is not installed, and long tests
    (`slow`) unless `-m` selects them: the default run stays within its time budget."""
    if item.get_closest_marker("slow") is not None and "slow" not in (item.config.getoption("markexpr") or ""):
        pytest.skip("a long test: select it with `pytest -m slow`")
    for name, (probe, tool) in _TOOL_MARKERS.items():
        if item.get_closest_marker(name) is not None and not probe():
            pytest.skip(f"{tool} is not installed (optional extra)")


@pytest.fixture(scope="session")
def rtl_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Verilator build cache shared by every xdist worker of this pytest session.

    Under xdist each worker's base temp dir is ``<session basetemp>/popen-gwN``, so the parent is
    common to the workers of this run but fresh for the next run (builds never leak between runs
    unless asked).  Set ``DPN_SYNTH_CACHE`` to reuse builds across runs instead.
    """
    if os.environ.get("DPN_SYNTH_CACHE"):
        from sim.rtl_runner import default_cache_root

        path = default_cache_root()
    else:
        base = tmp_path_factory.getbasetemp()
        session_dir = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
        path = session_dir / "rtl-cache"
    path.mkdir(parents=True, exist_ok=True)
    return path
