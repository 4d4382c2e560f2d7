"""Monoparametric tiling (habilitation 2.2) against fixed-size isl tiling, and closed forms in b.

The monoparametric objects keep b (and the tiled parameters N_b, N_l) symbolic; instantiating b and
turning (N_b, N_l) back into N must give exactly the fixed-size tiling built with isl floor divisions,
for every b.  The closed forms are checked against formulas derived by hand."""

from __future__ import annotations

from fractions import Fraction

import islpy as isl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hls.dpn import monoparametric as mp

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

coef = st.integers(-2, 2)


def _no_divs(obj) -> bool:
    parts = obj.get_basic_sets() if isinstance(obj, isl.Set) else obj.get_basic_maps()
    return all(p.dim(isl.dim_type.div) == 0 for p in parts)


@st.composite
def polyhedra(draw) -> isl.Set:
    """A small bounded (for fixed N) set: a box, 0-2 random affine constraints, optionally the
    parameter N in a bound (symbolic or fixed), an equality, or an existential (stride)."""
    n = draw(st.integers(1, 3))
    names = ["i", "j", "k"][:n]
    cons = []
    use_n = draw(st.booleans())
    for v in names:
        lo = draw(st.integers(-4, 2))
        hi = draw(st.integers(lo, lo + 10))
        cons.append(f"{lo} <= {v}")
        cons.append(f"{v} <= N + {hi - 6}" if use_n and draw(st.booleans()) else f"{v} <= {hi}")
    for _ in range(draw(st.integers(0, 2))):
        terms = [f"{draw(coef)}*{v}" for v in names] + ([f"{draw(coef)}*N"] if use_n else [])
        cons.append(" + ".join(terms) + f" + {draw(st.integers(-6, 10))} >= 0")
    if n >= 2 and draw(st.integers(0, 4)) == 0:
        cons.append(f"{names[0]} = {draw(st.integers(1, 2))}*{names[1]} + {draw(st.integers(-2, 2))}")
    if use_n:
        cons.append("0 <= N <= 12")
        if draw(st.booleans()):
            cons.append(f"N = {draw(st.integers(0, 12))}")
    body = " and ".join(cons)
    if draw(st.integers(0, 4)) == 0:
        m = draw(st.integers(2, 3))
        body = f"exists (e : {names[-1]} = {m}*e + {draw(st.integers(0, m - 1))} and {body})"
    params = "[N] -> " if use_n else ""
    return isl.Set(f"{params}{{ S[{', '.join(names)}] : {body} }}")


def ratios_for(n: int):
    return st.lists(st.integers(1, 3), min_size=n, max_size=n)


@SETTINGS
@given(data=st.data())
def test_tile_domain_equals_fixed_size_tiling(data):
    D = data.draw(polyhedra())
    n = D.dim(isl.dim_type.set)
    ratios = data.draw(ratios_for(n))
    T = mp.tile_domain(D, ratios)
    assert T.find_dim_by_name(isl.dim_type.param, "b") >= 0
    if D.get_basic_sets() and all(bs.dim(isl.dim_type.div) == 0 for bs in D.get_basic_sets()):
        assert _no_divs(T)  # Theorem 2.8: a union of polyhedra, no division by b
    assert mp.tile_domain(D, ratios, coalesce=False).is_equal(T)
    for b in data.draw(st.lists(st.integers(1, 8), min_size=1, max_size=3, unique=True)):
        got = mp.instantiate(T, b)
        want = mp.fixed_tile_domain(D, [b * r for r in ratios])
        assert got.is_equal(want), (str(D), ratios, b, str(got), str(want))


@st.composite
def affine_functions(draw) -> isl.MultiAff:
    n = draw(st.integers(1, 3))
    p = draw(st.integers(1, 2))  # outputs are tiled independently; 3 only multiplies the branches
    ins = ["i", "j", "k"][:n]
    use_n = draw(st.booleans())
    outs = []
    for _ in range(p):
        terms = [f"{draw(coef)}*{v}" for v in ins]
        if use_n:
            terms.append(f"{draw(st.integers(-1, 1))}*N")
        outs.append(" + ".join(terms) + f" + {draw(st.integers(-5, 5))}")
    params = "[N] -> " if use_n else ""
    return isl.MultiAff(f"{params}{{ S[{', '.join(ins)}] -> A[{', '.join(outs)}] }}")


@SETTINGS
@given(data=st.data())
def test_tile_affine_function_equals_fixed_size_tiling(data):
    f = data.draw(affine_functions())
    n, p = f.dim(isl.dim_type.in_), f.dim(isl.dim_type.out)
    r_in, r_out = data.draw(ratios_for(n)), data.draw(ratios_for(p))
    F = mp.tile_affine_function(f, r_in, r_out)
    assert F.is_single_valued()
    if mp.is_piecewise_affine_tiling(f, r_in, r_out):
        assert _no_divs(F)  # Theorem 2.9: piecewise affine, no modulo condition
    # the direct construction (Theorems 2.9/2.10) and Theorem 2.8 on the graph agree for every b
    assert F.is_equal(mp.tile_relation(isl.Map.from_multi_aff(f), r_in, r_out))
    for b in data.draw(st.lists(st.integers(1, 8), min_size=1, max_size=2, unique=True)):
        got = mp.instantiate(F, b)
        want = mp.fixed_tile_map(f, [b * r for r in r_in], [b * r for r in r_out])
        assert got.is_equal(want), (str(f), r_in, r_out, b)


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_tile_affine_function_on_a_tiled_domain(data):
    """As relations on a tiled domain (the use in a SARE/DPN: access functions of a statement)."""
    D = data.draw(polyhedra())
    n = D.dim(isl.dim_type.set)
    f = data.draw(affine_functions().filter(lambda g: g.dim(isl.dim_type.in_) == n))
    p = f.dim(isl.dim_type.out)
    r_in, r_out = data.draw(ratios_for(n)), data.draw(ratios_for(p))
    F = mp.tile_affine_function(f, r_in, r_out).intersect_domain(mp.tile_domain(D, r_in))
    b = data.draw(st.integers(1, 8))
    sizes_in, sizes_out = [b * r for r in r_in], [b * r for r in r_out]
    want = mp.fixed_tile_map(f, sizes_in, sizes_out).intersect_domain(mp.fixed_tile_domain(D, sizes_in))
    assert mp.instantiate(F, b).is_equal(want)


def test_piecewise_and_non_functional_maps():
    pw = isl.Map("[N] -> { S[i, j] -> A[i + 1, j] : i < N; S[i, j] -> A[2i, floor(j / 2)] : i >= N }")
    rel = isl.Map("{ S[i] -> A[i - 1]; S[i] -> A[i + 1] : i >= 0 }")
    for m, r_in, r_out in ((pw, [1, 2], [2, 1]), (rel, [2], [1])):
        F = mp.tile_affine_function(m, r_in, r_out)
        for b in (1, 3, 4):
            assert mp.instantiate(F, b).is_equal(mp.fixed_tile_map(m, [b * r for r in r_in], [b * r for r in r_out]))


def test_theorem_2_8_example_triangle():
    """The habilitation's example: N = N_b.b, b x b tiles give full tiles plus diagonal triangles."""
    D = isl.Set("[N] -> { [i, j] : N - 1 - i - j >= 0 and i >= 0 and j >= 0 }")
    T = mp.tile_domain(D, [1, 1])
    T = T.intersect_params(isl.Set("[N_l] -> { : N_l = 0 }"))
    T = T.project_out(isl.dim_type.param, T.find_dim_by_name(isl.dim_type.param, "N_l"), 1)
    paper = isl.Set("[N_b, b] -> { [i_b, j_b, i_l, j_l] : N_b - i_b - j_b - 1 = 0 and i_b >= 0 and j_b >= 0 "
                    "and 0 <= i_l < b and 0 <= j_l < b and -b <= -i_l - j_l - 1; "
                    "[i_b, j_b, i_l, j_l] : N_b - i_b - j_b - 2 >= 0 and i_b >= 0 and j_b >= 0 "
                    "and 0 <= i_l < b and 0 <= j_l < b }")
    assert T.is_equal(paper)


def test_theorem_2_10_example_identity_to_2b_3b():
    """f = identity, input tiles b x b, output tiles 2b x 3b: six branches with modulo conditions."""
    f = isl.MultiAff("{ [i, j] -> [i, j] }")
    assert not mp.is_piecewise_affine_tiling(f, [1, 1], [2, 3])
    F = mp.tile_affine_function(f, [1, 1], [2, 3])
    # the paper's six branches, written out
    branches = []
    for mi in range(2):
        for mj in range(3):
            branches.append(f"[ib, jb, il, jl] -> [ob, pb, ol, pl] : ib = 2ob + {mi} and jb = 3pb + {mj} and "
                            f"ol = il + {mi}b and pl = jl + {mj}b and 0 <= il < b and 0 <= jl < b")
    paper = isl.Map("[b] -> { " + "; ".join(branches) + " }")
    assert F.is_equal(paper)


def test_theorem_2_9_example_is_piecewise_affine():
    """f = (2i, N - j - 1, i + j), tiles 2b x 2b -> b x b x b: integral case, no divisions."""
    f = isl.MultiAff("[N] -> { [i, j] -> [2i, N - j - 1, i + j] }")
    assert mp.is_piecewise_affine_tiling(f, [2, 2], [1, 1, 1])
    F = mp.tile_affine_function(f, [2, 2], [1, 1, 1])
    assert _no_divs(F)
    # a point of the second branch of Figure 2.5 (with N = N_b.b): b <= i_l < 2b, 0 <= j_l < b
    b, nb, ib, jb, il, jl = 5, 4, 1, 0, 7, 2
    pt = F.intersect_params(isl.Set(f"[b, N_b, N_l] -> {{ : b = {b} and N_b = {nb} and N_l = 0 }}"))
    img = pt.intersect_domain(isl.Set(f"[b, N_b, N_l] -> {{ [{ib}, {jb}, {il}, {jl}] }}")).range()
    # i' = 2(2b.ib + il) = 34 = 6b + 4, j' = N - j - 1 = 17 = 3b + 2, i + j = 19 = 3b + 4
    want = isl.Set(f"[b, N_b, N_l] -> {{ A[6, 3, 3, 4, 2, 4] : b = {b} and N_b = {nb} and N_l = 0 }}")
    assert img.reset_tuple_id().is_equal(want.reset_tuple_id())


# ------------------------------------------------------------------------------------------------
# closed forms


def test_closed_form_interpolates_and_verifies():
    assert str(mp.closed_form(lambda b: 2 * b * b, 3)) == "2*b^2"
    tri = mp.closed_form(lambda b: b * (b + 1) // 2, 2)
    assert str(tri) == "b^2/2 + b/2" and tri(10) == 55
    assert str(mp.closed_form(lambda b: 3 - 4 * b, 1)) == "-4*b + 3"
    assert str(mp.closed_form(lambda b: 0, 2)) == "0"
    assert mp.closed_form(lambda b: 7, 0) == 7
    assert mp.closed_form(lambda b: b * b * b - b, 3).coeffs == (0, Fraction(-1), 0, Fraction(1))
    with pytest.raises(mp.NotPolynomialError):
        mp.closed_form(lambda b: b // 2, 2)  # a quasi-polynomial, not a polynomial
    with pytest.raises(mp.NotPolynomialError):
        mp.closed_form(lambda b: b ** 3, 2)
    assert str(mp.closed_form(lambda b: max(b, 3), 1, b_min=3)) == "b"


def test_points_per_tile():
    square = mp.tile_domain(isl.Set("[N] -> { [i, j] : 0 <= i < N and 0 <= j < N }"), [1, 2])
    n4b = {"N_b": 4, "N_l": 0}  # N = 4b
    assert str(mp.card_in_b(mp.per_tile(square, (0, 0)), n4b)) == "2*b^2"  # a full b x 2b tile
    assert str(mp.card_in_b(mp.per_tile(square, (3, 1)), n4b)) == "2*b^2"
    assert str(mp.card_in_b(mp.per_tile(square, (0, 2)), n4b)) == "0"  # j in [4b, 6b): outside
    assert str(mp.card_in_b(mp.per_tile(square, (1, 1)), {"N_b": 3, "N_l": 0})) == "b^2"  # j in [2b, 3b)
    assert str(mp.card_in_b(mp.per_tile(square, (1, 1)), {"N_b": 3, "N_l": 1}, b_min=2)) == "b^2 + b"
    tri = mp.tile_domain(isl.Set("[N] -> { [i, j] : i >= 0 and j >= 0 and i + j <= N - 1 }"), [1, 1])
    n2b = {"N_b": 2, "N_l": 0}
    assert str(mp.card_in_b(mp.per_tile(tri, (0, 0)), n2b)) == "b^2"
    assert str(mp.card_in_b(mp.per_tile(tri, (0, 1)), n2b)) == "b^2/2 + b/2"  # the diagonal triangle
    assert str(mp.card_in_b(mp.per_tile(tri, (1, 1)), n2b)) == "0"
    assert str(mp.card_in_b(tri, n2b)) == "2*b^2 + b"  # whole triangle, N(N+1)/2 with N = 2b


@pytest.mark.parametrize("r", [1, 2, 3])
def test_stencil_1d_load_volume(r):
    """S[t, i] reads A[i-1], A[i], A[i+1]: an interior tile of b.r iterations loads b.r + 2 elements."""
    D = isl.Set("[N] -> { S[t, i] : 0 <= t < 4 and 1 <= i <= N - 2 }")
    A = isl.Map("{ S[t, i] -> A[i - 1]; S[t, i] -> A[i]; S[t, i] -> A[i + 1] }")
    fp = mp.tile_footprint(D, A, [1000, r], [1], [0, 1])
    assert str(mp.card_in_b(fp, {"N_b": 10, "N_l": 0})) == ("b + 2" if r == 1 else f"{r}*b + 2")


def test_stencil_2d_and_matmul_footprints():
    D = isl.Set("[N] -> { S[i, j] : 1 <= i <= N - 2 and 1 <= j <= N - 2 }")
    cross = isl.Map("{ S[i, j] -> A[i, j]; S[i, j] -> A[i - 1, j]; S[i, j] -> A[i + 1, j]; "
                    "S[i, j] -> A[i, j - 1]; S[i, j] -> A[i, j + 1] }")
    fp = mp.tile_footprint(D, cross, [1, 1], [1, 1], [1, 1])
    assert str(mp.card_in_b(fp, {"N_b": 4, "N_l": 0})) == "b^2 + 4*b"  # (b + 2)^2 minus 4 corners
    G = isl.Set("[N] -> { S[i, j, k] : 0 <= i, j, k < N }")
    ratios = [1, 2, 1]  # b x 2b x b tiles of (i, j, k)
    n = {"N_b": 4, "N_l": 0}
    a = mp.tile_footprint(G, isl.MultiAff("{ S[i, j, k] -> A[i, k] }"), ratios, [1, 1], [1, 1, 1])
    bb = mp.tile_footprint(G, isl.MultiAff("{ S[i, j, k] -> B[k, j] }"), ratios, [1, 1], [1, 1, 1])
    c = mp.tile_footprint(G, isl.MultiAff("{ S[i, j, k] -> C[i, j] }"), ratios, [1, 2], [1, 1, 1])
    assert str(mp.card_in_b(a, n)) == "b^2"
    assert str(mp.card_in_b(bb, n)) == "2*b^2"
    assert str(mp.card_in_b(c, n)) == "2*b^2"


def test_bad_inputs():
    with pytest.raises(ValueError):
        mp.tile_domain(isl.Set("[b] -> { [i] : 0 <= i < b }"), [1])
    with pytest.raises(ValueError):
        mp.tile_domain(isl.Set("{ [i] : 0 <= i < 4 }"), [0])
    with pytest.raises(ValueError):
        mp.tile_domain(isl.Set("{ [i] : 0 <= i < 4 }"), [1, 1])
    with pytest.raises(ValueError):  # N left free
        mp.card_in_b(mp.tile_domain(isl.Set("[N] -> { [i] : 0 <= i < N }"), [1]))
    assert mp.tile_domain(isl.Set("{ [i] : 1 = 0 }"), [2]).is_empty()
