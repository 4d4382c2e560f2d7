"""Progress on stderr for the long waits of the command line (an `explore` sweep, a Verilator build).

Progress output is for a person watching a terminal, so it is drawn only when stderr is a TTY, or
when forced (the `force` argument, or `DPN_SYNTH_PROGRESS=1`; `DPN_SYNTH_PROGRESS=0` turns it off),
and never under `--quiet`.  It only ever writes to its stream (stderr by default): results on stdout
and files the compiler writes are unaffected, so deterministic outputs stay deterministic.

On a TTY a bar or spinner redraws one line in place; when forced onto a non-TTY (a log file, a test)
each update is a plain line instead, so the output is still readable.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from contextlib import contextmanager
from typing import Iterator, Optional, TextIO

ENV = "DPN_SYNTH_PROGRESS"
_ON = {"1", "yes", "on", "true", "always"}
_OFF = {"0", "no", "off", "false", "never"}
_FRAMES = "|/-\\"
_CLEAR = "\r\033[K"


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # a closed or bare stream object
        return False


def progress_enabled(stream: Optional[TextIO] = None, *, force: Optional[bool] = None, quiet: bool = False) -> bool:
    """Whether to draw progress on `stream`: never when quiet, else `force`, else the environment
    variable, else whether `stream` is a terminal (a pipe or a file gets no control characters)."""
    if quiet:
        return False
    if force is not None:
        return force
    env = os.environ.get(ENV, "").strip().lower()
    if env in _ON:
        return True
    if env in _OFF:
        return False
    return _isatty(sys.stderr if stream is None else stream)


class ProgressBar:
    """A bar for work whose size is known (`total` items), advanced as items finish.

    Usable as a context manager; `close` draws the final state and ends the line."""

    def __init__(self, total: int, label: str, *, stream: Optional[TextIO] = None, force: Optional[bool] = None,
                 quiet: bool = False, width: int = 24) -> None:
        self.stream = sys.stderr if stream is None else stream
        self.enabled = progress_enabled(self.stream, force=force, quiet=quiet)
        self.tty = self.enabled and _isatty(self.stream)
        self.total = max(0, total)
        self.label = label
        self.width = width
        self.done = 0
        self.start = time.monotonic()
        self._closed = False
        if self.enabled and self.tty:
            self._draw("")

    def _line(self, note: str) -> str:
        frac = 1.0 if self.total == 0 else min(1.0, self.done / self.total)
        full = int(round(frac * self.width))
        bar = "#" * full + "." * (self.width - full)
        elapsed = time.monotonic() - self.start
        text = f"{self.label} [{bar}] {self.done}/{self.total} {elapsed:.0f} s"
        return f"{text} {note}" if note else text

    def _draw(self, note: str) -> None:
        line = self._line(note)
        if self.tty:
            cols = _columns()
            self.stream.write(_CLEAR + line[: max(10, cols - 1)])
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def advance(self, n: int = 1, note: str = "") -> None:
        """`n` more items done; `note` says which (shown after the bar)."""
        self.done += n
        if self.enabled:
            self._draw(note)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self.enabled and self.tty:
            self._draw("")
            self.stream.write("\n")
            self.stream.flush()

    def __enter__(self) -> "ProgressBar":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _columns() -> int:
    try:
        return os.get_terminal_size(sys.stderr.fileno()).columns
    except (OSError, ValueError, AttributeError):
        return 100


@contextmanager
def spinner(label: str, *, stream: Optional[TextIO] = None, force: Optional[bool] = None, quiet: bool = False,
            interval: float = 0.2) -> Iterator[None]:
    """Elapsed time around work whose progress cannot be measured (a C++ build, say).

    On a TTY a background thread redraws `| label  12.3 s` every `interval` seconds; forced onto a
    non-TTY, one line when the work starts.  Either way a closing line gives the time it took."""
    out = sys.stderr if stream is None else stream
    if not progress_enabled(out, force=force, quiet=quiet):
        yield
        return
    tty = _isatty(out)
    start = time.monotonic()
    stop = threading.Event()
    lock = threading.Lock()

    def draw(frame: int) -> None:
        with lock:
            out.write(f"{_CLEAR}{_FRAMES[frame % len(_FRAMES)]} {label} {time.monotonic() - start:5.1f} s")
            out.flush()

    def loop() -> None:
        frame = 0
        while not stop.wait(interval):
            frame += 1
            draw(frame)

    thread = None
    if tty:
        draw(0)
        thread = threading.Thread(target=loop, name="dpn-synth-spinner", daemon=True)
        thread.start()
    else:
        out.write(f"{label} ...\n")
        out.flush()
    status = "failed after"
    try:
        yield
        status = "done in"
    finally:
        stop.set()
        if thread is not None:
            thread.join()
        with lock:
            out.write(f"{_CLEAR if tty else ''}{label}: {status} {time.monotonic() - start:.1f} s\n")
            out.flush()
