"""The clock target the RTL is generated for (`dpn-synth estimate --clock-mhz F`, default 150 MHz).

Operators are scheduled against a delay model (`delay.py`) so that no register-to-register path of
the datapath exceeds the period; their latencies feed `generate.process_latencies`, hence the cycle
model.  The target is a context value rather than an argument of every pass, so that the passes in
between (`hls/pipeline.py`, `hls/dpn/timing.py`) need not carry it: `with target_clock(F): run(...)`
compiles for F MHz.  `$DPN_SYNTH_CLOCK_MHZ` sets the default of a process (worker processes of a
benchmark inherit it).
"""

from __future__ import annotations

import contextvars
import os
from contextlib import contextmanager
from typing import Iterator, Optional

__all__ = ["DEFAULT_CLOCK_MHZ", "MIN_CLOCK_MHZ", "MAX_CLOCK_MHZ", "clock_mhz", "period_ns", "target_clock",
           "check_clock"]

DEFAULT_CLOCK_MHZ = 150.0
MIN_CLOCK_MHZ = 1.0
MAX_CLOCK_MHZ = 1000.0

_CLOCK: contextvars.ContextVar[Optional[float]] = contextvars.ContextVar("dpn_synth_clock_mhz", default=None)


def check_clock(mhz: float) -> float:
    """`mhz` as a float, or ValueError with the reason."""
    try:
        v = float(mhz)
    except (TypeError, ValueError):
        raise ValueError(f"clock target `{mhz}` is not a number of MHz") from None
    if not MIN_CLOCK_MHZ <= v <= MAX_CLOCK_MHZ:
        raise ValueError(f"clock target {v:g} MHz is outside [{MIN_CLOCK_MHZ:g}, {MAX_CLOCK_MHZ:g}] MHz")
    return v


def clock_mhz() -> float:
    """The current clock target in MHz: the innermost `target_clock`, else `$DPN_SYNTH_CLOCK_MHZ`, else 150."""
    v = _CLOCK.get()
    if v is not None:
        return v
    env = os.environ.get("DPN_SYNTH_CLOCK_MHZ", "").strip()
    if env:
        try:
            return check_clock(env)
        except ValueError:
            pass
    return DEFAULT_CLOCK_MHZ


def period_ns() -> float:
    return 1000.0 / clock_mhz()


@contextmanager
def target_clock(mhz: Optional[float]) -> Iterator[float]:
    """Generate (and model) the RTL for `mhz` inside the block; None keeps the current target."""
    if mhz is None:
        yield clock_mhz()
        return
    token = _CLOCK.set(check_clock(mhz))
    try:
        yield clock_mhz()
    finally:
        _CLOCK.reset(token)
