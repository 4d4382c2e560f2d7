"""isl dataflow checked against brute-force enumeration of the iteration space."""

from __future__ import annotations

import islpy as isl
import pytest

from hls.frontend import load_kernel
from hls.poly import isl_utils as iu
from hls.poly.interpret import access_table, instances_in_order
from tests.kernels import EXAMPLES, example_params, ids

SMALL = [p for p in EXAMPLES if p.stem in {
    "gemm", "jacobi-1d", "seidel-2d", "lu", "trisolv", "cholesky", "floyd-warshall", "tri-sum", "row-normalize",
    "back-subst", "redblack-2d", "band-mask", "symm", "fdtd-2d"}]
SIZES = {"gemm": ["NI=4", "NJ=5", "NK=3"], "jacobi-1d": ["T=3", "N=7"], "seidel-2d": ["T=2", "N=6"],
         "lu": ["N=6"], "cholesky": ["N=6"], "floyd-warshall": ["N=5"], "tri-sum": ["N=7"], "redblack-2d": ["T=2", "N=7"],
         "band-mask": ["N=7"], "symm": ["M=4", "N=5"], "fdtd-2d": ["TMAX=2", "NX=5", "NY=4"], "back-subst": ["N=6"],
         "row-normalize": ["M=4", "N=5"]}


def brute_force(program):
    """Replay the schedule; return (source of each read instance, live-in reads, last writers)."""
    tables = {}
    for s in program.statements:
        tables[s.write.id] = access_table(s.write.relation)
        for r in s.reads:
            tables[r.id] = access_table(r.relation)
    last: dict = {}
    deps, live_in = set(), set()
    for _t, name, it in instances_in_order(program):
        st = program.statement(name)
        for r in st.reads:
            elem = (r.array, tables[r.id][it])
            if elem in last:
                deps.add((last[elem][0], last[elem][1], r.id, it))
            else:
                live_in.add((r.id, it))
        last[(st.write.array, tables[st.write.id][it])] = (name, it)
    live_out = {(w, it) for (arr, _e), (w, it) in last.items() if program.arrays[arr].is_arg}
    return deps, live_in, live_out


def from_isl(program):
    deps = set()
    for d in program.flow.dependences:
        n = d.relation.dim(isl.dim_type.in_)
        for p in iu.map_pairs(d.relation).tolist():
            deps.add((d.source, tuple(p[:n]), d.sink_access, tuple(p[n:])))
    live_in = set()
    for rid, m in program.flow.live_in.items():
        n = m.dim(isl.dim_type.in_)
        live_in |= {(rid, tuple(p[:n])) for p in iu.map_pairs(m).tolist()}
    live_out = set()
    for wid, m in program.flow.live_out.items():
        n = m.dim(isl.dim_type.in_)
        live_out |= {(wid.split(".")[0], tuple(p[:n])) for p in iu.map_pairs(m).tolist()}
    return deps, live_in, live_out


@pytest.mark.parametrize("path", SMALL, ids=ids(SMALL))
def test_dataflow_equals_enumeration(path):
    _, program = load_kernel(str(path), defines=SIZES.get(path.stem, []), params=example_params(path))
    bf_deps, bf_in, bf_out = brute_force(program)
    deps, live_in, live_out = from_isl(program)
    assert deps == bf_deps
    assert live_in == bf_in
    assert live_out == bf_out
    assert deps, "expected some producer -> consumer dependences"


def test_gemm_dependences_exact(tmp_path):
    src = tmp_path / "g.c"
    src.write_text("void g(double C[3][4], double A[3][2], double B[2][4]) {\n#pragma scop\n"
                   " for (int i = 0; i < 3; i++) for (int j = 0; j < 4; j++) {\n  C[i][j] = 0.0;\n"
                   "  for (int k = 0; k < 2; k++) C[i][j] += A[i][k] * B[k][j];\n }\n#pragma endscop\n}\n")
    _, p = load_kernel(str(src))
    rel = {(d.source, d.sink_access): d.relation for d in p.flow.dependences}
    assert set(rel) == {("S0", "S1.r2"), ("S1", "S1.r2")}
    assert rel[("S0", "S1.r2")].is_equal(isl.Map("{ S0[i, j] -> S1[i, j, 0] : 0 <= i < 3 and 0 <= j < 4 }"))
    assert rel[("S1", "S1.r2")].is_equal(isl.Map("{ S1[i, j, k] -> S1[i, j, k + 1] : 0 <= i < 3 and 0 <= j < 4 and k = 0 }"))
    assert set(p.flow.live_in) == {"S1.r0", "S1.r1"}
    assert p.flow.live_out["S1.w"].is_equal(isl.Map("{ S1[i, j, 1] -> C[i, j] : 0 <= i < 3 and 0 <= j < 4 }"))
