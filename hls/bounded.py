"""Run a computation that may not end (an isl or barvinok call) with a time limit.

isl's operation quota does not stop every loop (the scheduler's ILP, barvinok's counting on some
polytopes), and an optional result is not worth an unbounded wait.  The call runs in a forked
child killed after the limit; it hands its result back as text, so what the caller gets is what
an in-process call would have computed.  A bare `os.fork` rather than `multiprocessing`: the
compiler also runs inside pool workers (the benchmark's), which multiprocessing forbids to have
children.
"""

from __future__ import annotations

import os
import select
import signal
import time
from typing import Callable, Optional

__all__ = ["text_within"]


def text_within(compute: Callable[[], str], seconds: float) -> Optional[str]:
    """`compute()` (which returns text) run in a child killed after `seconds`; None when it took
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
    deadline = time.monotonic() + seconds
    late = False
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([rfd], [], [], left)[0]:
                late = True
                break
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
