"""Run a computation that may not end (an isl or barvinok call) with a time limit.

isl's operation quota does not stop every loop (the scheduler's ILP, barvinok's counting on some
polytopes), and an optional result is not worth an unbounded wait.  The call runs in a forked
child killed after the limit; it hands its result back as text, so what the caller gets is what
an in-process call would have computed.  A bare `os.fork` rather than `multiprocessing`: the
compiler also runs inside pool workers (the benchmark's), which multiprocessing forbids to have
children.

The limit counts the child's CPU seconds (Linux's /proc), not the wall clock: what it computes then
does not depend on how loaded the machine is (a barvinok count cut off at 2 s of wall clock while
the test suite ran beside it gave a FIFO its upper bound, 20,490 words instead of 2,570, and the
compile's outputs changed with the load).  A child starved of CPU is still given up after
`WALL_FACTOR` times its limit.  Where /proc is missing, the wall clock counts.
"""

from __future__ import annotations

import os
import select
import signal
import time
from typing import Callable, Optional

__all__ = ["text_within", "WALL_FACTOR", "POLL_SECONDS"]

WALL_FACTOR = 8  # a child is given up after this many times its CPU limit of wall clock
POLL_SECONDS = 0.02  # how often the child's CPU time is read (the kernel counts it in 10 ms ticks)
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _cpu_seconds(pid: int) -> Optional[float]:
    """User + system CPU seconds of a running child, from /proc/PID/stat; None without /proc."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICK
    except (OSError, ValueError, IndexError):
        return None


def text_within(compute: Callable[[], str], seconds: float) -> Optional[str]:
    """`compute()` (which returns text) run in a child killed after `seconds` of CPU time; None when it took
    longer or ended without a result.  Without fork on the platform, it runs in-process."""
    if not hasattr(os, "fork"):
        return compute()
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: write the text (prefixed with "=") into the pipe, then leave at once
        os.close(rfd)
        try:
            data = ("=" + compute()).encode()
            while data:
                data = data[os.write(wfd, data):]
        finally:
            os._exit(0)
    os.close(wfd)
    chunks: list[bytes] = []
    start = time.monotonic()
    late = False
    try:
        while True:
            wall = time.monotonic() - start
            used = _cpu_seconds(pid)
            left = seconds - (wall if used is None else used)
            if left <= 0 or wall >= WALL_FACTOR * seconds:
                late = True
                break
            if not select.select([rfd], [], [], min(left, POLL_SECONDS) if used is not None else left)[0]:
                continue
            chunk = os.read(rfd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(rfd)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)
    text = b"".join(chunks).decode()
    return None if late or not text.startswith("=") else text[1:]
