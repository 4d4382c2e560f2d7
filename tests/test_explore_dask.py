"""Sweeps on Dask distributed (`hls/executors.py`): `explore --dask` and `--scheduler` give the local
pool's rows, a worker that dies is a row or result rather than a crash, and without dask the options
are one usage error.  The tests that need a cluster skip when dask[distributed] is not installed."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hls import explore as ex
from hls.cli import main
from hls.executors import Backend, TaskFailed, map_unordered
from tests.kernels import ROOT

JACOBI = ROOT / "examples" / "jacobi-1d-int.c"
# none/p1, none/p2 (skipped: --parallel without tiles), 2,4/p1, 2,4/p2; the cycle model, no simulation
SWEEP = [str(JACOBI), "-D", "T=2", "-D", "N=8", "--tile-sizes", "none;2,4", "--parallel", "1,2", "--no-plot", "-q"]
CONFIGS = ["none/p1", "none/p2", "2,4/p1", "2,4/p2"]
TIMING = ("compile_s", "sim_s")  # wall-clock seconds: the only columns allowed to differ between backends
NO_DASK = "--dask needs dask[distributed]: pip install 'dpn-synth[dask]'"


def _explore(out: Path, *extra: str) -> dict:
    assert main(["explore", *SWEEP, *extra, "-o", str(out)]) == 0
    return json.loads((out / "explore.json").read_text())


def _without_timing(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k not in TIMING} for r in rows]


def _distributed():
    return pytest.importorskip("distributed", reason="dask[distributed] is not installed "
                                                     "(pip install 'dpn-synth[dask]')")


@pytest.fixture(scope="module")
def local_rows(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """The sweep through the local process pool: the reference the Dask runs must equal."""
    data = _explore(tmp_path_factory.mktemp("local"), "--jobs", "2")
    assert data["meta"]["backend"] == "local processes, 2 jobs"
    rows = data["rows"]
    assert [r["config"] for r in rows] == CONFIGS
    assert [r["status"] for r in rows] == ["ok", "skipped", "ok", "ok"]
    assert rows[0]["words_moved"] == rows[0]["compulsory_words"] > 0 and rows[2]["cycles"] > 0
    return rows


@pytest.fixture(scope="module")
def cluster():
    """A running 2-worker LocalCluster for `--scheduler`; a task whose worker dies is not retried
    (allowed-failures 0), so that case takes one worker restart instead of four."""
    distributed = _distributed()
    import dask

    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        c = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                     silence_logs=logging.ERROR)
    try:
        yield c
    finally:
        c.close()


def test_explore_dask_local_cluster_rows_equal_the_local_pool(local_rows, tmp_path):
    _distributed()
    data = _explore(tmp_path / "dask", "--dask", "--jobs", "2")
    assert data["meta"]["backend"] == "dask LocalCluster, 2 workers"
    assert [r["config"] for r in data["rows"]] == CONFIGS
    assert _without_timing(data["rows"]) == _without_timing(local_rows)
    # the figures themselves, not only their equality: the untiled row moves exactly the compulsory words
    none_p1 = data["rows"][0]
    assert none_p1["status"] == "ok" and none_p1["words_moved"] == none_p1["compulsory_words"]
    assert none_p1["compile_s"] > 0 and data["rows"][1]["note"].startswith("--parallel")


def test_explore_scheduler_address_rows_equal_the_local_pool(local_rows, cluster, tmp_path):
    address = cluster.scheduler_address
    assert address.startswith("tcp://127.0.0.1:")
    data = _explore(tmp_path / "sched", "--scheduler", address)
    assert data["meta"]["backend"] == f"dask scheduler {address}"
    assert _without_timing(data["rows"]) == _without_timing(local_rows)
    assert [r["pareto"] for r in data["rows"]] == [r["pareto"] for r in local_rows]


def _die_on_odd(x: int) -> int:
    """A task that kills its worker process (as a crash in native code would) for odd inputs."""
    if x % 2:
        os._exit(7)
    return 10 * x


def test_worker_that_dies_is_a_failed_result_on_dask(cluster):
    results = dict(map_unordered(_die_on_odd, [2, 1, 4], Backend(scheduler=cluster.scheduler_address)))
    assert results[0] == 20 and results[2] == 40
    assert isinstance(results[1], TaskFailed) and results[1].message.startswith("worker process died: ")


def test_worker_that_dies_is_a_failed_result_locally():
    results = dict(map_unordered(_die_on_odd, [2, 1], Backend(jobs=2)))
    assert sorted(results) == [0, 1]
    assert isinstance(results[1], TaskFailed) and results[1].message.startswith("worker process died: ")
    assert results[0] in (20, TaskFailed(results[1].message))  # a broken pool fails what it had not finished


def test_sweep_turns_a_dead_worker_into_an_error_row(monkeypatch):
    tasks = [{"tile": "none", "parallel": 1}, {"tile": "2,4", "parallel": 2}]

    def fake(fn, ts, backend):
        assert fn is ex.run_config and backend == Backend(jobs=2)
        yield 1, TaskFailed("worker process died: killed")
        yield 0, {**ex.new_row("none", 1), "cycles": 5}

    monkeypatch.setattr(ex, "map_unordered", fake)
    seen: list[str] = []
    rows = ex.sweep(tasks, 2, on_row=lambda r: seen.append(r["config"]))
    assert [r["config"] for r in rows] == ["none/p1", "2,4/p2"] and seen == ["2,4/p2", "none/p1"]
    assert rows[0]["cycles"] == 5
    assert rows[1]["status"] == "error" and rows[1]["note"] == "worker process died: killed"


def test_unreachable_scheduler_is_a_usage_error(capsys, tmp_path):
    _distributed()
    import dask

    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        assert main(["explore", *SWEEP, "--scheduler", "tcp://127.0.0.1:9", "-o", str(tmp_path / "ex")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dpn-synth: error: --scheduler tcp://127.0.0.1:9: cannot reach the Dask scheduler")
    assert not (tmp_path / "ex").exists()


@pytest.mark.parametrize("argv,what", [
    (["--scheduler", "localhost"], "--scheduler expects a Dask scheduler address like tcp://HOST:PORT"),
    (["--scheduler", "tcp://host:99999"], "--scheduler expects a Dask scheduler address"),
    (["--dask", "--scheduler", "tcp://h:1"], "argument --scheduler: not allowed with argument --dask"),
])
def test_bad_backend_options_are_one_line_exit_2(argv, what, capsys, tmp_path):
    try:
        rc = main(["explore", str(JACOBI), *argv, "-o", str(tmp_path / "ex")])
    except SystemExit as e:  # argparse's own errors (exclusive options) exit from the parser
        rc = e.code
    assert rc == 2
    err = capsys.readouterr().err
    assert err.startswith("dpn-synth: error: ") and what in err and err.count("\n") == 1


# dask made unimportable in a fresh interpreter: what a machine without the optional extra sees
_HIDE_DASK = ("import sys; sys.modules['dask'] = sys.modules['distributed'] = None; "
              "from hls.cli import main; sys.exit(main(sys.argv[1:]))")


def _without_dask(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", _HIDE_DASK, *argv], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)


@pytest.mark.parametrize("argv,prog,option", [
    (["explore", str(JACOBI), "--dask"], "dpn-synth", "--dask"),
    (["explore", str(JACOBI), "--scheduler", "tcp://127.0.0.1:8786"], "dpn-synth", "--scheduler"),
    (["bench", "--kernels", "jacobi-1d-int", "--dask"], "dpn-synth bench", "--dask"),
])
def test_dask_options_without_dask_exit_2_with_the_install_hint(argv, prog, option, tmp_path):
    p = _without_dask(*argv, *(["-o", str(tmp_path / "ex")] if argv[0] == "explore" else
                              ["--out", str(tmp_path / "ex")]))
    assert p.returncode == 2, p.stderr
    assert p.stderr == f"{prog}: error: {NO_DASK.replace('--dask', option)}\n"
    assert "Traceback" not in p.stderr and not (tmp_path / "ex").exists()


def test_local_pool_needs_no_dask(tmp_path):
    p = _without_dask("explore", *SWEEP[:5], "--tile-sizes", "none", "--parallel", "1", "--no-plot", "-q",
                      "--jobs", "1", "-o", str(tmp_path / "ex"))
    assert p.returncode == 0, p.stderr
    (row,) = json.loads((tmp_path / "ex" / "explore.json").read_text())["rows"]
    assert row["config"] == "none/p1" and row["status"] == "ok"
