"""The cycle model (`timing.simulate_timing`) run by its C twin, `cycle_model.c`.

Why: the compiler runs the model on every candidate network and on every trial of `deepen`; in
Python that was a quarter to two fifths of a compile.  The C follows the Python model rule for rule
and gives the same cycles, waits and issue checkpoints (tests/dpn/test_native_model.py compares the
two on every example); the Python model stays the specification, and the one that records
schedules.  The C is built by gcc once per gcc and source (`hls.shared_object`), into the build
cache; where it cannot be built, `available` says so and the Python model runs instead.
"""

from __future__ import annotations

import ctypes
import warnings
from dataclasses import dataclass
from importlib import resources
from typing import Optional, Sequence

import numpy as np

from ..shared_object import compile_shared_object, default_cache_dir
from .network import ChannelKind

FLAGS = ("-std=gnu11", "-O2", "-fPIC", "-shared")

_I64 = ctypes.POINTER(ctypes.c_int64)
_U8 = ctypes.POINTER(ctypes.c_uint8)
# dpn_cycle_model's parameters, in order (cycle_model.c): int64 scalars (`_SCALARS`), byte arrays
# (`_BYTES`), the others int64 arrays
_ARGS = ("P", "C", "n", "lat", "njoins", "join_base", "joins", "proc_group", "proc_wgroup", "line_port",
         "line_rank", "line_base", "line_flags", "nports", "group_base", "offs", "r_ci", "r_v", "r_free",
         "r_slot", "w_ci", "w_v", "w_slot", "cap", "delay", "buffered", "val_base", "nvals", "slot_base",
         "nslots", "max_cycles", "W", "full_waits", "empty_waits", "busy", "marks")
_BYTES = {"line_flags", "r_free"}
_SCALARS = {"P", "C", "nports", "nvals", "nslots", "max_cycles", "W"}

_lib: Optional[ctypes.CDLL] = None
_failed: Optional[str] = None


def _library() -> Optional[ctypes.CDLL]:
    global _lib, _failed
    if _lib is None and _failed is None:
        source = resources.files("hls.dpn").joinpath("cycle_model.c").read_text()
        try:
            path, _ = compile_shared_object(source, FLAGS, default_cache_dir())
            lib = ctypes.CDLL(path)
        except (OSError, RuntimeError) as exc:
            _failed = str(exc)
            warnings.warn(f"the native cycle model could not be built, the Python one runs instead: {exc}")
            return None
        fn = lib.dpn_cycle_model
        fn.restype = ctypes.c_int64
        fn.argtypes = [ctypes.c_int64 if a in _SCALARS else _U8 if a in _BYTES else _I64 for a in _ARGS]
        _lib = lib
    return _lib


def available() -> bool:
    """Whether the C model can run here (built on first use)."""
    return _library() is not None


@dataclass
class Result:
    cycles: Optional[int]  # None: no progress, or past max_cycles
    full_waits: list[int]  # per channel, in the plan's order
    empty_waits: list[int]
    busy: list[int]  # per process: iterations issued
    marks: list[tuple[int, ...]]  # per process: issue cycles at its checkpoints (`timing.Timing.issued`)


def run(plan, cap: Sequence[int], delay: Sequence[int], latency: Sequence[int], max_cycles: int,
        windows: int) -> Result:
    """One run of the model on `plan` (a `timing.Plan`) with channel capacities `cap` (words, a
    FIFO's input register included), `delay` (`timing.input_delay`) and process latencies; `windows`:
    `timing.ISSUE_WINDOWS`."""
    lib = _library()
    if lib is None:
        raise RuntimeError(f"the native cycle model is not available: {_failed}")
    if plan.packed is None:  # every trial of `deepen` runs one plan
        plan.packed = _packed(plan)
    P, C = len(plan.steps), len(plan.chans)
    a = dict(plan.packed, max_cycles=max_cycles, W=windows, lat=np.asarray(latency, dtype=np.int64),
             cap=np.asarray(cap, dtype=np.int64), delay=np.asarray(delay, dtype=np.int64),
             full_waits=np.zeros(C, np.int64), empty_waits=np.zeros(C, np.int64), busy=np.zeros(P, np.int64),
             marks=np.zeros(P * (windows + 1), np.int64))
    args = [int(a[name]) if name in _SCALARS else a[name].ctypes.data_as(_U8 if name in _BYTES else _I64)
            for name in _ARGS]
    cycles = lib.dpn_cycle_model(*args)
    marks = a["marks"].reshape(P, windows + 1)
    return Result(None if cycles < 0 else int(cycles), a["full_waits"].tolist(), a["empty_waits"].tolist(),
                  a["busy"].tolist(), [tuple(m) for m in marks.tolist()])


def _packed(plan) -> dict:
    """The plan's arrays in `dpn_cycle_model`'s layout (cycle_model.c's header), contiguous."""
    steps, chans = plan.steps, plan.chans
    P, C = len(steps), len(chans)
    a: dict[str, object] = {"P": P, "C": C}
    a["n"] = np.array([s[1].offsets.shape[0] - 1 for s in steps], dtype=np.int64)
    a["njoins"] = np.array([len(s[4]) for s in steps], dtype=np.int64)
    a["join_base"] = _starts(a["njoins"])
    a["joins"] = np.array([j for s in steps for j in s[4]], dtype=np.int64)
    reads, writes, group_base, offs = [], [], [], []
    proc_group, proc_wgroup = [], []
    pos = r_at = w_at = 0
    for _p, at_issue, late, wrote, _joins in steps:
        proc_group.append(len(group_base))
        for rows in [at_issue, *late]:
            group_base.append(pos)
            offs.append(rows.offsets + r_at)
            pos += rows.offsets.shape[0]
            r_at += rows.columns[0].shape[0]
            reads.append(rows.columns)
        proc_wgroup.append(len(group_base))
        group_base.append(pos)
        offs.append(wrote.offsets + w_at)
        pos += wrote.offsets.shape[0]
        w_at += wrote.columns[0].shape[0]
        writes.append(wrote.columns)
    a["proc_group"] = np.array(proc_group, dtype=np.int64)
    a["proc_wgroup"] = np.array(proc_wgroup, dtype=np.int64)
    a["group_base"] = np.array(group_base, dtype=np.int64)
    a["offs"] = _cat(offs, np.int64)
    for f, name in enumerate(("r_ci", "r_v", "r_free", "r_slot")):
        a[name] = _cat([cols[f] for cols in reads], np.uint8 if name == "r_free" else np.int64)
    for f, name in enumerate(("w_ci", "w_v", "w_slot")):
        a[name] = _cat([cols[f] for cols in writes], np.int64)
    a["buffered"] = np.array([c.kind == ChannelKind.BUFFER for c in chans], dtype=np.int64)
    values = np.asarray(plan.values, dtype=np.int64)
    a["val_base"] = _starts(values)
    a["nvals"] = int(values.sum())
    slots = np.zeros(C, dtype=np.int64)  # per buffer: its highest slot + 1
    if a["w_ci"].shape[0]:
        np.maximum.at(slots, a["w_ci"], a["w_slot"] + 1)
    slots *= a["buffered"]
    a["slot_base"] = _starts(slots)
    a["nslots"] = int(slots.sum())
    lines = plan.lines or [None] * P
    a["line_port"] = np.array([-1 if ln is None else ln[0] for ln in lines], dtype=np.int64)
    a["line_rank"] = np.array([0 if ln is None else ln[1] for ln in lines], dtype=np.int64)
    flags = [np.asarray(ln[2], dtype=np.uint8) if ln is not None else np.zeros(0, np.uint8) for ln in lines]
    a["line_base"] = _starts(np.array([f.shape[0] for f in flags], dtype=np.int64))
    a["line_flags"] = _cat(flags, np.uint8)
    a["nports"] = 1 + max((ln[0] for ln in lines if ln is not None), default=-1)
    return {k: v if k in _SCALARS else np.ascontiguousarray(v, dtype=np.uint8 if k in _BYTES else np.int64)
            for k, v in a.items()}


def _starts(counts: np.ndarray) -> np.ndarray:
    """Where each of consecutive runs of `counts` entries starts."""
    out = np.zeros(counts.shape[0], dtype=np.int64)
    np.cumsum(counts[:-1], out=out[1:])
    return out


def _cat(parts: list, dtype) -> np.ndarray:
    return np.concatenate([np.asarray(p, dtype=dtype) for p in parts]) if parts else np.zeros(0, dtype)
