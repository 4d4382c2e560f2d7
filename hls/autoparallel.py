"""`--parallel auto`: the parallel parts per band from the resource table, the roofline and the model.

The network at `--parallel 1` gives the modelled cycles, its busiest process's iterations and the
multiplier blocks of one part's datapaths (`rtl.generate.dsp_blocks`).  At P parts the work is
shared P ways and what lies beyond it (pipeline fill and drain, stalls) stays.  The memory roof is
each array's compulsory words at its channels' words per cycle: an array the kernel only reads gets a
read channel per part (`--read-ports per-part`), up to a line per cycle behind a wide port
(`--mem-width`); a written array is predicted with one load and one store channel (it may get a read
channel per part too, when each element is loaded for one part and never read back, and a write
channel per part, when each element is stored by one part: the compile tells).  `choose_parallel` doubles P while the DSP blocks stay within the budget, the tiles are wide
enough for the slabs and the predicted cycles, the larger of the two roofs, fall by `GAIN` or more:
that bounds the search without a compile.  The pipeline then compiles P = 2, 4, ... up to that bound
and stops where the cycle model gains less than `GAIN` (gemm-int: predicted 161 cycles at P = 8,
modelled 283): a compile per P tried, 2-5 compiles on the examples (bench/results/autoparallel.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable, Mapping, Optional

from .dpn.memports import words_per_beat
from .dpn.tiling import max_parts
from .metrics import compulsory_by_channel, memory_words_per_cycle
from .rtl.generate import dsp_blocks

if TYPE_CHECKING:
    from .dpn.network import ProcessNetwork
    from .poly.program import PolyProgram

AUTO = "auto"
MAX_PARALLEL = 64
GAIN = 0.9  # a doubling of P is kept when it predicts at most this fraction of the cycles


@dataclass(frozen=True)
class ParallelChoice:
    parallel: int
    dsp_per_part: int  # multiplier blocks of one part's datapaths
    budget: Optional[int]
    predicted: dict[int, int]  # P -> predicted cycles, for every P tried
    bound: str  # what stopped the doubling: "memory", "fixed", "dsp", "work", "limit", or "model" (`settled`)
    modelled: dict[int, int] = field(default_factory=dict)  # P -> the cycle model's, for every P compiled
    parts_at_one: int = 1  # parts per band the network at `--parallel 1` runs (slabs it chose itself)

    def note(self) -> str:
        tried = ", ".join(f"P={p}: {c}" for p, c in self.predicted.items())
        budget = "no DSP budget" if self.budget is None else f"DSP budget {self.budget}"
        gain = f"more parts gain under {round(100 * (1 - GAIN))}%"
        why = {"memory": f"{gain}: the memory roof binds",
               "fixed": f"{gain}: the cycles beyond the busiest process's iterations (pipeline fill and drain, "
                        "recurrence stalls) do not shrink with the parts",
               "dsp": "twice as many parts would exceed the DSP budget" if self.budget is None
               or self.dsp_per_part <= self.budget else "one part already exceeds the DSP budget: no fewer parts exist",
               "work": "a tile is narrower than twice as many slabs" if len(self.predicted) > 1 or self.parallel > 1
               else "nothing to cut into parts (no tile band, or no cycle estimate)",
               "limit": f"at most {MAX_PARALLEL} parts",
               "model": f"twice as many parts gain under {round(100 * (1 - GAIN))}% in the cycle model"}[self.bound]
        modelled = ", ".join(f"P={p}: {c}" for p, c in self.modelled.items())
        return (f"--parallel auto: {self.parallel} part{'s' if self.parallel != 1 else ''} per band, "
                f"{self.dsp_per_part} DSP block{'s' if self.dsp_per_part != 1 else ''} per part ({budget}); "
                f"predicted cycles {tried}; {why}"
                + (f"; modelled cycles {modelled}" if len(self.modelled) > 1 else ""))

    def settled(self, parallel: int, modelled: dict[int, int]) -> "ParallelChoice":
        """The choice after the cycle model's walk (`pipeline`) stopped at `parallel` parts."""
        bound = self.bound if parallel == self.parallel else "model"
        return replace(self, parallel=parallel, modelled=dict(sorted(modelled.items())), bound=bound)

    def to_json(self) -> dict:
        return {"parallel": self.parallel, "dsp_per_part": self.dsp_per_part, "dsp_budget": self.budget,
                "predicted_cycles": {str(p): c for p, c in self.predicted.items()},
                "modelled_cycles": {str(p): c for p, c in self.modelled.items()}, "bound": self.bound}


def memory_roof(words: Mapping[tuple[str, str], int], rate: Mapping[tuple[str, str], int],
                read_only: set[str], parallel: int, line_words: Mapping[str, int], per_part: bool) -> int:
    """Cycles the busiest array's channels need for its compulsory words at `parallel` parts: `rate`
    is words per cycle at one part (`metrics.memory_words_per_cycle`); a read-only array's read
    channels multiply by the parts when each part has its own, up to a line per cycle on a wide port."""
    roof = 0
    for key, n in words.items():
        r = max(1, rate.get(key, 1))
        if per_part and key[1] == "in" and key[0] in read_only:
            r = r * parallel
            if key[0] in line_words:
                r = min(r, line_words[key[0]])
        roof = max(roof, -(-n // r))
    return roof


def first_tried(parts: int) -> int:
    """The smallest power of two above the parts the network at `--parallel 1` already runs: fewer
    cannot be faster."""
    q = 2
    while q <= parts:
        q *= 2
    return q


def choose_parallel(cycles: int, work: int, parts: int, dsp_per_part: int, budget: Optional[int], max_parts: int,
                    roof_at: Callable[[int], int]) -> ParallelChoice:
    """The doubling rule of the module docstring.  The network at `--parallel 1` runs `parts` parts
    per band (slabs it chose itself) in `cycles`, its busiest process `work` iterations: what is
    beyond them (pipeline fill and drain, stalls) is taken as fixed, and the work is shared by P parts
    at `--parallel P`, so only a P above `parts` can be faster.  `max_parts`: the most parts a band can
    be cut into (`tiling.max_parts`); `roof_at(P)`: the
    memory roof at P."""
    fixed = max(0, cycles - work)
    predicted = {1: max(cycles, roof_at(1))}
    p, q = 1, first_tried(parts)
    while True:
        if q > MAX_PARALLEL:
            bound = "limit"
            break
        if q > max_parts:
            bound = "work"
            break
        if budget is not None and q * dsp_per_part > budget:
            bound = "dsp"
            break
        compute, memory = fixed + -(-work * parts // q), roof_at(q)
        predicted[q] = max(compute, memory)
        if predicted[q] > GAIN * predicted[p]:
            bound = "memory" if memory >= compute else "fixed"
            break
        p, q = q, 2 * q
    return ParallelChoice(p, dsp_per_part, budget, predicted, bound, parts_at_one=parts)


def parallel_bound(program: "PolyProgram", net: Optional["ProcessNetwork"], cycles: Optional[int], work: int,
                   budget: Optional[int], per_part_ports: bool) -> ParallelChoice:
    """`choose_parallel` on the network compiled at `--parallel 1` (its modelled `cycles`, its busiest
    process's `work`); one part where nothing can be cut (no tile band, no estimate)."""
    parts = net.partition[0] if net is not None else 1
    per_part = -(-(dsp_blocks(net) if net is not None else 0) // max(1, parts))
    bands = [b for b in net.tiling.bands if b.depth] if net is not None and net.tiling is not None else []
    if not bands or cycles is None:
        return ParallelChoice(1, per_part, budget, {1: cycles or 0}, "work", parts_at_one=parts)
    words = compulsory_by_channel(program)
    rate = memory_words_per_cycle(net)
    read_only = {a for a, _ in words} - {a for a, kind in words if kind == "out"}
    lines = words_per_beat(net)

    def roof(p: int) -> int:
        return memory_roof(words, rate, read_only, p, lines, per_part_ports and p > 1)

    return choose_parallel(cycles, work, parts, per_part, budget, min(max_parts(b) for b in bands), roof)
