"""The bounded build cache (`hls/cache.py`): budget, LRU eviction, entries in use, `dpn-synth cache`.

Fast tests work on fake entries (directories and records with chosen sizes and mtimes) in a private
``$DPN_SYNTH_CACHE``; `test_real_verilator_build_*` makes one small Verilator build.
"""

from __future__ import annotations

import gc
import json
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hls import cache
from hls.cli import main
from hls.diagnostics import UsageError

REPO_ROOT = Path(__file__).resolve().parents[1]
MB = 1024 * 1024


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private cache root; no budget or Yosys override from the caller's environment."""
    path = tmp_path / "cache-root"
    monkeypatch.setenv("DPN_SYNTH_CACHE", str(path))
    monkeypatch.delenv("DPN_SYNTH_CACHE_MAX", raising=False)
    monkeypatch.delenv("DPN_SYNTH_YOSYS_CACHE", raising=False)
    return path


def fake_build(d: Path, key: str, size: int, mtime: float) -> Path:
    """A published build directory of *size* bytes last used at *mtime*, with its lock file."""
    entry = d / key
    entry.mkdir(parents=True)
    (entry / "dpn_build.json").write_text("{}")
    (entry / "model").write_bytes(b"\0" * (size - 2))
    (d / f"{key}.lock").touch()
    os.utime(entry, (mtime, mtime))
    return entry


def fake_record(d: Path, key: str, size: int, mtime: float) -> Path:
    path = d / key[:2] / f"{key}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b" " * size)
    os.utime(path, (mtime, mtime))
    return path


def names(d: Path) -> list[str]:
    """The entries of a cache directory, without the files its builds share (`cache.SHARED_DIR`)."""
    return sorted(p.name for p in d.iterdir() if p.name != cache.SHARED_DIR)


# --------------------------------------------------------------------------------------------------
# configuration


@pytest.mark.parametrize(("text", "expected"), [
    ("0", 0), ("123", 123), ("100B", 100), ("64k", 64 * 1024), ("500M", 500 * MB), ("2G", 2 * 1024**3),
    ("2GiB", 2 * 1024**3), ("1.5g", 3 * 1024**3 // 2), ("1T", 1024**4), (" 7 MB ", 7 * MB),
])
def test_parse_size(text: str, expected: int) -> None:
    assert cache.parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "abc", "-1", "2X", "1.2.3", "G", "5 M B", "1e9"])
def test_parse_size_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        cache.parse_size(text)


def test_budget_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DPN_SYNTH_CACHE_MAX", raising=False)
    assert cache.max_bytes() == cache.DEFAULT_MAX_BYTES == 2 * 1024**3
    monkeypatch.setenv("DPN_SYNTH_CACHE_MAX", "500M")
    assert cache.max_bytes() == 500 * MB
    monkeypatch.setenv("DPN_SYNTH_CACHE_MAX", "lots")
    with pytest.raises(cache.CacheConfigError, match=r"DPN_SYNTH_CACHE_MAX='lots' is not a size.*500M, 2G") as e:
        cache.max_bytes()
    assert isinstance(e.value, UsageError)  # the command line: `dpn-synth: error: ...`, exit 2


def test_directories(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hls.estimate import cache_dir
    from sim.rtl_runner import default_cache_root

    assert cache.cache_root() == root
    assert default_cache_root() == root / "verilator" and cache_dir() == root / "yosys"
    assert [k for k, _ in cache.root_scope().dirs] == ["verilator", "yosys", "pnr"]
    assert cache.scope_for("verilator", root / "verilator") == cache.root_scope()
    elsewhere = tmp_path / "mine"
    assert cache.scope_for("verilator", elsewhere) == cache.Scope(elsewhere, (("verilator", elsewhere),))
    monkeypatch.setenv("DPN_SYNTH_YOSYS_CACHE", str(tmp_path / "y"))
    assert cache_dir() == tmp_path / "y"  # still honoured, with a budget of its own
    assert [k for k, _ in cache.root_scope().dirs] == ["verilator", "pnr"]
    monkeypatch.delenv("DPN_SYNTH_CACHE")
    assert cache.cache_root() == Path.home() / ".cache" / "dpn-synth"


# --------------------------------------------------------------------------------------------------
# eviction


def test_eviction_beyond_budget_in_lru_order(root: Path) -> None:
    d = root / "verilator"
    for i, key in enumerate("abcd"):
        fake_build(d, key, MB, 1000.0 + 10 * i)
    ydir = root / "yosys"
    fake_record(ydir, "ee11", MB, 1005.0)  # between a and b
    assert cache.evict(cache.root_scope(), 10 * MB).removed == []  # within budget: nothing happens

    result = cache.evict(cache.root_scope(), int(2.5 * MB))
    assert [e.path.name for e in result.removed] == ["a", "ee11.json", "b"]
    assert result.bytes_before == 5 * MB and result.bytes_after == 2 * MB and not result.in_use
    assert names(d) == ["c", "c.lock", "d", "d.lock"]  # whole entries, lock files included
    assert not (ydir / "ee" / "ee11.json").exists()


def test_place_and_route_entries_are_bounded_too(root: Path) -> None:
    """`hls.pnr` keeps directories with lock files beside them under ``pnr/``, like builds."""
    fake_build(root / "pnr", "p1", MB, 1000.0)
    fake_build(root / "verilator", "v1", MB, 2000.0)
    result = cache.after_publish("pnr", root / "pnr", MB)
    assert [(e.kind, e.path.name) for e in result.removed] == [("pnr", "p1")]
    assert names(root / "pnr") == [] and names(root / "verilator") == ["v1", "v1.lock"]


def test_eviction_after_publish_uses_environment_budget(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    d = root / "verilator"
    fake_build(d, "old", MB, 1000.0)
    fake_build(d, "new", MB, 2000.0)
    monkeypatch.setenv("DPN_SYNTH_CACHE_MAX", "1.5M")
    cache.after_publish("verilator", d)
    assert names(d) == ["new", "new.lock"]


def test_hit_refreshes_recency(root: Path) -> None:
    d = root / "verilator"
    a = fake_build(d, "a", MB, 1000.0)
    fake_build(d, "b", MB, 2000.0)
    cache.touch(a)  # what a cache hit does: a is now the most recently used
    cache.evict(cache.root_scope(), MB)
    assert names(d) == ["a", "a.lock"]


def test_yosys_hit_refreshes_and_store_evicts(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through `hls.estimate.run_stat` with a stand-in Yosys: hits touch the record, stores evict."""
    from hls import estimate

    fake = tmp_path / "fake_yosys.py"
    fake.write_text("import json, sys\n"
                    "if '-V' in sys.argv: print('Yosys 0.0 (fake)')\n"
                    "else: json.dump({'pad': 'x' * 4000}, open('stat.json', 'w'))\n")
    cmd = [sys.executable, str(fake)]
    first, cached, _ = estimate.run_stat({"a.v": "module a; endmodule\n"}, "a", yosys=cmd)
    assert not cached
    (rec_a,) = (root / "yosys").rglob("*.json")
    os.utime(rec_a, (1000.0, 1000.0))
    assert estimate.run_stat({"a.v": "module a; endmodule\n"}, "a", yosys=cmd)[1]  # a hit...
    assert rec_a.stat().st_mtime > 1000.0  # ...refreshes the record's recency
    size = rec_a.stat().st_size
    monkeypatch.setenv("DPN_SYNTH_CACHE_MAX", str(size + size // 2))  # room for one record
    os.utime(rec_a, (1000.0, 1000.0))
    estimate.run_stat({"b.v": "module b; endmodule\n"}, "b", yosys=cmd)  # publishes b: a (older) goes
    (rec_b,) = (root / "yosys").rglob("*.json")
    assert rec_b != rec_a and not rec_a.exists()
    monkeypatch.setenv("DPN_SYNTH_CACHE_MAX", "two gigs")
    with pytest.raises(cache.CacheConfigError):
        estimate.run_stat({"a.v": "module a; endmodule\n"}, "a", yosys=cmd)


def test_entry_in_use_is_never_evicted(root: Path) -> None:
    d = root / "verilator"
    fake_build(d, "a", MB, 1000.0)
    fake_build(d, "b", MB, 2000.0)
    pin = cache.pin_entry(d / "a.lock")
    again = cache.pin_entry(d / "a.lock")  # a second handle in this process shares the lock
    result = cache.evict(cache.root_scope(), 0)
    assert [e.path.name for e in result.in_use] == ["a"] and [e.path.name for e in result.removed] == ["b"]
    assert names(d) == ["a", "a.lock"] and result.bytes_after == MB  # over budget, still kept
    pin.release()
    cache.evict(cache.root_scope(), 0)
    assert names(d) == ["a", "a.lock"], "the other handle still uses it"
    del again
    gc.collect()  # a garbage-collected pin releases the entry
    cache.evict(cache.root_scope(), 0)
    assert names(d) == []


def test_entry_being_built_is_never_evicted(root: Path) -> None:
    d = root / "verilator"
    fake_build(d, "a", MB, 1000.0)
    with cache.Exclusive(d / "a.lock"):
        assert cache.evict(cache.root_scope(), 0).in_use[0].path.name == "a"
        assert names(d) == ["a", "a.lock"]
    cache.evict(cache.root_scope(), 0)
    assert names(d) == []


def test_pin_held_by_another_process(root: Path) -> None:
    """pytest-xdist workers and `dpn-synth sim` processes share the cache: another process's use counts."""
    d = root / "verilator"
    fake_build(d, "a", MB, 1000.0)
    code = textwrap.dedent(f"""
        import sys
        from hls import cache
        pin = cache.pin_entry({str(d / 'a.lock')!r})
        print("pinned", flush=True)
        sys.stdin.readline()
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=REPO_ROOT, env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "pinned"
        assert cache.evict(cache.root_scope(), 0).removed == []
        assert names(d) == ["a", "a.lock"]
    finally:
        proc.communicate("\n", timeout=60)
    cache.evict(cache.root_scope(), 0)
    assert names(d) == []


def test_pickled_pin_pins_again(root: Path) -> None:
    d = root / "verilator"
    fake_build(d, "a", MB, 1000.0)
    pin = cache.pin_entry(d / "a.lock")
    copy = pickle.loads(pickle.dumps(pin))
    pin.release()
    assert copy.live and cache.evict(cache.root_scope(), 0).in_use
    copy.release()
    assert not cache.pinned_here(d / "a.lock")


def test_debris_of_killed_processes_is_swept(root: Path) -> None:
    d = root / "verilator"
    fake_build(d, "a", MB, 1000.0)
    (d / ".k.tmp-x1").mkdir()  # a builder killed mid-build
    (d / "k.lock").touch()
    (d / "gone.lock").touch()  # a build that failed
    (d / ".evicted-z-1").mkdir()  # an eviction killed mid-way
    (d / ".busy.tmp-x2").mkdir()  # a builder at work: left alone
    with cache.Exclusive(d / "busy.lock"):
        cache.evict(cache.root_scope(), 10 * MB)
        assert names(d) == [".busy.tmp-x2", "a", "a.lock", "busy.lock"]


def test_lock_file_deleted_under_a_waiter(root: Path) -> None:
    """A pin waiting on a lock file that the eviction holding it then deletes must not end up locking
    the deleted file (nobody else would see that lock): it locks the file now at that path."""
    import fcntl
    import threading
    import time

    d = root / "verilator"
    fake_build(d, "a", MB, 1000.0)
    lock_path = d / "a.lock"
    got: list[cache.Pin] = []
    with cache.Exclusive(lock_path):  # stands for an eviction in progress
        waiter = threading.Thread(target=lambda: got.append(cache.pin_entry(lock_path)))
        waiter.start()
        time.sleep(0.3)
        assert not got, "a shared lock was granted during an exclusive one"
        os.unlink(lock_path)
    waiter.join(10)
    assert got and lock_path.exists()
    fd = cache._open_locked(str(lock_path), fcntl.LOCK_EX | fcntl.LOCK_NB)
    assert fd is None, "the pin holds a lock on a deleted file"
    got[0].release()
    assert cache.evict(cache.root_scope(), 0).removed[0].path.name == "a"


# --------------------------------------------------------------------------------------------------
# rtl_runner: hits pin and refresh, publication evicts


def _fake_published(src: Path, top: str, root: Path, mtime: float) -> Path:
    """A build directory under the key `build_verilator` computes, so a request is a cache hit."""
    from sim.rtl_runner import BUILD_MARKER, build_key

    assert BUILD_MARKER == "dpn_build.json"  # what fake_build writes
    return fake_build(root, build_key([src.resolve()], top), MB, mtime)


def test_rtl_runner_hit_pins_and_refreshes(root: Path, tmp_path: Path) -> None:
    from sim.rtl_runner import build_verilator, default_cache_root

    src = tmp_path / "top.v"
    src.write_text("module top; endmodule\n")
    d = default_cache_root()
    entry = _fake_published(src, "top", d, 1000.0)
    fake_build(d, "other", MB, 2000.0)
    build = build_verilator([src], "top")
    assert build.build_dir == entry and not build.fresh and build.pin is not None
    assert entry.stat().st_mtime > 2000.0  # the hit made it the most recently used
    assert cache.evict(cache.root_scope(), 0).in_use[0].path == entry  # and it is in use
    assert names(d) == [entry.name, f"{entry.name}.lock"]
    del build
    gc.collect()
    cache.evict(cache.root_scope(), 0)
    assert names(d) == []


@pytest.mark.slow
def test_real_verilator_build_publishes_then_evicts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One real build in a private cache with a 1-byte budget: publishing evicts an older entry, never
    the new build while its handle lives; the handle gone, the next eviction takes it."""
    from hls.rtl.render import render_to_file
    from sim.rtl_runner import BUILD_MARKER, build_verilator

    monkeypatch.setenv("DPN_SYNTH_CACHE_MAX", "1")
    src = render_to_file(tmp_path / "dpn_fifo.v", "fifo.v.j2", module_name="dpn_fifo", width=8, depth=4)
    d = tmp_path / "verilator-cache"
    fake_build(d, "older", MB, 1000.0)
    build = build_verilator([src], "dpn_fifo", parameters={"WIDTH": 8, "DEPTH": 2}, cache_root=d)
    assert build.fresh and (build.build_dir / BUILD_MARKER).is_file() and build.executable.is_file()
    assert not list(build.build_dir.rglob("*.gch")), "precompiled headers (most of a build's size) kept"
    assert names(d) == [build.key, f"{build.key}.lock"], "the older entry was not evicted"
    again = build_verilator([src], "dpn_fifo", parameters={"WIDTH": 8, "DEPTH": 2}, cache_root=d)
    assert again == build and not again.fresh  # over budget, but in use: kept and reused
    key = build.key
    del build, again
    gc.collect()
    result = cache.evict(cache.scope_for("verilator", d))
    assert [e.path.name for e in result.removed] == [key] and names(d) == []


# --------------------------------------------------------------------------------------------------
# dpn-synth cache


def test_cli_info(root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    fake_build(root / "verilator", "a", MB, 1000.0)
    fake_build(root / "verilator", "b", 2 * MB, 2000.0)
    fake_record(root / "yosys", "ab12", 1024, 1000.0)
    (root / "gcc").mkdir()
    (root / "gcc" / "ref-1.so").write_bytes(b"x" * 100)
    (root / "gcc" / "ref-1.c").write_bytes(b"x" * 20)
    monkeypatch.setenv("DPN_SYNTH_CACHE_MAX", "500M")
    assert main(["cache", "--info"]) == 0
    out = capsys.readouterr().out
    assert f"cache root: {root}" in out and "budget:     500.0M (DPN_SYNTH_CACHE_MAX)" in out
    lines = {ln.split()[0]: ln for ln in out.splitlines() if ln.startswith("  ")}
    assert lines["verilator"].split()[1:4] == ["2", "entries", "3.0M"]
    assert lines["yosys"].split()[1:4] == ["1", "entries", "1.0K"]
    assert lines["gcc"].split()[1:4] == ["1", "entries", "120B"] and "not bounded" in lines["gcc"]
    assert "of 500.0M" in out
    info = cache.info()
    assert {k["kind"]: k["entries"] for k in info["kinds"]} == {"verilator": 2, "yosys": 1, "pnr": 0, "gcc": 1}


def test_cli_clear_skips_entries_in_use(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = root / "verilator"
    fake_build(d, "a", MB, 1000.0)
    fake_build(d, "b", MB, 2000.0)
    fake_record(root / "yosys", "ab12", 1024, 1000.0)
    (root / "gcc").mkdir()
    (root / "gcc" / "ref-1.so").write_bytes(b"x" * 100)
    pin = cache.pin_entry(d / "b.lock")
    assert main(["cache", "--clear"]) == 0
    out = capsys.readouterr().out
    assert "removed 3 entries" in out and "skipped 1 entries in use" in out and str(d / "b") in out
    assert names(d) == ["b", "b.lock"] and not list((root / "yosys").rglob("*.json"))
    assert names(root / "gcc") == []
    pin.release()
    assert main(["cache", "--clear"]) == 0
    assert "removed 1 entries" in capsys.readouterr().out and names(d) == []


def test_cli_usage_errors(root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    assert main(["cache", "--info"]) == 0  # an empty (missing) cache is fine
    assert "0 entries" in capsys.readouterr().out
    monkeypatch.setenv("DPN_SYNTH_CACHE_MAX", "12Q")
    assert main(["cache", "--info"]) == 2
    assert "error: DPN_SYNTH_CACHE_MAX='12Q' is not a size" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["cache"])
    assert e.value.code == 2 and "--info --clear" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["cache", "--info", "--clear"])


def test_info_json_shape(root: Path) -> None:
    data = cache.info()
    json.dumps(data)  # plain data, ready for a --json flag
    assert data["root"] == str(root) and data["budget"] == cache.DEFAULT_MAX_BYTES
