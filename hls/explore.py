"""`dpn-synth explore`: one kernel under a grid of tilings x parallelism, and the Pareto front.

A design-space sweep answers "which configuration should I compile?", which no single `compile` can:
cycles, on-chip memory (channel words) and logic pull in different directions as tiles grow and
bands split into parallel processes.  Every configuration is compiled exactly as `compile` would
(`hls.pipeline.run`), in its own worker process because compiles are CPU-bound and independent (local
processes, or the workers of a Dask cluster for a sweep that outgrows one machine: `hls.executors`); the
figures are the ones `compile`, `sim` and `estimate` already report, so a row can be reproduced with
the command in its `options` column.

A configuration the compiler refuses (an illegal tiling, `--parallel` without tiles) is a `skipped`
row carrying the compiler's message: in a sweep that is information, not a failure.
"""

from __future__ import annotations

import csv
import json
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterable, Optional, Sequence, Union

from .diagnostics import CompileError, UsageError
from .executors import Backend, TaskFailed, map_unordered

FIELDS = (
    "config", "tile", "parallel", "options", "status", "ok", "note", "tiling",
    "cycles", "cycles_source", "model_cycles", "sim_cycles", "roofline_cycles", "cycles_per_roofline",
    "words_moved", "words_loaded", "words_stored", "compulsory_words", "traffic_per_compulsory",
    "channel_words", "processes", "compute_processes", "channels", "fifos",
    "statement_instances", "memory_words_per_cycle", "intensity",
    "lut", "ff", "bram", "dsp", "estimate_note", "words_loaded_in_b", "words_stored_in_b", "closed_form_note",
    "pareto", "compile_s", "sim_s",
)
RESOURCES = ("lut", "ff", "bram", "dsp")


# --------------------------------------------------------------------------------------------------
# the grid


def parse_tile_sizes(values: Iterable[str]) -> list[str]:
    """`--tile-sizes` values (repeated, each a `;`-separated list) -> tilings in `--tile` syntax.

    Validated here, before any worker starts, so a typo is one usage error rather than a sweep of
    skipped rows; duplicates are dropped because they would only repeat a row."""
    from .dpn.tiling import parse_tile_option

    out: list[str] = []
    for value in values:
        items = [x.strip() for x in value.split(";") if x.strip()]  # a trailing `;` is harmless
        if not items:
            raise UsageError(f"--tile-sizes: empty list `{value}` (expected e.g. 'none;auto;8,8')")
        for item in items:
            text = ",".join(x.strip() for x in item.split(","))
            try:
                parse_tile_option(text)
            except UsageError:
                raise UsageError(f"--tile-sizes: `{item}` is not none, auto or positive sizes like 8,8") from None
            if text not in out:
                out.append(text)
    return out


def parse_parallel(values: Iterable[str]) -> list[int]:
    """`--parallel 1,2,4` (or repeated) -> [1, 2, 4], deduplicated, order kept."""
    out: list[int] = []
    for value in values:
        for item in value.split(","):
            item = item.strip()
            try:
                p = int(item)
            except ValueError:
                raise UsageError(f"--parallel expects positive integers like 1,2,4; got `{value}`") from None
            if p < 1:
                raise UsageError(f"--parallel expects positive integers like 1,2,4; got `{value}`")
            if p not in out:
                out.append(p)
    if not out:
        raise UsageError("--parallel: no value given")
    return out


def config_name(tile: str, parallel: int) -> str:
    return f"{tile}/p{parallel}"


def config_options(tile: str, parallel: int) -> str:
    return f"--tile {tile}" + (f" --parallel {parallel}" if parallel != 1 else "")


# --------------------------------------------------------------------------------------------------
# one configuration (runs in a worker process)


def _one_line(text: str, n: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 3] + "..."


def _ratio(a: Optional[int], b: Optional[int], digits: int = 3) -> Optional[float]:
    return None if a is None or not b else round(a / b, digits)


def new_row(tile: str, parallel: int) -> dict:
    row = dict.fromkeys(FIELDS)
    row.update(config=config_name(tile, parallel), tile=tile, parallel=parallel,
               options=config_options(tile, parallel), status="ok", note="", pareto=False)
    return row


def run_config(task: dict) -> dict:
    """Compile one configuration and measure it; never raises (a crash becomes an `error` row), so
    one bad configuration cannot take the sweep down."""
    row = new_row(task["tile"], task["parallel"])
    try:
        _measure(row, task)
    except Exception as e:  # noqa: BLE001 - a compiler bug is a row, not the end of the sweep
        row.update(status="error", ok=None, note=_one_line(f"{type(e).__name__}: {e}"))
    return row


def _measure(row: dict, task: dict) -> None:
    from .metrics import network_stats, traffic as traffic_of, traffic_words
    from .pipeline import Options, run

    t0 = time.perf_counter()
    opts = Options(task["path"], tuple(task["include_dirs"]), tuple(task["defines"]), task["function"],
                   dict(task["params"]), task["tile"], task["parallel"], task["local_words"])
    try:
        res = run(opts)
    except CompileError as e:  # includes UsageError: the compiler does not accept this configuration
        row.update(status="skipped", note=_one_line(e.message))
        return
    row["compile_s"] = round(time.perf_counter() - t0, 3)
    net = res.network
    stats = network_stats(net)
    traffic = traffic_of(res.program, net)
    loaded, stored = traffic_words(net)
    moved = loaded + stored
    model = (res.timing or {}).get("estimated_cycles")
    row.update(
        tiling=net.tiling.describe() if net.tiling is not None else "none",
        model_cycles=model, cycles=model, cycles_source="model" if model is not None else None,
        roofline_cycles=traffic["roofline_cycles"], words_moved=moved, words_loaded=loaded, words_stored=stored,
        compulsory_words=traffic["compulsory_words"],
        traffic_per_compulsory=_ratio(moved, traffic["compulsory_words"]),
        channel_words=stats["channel_words"], processes=stats["processes"],
        compute_processes=stats["compute_processes"], channels=stats["channels"], fifos=stats["fifos"],
        statement_instances=traffic["statement_instances"],
        memory_words_per_cycle=traffic["memory_words_per_cycle"],
        intensity=_ratio(traffic["statement_instances"], moved, 4),
    )
    if task.get("closed_forms"):
        _closed_forms(row, res, opts)
    design = None
    if task["sim"] or task["estimate"]:
        from .rtl.generate import generate

        try:
            design = generate(net)
        except CompileError as e:  # e.g. a floating-point operator without hardware yet
            if task["sim"]:  # model cycles are not comparable with simulated ones: off the front
                row.update(status="skipped", note=_one_line(f"no RTL to simulate: {e.message}"), cycles=None,
                           cycles_source=None)
                return
            row["estimate_note"] = _one_line(f"no RTL: {e.message}", 200)
    if task["sim"]:
        _simulate(row, res, design, task)
    if task["estimate"] and design is not None:
        _estimate(row, design, task)
    row["cycles_per_roofline"] = _ratio(row["cycles"], row["roofline_cycles"])


def _closed_forms(row: dict, res, opts) -> None:
    """Words loaded and stored as polynomials in the tile scale b (monoparametric tiling, computed by
    `hls.report.monoparametric_report`), for fixed tile sizes only: `auto` picks sizes per kernel size,
    so there is no single family in b to speak of."""
    if row["tile"] in ("none", "auto"):
        row["closed_form_note"] = f"only for fixed tile sizes (`{row['tile']}` is not)"
        return
    from . import report

    mono = getattr(report, "monoparametric_report", None)
    if mono is None:
        row["closed_form_note"] = "this build has no monoparametric report"
        return
    data = mono(res.program, res.network, options=opts)
    if not data.get("available"):
        row["closed_form_note"] = _one_line(f"not available: {data.get('reason')}", 200)
        return
    row["words_loaded_in_b"], row["words_stored_in_b"] = data.get("words_loaded"), data.get("words_stored")
    row["closed_form_note"] = _one_line(f"b = {data.get('b')}; {data.get('valid_for', '')}", 200)


def _simulate(row: dict, res, design, task: dict) -> None:
    """The `sim` command's machinery (gcc reference, `sim.rtl_sim.run_rtl`, bit comparison)."""
    import numpy as np

    from sim.gcc_ref import GccReference
    from sim.inputs import compare, random_inputs
    from sim.rtl_sim import run_rtl

    inputs = random_inputs(res.program, task["seed"])
    expected = {k: v.copy() for k, v in inputs.items() if isinstance(v, np.ndarray)}
    GccReference(res.kernel, defines=tuple(task["defines"])).run({**inputs, **expected})
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="dpn-synth-explore-") as work:
        out = run_rtl(design, inputs, Path(work), seed=task["seed"],
                      cache_root=Path(task["cache_root"]) if task.get("cache_root") else None)
    row["sim_s"] = round(time.perf_counter() - t0, 3)
    mismatches = [] if out.problem else compare(expected, out.outputs)
    row["ok"] = out.problem is None and not mismatches
    row["cycles"] = row["sim_cycles"] = out.cycles if out.problem is None else None
    row["cycles_source"] = "verilator" if row["cycles"] is not None else None
    if not row["ok"]:
        row["status"] = "fail"
        row["note"] = _one_line(out.problem or f"{len(mismatches)} mismatches, first {mismatches[0]}")


def _estimate(row: dict, design, task: dict) -> None:
    from . import estimate as est

    try:
        e = est.estimate_design(design, "xc7", timeout=task["estimate_timeout"])
    except est.EstimateError as exc:
        row["estimate_note"] = _one_line(str(exc), 200)
        return
    row.update(lut=e.lut, ff=e.ff, bram=e.bram, dsp=e.dsp, estimate_note="cached" if e.cached else "")


# --------------------------------------------------------------------------------------------------
# the sweep


def sweep(tasks: Sequence[dict], backend: Union[int, Backend],
          on_row: Optional[Callable[[dict], None]] = None) -> list[dict]:
    """Rows in the order of `tasks`; `on_row` is called as each finishes (for the progress bar).

    `backend` is where the configurations run (`hls.executors`: local worker processes, or a Dask
    cluster); an int is that many local jobs.  Whatever runs them, the rows are the same (but for the
    seconds columns), and a worker that dies under a configuration makes an `error` row."""
    if isinstance(backend, int):
        backend = Backend(jobs=max(1, backend))
    rows: list[Optional[dict]] = [None] * len(tasks)
    for k, result in map_unordered(run_config, tasks, backend):
        if isinstance(result, TaskFailed):
            failed, result = result, new_row(tasks[k]["tile"], tasks[k]["parallel"])
            result.update(status="error", note=_one_line(failed.message))
        rows[k] = result
        if on_row:
            on_row(result)
    return [r for r in rows if r is not None]


# --------------------------------------------------------------------------------------------------
# Pareto front


def objectives(rows: Sequence[dict]) -> tuple[str, ...]:
    """What the front minimizes: cycles and channel words, and LUTs when every candidate has them
    (comparing a row with LUTs against one without would be meaningless)."""
    cand = candidates(rows)
    keys = ("cycles", "channel_words")
    if cand and all(r.get("lut") is not None for r in cand):
        keys += ("lut",)
    return keys


def candidates(rows: Sequence[dict]) -> list[dict]:
    """Rows that may be on the front: compiled, measured, and (when simulated) correct."""
    return [r for r in rows if r["status"] == "ok" and r["cycles"] is not None and r["channel_words"] is not None
            and r.get("ok") is not False]


def mark_pareto(rows: Sequence[dict]) -> tuple[str, ...]:
    """Set `pareto` on every row (True: no other candidate is at least as good in every objective and
    better in one); returns the objectives used."""
    keys = objectives(rows)
    cand = candidates(rows)
    for r in rows:
        r["pareto"] = False
    for r in cand:
        v = [r[k] for k in keys]
        dominated = False
        for o in cand:
            w = [o[k] for k in keys]
            if all(a <= b for a, b in zip(w, v)) and any(a < b for a, b in zip(w, v)):
                dominated = True
                break
        r["pareto"] = not dominated
    return keys


# --------------------------------------------------------------------------------------------------
# outputs


def cell(v: object) -> str:
    """A value as a table cell (CSV/markdown): the benchmark's tables use the same."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.2f}"
    return str(v)


def table_columns(meta: dict) -> list[tuple[str, str]]:
    cyc = "cycles (sim)" if meta["sim"] else "cycles (model)"
    cols = [("config", "config"), ("status", "status"), ("cycles", cyc), ("roofline_cycles", "roofline"),
            ("words_moved", "words moved"), ("compulsory_words", "compulsory"), ("channel_words", "channel words"),
            ("processes", "processes")]
    if meta["sim"]:
        cols.insert(2, ("ok", "ok"))
    if meta.get("resources"):
        cols += [("lut", "LUT"), ("ff", "FF"), ("bram", "BRAM18"), ("dsp", "DSP")]
    if meta.get("closed_forms"):
        cols += [("words_loaded_in_b", "loads(b)"), ("words_stored_in_b", "stores(b)")]
    cols += [("pareto", "pareto"), ("note", "note")]
    return cols


def _cell(row: dict, key: str, note_width: int = 70) -> str:
    if key == "pareto":
        return "*" if row["pareto"] else ""
    if key == "note":
        return _one_line(row["note"] or "", note_width)
    return cell(row[key])


ROOFLINE_LEGEND = ("roofline: max(statement instances / compute processes, the most cycles an array's memory "
                   "channels need for its compulsory words), the fewest cycles at one instance per compute process "
                   "and one word per memory channel (an array's read channels, its write channel) per cycle, a "
                   "wide read port moving a line per cycle between its load units; "
                   "it changes with the number of compute processes a configuration has")


def format_table(rows: Sequence[dict], meta: dict) -> str:
    """The stdout table: aligned columns, `*` on the Pareto front, notes as numbered references
    written out in full below it (a terminal would cut a long note off), and the roofline's legend."""
    cols = table_columns(meta)
    refs: dict[str, int] = {}
    for r in rows:
        if r["note"]:
            refs.setdefault(_one_line(r["note"]), len(refs) + 1)

    def cell_of(r: dict, k: str) -> str:
        return f"[{refs[_one_line(r['note'])]}]" if k == "note" and r["note"] else _cell(r, k)

    cells = [[h for _, h in cols]] + [[cell_of(r, k) for k, _ in cols] for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(cols))]
    lines = []
    for n, line in enumerate(cells):
        lines.append("  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    lines += [f"[{k}] {text}" for text, k in refs.items()]
    lines.append(ROOFLINE_LEGEND)
    return "\n".join(lines) + "\n"


def note_equal_rows(rows: Sequence[dict]) -> None:
    """Say why a configuration's figures equal an earlier one's, instead of leaving two identical
    rows unexplained (e.g. `--parallel 2` on a band that has no second part at this size)."""
    keys = ("tiling", "cycles", "words_moved", "channel_words", "processes", "compute_processes", "channels")
    seen: dict[tuple, dict] = {}
    for r in rows:
        if r["status"] != "ok":
            continue
        key = tuple(r.get(k) for k in keys)
        first = seen.setdefault(key, r)
        if first is r:
            continue
        if r["parallel"] != first["parallel"] and r["compute_processes"] == first["compute_processes"]:
            why = (f"--parallel {r['parallel']} found no more parallel work than {first['config']} "
                   f"({r['compute_processes']} compute processes either way)")
        elif r["tile"] != first["tile"]:
            why = f"--tile {r['tile']} chose the same tiling as {first['config']} ({r['tiling']})"
        else:
            why = f"the same network as {first['config']}"
        r["note"] = f"{r['note']}; {why}" if r["note"] else f"same figures as {first['config']}: {why}"


def markdown(rows: Sequence[dict], meta: dict) -> str:
    cols = table_columns(meta)
    cycles = (f"Verilator simulation (seed {meta['seed']}, checked bit for bit against gcc)" if meta["sim"]
              else "the compiler's cycle model (`estimated_cycles`)")
    md = [f"# dpn-synth explore: `{meta['kernel']}`", "", f"`{meta['command']}`", "",
          f"Source: `{meta['file']}`" + (f"; parameters: {', '.join(f'`{k}={v}`' for k, v in meta['params'].items())}"
                                         if meta["params"] else ""), "",
          f"Cycles: {cycles}. Pareto front (`*`): minimize {', '.join(meta['objectives'])}.", "",
          ROOFLINE_LEGEND[0].upper() + ROOFLINE_LEGEND[1:] + ".", "",
          "| " + " | ".join(h for _, h in cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        md.append("| " + " | ".join(_cell(r, k, 300).replace("|", "/") for k, _ in cols) + " |")
    md.append("")
    notes = [n for n in meta.get("notes", []) if n]
    if notes:
        md += ["## Notes", "", *[f"- {n}" for n in notes], ""]
    if meta.get("plots"):
        md += ["Plots: " + ", ".join(f"`{p}`" for p in meta["plots"]), ""]
    return "\n".join(md)


def roofline_plot(rows: Sequence[dict], meta: dict, out: Path) -> tuple[list[str], str]:
    """roofline.png: achieved instances per cycle against operational intensity, with each
    configuration's own roof; ([], why not) when matplotlib (the `bench` extra) is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return [], "matplotlib is not installed (pip install 'dpn-synth[bench]'): roofline.png not written"
    pts = [r for r in rows if r["status"] == "ok" and r["cycles"] and r["intensity"]]
    if not pts:
        return [], "no configuration with cycles and traffic: roofline.png not written"
    fig, ax = plt.subplots(figsize=(9, 6))
    cmax = max(r["compute_processes"] for r in pts)
    bmax = max(r["memory_words_per_cycle"] for r in pts)
    xs = [r["intensity"] for r in pts]
    lo, hi = min(xs) / 4, max(xs) * 4
    grid = [lo * (hi / lo) ** (k / 200) for k in range(201)]
    ax.plot(grid, [min(cmax, bmax * x) for x in grid], color="black", lw=1.5,
            label=f"roof: min({cmax} compute processes, {bmax} words/cycle x intensity)")
    labels: dict[tuple[float, float], list[str]] = {}  # configurations on one point share a label
    for r in pts:
        x, y = r["intensity"], r["statement_instances"] / r["cycles"]
        own = min(r["compute_processes"], r["memory_words_per_cycle"] * x)
        ax.plot([x, x], [y, own], ":", color="grey", lw=0.8)
        ax.plot(x, own, marker="_", color="tab:red", ms=12)
        ax.plot(x, y, "*" if r["pareto"] else "o", color="tab:green" if r["pareto"] else "tab:blue",
                ms=11 if r["pareto"] else 6)
        labels.setdefault((x, y), []).append(r["config"])
    for (x, y), names in labels.items():
        ax.annotate(", ".join(names), (x, y), fontsize=7, xytext=(5, -3), textcoords="offset points")
    ax.plot([], [], "*", color="tab:green", ms=11, label="Pareto front")
    ax.plot([], [], "o", color="tab:blue", ms=6, label="other configurations")
    ax.plot([], [], "_", color="tab:red", ms=12, label="the configuration's own roof")
    ax.set_xscale("log")
    ax.set_yscale("log")
    from matplotlib.ticker import FormatStrFormatter

    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(FormatStrFormatter("%g"))
        axis.set_minor_formatter(FormatStrFormatter("%g"))
    ax.set_xlabel("operational intensity (statement instances per off-chip word moved)")
    ax.set_ylabel("statement instances per cycle (" + ("Verilator" if meta["sim"] else "cycle model") + ")")
    ax.set_title(f"{meta['kernel']}: roofline of the explored configurations")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(out / "roofline.png", dpi=120)
    plt.close(fig)
    return ["roofline.png"], ""


def write_outputs(rows: Sequence[dict], meta: dict, out: Path, *, plots: bool = True) -> None:
    """explore.csv, explore.json, explore.md and roofline.png under `out` (notes go into `meta`)."""
    out.mkdir(parents=True, exist_ok=True)
    if plots:
        meta["plots"], note = roofline_plot(rows, meta, out)
        if note:
            meta["notes"].append(note)
    with open(out / "explore.csv", "w", newline="") as f:
        w = csv.DictWriter(f, FIELDS, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    data = {"meta": meta, "rows": [{k: r.get(k) for k in FIELDS} for r in rows]}
    (out / "explore.json").write_text(json.dumps(data, indent=1) + "\n")
    (out / "explore.md").write_text(markdown(rows, meta))
