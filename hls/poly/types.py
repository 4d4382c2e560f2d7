"""C scalar types and the conversion rules of C on x86-64 (LP64, SSE floating point).

Every expression node of the polyhedral model carries one of these types *after* the usual
arithmetic conversions, with casts made explicit.  Later stages (interpreter, RTL datapath)
therefore never re-derive C typing: they just implement each node at its declared type.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ScalarType:
    """A C arithmetic type: signed/unsigned integer of 8..64 bits, or IEEE binary32/binary64."""

    kind: str  # "int" or "float"
    bits: int
    signed: bool = True

    def __post_init__(self) -> None:
        if self.kind == "int":
            assert self.bits in (8, 16, 32, 64), self.bits
        elif self.kind == "float":
            assert self.bits in (32, 64) and self.signed, self
        else:
            raise AssertionError(self.kind)

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_int(self) -> bool:
        return self.kind == "int"

    @property
    def name(self) -> str:
        """The canonical C spelling, as used in reports and generated C."""
        if self.is_float:
            return "float" if self.bits == 32 else "double"
        return f"{'' if self.signed else 'u'}int{self.bits}_t"

    @property
    def dtype(self) -> np.dtype:
        if self.is_float:
            return np.dtype(np.float32 if self.bits == 32 else np.float64)
        return np.dtype(f"{'i' if self.signed else 'u'}{self.bits // 8}")

    @property
    def rank(self) -> int:
        """Integer conversion rank (C11 6.3.1.1), by width on this target."""
        return self.bits

    def wrap(self, value: int) -> int:
        """Reduce an exact integer to this type's range, as two's-complement hardware (and gcc -O0) does."""
        assert self.is_int
        mask = (1 << self.bits) - 1
        value &= mask
        if self.signed and value >> (self.bits - 1):
            value -= 1 << self.bits
        return value

    def __str__(self) -> str:
        return self.name


INT8 = ScalarType("int", 8)
INT16 = ScalarType("int", 16)
INT32 = ScalarType("int", 32)
INT64 = ScalarType("int", 64)
UINT8 = ScalarType("int", 8, False)
UINT16 = ScalarType("int", 16, False)
UINT32 = ScalarType("int", 32, False)
UINT64 = ScalarType("int", 64, False)
FLOAT = ScalarType("float", 32)
DOUBLE = ScalarType("float", 64)

BY_NAME = {t.name: t for t in (INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64, FLOAT, DOUBLE)}


def promote(t: ScalarType) -> ScalarType:
    """Integer promotion: anything narrower than int becomes int (all its values fit)."""
    if t.is_int and t.bits < 32:
        return INT32
    return t


def usual_arithmetic_conversion(a: ScalarType, b: ScalarType) -> ScalarType:
    """The common type of a binary arithmetic operation (C11 6.3.1.8) on x86-64."""
    if a.is_float or b.is_float:
        bits = max(x.bits for x in (a, b) if x.is_float)
        return FLOAT if bits == 32 else DOUBLE
    a, b = promote(a), promote(b)
    if a == b:
        return a
    if a.signed == b.signed:
        return a if a.rank >= b.rank else b
    unsigned, signed = (a, b) if not a.signed else (b, a)
    if unsigned.rank >= signed.rank:
        return unsigned
    # The signed type is wider, so it can represent every value of the unsigned one.
    return signed
