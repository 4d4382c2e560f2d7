"""Run a generated design under Verilator/cocotb on given inputs and read back every array.

The memories are preloaded from hex files and dumped to hex files by the Verilog memory models;
the build is cached by content (sim.rtl_runner), so repeated runs of one design only simulate.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Optional

import numpy as np

from hls.rtl.generate import RtlDesign

from .rtl_runner import build_verilator, run_cocotb

TEST_MODULE = "sim.cocotb_top"


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
    words = [int(w, 16) if "x" not in w.lower() else 0 for w in text.split() if not w.startswith("//")]
    raw = np.array(words, dtype=np.dtype(f"u{dtype.itemsize}"))
    return raw.view(dtype).reshape(shape)


def scalar_bits(value: object, type_name: str) -> int:
    from hls.poly.types import BY_NAME

    t = BY_NAME[type_name]
    arr = np.array([value], dtype=t.dtype)
    return int(arr.view(np.dtype(f"u{t.dtype.itemsize}"))[0])


def run_rtl(design: RtlDesign, inputs: Mapping[str, object], workdir: Path, *, stall: float = 0.0, seed: int = 0,
            latency: int = 4, interval: int = 1, cache_root: Optional[Path] = None,
            max_cycles: Optional[int] = None) -> RtlRun:
    workdir = Path(workdir)
    rtl_files, tb_files = write_design(design, workdir)
    sim_dir = Path(__file__).resolve().parent
    t0 = time.perf_counter()
    build = build_verilator([*rtl_files, *tb_files], design.tb_top, cache_root=cache_root)
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
        words += m["words"]
    cfg = {
        "scalars": {s["port"]: scalar_bits(inputs[s["name"]], s["type"]) for s in design.interface["scalars"]},
        "processes": design.interface["processes"],
        "idle_limit": 5000 + 20 * latency * interval,
        "max_cycles": max_cycles or 10_000_000,
        "result_file": str(run_dir / "result.json"),
    }
    (run_dir / "config.json").write_text(json.dumps(cfg, indent=1))
    res = run_cocotb(build, TEST_MODULE, test_dir=run_dir, plusargs=plusargs,
                     extra_env={"DPN_TB_CONFIG": str(run_dir / "config.json")})
    t2 = time.perf_counter()
    result_file = run_dir / "result.json"
    if not result_file.exists():
        return RtlRun(False, 0, {}, f"simulation failed: {res.summary()}", t1 - t0, t2 - t1, res.output_tail)
    out = json.loads(result_file.read_text())
    outputs = {}
    for m in design.interface["arrays"]:
        dump = run_dir / f"{m['name']}.dump.hex"
        dtype = np.asarray(inputs[m["name"]]).dtype
        outputs[m["name"]] = from_hex(dump.read_text(), dtype, tuple(m["shape"]))
    problem = None
    if out["deadlock"]:
        problem = ("deadlock: no handshake for a long time; unfinished processes: " + ", ".join(out["unfinished"]))
    elif out["timeout"]:
        problem = f"timeout after {out['cycles']} cycles; unfinished processes: {', '.join(out['unfinished'])}"
    return RtlRun(out["done"], out["cycles"], outputs, problem, t1 - t0, t2 - t1, res.output_tail, out["unfinished"])
