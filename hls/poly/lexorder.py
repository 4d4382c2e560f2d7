"""The lexicographic order of time stamps, one disjunct at a time.

isl's own lexicographic maps (`lex_lt_set`, `lex_gt_map`) are the union of one disjunct per
dimension: "equal before dimension i, later at i".  A problem posed on that whole union (an
emptiness test, a lexmin) over schedules of dozens of pieces costs isl seconds to minutes, where the
same problem posed disjunct by disjunct, each with i equalities that pin the leading dimensions,
takes milliseconds (a skewed stencil's load schedules).  These helpers build those disjuncts.
"""

from __future__ import annotations

from typing import Optional

import islpy as isl

from .boxes import apart, dim_bounds

__all__ = ["ordered_pairs", "equal_before", "first_differs", "shared_prefix", "deciding_dims", "lex_successor",
           "schedule_successor", "with_partner"]


def equal_before(m: isl.Map, n: int) -> isl.Map:
    """`m` where input and output agree on their first `n` dimensions."""
    for d in range(n):
        m = _equal_at(m, d)
    return m


def first_differs(space: isl.Space, i: int, sign: int) -> isl.Map:
    """{ t -> t' : t and t' agree before dimension i, and sign * (t'[i] - t[i]) > 0 }: one disjunct of
    the lexicographic order (`sign` 1: t' later; -1: t' earlier)."""
    m = equal_before(isl.Map.universe(isl.Space.map_from_set(space)), i)
    ls = isl.LocalSpace.from_space(m.get_space())
    return m.add_constraint(isl.Constraint.inequality_alloc(ls).set_coefficient_val(isl.dim_type.out, i, sign)
                            .set_coefficient_val(isl.dim_type.in_, i, -sign).set_constant_val(-1))


def shared_prefix(times: isl.Map) -> int:
    """How many leading dimensions the two time stamps of every pair share: a load, its readers and
    the values they exchange inside one tile band all carry the band's coordinates first."""
    n = min(times.dim(isl.dim_type.in_), times.dim(isl.dim_type.out))
    universe = isl.Map.universe(times.get_space())
    # dimension k asked alone, the ones before it being equal already: a subset of one equality where
    # the k + 1 of them made isl split the complement into 2k + 2 pieces
    return next((k for k in range(n) if not times.is_subset(_equal_at(universe, k))), n)


def _equal_at(m: isl.Map, d: int) -> isl.Map:
    """`m` where input and output agree on dimension `d`."""
    ls = isl.LocalSpace.from_space(m.get_space())
    return m.add_constraint(isl.Constraint.equality_alloc(ls).set_coefficient_val(isl.dim_type.in_, d, 1)
                            .set_coefficient_val(isl.dim_type.out, d, -1))


def deciding_dims(times: isl.Set, schedule: Optional[isl.Map] = None) -> list[int]:
    """The dimensions of `times` that can decide its lexicographic order: those not a function of
    the dimensions before them.  A dimension fixed by its prefix (a constant of the 2d+1 schedule, a
    point coordinate the tile coordinates and another point coordinate give) is equal wherever the
    prefix is, so it never decides, and leaving it out loses no element.

    With the one-to-one `schedule` whose image `times` is: once a deciding dimension's prefix
    names a single instance, every later dimension is a function of it, and none is asked.  A
    symmetric store's time stamps (covariance's, whose inner dimensions are the minimum and maximum
    of the element's coordinates, given by inequalities) took 3.4 s, 2.2 s of it on a dimension
    after the prefix had fixed the instance; 0.8 s so."""
    n = times.dim(isl.dim_type.set)
    keep = []
    for d in range(n):
        if not times.plain_get_val_if_fixed(isl.dim_type.set, d).is_nan():
            continue  # one constant throughout (the 2d+1 schedule's): no projection asked
        prefix = times.project_out(isl.dim_type.set, d + 1, n - d - 1)
        if not isl.Map.from_range(prefix).move_dims(isl.dim_type.in_, 0, isl.dim_type.out, 0, d).is_single_valued():
            keep.append(d)
            if schedule is not None and d + 1 < n and \
                    schedule.project_out(isl.dim_type.out, d + 1, n - d - 1).reverse().is_single_valued():
                break
    return keep


def lex_successor(times: isl.Set) -> isl.Map:
    """{ t -> the next element of `times` after t }, the lexmin of `times.lex_lt_set(times)`
    (`schedule_successor` with the identity schedule)."""
    return schedule_successor(isl.Map.identity(isl.Space.map_from_set(times.get_space())).intersect_domain(times))


def schedule_successor(schedule: isl.Map) -> isl.Map:
    """{ x -> the instance `schedule` runs next after x }, for a one-to-one `schedule`.

    Posed on the time dimensions that decide the order (`deciding_dims`): of a red-black stencil's
    17 schedule dimensions, 4 to 5 decide, and its processes' successors took 2.4 s instead of 7.5.
    The instances are mapped to those dimensions directly, not back through the whole time stamp
    (that made heat-3d's load successor a function of twice the pieces).  isl's lexmin is not always
    right on the projected times (tiled-transpose: a tile's last point was sent three tiles on), so
    that answer is kept only when it is a bijection from all but the last time onto all but the
    first that only moves forward, which is the successor and nothing else (`_is_successor`); else
    the whole time stamps are asked.

    Either way, posed from the innermost dimension out (`_successor`): t's successor first differs
    from t at the deepest dimension i where a later element shares t's first i coordinates, so the
    elements still without a successor after dimensions n-1 .. i+1 are the only ones asked at i.
    Each lexmin then has i equalities and a shrinking domain; over a skewed stencil's load schedule
    (twenty pieces, 17 dimensions) this took 4.5 s where the lexmin of the whole order took 25 s, in
    fewer pieces."""
    times = schedule.range()
    n = times.dim(isl.dim_type.set)
    keep = deciding_dims(times, schedule) if not times.is_empty() else list(range(n))
    if len(keep) < n:
        proj = isl.Map.identity(isl.Space.map_from_set(times.get_space()))
        for d in reversed(range(n)):
            if d not in keep:
                proj = proj.project_out(isl.dim_type.out, d, 1)
        deciding = schedule.apply_range(proj)
        reduced = deciding.range().coalesce()
        succ, unmatched = _successor(reduced)
        if _is_successor(succ, reduced, unmatched):
            return deciding.apply_range(succ).apply_range(deciding.reverse())
    return schedule.apply_range(_successor(times)[0]).apply_range(schedule.reverse())


def with_partner(pairs: isl.Map, schedule: isl.Map, sign: int) -> isl.Set:
    """The x of `pairs` x -> y (both run by the one-to-one `schedule`) with some partner y that runs
    after x (`sign` 1) or before it (-1).  A buffer reader's last reads are those without a later
    reader of the same value: over a load unit's schedule of 27 pieces, the whole order
    (`lex_lt_map`) took 1.1 s where one disjunct at a time takes 0.07 s."""
    times = pairs.apply_domain(schedule).apply_range(schedule)
    stamps = schedule.range()
    space = stamps.get_space()
    found = isl.Set.empty(space)
    for i in range(space.dim(isl.dim_type.set)):
        if not stamps.plain_get_val_if_fixed(isl.dim_type.set, i).is_nan():
            continue  # one constant in every time stamp (the 2d+1 schedule's): no pair differs first there
        found = found.union(times.intersect(first_differs(space, i, sign)).domain())
    return found.apply(schedule.reverse())


def _is_successor(succ: isl.Map, times: isl.Set, unmatched: isl.Set) -> bool:
    """Whether `succ` (`_successor`'s answer: a function by construction, one lexmin per element) is
    the successor function of the finite set `times`: from all but its last element, one-to-one, and
    forward.  Then it has as many elements as all but the first, onto which it maps (forward, within
    `times`), so the first element goes to the second (the only earlier element the second can come
    from), and so on by induction.

    The domain's inclusion is asked of `unmatched`, the elements `_successor` left without a
    successor (`times` minus the domain, by construction): at most the last one.  One-to-one is
    asked piece by piece (`_one_to_one`), not as the range's inclusion of all but the first element:
    over a skewed 3-d stencil's load unit (a thousand pieces, heat-3d at T=10, N=26) that subtraction
    ran for more than five minutes, the pieces' test takes 3 s."""
    if times.is_empty():
        return succ.is_empty()
    space = times.get_space()
    n = times.dim(isl.dim_type.set)
    return (succ.intersect(equal_before(isl.Map.universe(isl.Space.map_from_set(space)), n)).is_empty()
            and all(succ.intersect(first_differs(space, i, -1)).is_empty() for i in range(n))
            and unmatched.is_subset(times.lexmax())
            and _one_to_one(succ))


def _one_to_one(m: isl.Map) -> bool:
    """Whether the map `m` (a union of functions) is injective, asked of its basic maps: each one
    alone, then the images of every two whose bounding boxes meet (a sweep along the first
    dimension).  Basic maps that share a pair make it answer False, which only costs the caller its
    slower path."""
    pieces = [p for p in (isl.Map.from_basic_map(b) for b in m.get_basic_maps()) if not p.is_empty()]
    if not all(p.is_injective() for p in pieces):
        return False
    images = [p.range() for p in pieces]
    if m.dim(isl.dim_type.param) or m.dim(isl.dim_type.out) == 0:
        return all(images[a].intersect(images[b]).is_empty()
                   for a in range(len(images)) for b in range(a + 1, len(images)))
    boxes = [dim_bounds(im) for im in images]
    order = sorted(range(len(images)), key=lambda k: boxes[k][0][0])
    for at, a in enumerate(order):
        for b in order[at + 1:]:
            if boxes[b][0][0] > boxes[a][0][1]:
                break  # every later image starts past a's end
            if not apart(boxes[a], boxes[b]) and not images[a].intersect(images[b]).is_empty():
                return False
    return True


def _successor(times: isl.Set) -> tuple[isl.Map, isl.Set]:
    """The successor function of `times` (see `schedule_successor`), and the elements it leaves
    without a successor."""
    space = times.get_space()
    out = isl.Map.empty(isl.Space.map_from_set(space))
    pending = times
    for i in reversed(range(times.dim(isl.dim_type.set))):
        later = first_differs(space, i, 1).intersect_domain(pending).intersect_range(times)
        if later.is_empty():
            continue
        nxt = later.lexmin()
        out = out.union(nxt)
        pending = pending.subtract(nxt.domain()).coalesce()
        if pending.is_empty():
            break
    return out, pending


def ordered_pairs(pairs: isl.UnionMap, schedule: isl.UnionMap, order: str) -> isl.UnionMap:
    """The pairs x -> y of `pairs` with time(x) `order` time(y) (order: lt, le, gt or ge).

    The order is formed per pair of statements that `pairs` relates: the whole schedule's
    lex_*_union_map has a piece for every pair of statements, most of which no pair needs
    (int-divmod's 12 statements: 144 pieces per read, 0.9 s of each dataflow analysis)."""
    times: dict[str, isl.UnionMap] = {}

    def time_of(space: isl.Space) -> isl.UnionMap:
        name = space.get_tuple_name(isl.dim_type.set)
        if name not in times:
            times[name] = schedule.intersect_domain(isl.UnionSet.from_set(isl.Set.universe(space)))
        return times[name]

    pieces: list[isl.Map] = []
    pairs.foreach_map(pieces.append)
    out = isl.UnionMap.empty(pairs.get_space())
    for m in pieces:
        lex = getattr(time_of(m.get_space().domain()), f"lex_{order}_union_map")(time_of(m.get_space().range()))
        out = out.union(isl.UnionMap.from_map(m).intersect(lex))
    return out
