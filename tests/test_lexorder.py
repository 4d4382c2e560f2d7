"""The lexicographic helpers of `hls.poly.lexorder` against isl's whole-order operations."""

import islpy as isl
import pytest

from hls.poly import lexorder
from hls.poly.lexorder import (deciding_dims, first_differs, lex_successor, ordered_pairs, schedule_successor,
                               shared_prefix, with_partner)

SETS = [
    "{ [i, j] : 0 <= i < 5 and 0 <= j < 7 }",
    "{ [i, j] : 0 <= i < 9 and 0 <= j <= i }",  # triangular
    "{ [t, i] : 0 <= t < 4 and t <= i < t + 6 }",  # skewed
    "{ [b, i, j] : 0 <= b < 3 and 4b <= i < 4b + 4 and 0 <= j < 10 and (i + j) mod 2 = 0 }",  # strided
    "{ [0, i, 3] : 0 <= i < 4; [1, i, 0] : 0 <= i < 2; [1, 5, j] : 0 <= j < 3 }",  # pieces of other shapes
    "{ [i] : i = 7 }",  # one element: no successor
    "[N] -> { [i, j] : 0 <= i < N and 0 <= j < N - i }",  # parametric
    # dimensions fixed by those before them (`deciding_dims`): constants, 2i, a piecewise function
    "{ [0, i, 2i, j, 5] : 0 <= i < 4 and 0 <= j <= i }",
    "{ [0, i, i, j] : 0 <= i < 3 and 0 <= j < 2; [0, i, 10 - i, j] : 3 <= i < 6 and 0 <= j < i }",
    "[N] -> { [1, t, i, t + i, 0] : 0 <= t < 3 and 0 <= i < N }",
    # tiled-transpose's point schedule: isl's lexmin on its deciding dimensions sends a tile's last
    # point three tiles on; the check in `schedule_successor` falls back to the whole time stamps
    "{ [0, o1, o2, 0, i4, 0, i6, 0, i8, 0, i10, 0, 1, 0] : (i6) mod 6 = 0 and (i4) mod 6 = 0 and 0 <= i4 <= 12 "
    "and i6 >= 0 and i8 >= 20o1 and i4 <= i8 <= 5 + i4 and i8 <= 19 + 20o1 and i10 >= 20o2 and i6 <= i10 <= 19 + 20o2 "
    "and ((i6 >= 14 and i10 <= 19) or (i6 <= 13 and i10 <= 5 + i6)); [0, o1 = 0, o2, 0, 18, 0, i6, 0, i8, 0, i10, 0, "
    "1, 0] : (i6) mod 6 = 0 and i6 >= 0 and 18 <= i8 <= 19 and i10 >= 20o2 and i6 <= i10 <= 19 + 20o2 and "
    "((i6 >= 14 and i10 <= 19) or (i6 <= 13 and i10 <= 5 + i6)) }",
]


@pytest.mark.parametrize("text", SETS)
def test_successor_is_the_lexmin_of_the_later_elements(text):
    s = isl.Set(text)
    expected = s.lex_lt_set(s).lexmin()
    got = lex_successor(s)
    assert got.is_equal(expected)
    assert got.is_single_valued()


@pytest.mark.parametrize(("text", "deciding"), [
    ("{ [0, i, 2i, j, 5] : 0 <= i < 4 and 0 <= j <= i }", [1, 3]),
    ("{ [0, i, i, j] : 0 <= i < 3 and 0 <= j < 2; [0, i, 10 - i, j] : 3 <= i < 6 and 0 <= j < i }", [1, 3]),
    ("{ [i, j] : 0 <= i < 5 and 0 <= j < 7 }", [0, 1]),
    ("{ [i, j] : 0 <= j < 2 and i = 3 }", [1]),
    ("{ [i, j] : 0 <= i < 4 and i <= j <= i + 1 and (j mod 2) = 0 }", [0]),  # j: the even one of i, i + 1
])
def test_deciding_dims_leave_out_what_their_prefix_fixes(text, deciding):
    assert deciding_dims(isl.Set(text)) == deciding


@pytest.mark.parametrize("text", [
    "{ [i, j] -> [0, i, j, 2i + j, 5] : 0 <= i < 4 and 0 <= j <= i }",
    "{ [i, j] -> [i + j, i, j, j] : 0 <= i < 5 and 0 <= j < 3 }",  # a skew: i + j, then i decides
    "{ [i, j] -> [0, floor(i / 4), i, j, floor(j / 2)] : 0 <= i < 10 and 0 <= j < 7 }",
    # a symmetric store's: the element's minimum and maximum coordinates, by inequalities
    "{ [i, j] -> [i + j, m, M, 1] : 0 <= i < 6 and 0 <= j < 6 and m <= i and m <= j and M >= i and M >= j "
    "and (m = i or m = j) and (M = i or M = j) }",
])
def test_deciding_dims_stop_once_the_schedule_names_the_instance(text):
    """With the schedule, the dimensions after the one whose prefix fixes the instance are not asked:
    the same answer as without it."""
    sched = isl.Map(text)
    assert deciding_dims(sched.range(), sched) == deciding_dims(sched.range())


def test_schedule_successor_follows_the_time_stamps():
    sched = isl.Map("{ [i, j] -> [0, floor(i / 4), floor(j / 3), 2, i, j, 7] : 0 <= i < 10 and 0 <= j < 8 }")
    expected = sched.apply_range(sched.range().lex_lt_set(sched.range()).lexmin()).apply_range(sched.reverse())
    got = schedule_successor(sched)
    assert got.is_equal(expected)
    assert isl.Set("{ [3, 2] }").apply(got).is_equal(isl.Set("{ [0, 3] }"))  # the next tile along j


def test_successor_of_a_listed_set_visits_every_point_in_order():
    s = isl.Set("{ [i, j] : 0 <= i < 3 and 0 <= j <= i }")
    succ = lex_successor(s)
    order = []
    p = s.lexmin()
    while not p.is_empty():
        order.append(tuple(p.sample_point().get_coordinate_val(isl.dim_type.set, d).to_python() for d in range(2)))
        p = p.apply(succ)
    assert order == [(0, 0), (1, 0), (1, 1), (2, 0), (2, 1), (2, 2)]


def test_first_differs_is_one_disjunct_of_the_order():
    space = isl.Set("{ [a, b, c] }").get_space()
    union = first_differs(space, 0, 1).union(first_differs(space, 1, 1)).union(first_differs(space, 2, 1))
    assert union.is_equal(isl.Map.lex_lt(space))
    earlier = first_differs(space, 0, -1).union(first_differs(space, 1, -1)).union(first_differs(space, 2, -1))
    assert earlier.is_equal(isl.Map.lex_gt(space))


def test_shared_prefix_counts_the_equal_leading_dimensions():
    assert shared_prefix(isl.Map("{ [a, b, c] -> [a, b, d] : 0 <= d < c }")) == 2
    assert shared_prefix(isl.Map("{ [a, b, c] -> [a, e, c] : e > b }")) == 1
    assert shared_prefix(isl.Map("{ [a, b] -> [a + 1, b] }")) == 0


SCHEDULE = ("[N] -> { S0[i] -> [0, i, 0, 0]; S1[i, j] -> [0, i, 1, j]; S2[i, j] -> [0, j, 2, i]; "
            "S3[k] -> [1, N - k, 0, 0] }")
PAIRS = [
    "[N] -> { S1[i, j] -> S0[i'] : 0 <= i, i' < N and 0 <= j < N; S2[i, j] -> S1[j, i] : 0 <= i, j < N }",
    "[N] -> { S3[k] -> S3[k'] : 0 <= k, k' < N; S0[i] -> S2[a, b] : 0 <= i, a, b < N and a = i }",
    "[N] -> { S1[i, j] -> S1[i', j'] : 0 <= i, j, i', j' < 4 and i + j = i' + j' }",  # one statement with itself
    "[N] -> { S0[i] -> S3[k] : 0 <= i < N and k = N - i - 1 }",
]


@pytest.mark.parametrize("text", PAIRS)
@pytest.mark.parametrize("order", ["lt", "le", "gt", "ge"])
def test_ordered_pairs_is_the_intersection_with_the_whole_order(text, order):
    schedule, pairs = isl.UnionMap(SCHEDULE), isl.UnionMap(text)
    expected = pairs.intersect(getattr(schedule, f"lex_{order}_union_map")(schedule))
    got = ordered_pairs(pairs, schedule, order)
    assert got.is_equal(expected)
    assert order in ("gt", "ge") or not got.is_empty()


# a reader's schedule of two pieces (a skewed band and a tail) and who reads the same value as whom
READER = "[N] -> { R[t, i] -> [0, t, t + i, 1] : 0 <= t < 3 and 0 <= i < N; R[3, i] -> [1, i, 0, 0] : 0 <= i < N }"
SAME = [  # (pairs, whether some reader has a later partner, whether some has an earlier one)
    ("[N] -> { R[t, i] -> R[t', i'] : i' = i and 0 <= t, t' <= 3 and 0 <= i < N }", True, True),  # every t
    ("[N] -> { R[t, i] -> R[t', i'] : t' = t and i' + 1 = i and 0 <= t <= 3 and 1 <= i < N }", False, True),
    ("[N] -> { R[t, i] -> R[t, i] : 0 <= t <= 3 and 0 <= i < N }", False, False),  # no other reader
]


@pytest.mark.parametrize("text, later, earlier", SAME)
@pytest.mark.parametrize("sign", [1, -1])
def test_with_partner_is_the_domain_of_the_ordered_pairs(text, later, earlier, sign):
    """Last reads (sign 1: a later reader exists) and first reads (-1) against the whole order."""
    schedule, pairs = isl.Map(READER), isl.Map(text)
    order = schedule.lex_lt_map(schedule) if sign == 1 else schedule.lex_gt_map(schedule)
    expected = pairs.intersect(order).domain()
    got = with_partner(pairs, schedule, sign)
    assert got.is_equal(expected)
    assert got.is_empty() == (not later if sign == 1 else not earlier)


def test_the_successor_check_refuses_a_skip_and_an_element_left_without_a_successor():
    """`schedule_successor` keeps isl's answer on the deciding dimensions only when the check passes
    (else it asks on whole time stamps): an answer that skips an element, or leaves one other than
    the last without a successor, must fail it."""
    times = isl.Set("{ [i, j] : 0 <= i < 3 and 0 <= j < 2 }")
    good, unmatched = lexorder._successor(times)
    assert unmatched.is_equal(times.lexmax())
    assert lexorder._is_successor(good, times, unmatched)
    skip = good.subtract(isl.Map("{ [0, 1] -> [1, 0] }")).union(isl.Map("{ [0, 1] -> [1, 1] }"))  # [1, 0] never comes
    assert skip.is_single_valued()
    assert not lexorder._is_successor(skip, times, times.subtract(skip.domain()))
    short = good.subtract(isl.Map("{ [1, 1] -> [2, 0] }"))  # [1, 1] has no successor
    assert not lexorder._is_successor(short, times, times.subtract(short.domain()))


# tiled-transpose's store unit (N=20, 6x6 tiles): isl's lexmin on the deciding dimensions sends the
# last element of a tile to the last column of tiles, skipping two (the tile origins are multiples of
# 6, existentials of the set)
TRANSPOSE_STORE = (
    "{ STORE_B[0, i1, i2, i3] -> [0, o1, o2, 0, o4, 0, o6, 0, i3, 0, i2, 0, 2, 0] : (o4) mod 6 = 0 and "
    "(o6) mod 6 = 0 and 20i1 <= i3 <= 19 + 20i1 and -19 + i3 <= 20o1 <= i3 and -19 + i2 <= 20o2 <= i2 "
    "and o4 >= -5 + i3 and 0 <= o4 <= 12 and o4 <= i3 and o6 >= -5 + i2 and 0 <= o6 <= 12 and o6 <= i2; "
    "STORE_B[0, i1, i2, i3] -> [0, o1, o2 = 0, 0, o4, 0, o6 = 18, 0, i3, 0, i2, 0, 2, 0] : (o4) mod 6 = "
    "0 and 18 <= i2 <= 19 and 20i1 <= i3 <= 19 + 20i1 and -19 + i3 <= 20o1 <= i3 and o4 >= -5 + i3 and 0 "
    "<= o4 <= 12 and o4 <= i3; STORE_B[0, i1 = 0, i2, i3] -> [0, o1 = 0, o2, 0, o4 = 18, 0, o6, 0, i3, "
    "0, i2, 0, 2, 0] : (o6) mod 6 = 0 and 18 <= i3 <= 19 and -19 + i2 <= 20o2 <= i2 and o6 >= -5 + i2 "
    "and 0 <= o6 <= 12 and o6 <= i2; STORE_B[0, i1 = 0, i2, i3] -> [0, o1 = 0, o2 = 0, 0, o4 = 18, 0, o6 "
    "= 18, 0, i3, 0, i2, 0, 2, 0] : 18 <= i2 <= 19 and 18 <= i3 <= 19 }")


def test_a_wrong_lexmin_on_the_deciding_dimensions_is_refused():
    """The one-to-one test of `_is_successor` catches isl's skip (two elements sent to one), and
    `schedule_successor` then answers on the whole time stamps: every instance goes to the next one."""
    sched = isl.Map(TRANSPOSE_STORE)
    times = sched.range()
    keep = deciding_dims(times, sched)
    proj = isl.Map.identity(isl.Space.map_from_set(times.get_space()))
    for d in reversed(range(times.dim(isl.dim_type.set))):
        if d not in keep:
            proj = proj.project_out(isl.dim_type.out, d, 1)
    reduced = sched.apply_range(proj).range().coalesce()
    succ, unmatched = lexorder._successor(reduced)
    if not lexorder._is_successor(succ, reduced, unmatched):
        assert not lexorder._one_to_one(succ)
    expected = sched.apply_range(times.lex_lt_set(times).lexmin()).apply_range(sched.reverse())
    got = schedule_successor(sched)
    assert got.is_equal(expected)
    # walk it: 400 instances in schedule order, each once
    seen, x = [], sched.domain().apply(sched).lexmin().apply(sched.reverse())
    while not x.is_empty():
        seen.append(str(x))
        x = x.apply(got)
    assert len(seen) == len(set(seen)) == 400


@pytest.mark.parametrize("text", [
    "{ [i] -> [i + 1] : 0 <= i < 5; [i] -> [i - 3] : 5 <= i < 8 }",  # [2], [3], [4] each reached twice
    "{ [i, j] -> [i, j + 1] : 0 <= i < 3 and 0 <= j < 3; [i, 3] -> [i + 1, 0] : 0 <= i < 2; [2, 3] -> [0, 1] }",
])
def test_one_to_one_finds_two_pieces_that_meet(text):
    m = isl.Map(text)
    assert lexorder._one_to_one(m) == m.is_injective()
    assert not lexorder._one_to_one(m)


def test_one_to_one_accepts_a_successor_of_many_pieces():
    times = isl.Set("{ [t, i] : 0 <= t < 4 and t <= i < t + 6 and (i mod 2 = 0 or t = 1) }")
    succ, _ = lexorder._successor(times)
    assert lexorder._one_to_one(succ) and succ.is_injective()
