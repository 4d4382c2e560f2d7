"""The vectorized point enumeration (`isl_utils.points`) against isl's own point visitor."""

from __future__ import annotations

import islpy as isl
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hls.poly import isl_utils as iu


def _visit(s: isl.Set) -> np.ndarray:
    n = s.dim(isl.dim_type.set)
    out: list[tuple[int, ...]] = []
    s.foreach_point(lambda p: out.append(tuple(int(p.get_coordinate_val(isl.dim_type.set, d).to_python())
                                               for d in range(n))))
    return np.array(sorted(out), dtype=np.int64).reshape(len(out), n)


coef = st.integers(-3, 3)


@st.composite
def sets(draw):
    n = draw(st.integers(1, 3))
    names = [f"x{d}" for d in range(n)]
    cons = [f"{draw(st.integers(-4, 0))} <= {x} <= {draw(st.integers(0, 6))}" for x in names]
    for _ in range(draw(st.integers(0, 2))):
        terms = " + ".join(f"{draw(coef)} * {x}" for x in names)
        cons.append(f"{terms} + {draw(st.integers(-5, 5))} >= 0")
    if draw(st.booleans()):  # a stride through an existential variable
        m = draw(st.integers(2, 4))
        cons.append(f"exists (e : {' + '.join(f'{draw(coef)} * {x}' for x in names)} = {m} * e + {draw(st.integers(0, m - 1))})")
    par = draw(st.booleans())
    text = (f"[N] -> {{ [{', '.join(names)}] : N = 5 and {' and '.join(cons)} }}" if par else
            f"{{ [{', '.join(names)}] : {' and '.join(cons)} }}")
    s = isl.Set(text)
    if draw(st.booleans()):
        s = s.union(isl.Set(text.replace("<= 6", "<= 9").replace(">= 0", ">= -2")))
    return s


@settings(max_examples=120, deadline=None)
@given(sets())
def test_points_equal_isl_visitor(s):
    assert np.array_equal(iu.points(s), _visit(s))


def test_points_of_a_relation_are_sorted_pairs():
    m = isl.Map("{ S[i, j] -> T[j, i + 1] : 0 <= i < 4 and 0 <= j < i }")
    pairs = iu.map_pairs(m)
    assert pairs.tolist() == sorted(pairs.tolist()) and len(pairs) == 6
    assert all(b == c and d == a + 1 for a, b, c, d in pairs.tolist())


def test_points_of_a_tiled_relation_with_a_huge_bounding_box():
    """A channel-like relation between tiled time stamps: 10 dimensions with floor divisions, a
    bounding box of ~2 x 10^8 points around 2,280 pairs.  Enumerated dimension by dimension (bounds from
    the outer ones), it must still equal isl's own visitor."""
    m = isl.Map("{ S[i, j, k] -> [floor(i / 4), floor(j / 5), i, j, k] : 0 <= i < 12 and 0 <= j < 10 and 0 <= k < 20 }")
    dep = isl.Map("{ S[i, j, k] -> S[i, j, k + 1] }")
    rel = m.reverse().apply_range(dep).apply_range(m)  # time stamp -> time stamp of the next k
    s = rel.wrap()
    n = s.dim(isl.dim_type.set)
    box = 1
    for d in range(n):
        box *= iu.constant_value(s.dim_max(d)) - iu.constant_value(s.dim_min(d)) + 1
    assert box > 10 ** 8  # the old box enumeration gave up at 3 x 10^5
    got = iu.points(s)
    assert len(got) == 12 * 10 * 19
    assert np.array_equal(got, _visit(s))
    assert iu.card(s) == len(got)


def test_points_of_dimensions_bounded_only_through_inner_ones():
    """An outer dimension that the constraints bound only through inner dimensions gets its range from
    isl (`_box_bound`): the enumeration asks for it only there."""
    for text in ("{ [i, j] : 0 <= j < 5 and j <= i <= j + 2 }",
                 "{ [i, j, k] : 0 <= k < 4 and k <= j <= 2k and i = j + k }",
                 "{ [i, j] : 0 <= j < 6 and 2i = j }",
                 "{ [i, j] : 0 <= j < 3 and j - 1 <= i <= j + 1; [i, j] : 10 <= i < 12 and 0 <= j < 2 }"):
        s = isl.Set(text)
        assert np.array_equal(iu.points(s), _visit(s)), text
        assert iu.fast_points(s) is not None, text


def test_points_of_a_set_whose_existential_variable_has_no_floor_expression():
    """A projected-out variable bounded by inequalities only (no floor of the others until isl
    computes one): the channel relations of a triangular solve carry one."""
    s = isl.Set("{ [i, j] : exists (e : 0 <= i <= 20 and 0 <= j < 3 and 2i - 1 <= 3e <= i + 10 + j) }")
    assert iu.fast_points(s) is not None
    assert np.array_equal(iu.points(s), _visit(s))


@settings(max_examples=150, deadline=None)
@given(sets())
def test_count_by_factors_equals_isl_scan(s):
    """The count of large sets without barvinok (a product over groups of coupled dimensions)."""
    assert iu.count_by_factors(s) == int(s.count_val().to_python())


def test_count_by_factors_of_sets_too_large_to_scan():
    """Closed forms for sets of 10^10 points and more, which isl's scan takes seconds to count."""
    cases = {
        "[NI, NJ, NK] -> { S[i, j, k] : NI = 2000 and NJ = 2300 and NK = 2600 and 0 <= i < NI and 0 <= j < NJ "
        "and 0 <= k < NK }": 2000 * 2300 * 2600,
        "{ S[t, i, j] : 0 <= t < 64 and 64t <= i < 64t + 64 and 0 <= i < 2000 and 0 <= j < 30000 }": 2000 * 30000,
        "{ S[i, j, k] : 0 <= i < 3000 and 0 <= j <= i and 0 <= k < 3000 }": 3000 * 3001 // 2 * 3000,
        "{ S[i, j, k] : 0 <= i, j, k < 3000 and (i + j) mod 3 = 0 }": 3000 * 3000 // 3 * 3000,
        "{ S[i, j, k] : 0 <= i, j, k < 3000; S[i, j, k] : 2000 <= i < 5000 and 0 <= j < 10 and 0 <= k < 3000 }":
            3000 ** 3 + 2000 * 10 * 3000,
    }
    for text, expected in cases.items():
        assert iu.count_by_factors(isl.Set(text)) == expected, text


@settings(max_examples=150, deadline=None)
@given(sets(), st.integers(0, 3))
def test_free_boxes_bound_the_points(s, extra):
    """The boxes over the dimensions no equality fixes (`fewer_points_than` without barvinok) hold at
    least the set's points, with time-stamp-like dimensions appended that are functions of the others."""
    n = s.dim(isl.dim_type.set)
    names = [f"x{d}" for d in range(n)]
    stamps = [f"{2 * k + 1} * x{k % n} - {k} * x{(k + 1) % n} + 100" for k in range(extra)]
    s = s.apply(isl.Map(f"{{ [{', '.join(names)}] -> [{', '.join(names + stamps)}] }}").align_params(s.get_space()))
    points = int(s.count_val().to_python())
    assert iu._free_box_cells(s, points - 1) is False or points == 0
    assert iu._free_box_cells(s, 10 ** 12)


def test_a_few_time_stamps_in_a_huge_box_are_fewer_points():
    """A merged process iterates over time stamps: 720 points in a box of 10^10 cells are fewer than
    20,000 without barvinok too (lifting-53's corner took the large sets' route on every channel)."""
    s = isl.Set("{ S[o, i, j, a, b, c, d] : 0 <= o < 4 and 0 <= i < 18 and 0 <= j < 10 and a = 1000 * i - j "
                "and b = 7 * o + 3 * j - 500 and c = i + j + o and d = 900 * j }")
    assert iu.card(s) == 720 and not iu._box_within(s, 64 * 20_000 - 1)
    assert iu.fewer_points_than(s, 20_000) and iu.fewer_points_than(s, 721) and not iu.fewer_points_than(s, 720)
    dense = isl.Set("{ S[i, j, k] : 0 <= i, j, k < 1000 }")
    assert not iu.fewer_points_than(dense, 20_000)


def test_enumerations_are_kept_by_text_read_only_and_bounded(monkeypatch):
    """An equal set read again is answered from the kept enumeration, which no caller can change; the
    kept arrays stay within `ENUMERATED_BYTES`."""
    text = "{ [i, j] : 0 <= i < 37 and 0 <= j <= i and (i + j) mod 3 = 1 }"
    first = iu.fast_points(isl.Set(text))
    assert np.array_equal(first, _visit(isl.Set(text)))
    assert iu.fast_points(isl.Set(text)) is first
    assert not first.flags.writeable
    monkeypatch.setattr(iu, "ENUMERATED_BYTES", 8 * first.nbytes)
    for n in range(40, 52):  # other sets of about the same size push the first one out
        iu.fast_points(isl.Set(f"{{ [i, j] : 0 <= i < {n} and 0 <= j <= i and (i + j) mod 3 = 1 }}"))
    again = iu.fast_points(isl.Set(text))
    assert again is not first and np.array_equal(again, first)



def test_points_of_a_schedule_of_several_pieces():
    """A process's iterations wrapped with their time stamps: every time dimension one value per
    iteration (appended without copying the rows), pieces that overlap in the union, and negative
    stamps."""
    sched = isl.Map("{ S[i, j] -> [floor(i / 4), -j, i, 0, j] : 0 <= i < 12 and 0 <= j < 9 and j <= i; "
                    "S[i, j] -> [floor(i / 4), -j, i, 0, j] : 0 <= i < 12 and 0 <= j < 9 and j >= i - 2; "
                    "S[i, j] -> [-1, j, 2i, 1, 0] : 12 <= i < 15 and 0 <= j < 4 }")
    s = sched.wrap().flatten()
    assert len(s.get_basic_sets()) > 1
    got = iu.fast_points(s)
    assert got is not None and np.array_equal(got, _visit(s))
    assert len(got) == iu.card(sched.domain())


def test_reread_shares_one_object_per_text():
    """Equal texts read back once: isl objects are values, so the networks built from them share."""
    first = iu.reread(isl.Set("{ [i] : 0 <= i < 4 }"))
    assert iu.reread(isl.Set("{ [i] : 0 <= i <= 3 and i >= 0 }")) is first
    assert iu.reread(first) is first
    assert iu.reread(isl.Set("{ [i] : 0 <= i < 5 }")) is not first
    assert first.is_equal(isl.Set("{ [i] : 0 <= i <= 3 }"))


def test_reread_keeps_texts_within_its_bound(monkeypatch):
    """Past `REREAD_CHARS` of texts the oldest are dropped: read again, they are read anew, equal."""
    monkeypatch.setattr(iu, "REREAD_CHARS", 60)
    first = iu.reread(isl.Set("{ [i, j] : 0 <= i < 7 and 0 <= j < 9 }"))
    iu.reread(isl.Set("{ [i, j] : 0 <= i < 8 and 0 <= j < 9 and i + j < 11 }"))
    again = iu.reread(isl.Set("{ [i, j] : 0 <= i <= 6 and 0 <= j <= 8 }"))
    assert again is not first and again.is_equal(first)
