"""`boxes.dim_bounds` (each dimension's projection, lexmin and lexmax) against isl's own
`dim_min_val` and `dim_max_val`, on sets of the shapes the control bounds: tiled domains with
divisions, equalities, several disjuncts, skewed and triangular parts."""

import islpy as isl
import pytest

from hls.poly.boxes import dim_bounds

SETS = [
    "{ [i, j] : 0 <= i < 10 and 0 <= j <= i }",
    "{ [t, i, j] : 0 <= t < 5 and t <= i < t + 12 and 2t <= j <= 2t + 7 }",
    "{ S[a, b, c = 24 + 63a, d = 0] : 0 <= a <= 15 and 0 < b <= 31 }",
    "{ [i, j] : 0 <= i <= 99 and 0 <= j <= 99 and (i + j) mod 2 = 0 }",
    "{ [ti, i] : 0 <= i <= 999 and 63ti <= i <= 62 + 63ti and i mod 63 >= 8 and i mod 63 <= 15 }",
    "{ [i, j] : 0 <= i < 4 and 0 <= j < 4; [i, j] : 10 <= i < 12 and -3 <= j <= -1 }",
    "{ [i, j, k] : exists (e : i = 3e and 0 <= e <= 9) and 0 <= j <= i and k = i - j }",
    "{ [x] : x = 7 }",
]


@pytest.mark.parametrize("text", SETS)
def test_bounds_are_isls(text):
    s = isl.Set(text)
    want = [(int(s.dim_min_val(k).to_python()), int(s.dim_max_val(k).to_python()))
            for k in range(s.dim(isl.dim_type.set))]
    assert dim_bounds(s) == want
