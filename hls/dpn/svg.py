"""`dpn.svg`: the process network drawn in pure Python (no Graphviz), a layered layout.

Columns, left to right: the load units, the compute processes by dataflow depth (longest path from
the loads, over channels that carry data; memory-order tokens and back edges of cycles ignored), the
store units.  Inside a column the processes are ordered by the barycentre of their neighbours (a few
sweeps both ways), which keeps most arrows short and uncrossed.  Channels are Bézier arrows from the
producer's right side to the consumer's left side, labelled `name kind depth`; the line style tells the
kind (FIFO solid, FIFO with multiplicity dash-dot, buffer dashed, memory order dotted grey).  A
channel to the process itself is a loop over its box; one going back (a cycle) bends out past both
boxes.  Boxes are coloured by kind (load, compute, store).  Each process is one `<g class="process">`
and each channel one `<g class="channel">` with a `<title>` tooltip, so the picture is easy to test
and to inspect in a browser.  The output is deterministic (no randomness, no dictionary-order
dependence beyond the network's own order).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Optional
from xml.sax.saxutils import escape

import networkx as nx

from .network import Channel, ProcessKind, ProcessNetwork

CHAR_W = 7.2  # monospace 12px
LINE_H = 16
PAD = 8
COL_GAP = 150  # room for the channel labels between columns
ROW_GAP = 26
MARGIN = 24
MAX_LINES = 4
MAX_CHARS = 46

FILL = {ProcessKind.LOAD: "#dbeafe", ProcessKind.COMPUTE: "#fef9c3", ProcessKind.STORE: "#dcfce7"}
STROKE = {ProcessKind.LOAD: "#1d4ed8", ProcessKind.COMPUTE: "#a16207", ProcessKind.STORE: "#15803d"}
EDGE = {  # kind -> (colour, dash pattern)
    "fifo": ("#1f2937", ""),
    "fifo_mult": ("#7c3aed", "8 3 2 3"),
    "buffer": ("#c2410c", "6 4"),
    "order": ("#9ca3af", "2 3"),
}


def _lines(net: ProcessNetwork, name: str) -> list[str]:
    p = net.process(name)
    if p.kind == ProcessKind.LOAD:
        body = [f"load {p.array}"]
    elif p.kind == ProcessKind.STORE:
        body = [f"store {p.array}"]
    else:
        body = [" ".join(net.program.statement(s).text.split()) for s in p.statements]
    out = [name]
    for text in body[:MAX_LINES - 1]:
        out.append(text if len(text) <= MAX_CHARS else text[:MAX_CHARS - 1] + "…")
    if len(body) > MAX_LINES - 1:
        out[-1] = f"… ({len(body)} statements)"
    return out


def _edge_kind(c: Channel) -> str:
    if c.role == "order":
        return "order"
    return c.kind.value if c.kind is not None else "fifo"


def _layers(net: ProcessNetwork) -> dict[str, int]:
    """Column of each process: loads 0, compute processes 1 + longest data path, stores last."""
    order = {p.name: k for k, p in enumerate(net.processes)}
    compute = [p.name for p in net.processes if p.kind == ProcessKind.COMPUTE]
    g = nx.DiGraph()
    g.add_nodes_from(compute)
    for c in net.channels:
        if c.role != "order" and c.producer != c.consumer and c.producer in g and c.consumer in g:
            g.add_edge(c.producer, c.consumer)
    # Cycles: inside a strongly connected component, keep only edges that go forward in program order.
    comp = {}
    for k, scc in enumerate(nx.strongly_connected_components(g)):
        for n in scc:
            comp[n] = k
    dag = nx.DiGraph()
    dag.add_nodes_from(compute)
    for u, v in g.edges:
        if comp[u] != comp[v] or order[u] < order[v]:
            dag.add_edge(u, v)
    layer = {n: 1 for n in compute}
    for n in nx.lexicographical_topological_sort(dag, key=lambda x: order[x]):
        for m in dag.successors(n):
            layer[m] = max(layer[m], layer[n] + 1)
    last = max(layer.values(), default=0) + 1
    for p in net.processes:
        if p.kind == ProcessKind.LOAD:
            layer[p.name] = 0
        elif p.kind == ProcessKind.STORE:
            layer[p.name] = last
    return layer


def _order(nodes: list[str], layer: dict[str, int], links: list[tuple[str, str]], sweeps: int = 8) -> list[list[str]]:
    """Nodes of each column (processes and the waypoints of long arrows), ordered by the barycentre of
    their neighbours' positions in the column before (sweeps to the right) or after (to the left)."""
    ncol = max(layer.values()) + 1
    cols: list[list[str]] = [[] for _ in range(ncol)]
    for n in nodes:
        cols[layer[n]].append(n)
    nbrs: dict[str, list[str]] = defaultdict(list)
    for a, b in links:
        nbrs[a].append(b)
        nbrs[b].append(a)
    for sweep in range(sweeps):
        pos = {n: k for col in cols for k, n in enumerate(col)}
        rng = range(1, ncol) if sweep % 2 == 0 else range(ncol - 2, -1, -1)
        for i in rng:
            ref = i - 1 if sweep % 2 == 0 else i + 1

            def bary(n: str, i: int = i, ref: int = ref) -> tuple[float, int]:
                ys = [pos[m] for m in nbrs[n] if layer[m] == ref]
                ys = ys or [pos[m] for m in nbrs[n] if layer[m] != i]
                return (sum(ys) / len(ys) if ys else pos[n], pos[n])

            cols[i] = sorted(cols[i], key=bary)
            pos.update({n: k for k, n in enumerate(cols[i])})
    return cols


def _bezier_mid(p0, p1, p2, p3) -> tuple[float, float]:
    return (0.125 * p0[0] + 0.375 * p1[0] + 0.375 * p2[0] + 0.125 * p3[0],
            0.125 * p0[1] + 0.375 * p1[1] + 0.375 * p2[1] + 0.125 * p3[1])


def _f(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".")


def _curve(a: tuple[float, float], b: tuple[float, float]) -> tuple[tuple, tuple]:
    """Control points of a horizontal-tangent cubic from a to b."""
    dx = max(24.0, (b[0] - a[0]) / 2)
    return (a[0] + dx, a[1]), (b[0] - dx, b[1])


WAYPOINT_H = 14  # room a long arrow takes in a column it crosses
LANE_GAP = 9  # between the lanes of arrows going back, under the boxes


def network_svg(net: ProcessNetwork, title: Optional[str] = None) -> str:
    """The network as a standalone SVG document (module docstring)."""
    layer = _layers(net)
    procs = [p.name for p in net.processes]
    # Arrows spanning several columns get a waypoint in each column they cross (so they pass between
    # boxes, never through one); arrows to the same or an earlier column go back along lanes under
    # the drawing; arrows to the process itself are loops over its box.
    route: dict[str, list[str]] = {}
    back, loops = [], []
    links: list[tuple[str, str]] = []
    nodes = list(procs)
    for c in net.channels:
        a, b = layer[c.producer], layer[c.consumer]
        if c.producer == c.consumer:
            loops.append(c)
        elif b <= a:
            back.append(c)
        else:
            way = []
            for i in range(a + 1, b):
                w = f"\x00{c.name}\x00{i}"
                layer[w] = i
                nodes.append(w)
                way.append(w)
            chain = [c.producer, *way, c.consumer]
            links += list(zip(chain, chain[1:]))
            route[c.name] = way
    cols = _order(nodes, layer, links)
    text = {n: _lines(net, n) for n in procs}
    size = {n: (max(len(s) for s in ls) * CHAR_W + 2 * PAD, len(ls) * LINE_H + 2 * PAD - 4) for n, ls in text.items()}
    for n in nodes:
        size.setdefault(n, (0.0, WAYPOINT_H))
    # room above a box for its loops (and their labels)
    above = {n: 0 for n in nodes}
    for c in loops:
        above[c.producer] += 18 if above[c.producer] else 40
    col_w = [max((size[n][0] for n in col), default=0) for col in cols]
    gap = [ROW_GAP if any(n in text for n in col) else 6 for col in cols]
    col_h = [sum(size[n][1] + above[n] for n in col) + gap[i] * max(0, len(col) - 1) for i, col in enumerate(cols)]
    height = max(col_h, default=0)
    top = MARGIN + 46
    box: dict[str, tuple[float, float, float, float]] = {}
    col_x: list[tuple[float, float]] = []
    x = MARGIN
    for i, col in enumerate(cols):
        y = top + (height - col_h[i]) / 2
        for n in col:
            w, h = size[n]
            y += above[n]
            box[n] = (x + (col_w[i] - w) / 2, y, w, h)
            y += h + gap[i]
        col_x.append((x, x + col_w[i]))
        x += col_w[i] + COL_GAP
    width = max(x - COL_GAP + MARGIN, 420)
    lanes_y = top + height + 24
    bottom = lanes_y + LANE_GAP * len(back)

    def centre_y(n: str) -> float:
        return box[n][1] + box[n][3] / 2

    # Ports: a box's arrows leave its right side and enter its left side, spread in the order of the
    # heights of the next / previous point, so that arrows of one box do not cross each other.
    first_hop, last_hop = {}, {}
    for c in net.channels:
        if c.name in route:
            way = route[c.name]
            first_hop[c.name] = centre_y(way[0]) if way else centre_y(c.consumer)
            last_hop[c.name] = centre_y(way[-1]) if way else centre_y(c.producer)
        elif c in back:
            first_hop[c.name] = last_hop[c.name] = bottom + 1
    outs: dict[str, list[Channel]] = defaultdict(list)
    ins: dict[str, list[Channel]] = defaultdict(list)
    for c in net.channels:
        if c.name in first_hop:
            outs[c.producer].append(c)
            ins[c.consumer].append(c)
    port_out, port_in = {}, {}
    for n, cs in outs.items():
        bx, by, bw, bh = box[n]
        for k, c in enumerate(sorted(cs, key=lambda c: (first_hop[c.name], c.name))):
            port_out[c.name] = (bx + bw, by + bh * (k + 1) / (len(cs) + 1))
    for n, cs in ins.items():
        bx, by, bw, bh = box[n]
        for k, c in enumerate(sorted(cs, key=lambda c: (last_hop[c.name], c.name))):
            port_in[c.name] = (bx, by + bh * (k + 1) / (len(cs) + 1))

    name = title or net.program.name
    n_kind: dict[str, int] = defaultdict(int)
    for c in net.channels:
        n_kind[_edge_kind(c)] += 1
    legend_y = bottom + 34
    total_h = legend_y + 50
    lx, ly = float(MARGIN), legend_y
    legend = ['<g class="legend">']
    for kind in (ProcessKind.LOAD, ProcessKind.COMPUTE, ProcessKind.STORE):
        legend.append(f'<rect x="{_f(lx)}" y="{_f(ly)}" width="18" height="12" rx="3" fill="{FILL[kind]}" '
                      f'stroke="{STROKE[kind]}"/><text x="{_f(lx + 24)}" y="{_f(ly + 10)}">{kind.value}</text>')
        lx += 24 + len(kind.value) * CHAR_W + 18
    lx += 12
    for kind, (colour, dash) in EDGE.items():
        label = {"fifo": "FIFO", "fifo_mult": "FIFO with multiplicity", "buffer": "buffer",
                 "order": "memory order"}[kind]
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        legend.append(f'<path d="M{_f(lx)},{_f(ly + 6)} L{_f(lx + 34)},{_f(ly + 6)}" stroke="{colour}" '
                      f'stroke-width="1.4" fill="none"{dash_attr} marker-end="url(#arrow-{kind})"/>'
                      f'<text x="{_f(lx + 40)}" y="{_f(ly + 10)}">{label}</text>')
        lx += 40 + len(label) * CHAR_W + 18
    legend.append(f'<text x="{MARGIN}" y="{_f(ly + 32)}" fill="#4b5563">arrow label: channel, kind, depth in '
                  "words (hover over an arrow or a box for the details)</text>")
    legend.append("</g>")
    subtitle = (f"{len(net.processes)} processes, {len(net.channels)} channels "
                f"({', '.join(f'{v} {k}' for k, v in sorted(n_kind.items()))}); "
                "columns: loads, compute by dataflow depth, stores")
    width = max(width, lx + MARGIN, len(subtitle) * CHAR_W + 2 * MARGIN)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_f(width)}" height="{_f(total_h)}" '
           f'viewBox="0 0 {_f(width)} {_f(total_h)}" font-family="monospace" font-size="12">',
           f"<title>{escape(name)}: process network</title>", "<defs>"]
    for kind, (colour, _) in EDGE.items():
        out.append(f'<marker id="arrow-{kind}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
                   f'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{colour}"/>'
                   "</marker>")
    out += ["</defs>", f'<rect x="0" y="0" width="{_f(width)}" height="{_f(total_h)}" fill="white"/>',
            f'<text x="{MARGIN}" y="{MARGIN + 8}" font-size="15" font-weight="bold">{escape(name)}</text>',
            f'<text x="{MARGIN}" y="{MARGIN + 26}" fill="#4b5563">{escape(subtitle)}</text>',
            '<g class="channels" fill="none">']
    labels = []
    for c in net.channels:
        kind = _edge_kind(c)
        colour, dash = EDGE[kind]
        depth = "?" if c.depth is None else c.depth
        label = f"{c.name} {kind} {depth}"
        tip = (f"{c.name}: {c.producer} ({c.source_port}) -> {c.consumer} ({c.sink_port}), {kind}, depth {depth}, "
               f"{c.width} bits, array {c.array}")
        if c in loops:
            bx, by, bw, bh = box[c.producer]
            k = [q for q in loops if q.producer == c.producer].index(c)
            x0, x1 = bx + bw * 0.66 + 8 * k, bx + bw * 0.34 - 8 * k
            lift = 30 + 18 * k
            d = f"M{_f(x0)},{_f(by)} C{_f(x0 + 12)},{_f(by - lift)} {_f(x1 - 12)},{_f(by - lift)} {_f(x1)},{_f(by)}"
            mid = ((x0 + x1) / 2, by - 0.75 * lift)
        elif c in back:  # out of the producer, down to its lane, left, up into the consumer
            p0, p3 = port_out[c.name], port_in[c.name]
            lane = lanes_y + LANE_GAP * back.index(c)
            xr, xl = p0[0] + 16 + 3 * back.index(c), p3[0] - 16 - 3 * back.index(c)
            d = (f"M{_f(p0[0])},{_f(p0[1])} L{_f(xr - 6)},{_f(p0[1])} Q{_f(xr)},{_f(p0[1])} {_f(xr)},{_f(p0[1] + 6)} "
                 f"L{_f(xr)},{_f(lane - 6)} Q{_f(xr)},{_f(lane)} {_f(xr - 6)},{_f(lane)} L{_f(xl + 6)},{_f(lane)} "
                 f"Q{_f(xl)},{_f(lane)} {_f(xl)},{_f(lane - 6)} L{_f(xl)},{_f(p3[1] + 6)} "
                 f"Q{_f(xl)},{_f(p3[1])} {_f(xl + 6)},{_f(p3[1])} L{_f(p3[0])},{_f(p3[1])}")
            mid = (xl + (xr - xl) * (back.index(c) + 1) / (len(back) + 1), lane + 6)  # spread along the lanes
        else:
            pts = [port_out[c.name]]
            for w in route[c.name]:  # straight across the column, between its boxes
                i = layer[w]
                pts += [(col_x[i][0], centre_y(w)), (col_x[i][1], centre_y(w))]
            pts.append(port_in[c.name])
            d = f"M{_f(pts[0][0])},{_f(pts[0][1])}"
            for k in range(0, len(pts) - 1, 2):
                a, b = pts[k], pts[k + 1]
                c1, c2 = _curve(a, b)
                d += f" C{_f(c1[0])},{_f(c1[1])} {_f(c2[0])},{_f(c2[1])} {_f(b[0])},{_f(b[1])}"
                if k + 2 < len(pts):
                    d += f" L{_f(pts[k + 2][0])},{_f(pts[k + 2][1])}"
            c1, c2 = _curve(pts[0], pts[1])
            mid = _bezier_mid(pts[0], c1, c2, pts[1])
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(f'<g class="channel kind-{kind}" id="ch-{escape(c.name)}"><title>{escape(tip)}</title>'
                   f'<path d="{d}" stroke="{colour}" stroke-width="{1 if kind == "order" else 1.4}"{dash_attr} '
                   f'marker-end="url(#arrow-{kind})"/></g>')
        labels.append((mid, label, colour))
    out.append("</g>")
    out.append('<g class="labels" font-size="10">')  # over every arrow, on a white ground
    placed: list[tuple[float, float, float, float]] = []
    for (mx, my), label, colour in labels:
        w = len(label) * 6.1 + 4
        for shift in (0, 13, -13, 26, -26, 39, -39):  # the first place that overlaps no label so far
            y = my + shift
            if not any(abs(mx - px) < (w + pw) / 2 and abs(y - py) < 13 for px, py, pw, _ in placed):
                break
        else:
            y = my
        placed.append((mx, y, w, 13))
        my = y
        out.append(f'<rect x="{_f(mx - w / 2)}" y="{_f(my - 12)}" width="{_f(w)}" height="13" rx="2" fill="white" '
                   f'fill-opacity="0.85"/><text x="{_f(mx)}" y="{_f(my - 2)}" text-anchor="middle" '
                   f'fill="{colour}">{escape(label)}</text>')
    out += ["</g>", '<g class="processes">']
    for p in net.processes:
        bx, by, bw, bh = box[p.name]
        lines = text[p.name]
        tip = p.name + ": " + ("; ".join(net.program.statement(s).text for s in p.statements)
                               if p.kind == ProcessKind.COMPUTE else f"{p.kind.value} unit of array {p.array}")
        shape = (f'<rect x="{_f(bx)}" y="{_f(by)}" width="{_f(bw)}" height="{_f(bh)}" rx="6" '
                 f'fill="{FILL[p.kind]}" stroke="{STROKE[p.kind]}" stroke-width="1.5"/>')
        body = [f'<text x="{_f(bx + PAD)}" y="{_f(by + PAD + 11)}" font-weight="bold">{escape(lines[0])}</text>']
        for k, ln in enumerate(lines[1:], start=1):
            body.append(f'<text x="{_f(bx + PAD)}" y="{_f(by + PAD + 11 + k * LINE_H)}" fill="#374151">'
                        f"{escape(ln)}</text>")
        out.append(f'<g class="process kind-{p.kind.value}" id="p-{escape(p.name)}"><title>{escape(tip)}</title>'
                   + shape + "".join(body) + "</g>")
    out.append("</g>")
    out += legend + ["</svg>"]
    return "\n".join(out) + "\n"
