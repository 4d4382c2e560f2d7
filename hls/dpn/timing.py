"""A cycle-level model of a sized network, and channel sizes for throughput (double buffering).

`size_channels` gives the smallest depths with which the sequential order runs: no deadlock, but a
process may then wait for its consumer at every value, and parallel processes run in lockstep.  The
model here runs the network the way the RTL does:

- a process starts at most one iteration per cycle, once every value the iteration reads at issue is
  in its channel; the values it writes come out of its pipeline `latency` cycles later, in order, and
  their consumers see them `1 + input_delay(channel)` cycles after that;
- an operand read later (`read_stage`, from `hls.rtl.datapath.late_reads`) is waited for when the
  iteration reaches that stage: the stages before it hold (no issue either), the ones after it drain;
- when the channel a result goes to is full, the whole pipeline of the process waits;
- a FIFO frees a word at its (first) read, a buffer frees a slot at the last read of its value;
- memory never holds a unit back: an array's load unit has its read channel and its store unit the
  write channel to themselves (one unit per channel; an array only read may have a read channel per
  parallel slab, `partition.READ_PORTS`), each channel moves a word per cycle,
  and a load and a store of the array move theirs in the same cycle; except on a wide read port
  (`memports`), where the load units of an array take turns for the one line a cycle it fetches,
  each unit asking for a line only when it does not keep the requested word's.  A store's "values" are the
  memory-order tokens it owes loads, sent once the write's response is back, after the memory latency
  like a load's data (`hls.rtl.generate.process_latencies`).

`deepen` then grows the FIFOs on which producers wait the longest, as long as the modelled cycle count
keeps dropping: the extra words are what lets transfers of the next tile overlap computation on the
current one.  Depths only grow, so the deadlock-freedom of the sequential sizes (docs/channel-sizing.md)
is kept.  The model is also what `report.md` gives as the estimated cycle count.

The model runs in C (`native_model`, `cycle_model.c`: 20-40 times faster) unless a run is recorded
or gcc cannot build it; this module's Python model is its specification.
"""

from __future__ import annotations

from array import array
from collections import deque
from dataclasses import dataclass, field, replace
from typing import Iterator, Mapping, NamedTuple, Optional, Sequence

import numpy as np

from .memports import new_lines, words_per_beat
from . import native_model
from .network import Channel, ChannelKind, ProcessKind, ProcessNetwork
from .tables import NetworkTables

# A word written to a channel waits this many cycles in the channel's input register (a FIFO's) or
# queue (a buffer's) before its consumer can see it: the consumer's operand flags are registers
# computed a cycle ahead, and a buffer's slot lookup is off the producer's handshake
# (docs/rtl-timing.md)
CHANNEL_INPUT_DELAY = 1
# A buffer of more than this many slots has two input registers in front of its queue (its SIZE-to-1
# full-bit lookup starts from the first and ends in the second, hw_templates/buffer_sync.v.j2): two
# cycles more
BUFFER_INREG_SLOTS = 64
BUFFER_INREG_DELAY = 2


def input_delay(c: Channel) -> int:
    """Cycles a word written to `c` waits before its consumer can see it, beyond the one cycle of
    its write: `CHANNEL_INPUT_DELAY`, and more through a big buffer's input registers."""
    big = c.kind == ChannelKind.BUFFER and c.depth > BUFFER_INREG_SLOTS
    return CHANNEL_INPUT_DELAY + (BUFFER_INREG_DELAY if big else 0)


ISSUE_WINDOWS = 8  # the parts of a process's run whose issue rates `Timing.issued` shows


@dataclass
class Timing:
    cycles: Optional[int]  # None: the model stopped making progress
    full_waits: dict[str, int] = field(default_factory=dict)  # channel -> cycles a producer waited on it
    empty_waits: dict[str, int] = field(default_factory=dict)  # channel -> cycles a consumer waited on it
    busy: dict[str, int] = field(default_factory=dict)  # process -> iterations started
    # process -> the cycles it issued iterations number k * (n - 1) // ISSUE_WINDOWS at, k = 0 ..
    # ISSUE_WINDOWS (n iterations): its issue rate along the run, which the estimate of a larger
    # network with the same tile structure follows (`pipeline.extrapolated_cycles`)
    issued: dict[str, tuple[int, ...]] = field(default_factory=dict)


# What a process does in one cycle of the model (`ScheduleRecorder`), in the order the states take
# precedence: an iteration issued; the pipeline held by a full output channel (back-pressure); an
# operand not in its channel yet (at issue or at a later stage); nothing left to issue, iterations
# still in the pipeline; finished.
STATES = ("busy", "full", "empty", "drain", "done")
BUSY, FULL, EMPTY, DRAIN, DONE = range(len(STATES))
LINE_PORT = "wide read port"  # what a load unit waits on while another unit of its port fetches a line


class Interval(NamedTuple):
    start: int
    stop: int  # first cycle after it
    state: str  # one of STATES
    on: Optional[str]  # what a stall waits on: a channel (full, empty)


class ScheduleRecorder:
    """What each process does at every cycle of one `simulate_timing` run, for `schedule.svg`
    (`hls/dpn/gantt.py`).  Kept as run-length intervals: an entry is appended only when a process's
    state or what it waits on changes, so a run of millions of cycles in which processes keep one
    state for long costs little, and the model without a recorder pays one test per decision.

    Cycles the model jumps over (nothing can change until a value arrives) keep the state of the cycle
    before them; they are listed in `skipped` because the model's stall counters
    (`Timing.empty_waits`, `full_waits`) do not count them."""

    def __init__(self) -> None:
        self.processes: list[str] = []
        self.cycles: Optional[int] = None  # the run's cycle count (None: the model stopped)
        self.end = 0  # first cycle not recorded
        self.skipped: list[tuple[int, int]] = []  # [start, stop) of the cycles jumped over
        self._starts: list[array] = []
        self._states: list[bytearray] = []
        self._on: list[list[Optional[str]]] = []

    def begin(self, processes: Sequence[str]) -> None:
        """A new run of the model over `processes` (in the plan's order; `mark` numbers them so)."""
        self.__init__()
        self.processes = list(processes)
        self._starts = [array("q") for _ in self.processes]
        self._states = [bytearray() for _ in self.processes]
        self._on = [[] for _ in self.processes]

    def mark(self, i: int, t: int, state: int, on: Optional[str]) -> None:
        """Process number i is in `state` from cycle t on."""
        self._starts[i].append(t)
        self._states[i].append(state)
        self._on[i].append(on)

    def finish(self, end: int, cycles: Optional[int]) -> None:
        """The run stopped with `end` the first cycle not modelled; a finished run is cut at its cycle
        count (the model may have gone through one more cycle, in which every process was done)."""
        self.cycles = cycles
        self.end = end if cycles is None else min(end, cycles)

    def changes(self, process: str) -> int:
        """How many intervals the process has: what the record costs."""
        return len(self._states[self.processes.index(process)])

    def intervals(self, process: str) -> Iterator[Interval]:
        """The process's states, one interval per run, tiling [0, end)."""
        i = self.processes.index(process)
        starts, states, on = self._starts[i], self._states[i], self._on[i]
        for k, start in enumerate(starts):
            if start >= self.end:
                break
            stop = starts[k + 1] if k + 1 < len(starts) else self.end
            yield Interval(start, min(stop, self.end), STATES[states[k]], on[k])


@dataclass
class Rows:
    """Entries of one process (reads or writes) grouped by its iterations: iteration k's are rows
    `offsets[k]` .. `offsets[k + 1]` of `columns` (channel number first).  Numpy throughout: the
    native model (`native_model`) takes them as they are, and only the Python model makes tuples."""

    offsets: np.ndarray  # int64, n + 1 entries, from 0
    columns: tuple[np.ndarray, ...]

    def listed(self) -> list[list[tuple]]:
        """Per iteration, its rows as tuples (the Python model's form), `ROWS_AT_ONCE` rows at a
        time, so the lists built stay small beside the tuples kept."""
        n = self.offsets.shape[0] - 1
        out: list[list[tuple]] = []
        first = 0  # the first iteration of the block
        ends = self.offsets[1:]
        while first < n:
            lo = int(self.offsets[first])
            last = max(first + 1, int(np.searchsorted(ends, lo + ROWS_AT_ONCE, side="right")))
            last = min(last, n)
            hi = int(ends[last - 1])
            rows = list(zip(*(f[lo:hi].tolist() for f in self.columns)))
            stops = (ends[first:last] - lo).tolist()
            out.extend(rows[a:b] for a, b in zip([0] + stops[:-1], stops))
            first = last
        return out


@dataclass
class Plan:
    """What each iteration of each process reads (channel, value, frees its word, buffer slot) and
    writes (channel, value, buffer slot): the same for every run of the model on one network, so
    `deepen` builds it once for all its trials.  Reads are split by the pipeline stage that takes
    them: those at issue, then one group per later stage (`joins`, operands read late).  Channels
    are their index in `chans` and values their index in the channel's writes."""

    procs: list
    chans: list
    steps: list  # per process: (process, reads at issue, late read groups, writes, joins), as `Rows`
    values: list  # per channel: how many values it carries
    # per process: None, or for a load unit on a wide read port (`memports`) the port's number, the
    # unit's rank on it (`Process.port`) and, per iteration, whether it fetches a line (the units of
    # one port get a line a cycle between them, in turn by rank)
    lines: list = field(default_factory=list)
    listed: Optional[list] = None  # `steps` with `Rows.listed`, made for the Python model when it runs
    packed: Optional[dict] = None  # its arrays as the native model takes them (`native_model`), made once


def _channel_plan(c: Channel, tables: NetworkTables) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...], int]:
    """Per read (consumer iteration's place, value number, frees its word, buffer slot) and per write
    (producer iteration's place, value number, slot) of one channel, as numpy columns, and how many
    values it carries; kept with its pairs, which every trial of a network shares.  A value is a
    producer iteration; a FIFO frees its word at the value's first read, a buffer its slot at the last."""
    pairs = tables.pairs(c)
    key = (c.kind, c.moduli)
    if pairs.timing is None or pairs.timing[0] != key:
        m = pairs.consumer.shape[0]
        written, first, value = np.unique(pairs.producer, return_index=True, return_inverse=True)
        value = value.reshape(-1)
        buffered = c.kind == ChannelKind.BUFFER
        if buffered:  # pairs come in the consumer's order: a value's last read is its last pair
            first = m - 1 - np.unique(value[::-1], return_index=True)[1]
        free = np.zeros(m, dtype=bool)
        free[first] = True
        slot = np.zeros(m, dtype=np.int64)
        if buffered:
            stride = 1
            for k in reversed(range(len(c.moduli))):
                slot += (pairs.sources[:, k] % c.moduli[k]) * stride
                stride *= c.moduli[k]
        # a value's slot, from any of its pairs (`first` holds one per value, in value order)
        reads = (np.asarray(pairs.consumer, dtype=np.int64), value.astype(np.int64), free, slot)
        writes = (written.astype(np.int64), np.arange(written.shape[0], dtype=np.int64), slot[first])
        pairs.timing = (key, reads, writes, int(written.shape[0]))
    return pairs.timing[1], pairs.timing[2], pairs.timing[3]


def rows_by_iteration(n: int, columns: list[tuple[int, tuple[np.ndarray, ...]]], width: int) -> Rows:
    """The entries of the channels given (channel number, columns with the iteration's place first)
    grouped by iteration 0 .. n-1, channel by channel in the order given and in each channel's own
    order: one stable sort, where appending pair by pair was a third of a model's cost (3mm).
    `width`: the columns per entry, the place left out."""
    if not columns:
        return Rows(np.zeros(n + 1, dtype=np.int64), tuple(np.zeros(0, dtype=np.int64) for _ in range(width + 1)))
    at = np.concatenate([cols[0] for _ci, cols in columns])
    order = np.argsort(at, kind="stable")
    fields = [np.concatenate([np.full(cols[0].shape[0], ci, dtype=np.int64) for ci, cols in columns])[order]]
    fields += [np.concatenate([cols[f] for _ci, cols in columns])[order] for f in range(1, width + 1)]
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(at, minlength=n), out=offsets[1:])
    return Rows(offsets, tuple(fields))


ROWS_AT_ONCE = 1 << 16


def plan_of(net: ProcessNetwork, tables: NetworkTables,
            read_stage: Optional[Mapping[str, Mapping[str, int]]] = None) -> Plan:
    """`read_stage`: per compute process, the stage each read port (access id) is taken at (default 0)."""
    procs = list(net.processes)
    chans = list(net.channels)
    number = {c.name: n for n, c in enumerate(chans)}
    steps = []
    for p in procs:
        n = tables.order(p.name).position.shape[0]
        stage_of = (read_stage or {}).get(p.name, {})
        ins = net.inputs(p.name)
        joins = sorted({stage_of.get(c.sink_port, 0) for c in ins} - {0})
        group = {s: k for k, s in enumerate(joins)}
        key = ("reads", p.name, tuple((c.name, number[c.name], c.kind, c.moduli, stage_of.get(c.sink_port, 0)) for c in ins))
        if key not in tables.plans:
            at_issue: list = []
            per_join: list[list] = [[] for _ in joins]
            for c in ins:
                s, ci = stage_of.get(c.sink_port, 0), number[c.name]
                (at_issue if not s else per_join[group[s]]).append((ci, _channel_plan(c, tables)[0]))
            tables.plans[key] = (rows_by_iteration(n, at_issue, 3), [rows_by_iteration(n, g, 3) for g in per_join])
        reads, late = tables.plans[key]
        outs = net.outputs(p.name)
        key = ("writes", p.name, tuple((c.name, number[c.name], c.kind, c.moduli) for c in outs))
        if key not in tables.plans:
            tables.plans[key] = rows_by_iteration(n, [(number[c.name], _channel_plan(c, tables)[1]) for c in outs], 2)
        writes = tables.plans[key]
        steps.append((p, reads, late, writes, tuple(joins)))
    units = [(p.array, p.kind, p.port) for p in procs if p.kind in (ProcessKind.LOAD, ProcessKind.STORE)]
    # the model gives each unit its memory channel to itself, as the RTL does (`partition.load_name`)
    assert len(units) == len(set(units)), "two load (or store) units of one array would share its channel"
    return Plan(procs, chans, steps, [_channel_plan(c, tables)[2] for c in chans], _line_plan(net, tables))


def _listed(plan: Plan) -> list:
    """The Python model's form of the plan's steps, made once per plan."""
    if plan.listed is None:
        plan.listed = [(p, reads.listed(), list(zip(*(g.listed() for g in late))) if joins else
                        [()] * (reads.offsets.shape[0] - 1), writes.listed(), joins)
                       for p, reads, late, writes, joins in plan.steps]
    return plan.listed


def _line_plan(net: ProcessNetwork, tables: NetworkTables) -> list:
    """`Plan.lines`: which iterations of the load units on wide read ports fetch a line."""
    wide = words_per_beat(net)
    port = {a: k for k, a in enumerate(wide)}
    out: list = []
    for p in net.processes:
        if p.kind != ProcessKind.LOAD or p.array not in wide:
            out.append(None)
            continue
        shape = net.program.arrays[p.array].bound_shape
        elements = [tuple(x) for x in tables.order(p.name).in_run_order[:, p.band_dims:].tolist()]
        out.append((port[p.array], p.port, new_lines(elements, shape, wide[p.array])))
    return out


def simulate_timing(net: ProcessNetwork, tables: NetworkTables, latency: Mapping[str, int],
                    depth: Optional[Mapping[str, int]] = None, max_cycles: int = 10_000_000,
                    plan: Optional[Plan] = None,
                    read_stage: Optional[Mapping[str, Mapping[str, int]]] = None,
                    recorder: Optional[ScheduleRecorder] = None, engine: str = "auto") -> Timing:
    """Run the cycle model; `depth` overrides channel depths (channel name -> words); `read_stage`
    (or the `plan` built with it) says which operands a process reads after issue; `recorder`, if
    given, receives what every process does at every cycle.  `engine`: "native" (`native_model`, the
    same model in C), "python" (this module's, the specification, and the only one that records), or
    "auto": native unless recording or gcc cannot build it."""
    plan_ = plan_of(net, tables, read_stage) if plan is None else plan
    chans = plan_.chans
    buffered = [c.kind == ChannelKind.BUFFER for c in chans]
    # a FIFO holds one word more in its input register (a buffer's queue is not modelled: a producer
    # waits at a full slot here, a little later in the RTL)
    cap = [(depth or {}).get(c.name, c.depth) + (0 if buffered[n] else CHANNEL_INPUT_DELAY)
           for n, c in enumerate(chans)]
    delay = [input_delay(c) for c in chans]
    lat_of = [latency.get(step[0].name, 1) for step in plan_.steps]
    if engine == "native" or (engine == "auto" and recorder is None and native_model.available()):
        got = native_model.run(plan_, cap, delay, lat_of, max_cycles, ISSUE_WINDOWS)
        full = {c.name: got.full_waits[n] for n, c in enumerate(chans)}
        empty = {c.name: got.empty_waits[n] for n, c in enumerate(chans)}
        if got.cycles is None:
            return Timing(None, full, empty)
        procs = [step[0].name for step in plan_.steps]
        return Timing(got.cycles, full, empty, dict(zip(procs, got.busy)),
                      {p: got.marks[i] for i, p in enumerate(procs) if got.busy[i]})
    return _python_model(plan_, cap, delay, lat_of, max_cycles, recorder)


def _python_model(plan_: Plan, cap: list[int], delay: list[int], lat_of: list[int], max_cycles: int,
                  recorder: Optional[ScheduleRecorder]) -> Timing:
    chans = plan_.chans
    plan = _listed(plan_)
    buffered = [c.kind == ChannelKind.BUFFER for c in chans]
    avail: list[list[Optional[int]]] = [[None] * n for n in plan_.values]  # the cycle a value is readable
    fill = [0] * len(chans)
    slots: list[set[int]] = [set() for _ in chans]
    nxt = [0] * len(plan)
    # the iterations whose issue cycles are kept (`Timing.issued`), and those cycles
    checkpoints: list[dict[int, list[int]]] = [{} for _ in plan]
    for i, step in enumerate(plan):
        for j in range(ISSUE_WINDOWS + 1):
            checkpoints[i].setdefault(j * (len(step[1]) - 1) // ISSUE_WINDOWS, []).append(j)
    marks = [[0] * (ISSUE_WINDOWS + 1) for _ in plan]
    inflight: list[deque] = [deque() for _ in plan]
    # Iterations issued but not past their process's last late read, per process: `at_join[j]` is the
    # iteration at stage joins[j] (waiting for its late operands), `seg[j]` the ones between joins[j-1]
    # (or issue) and joins[j], as (iteration, base) with stage = shifts[j] - base: a segment advances
    # as a whole, so one counter moves all of its iterations.
    at_join: list[list] = [[None] * len(step[4]) for step in plan]
    seg: list[list[deque]] = [[deque() for _ in step[4]] for step in plan]
    shifts: list[list[int]] = [[0] * len(step[4]) for step in plan]
    before_last = [0] * len(plan)  # iterations issued and not past the last late read
    done = [False] * len(plan)  # every iteration issued and past its late reads
    full_waits = [0] * len(chans)
    empty_waits = [0] * len(chans)
    t = 0
    last = 0
    late_wait: Optional[int] = None  # the channel of the first late operand found missing this cycle
    rec = recorder is not None
    # A process without late reads that waits for a value not yet written, or for room in the channels
    # its oldest result goes to, does nothing but count that wait until the value is written or a word
    # of those channels is freed: it sleeps until then, and the cycles it slept are counted when it
    # wakes (`rouse`).  Cycles are counted as loop passes (`tick`): the cycles skipped when nothing moves
    # count no wait.  Not while recording: the recorder marks every cycle.
    asleep = [0] * len(plan)  # 0 awake, EMPTY or FULL
    slept_at = [0] * len(plan)  # the pass in which it fell asleep (its wait there is counted)
    sleep_on: list[tuple[int, ...]] = [()] * len(plan)  # the channels its waits are counted on
    value_watch: list[dict[int, list[int]]] = [{} for _ in chans]  # channel -> value -> sleepers
    room_watch: list[Optional[int]] = [None] * len(chans)  # channel -> its producer, asleep on it
    sleepers = 0
    tick = 0
    missed = 0  # the value `missing_of` found missing
    if rec:
        recorder.begin([step[0].name for step in plan])
        now_state: list[int] = [-1] * len(plan)
        now_on: list[Optional[str]] = [None] * len(plan)

    def note(i: int, state: int, on: Optional[str]) -> None:
        if state != now_state[i] or on != now_on[i]:
            now_state[i], now_on[i] = state, on
            recorder.mark(i, t, state, on)

    def sleep(i: int, why: int, on: tuple[int, ...]) -> None:
        nonlocal sleepers
        asleep[i], slept_at[i], sleep_on[i] = why, tick, on
        sleepers += 1
        if why == FULL:
            for ci in on:
                room_watch[ci] = i
        else:
            value_watch[on[0]].setdefault(missed, []).append(i)

    def rouse(i: int, skipped: int) -> None:
        """Process i is evaluated again from now on; `skipped`: the passes it slept through."""
        nonlocal sleepers
        waits = full_waits if asleep[i] == FULL else empty_waits
        for ci in sleep_on[i]:
            waits[ci] += skipped
            if asleep[i] == FULL:
                room_watch[ci] = None
        asleep[i] = 0
        sleepers -= 1

    def stopped(cycles: Optional[int], end: int) -> Timing:
        """The run's result; `end`: the first cycle not modelled."""
        for i, why in enumerate(asleep):
            if why:  # a deadlock or the cycle limit: it waited through the last pass too
                if why == EMPTY:
                    value_watch[sleep_on[i][0]].clear()
                rouse(i, tick - slept_at[i])
        if rec:
            recorder.finish(end, cycles)
        full = {c.name: full_waits[n] for n, c in enumerate(chans)}
        empty = {c.name: empty_waits[n] for n, c in enumerate(chans)}
        if cycles is None:
            return Timing(None, full, empty)
        return Timing(cycles, full, empty, {p.name: nxt[i] for i, (p, *_rest) in enumerate(plan)},
                      {p.name: tuple(marks[i]) for i, (p, *_rest) in enumerate(plan) if nxt[i]})

    def missing_of(group: list) -> Optional[int]:
        """The channel of the first operand of `group` not readable at cycle t (its value: `missed`)."""
        nonlocal wake, missed
        for ci, v, _free, _slot_ in group:
            when = avail[ci][v]
            if when is None or when > t:
                if when is not None:
                    wake = when if wake is None else min(wake, when)
                missed = v
                return ci
        return None

    def enter(i: int, joins: tuple, j: int, k: int, stage: int, shifted: bool) -> None:
        """Iteration k is at `stage` from the next cycle on, in segment j (below joins[j]);
        `shifted`: whether the segment's counter has already moved this cycle."""
        if stage == joins[j]:
            at_join[i][j] = k
        else:
            seg[i][j].append((k, shifts[i][j] + (0 if shifted else 1) - stage))

    def step_segments(i: int, joins: tuple, late: list, writes: list, lat: int, frozen: bool) -> bool:
        """One cycle of the segments before the last late read; returns whether the issue stage moves."""
        nonlocal progress, late_wait
        if not before_last[i]:
            return not frozen
        m = len(joins)
        here, below, counter = at_join[i], seg[i], shifts[i]
        en = not frozen
        ens = [False] * m  # ens[j]: the segment below joins[j] advances
        for j in range(m - 1, -1, -1):
            k = here[j]
            if k is not None:
                group = late[k][j]
                missing = missing_of(group)
                if missing is not None:
                    empty_waits[missing] += 1
                    en = False
                    if late_wait is None:
                        late_wait = missing
                elif en:
                    for ci, _v, free, s in group:
                        if free:
                            frees.append((ci, s))
                    here[j] = None
                    progress = True
                    if j == m - 1:
                        inflight[i].append((t + lat - joins[j], writes[k]))
                        before_last[i] -= 1
                    else:
                        enter(i, joins, j + 1, k, joins[j] + 1, False)
            ens[j] = en
        for j in range(m - 1, -1, -1):
            q_ = below[j]
            if not ens[j] or not q_:
                continue
            counter[j] += 1
            progress = True
            k, base = q_[0]
            if counter[j] - base == joins[j]:
                q_.popleft()
                here[j] = k
        return ens[0]

    # load units on a wide read port (`Plan.lines`); the units asking for their port this cycle, and
    # whose turn it is
    lines = plan_.lines or [None] * len(plan)
    asking: list[list[int]] = [[] for _ in range(1 + max((ln[0] for ln in lines if ln is not None), default=-1))]
    turn = [0] * len(asking)

    def issue(i: int, k: int) -> None:
        """Process i starts iteration k this cycle."""
        nonlocal progress, last
        joins = plan[i][4]
        for ci, _v, free, slot in plan[i][1][k]:
            if free:
                frees.append((ci, slot))
        if joins:
            enter(i, joins, 0, k, 1, True)
            before_last[i] += 1
        else:
            inflight[i].append((t + lat_of[i], plan[i][3][k]))
        nxt[i] = k + 1
        if k in checkpoints[i]:
            for j in checkpoints[i][k]:
                marks[i][j] = t
        progress = True
        last = max(last, t + 1)
        if rec:
            note(i, BUSY, None)

    while True:
        progress = False
        frees: list[tuple[int, int]] = []
        pending = False
        wake = None
        tick += 1
        for i, (p, reads, late, writes, joins) in enumerate(plan):
            if asleep[i]:
                continue
            q = inflight[i]
            if not q and done[i]:
                if rec:
                    note(i, DONE, None)
                continue
            frozen = False
            if q and q[0][0] <= t:  # retire the oldest result: every channel it goes to needs room
                outs = q[0][1]
                blocked = None  # the channels without room (a loop: a comprehension is a call per pass)
                for ci, _v, slot in outs:
                    if (slot in slots[ci]) if buffered[ci] else (fill[ci] >= cap[ci]):
                        if blocked is None:
                            blocked = [ci]
                        else:
                            blocked.append(ci)
                if blocked:
                    for ci in blocked:
                        full_waits[ci] += 1
                    frozen = True
                    if not rec and not joins:
                        sleep(i, FULL, tuple(blocked))
                else:
                    for ci, v, slot in outs:
                        avail[ci][v] = t + 1 + delay[ci]
                        fill[ci] += 1
                        if buffered[ci]:
                            slots[ci].add(slot)
                        if value_watch[ci]:
                            for w in value_watch[ci].pop(v, ()):
                                rouse(w, tick - slept_at[w] - (w > i))  # w > i: it is evaluated in this pass
                    q.popleft()
                    progress = True
                    last = max(last, t + 1)
            elif q:
                wake = q[0][0] if wake is None else min(wake, q[0][0])
            can_issue = not frozen
            if joins:
                late_wait = None
                can_issue = step_segments(i, joins, late, writes, lat_of[i], frozen)
                if before_last[i]:
                    pending = True
            k = nxt[i]
            if k >= len(reads):
                if before_last[i] == 0:
                    done[i] = True
                pending |= bool(q)
                if rec:
                    if frozen:
                        note(i, FULL, chans[blocked[0]].name)
                    elif joins and late_wait is not None:
                        note(i, EMPTY, chans[late_wait].name)
                    else:
                        note(i, DRAIN if q or before_last[i] else DONE, None)
                continue
            pending = True
            if not can_issue:
                if rec:
                    if frozen:
                        note(i, FULL, chans[blocked[0]].name)
                    else:
                        note(i, EMPTY, chans[late_wait].name)
                continue
            missing = missing_of(reads[k])
            if missing is not None:
                empty_waits[missing] += 1
                if rec:
                    note(i, EMPTY, chans[missing].name)
                elif not joins and not q and avail[missing][missed] is None:
                    sleep(i, EMPTY, (missing,))
                continue
            line = lines[i]
            if line is not None and line[2][k]:  # its wide port serves one unit a cycle, in turn
                asking[line[0]].append(i)
                continue
            issue(i, k)
        for g, units in enumerate(asking):
            if not units:
                continue
            granted = min(units, key=lambda u: (lines[u][1] < turn[g], lines[u][1]))
            turn[g] = lines[granted][1] + 1
            issue(granted, nxt[granted])
            if rec:
                for u in units:
                    if u != granted:
                        note(u, EMPTY, LINE_PORT)
            units.clear()
        for ci, s in frees:  # a word read this cycle is free from the next one
            fill[ci] -= 1
            slots[ci].discard(s)
            if room_watch[ci] is not None:
                rouse(room_watch[ci], tick - slept_at[room_watch[ci]])
        if sleepers:
            pending = True
        if not pending:
            return stopped(last, t + 1)
        if progress or frees:
            t += 1
        elif wake is not None and wake > t:
            if rec and wake > t + 1:
                recorder.skipped.append((t + 1, wake))
            t = wake
        else:
            return stopped(None, t + 1)
        if t > max_cycles:
            return stopped(None, t)


@dataclass
class Modelled:
    """A network ready for `deepen`: FIFOs read late already lengthened, its plan, the model's run."""

    net: ProcessNetwork
    plan: Plan
    before: Timing


def model(net: ProcessNetwork, tables: NetworkTables, latency: Mapping[str, int],
          read_stage: Optional[Mapping[str, Mapping[str, int]]] = None,
          max_cycles: Optional[int] = None) -> Modelled:
    """The cycle model of a sized network.  A FIFO read `s` stages after issue (`read_stage`) first
    gets `s` more words: read at issue, its values would wait in the pipeline's registers instead, and
    without them the producer stalls.  A run past `max_cycles` (if given) has `cycles` None."""
    late = {(p, port): s for p, ports in (read_stage or {}).items() for port, s in ports.items() if s}
    lengthened = [replace(c, depth=c.depth + late[(c.consumer, c.sink_port)])
                  if c.kind != ChannelKind.BUFFER and (c.consumer, c.sink_port) in late else c for c in net.channels]
    if lengthened != list(net.channels):  # the tables do not depend on depths
        net = net.with_channels(lengthened, net.stage)
    plan = plan_of(net, tables, read_stage)
    limit = {} if max_cycles is None else {"max_cycles": max_cycles}
    return Modelled(net, plan, simulate_timing(net, tables, latency, plan=plan, **limit))


def deepen(modelled: Modelled, tables: NetworkTables, latency: Mapping[str, int], *, rounds: int = 6,
           budget_words: Optional[int] = None) -> tuple[ProcessNetwork, Timing, Timing]:
    """Grow FIFOs that producers wait on (module docstring); returns (network, model before, after)."""
    net, plan, before = modelled.net, modelled.plan, modelled.before
    if before.cycles is None:
        tables.plans.clear()
        return net, before, before
    depth = {c.name: c.depth for c in net.channels}
    best = before
    spent = 0
    fifos = [c for c in net.channels if c.kind != ChannelKind.BUFFER]

    def hot(t: Timing, cycles: int) -> list[Channel]:
        return [c for c in fifos if t.full_waits.get(c.name, 0) > 0.02 * cycles]

    for _ in range(rounds):
        grow_next = hot(best, best.cycles)
        if not grow_next:
            break
        trial, extra, res = dict(depth), 0, None
        # Growing one FIFO of a chain often only moves the wait to the next one (LOAD -> S -> STORE
        # at depth 1): keep growing what the trial itself shows to be full before judging it.
        for _step in range(3):
            for c in grow_next:
                grow = max(2, trial[c.name])
                trial[c.name] += grow
                extra += grow
            if budget_words is not None and spent + extra > budget_words:
                res = None
                break
            res = simulate_timing(net, tables, latency, trial, plan=plan)
            if res.cycles is None or res.cycles <= 0.98 * best.cycles:
                break
            grow_next = [c for c in hot(res, res.cycles) if res.full_waits[c.name] > best.full_waits.get(c.name, 0)]
            if not grow_next:
                break
        if res is None or res.cycles is None or res.cycles > 0.98 * best.cycles:
            break
        depth, best, spent = trial, res, spent + extra
    tables.plans.clear()  # every run of this network is done (3mm: 349 -> 250 MB peak)
    grown = [replace(c, depth=depth[c.name]) if depth[c.name] != c.depth else c for c in net.channels]
    return net.with_channels(grown, net.stage), before, best
