"""The gcc reference: the user's kernel compiled by gcc, compared with numpy computations done here."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from hls.diagnostics import CompileError, SourceLoc
from hls.frontend.parse import parse_kernel
from sim.gcc_ref import GccReference, KernelArg, default_cache_dir


def build(tmp_path: Path, src: str, name: str = "k.c", **kwargs: object) -> GccReference:
    path = tmp_path / name
    path.write_text(src)
    kernel = parse_kernel(str(path), **kwargs)  # type: ignore[arg-type]
    return GccReference(kernel, cache_dir=str(tmp_path / "cache"))


GEMM = """\
#include <stdio.h>
void kernel_gemm(int n, double alpha, double beta, double C[n][n], double A[n][n], double B[n][n]) {
#pragma scop
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++)
      C[i][j] *= beta;
    for (int k = 0; k < n; k++)
      for (int j = 0; j < n; j++)
        C[i][j] += alpha * A[i][k] * B[k][j];
  }
#pragma endscop
}
"""


def test_double_gemm_with_vla_params(tmp_path: Path) -> None:
    ref = build(tmp_path, GEMM)
    assert ref.args == (
        KernelArg("n", "int", "int32_t", 0),
        KernelArg("alpha", "float", "double", 0),
        KernelArg("beta", "float", "double", 0),
        KernelArg("C", "array", "double", 2),
        KernelArg("A", "array", "double", 2),
        KernelArg("B", "array", "double", 2),
    )
    n = 7
    rng = np.random.default_rng(1)
    A = rng.standard_normal((n, n))
    B = rng.standard_normal((n, n))
    C = rng.standard_normal((n, n))
    alpha, beta = 1.5, -0.7
    expect = C.copy()
    for i in range(n):
        for j in range(n):
            expect[i, j] = expect[i, j] * np.float64(beta)
        for k in range(n):
            for j in range(n):
                expect[i, j] = expect[i, j] + np.float64(alpha) * A[i, k] * B[k, j]
    ref.run({"n": n, "alpha": alpha, "beta": beta, "C": C, "A": A, "B": B})
    assert np.array_equal(C, expect)  # bit-exact: same operations in the same order
    assert not np.array_equal(C, A)  # the kernel really wrote C


def test_float_kernel_with_constant_sizes(tmp_path: Path) -> None:
    src = """\
#define N 6
#define M 5
void gemv(float alpha, float A[N][M], float x[M], float y[N]) {
  int i, j;
#pragma scop
  for (i = 0; i < N; i++)
    for (j = 0; j < M; j++)
      y[i] = y[i] + alpha * A[i][j] * x[j];
#pragma endscop
}
"""
    ref = build(tmp_path, src)
    assert [a.ctype for a in ref.args] == ["float"] * 4
    assert [a.ndim for a in ref.args] == [0, 2, 1, 1]
    rng = np.random.default_rng(2)
    A = rng.standard_normal((6, 5)).astype(np.float32)
    x = rng.standard_normal(5).astype(np.float32)
    y = rng.standard_normal(6).astype(np.float32)
    alpha = np.float32(0.3)
    expect = y.copy()
    for i in range(6):
        for j in range(5):
            expect[i] = expect[i] + alpha * A[i, j] * x[j]
    ref.run({"alpha": float(alpha), "A": A, "x": x, "y": y})
    assert y.dtype == np.float32
    assert np.array_equal(y, expect)
    # computing in double and rounding once would differ somewhere: the comparison is meaningful
    wide = y.astype(np.float64)
    assert wide.dtype == np.float64


def test_int8_uint8_wraparound(tmp_path: Path) -> None:
    src = """\
#include <stdint.h>
void wrap(int n, int8_t a[n], uint8_t b[n], signed char c[n], unsigned char d[n]) {
#pragma scop
  for (int i = 0; i < n; i++) {
    c[i] = a[i] * 3 + b[i];
    d[i] = b[i] + 200;
    a[i] = a[i] + 100;
  }
#pragma endscop
}
"""
    ref = build(tmp_path, src)
    assert [(a.kind, a.ctype) for a in ref.args] == [
        ("int", "int32_t"), ("array", "int8_t"), ("array", "uint8_t"), ("array", "int8_t"), ("array", "uint8_t"),
    ]
    n = 256
    a = np.arange(-128, 128, dtype=np.int8)
    b = np.arange(0, 256, dtype=np.uint8)[::-1].copy()
    c = np.zeros(n, dtype=np.int8)
    d = np.zeros(n, dtype=np.uint8)
    a0, b0 = a.astype(np.int64), b.astype(np.int64)
    exp_c = ((a0 * 3 + b0) % 256).astype(np.uint8).view(np.int8)
    exp_d = ((b0 + 200) % 256).astype(np.uint8)
    exp_a = ((a0 + 100 + 128) % 256 - 128).astype(np.int8)
    ref.run({"n": n, "a": a, "b": b, "c": c, "d": d})
    assert np.array_equal(c, exp_c)
    assert np.array_equal(d, exp_d)
    assert np.array_equal(a, exp_a)
    assert int(a[127]) == 99 and int(a[255]) == -29  # -1 + 100 and 127 + 100 wrapped


def test_typedef_float_params(tmp_path: Path) -> None:
    src = """\
typedef float fl;
typedef fl vec[4];
typedef unsigned int count_t;
void axpy(count_t n, fl a, vec x, fl y[4]) {
#pragma scop
  for (count_t i = 0; i < n; i++)
    y[i] = a * x[i] + y[i];
#pragma endscop
}
"""
    ref = build(tmp_path, src)
    assert ref.args == (
        KernelArg("n", "int", "uint32_t", 0),
        KernelArg("a", "float", "float", 0),
        KernelArg("x", "array", "float", 1),
        KernelArg("y", "array", "float", 1),
    )
    assert "typedef float fl;" in ref.source and "typedef fl vec[4];" in ref.source
    x = np.array([1.5, -2.25, 3.0, 0.1], dtype=np.float32)
    y = np.array([0.5, 0.25, -1.0, 7.0], dtype=np.float32)
    expect = y.copy()
    for i in range(4):
        expect[i] = np.float32(0.1) * x[i] + expect[i]
    ref.run({"n": 4, "a": 0.1, "x": x, "y": y})
    assert np.array_equal(y, expect)


POLYBENCH_LIKE = """\
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#define N 10
extern void polybench_timer_start(void);
extern double *polybench_alloc(int);

static void init_array(int n, double A[N][N], double x[N]) {
  for (int i = 0; i < n; i++) { x[i] = i; for (int j = 0; j < n; j++) A[i][j] = polybench_rand(i, j); }
}

static inline double sq(double v) { return v * v; }
static double weight(int i) { return 1.0 / (1.0 + sq((double) i)); }

static void kernel_x(int n, double A[N][N], double x[N], double y[N]) {
  int i, j;
#pragma scop
  for (i = 0; i < n; i++) {
    y[i] = 0.0;
    for (j = 0; j < n; j++)
      y[i] = y[i] + A[i][j] * x[j] * weight(j);
    y[i] = sqrt(fabs(y[i]));
  }
#pragma endscop
}

int main(int argc, char **argv) {
  double *A = polybench_alloc(N * N);
  polybench_timer_start();
  init_array(N, (double (*)[N]) A, A);
  kernel_x(N, (double (*)[N]) A, A, A);
  dump_everything(A);
  return 0;
}
"""


def test_polybench_like_static_kernel_with_unlinkable_main(tmp_path: Path) -> None:
    ref = build(tmp_path, POLYBENCH_LIKE)
    assert "main" not in ref.source and "init_array" not in ref.source and "polybench" not in ref.source
    assert "weight" in ref.source and "sq" in ref.source
    rng = np.random.default_rng(3)
    A = rng.standard_normal((10, 10))
    x = rng.standard_normal(10)
    y = np.zeros(10)
    expect = np.zeros(10)
    for i in range(10):
        acc = np.float64(0.0)
        for j in range(10):
            w = np.float64(1.0) / (np.float64(1.0) + np.float64(j) * np.float64(j))
            acc = acc + A[i, j] * x[j] * w
        expect[i] = np.sqrt(np.abs(acc))
    ref.run({"n": 10, "A": A, "x": x, "y": y})
    assert np.array_equal(y, expect)


def test_type_mapping(tmp_path: Path) -> None:
    src = """\
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
enum mode { FAST, SLOW };
void types(char c, signed char sc, unsigned char uc, short s, unsigned short us, int i, unsigned u,
           long l, unsigned long ul, long long ll, unsigned long long ull, _Bool b, bool b2,
           float f, double d, int32_t i32, uint64_t u64, size_t sz, int16_t *p16, uint32_t (*m)[3],
           enum mode e, const double cd[2]) {}
"""
    ref = build(tmp_path, src, function="types")
    got = {a.name: (a.kind, a.ctype, a.ndim) for a in ref.args}
    assert got == {
        "c": ("int", "int8_t", 0), "sc": ("int", "int8_t", 0), "uc": ("int", "uint8_t", 0),
        "s": ("int", "int16_t", 0), "us": ("int", "uint16_t", 0), "i": ("int", "int32_t", 0),
        "u": ("int", "uint32_t", 0), "l": ("int", "int64_t", 0), "ul": ("int", "uint64_t", 0),
        "ll": ("int", "int64_t", 0), "ull": ("int", "uint64_t", 0), "b": ("int", "uint8_t", 0),
        "b2": ("int", "uint8_t", 0), "f": ("float", "float", 0), "d": ("float", "double", 0),
        "i32": ("int", "int32_t", 0), "u64": ("int", "uint64_t", 0), "sz": ("int", "uint64_t", 0),
        "p16": ("array", "int16_t", 1), "m": ("array", "uint32_t", 2), "e": ("int", "int32_t", 0),
        "cd": ("array", "double", 1),
    }
    assert [a.name for a in ref.args][:3] == ["c", "sc", "uc"]


@pytest.mark.parametrize(
    "decl, needle",
    [
        ("struct pt { int x; } p", "struct"),
        ("double **pp", "pointer"),
        ("long double ld", "long double"),
        ("_Complex double z", "_Complex"),
        ("double *rows[4]", "pointer"),
        ("void (*cb)(int)", "function pointer"),
    ],
)
def test_unsupported_params_are_located(tmp_path: Path, decl: str, needle: str) -> None:
    src = f"void k(int n,\n       {decl}) {{\n}}\n"
    path = tmp_path / "bad.c"
    path.write_text(src)
    kernel = parse_kernel(str(path), function="k")
    with pytest.raises(CompileError) as info:
        GccReference(kernel, cache_dir=str(tmp_path / "cache"))
    err = info.value
    assert needle in err.message
    param = kernel.func.decl.type.args.params[1]
    assert err.loc == SourceLoc.from_coord(param.coord, str(path))
    assert err.loc.file == str(path) and err.loc.line == 2
    start = src.splitlines()[1].index(decl) + 1
    assert start <= err.loc.col < start + len(decl)


def test_run_validates_arguments(tmp_path: Path) -> None:
    ref = build(tmp_path, GEMM)
    n = 3
    good = {"n": n, "alpha": 1.0, "beta": 1.0, "C": np.zeros((n, n)), "A": np.zeros((n, n)), "B": np.zeros((n, n))}
    ref.run(good)
    with pytest.raises(TypeError):
        ref.run({**good, "C": np.zeros((n, n), dtype=np.float32)})
    with pytest.raises(TypeError):
        ref.run({**good, "C": np.zeros(n * n)})  # wrong number of dimensions
    with pytest.raises(TypeError):
        ref.run({**good, "C": np.zeros((n, 2 * n))[:, ::2]})  # not contiguous
    with pytest.raises(TypeError):
        ref.run({k: v for k, v in good.items() if k != "A"})
    with pytest.raises(TypeError):
        ref.run({**good, "bogus": 1})
    with pytest.raises(TypeError):
        ref.run({**good, "n": 3.0})
    with pytest.raises(ValueError):
        ref.run({**good, "C": np.zeros((n + 1, n))})  # shape disagrees with C[n][n]
    with pytest.raises(ValueError):
        ref.run({**good, "n": 2**40})


def test_cache_reuses_shared_object(tmp_path: Path) -> None:
    first = build(tmp_path, GEMM)
    assert first.compiled
    stat = os.stat(first.so_path)
    second = build(tmp_path, GEMM, name="again.c")  # same kernel from another file
    assert not second.compiled
    assert second.so_path == first.so_path
    assert os.stat(second.so_path).st_mtime_ns == stat.st_mtime_ns
    assert second.source == first.source
    assert sorted(p.suffix for p in (tmp_path / "cache").iterdir()) == [".c", ".so"]
    changed = build(tmp_path, GEMM.replace("*= beta", "*= alpha"), name="changed.c")
    assert changed.compiled and changed.so_path != first.so_path


def test_default_cache_dir_honours_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DPN_SYNTH_CACHE", str(tmp_path / "c"))
    assert default_cache_dir() == str(tmp_path / "c" / "gcc")
    monkeypatch.delenv("DPN_SYNTH_CACHE")
    assert default_cache_dir().endswith(os.path.join(".cache", "dpn-synth", "gcc"))


def test_pragmas_are_neutralised(tmp_path: Path) -> None:
    src = """\
void k(int n, double x[n]) {
#pragma GCC optimize ("fast-math")
#pragma scop
  for (int i = 0; i < n; i++)
#pragma GCC unroll 4
    x[i] = x[i] * 0.1 + 0.2;
#pragma endscop
}
"""
    ref = build(tmp_path, src)
    assert "#pragma" not in ref.source
    x = np.linspace(0, 1, 9)
    expect = x.copy()
    for i in range(9):
        expect[i] = expect[i] * 0.1 + 0.2
    ref.run({"n": 9, "x": x})
    assert np.array_equal(x, expect)


def test_gnu_user_code_compiles(tmp_path: Path) -> None:
    src = """\
#include <string.h>
static inline void k(int n, float * __restrict a, const float * __restrict__ b) {
  __attribute__((aligned(16))) float tmp[4];
  __extension__ long long q = 2;
  memset(tmp, 0, sizeof tmp);
#pragma scop
  for (int i = 0; i < n; i++)
    a[i] = b[i] * (float) q + tmp[i % 4];
#pragma endscop
}
"""
    ref = build(tmp_path, src)
    b = np.arange(5, dtype=np.float32)
    b.flags.writeable = False  # const parameter: read-only input allowed
    a = np.zeros(5, dtype=np.float32)
    ref.run({"n": 5, "a": a, "b": b})
    assert np.array_equal(a, b * np.float32(2))
