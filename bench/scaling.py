"""Compile-scaling benchmark (issue 18: the compiler's cost must not grow with the problem).

Run: `python -m bench.scaling [--kernels a,b] [--levels 0,1,2,3] [--configs auto,p8] [--timeout S]
[--out NAME] [--plot] [--src DIR]`.  Writes bench/results/NAME.{csv,json,md} (default NAME: `scaling`)
and with --plot NAME.png (for the default NAME `scaling-compile.png`: `scaling.png` is the suite's
--parallel plot, bench/suite.py).

Every example kernel (examples/*.c of the measured source tree) is compiled at levels k = 0..3, a size
with about 4^k times the statement instances of the file's own size: own size, x4, x16, x64.

Size knobs.  A kernel's size knobs are its `// dpn-synth-args: --param n=16` parameters
(tests/kernels.py `example_params`) and its overridable integer macros (`#ifndef NI` / `#define NI 16`,
passed as `-DNI=V`) that appear in a `for` header inside the scop, so a shift amount (`SHIFT`) or an
unguarded `#define` stays as it is.  A kernel without a knob is measured at level 0 only.

Scale factor.  Level k multiplies every knob by f = 4^(k/d), rounded to a multiple of the largest of
1, 2, 4 and 8 that divides the knob's own value and is at most a quarter of it (never below it), so
that a small knob (4 time steps) still grows level by level, and a kernel whose sizes must
stay even or a multiple of 4 (a decimation by 4, a loop that steps by 2 and writes `d[i / 2]`) is
not refused at a scaled size; where d is the kernel's measured growth degree: the statement instances at the own size and with every
knob doubled are counted (`dpn-synth analyze --json`, domains counted with isl) and
d = log2(instances(2x) / instances(1x)), at least 1.  d is the depth of the loop nests the knobs bound
(3 for gemm and for a triangular cholesky, 2 for conv2d, whose 3x3 loops are constant, or for
tiled-transpose, whose tile loops step by a knob); measuring it rather than reading it off the text
takes boundary terms (`H - 2`), constant loops and steps into account.  If the probe fails,
d = the number of knobs.  The table shows the instances the compiler reports
(`report.json` `summary.statement_instances`), not the intended 4^k times.

Measurement.  Each compile runs in its own subprocess,
`python -c "from hls.cli import main; ..." compile examples/K.c --tile auto [--parallel 8] ARGS -o TMP`
with cwd and PYTHONPATH = --src (default: this repository; the `dpn-synth` console script would import
the editable install instead), in its own process group.  CPU seconds are user + sys of the child
(`os.wait4`, so they include Python start-up, `startup_cpu_s` in the meta), peak memory its ru_maxrss.
The measured tree is compiled to bytecode first and the children may use it (`warm_bytecode`,
PYTHONDONTWRITEBYTECODE dropped), as an installed package runs.
--timeout counts CPU seconds by default (`--timeout-clock cpu`: the machine is shared, and a wall-clock
limit would cut a compile at a different amount of work depending on the load), with a wall-clock
backstop (--wall-timeout, default 5 x --timeout); a compile over the limit has its process group killed
and is reported as `> T s`; the larger levels of that kernel and configuration are then not run
(`not run`) unless --keep-going.  A compile whose resident set passes --mem-limit (default 8000 MB) is
killed the same way (an `error` row).  Exit status 2 (the compiler refuses the size: UsageError /
CompileError) is `refused` with the message; any other failure `error`.

Large rows: examples/gemm.c at -DNI=1000 -DNJ=1100 -DNK=1200 and -DNI=2000 -DNJ=2300 -DNK=2600 per
configuration (when gemm is measured; --no-large to leave them out), level `large`.

The summary gives, per configuration and level, the median and maximum CPU seconds and peak MB, and per
kernel the ratio of the largest measured level to level 0 (CPU, instances) with the log-log slope
log(CPU ratio) / log(instance ratio): 0 is a compile cost independent of the problem size, 1 is linear.
"""

from __future__ import annotations

import argparse
import csv
import datetime as _dt
import json
import math
import os
import platform
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional, Sequence

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
DEFAULT_LEVELS = (0, 1, 2, 3)
DEFAULT_CONFIGS = ("auto",)
DEFAULT_TIMEOUT = 120.0
LARGE_GEMM = ({"NI": 1000, "NJ": 1100, "NK": 1200}, {"NI": 2000, "NJ": 2300, "NK": 2600})
CHILD = "import sys; from hls.cli import main; sys.exit(main())"

FIELDS = (
    "kernel", "config", "level", "d", "scale", "size", "args", "status", "instances", "intended_instances",
    "cpu_s", "user_s", "sys_s", "wall_s", "peak_mb", "exit", "processes", "compute_processes", "channels",
    "channel_words", "estimated_cycles", "tiling", "note",
)


# --------------------------------------------------------------------------------------------------
# size knobs


def _example_params(path: Path) -> dict[str, int]:
    from tests.kernels import example_params  # the suite's own rule, like bench/suite.py

    return example_params(path)


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", lambda m: " " * len(m.group(0)), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def _for_headers(code: str) -> list[str]:
    """The parenthesised headers of the `for` loops in `code` (comment-free C)."""
    out = []
    for m in re.finditer(r"\bfor\s*\(", code):
        depth, k = 1, m.end()
        while k < len(code) and depth:
            depth += {"(": 1, ")": -1}.get(code[k], 0)
            k += 1
        out.append(code[m.end():k - 1])
    return out


def size_knobs(path: Path) -> dict:
    """{'params': {n: v}, 'macros': {N: v}, 'scaled': [names in loop bounds], 'fixed': [other knobs]}."""
    text = path.read_text()
    params = _example_params(path)
    code = _strip_comments(text)
    macros = {name: int(v) for name, v in re.findall(
        r"^[ \t]*#[ \t]*ifndef[ \t]+(\w+)[ \t]*\n[ \t]*#[ \t]*define[ \t]+\1[ \t]+\(?[ \t]*(\d+)[ \t]*\)?[ \t]*$",
        code, flags=re.M)}
    m = re.search(r"#\s*pragma\s+scop(.*?)#\s*pragma\s+endscop", code, flags=re.S)
    region = m.group(1) if m else code
    idents = {w for h in _for_headers(region) for w in re.findall(r"[A-Za-z_]\w*", h)}
    # a macro derived from a knob (`#define N (4 * (K) + 1)`) scales the knob when it bounds a loop
    for name, body in re.findall(r"^[ \t]*#[ \t]*define[ \t]+(\w+)[ \t]+(.+)$", code, flags=re.M):
        if name in idents:
            idents |= set(re.findall(r"[A-Za-z_]\w*", body))
    names = list(params) + [n for n in macros if n not in params]
    return {"params": params, "macros": macros,
            "scaled": [n for n in names if n in idents], "fixed": [n for n in names if n not in idents]}


def knob_values(knobs: dict, f: float) -> dict[str, int]:
    vals = {**knobs["macros"], **knobs["params"]}
    return {n: (_scaled(v, f) if n in knobs["scaled"] else v) for n, v in vals.items()}


def _scaled(v: int, f: float) -> int:
    """v x f, rounded to a multiple of v's own factor among 1, 2, 4 and 8 that is at most v / 4 (never
    below that factor)."""
    step = next((s for s in (8, 4, 2) if v % s == 0 and 4 * s <= v), 1)
    return max(step, step * round(v * f / step))


def knob_args(knobs: dict, vals: dict[str, int]) -> list[str]:
    """--param for every parameter; -D only for macros that differ from the file's default."""
    out = []
    for n in knobs["params"]:
        out += ["--param", f"{n}={vals[n]}"]
    for n, v in knobs["macros"].items():
        if n not in knobs["params"] and vals[n] != v:
            out.append(f"-D{n}={vals[n]}")
    return out


def size_text(knobs: dict, vals: dict[str, int]) -> str:
    return " ".join(f"{n}={vals[n]}" for n in knobs["scaled"]) or "(fixed)"


# --------------------------------------------------------------------------------------------------
# child processes


def child_env(src: Path) -> dict:
    """The children run the compiler as an installed package does, from compiled bytecode
    (`warm_bytecode`): a machine that sets PYTHONDONTWRITEBYTECODE would otherwise have every compile
    parse the compiler's sources again, 1.5 s of gemm's 5 s at its own size (every figure before
    session 23 includes it)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(src)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def warm_bytecode(src: Path) -> bool:
    """Compile the measured tree's packages to bytecode once, before any row is timed."""
    import compileall

    return all(compileall.compile_dir(str(src / pkg), quiet=1) for pkg in ("hls", "hw_templates")
               if (src / pkg).is_dir())


def _proc_cpu(pid: int) -> Optional[float]:
    """CPU seconds of a running process (itself + its waited-for children), from /proc."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    rest = stat[stat.rfind(")") + 2:].split()
    return sum(int(x) for x in rest[11:15]) / os.sysconf("SC_CLK_TCK")


def _proc_rss_mb(pid: int) -> Optional[float]:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    except (OSError, ValueError, IndexError):
        pass
    return None


def run_measured(argv: list[str], cwd: Path, env: dict, timeout: float, clock: str, wall_timeout: float,
                 logdir: Path, mem_limit_mb: Optional[float] = None) -> dict:
    """Run argv in a new process group; CPU (user+sys), peak RSS and wall time of it, from os.wait4.
    Killed (with its group) past `timeout` (CPU or wall seconds, `clock`), past `wall_timeout` wall
    seconds, or when its resident set exceeds `mem_limit_mb`."""
    out_p, err_p = logdir / "stdout.txt", logdir / "stderr.txt"
    t0 = time.perf_counter()
    with open(out_p, "w") as so, open(err_p, "w") as se:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=so, stderr=se, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    timed_out = mem_out = False
    try:
        while True:
            pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            wall = time.perf_counter() - t0
            cpu = _proc_cpu(proc.pid) if clock == "cpu" else None
            rss = _proc_rss_mb(proc.pid) if mem_limit_mb else None
            mem_out = rss is not None and rss > mem_limit_mb
            timed_out = (wall > wall_timeout or (clock == "wall" and wall > timeout)
                         or (cpu is not None and cpu > timeout))
            if timed_out or mem_out:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                pid, status, ru = os.wait4(proc.pid, 0)
                break
            time.sleep(0.05)
    except BaseException:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
            os.wait4(proc.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        raise
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return {"exit": proc.returncode, "timed_out": timed_out and not mem_out, "mem_out": mem_out,
            "user_s": ru.ru_utime, "sys_s": ru.ru_stime, "cpu_s": ru.ru_utime + ru.ru_stime,
            "peak_mb": ru.ru_maxrss / 1024.0, "wall_s": wall,
            "stdout": out_p.read_text(errors="replace"), "stderr": err_p.read_text(errors="replace")}


def _message(stderr: str, n: int = 400) -> str:
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    if not lines:
        return ""
    errs = [ln for ln in lines if re.match(r"(dpn-synth: )?(error|\w+Error)\b", ln) or "error:" in ln]
    msg = errs[-1] if errs else lines[-1]
    return msg[:n]


def islpy_build() -> str:
    """"barvinok" or "plain": the barvinok build's isl took 1.9x the time of plain islpy's on the same
    operations, and heat-3d's compile at level 3 45 s against 25 s, so a table says which it ran."""
    import islpy as isl

    return "barvinok" if hasattr(isl.Set, "card") else "plain"


def startup_cpu(src: Path) -> Optional[float]:
    """CPU seconds of a child that only imports the compiler (the floor of every row's CPU)."""
    with tempfile.TemporaryDirectory(prefix="dpn-scaling-") as tmp:
        r = run_measured([sys.executable, "-c", "import hls.cli, hls.pipeline"], src, child_env(src), 60, "wall", 60,
                         Path(tmp))
    return round(r["cpu_s"], 3) if r["exit"] == 0 else None


def count_instances(analysis: dict) -> int:
    """Statement instances of an `analyze --json` model (domains counted by isl)."""
    import islpy as isl

    ctx = isl.Set(analysis["context"]) if analysis.get("context") else None
    total = 0
    for s in analysis["statements"]:
        dom = isl.Set(s["domain"])
        if ctx is not None:
            dom = dom.intersect_params(ctx.align_params(dom.get_space()))
        total += dom.count_val().to_python()
    return int(total)


def analyze_instances(src: Path, kernel: Path, args: list[str], timeout: float = 120.0) -> tuple[Optional[int], str]:
    with tempfile.TemporaryDirectory(prefix="dpn-scaling-") as tmp:
        r = run_measured([sys.executable, "-c", CHILD, "analyze", _path_in(kernel, src), *args, "--json"],
                         src, child_env(src), timeout, "cpu", 5 * timeout, Path(tmp))
    if r["exit"] != 0:
        return None, _message(r["stderr"]) or f"analyze exit {r['exit']}"
    try:
        return count_instances(json.loads(r["stdout"])), ""
    except Exception as e:  # noqa: BLE001 - the probe is optional
        return None, f"counting instances: {e}"


def growth_degree(src: Path, kernel: Path, knobs: dict) -> tuple[float, Optional[int], str]:
    """(d, instances at the own size, note): d = log2(instances with every knob doubled / own)."""
    base, why = analyze_instances(src, kernel, knob_args(knobs, knob_values(knobs, 1.0)))
    if base:
        dbl, why = analyze_instances(src, kernel, knob_args(knobs, knob_values(knobs, 2.0)))
        if dbl:
            return max(1.0, math.log2(dbl / base)), base, ""
    d = float(max(1, len(knobs["scaled"])))
    return d, base, f"growth probe failed ({why}); d = number of knobs"


# --------------------------------------------------------------------------------------------------
# one compile


def config_args(name: str) -> list[str]:
    if name == "auto":
        return ["--tile", "auto"]
    if name == "none":
        return ["--tile", "none"]
    m = re.fullmatch(r"p([1-9][0-9]*)", name)
    if m:
        return ["--tile", "auto", "--parallel", m.group(1)]
    raise ValueError(f"unknown configuration `{name}` (expected auto, none or pN, e.g. p8)")


def _path_in(kernel: Path, src: Path) -> str:
    """The kernel's path for a child running in `src` (`--kernel-dir` may lie outside it)."""
    return str(kernel.relative_to(src) if kernel.is_relative_to(src) else kernel)


def compile_row(src: Path, kernel: Path, config: str, args: list[str], opts) -> dict:
    """The row of one compile; with `--repeat K`, of the fastest of up to K compiles that succeed.  This
    machine's CPU seconds for one compile vary by up to 30% from run to run (gemm 1000x1100x1200 at
    `--parallel 8`: 10.0 to 11.7 s in three runs); the least is the one closest to the work done."""
    best = _compile_once(src, kernel, config, args, opts)
    for _ in range(opts.repeat - 1):
        if best["status"] != "ok":
            break
        again = _compile_once(src, kernel, config, args, opts)
        if again["status"] == "ok" and again["cpu_s"] < best["cpu_s"]:
            best = again
    return best


def _compile_once(src: Path, kernel: Path, config: str, args: list[str], opts) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="dpn-scaling-"))
    try:
        outdir = tmp / "out"
        argv = [sys.executable, "-c", CHILD, "compile", _path_in(kernel, src), *config_args(config), *args,
                "-q", "-o", str(outdir)]
        r = run_measured(argv, src, child_env(src), opts.timeout, opts.timeout_clock, opts.wall_timeout, tmp,
                         opts.mem_limit)
        row = {k: r[k] for k in ("exit", "user_s", "sys_s", "cpu_s", "peak_mb", "wall_s")}
        if r["mem_out"]:
            row.update(status="error", note=f"killed: resident memory over {opts.mem_limit:g} MB after "
                                            f"{r['cpu_s']:.1f} s CPU")
        elif r["timed_out"]:
            clock = "CPU" if opts.timeout_clock == "cpu" else "wall"
            row.update(status="timeout", note=f"> {opts.timeout:g} s {clock}: process group killed "
                                              f"after {r['cpu_s']:.1f} s CPU, {r['wall_s']:.1f} s wall")
        elif r["exit"] == 0 and (outdir / "report.json").exists():
            rep = json.loads((outdir / "report.json").read_text())
            s = rep.get("summary", {})
            inst = s.get("statement_instances")
            if inst is None:  # an older report: the compute processes' iterations
                inst = sum(p.get("iterations", 0) for p in rep.get("processes", []) if p.get("kind") == "compute")
            row.update(status="ok", instances=inst, processes=s.get("processes"),
                       compute_processes=s.get("compute_processes"), channels=s.get("channels"),
                       channel_words=s.get("channel_words"), estimated_cycles=s.get("estimated_cycles"),
                       tiling=(rep.get("tiling") or {}).get("sizes"), note="")
            if isinstance(row["tiling"], list):
                row["tiling"] = "x".join(map(str, row["tiling"]))
        elif r["exit"] == 2:
            row.update(status="refused", note=_message(r["stderr"]) or "exit 2")
        else:
            row.update(status="error", note=_message(r["stderr"]) or f"exit {r['exit']}")
        for k in ("user_s", "sys_s", "cpu_s", "wall_s"):
            row[k] = round(row[k], 3)
        row["peak_mb"] = round(row["peak_mb"], 1)
        return row
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# --------------------------------------------------------------------------------------------------
# summary, markdown, plot


def _fmt(v, digits: int = 2) -> str:
    if v is None or v == "":
        return ""
    if isinstance(v, float):
        if v == 0:
            return "0"
        if abs(v) >= 1000:
            return f"{v:,.0f}"
        return f"{v:.{digits}f}" if abs(v) >= 0.01 else f"{v:.2g}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v).replace("|", "/")


def _cpu_cell(r: dict, timeout: float) -> str:
    if r["status"] == "timeout":
        return f"> {timeout:g}"
    if r["status"] == "not run":
        return ""
    return _fmt(r.get("cpu_s"))


def _instances_cell(r: dict) -> str:
    if r.get("instances") is not None:
        return _fmt(r["instances"])
    if r.get("intended_instances"):
        return f"(~{r['intended_instances']:.2g})"
    return ""


def summarize(rows: list[dict], configs: Sequence[str], levels: Sequence[int]) -> dict:
    per_level, per_kernel = [], []
    for c in configs:
        for lv in levels:
            rs = [r for r in rows if r["config"] == c and r["level"] == lv and r["status"] != "not run"]
            if not rs:
                continue
            meas = [r for r in rs if r["status"] in ("ok", "timeout")]
            cpus = [r["cpu_s"] for r in meas]
            mbs = [r["peak_mb"] for r in meas]
            top = max(meas, key=lambda r: r["cpu_s"], default=None)
            per_level.append({
                "config": c, "level": lv, "compiles": len(rs), "ok": sum(r["status"] == "ok" for r in rs),
                "timeouts": sum(r["status"] == "timeout" for r in rs),
                "refused_or_error": sum(r["status"] in ("refused", "error") for r in rs),
                "not_run": sum(r["status"] == "not run" for r in rows if r["config"] == c and r["level"] == lv),
                "median_cpu_s": round(statistics.median(cpus), 3) if cpus else None,
                "max_cpu_s": round(max(cpus), 3) if cpus else None,
                "max_cpu_timeout": bool(top and top["status"] == "timeout"),
                "max_cpu_kernel": top["kernel"] if top else None,
                "median_peak_mb": round(statistics.median(mbs), 1) if mbs else None,
                "max_peak_mb": round(max(mbs), 1) if mbs else None,
            })
        for k in sorted({r["kernel"] for r in rows if r["config"] == c}):
            rs = sorted((r for r in rows if r["config"] == c and r["kernel"] == k and isinstance(r["level"], int)
                         and r["status"] in ("ok", "timeout")), key=lambda r: r["level"])
            if not rs:
                continue
            lo, hi = rs[0], rs[-1]
            i_lo = lo.get("instances") or lo.get("intended_instances")
            i_hi = hi.get("instances") or hi.get("intended_instances")
            cpu_ratio = hi["cpu_s"] / lo["cpu_s"] if lo["cpu_s"] else None
            inst_ratio = i_hi / i_lo if i_lo and i_hi else None
            slope = (math.log(cpu_ratio) / math.log(inst_ratio)
                     if cpu_ratio and inst_ratio and inst_ratio > 1 and hi is not lo else None)
            per_kernel.append({
                "config": c, "kernel": k, "d": lo.get("d"), "levels": f"{lo['level']}-{hi['level']}",
                "instances_lo": i_lo, "instances_hi": i_hi, "cpu_lo": lo["cpu_s"], "cpu_hi": hi["cpu_s"],
                "peak_mb_lo": lo["peak_mb"], "peak_mb_hi": hi["peak_mb"],
                "cpu_ratio": round(cpu_ratio, 2) if cpu_ratio else None,
                "instance_ratio": round(inst_ratio, 2) if inst_ratio else None,
                "peak_ratio": round(hi["peak_mb"] / lo["peak_mb"], 2) if lo["peak_mb"] else None,
                "slope": round(slope, 2) if slope is not None else None,
                "lower_bound": hi["status"] == "timeout",
            })
    failed = [{k: r[k] for k in ("kernel", "config", "level", "size", "status", "note")}
              for r in rows if r["status"] in ("refused", "error", "timeout")]
    return {"per_level": per_level, "per_kernel": per_kernel, "not_ok": failed}


def markdown(rows: list[dict], summary: dict, meta: dict) -> str:
    t = meta["timeout"]
    clock = "CPU" if meta["timeout_clock"] == "cpu" else "wall-clock"
    md = ["# dpn-synth compile scaling (issue 18)", "",
          f"`{meta['command']}` on {meta['date']}; source `{meta['src']}` at {meta['src_commit'] or '?'}"
          + (" (with uncommitted changes)" if meta.get("src_dirty") else "")
          + f"; islpy {meta.get('islpy', '?')}; {meta['cpus']} CPUs (load average {meta['loadavg']} at the start); "
          f"{len(meta['kernels'])} kernels, levels {', '.join(map(str, meta['levels']))}, configurations "
          f"{', '.join(meta['configs'])}; timeout {t:g} s {clock} per compile; {meta['seconds']} s in all.", "",
          "Level k compiles the kernel with every size knob multiplied by f = 4^(k/d) (d: the kernel's measured "
          "growth degree), about 4^k times its own statement instances. *instances*: what the compiler reports "
          "(`report.json`), in parentheses the intended count where the compile did not finish. *CPU s*: user + "
          f"sys of the compile process, Python start-up included (importing the compiler alone: "
          f"{_fmt(meta.get('startup_cpu_s'))} s), from compiled bytecode"
          f"{'' if meta.get('bytecode_compiled') else ' where it could be written'}. *peak MB*: its maximum "
          "resident set. bench/README.md explains the table.", ""]
    large = [r for r in rows if r["level"] == "large"]
    for c in meta["configs"]:
        rs = [r for r in rows if r["config"] == c and r["level"] != "large"]
        md += [f"## `{c}` (`{' '.join(config_args(c))}`)", "",
               "| kernel | level | d | size | instances | CPU s | peak MB | wall s | status |",
               "|---|---|---|---|---|---|---|---|---|"]
        for r in rs:
            st = r["status"] if r["status"] != "timeout" else f"> {t:g} s"
            if r["status"] in ("refused", "error", "not run") and r.get("note"):
                st += f": {_fmt(r['note'])}"
            md.append(f"| {r['kernel']} | {r['level']} | {_fmt(r.get('d'))} | {_fmt(r['size'])} | "
                      f"{_instances_cell(r)} | {_cpu_cell(r, t)} | "
                      f"{'' if r['status'] == 'not run' else _fmt(r.get('peak_mb'), 0)} | "
                      f"{'' if r['status'] == 'not run' else _fmt(r.get('wall_s'), 1)} | {st} |")
        lr = [r for r in large if r["config"] == c]
        if lr:
            md += ["", f"Large matrix multiply (`examples/gemm.c`, `{c}`):", "",
                   "| kernel | size | instances | CPU s | peak MB | wall s | status |", "|---|---|---|---|---|---|---|"]
            for r in lr:
                st = r["status"] if r["status"] != "timeout" else f"> {t:g} s"
                if r["status"] in ("refused", "error") and r.get("note"):
                    st += f": {_fmt(r['note'])}"
                md.append(f"| {r['kernel']} | {_fmt(r['size'])} | {_instances_cell(r)} | {_cpu_cell(r, t)} | "
                          f"{_fmt(r.get('peak_mb'), 0)} | {_fmt(r.get('wall_s'), 1)} | {st} |")
        md.append("")
    s = summary
    md += ["## Summary", "", "Per level (a compile over the limit counts with the CPU seconds it had used; "
           "`>` marks a maximum that is such a lower bound):", "",
           "| config | level | compiles | ok | over limit | refused / error | not run | median CPU s | max CPU s "
           "| median peak MB | max peak MB |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for p in s["per_level"]:
        mx = ("> " if p["max_cpu_timeout"] else "") + _fmt(p["max_cpu_s"])
        if p["max_cpu_kernel"]:
            mx += f" ({p['max_cpu_kernel']})"
        md.append(f"| {p['config']} | {p['level']} | {p['compiles']} | {p['ok']} | {p['timeouts']} | "
                  f"{p['refused_or_error']} | {p['not_run']} | {_fmt(p['median_cpu_s'])} | {mx} | "
                  f"{_fmt(p['median_peak_mb'], 0)} | {_fmt(p['max_peak_mb'], 0)} |")
    md += ["", "Per kernel, the largest level measured against level 0 (*slope* = log(CPU ratio) / "
           "log(instance ratio): 0 = compile cost independent of the size, 1 = linear in the instances; `>` = "
           "the largest level hit the limit, so its CPU and the ratios are lower bounds):", "",
           "| config | kernel | d | levels | instances | CPU s | CPU ratio | instance ratio | slope | peak MB |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for p in s["per_kernel"]:
        lb = "> " if p["lower_bound"] else ""
        md.append(f"| {p['config']} | {p['kernel']} | {_fmt(p['d'])} | {p['levels']} | "
                  f"{_fmt(p['instances_lo'])} -> {_fmt(p['instances_hi'])} | "
                  f"{_fmt(p['cpu_lo'])} -> {lb}{_fmt(p['cpu_hi'])} | {lb}{_fmt(p['cpu_ratio'])} | "
                  f"{_fmt(p['instance_ratio'])} | {lb}{_fmt(p['slope'])} | "
                  f"{_fmt(p['peak_mb_lo'], 0)} -> {_fmt(p['peak_mb_hi'], 0)} |")
    if s["not_ok"]:
        md += ["", "## Compiles that did not finish", "", "| kernel | config | level | size | status | message |",
               "|---|---|---|---|---|---|"]
        md += [f"| {x['kernel']} | {x['config']} | {x['level']} | {_fmt(x['size'])} | {x['status']} | "
               f"{_fmt(x['note'])} |" for x in s["not_ok"]]
    if meta.get("probe_notes"):
        md += ["", "Growth probes: " + "; ".join(f"{k}: {v}" for k, v in meta["probe_notes"].items())]
    if meta.get("plot"):
        md += ["", f"Plot: `{meta['plot']}`."]
    if meta.get("plot_note"):
        md += ["", f"Plot: {meta['plot_note']}"]
    return "\n".join(md) + "\n"


def plot(rows: list[dict], path: Path, timeout: float) -> str:
    """Log-log CPU seconds and peak MB against instances, one line per kernel (and config); '' or why not."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed (pip install 'dpn-synth[bench]'); no plot"
    configs = list(dict.fromkeys(r["config"] for r in rows))
    kernels = list(dict.fromkeys(r["kernel"] for r in rows if r["level"] != "large"))
    cmap = plt.get_cmap("tab20")
    colours = {k: cmap(i % 20) for i, k in enumerate(kernels)}
    styles = dict(zip(configs, ("-", "--", ":", "-.")))
    fig, axes = plt.subplots(1, 2, figsize=(15, 6.5))
    for ax, key, label in ((axes[0], "cpu_s", "compile CPU seconds (user + sys)"),
                           (axes[1], "peak_mb", "peak resident memory, MB")):
        for c in configs:
            for k in kernels:
                rs = [r for r in rows if r["config"] == c and r["kernel"] == k and r["level"] != "large"
                      and r["status"] in ("ok", "timeout")]
                pts = [((r.get("instances") or r.get("intended_instances")), r[key], r["status"]) for r in rs]
                pts = [p for p in pts if p[0] and p[1]]
                if not pts:
                    continue
                ax.plot([p[0] for p in pts], [p[1] for p in pts], styles.get(c, "-"), color=colours[k], lw=1.2,
                        marker="o", ms=3, label=k if c == configs[0] else None)
                for x, y, st in pts:
                    if st == "timeout":
                        ax.plot(x, y, marker="^", ms=8, mfc="none", color=colours[k])
            big = [r for r in rows if r["config"] == c and r["level"] == "large" and r["status"] in ("ok", "timeout")]
            for i, r in enumerate(big):
                x = r.get("instances") or r.get("intended_instances")
                if x and r[key]:
                    ax.plot(x, r[key], marker="^" if r["status"] == "timeout" else "s", ms=8, mfc="none",
                            color="black")
                    dims = "x".join(re.findall(r"=(\d+)", r["size"])) or r["size"]
                    ax.annotate(dims, (x, r[key]), fontsize=6, xytext=(4 if i % 2 == 0 else -4, -13),
                                ha="right" if i % 2 == 0 else "left", textcoords="offset points")
        if key == "cpu_s":
            ax.axhline(timeout, color="grey", lw=0.8, ls=":")
            ax.text(0.42, timeout, f"limit {timeout:g} s", fontsize=7, va="bottom", ha="left", color="grey",
                    transform=ax.get_yaxis_transform())
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("statement instances (reported; intended where the compile did not finish)")
        ax.set_ylabel(label)
        ax.grid(True, which="both", lw=0.3, alpha=0.5)
    axes[0].plot([], [], "^", mfc="none", color="grey", ms=8, label="over the limit (lower bound)")
    axes[0].plot([], [], "^", mfc="none", color="black", ms=8, label="gemm, large sizes")
    for c in configs[1:]:
        axes[0].plot([], [], styles.get(c, "-"), color="grey", label=f"config {c}")
    axes[0].legend(fontsize=6, ncol=2, loc="upper left")
    axes[0].set_title(f"Compile CPU time against problem size ({', '.join(configs)})")
    axes[1].set_title("Compile peak memory against problem size")
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return ""


# --------------------------------------------------------------------------------------------------
# driver


def out_stem(name: str) -> Path:
    p = Path(name)
    if p.suffix in (".csv", ".json", ".md", ".png"):
        p = p.with_suffix("")
    return p if ("/" in name or p.is_absolute()) else RESULTS / p


def plot_path(stem: Path) -> Path:
    p = stem.with_suffix(".png")
    if p.resolve() == (RESULTS / "scaling.png").resolve():  # the suite's --parallel plot (bench/suite.py)
        p = RESULTS / "scaling-compile.png"
    return p


def write_results(rows: list[dict], summary: dict, meta: dict, stem: Path) -> None:
    stem.parent.mkdir(parents=True, exist_ok=True)
    with open(stem.with_suffix(".csv"), "w", newline="") as f:
        w = csv.DictWriter(f, FIELDS, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    stem.with_suffix(".json").write_text(json.dumps({"meta": meta, "summary": summary, "rows": rows}, indent=1) + "\n")
    stem.with_suffix(".md").write_text(markdown(rows, summary, meta))


def git_output(src: Path, *args: str) -> str:
    """`git -C src ARGS`'s output, empty where git is missing or fails (a results file still gets written)."""
    try:
        return subprocess.run(["git", "--no-optional-locks", "-C", str(src), *args], capture_output=True, text=True,
                              timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.scaling",
                                description="Compile every example at about 1, 4, 16, 64 times its instances and "
                                            "measure the compiler's CPU seconds and peak memory (issue 18).")
    p.add_argument("--kernels", metavar="A,B", help="comma-separated example names (default: every examples/*.c)")
    p.add_argument("--kernel-dir", type=Path, metavar="DIR",
                   help="the kernels' directory (default: the source tree's examples/; bench/kernels holds "
                        "benchmark-style kernels the test suite does not run)")
    p.add_argument("--levels", default="0,1,2,3", metavar="0,1,..",
                   help="levels k: about 4^k times the kernel's own instances (default 0,1,2,3)")
    p.add_argument("--configs", default=",".join(DEFAULT_CONFIGS), metavar="C,D",
                   help="auto (--tile auto), pN (--tile auto --parallel N), none (--tile none); default auto")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="S",
                   help="per-compile limit in seconds (default 120); the process group is killed")
    p.add_argument("--timeout-clock", choices=("cpu", "wall"), default="cpu",
                   help="what --timeout counts: the compile's CPU seconds (default) or wall-clock seconds")
    p.add_argument("--wall-timeout", type=float, metavar="S",
                   help="wall-clock backstop with --timeout-clock cpu (default 5 x --timeout)")
    p.add_argument("--mem-limit", type=float, default=8000.0, metavar="MB",
                   help="kill a compile whose resident memory exceeds MB (default 8000; 0: no limit)")
    p.add_argument("--repeat", type=int, default=1, metavar="K",
                   help="compile each row up to K times and keep the least CPU seconds (default 1)")
    p.add_argument("--keep-going", action="store_true",
                   help="run the larger levels of a kernel after one went over the limit (default: `not run`)")
    p.add_argument("--no-large", action="store_true", help="leave out the large gemm rows")
    p.add_argument("--src", type=Path, default=ROOT,
                   help="source tree to measure: the child's cwd and PYTHONPATH, and its examples/ (default: "
                        "this repository)")
    p.add_argument("--out", default="scaling", metavar="NAME",
                   help="results basename under bench/results (default scaling), or a path stem with a /")
    p.add_argument("--plot", action="store_true", help="also write NAME.png (log-log; needs matplotlib)")
    p.add_argument("--replot", action="store_true",
                   help="compile nothing: rewrite NAME.md (and with --plot NAME.png) from NAME.json")
    return p


def replot(stem: Path, with_plot: bool) -> int:
    data = json.loads(stem.with_suffix(".json").read_text())
    rows, meta = data["rows"], data["meta"]
    if with_plot:
        p = plot_path(stem)
        note = plot(rows, p, meta["timeout"])
        meta.pop("plot_note", None)
        if note:
            meta["plot_note"] = note
        else:
            meta["plot"] = str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p)
    write_results(rows, summarize(rows, meta["configs"], meta["levels"]), meta, stem)
    print(f"bench.scaling: rewrote {stem}.csv, .json, .md" + (f", {meta.get('plot')}" if with_plot else ""),
          file=sys.stderr)
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    src = args.src.resolve()
    if not (src / "hls" / "cli.py").exists():
        print(f"bench.scaling: {src} holds no hls/cli.py", file=sys.stderr)
        return 2
    if args.wall_timeout is None:
        args.wall_timeout = 5 * args.timeout if args.timeout_clock == "cpu" else args.timeout
    kernel_dir = args.kernel_dir.resolve() if args.kernel_dir else src / "examples"
    examples = {p.stem: p for p in sorted(kernel_dir.glob("*.c"))}
    names = [k.strip() for k in args.kernels.split(",") if k.strip()] if args.kernels else list(examples)
    unknown = [k for k in names if k not in examples]
    if unknown:
        print(f"bench.scaling: unknown kernels {', '.join(unknown)} (examples: {', '.join(examples)})",
              file=sys.stderr)
        return 2
    levels = [int(x) for x in args.levels.split(",") if x.strip()]
    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    for c in configs:
        config_args(c)
    stem = out_stem(args.out)
    if args.replot:
        return replot(stem, args.plot)
    t_start = time.time()
    meta = {
        "command": "python -m bench.scaling " + " ".join(shlex.quote(a) for a in (argv if argv is not None
                                                                                  else sys.argv[1:])),
        "date": _dt.datetime.now().strftime("%Y-%m-%d %H:%M"), "src": str(src),
        "src_commit": git_output(src, "rev-parse", "--short", "HEAD"),
        "src_dirty": bool(git_output(src, "status", "--porcelain", "--untracked-files=no")),
        "python": platform.python_version(), "islpy": islpy_build(), "cpus": os.cpu_count(),
        "loadavg": " ".join(f"{x:.1f}" for x in os.getloadavg()),
        "kernels": names, "kernel_dir": str(kernel_dir), "levels": levels, "configs": configs, "timeout": args.timeout,
        "timeout_clock": args.timeout_clock, "wall_timeout": args.wall_timeout, "mem_limit_mb": args.mem_limit,
        "large": not args.no_large and "gemm" in names, "startup_cpu_s": None, "degrees": {}, "probe_notes": {},
        "seconds": 0,
    }
    meta["bytecode_compiled"] = warm_bytecode(src)
    meta["startup_cpu_s"] = startup_cpu(src)
    rows: list[dict] = []

    def flush() -> None:
        meta["seconds"] = round(time.time() - t_start)
        write_results(rows, summarize(rows, configs, levels), meta, stem)

    def progress(r: dict) -> None:
        cpu = f"> {args.timeout:g}" if r["status"] == "timeout" else _fmt(r.get("cpu_s"))
        print(f"[{time.strftime('%H:%M:%S')}] {r['kernel']:<20} {r['config']:<5} L{r['level']!s:<6} "
              f"{r['size']:<32} inst {_instances_cell(r):>14}  cpu {cpu:>8} s  peak {_fmt(r.get('peak_mb'), 0):>6} MB"
              f"  {r['status']} {r.get('note', '')[:120]}", file=sys.stderr, flush=True)

    knobs = {k: size_knobs(examples[k]) for k in names}
    for k in names:
        kn = knobs[k]
        if kn["scaled"]:
            d, base, note = growth_degree(src, examples[k], kn)
        else:
            d, base, note = None, None, "no size knob in a loop bound: level 0 only"
        meta["degrees"][k] = round(d, 3) if d else None
        if note:
            meta["probe_notes"][k] = note
        kn["d"], kn["base"] = d, base
        print(f"bench.scaling: {k}: knobs {kn['scaled'] or '-'} (fixed {kn['fixed'] or '-'}), d = {_fmt(d)}, "
              f"{base} instances at the own size" + (f"; {note}" if note else ""), file=sys.stderr, flush=True)

    for c in configs:
        for k in names:
            kn = knobs[k]
            stopped = ""
            for lv in levels:
                f = 4 ** (lv / kn["d"]) if kn["d"] else 1.0
                vals = knob_values(kn, f)
                row = {"kernel": k, "config": c, "level": lv, "d": round(kn["d"], 2) if kn["d"] else None,
                       "scale": round(f, 3),
                       "size": size_text(kn, vals), "args": " ".join(knob_args(kn, vals)),
                       "intended_instances": round(kn["base"] * 4 ** lv) if kn["base"] else None}
                if lv > 0 and not kn["scaled"]:
                    continue
                if stopped:
                    row.update(status="not run", note=stopped)
                else:
                    row.update(compile_row(src, examples[k], c, knob_args(kn, vals), args))
                    if row["status"] == "timeout" and not args.keep_going:
                        stopped = f"level {lv} took > {args.timeout:g} s"
                    elif row["note"].startswith("killed: resident memory") and not args.keep_going:
                        stopped = f"level {lv} used > {args.mem_limit:g} MB"
                rows.append(row)
                progress(row)
                flush()
        if meta["large"]:
            kn = knobs["gemm"]
            for sizes in LARGE_GEMM:
                vals = {**knob_values(kn, 1.0), **sizes}
                base = kn["base"]
                scale = math.prod(sizes[n] / kn["macros"][n] for n in sizes if n in kn["macros"])
                row = {"kernel": "gemm", "config": c, "level": "large", "d": None, "scale": None,
                       "size": " ".join(f"{n}={v}" for n, v in sizes.items()),
                       "args": " ".join(f"-D{n}={v}" for n, v in sizes.items()),
                       "intended_instances": round(base * scale) if base else None}
                row.update(compile_row(src, examples["gemm"], c, [f"-D{n}={v}" for n, v in sizes.items()], args))
                rows.append(row)
                progress(row)
                flush()
    if args.plot:
        p = plot_path(stem)
        note = plot(rows, p, args.timeout)
        if note:
            meta["plot_note"] = note
        else:
            meta["plot"] = str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p)
    flush()
    summary = summarize(rows, configs, levels)
    print(markdown(rows, summary, meta))
    print(f"bench.scaling: wrote {stem}.csv, .json, .md" + (f", {meta['plot']}" if meta.get("plot") else ""),
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
