"""Pipelined IEEE-754 division, square root and conversions (binary32/binary64, x86-64 SSE semantics).

Every operator is an `OperatorSpec` (see `operators.py`): a module with ports ``clk``, ``en``, ``a``
[, ``b``] and ``y``, accepting operands on every enabled cycle and showing the result ``latency``
enabled cycles later; with ``en`` low the whole pipeline holds.  Keys follow `datapath.py`:

* ``fdiv.f32`` / ``fdiv.f64``: ``a / b``; ``fsqrt.f32`` / ``fsqrt.f64``: ``sqrt(a)``.  Round to
  nearest even, subnormal operands and results, x86's default NaN (sign set, quiet bit only) for
  0/0, inf/inf and the square root of a negative number.  A NaN operand also gives the default
  NaN (IEEE allows any NaN; carrying x86's payload through 30 pipeline stages would cost a
  register per bit and stage).
* ``cvt.<src>.<dst>``: C casts as gcc compiles them for x86-64:
  - ``cvt.{i32,u32,i64,u64}.{f32,f64}``: integer to floating point, round to nearest even;
  - ``cvt.{f32,f64}.{i32,i64}``: truncation toward zero; NaN and out-of-range values give the
    "integer indefinite" value 0x80000000 / 0x8000000000000000 (cvttss2si/cvttsd2si);
  - ``cvt.{f32,f64}.u32``: gcc converts to int64 (cvttsd2si with a 64-bit destination) and keeps
    the low 32 bits, so e.g. -1.0 gives 0xffffffff and NaN or |x| >= 2^63 give 0;
  - ``cvt.{f32,f64}.u64``: gcc's sequence ``x < 2^63 ? cvtt(x) : cvtt(x - 2^63) ^ 2^63``, so
    [0, 2^64) converts exactly, x >= 2^64 (and +inf) gives 0, and NaN, negative values below -2^63
    and -inf give 0x8000000000000000 (negative values otherwise wrap like int64);
  - ``cvt.f32.f64`` (exact) and ``cvt.f64.f32`` (round to nearest even, overflow to infinity,
    subnormal results); NaNs are quieted and keep their payload, as cvtss2sd/cvtsd2ss do.

Division and square root are restoring digit recurrences unrolled into pipeline stages of
`DIV_BITS_PER_STAGE` / `SQRT_BITS_PER_STAGE` result bits each, so they accept a new operand pair
on every cycle.  All widths and constants are computed here; the templates under
``hw_templates/fp/`` only lay out the registers.
"""

from __future__ import annotations

import math

from .operators import OperatorSpec

__all__ = ["OPERATORS", "FORMATS", "DIV_BITS_PER_STAGE", "SQRT_BITS_PER_STAGE", "operator_specs"]

#: Floating-point formats: key -> (exponent bits, fraction bits).
FORMATS: dict[str, tuple[int, int]] = {"f32": (8, 23), "f64": (11, 52)}
#: Integer sides of conversions: key -> (bits, signed).
INTEGERS: dict[str, tuple[int, bool]] = {"i32": (32, True), "u32": (32, False), "i64": (64, True), "u64": (64, False)}

#: Quotient bits resolved per pipeline stage (two chained carry-propagate subtractions per cycle).
DIV_BITS_PER_STAGE = 2
#: Root bits resolved per pipeline stage.
SQRT_BITS_PER_STAGE = 2


def _clog2(n: int) -> int:
    return max(1, (n - 1).bit_length())


def _lit(width: int, value: int) -> str:
    """A sized Verilog literal (two's complement for negative values)."""
    return f"{width}'d{value & ((1 << width) - 1)}"


def _mask(width: int, lo_bits: int) -> str:
    """A `width`-bit literal with the `lo_bits` lowest bits set."""
    return f"{width}'h{(1 << lo_bits) - 1:x}"


def _norm_ctx(width: int) -> dict:
    """Context of the normalisation function (shift left until the MSB is set) for `width` bits.

    The count never exceeds width-1; the shift steps are the powers of two up to the largest one
    below `width`, which add up to at least width-1.
    """
    lz_width = _clog2(width)
    return {"norm_width": width, "lz_width": lz_width, "lz_top": 1 << ((width - 1).bit_length() - 1)}


def _float_ctx(fmt: str) -> dict:
    e, f = FORMATS[fmt]
    return {"exp_bits": e, "frac_bits": f, "width": 1 + e + f, "bias": (1 << (e - 1)) - 1, "emax": (1 << e) - 1}


def _fdiv(fmt: str) -> OperatorSpec:
    ctx = _float_ctx(fmt)
    e, f = ctx["exp_bits"], ctx["frac_bits"]
    stages = math.ceil((f + 2) / DIV_BITS_PER_STAGE)  # 1 integer + f fraction + 1 round bit
    qb = stages * DIV_BITS_PER_STAGE
    xw = e + 2  # the result exponent of a quotient stays within +-(2^E + 2^(E-1) + F)
    ctx.update(
        _norm_ctx(f + 1),
        bits_per_stage=DIV_BITS_PER_STAGE,
        stages=stages,
        quot_bits=qb,
        exp_width=xw,
        shift_width=_clog2(qb + 1),
        x_bias=_lit(xw, ctx["bias"]),
        x_emax=_lit(xw, ctx["emax"]),
        x_one=_lit(xw, 1),
        x_qb=_lit(xw, qb),
        latency=stages + 4,
    )
    return OperatorSpec(
        name=f"fdiv.{fmt}",
        template="fp/fdiv.v.j2",
        module=f"dpn_fdiv_{fmt}",
        latency=stages + 4,  # unpack, align, `stages` quotient stages, denormalise, round
        inputs=(("a", ctx["width"]), ("b", ctx["width"])),
        output_width=ctx["width"],
        context=ctx,
        enables=stages + 4,
    )


def _fsqrt(fmt: str) -> OperatorSpec:
    ctx = _float_ctx(fmt)
    e, f = ctx["exp_bits"], ctx["frac_bits"]
    stages = math.ceil((f + 2) / SQRT_BITS_PER_STAGE)  # 1 integer + f fraction + 1 round bit
    rb = stages * SQRT_BITS_PER_STAGE
    ctx.update(
        _norm_ctx(f + 1),
        bits_per_stage=SQRT_BITS_PER_STAGE,
        stages=stages,
        root_bits=rb,
        sticky_mask=_mask(rb, rb - f - 2),  # root bits below the round bit
        exp_pre_offset=_lit(e, (1 << (e - 2)) - 2),  # see the template: biased exponent - 1
        latency=stages + 3,
    )
    return OperatorSpec(
        name=f"fsqrt.{fmt}",
        template="fp/fsqrt.v.j2",
        module=f"dpn_fsqrt_{fmt}",
        latency=stages + 3,  # unpack, align, `stages` root stages, round
        inputs=(("a", ctx["width"]),),
        output_width=ctx["width"],
        context=ctx,
        enables=stages + 3,
    )


def _int_to_float(src: str, dst: str) -> OperatorSpec:
    n, signed = INTEGERS[src]
    ctx = _float_ctx(dst)
    e, f = ctx["exp_bits"], ctx["frac_bits"]
    latency = 3 if signed else 2
    rounds = n > f + 1
    ctx.update(
        _norm_ctx(n),
        int_bits=n,
        signed=signed,
        rounds=rounds,
        # biased exponent - 1 of a normalised value with `lz` leading zeros is exp_pre_base - lz
        exp_pre_base=_lit(e, ctx["bias"] + n - 2),
        pad_bits=0 if rounds else f + 1 - n,
        latency=latency,
    )
    return OperatorSpec(
        name=f"cvt.{src}.{dst}",
        template="fp/fcvt_itof.v.j2",
        module=f"dpn_cvt_{src}_{dst}",
        latency=latency,  # [absolute value,] normalise, round and pack
        inputs=(("a", n),),
        output_width=ctx["width"],
        context=ctx,
    )


def _float_to_int(src: str, dst: str) -> OperatorSpec:
    out_bits, signed = INTEGERS[dst]
    ctx = _float_ctx(src)
    e, f, bias = ctx["exp_bits"], ctx["frac_bits"], ctx["bias"]
    # The integer conversion actually performed: cvtt*2si with a 32-bit destination for int32,
    # with a 64-bit destination for everything else (uint32 keeps the low half of it).
    conv_bits = 32 if (out_bits == 32 and signed) else 64
    unsigned64 = dst == "u64"
    max_pos = 63 if unsigned64 else conv_bits - 2  # largest exponent converted on the positive side
    max_neg = conv_bits - 2
    indefinite = (1 << (conv_bits - 1)) & ((1 << out_bits) - 1)
    tw = f + 1 + max_pos
    ctx.update(
        out_bits=out_bits,
        unsigned64=unsigned64,
        low_half_of_int64=dst == "u32",
        shift_bits=tw,  # {significand, max_pos zeros} shifted right by (f + max_pos) - unbiased exponent
        max_pos_exp=_lit(e, bias + max_pos),
        max_neg_exp=_lit(e, bias + max_neg),
        one_exp=_lit(e, bias),
        shift_base=_lit(e, bias + f + max_pos),
        indefinite=f"{out_bits}'h{indefinite:x}",
        latency=2,
    )
    return OperatorSpec(
        name=f"cvt.{src}.{dst}",
        template="fp/fcvt_ftoi.v.j2",
        module=f"dpn_cvt_{src}_{dst}",
        latency=2,  # align, negate and select
        inputs=(("a", ctx["width"]),),
        output_width=out_bits,
        context=ctx,
    )


def _widen(src: str, dst: str) -> OperatorSpec:
    s, d = _float_ctx(src), _float_ctx(dst)
    ctx = {
        "src_exp_bits": s["exp_bits"],
        "src_frac_bits": s["frac_bits"],
        "src_width": s["width"],
        "dst_exp_bits": d["exp_bits"],
        "dst_frac_bits": d["frac_bits"],
        "dst_width": d["width"],
        "pad_bits": d["frac_bits"] - s["frac_bits"],
        # exponent arithmetic on dst_exp_bits: source exponent (1 for subnormals) - lz + rebias
        "rebias": _lit(d["exp_bits"], d["bias"] - s["bias"]),
        **_norm_ctx(s["frac_bits"] + 1),
        "latency": 2,
    }
    return OperatorSpec(
        name=f"cvt.{src}.{dst}",
        template="fp/fcvt_widen.v.j2",
        module=f"dpn_cvt_{src}_{dst}",
        latency=2,  # normalise, pack
        inputs=(("a", s["width"]),),
        output_width=d["width"],
        context=ctx,
    )


def _narrow(src: str, dst: str) -> OperatorSpec:
    s, d = _float_ctx(src), _float_ctx(dst)
    xw = s["exp_bits"] + 1  # signed destination exponent before range checks
    keep = d["frac_bits"] + 3  # significand, round bit, sticky bit
    clamp = d["frac_bits"] + 2  # shifting further leaves only sticky bits, like this shift does
    ctx = {
        "src_exp_bits": s["exp_bits"],
        "src_frac_bits": s["frac_bits"],
        "src_width": s["width"],
        "dst_exp_bits": d["exp_bits"],
        "dst_frac_bits": d["frac_bits"],
        "dst_width": d["width"],
        "exp_width": xw,
        "keep_bits": keep,
        "drop_bits": s["frac_bits"] - d["frac_bits"] - 1,  # source fraction bits folded into sticky
        "shift_width": _clog2(clamp + 1),
        "x_rebias": _lit(xw, s["bias"] - d["bias"]),
        "x_emax": _lit(xw, d["emax"]),
        "x_one": _lit(xw, 1),
        "x_clamp": _lit(xw, clamp),
        "latency": 2,
    }
    return OperatorSpec(
        name=f"cvt.{src}.{dst}",
        template="fp/fcvt_narrow.v.j2",
        module=f"dpn_cvt_{src}_{dst}",
        latency=2,  # align and denormalise, round and pack
        inputs=(("a", s["width"]),),
        output_width=d["width"],
        context=ctx,
    )


def operator_specs() -> dict[str, OperatorSpec]:
    """Build the registry (a function so tests can rebuild it)."""
    ops: dict[str, OperatorSpec] = {}
    for fmt in FORMATS:
        ops[f"fdiv.{fmt}"] = _fdiv(fmt)
        ops[f"fsqrt.{fmt}"] = _fsqrt(fmt)
    for i in INTEGERS:
        for fmt in FORMATS:
            ops[f"cvt.{i}.{fmt}"] = _int_to_float(i, fmt)
            ops[f"cvt.{fmt}.{i}"] = _float_to_int(fmt, i)
    ops["cvt.f32.f64"] = _widen("f32", "f64")
    ops["cvt.f64.f32"] = _narrow("f64", "f32")
    return ops


OPERATORS: dict[str, OperatorSpec] = operator_specs()
