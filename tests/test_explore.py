"""`dpn-synth explore` (rows, Pareto front, skipped configurations, --sim), the progress utility, and
`compile`'s dpn.svg with and without Graphviz."""

from __future__ import annotations

import csv
import importlib.util
import io
import json
import os

import pytest

from hls import explore as ex
from hls.cli import main
from hls.progress import ProgressBar, progress_enabled, spinner
from tests.kernels import ROOT

GEMM = ROOT / "examples" / "gemm-int.c"
GEMM_SMALL = ["-D", "NI=4", "-D", "NJ=4", "-D", "NK=4"]
JACOBI = ROOT / "examples" / "jacobi-1d-int.c"
JACOBI_SMALL = ["-D", "T=2", "-D", "N=8"]


def _front(rows: list[dict], keys: tuple[str, ...]) -> set[str]:
    """The Pareto front recomputed from scratch: ok rows no other ok row weakly dominates."""
    cand = [r for r in rows if r["status"] == "ok"]
    out = set()
    for r in cand:
        if not any(all(o[k] <= r[k] for k in keys) and any(o[k] < r[k] for k in keys) for o in cand):
            out.add(r["config"])
    return out


def test_explore_model_sweep(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("DPN_SYNTH_PROGRESS", "1")  # the bar on a non-TTY stderr: one line per row
    out = tmp_path / "ex"
    assert main(["explore", str(GEMM), *GEMM_SMALL, "--tile-sizes", "none;2,2", "--tile-sizes", "2,2,2,2,2",
                 "--parallel", "1,2", "--jobs", "2", "-o", str(out)]) == 0
    cap = capsys.readouterr()
    configs = ["none/p1", "none/p2", "2,2/p1", "2,2/p2", "2,2,2,2,2/p1", "2,2,2,2,2/p2"]
    with open(out / "explore.csv", newline="") as f:
        csv_rows = list(csv.DictReader(f))
    data = json.loads((out / "explore.json").read_text())
    rows = data["rows"]
    assert [r["config"] for r in csv_rows] == [r["config"] for r in rows] == configs
    assert (out / "explore.md").read_text().count("\n| ") == len(configs) + 1  # header + one line per row
    by = {r["config"]: r for r in rows}

    # untiled: the loads and stores move exactly the compulsory words (A, B, C in, C out: 4 x 16)
    assert by["none/p1"]["status"] == "ok"
    assert by["none/p1"]["words_moved"] == by["none/p1"]["compulsory_words"] == 64
    assert by["none/p1"]["processes"] == 6 and by["none/p1"]["cycles_source"] == "model"
    # 2x2 tiles reload C's band: more words than compulsory, fewer channel words
    assert by["2,2/p1"]["words_moved"] > 64 and by["2,2/p1"]["channel_words"] < by["none/p1"]["channel_words"]
    # --parallel 2 doubles the heaviest statement's processes; gemm's light `C *= beta` may keep one
    assert by["2,2/p1"]["compute_processes"] < by["2,2/p2"]["compute_processes"] <= 2 * by["2,2/p1"]["compute_processes"]
    # refused configurations are rows with the compiler's reason, not crashes
    assert by["none/p2"]["status"] == "skipped" and "--parallel" in by["none/p2"]["note"]
    for c in ("2,2,2,2,2/p1", "2,2,2,2,2/p2"):
        assert by[c]["status"] == "skipped" and "5 sizes" in by[c]["note"] and by[c]["cycles"] is None
        assert by[c]["pareto"] is False

    # the front matches the numbers
    assert data["meta"]["objectives"] == ["cycles", "channel_words"]
    front = _front(rows, ("cycles", "channel_words"))
    assert front and {r["config"] for r in rows if r["pareto"]} == front
    assert {r["config"] for r in csv_rows if r["pareto"] == "True"} == front

    # the model cycles are the ones `compile` reports for the same configuration
    assert main(["compile", str(GEMM), *GEMM_SMALL, "--tile", "2,2", "--parallel", "2", "-o", str(tmp_path / "c"),
                 "-q"]) == 0
    summary = json.loads((tmp_path / "c" / "report.json").read_text())["summary"]
    assert by["2,2/p2"]["cycles"] == summary["estimated_cycles"]
    assert by["2,2/p2"]["channel_words"] == summary["channel_words"]
    assert by["2,2/p2"]["roofline_cycles"] == summary["roofline_cycles"]

    # the picture needs the optional matplotlib; without it, a note instead of a failure
    if importlib.util.find_spec("matplotlib") is None:
        assert not (out / "roofline.png").exists() and data["meta"]["plots"] == []
        assert any("matplotlib is not installed" in n for n in data["meta"]["notes"])
        assert "roofline.png not written" in cap.err
    else:
        assert (out / "roofline.png").read_bytes()[:4] == b"\x89PNG" and data["meta"]["plots"] == ["roofline.png"]

    # stdout: the table (a line per row, `*` on the front); stderr: progress up to 6/6
    lines = cap.out.splitlines()
    for c in configs:
        assert sum(1 for ln in lines if ln.startswith(c + " ")) == 1
    assert sum(1 for ln in lines[2:len(configs) + 2] if "*" in ln) == len(front)
    assert "explore [" in cap.err and "6/6" in cap.err


@pytest.mark.slow  # 67 s; the explore model rows and closed forms stay in the default run
def test_explore_sim_row(tmp_path, capsys, monkeypatch, rtl_cache):
    if not os.environ.get("DPN_SYNTH_CACHE"):
        monkeypatch.setenv("DPN_SYNTH_CACHE", str(rtl_cache))
    assert main(["explore", str(JACOBI), *JACOBI_SMALL, "--tile-sizes", "none", "--parallel", "1", "--sim",
                 "--jobs", "1", "--json", "-o", str(tmp_path / "ex")]) == 0
    data = json.loads(capsys.readouterr().out)
    (row,) = data["rows"]
    assert row["status"] == "ok" and row["ok"] is True and row["cycles_source"] == "verilator"
    assert row["cycles"] == row["sim_cycles"] > 0 and row["model_cycles"] > 0
    assert row["pareto"] is True  # the only candidate
    assert json.loads((tmp_path / "ex" / "explore.json").read_text())["rows"][0]["cycles"] == row["cycles"]


def test_explore_closed_forms_match_the_row(tmp_path, capsys):
    from hls import report

    if not hasattr(report, "monoparametric_report"):
        pytest.skip("no monoparametric report in this build")
    assert main(["explore", str(GEMM), *GEMM_SMALL, "--tile-sizes", "2,2;auto", "--parallel", "1", "--closed-forms",
                 "--jobs", "1", "--json", "-q", "-o", str(tmp_path / "ex")]) == 0
    tiled, auto = json.loads(capsys.readouterr().out)["rows"]
    assert auto["words_loaded_in_b"] is None and "fixed tile sizes" in auto["closed_form_note"]
    assert tiled["closed_form_note"].startswith("b = 2;")
    at_2 = [eval(f.replace("^", "**"), {"__builtins__": {}}, {"b": 2})  # noqa: S307 - digits, b, + - * / ^
            for f in (tiled["words_loaded_in_b"], tiled["words_stored_in_b"])]
    assert at_2 == [tiled["words_loaded"], tiled["words_stored"]] and sum(at_2) == tiled["words_moved"]


@pytest.mark.parametrize("argv,what", [
    (["--tile-sizes", "4,x"], "--tile-sizes: `4,x`"),
    (["--tile-sizes", "auto;0,4"], "--tile-sizes: `0,4`"),
    (["--tile-sizes", ";"], "--tile-sizes: empty list"),
    (["--parallel", "1,two"], "--parallel expects"),
    (["--parallel", "0"], "--parallel expects"),
    (["--jobs", "0"], "--jobs must be"),
])
def test_explore_bad_usage_is_one_line_exit_2(argv, what, capsys, tmp_path):
    assert main(["explore", str(GEMM), *argv, "-o", str(tmp_path / "ex")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dpn-synth: error: ") and what in err and err.count("\n") == 1
    assert not (tmp_path / "ex").exists()


def test_help_lists_explore(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    out = capsys.readouterr().out
    assert e.value.code == 0 and "explore" in out and "dpn-synth explore examples/" in out
    with pytest.raises(SystemExit) as e:
        main(["explore", "--help"])
    out = capsys.readouterr().out
    assert e.value.code == 0 and "--tile-sizes" in out and "Pareto" in out


# --------------------------------------------------------------------------------------------------
# progress


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_only_on_tty_or_forced(monkeypatch):
    monkeypatch.delenv("DPN_SYNTH_PROGRESS", raising=False)
    s = io.StringIO()
    with ProgressBar(2, "work", stream=s) as bar:
        bar.advance(note="a")
        bar.advance(note="b")
    assert s.getvalue() == ""  # a pipe or file gets nothing
    s = io.StringIO()
    with ProgressBar(2, "work", stream=s, force=True) as bar:
        bar.advance(note="a")
        bar.advance(note="b")
    lines = s.getvalue().splitlines()
    assert len(lines) == 2 and lines[0].startswith("work [") and "1/2" in lines[0] and lines[1].endswith(" b")
    assert "2/2" in lines[1] and "#" * 24 in lines[1]
    t = _Tty()
    with ProgressBar(2, "work", stream=t) as bar:
        bar.advance()
    assert "\r\x1b[K" in t.getvalue() and t.getvalue().endswith("\n")
    t = _Tty()
    with ProgressBar(2, "work", stream=t, quiet=True) as bar:
        bar.advance()
    assert t.getvalue() == ""
    monkeypatch.setenv("DPN_SYNTH_PROGRESS", "0")
    assert not progress_enabled(_Tty())
    monkeypatch.setenv("DPN_SYNTH_PROGRESS", "1")
    assert progress_enabled(io.StringIO()) and not progress_enabled(io.StringIO(), quiet=True)


def test_spinner_lines():
    s = io.StringIO()
    with spinner("building x", stream=s, force=True):
        pass
    assert s.getvalue().splitlines()[0] == "building x ..."
    assert s.getvalue().splitlines()[1].startswith("building x: done in ")
    s = io.StringIO()
    with pytest.raises(RuntimeError):
        with spinner("building x", stream=s, force=True):
            raise RuntimeError("boom")
    assert "building x: failed after" in s.getvalue()
    s = io.StringIO()
    with spinner("building x", stream=s):
        pass
    assert s.getvalue() == ""
    t = _Tty()
    with spinner("building x", stream=t, interval=0.01):
        import time

        time.sleep(0.05)
    assert t.getvalue().startswith("\r\x1b[K| building x") and "done in" in t.getvalue()


def test_verilator_build_spinner_only_when_not_cached(tmp_path, monkeypatch, capsys):
    """`sim` shows a spinner around an uncached Verilator build (the build itself is faked here)."""
    import sim.rtl_runner as rr

    def fake_compile(build_dir, sources, toplevel, *rest):
        (build_dir / toplevel).write_text("")
        (build_dir / rr.BUILD_MARKER).write_text("{}")

    monkeypatch.setattr(rr, "_compile", fake_compile)
    monkeypatch.setenv("DPN_SYNTH_PROGRESS", "1")
    src = tmp_path / "top.v"
    src.write_text("module top; endmodule\n")
    b = rr.build_verilator([src], "top", cache_root=tmp_path / "cache", progress=True)
    err = capsys.readouterr().err
    assert b.fresh and "Verilator: building top" in err and "done in" in err
    b = rr.build_verilator([src], "top", cache_root=tmp_path / "cache", progress=True)
    assert not b.fresh and capsys.readouterr().err == ""
    src.write_text("module top; wire w; endmodule\n")
    rr.build_verilator([src], "top", cache_root=tmp_path / "cache")  # progress off: library callers
    assert capsys.readouterr().err == ""


def _row(config: str, tile: str, parallel: int, compute: int, cycles: int = 100, status: str = "ok") -> dict:
    return {"config": config, "tile": tile, "parallel": parallel, "status": status, "note": "",
            "tiling": "4x4" if tile != "none" else "none", "cycles": cycles, "words_moved": 10,
            "channel_words": 5, "processes": compute + 2, "compute_processes": compute, "channels": 3}


def test_equal_rows_say_why_and_long_notes_are_not_cut():
    rows = [_row("auto/p1", "auto", 1, 1), _row("auto/p2", "auto", 2, 1), _row("4,4/p1", "4,4", 1, 1),
            _row("4,4/p2", "4,4", 2, 2, cycles=60), _row("none/p2", "none", 2, 1, status="skipped")]
    rows[4]["note"] = "a refusal whose text is far longer than a terminal column would hold: " + "x" * 120
    ex.note_equal_rows(rows)
    assert rows[0]["note"] == "" and rows[3]["note"] == ""
    assert "--parallel 2 found no more parallel work than auto/p1 (1 compute processes" in rows[1]["note"]
    assert "--tile 4,4 chose the same tiling as auto/p1 (4x4)" in rows[2]["note"]
    meta = {"sim": False, "resources": False, "closed_forms": False}
    text = ex.format_table([{**r, "pareto": False, "roofline_cycles": 50, "compulsory_words": 8} for r in rows], meta)
    lines = text.splitlines()
    assert lines[6].split()[-1] == "[3]" and rows[4]["note"] in text  # the full note, referenced
    assert lines[-1].startswith("roofline: max(statement instances / compute processes")
