"""Run a generated design under Verilator/cocotb (or Icarus Verilog/cocotb) on given inputs and read
back every array.

The memories are preloaded from hex files and dumped to hex files by the Verilog memory models;
the build is cached by content (sim.rtl_runner), so repeated runs of one design only simulate.

When the watchdog stops a run that no longer makes progress, the testbench reads the top's
`dbg_status` vector (layout in `RtlDesign.interface["debug"]`) and a few optional probes inside the
process instances; `deadlock_report` turns them into a report in the style of the DPN simulator's:
every blocked process, what it waits for, and every channel's fill level.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Optional

import numpy as np

from hls.rtl.generate import RtlDesign

from .rtl_runner import build_icarus, build_verilator, run_cocotb

TEST_MODULE = "sim.cocotb_top"
SIMULATORS = ("verilator", "icarus")


@dataclass
class RtlRun:
    completed: bool
    cycles: int
    outputs: dict[str, np.ndarray]
    problem: Optional[str] = None
    seconds_build: float = 0.0
    seconds_sim: float = 0.0
    log: str = ""
    unfinished: list[str] = field(default_factory=list)
    deadlock: Optional[str] = None  # the deadlock report (also the `problem`), when the watchdog fired
    simulator: str = "verilator"


def write_design(design: RtlDesign, outdir: Path) -> tuple[list[Path], list[Path]]:
    """Write `rtl/*.v` and `tb/*.v` under `outdir`; returns (design files, testbench files)."""
    rtl, tb = outdir / "rtl", outdir / "tb"
    rtl.mkdir(parents=True, exist_ok=True)
    tb.mkdir(parents=True, exist_ok=True)
    rtl_files, tb_files = [], []
    for name, text in sorted(design.rtl.items()):
        (rtl / name).write_text(text)
        rtl_files.append(rtl / name)
    for name, text in sorted(design.tb.items()):
        (tb / name).write_text(text)
        tb_files.append(tb / name)
    return rtl_files, tb_files


def to_hex(values: np.ndarray, width: int) -> str:
    bits = np.ascontiguousarray(values).reshape(-1).view(np.dtype(f"u{values.dtype.itemsize}"))
    digits = (width + 3) // 4
    return "".join(f"{int(b):0{digits}x}\n" for b in bits)


def from_hex(text: str, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    """Words of a `$writememh` dump; `//` comments (Icarus writes `// 0x00000010` address marks) are
    skipped and a word with unknown (x/z) digits reads as 0."""
    tokens = [w for line in text.splitlines() for w in line.split("//", 1)[0].split()]
    words = [int(w, 16) if not any(ch in w.lower() for ch in "xz?") else 0 for w in tokens]
    raw = np.array(words, dtype=np.dtype(f"u{dtype.itemsize}"))
    return raw.view(dtype).reshape(shape)


def scalar_bits(value: object, type_name: str) -> int:
    from hls.poly.types import BY_NAME

    t = BY_NAME[type_name]
    arr = np.array([value], dtype=t.dtype)
    return int(arr.view(np.dtype(f"u{t.dtype.itemsize}"))[0])


def run_rtl(design: RtlDesign, inputs: Mapping[str, object], workdir: Path, *, stall: float = 0.0, seed: int = 0,
            latency: int = 4, interval: int = 1, write_latency: Optional[int] = None,
            cache_root: Optional[Path] = None,
            max_cycles: Optional[int] = None, simulator: str = "verilator",
            quiet_limit: Optional[int] = None, progress: bool = False, trace: Optional[str] = None) -> RtlRun:
    """Simulate `design` on `inputs`; `simulator` is "verilator" or "icarus" (needs `iverilog`, else
    `hls.toolchain.ToolchainError`).  `quiet_limit` is the watchdog: cycles without any handshake
    after which the run is stopped as a deadlock (default 5000 + 20 * latency * interval).  `progress`:
    show a spinner on stderr while an uncached model builds (`dpn-synth sim`; off for library callers,
    whose parallel workers would draw over each other).  `trace` ("fst" or "vcd"): build a traced model;
    the waveform is `workdir/run/dump.<trace>`.  `latency` and `interval` configure every memory model;
    `write_latency`, if given, the latency of write responses alone (docs/rtl-interface.md)."""
    if simulator not in SIMULATORS:
        raise ValueError(f"unknown simulator {simulator!r} (expected one of {', '.join(SIMULATORS)})")
    workdir = Path(workdir)
    rtl_files, tb_files = write_design(design, workdir)
    t0 = time.perf_counter()
    build_fn = build_verilator if simulator == "verilator" else build_icarus
    build = build_fn([*rtl_files, *tb_files], design.tb_top, cache_root=cache_root, progress=progress, trace=trace)
    t1 = time.perf_counter()
    run_dir = workdir / "run"
    run_dir.mkdir(parents=True, exist_ok=True)
    plusargs = [f"+stall={int(round(stall * 1000))}", f"+seed={seed + 1}"]
    words = 0
    for m in design.interface["arrays"]:
        init = run_dir / f"{m['name']}.init.hex"
        init.write_text(to_hex(np.asarray(inputs[m["name"]]), m["width"]))
        plusargs += [f"+{m['name']}_init={init}", f"+{m['name']}_dump={run_dir / (m['name'] + '.dump.hex')}",
                     f"+{m['name']}_latency={latency}", f"+{m['name']}_interval={interval}"]
        if write_latency is not None:
            plusargs.append(f"+{m['name']}_write_latency={write_latency}")
        words += m["words"]
    cfg = {
        "scalars": {s["port"]: scalar_bits(inputs[s["name"]], s["type"]) for s in design.interface["scalars"]},
        "processes": design.interface["processes"],
        "quiet_limit": quiet_limit or 5000 + 20 * max(latency, write_latency or 0) * interval,
        "max_cycles": max_cycles or 10_000_000,
        "result_file": str(run_dir / "result.json"),
    }
    debug = design.interface.get("debug")
    if debug:
        cfg["debug_signal"] = f"u_top.{debug['signal']}"
        cfg["debug_probes"] = [f"u_top.{p}" for p in _probe_paths(debug)]
    (run_dir / "config.json").write_text(json.dumps(cfg, indent=1))
    res = run_cocotb(build, TEST_MODULE, test_dir=run_dir, plusargs=plusargs,
                     extra_env={"DPN_TB_CONFIG": str(run_dir / "config.json")})
    t2 = time.perf_counter()
    result_file = run_dir / "result.json"
    if not result_file.exists():
        return RtlRun(False, 0, {}, f"simulation failed: {res.summary()}", t1 - t0, t2 - t1, res.output_tail,
                      simulator=simulator)
    out = json.loads(result_file.read_text())
    outputs = {}
    for m in design.interface["arrays"]:
        dump = run_dir / f"{m['name']}.dump.hex"
        dtype = np.asarray(inputs[m["name"]]).dtype
        outputs[m["name"]] = from_hex(dump.read_text(), dtype, tuple(m["shape"]))
    problem = deadlock = None
    if out["deadlock"]:
        if debug and out.get("debug", {}).get("status"):
            deadlock = deadlock_report(debug, out["debug"], cycles=out["cycles"],
                                       quiet_cycles=out.get("quiet_cycles"))
        else:
            deadlock = "deadlock: no handshake for a long time; unfinished processes: " + ", ".join(out["unfinished"])
        problem = deadlock
    elif out["timeout"]:
        problem = f"timeout after {out['cycles']} cycles; unfinished processes: {', '.join(out['unfinished'])}"
        if debug and out.get("debug", {}).get("status"):  # where each process stood when it was stopped
            state = deadlock_report(debug, out["debug"]).splitlines()[1:]
            problem += "\n" + "\n".join(["  at the timeout:", *state])
    return RtlRun(out["done"], out["cycles"], outputs, problem, t1 - t0, t2 - t1, res.output_tail, out["unfinished"],
                  deadlock, simulator)


# --------------------------------------------------------------------------------------------------
# deadlock report


def _probe_paths(debug: dict) -> list[str]:
    """Optional probes inside process instances: input selects and iteration registers."""
    paths = [c["probes"]["sel"] for c in debug["channels"] if c.get("probes", {}).get("sel")]
    for p in debug["processes"]:
        paths += p.get("probes", {}).get("iteration", [])
    return paths


def _field(bits: str, f: list[int]) -> Optional[int]:
    """Unsigned value of field [lsb, width] of a binary string (MSB first); None if it has x/z bits."""
    lsb, width = f
    hi = len(bits) - lsb
    chunk = bits[hi - width:hi]
    if len(chunk) != width or any(ch not in "01" for ch in chunk):
        return None
    return int(chunk, 2)


def _probe_int(raw: Optional[str], signed: bool = False) -> Optional[int]:
    if raw is None or not raw or any(ch not in "01" for ch in raw):
        return None
    v = int(raw, 2)
    if signed and raw[0] == "1":
        v -= 1 << len(raw)
    return v


def deadlock_report(debug: dict, state: dict, *, cycles: Optional[int] = None,
                    quiet_cycles: Optional[int] = None) -> str:
    """A deadlock report in the DPN simulator's style from the debug status read at the deadlock.

    `debug` is `RtlDesign.interface["debug"]`; `state` holds `status` (the `dbg_status` bits, MSB
    first) and `probes` (path below the testbench top -> bits, or None when the simulator could not
    read it).  A process is blocked on an output channel when it offers a word the channel refuses
    (valid && !ready: a full FIFO, a buffer slot still full); else on memory (a request the memory
    does not accept, a read or write response not back yet); else on the input channel its current
    iteration selects and that has nothing for it.  Without the select probe, every empty input is named.
    """
    bits = state["status"]
    probes = state.get("probes", {})

    def get(entry: dict, name: str) -> Optional[int]:
        return _field(bits, entry["fields"][name]) if name in entry["fields"] else None

    def fill(c: dict) -> str:
        """Words counted / the most the count reaches: a FIFO counts its input register's word too
        (hw_templates/fifo.v.j2), a buffer its full slots."""
        n = get(c, "count")
        cap = c["depth"] + (0 if c["kind"] == "buffer" else 1)
        return f"{'?' if n is None else n}/{cap}"

    iteration: dict[str, str] = {}  # every wait of a process names where it stands
    for p in debug["processes"]:
        dims = [_probe_int(probes.get(f"u_top.{d}"), signed=True) for d in p.get("probes", {}).get("iteration", [])]
        if dims and all(d is not None for d in dims):
            iteration[p["name"]] = f"at iteration {dims} "
    waits: dict[str, list[str]] = {p["name"]: [] for p in debug["processes"]}

    def wait(process: str, what: str) -> None:
        waits[process].append(f"{iteration.get(process, '')}{what}")

    unfinished = [p for p in debug["processes"] if get(p, "finished") != 1]
    blocked_out: set[str] = set()
    for c in debug["channels"]:  # a producer offering a word its channel refuses
        if get(c, "w_valid") == 1 and get(c, "w_ready") == 0:
            if c["kind"] == "buffer":
                why = f"slot {get(c, 'w_addr')} still holds a value ({fill(c)} slots full)"
            else:
                why = f"full ({fill(c)})"
            wait(c["producer"], f"waits to write channel {c['name']}: {why}")
            blocked_out.add(c["producer"])
    for m in debug.get("memories", []):
        for u in m["units"]:
            if u["process"] in blocked_out:
                continue
            what = "read" if u["kind"] == "load" else "write"
            if get(u, "req_valid") == 1 and get(u, "req_ready") == 0:
                wait(u["process"], f"waits for memory {m['name']}: {what} request not accepted")
            if get(u, "rsp_ready") == 1 and get(u, "rsp_valid") == 0:
                wait(u["process"], f"waits for memory {m['name']}: {what} response not back")
    for c in debug["channels"]:  # a consumer whose current iteration needs a value that is not there
        q = c["consumer"]
        if q in blocked_out or get(c, "r_valid") != 0:
            continue
        sel = _probe_int(probes.get(f"u_top.{c['probes']['sel']}")) if c.get("probes", {}).get("sel") else None
        if sel == 0:
            continue
        if c["kind"] == "buffer":
            why = f"slot {get(c, 'r_addr')} is empty ({fill(c)} slots full)"
        elif c["kind"] == "fifo_mult" and get(c, "r_first") == 0:
            why = f"no value popped yet ({fill(c)})"
        else:
            why = f"empty ({fill(c)})"
        maybe = " (if its iteration reads it)" if sel is None else ""
        wait(q, f"waits to read channel {c['name']}{maybe}: {why}")
    head = "deadlock: no process can make progress"
    if quiet_cycles is not None and cycles is not None:
        head += f" (RTL: no handshake for {quiet_cycles} cycles, stopped at cycle {cycles})"
    lines = [head]
    for p in unfinished:
        for w in waits[p["name"]] or ["is unfinished but waits on no channel or memory port (internal state)"]:
            lines.append(f"  {p['name']} {w}")
    lines.append("  channel fill levels: " + ", ".join(f"{c['name']} {fill(c)}" for c in debug["channels"]))
    return "\n".join(lines)
