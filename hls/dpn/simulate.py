"""The DPN simulator: processes as coroutines over bounded channels of exactly the computed sizes.

Each process executes its iterations in its own order; an iteration first *reads* (it needs every
input value to be available), computes, then *writes* (it needs room in every output channel).
The simulator interleaves the processes at random (`seed`), or replays the global schedule
(`order="schedule"`), which is the order the channel sizes were computed for.  When no process can
move, the run is a deadlock and the report names every blocked process, the channel it waits on and
the fill level of every channel.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field
from typing import Mapping, Optional

import islpy as isl
import numpy as np

from ..poly import isl_utils as iu
from ..poly.evaluate import EvaluationError, compile_expr, scalar_values
from .network import Channel, ChannelKind, ProcessKind, ProcessNetwork, Stage
from .tables import NetworkTables, Point


@dataclass
class Blocked:
    process: str
    iteration: Point
    phase: str  # "read" or "write"
    channel: str
    detail: str


@dataclass
class DeadlockReport:
    blocked: list[Blocked]
    fill: dict[str, tuple[int, int]]  # channel -> (occupied words, capacity)

    def format(self) -> str:
        lines = ["deadlock: no process can make progress"]
        for b in self.blocked:
            lines.append(f"  {b.process} at iteration {list(b.iteration)} waits to {b.phase} channel {b.channel}: {b.detail}")
        lines.append("  channel fill levels: " + ", ".join(f"{k} {u}/{c}" for k, (u, c) in self.fill.items()))
        return "\n".join(lines)


@dataclass
class SimResult:
    outputs: dict[str, np.ndarray]
    deadlock: Optional[DeadlockReport]
    steps: int
    words_loaded: int
    words_stored: int
    max_fill: dict[str, int] = field(default_factory=dict)

    @property
    def completed(self) -> bool:
        return self.deadlock is None


class _ChannelState:
    def __init__(self, c: Channel, capacity: int) -> None:
        self.c = c
        self.capacity = capacity
        self.fifo: deque = deque()
        self.register = None
        self.slots: dict[int, object] = {}
        self.max_fill = 0
        self.moduli = list(c.moduli)
        if c.kind == ChannelKind.BUFFER and c.depth is not None and capacity < c.depth:
            # A smaller buffer: shrink the innermost non-trivial modulus (used to show sizes are tight).
            k = max(i for i, b in enumerate(self.moduli) if b > 1)
            self.moduli[k] -= 1

    def fill(self) -> int:
        return len(self.fifo) if self.c.kind != ChannelKind.BUFFER else len(self.slots)

    def slot(self, x: Point) -> int:
        addr = 0
        for v, b in zip(x, self.moduli):
            addr = addr * b + (v % b)
        return addr


class _Proc:
    def __init__(self, name: str, iterations: list[Point]) -> None:
        self.name = name
        self.iterations = iterations
        self.pos = 0
        self.phase = "read"
        self.pending = None

    @property
    def done(self) -> bool:
        return self.pos >= len(self.iterations)

    @property
    def current(self) -> Point:
        return self.iterations[self.pos]


class Simulator:
    def __init__(self, net: ProcessNetwork, inputs: Mapping[str, object], *, capacities: Mapping[str, int] | None = None,
                 tables: NetworkTables | None = None) -> None:
        assert net.stage >= Stage.SIZED
        self.net = net
        self.program = net.program
        self.tables = tables or NetworkTables(net)
        caps = dict(capacities or {})
        self.chans = {c.name: _ChannelState(c, caps.get(c.name, c.depth)) for c in net.channels}
        # One memory per array, read by LOAD and written by STORE: ordering hazards are real here.
        self.mem = {k: np.array(inputs[k], dtype=a.type.dtype) for k, a in self.program.arrays.items() if a.is_arg}
        scalars = scalar_values(self.program, inputs)
        params = self.program.param_values()
        self.procs = {p.name: _Proc(p.name, self.tables.process(p.name).iterations) for p in net.processes}
        self.inputs = {p.name: [self.chans[c.name] for c in net.inputs(p.name)] for p in net.processes}
        self.outputs = {p.name: [self.chans[c.name] for c in net.outputs(p.name)] for p in net.processes}
        # compute process -> per member: (expression, its read ports); merged processes also map each
        # iteration to (member, statement instance)
        self.members: dict[str, list[tuple[object, list[tuple[str, list[_ChannelState]]]]]] = {}
        self.which: dict[str, dict[Point, tuple[int, Point]]] = {}
        self.ports: dict[str, list[tuple[str, list[_ChannelState]]]] = {}
        for p in net.processes:
            if p.kind == ProcessKind.COMPUTE:
                self.members[p.name] = []
                for k, m in enumerate(p.members):
                    st = self.program.statement(m.statement)
                    f = compile_expr(st.expr, {r.id: j for j, r in enumerate(st.reads)}, scalars, params)
                    ports = [(r.id, [s for s in self.inputs[p.name] if s.c.sink_port == r.id]) for r in st.reads]
                    self.members[p.name].append((f, ports))
                    if p.merged:
                        n = m.instance.dim(isl.dim_type.in_)
                        for r in iu.map_pairs(m.instance).tolist():
                            self.which.setdefault(p.name, {})[tuple(r[:n])] = (k, tuple(r[n:]))
            elif p.kind == ProcessKind.STORE:
                self.ports[p.name] = [("mem", [s for s in self.inputs[p.name] if s.c.sink_port == "mem"]),
                                      ("order", [s for s in self.inputs[p.name] if s.c.sink_port == "order"])]
            else:
                self.ports[p.name] = [("order", [s for s in self.inputs[p.name] if s.c.sink_port == "order"])]
        self.is_int = {k: a.type.is_int for k, a in self.program.arrays.items()}
        self.steps = 0
        self.loaded = 0
        self.stored = 0

    # -- one port read: which channel feeds iteration y, and can it be read now?
    def _port_source(self, states: list[_ChannelState], y: Point, optional: bool = False):
        for s in states:
            x = self.tables.channel(s.c).source.get(y)
            if x is not None:
                return s, x
        if optional:
            return None, None
        raise AssertionError(f"no channel feeds iteration {y}")

    def _read_ready(self, s: _ChannelState, x: Point, y: Point) -> Optional[str]:
        kind = s.c.kind
        if kind == ChannelKind.FIFO:
            return None if s.fifo else "empty"
        readers = self.tables.channel(s.c).readers[x]
        if kind == ChannelKind.FIFO_MULT:
            if readers[0] != y:
                return None
            return None if s.fifo else "empty"
        a = s.slot(x)
        # The hardware only has a full bit per slot; the allocation guarantees it then holds x.
        return None if a in s.slots else f"slot {a} is empty (waiting for the value of {list(x)})"

    def _do_read(self, s: _ChannelState, x: Point, y: Point):
        kind = s.c.kind
        if kind == ChannelKind.FIFO:
            return s.fifo.popleft()[1]
        readers = self.tables.channel(s.c).readers[x]
        if kind == ChannelKind.FIFO_MULT:
            if readers[0] == y:
                s.register = s.fifo.popleft()[1]
            return s.register
        a = s.slot(x)
        assert s.slots[a][0] == x, f"{s.c.name}: slot {a} holds {s.slots[a][0]}, not {x}: allocation bug"
        v = s.slots[a][1]
        if readers[-1] == y:
            del s.slots[a]
        return v

    def _write_ready(self, s: _ChannelState, x: Point) -> Optional[str]:
        if s.c.kind == ChannelKind.BUFFER:
            a = s.slot(x)
            return None if a not in s.slots else f"slot {a} still holds the value of {list(s.slots[a][0])}"
        return None if len(s.fifo) < s.capacity else f"full ({len(s.fifo)}/{s.capacity})"

    # -- advancing one process by one phase
    def try_step(self, name: str) -> Optional[Blocked]:
        pr = self.procs[name]
        proc = self.net.process(name)
        it = pr.current
        if pr.phase == "read":
            if proc.kind == ProcessKind.LOAD:
                for _port, states in self.ports[name]:
                    s, x = self._port_source(states, it, optional=True)
                    if s is None:
                        continue
                    why = self._read_ready(s, x, it)
                    if why is not None:
                        return Blocked(name, it, "read", s.c.name, why)
                    self._do_read(s, x, it)
                v = self.mem[proc.array][it[proc.band_dims:]]
                pr.pending = int(v) if self.is_int[proc.array] else v
                self.loaded += 1
            else:
                member, point = self.which[name][it] if name in self.which else (0, it)
                ports = self.members[name][member][1] if proc.kind == ProcessKind.COMPUTE else self.ports[name]
                picks = []
                for port, states in ports:
                    s, x = self._port_source(states, it, optional=(port == "order"))
                    if s is None:
                        continue
                    why = self._read_ready(s, x, it)
                    if why is not None:
                        return Blocked(name, it, "read", s.c.name, why)
                    picks.append((s, x))
                vals = [self._do_read(s, x, it) for s, x in picks]
                if proc.kind == ProcessKind.STORE:
                    self.mem[proc.array][it[proc.band_dims:]] = vals[0]
                    self.stored += 1
                    pr.phase = "write"  # then the order tokens, if any
                    return None
                try:
                    pr.pending = self.members[name][member][0](point, vals)
                except EvaluationError as e:
                    raise EvaluationError(f"{name} at {list(it)}: {e}") from None
            pr.phase = "write"
            return None
        targets = []
        for s in self.outputs[name]:
            if it in self.tables.channel(s.c).readers:
                why = self._write_ready(s, it)
                if why is not None:
                    return Blocked(name, it, "write", s.c.name, why)
                targets.append(s)
        for s in targets:
            if s.c.kind == ChannelKind.BUFFER:
                s.slots[s.slot(it)] = (it, pr.pending)
            else:
                s.fifo.append((it, pr.pending))
            s.max_fill = max(s.max_fill, s.fill())
        self._advance(pr)
        return None

    def _advance(self, pr: _Proc) -> None:
        pr.pos += 1
        pr.phase = "read"
        pr.pending = None
        self.steps += 1

    def report(self, blocked: list[Blocked]) -> DeadlockReport:
        return DeadlockReport(blocked, {k: (s.fill(), s.capacity) for k, s in self.chans.items()})

    def run(self, *, seed: int = 0, order: str = "random") -> SimResult:
        deadlock = None
        with np.errstate(all="ignore"):
            deadlock = self._run_schedule() if order == "schedule" else self._run_random(seed)
        return SimResult(self.mem, deadlock, self.steps, self.loaded, self.stored,
                         {k: s.max_fill for k, s in self.chans.items()})

    def _run_random(self, seed: int) -> Optional[DeadlockReport]:
        rng = random.Random(seed)
        live = [n for n, p in self.procs.items() if not p.done]
        while live:
            order = live[:]
            rng.shuffle(order)
            progressed = False
            blocked: list[Blocked] = []
            for name in order:
                # run a random-length burst so that interleavings vary widely
                burst = rng.randint(1, 8)
                for _ in range(burst):
                    if self.procs[name].done:
                        break
                    b = self.try_step(name)
                    if b is not None:
                        blocked.append(b)
                        break
                    progressed = True
            live = [n for n in live if not self.procs[n].done]
            if not progressed and live:
                return self.report(blocked)
        return None

    def _run_schedule(self) -> Optional[DeadlockReport]:
        events = []
        for name, pr in self.procs.items():
            t = self.tables.process(name).time
            events.extend((t[i], name) for i in pr.iterations)
        events.sort()
        for _t, name in events:
            pr = self.procs[name]
            start = pr.pos
            while pr.pos == start:
                b = self.try_step(name)
                if b is not None:
                    return self.report([b])
        return None


def simulate(net: ProcessNetwork, inputs: Mapping[str, object], *, seed: int = 0, order: str = "random",
             capacities: Mapping[str, int] | None = None, tables: NetworkTables | None = None) -> SimResult:
    return Simulator(net, inputs, capacities=capacities, tables=tables).run(seed=seed, order=order)
