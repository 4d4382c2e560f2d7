"""Process control: iteration registers, First/Next functions, and the guards of every port, computed
one iteration ahead into registers.

A process iterates over its domain in the order of its schedule.  `next(x)` is the lexicographic
successor in *time* (isl lexmin over {t -> t' : t < t'} pulled back to the domain), a piecewise
affine function with pieces P_p (disjoint sets) and values A_p.  All port guards (which channel feeds
a read, first/last reads, which channels a write goes to), buffer slots and memory addresses are isl
sets or functions over the same iteration vector.

**Lookahead.**  Nothing of that is evaluated from the current iteration on the path that uses it.
Every guard G is a register `g<k>` that holds G(x) for the current iteration x; so is every piece
selection `[x ∈ P_p]` (one-hot, or pieces that agree where they overlap: `successor_pieces`), the
last-iteration test, and every slot and address value `v<k>`.  When the process advances, the
registers take their values at next(x), computed from x in parallel for every piece and selected by
the registered piece bits:

    x' = OR_p (pc_p & A_p(x)),   g' = OR_p (pc_p & [A_p(x) ∈ G]),

where `[A_p(x) ∈ G]` is the preimage of G under A_p, an affine condition on x simplified (`gist`) on
P_p: mostly a constant or one comparison of narrow registers.  A slot `F(x) mod b` or an address
`F(x)` whose change F(A_p(x)) - F(x) is a constant on P_p (moving along a loop) is updated
incrementally (`v + δ`, with one conditional subtraction for a slot); otherwise it is computed from x
with its modulo reduced over the value's range by comparisons.  Registers are as wide as their
values' ranges over the domain (`boxes.dim_bounds`), and comparisons are printed at those widths
(`affine.SizedPrinter`), so the next-state logic is one narrow adder and comparator deep before an
AND-OR of the pieces: the control does not limit the clock.  At `start` the registers take their
values at the first iteration, computed here.
"""

from __future__ import annotations

import re
from typing import Optional

import islpy as isl

from ..dpn.network import Channel, Process
from ..poly import isl_utils as iu
from ..poly.lexorder import schedule_successor, with_partner
from ..poly.boxes import apart, dim_bounds
from .affine import SizedPrinter, aff_expr, drop_params, pw_multi_aff_pieces, signed_width


def dim_names(n: int) -> list[str]:
    return [f"x{k}" for k in range(n)]


def _point(s: isl.Set) -> list[int]:
    p = iu.sample(s)
    assert p is not None
    return list(p[s.dim(isl.dim_type.param):])


def _clog2(n: int) -> int:
    return max(1, (max(1, n) - 1).bit_length())


class Control:
    """The control of one process: iteration registers, their successor, and the registered guards
    and values that ports ask for (`predicate`, `slot`, `address`) before the module is rendered.

    Template view (`hw_templates/_control.v.j2`): `dims`, `widths`, `first`, `count`, `next_x`
    (per dimension, the next value), `regs` (per register: name, width, signed, first value, next
    value) and `wires` (the next-state logic's declarations), `is_last` (a register name)."""

    def __init__(self, proc: Process, values: dict[str, int]):
        dom = drop_params(proc.domain, values)
        sched = drop_params(proc.schedule, values)
        self.dom = dom
        n = dom.dim(isl.dim_type.set)
        self.dims = dim_names(n)
        self.count = iu.card(dom)
        if self.count:
            times = sched.range()
            self.first = _point(times.lexmin().apply(sched.reverse()))
            self.last = _point(times.lexmax().apply(sched.reverse()))
            self.bounds = dim_bounds(dom)
            raw = successor_pieces(schedule_successor(sched), self.count - 1)  # all but the last
        else:
            self.first = self.last = [0] * n
            self.bounds = [(0, 0)] * n
            raw = []
        self.widths = [signed_width(lo, hi) for lo, hi in self.bounds]
        self.printer = SizedPrinter(self.dims, self.bounds)
        self.pieces = [(s.intersect(dom), ma) for s, ma in raw]
        self._guards: dict[str, tuple[str, isl.Set]] = {}
        self._values: list[dict] = []
        self._value_names: dict[tuple, str] = {}
        self._wires: list[str] = []
        self._tmp = 0
        self._first_set = self._point_set(self.first) if self.count else None
        plain = len(self.pieces) > COALESCE_PIECES
        self.piece_bits = [self._guard(s, plain) for s, _ in self.pieces]
        last = self._point_set(self.last).intersect(dom) if self.count else dom
        self.is_last = self.predicate_set(last) if self.count else "1'b1"
        self._done = False

    # -------------------------------------------------------------------------------------------
    # registration

    def _point_set(self, point: list[int]) -> isl.Set:
        space = self.dom.get_space()
        pt = isl.Point.zero(space)
        for k, v in enumerate(point):
            pt = pt.set_coordinate_val(isl.dim_type.set, k, isl.Val.int_from_si(space.get_ctx(), int(v)))
        return isl.Set.from_point(pt)

    def _guard(self, s: isl.Set, plain: bool = False) -> str:
        """The register holding [x ∈ s] (s ⊆ domain) for the current iteration; shared by equal sets
        (compared simplified on the domain, or as they are with `plain`: the pieces of a successor
        of many pieces, whose simplification cost a twelfth of heat-3d's generate at level 3)."""
        key = str(s) if plain else str(iu.coalesced(s.gist(self.dom)))
        if key not in self._guards:
            self._guards[key] = (f"g{len(self._guards)}", s)
        return self._guards[key][0]

    def predicate_set(self, s: isl.Set) -> str:
        s = s.intersect(self.dom)
        if s.is_empty():
            return "1'b0"
        if self.dom.is_subset(s):
            return "1'b1"
        return self._guard(s)

    def predicate(self, s: isl.Set, values: dict[str, int]) -> str:
        """Verilog test of `s` for the current iteration: a constant or a guard register."""
        return self.predicate_set(drop_params(s, values))

    def slot(self, c: Channel, fn: isl.Map, values: dict[str, int]) -> str:
        """Buffer slot of the value `fn(x)` (a producer iteration) for the current iteration x: a
        register per modulus component (Σ stride_d · (F_d(x) mod b_d))."""
        fn = drop_params(fn, values).intersect_domain(self.dom)
        pieces = pw_multi_aff_pieces(isl.PwMultiAff.from_map(fn))
        terms, stride = [], 1
        for d in reversed(range(len(c.moduli))):
            b = c.moduli[d]
            if b > 1:
                pa = None
                for s, ma in pieces:
                    part = isl.PwAff.from_aff(ma.get_aff(d)).intersect_domain(s)
                    pa = part if pa is None else pa.union_max(part)
                terms.append((self._value(pa, b), stride))
            stride *= b
        if not terms:
            return "32'd0"
        if len(terms) == 1 and terms[0][1] == 1:
            return self._pad(terms[0][0])
        return self._pad(self._linear(terms, stride))

    def _linear(self, terms: list[tuple[str, int]], size: int) -> str:
        """A register holding Σ stride · v over the component registers `terms` ((name, stride)), a
        slot below `size`: its next value is summed from theirs (shifts and adds, one iteration
        ahead), so the multiply-add of a multi-dimensional buffer slot is not on the path from the
        control registers through the buffer's read port (docs/control.md)."""
        key = ("linear", tuple(terms), size)
        if key in self._value_names:
            return self._value_names[key]
        name = self._value_names[key] = f"v{len(self._values)}"
        first = sum(self._values[int(n[1:])]["first"] * k for n, k in terms)
        self._values.append({"name": name, "lin": terms, "width": _clog2(size), "first": first})
        return name

    def _pad(self, name: str) -> str:
        """A value register zero-extended to the 32 bits of the templates' slot and address wires."""
        w = self._values[int(name[1:])]["width"]
        return name if w >= 32 else f"{{{32 - w}'d0, {name}}}"

    def address(self, band_dims: int, shape: list[int]) -> str:
        """Row-major element address of a load/store iteration (its point is (band, element)): a
        register updated by the address's change along each piece."""
        names = self.dims[band_dims:]
        terms, stride = [], 1
        for k in reversed(range(len(shape))):
            terms.append(names[k] if stride == 1 else f"{stride} * {names[k]}")
            stride *= shape[k]
        if not self.count or not terms:
            return "32'd0"
        space = self.dom.get_space()
        aff = isl.Aff.zero_on_domain(isl.LocalSpace.from_space(space))
        stride = 1
        for k in reversed(range(len(shape))):
            aff = aff.set_coefficient_val(isl.dim_type.in_, band_dims + k, isl.Val.int_from_si(space.get_ctx(), stride))
            stride *= shape[k]
        pa = isl.PwAff.from_aff(aff).intersect_domain(self.dom)
        return self._pad(self._value(pa, None, width=max(1, (max(1, stride) - 1).bit_length())))

    def _value(self, pa: isl.PwAff, modulus: int | None, width: int | None = None) -> str:
        """A register holding pa(x) mod `modulus` (unsigned, clog2(modulus) bits), or pa(x) (`width`
        bits, unsigned, wrapping) when `modulus` is None."""
        w = _clog2(modulus) if modulus else int(width)
        key = (str(pa), modulus, w)  # channels that read or write by the same slot function share it
        if key in self._value_names:
            return self._value_names[key]
        name = self._value_names[key] = f"v{len(self._values)}"
        first = 0
        if self.count and self._first_set.is_subset(pa.domain()):
            v = int(pa.eval(self._first_point()).to_python())
            first = v % modulus if modulus else v % (1 << w)
        self._values.append({"name": name, "pa": pa, "mod": modulus, "width": w, "first": first})
        return name

    def _first_point(self) -> isl.Point:
        space = self.dom.get_space()
        pt = isl.Point.zero(space)
        for k, v in enumerate(self.first):
            pt = pt.set_coordinate_val(isl.dim_type.set, k, isl.Val.int_from_si(space.get_ctx(), int(v)))
        return pt

    # -------------------------------------------------------------------------------------------
    # next-state logic (built once, when the template first asks)

    def _wire(self, decl: str, expr: str) -> str:
        name = f"la{self._tmp}"
        self._tmp += 1
        self._wires.append(f"wire {decl} {name} = {expr};")
        return name

    def _joined(self, terms: list[str], op: str, decl: str) -> str:
        """`terms` joined by `op` through wires of at most `JOINED_TERMS` terms each: a guard of
        heat-3d's store unit at T=10, N=26, one term per successor piece, made a line of 54,000
        characters, past the 40,000 preprocessor tokens Verilator reads on a line."""
        while len(terms) > JOINED_TERMS:
            terms = [self._wire(decl, op.join(terms[k:k + JOINED_TERMS])) for k in range(0, len(terms), JOINED_TERMS)]
        return op.join(terms)

    def _pw_expr(self, pa: isl.PwAff, piece: isl.Set, width: int) -> tuple[str, int, int]:
        """pa on `piece` as a sized expression at >= `width` bits, with its (min, max) there."""
        parts: list[tuple[isl.Set, isl.Aff]] = []
        pa.intersect_domain(piece).foreach_piece(lambda s, a: parts.append((s, a)))
        parts = [(s, a) for s, a in parts if not s.is_empty()]
        lo = min(self.printer.aff_range(a)[0] for _, a in parts)
        hi = max(self.printer.aff_range(a)[1] for _, a in parts)
        w = max(width, signed_width(lo, hi))
        out = self.printer.aff(parts[-1][1], w)
        for s, a in reversed(parts[:-1]):
            out = f"(({self.printer.set(s.gist(piece))}) ? ({self.printer.aff(a, w)}) : ({out}))"
        return out, lo, hi

    def _reduce(self, expr: str, lo: int, hi: int, b: int, w: int) -> str:
        """(expr mod b) for expr in [lo, hi], as a wire of clog2(b) bits: an offset to [0, ...),
        then a conditional subtraction per period the range spans (a table of the remainders when it
        spans many, a division when it spans very many)."""
        wb = _clog2(b)
        k0 = lo // b
        top = hi - k0 * b
        ww = max(w, signed_width(min(lo, 0), max(hi, top, b)) + 1)
        shifted = expr if k0 == 0 else f"({expr}) - {ww}'sd{k0 * b}" if k0 > 0 else f"({expr}) + {ww}'sd{-k0 * b}"
        t = self._wire(f"signed [{ww - 1}:0]", f"{shifted} + {ww}'sd0")
        periods = top // b + 1
        if periods == 1:
            r = t
        elif periods <= 4:
            r = t
            for q in range(1, periods):
                r = f"(({t} >= {ww}'sd{q * b}) ? ({t} - {ww}'sd{q * b}) : ({r}))" if q == 1 else \
                    f"(({t} >= {ww}'sd{q * b}) ? ({t} - {ww}'sd{q * b}) : {r})"
            r = self._wire(f"signed [{ww - 1}:0]", r)
        elif top < TABLE_ENTRIES:
            return self._wire(f"[{wb - 1}:0]", _table(t, top, b, wb))
        else:
            r = self._wire(f"signed [{ww - 1}:0]", f"{t} % {ww}'sd{b}")
        return self._wire(f"[{wb - 1}:0]", f"{r}[{wb - 1}:0]")

    def _constant(self, pa: isl.PwAff, piece: isl.Set) -> int | None:
        """The value of pa on `piece` when it is one constant there."""
        out: list = []
        pa.intersect_domain(piece).foreach_piece(lambda s, a: out.append((s, a)))
        out = [(s, a) for s, a in out if not s.is_empty()]
        vals = set()
        for _s, a in out:
            if not a.is_cst():
                return None
            v = a.get_constant_val()
            if not v.is_int():
                return None
            vals.add(int(v.to_python()))
        return vals.pop() if len(vals) == 1 else None

    def _build(self) -> None:
        if self._done:
            return
        self._done = True
        self.next_x: list[str] = []
        self.regs: list[dict] = []
        pcs = self.piece_bits
        # iteration registers
        for k, d in enumerate(self.dims):
            terms = []
            for p, (piece, ma) in enumerate(self.pieces):
                aff = ma.get_aff(k)
                expr = self.printer.aff(aff.gist(piece) if hasattr(aff, "gist") else aff, self.widths[k])
                w = self.widths[k]
                v = self._wire(f"signed [{w - 1}:0]", expr)
                terms.append(f"({{{w}{{{pcs[p]}}}}} & {v})")
            self.next_x.append(self._joined(terms, " | ", f"signed [{self.widths[k] - 1}:0]") if terms else d)
        # guards: a guard's next value on a piece is [x in piece and succ(x) in s]; where the boxes of
        # s and of the piece's image are apart, that is false without asking isl (a load unit's
        # hundreds of pieces times as many guards were most of its control's cost)
        image_boxes = [dim_bounds(piece.apply(isl.Map.from_multi_aff(ma))) if not piece.is_empty() else None
                       for piece, ma in self.pieces]
        for name, s in sorted(self._guards.values(), key=lambda t: int(t[0][1:])):
            terms = []
            box = dim_bounds(s) if not s.is_empty() else None
            for p, (piece, ma) in enumerate(self.pieces):
                if box is None or image_boxes[p] is None or apart(box, image_boxes[p]):
                    continue
                pre = s.preimage_multi_aff(ma).intersect(piece)
                if pre.is_empty():
                    continue
                if piece.is_subset(pre):
                    terms.append(pcs[p])
                else:
                    terms.append(f"({pcs[p]} && ({self.printer.set(pre.gist(piece))}))")
            first = 1 if self._first_set is not None and self._first_set.is_subset(s) else 0
            self.regs.append({"name": name, "width": 1, "signed": False, "first": f"1'b{first}",
                              "next": self._joined(terms, " || ", "") if terms else "1'b0"})
        # slots and addresses
        for v in self._values:
            if "lin" in v:
                self.regs.append({"name": v["name"], "width": v["width"], "signed": False,
                                  "first": f"{v['width']}'d{v['first']}", "next": _shift_add(v["lin"])})
                continue
            name, w, b, pa = v["name"], v["width"], v["mod"], v["pa"]
            terms = []
            # where pa is defined on the whole domain, v holds pa(x) at every iteration; asked once,
            # not of every piece (a load unit's 1,139 pieces: a quarter of heat-3d's generate at level 3)
            pa_dom = pa.domain()
            everywhere = self.dom.is_subset(pa_dom)
            # one affine function on the whole domain (an address, most slots): its value after a
            # piece and its change along it are affine functions, asked without the preimage of its
            # domain (heat-3d's load units at T=10, N=26: a thousand pieces, twenty values, and a
            # domain of hundreds of basic sets; generate 135 -> 123 s)
            aff = affine_of(pa) if everywhere else None
            for p, (piece, ma) in enumerate(self.pieces):
                const = delta = nxt = None
                if aff is not None:
                    after = aff.pullback_multi_aff(ma)
                    const = self._constant(isl.PwAff.from_aff(after), piece)
                    if const is None:
                        delta = self._constant(isl.PwAff.from_aff(after.sub(aff)), piece)
                if const is None and delta is None:
                    # both sides restricted to the piece first: `sub` pairs every piece of one with
                    # every piece of the other (a load unit's hundred successor pieces made that
                    # most of its cost)
                    nxt = pa.pullback_multi_aff(ma).intersect_domain(piece)
                    const = self._constant(nxt, piece)
                if const is not None:
                    val = const % b if b else const % (1 << w)
                    terms.append(f"({{{w}{{{pcs[p]}}}}} & {w}'d{val})")
                    continue
                if delta is None and (everywhere or nxt.domain().is_subset(pa_dom)):
                    # v holds pa(x) wherever it is needed
                    delta = self._constant(nxt.sub(pa.intersect_domain(piece)), piece)
                if delta is not None:
                    if b:
                        dd = delta % b
                        if dd == 0:
                            e = name
                        else:
                            e = self._wire(f"[{w - 1}:0]", f"({{1'b0, {name}}} >= {w + 1}'d{b - dd}) ? "
                                                               f"({name} - {w}'d{b - dd}) : ({name} + {w}'d{dd})")
                    else:
                        e = name if delta % (1 << w) == 0 else self._wire(
                            f"[{w - 1}:0]", f"{name} + {w}'d{delta % (1 << w)}")
                elif nxt.domain().intersect(piece).is_empty():
                    continue  # not needed after this piece
                else:
                    expr, lo, hi = self._pw_expr(nxt, piece, 2)
                    ew = max(2, signed_width(lo, hi))
                    if b:
                        e = self._reduce(expr, lo, hi, b, ew)
                    else:
                        t = self._wire(f"signed [{max(ew, w + 1) - 1}:0]", expr)
                        e = self._wire(f"[{w - 1}:0]", f"{t}[{w - 1}:0]")
                terms.append(f"({{{w}{{{pcs[p]}}}}} & {e})")
            self.regs.append({"name": name, "width": w, "signed": False, "first": f"{w}'d{v['first']}",
                              "next": self._joined(terms, " | ", f"[{w - 1}:0]") if terms else name})
        names = list(self.dims) + [r["name"] for r in self.regs]  # `ahead`'s pattern
        self._names_re = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b") if names else None

    @property
    def first_values(self) -> list[str]:
        """The first iteration, as literals of the registers' widths."""
        return [f"{w}'h{v % (1 << w):x}" for w, v in zip(self.widths, self.first)]

    @property
    def wires(self) -> list[str]:
        self._build()
        return self._wires

    @property
    def registers(self) -> list[dict]:
        self._build()
        return self.regs

    @property
    def next_values(self) -> list[str]:
        self._build()
        return self.next_x

    def ahead(self, text: str) -> str:
        """`text` (the next-state logic, written over the iteration's registers) over the logic's
        inputs `i_<register>` instead: the template runs the next-state logic on a copy of the
        registers one iteration ahead (`a_<register>`, the first iteration at a load), so the value
        registers' next values are registers and a buffer's announced read address is one
        multiplexer from registers, not the whole next-state logic (docs/rtl-timing.md)."""
        self._build()
        return self._names_re.sub(r"i_\1", text) if self._names_re else text


def affine_of(pa: isl.PwAff) -> isl.Aff | None:
    """The affine function of a one-piece `pa` (its domain aside)."""
    if pa.n_piece() != 1:
        return None
    out: list[isl.Aff] = []
    pa.foreach_piece(lambda _s, a: out.append(a))
    return out[0]


JOINED_TERMS = 64  # the most terms of a next-state OR on one line
TABLE_ENTRIES = 1024  # a modulo over a range of up to this many values is a table, not a divider


def _table(t: str, top: int, b: int, wb: int) -> str:
    """(t mod b) for t in [0, top] as a constant table indexed by t: synthesis makes a few LUT levels
    of the index bits from it, where `%` would be a divider's carry chains on the control path."""
    bits = sum((i % b) << (i * wb) for i in range(top + 1))
    n = (top + 1) * wb
    return f"{n}'h{bits:x} >> ($unsigned({t}) * {wb})"


def _shift_add(terms: list[tuple[str, int]]) -> str:
    """Σ stride · nx_v over (v, stride) as shifted copies of the next values (constant strides:
    a few adders, no multiplier)."""
    parts = []
    for name, stride in terms:
        k = 0
        while stride >> k:
            if (stride >> k) & 1:
                parts.append(f"nx_{name}" if k == 0 else f"{{nx_{name}, {k}'d0}}")
            k += 1
    return " + ".join(parts)


COALESCE_PIECES = 400  # a successor of more basic maps takes them as its pieces, uncoalesced
#: the ways from the coalesced successor to its pieces, tried in turn (`successor_pieces`), each
#: answer checked against the successor: isl's lexmin is the quick one, `from_map` its second opinion
SUCCESSOR_ROUTES = (isl.Map.lexmin_pw_multi_aff, isl.PwMultiAff.from_map)


def successor_pieces(succ: isl.Map, iterations: Optional[int] = None) -> list[tuple[isl.Set, isl.MultiAff]]:
    """The successor function as (piece, value) pairs for the next-state logic.

    Coalesced first where that is cheap: fewer pieces (a guard register and a term of every
    next-state OR each).  A function's lexmin is itself, and isl's lexmin gives its pieces in a
    fraction of `PwMultiAff.from_map`'s time (a red-black stencil's load unit at T=22, N=76: 0.13 s
    instead of 1.1 s, 94 pieces instead of 96; heat-3d's at T=7, N=18: 1.4 s, 289 basic maps into 93
    pieces).  But coalescing grows faster than the pieces: heat-3d's load unit at T=10, N=26 has
    1,138 basic maps, which isl coalesced in 21 s and took the lexmin of in 20 s more (598 pieces),
    and another unit's lexmin failed inside isl.  There, and wherever isl's lexmin fails, each basic
    map is a piece: one of a function, so already single-valued (0.3 s for those 1,138).  Pieces
    that overlap agree where they do (the successor is a function), so their one-hot terms OR to the
    same next values.

    Each quick answer's pieces are counted against `succ`'s domain (`iterations`, its size, when the
    caller knows it), and a short one falls through to the next route:
    isl's lexmin of the coalesced successor of jacobi-2d's load unit at T=12, N=76 left two of its
    iterations out of every piece (islpy 2026.2.2), whose next state was then all zeros, and the
    Verilog livelocked; `PwMultiAff.from_map` of the same map was right."""
    if succ.is_empty():
        return []
    if succ.n_basic_map() <= COALESCE_PIECES:
        coalesced = iu.coalesced(succ)
        for route in SUCCESSOR_ROUTES:
            try:
                pieces = pw_multi_aff_pieces(route(coalesced))
            except isl.Error:
                continue
            # a piecewise function's pieces are disjoint: they cover the successor's domain when they
            # count as many iterations (a count, where comparing the maps took jacobi-2d's load unit at
            # T=50, N=500 19 s for a lexmin of 0.7 s)
            iterations = iu.card(succ.domain()) if iterations is None else iterations
            if sum(iu.card(s) for s, _ in pieces) == iterations:
                return pieces
    out: list[tuple[isl.Set, isl.MultiAff]] = []
    for bm in succ.get_basic_maps():
        out.extend(pw_multi_aff_pieces(isl.PwMultiAff.from_map(isl.Map.from_basic_map(bm))))
    return out


def control(proc: Process, values: dict[str, int]) -> Control:
    return Control(proc, values)


def wide_names(proc: Process, values: dict[str, int]) -> list[str]:
    """The iteration registers sign-extended to 32 bits, for the datapath's affine values (loop
    counters used as data: C int arithmetic at 32 bits, without width warnings)."""
    dom = drop_params(proc.domain, values)
    names = dim_names(dom.dim(isl.dim_type.set))
    if dom.is_empty():
        return names
    out = []
    for d, (lo, hi) in zip(names, dim_bounds(dom)):
        w = signed_width(lo, hi)
        out.append(d if w >= 32 else f"{{{{{32 - w}{{{d}[{w - 1}]}}}}, {d}}}")
    return out


def first_reads(c: Channel, cons: Process) -> isl.Set:
    """Consumer iterations that read a value for the first time (FIFO with multiplicity: pop)."""
    src = c.relation.reverse()  # y -> x
    return src.domain().subtract(with_partner(src.apply_range(src.reverse()), cons.schedule, -1))


def last_reads(c: Channel, cons: Process) -> isl.Set:
    """Consumer iterations that read a value for the last time (buffer: clear the slot)."""
    src = c.relation.reverse()
    return src.domain().subtract(with_partner(src.apply_range(src.reverse()), cons.schedule, 1))


__all__ = ["Control", "control", "dim_names", "wide_names", "first_reads", "last_reads", "aff_expr"]
