"""Source locations and user-facing errors.

Every error a user can cause is a `CompileError` carrying the location of the offending construct, so
the command line can print `file:line:col: error: why` and exit with status 2.  Anything else that
escapes is a bug in dpn-synth and is reported as an internal error (exit 3).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SourceLoc:
    """A position in the user's source (1-based line and column, as compilers print them)."""

    file: str
    line: int = 0
    col: int = 0

    def __str__(self) -> str:
        if self.line <= 0:
            return self.file
        if self.col <= 0:
            return f"{self.file}:{self.line}"
        return f"{self.file}:{self.line}:{self.col}"

    @staticmethod
    def from_coord(coord: object, default_file: str = "<input>") -> "SourceLoc":
        """Convert a pycparser `Coord` (or None) into a `SourceLoc`."""
        if coord is None:
            return SourceLoc(default_file)
        file = getattr(coord, "file", None) or default_file
        return SourceLoc(str(file), int(getattr(coord, "line", 0) or 0), int(getattr(coord, "column", 0) or 0))


class CompileError(Exception):
    """An error in the user's input or options: printed as `loc: error: message`, exit status 2."""

    def __init__(self, loc: SourceLoc | None, message: str) -> None:
        super().__init__(message)
        self.loc = loc
        self.message = message

    def format(self) -> str:
        where = f"{self.loc}: " if self.loc is not None else ""
        return f"{where}error: {self.message}"

    def __str__(self) -> str:
        return self.format()


class UsageError(CompileError):
    """Bad command-line usage (conflicting or malformed options): `dpn-synth: error: ...`, exit 2."""

    def __init__(self, message: str) -> None:
        super().__init__(SourceLoc("dpn-synth"), message)
