"""Wide memory read ports: which arrays read whole lines of memory, and how many words a line holds.

A real memory bus moves many words per beat (an AXI port of 512 bits: 16 floats), while a load unit
asks for one word per cycle.  With a memory width (`--mem-width BITS`, `ProcessNetwork.mem_width`),
an array the kernel only reads is read through one port of that width: its load units (one, or one
per parallel slab, `partition.READ_PORTS`) share the port through a line reader
(`hw_templates/line_reader.v.j2`).  It keeps the last `LINE_SLOTS` lines each unit asked for and
fetches the aligned line of `words_per_beat` words holding a requested word only when the unit does
not keep it.  A unit's order of first reads often walks down a column or along a wavefront (the
point order that hides a reduction's latency), which comes back to each row's line a word later: so
one line a cycle serves up to `words_per_beat` units.  The cycle model replays each unit's requests
against its kept lines (`new_lines`) and gives the port one line a cycle, in turn.

Only arrays without a store get one: a word of a stored array may change between two reads of its
line, and the memory-order tokens between its store and load units promise that a read after the
write sees it (docs/rtl-interface.md), so each such read must go to memory.  Such arrays keep a
port of one word per beat.
"""

from __future__ import annotations

from collections import deque
from typing import Optional

from .network import ProcessKind, ProcessNetwork

MAX_MEM_WIDTH = 1024  # bits: AXI4's widest data bus
MAX_MEM_LATENCY = 250  # cycles: the simulation memory model queues up to 256 requests (latency + 2)
# Lines a load unit keeps: a walk down a column of up to this many rows (or a wavefront across them)
# fetches each line once.  32 lines of 512 bits are 16 Kbit, one block RAM's worth, per unit.
LINE_SLOTS = 32


def check_mem_width(bits: int) -> Optional[str]:
    """Why `bits` is not a memory width (0: one word per beat), or None."""
    if bits == 0:
        return None
    if bits < 8 or bits > MAX_MEM_WIDTH or bits & (bits - 1):
        return f"--mem-width must be 0 or a power of two from 8 to {MAX_MEM_WIDTH} bits, got {bits}"
    return None


def check_mem_latency(cycles: int) -> Optional[str]:
    """Why `cycles` is not a memory latency the simulation memory model can give, or None."""
    if not 1 <= cycles <= MAX_MEM_LATENCY:
        return f"--mem-latency must be from 1 to {MAX_MEM_LATENCY} cycles, got {cycles}"
    return None


def line_words(element_bits: int, mem_width: int) -> int:
    """Words of `element_bits` in one line of a `mem_width` port (1: no wide port)."""
    return max(1, mem_width // element_bits)


def words_per_beat(net: ProcessNetwork) -> dict[str, int]:
    """array -> words of one line of its wide read port, for each array read through one (more than
    one word per line): loaded, never stored, and with elements narrower than the port."""
    if not net.mem_width:
        return {}
    loaded = {p.array for p in net.processes if p.kind == ProcessKind.LOAD}
    stored = {p.array for p in net.processes if p.kind == ProcessKind.STORE}
    out = {}
    for a in sorted(loaded - stored):
        words = line_words(net.program.arrays[a].type.bits, net.mem_width)
        if words > 1:
            out[a] = words
    return out


def row_major(point: tuple[int, ...], shape: tuple[int, ...]) -> int:
    """The word address of an element: row-major over the array's shape, as the memory holds it."""
    addr = 0
    for x, n in zip(point, shape):
        addr = addr * n + x
    return addr


def line_slots(array_words: int, words: int) -> int:
    """Lines a load unit keeps (`LINE_SLOTS`, fewer for an array of fewer lines)."""
    return max(1, min(LINE_SLOTS, -(-array_words // words)))


def new_lines(points: list[tuple[int, ...]], shape: tuple[int, ...], words: int) -> list[bool]:
    """Per request of one load unit, in its order: whether it asks memory for a line, that is whether
    its line is not among the last `line_slots` lines the unit asked for (first in, first out, as the
    line reader replaces them)."""
    total = 1
    for n in shape:
        total *= n
    slots = line_slots(total, words)
    kept: deque = deque()
    held: set = set()
    out = []
    for p in points:
        line = row_major(p, shape) // words
        miss = line not in held
        if miss:
            if len(kept) == slots:
                held.discard(kept.popleft())
            kept.append(line)
            held.add(line)
        out.append(miss)
    return out
