"""Random kernel inputs and bit-exact comparison of outputs.

Inputs are drawn per element type so that they exercise the arithmetic without undefined
behaviour in the common case: floats in [-1, 1), narrow integers over their whole range, wide
integers in a small range (so that products of a few of them do not overflow).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hls.poly.program import PolyProgram
from hls.poly.types import ScalarType


def _draw(rng: np.random.Generator, t: ScalarType, shape: tuple[int, ...]) -> np.ndarray:
    if t.is_float:
        return rng.uniform(-1.0, 1.0, size=shape).astype(t.dtype)
    if t.bits <= 16:
        info = np.iinfo(t.dtype)
        return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=t.dtype)
    lo = -100 if t.signed else 0
    return rng.integers(lo, 100, size=shape, endpoint=True).astype(t.dtype)


class KernelInputs(dict):
    """Values of the kernel's C arguments, which also answers for its hoisted scalars.

    Hoisted scalars (`PolyProgram.hoisted`) are top inputs of the hardware but not arguments of the C
    function: the gcc reference rejects unknown arguments, so they are not items of the dict (`{**inputs}`,
    `.items()` see the C arguments only), while `inputs["h0"]`, as the simulators and testbench writers
    look up every scalar port, computes them with gcc from the current argument values."""

    def __init__(self, program: PolyProgram, values: dict[str, object]) -> None:
        super().__init__(values)
        self.program = program

    def __missing__(self, key: str) -> object:
        if any(h.name == key for h in self.program.hoisted):
            from .hoisted import hoisted_values

            return hoisted_values(self.program, self)[key]
        raise KeyError(key)


def random_inputs(program: PolyProgram, seed: int) -> dict[str, object]:
    """Values for every kernel argument: bound parameters, random scalars and random arrays (hoisted
    scalars are derived on lookup, see `KernelInputs`)."""
    rng = np.random.default_rng(seed)
    values: dict[str, object] = KernelInputs(program, {})
    params = program.param_values()
    for a in program.c_args:
        if a.kind == "param":
            values[a.name] = params[a.name]
        elif a.kind == "scalar":
            values[a.name] = _draw(rng, a.type, ()).item()
        else:
            arr = program.arrays[a.name]
            values[a.name] = np.ascontiguousarray(_draw(rng, arr.type, arr.bound_shape))
    return values


@dataclass(frozen=True)
class Mismatch:
    array: str
    index: tuple[int, ...]
    expected: object
    actual: object

    def __str__(self) -> str:
        return f"{self.array}{list(self.index)}: expected {self.expected!r}, got {self.actual!r}"


def bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


def compare(expected: dict[str, np.ndarray], actual: dict[str, np.ndarray]) -> list[Mismatch]:
    """Every element whose bits differ (two NaNs count as equal: payloads are not specified by C)."""
    out: list[Mismatch] = []
    for name in sorted(expected):
        e, a = np.asarray(expected[name]), np.asarray(actual[name])
        assert e.shape == a.shape and e.dtype == a.dtype, (name, e.shape, a.shape, e.dtype, a.dtype)
        diff = bits(e) != bits(a)
        if e.dtype.kind == "f":
            diff &= ~(np.isnan(e) & np.isnan(a))
        for idx in zip(*np.nonzero(diff)):
            idx = tuple(int(i) for i in idx)
            out.append(Mismatch(name, idx, e[idx].item(), a[idx].item()))
    return out
