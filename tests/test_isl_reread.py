"""`isl_utils.reread`: objects read back from their printed form, each form parsed once."""

from __future__ import annotations

import islpy as isl

from hls.poly import isl_utils as iu


def test_equal_printed_forms_give_one_object():
    a = isl.Map("{ A[i] -> B[i + 1] : 0 <= i < 10 }")
    b = isl.Map("{ A[i] -> B[1 + i] : 0 <= i <= 9 }")  # another object, the same printed form
    assert a is not b and str(a) == str(b)
    ra, rb = iu.reread(a), iu.reread(b)
    assert ra is rb
    assert iu.reread(ra) is ra
    assert ra.is_equal(a)


def test_different_forms_and_types_stay_apart():
    s = isl.Set("{ [i] : 0 <= i < 4 }")
    u = isl.UnionSet("{ [i] : 0 <= i < 4 }")
    assert type(iu.reread(s)) is isl.Set and type(iu.reread(u)) is isl.UnionSet
    t = isl.Set("{ [i] : 0 <= i < 5 }")
    assert not iu.reread(t).is_equal(iu.reread(s))


def test_the_kept_forms_are_bounded(monkeypatch):
    monkeypatch.setattr(iu, "REREAD_KEPT", 4)
    first = iu.reread(isl.Set("{ [i] : 0 <= i < 100 }"))
    assert iu.reread(isl.Set("{ [i] : 0 <= i < 100 }")) is first
    for n in range(10):
        iu.reread(isl.Set(f"{{ [i] : 0 <= i < {n + 1} }}"))
    again = iu.reread(isl.Set("{ [i] : 0 <= i < 100 }"))
    assert again is not first and again.is_equal(first)  # forgotten, read again
