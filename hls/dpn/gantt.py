"""`schedule.svg`: what each process of the cycle model does over time, as a Gantt chart.

The cycle model (`timing.simulate_timing`) is what the compiler's choices and its cycle estimate rest
on; a picture of it shows why a network takes the cycles it does: which process is busy, which waits
for an operand (an empty input channel), which is held by its consumer (a full output channel,
back-pressure).  One row per process (load
units, compute processes, store units, each in network order), x = cycles.

A run may last millions of cycles, and the picture must stay small and quick to draw: the cycles are
binned into at most `MAX_COLUMNS` columns, each drawn as the shares of its cycles in each state,
stacked (whole pixels of the row's height, so a column where a process is busy one cycle in three
shows a third of green, not the state that happens to dominate); neighbouring columns with the same
stack are one rectangle per state (up to `MAX_COLUMNS` cycles, a column is one cycle).  The file's
size is thus bounded by the number of processes, never by the cycle count; the exact shares are in
each span's tooltip, the totals and the channel each kind of stall waits on most in the row's.
Drawn in pure Python like `dpn.svg` (no matplotlib, no Graphviz: nothing to install, and the same
bytes for the same record, so compiles can be compared).
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Optional, Sequence
from xml.sax.saxutils import escape

from .network import ProcessKind, ProcessNetwork
from .timing import STATES, ScheduleRecorder

MAX_COLUMNS = 800
PLOT_W = 800.0
CHAR_W = 7.2  # monospace 12px
ROW_H = 16
ROW_PITCH = 22
MARGIN = 24

COLOUR = {"busy": "#16a34a", "full": "#dc2626", "empty": "#f59e0b", "drain": "#86efac",
          "done": "#e5e7eb"}
LABEL = {
    "busy": "issuing an iteration (busy)",
    "full": "stalled: output channel full (back-pressure)",
    "empty": "stalled: input channel empty",
    "drain": "draining: nothing left to issue, results in the pipeline",
    "done": "finished",
}
KIND_ORDER = {ProcessKind.LOAD: 0, ProcessKind.COMPUTE: 1, ProcessKind.STORE: 2}
KIND_COLOUR = {ProcessKind.LOAD: "#1d4ed8", ProcessKind.COMPUTE: "#a16207", ProcessKind.STORE: "#15803d"}


def _f(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".")


def _pct(part: int, whole: int) -> str:
    if not whole or not part:
        return "0%"
    return "<1%" if 100 * part < 0.5 * whole else f"{100 * part / whole:.0f}%"


def _cycles_text(n: int) -> str:
    """Compact cycle counts for the axis: 750, 12k, 1.5M."""
    if n < 10_000:
        return str(n)
    if n < 10_000_000:
        return f"{n / 1000:g}k"
    return f"{n / 1_000_000:g}M"


def _tick_step(span: int) -> int:
    """A 1-2-5 step giving at most 10 ticks over `span` cycles."""
    step = 1
    while True:
        for m in (1, 2, 5):
            if span / (step * m) <= 10:
                return step * m
        step *= 10


def _waits_text(waits: dict[tuple[str, str], int], state: str) -> str:
    """The channel a stall of `state` waits on most, e.g. `mostly on c3 (120 cycles)`."""
    mine = [(n, on) for (s, on), n in waits.items() if s == state]
    if not mine:
        return ""
    n, on = max(mine, key=lambda x: (x[0], x[1]))  # a tie goes to the later name, always the same
    return f", mostly on channel {on} ({n} cycles)"


class _Row:
    """One process's cycles per column: `acc[b][s]` cycles of column b in state s, and per column the
    stall cycles by what they wait on."""

    def __init__(self, rec: ScheduleRecorder, name: str, edges: list[int]) -> None:
        ncols = len(edges) - 1
        self.acc = [[0] * len(STATES) for _ in range(ncols)]
        self.waits: dict[int, dict[tuple[str, str], int]] = {}
        index = {s: k for k, s in enumerate(STATES)}
        for iv in rec.intervals(name):
            s = index[iv.state]
            b = bisect_right(edges, iv.start) - 1
            while b < ncols and edges[b] < iv.stop:
                n = min(iv.stop, edges[b + 1]) - max(iv.start, edges[b])
                self.acc[b][s] += n
                if iv.on is not None:
                    w = self.waits.setdefault(b, {})
                    w[(iv.state, iv.on)] = w.get((iv.state, iv.on), 0) + n
                b += 1

    def stack(self, b: int) -> tuple[int, ...]:
        """Pixels of the row's height per state in column b, by largest remainder (all 0: no cycle
        recorded there)."""
        cells = self.acc[b]
        whole = sum(cells)
        if not whole:
            return (0,) * len(cells)
        px = [n * ROW_H // whole for n in cells]
        rest = sorted(range(len(cells)), key=lambda s: (-(cells[s] * ROW_H % whole), s))
        for s in rest[:ROW_H - sum(px)]:
            px[s] += 1
        return tuple(px)

    def totals(self, b0: int, b1: int) -> tuple[list[int], dict[tuple[str, str], int]]:
        sums = [sum(self.acc[b][s] for b in range(b0, b1)) for s in range(len(STATES))]
        waits: dict[tuple[str, str], int] = {}
        for b in range(b0, b1):
            for key, n in self.waits.get(b, {}).items():
                waits[key] = waits.get(key, 0) + n
        return sums, waits


def _shares(sums: list[int]) -> str:
    whole = sum(sums)
    return ", ".join(f"{s} {_pct(n, whole)}" for s, n in zip(STATES, sums) if n)


def _span(name: str, row: _Row, edges: list[int], b: int, e: int, stack: tuple[int, ...], x: float, w: float,
          y: float) -> str:
    """Columns b..e-1 of one row (one stack of states): a rectangle per state, busy on top, and a
    tooltip with the cycles, the exact shares and what the stalls wait on."""
    sums, waits = row.totals(b, e)
    first, stop = edges[b], edges[e]
    where = f"cycle {first}" if stop - first == 1 else f"cycles {first}-{stop - 1}"
    present = [s for s, n in zip(STATES, sums) if n]
    if len(present) == 1:
        tip = f"{name}: {LABEL[present[0]]}, {where}{_waits_text(waits, present[0])}"
    else:
        tip = f"{name}, {where}: {_shares(sums)}" + "".join(
            f"; {s}{_waits_text(waits, s)[1:]}" for s in present if _waits_text(waits, s))
    out = [f'<g class="span"><title>{escape(tip)}</title>']
    dy = 0
    for s, h in zip(STATES, stack):
        if h:
            out.append(f'<rect class="{s}" x="{_f(x)}" y="{_f(y + dy)}" width="{_f(w)}" height="{h}" '
                       f'fill="{COLOUR[s]}"/>')
            dy += h
    return "".join(out) + "</g>"


def schedule_svg(rec: ScheduleRecorder, net: ProcessNetwork, title: str, notes: Sequence[str] = (),
                 max_columns: int = MAX_COLUMNS) -> str:
    """The recorded run as a standalone SVG document (module docstring).  `net`: the network that was
    modelled (kinds of its processes); `title` and `notes` say which network it is and how many cycles."""
    span = max(1, rec.end)
    ncols = max(1, min(max_columns, span))
    edges = [b * span // ncols for b in range(ncols + 1)]
    col_w = PLOT_W / ncols
    kind = {p.name: p.kind for p in net.processes}
    order = {name: k for k, name in enumerate(rec.processes)}
    names = sorted(rec.processes, key=lambda n: (KIND_ORDER.get(kind.get(n), 1), order[n]))
    label_w = max([len(n) for n in names] + [8]) * CHAR_W + 16
    x0 = MARGIN + label_w
    per = span / ncols
    per_text = f"{per:.3g}" if per < 1000 else _cycles_text(round(per))
    head = [f"{len(names)} processes; x: cycles 0 to {span}"
            + (f", {per_text} cycles per column, stacked by the share of each state (hover for the figures)"
               if ncols < span else ", one column per cycle"), *notes]
    top = MARGIN + 30 + 16 * len(head)
    rows_h = ROW_PITCH * len(names)
    summary_x = x0 + PLOT_W + 12
    out_rows: list[str] = []
    summaries: list[str] = []
    summary_w = 0.0
    for r, name in enumerate(names):
        row = _Row(rec, name, edges)
        y = top + r * ROW_PITCH
        sums, waits = row.totals(0, ncols)
        tip = f"{name}: " + "; ".join(
            f"{s} {n} cycles ({_pct(n, span)}){_waits_text(waits, s)}" for s, n in zip(STATES, sums) if n)
        k = kind.get(name, ProcessKind.COMPUTE)
        parts = [f'<g class="process kind-{k.value}" id="p-{escape(name)}"><title>{escape(tip)}</title>',
                 f'<text x="{_f(x0 - 8)}" y="{_f(y + ROW_H - 4)}" text-anchor="end" fill="{KIND_COLOUR[k]}" '
                 f'font-weight="bold">{escape(name)}</text>']
        stacks = [row.stack(b) for b in range(ncols)]
        b = 0
        while b < ncols:
            e = b + 1
            while e < ncols and stacks[e] == stacks[b]:
                e += 1
            if any(stacks[b]):
                parts.append(_span(name, row, edges, b, e, stacks[b], x0 + b * col_w, (e - b) * col_w, y))
            b = e
        parts.append("</g>")
        out_rows.append("".join(parts))
        line = ", ".join(f"{s} {_pct(n, span)}" for s, n in zip(STATES, sums) if n and s not in ("done", "drain"))
        summary_w = max(summary_w, len(line) * CHAR_W)
        summaries.append(f'<text x="{_f(summary_x)}" y="{_f(y + ROW_H - 4)}" fill="#374151">{escape(line)}</text>')
    # the axis: a tick every 1-2-5 step of cycles, a light grid line through the rows
    axis_y = top + rows_h + 4
    step = _tick_step(span)
    axis = [f'<g class="axis" fill="#374151"><path d="M{_f(x0)},{_f(axis_y)} H{_f(x0 + PLOT_W)}" stroke="#374151"/>']
    for c in range(0, span + 1, step):
        x = x0 + PLOT_W * c / span
        axis.append(f'<path d="M{_f(x)},{_f(top - 4)} V{_f(axis_y)}" stroke="#d1d5db" stroke-width="0.6"/>'
                    f'<path d="M{_f(x)},{_f(axis_y)} v5" stroke="#374151"/>'
                    f'<text x="{_f(x)}" y="{_f(axis_y + 18)}" text-anchor="middle">{_cycles_text(c)}</text>')
    axis.append(f'<text x="{_f(x0 + PLOT_W / 2)}" y="{_f(axis_y + 36)}" text-anchor="middle">cycles</text></g>')
    legend_y = axis_y + 56
    legend = ['<g class="legend">']
    lx, ly, right = float(MARGIN), legend_y, 0.0
    for k, state in enumerate(STATES):
        if k == 3:  # two lines of three
            lx, ly = float(MARGIN), ly + 20
        legend.append(f'<rect x="{_f(lx)}" y="{_f(ly)}" width="18" height="12" fill="{COLOUR[state]}"/>'
                      f'<text x="{_f(lx + 24)}" y="{_f(ly + 10)}">{escape(LABEL[state])}</text>')
        lx += 24 + len(LABEL[state]) * CHAR_W + 24
        right = max(right, lx)
    legend.append("</g>")
    width = max(summary_x + summary_w + MARGIN, right + MARGIN,
                2 * MARGIN + max(len(t) for t in [title, *head]) * CHAR_W)
    height = ly + 12 + MARGIN
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_f(width)}" height="{_f(height)}" '
           f'viewBox="0 0 {_f(width)} {_f(height)}" font-family="monospace" font-size="12">',
           f"<title>{escape(title)}</title>",
           f'<rect x="0" y="0" width="{_f(width)}" height="{_f(height)}" fill="white"/>',
           f'<text x="{MARGIN}" y="{MARGIN + 8}" font-size="15" font-weight="bold">{escape(title)}</text>']
    for k, line in enumerate(head):
        out.append(f'<text x="{MARGIN}" y="{MARGIN + 28 + 16 * k}" fill="#4b5563">{escape(line)}</text>')
    out += axis + ['<g class="rows">', *out_rows, "</g>", '<g class="summaries">', *summaries, "</g>", *legend,
                   "</svg>"]
    return "\n".join(out) + "\n"


def message_svg(title: str, lines: Sequence[str], width: Optional[float] = None) -> str:
    """An SVG that only says, in text, why no schedule is drawn."""
    w = width or max(420.0, 2 * MARGIN + max(len(t) for t in [title, *lines]) * CHAR_W)
    h = MARGIN * 2 + 24 + 16 * len(lines)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_f(w)}" height="{_f(h)}" viewBox="0 0 {_f(w)} {_f(h)}" '
           'font-family="monospace" font-size="12">', f"<title>{escape(title)}</title>",
           f'<rect x="0" y="0" width="{_f(w)}" height="{_f(h)}" fill="white"/>',
           f'<text x="{MARGIN}" y="{MARGIN + 8}" font-size="15" font-weight="bold">{escape(title)}</text>']
    for k, line in enumerate(lines):
        out.append(f'<text x="{MARGIN}" y="{MARGIN + 30 + 16 * k}" fill="#4b5563">{escape(line)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
