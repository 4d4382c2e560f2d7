"""`bench.scaling`'s size knobs: which macros and parameters it scales."""

from bench import scaling
from bench.scaling import knob_values, size_knobs
from tests.kernels import ROOT


def test_a_knob_behind_a_derived_macro_is_scaled():
    """lifting-53's loops run to N = 4K + 1: scaling the kernel scales K, which keeps N valid."""
    knobs = size_knobs(ROOT / "examples" / "lifting-53.c")
    assert knobs["scaled"] == ["M", "K"] and knobs["fixed"] == []
    assert knob_values(knobs, 2.0) == {"M": 12, "K": 16}


def test_a_macro_outside_the_loop_bounds_stays_fixed(tmp_path):
    src = tmp_path / "k.c"
    src.write_text("#ifndef N\n#define N 10\n#endif\n#ifndef SCALE\n#define SCALE 3\n#endif\n"
                   "void k(int a[N]) {\n  int i;\n#pragma scop\n  for (i = 0; i < N; i++)\n"
                   "    a[i] = a[i] * SCALE;\n#pragma endscop\n}\n")
    knobs = size_knobs(src)
    assert knobs["scaled"] == ["N"] and knobs["fixed"] == ["SCALE"]


def test_a_scaled_knob_keeps_the_factor_of_two_of_its_own_value():
    knobs = {"macros": {"n": 32, "m": 8, "t": 4, "k": 5, "r": 2}, "params": {}, "scaled": ["n", "m", "t", "k", "r"],
             "fixed": []}
    vals = knob_values(knobs, 127 / 32)  # n -> 127 would make `d[i / 2]` over i < n write out of bounds
    assert vals == {"n": 128, "m": 32, "t": 16, "k": 20, "r": 8}
    assert knob_values(knobs, 1.36)["t"] == 5  # a small knob keeps growing: its step is at most a quarter
    assert knob_values(knobs, 0.01) == {"n": 8, "m": 2, "t": 1, "k": 1, "r": 1}


def test_children_run_from_compiled_bytecode(tmp_path, monkeypatch):
    """The measured compiles may read and write bytecode, whatever the caller's environment says, and
    the measured tree is compiled before any row."""
    from bench.scaling import child_env, warm_bytecode

    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    env = child_env(tmp_path)
    assert "PYTHONDONTWRITEBYTECODE" not in env and env["PYTHONPATH"] == str(tmp_path)
    (tmp_path / "hls").mkdir()
    (tmp_path / "hls" / "m.py").write_text("X = 1\n")
    assert warm_bytecode(tmp_path)
    assert list((tmp_path / "hls" / "__pycache__").glob("m.*.pyc"))


def test_the_benchmark_style_kernels_have_knobs_that_scale():
    """`--kernel-dir bench/kernels`: every kernel there is a C99 file whose loop bounds are knobs the
    bench can scale (an `#ifndef` default), so that its levels grow the problem."""
    import subprocess

    kernels = sorted((ROOT / "bench" / "kernels").glob("*.c"))
    assert len(kernels) >= 10
    for k in kernels:
        assert size_knobs(k)["scaled"], k.name
        r = subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-Wno-unknown-pragmas", "-fsyntax-only",
                            str(k)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr


def test_repeat_keeps_the_fastest_successful_compile(monkeypatch):
    """`--repeat K`: up to K compiles of a row, the least CPU seconds kept; a row that did not compile
    is not compiled again."""
    from types import SimpleNamespace
    runs = iter([{"status": "ok", "cpu_s": 3.0}, {"status": "ok", "cpu_s": 2.5}, {"status": "timeout", "cpu_s": 0.1},
                 {"status": "ok", "cpu_s": 2.9}])
    calls = []
    monkeypatch.setattr(scaling, "_compile_once", lambda *a: calls.append(a) or next(runs))
    row = scaling.compile_row(None, None, "auto", [], SimpleNamespace(repeat=4))
    assert row["cpu_s"] == 2.5 and len(calls) == 4  # the timed-out third run is not kept
    monkeypatch.setattr(scaling, "_compile_once", lambda *a: calls.append(a) or {"status": "timeout", "cpu_s": 9.0})
    assert scaling.compile_row(None, None, "auto", [], SimpleNamespace(repeat=3))["status"] == "timeout"
    assert len(calls) == 5  # once only
