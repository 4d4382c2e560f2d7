"""The lexicographic helpers of `hls.poly.lexorder` against isl's whole-order operations."""

import islpy as isl
import pytest

from hls.poly.lexorder import first_differs, lex_successor, shared_prefix

SETS = [
    "{ [i, j] : 0 <= i < 5 and 0 <= j < 7 }",
    "{ [i, j] : 0 <= i < 9 and 0 <= j <= i }",  # triangular
    "{ [t, i] : 0 <= t < 4 and t <= i < t + 6 }",  # skewed
    "{ [b, i, j] : 0 <= b < 3 and 4b <= i < 4b + 4 and 0 <= j < 10 and (i + j) mod 2 = 0 }",  # strided
    "{ [0, i, 3] : 0 <= i < 4; [1, i, 0] : 0 <= i < 2; [1, 5, j] : 0 <= j < 3 }",  # pieces of other shapes
    "{ [i] : i = 7 }",  # one element: no successor
    "[N] -> { [i, j] : 0 <= i < N and 0 <= j < N - i }",  # parametric
]


@pytest.mark.parametrize("text", SETS)
def test_successor_is_the_lexmin_of_the_later_elements(text):
    s = isl.Set(text)
    expected = s.lex_lt_set(s).lexmin()
    got = lex_successor(s)
    assert got.is_equal(expected)
    assert got.is_single_valued()


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
