"""Tiling: the tiled schedule that defines the tile bands of the DPN (chapter 4, section 5.2).

The outermost `k` loops of every statement (their time dimensions in the 2d+1 schedule) are
optionally skewed by a lower-triangular integer matrix, then cut into rectangular tiles of the given
sizes.  The tiled time stamp of an instance is `(tile coordinates, original time)`: inside a tile the
original execution order is kept, which is what makes every FIFO recoverable (Theorem 5.3).  A tile
*band* is identified by all tile coordinates but the innermost one; bands are the reuse units.

Tiling is never applied where dependences forbid it: the tiled order must keep every pair of
conflicting accesses (flow, anti and output dependences) in its original order, which is checked
exactly with isl.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Optional, Sequence

import islpy as isl

from ..diagnostics import CompileError
from ..poly import isl_utils as iu
from ..poly.program import PolyProgram

DEFAULT_LOCAL_WORDS = 8192


@dataclass(frozen=True, eq=False)
class Tiling:
    """A tiled schedule: statement instance -> (tile coordinates, original time)."""

    sizes: tuple[int, ...]
    skew: tuple[tuple[int, ...], ...]  # rows: coefficients of the outer loops added to loop j
    schedule: isl.UnionMap
    band_dims: int  # leading time dimensions that identify a tile band
    reason: str

    @property
    def is_tiled(self) -> bool:
        return bool(self.sizes)

    def describe(self) -> str:
        if not self.sizes:
            return "none"
        skew = "" if all(v == 0 for row in self.skew for v in row) else f", skew {[list(r) for r in self.skew]}"
        return f"tiles {'x'.join(map(str, self.sizes))} on the {len(self.sizes)} outer loops{skew}"


def no_tiling(program: PolyProgram, reason: str = "tiling not requested") -> Tiling:
    return Tiling((), (), program.schedule, 0, reason)


def _loop_depth(program: PolyProgram) -> int:
    return min(len(s.iterators) for s in program.statements)


def tiled_schedule(program: PolyProgram, sizes: Sequence[int], skew: Sequence[Sequence[int]]) -> isl.UnionMap:
    """(floor(skewed loop_j / T_j) for j < k, original time) for every statement."""
    out = isl.UnionMap.empty(program.schedule.get_space())
    k = len(sizes)
    for st in program.statements:
        sched = program.statement_schedule(st.name)  # S[i..] -> [t0, l1, t1, l2, ...]
        n_t = sched.dim(isl.dim_type.out)
        loops = [1 + 2 * j for j in range(k)]
        names = [f"t{d}" for d in range(n_t)]
        tiles = []
        for j in range(k):
            expr = " + ".join([names[loops[j]]] + [f"{skew[j][i]} * {names[loops[i]]}" for i in range(j) if skew[j][i]])
            tiles.append(f"floor(({expr}) / {sizes[j]})")
        text = f"{{ [{', '.join(names)}] -> [{', '.join(tiles + names)}] }}"
        out = out.union(isl.UnionMap.from_map(sched.apply_range(isl.Map(text))))
    return out.coalesce()


def conflicts(program: PolyProgram) -> isl.UnionMap:
    """Pairs of instances touching one element, at least one writing, in original order."""
    writes = isl.UnionMap.empty(program.schedule.get_space())
    accesses = isl.UnionMap.empty(program.schedule.get_space())
    for st in program.statements:
        writes = writes.union(isl.UnionMap.from_map(st.write.relation))
        for a in st.accesses:
            accesses = accesses.union(isl.UnionMap.from_map(a.relation))
    pairs = writes.apply_range(accesses.reverse()).union(accesses.apply_range(writes.reverse()))
    return pairs.intersect(program.schedule.lex_lt_union_map(program.schedule))


def is_legal(program: PolyProgram, schedule: isl.UnionMap, deps: Optional[isl.UnionMap] = None) -> bool:
    deps = conflicts(program) if deps is None else deps
    return deps.intersect(schedule.lex_ge_union_map(schedule)).is_empty()


def tile_program(program: PolyProgram, sizes: Sequence[int], *, skew: Optional[Sequence[Sequence[int]]] = None,
                 deps: Optional[isl.UnionMap] = None) -> Tiling:
    """Tile the outer `len(sizes)` loops (explicit sizes); an error if the tiling is illegal."""
    k = len(sizes)
    depth = _loop_depth(program)
    if any(t < 1 for t in sizes):
        raise CompileError(program.loc, f"--tile: tile sizes must be positive, got {list(sizes)}")
    if k > depth:
        shallow = min(program.statements, key=lambda s: len(s.iterators))
        raise CompileError(shallow.loc, f"--tile gives {k} sizes but `{shallow.text}` is inside only "
                                        f"{len(shallow.iterators)} loop(s); tiling covers loops shared by all statements")
    skew = tuple(tuple(r) for r in (skew or [[0] * k for _ in range(k)]))
    sched = tiled_schedule(program, sizes, skew)
    deps = conflicts(program) if deps is None else deps
    if not is_legal(program, sched, deps):
        found = auto_skew(program, sizes, deps)
        if found is None:
            raise CompileError(program.loc, f"tiling the {k} outer loops by {list(sizes)} would reorder dependent "
                                            "accesses (no skew up to 2 makes it legal); try fewer tiled loops")
        return found
    return Tiling(tuple(sizes), skew, sched, max(0, k - 1), "explicit tile sizes")


def auto_skew(program: PolyProgram, sizes: Sequence[int], deps: isl.UnionMap) -> Optional[Tiling]:
    """Smallest lower-triangular skew (entries 0..2) that makes the tiling legal, if any."""
    k = len(sizes)
    slots = [(j, i) for j in range(k) for i in range(j)]
    for total in range(1, 2 * len(slots) + 1):
        for values in itertools.product(range(3), repeat=len(slots)):
            if sum(values) != total:
                continue
            skew = [[0] * k for _ in range(k)]
            for (j, i), v in zip(slots, values):
                skew[j][i] = v
            sched = tiled_schedule(program, sizes, skew)
            if is_legal(program, sched, deps):
                return Tiling(tuple(sizes), tuple(tuple(r) for r in skew), sched, max(0, k - 1),
                              "skewed so that every dependence stays in order across tiles")
    return None


def _extents(program: PolyProgram, k: int) -> list[int]:
    """Trip count range of each of the k outer loops over all statements."""
    out = []
    for j in range(k):
        lo, hi = None, None
        for st in program.statements:
            m = program.statement_schedule(st.name).range()
            mn = iu.constant_value(m.dim_min(1 + 2 * j))
            mx = iu.constant_value(m.dim_max(1 + 2 * j))
            lo = mn if lo is None else min(lo, mn)
            hi = mx if hi is None else max(hi, mx)
        out.append(hi - lo + 1)
    return out


def auto_tiling(program: PolyProgram, *, local_words: int = DEFAULT_LOCAL_WORDS) -> Tiling:
    """Tile as many outer loops as legally possible (skewing if needed), with sizes that give every tiled
    loop several tiles and keep a tile's footprint (product of sizes) within the local-memory budget."""
    depth = min(_loop_depth(program), 3)
    if depth < 2:
        return no_tiling(program, "fewer than two loops enclose every statement: nothing to tile")
    deps = conflicts(program)
    for k in range(depth, 1, -1):
        ext = _extents(program, k)
        size = 16
        while size > 2 and (size ** k > local_words or any(e < 2 * size for e in ext)):
            size //= 2
        sizes = [max(2, min(size, e)) for e in ext]
        if any(e <= 2 for e in ext):
            continue
        sched = tiled_schedule(program, sizes, [[0] * k for _ in range(k)])
        if is_legal(program, sched, deps):
            return Tiling(tuple(sizes), tuple((0,) * k for _ in range(k)), sched, k - 1,
                          f"--tile auto: the {k} outer loops are permutable; tile {sizes} fits {local_words} words")
        skewed = auto_skew(program, sizes, deps)
        if skewed is not None:
            return Tiling(skewed.sizes, skewed.skew, skewed.schedule, k - 1,
                          f"--tile auto: the {k} outer loops become permutable after skewing; tile {sizes}")
    return no_tiling(program, "--tile auto: no legal tiling of two or more outer loops was found")


def parse_tile_option(text: str) -> Optional[list[int]]:
    """`none` -> None, `auto` -> [], `8,8,4` -> [8, 8, 4] (a usage error otherwise)."""
    from ..diagnostics import UsageError

    if text == "none":
        return None
    if text == "auto":
        return []
    try:
        sizes = [int(x) for x in text.split(",")]
    except ValueError:
        raise UsageError(f"--tile expects auto, none or sizes like 8,8,4; got `{text}`") from None
    if not sizes or any(s < 1 for s in sizes):
        raise UsageError(f"--tile sizes must be positive integers; got `{text}`")
    return sizes
