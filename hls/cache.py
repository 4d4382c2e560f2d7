"""The bounded on-disk build cache: ``$DPN_SYNTH_CACHE``, else ``~/.cache/dpn-synth``.

One directory per kind under the root:

* ``verilator/``: Verilator and Icarus builds (`sim.rtl_runner`); an entry is one build directory
  ``<key>/`` with its lock file ``<key>.lock`` beside it;
* ``yosys/``: Yosys results (`hls.estimate`); an entry is one record ``<xx>/<key>.json``
  (``$DPN_SYNTH_YOSYS_CACHE`` moves this directory);
* ``pnr/``: place-and-route results (`hls.pnr`); entries are directories with lock files, like builds;
* ``verilator/.shared/``: files that the builds of one directory share (Verilator's runtime objects,
  `sim.verilator_runtime`): a few megabytes, emptied by ``--clear`` but not bounded;
* ``gcc/``: the shared objects gcc builds (`hls.shared_object`): the reference objects of
  `sim.gcc_ref` and the compiler's cycle model (`hls.dpn.native_model`); counted by ``dpn-synth cache
  --info`` and emptied by ``--clear``, but not bounded (a few kilobytes each, and their users do not
  record use).

**Budget.** The bounded kinds under one root share one size budget, `max_bytes` (2 GiB; set
``DPN_SYNTH_CACHE_MAX`` to bytes or a number with a K/M/G/T suffix, binary multiples: ``500M``,
``2G``).  A cache directory given explicitly instead (``cache_root=`` of the builders, the
``rtl_cache`` test fixture, ``$DPN_SYNTH_YOSYS_CACHE`` outside the root) has a budget of its own.
Sizes are the files' apparent sizes.

**Least recently used.** An entry's mtime is its last use: its owner `touch`-es it on every cache hit.
After an owner publishes a new entry it calls `after_publish`, which walks the directories of that
budget and removes whole entries, oldest first, until the rest fits.  Hits never walk anything.
Concurrent evictions of one budget do not queue: when another process is evicting, the walk is
skipped (it is serialised by an ``flock`` on the budget's directory), so the cache can exceed its
budget by the entries published meanwhile until the next publication.

**In use.** A process that uses a build holds a shared ``flock`` on its lock file (`pin_entry`, a
`Pin`: as long as the `Pin` lives); its builder holds an exclusive one (`Exclusive`).  Eviction removes
a build only under an exclusive lock taken without waiting, so a build being made or used anywhere (any
process: pytest-xdist workers, concurrent ``dpn-synth sim``) is skipped.  Yosys records need no lock:
they are read in one go, and a record removed before it is read is just synthesized again.  Lock files
are deleted with their entries; whoever takes a lock checks afterwards that the file it locked is
still the one at that path (else it locks the new one), so a deleted lock file never splits a lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .diagnostics import UsageError

__all__ = [
    "CacheConfigError",
    "CacheError",
    "ClearResult",
    "DEFAULT_MAX_BYTES",
    "KINDS",
    "SHARED_DIR",
    "BOUNDED_KINDS",
    "Entry",
    "EvictResult",
    "Exclusive",
    "Pin",
    "Scope",
    "after_publish",
    "cache_root",
    "clear",
    "entries",
    "evict",
    "format_clear",
    "format_info",
    "format_size",
    "info",
    "kind_dir",
    "max_bytes",
    "parse_size",
    "pin_entry",
    "pinned_here",
    "root_scope",
    "scope_for",
    "touch",
]

DEFAULT_MAX_BYTES = 2 * 1024**3
KINDS = ("verilator", "yosys", "pnr", "gcc")
#: Kinds whose entries count towards the budget and are evicted.
BOUNDED_KINDS = ("verilator", "yosys", "pnr")
#: How each kind stores its entries: directories with a lock file beside them, JSON records, gcc objects.
_LAYOUT = {"verilator": "builds", "pnr": "builds", "yosys": "records", "gcc": "gcc"}
#: Files shared by the builds of one directory (a dot name: never taken for a build).
SHARED_DIR = ".shared"
#: A Yosys writer's temp file older than this is debris from a killed process.
_STALE_TMP_SECONDS = 3600.0
_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}
_SIZE_RE = re.compile(r"^(\d+(?:\.\d*)?|\.\d+)\s*([kmgt](?:i?b)?|b)?$", re.IGNORECASE)


class CacheConfigError(UsageError):
    """A bad ``DPN_SYNTH_CACHE_MAX`` (the command line reports it as a usage error, exit 2)."""


class CacheError(RuntimeError):
    """The cache is in a state its protocol cannot handle (e.g. an entry deleted by hand while in use)."""


# --------------------------------------------------------------------------------------------------
# configuration


def cache_root() -> Path:
    """``$DPN_SYNTH_CACHE`` if set, else ``~/.cache/dpn-synth``."""
    env = os.environ.get("DPN_SYNTH_CACHE")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "dpn-synth"


def kind_dir(kind: str) -> Path:
    """The directory of one kind: ``<root>/<kind>``; Yosys's is ``$DPN_SYNTH_YOSYS_CACHE`` when set."""
    if kind not in KINDS:
        raise ValueError(f"unknown cache kind {kind!r} (expected one of {', '.join(KINDS)})")
    if kind == "yosys":
        env = os.environ.get("DPN_SYNTH_YOSYS_CACHE")
        if env:
            return Path(env).expanduser()
    return cache_root() / kind


def parse_size(text: str) -> int:
    """Bytes in *text*: ``123``, ``500M``, ``1.5G``, ``2GiB``, ``64kb`` (K/M/G/T are powers of 1024).

    Raises `ValueError` for anything else, negative sizes included.
    """
    m = _SIZE_RE.match(text.strip())
    if not m:
        raise ValueError(f"{text!r} is not a size")
    number, unit = m.group(1), (m.group(2) or "b")[0].lower()
    scale = _UNITS["" if unit == "b" else unit]
    if number.isdigit():
        return int(number) * scale
    return int(float(number) * scale)


def max_bytes() -> int:
    """The size budget: ``$DPN_SYNTH_CACHE_MAX`` (see `parse_size`), else `DEFAULT_MAX_BYTES` (2 GiB)."""
    env = os.environ.get("DPN_SYNTH_CACHE_MAX", "").strip()
    if not env:
        return DEFAULT_MAX_BYTES
    try:
        return parse_size(env)
    except ValueError:
        raise CacheConfigError(
            f"DPN_SYNTH_CACHE_MAX={env!r} is not a size: give bytes, or a number with a K, M, G or T suffix "
            "(e.g. 500M, 2G)"
        ) from None


def format_size(n: int) -> str:
    """``512B``, ``1.5K``, ``340.2M``, ``2.0G`` (powers of 1024, like `parse_size` reads them)."""
    if n < 1024:
        return f"{n}B"
    value = float(n)
    for unit in "KMGT":
        value /= 1024
        if value < 1024 or unit == "T":
            return f"{value:.1f}{unit}"
    raise AssertionError("unreachable")


def touch(path: Path) -> None:
    """Record a use of the entry at *path* (its mtime is its recency); a read-only cache is left alone."""
    with contextlib.suppress(OSError):
        os.utime(path)


# --------------------------------------------------------------------------------------------------
# entry locks


def _lock_key(path: os.PathLike[str] | str) -> str:
    return os.path.abspath(os.fspath(path))


def _open_locked(path: str, op: int) -> int | None:
    """A descriptor holding ``flock(op)`` on the lock file at *path* (created if missing); None when
    *op* includes ``LOCK_NB`` and somebody holds a conflicting lock.

    The lock file may be deleted (by an eviction, under an exclusive lock) between our ``open`` and our
    ``flock``: then we locked a file nobody else will find, so we check and start again."""
    while True:
        fd = os.open(path, os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC, 0o666)
        try:
            fcntl.flock(fd, op)
        except BlockingIOError:
            os.close(fd)
            return None
        except BaseException:
            os.close(fd)
            raise
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(path))
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)


class _Held:
    """This process's shared lock on one lock file, counted by the `Pin`s using it."""

    __slots__ = ("fd", "count")

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.count = 1


_held: dict[str, _Held] = {}
_held_lock = threading.Lock()


class Pin:
    """An entry kept in use: eviction skips it while this object lives (or until `release`).

    Pins of one entry in one process share one descriptor (a shared ``flock`` on the entry's lock
    file), so a process holds at most one descriptor per entry however many handles it keeps.  A
    pickled `Pin` pins the entry again in the process that unpickles it.
    """

    __slots__ = ("path", "_live")

    def __init__(self, path: str) -> None:  # made by `pin_entry` and `Exclusive.downgrade`, registered
        self.path = path
        self._live = True

    @property
    def live(self) -> bool:
        return self._live

    def release(self) -> None:
        """Stop using the entry (idempotent); the lock goes when the process's last pin of it goes."""
        if not self._live:
            return
        self._live = False
        with _held_lock:
            held = _held.get(self.path)
            if held is None:
                return
            held.count -= 1
            if held.count > 0:
                return
            del _held[self.path]
        os.close(held.fd)

    def __del__(self) -> None:
        try:
            self.release()
        except Exception:  # noqa: BLE001 - at interpreter exit the module may be half torn down
            pass

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (pin_entry, (self.path,))

    def __repr__(self) -> str:
        return f"Pin({self.path!r}{'' if self._live else ', released'})"


def _register(path: str, fd: int) -> Pin:
    """Make *fd* (a shared lock on *path*) this process's pin descriptor, or join the existing one."""
    with _held_lock:
        held = _held.get(path)
        if held is None:
            _held[path] = _Held(fd)
            fd = -1
        else:
            held.count += 1
    if fd >= 0:
        os.close(fd)  # another thread registered meanwhile: its descriptor keeps the lock
    return Pin(path)


def pin_entry(lock_path: os.PathLike[str] | str) -> Pin:
    """Mark the entry whose lock file is *lock_path* as in use (waits while it is being built or
    evicted).  The caller then checks the entry exists: a pin does not create it."""
    path = _lock_key(lock_path)
    with _held_lock:
        held = _held.get(path)
        if held is not None:
            held.count += 1
            return Pin(path)
    fd = _open_locked(path, fcntl.LOCK_SH)  # blocking, so outside _held_lock
    assert fd is not None
    return _register(path, fd)


def pinned_here(lock_path: os.PathLike[str] | str) -> bool:
    """True when this process holds a `Pin` on the entry of *lock_path*."""
    with _held_lock:
        return _lock_key(lock_path) in _held


class Exclusive:
    """The exclusive lock of a builder on one entry's lock file (a context manager; waits for it).

    `downgrade` turns it, once the entry is published, into the builder's `Pin`.
    """

    def __init__(self, lock_path: os.PathLike[str] | str) -> None:
        self.path = _lock_key(lock_path)
        if pinned_here(self.path):
            # Our own shared lock would block us forever.  Only happens when an entry in use was
            # deleted by hand (the protocol never removes a pinned entry).
            raise CacheError(f"cache entry of {self.path} vanished while this process was using it")
        self._fd: int | None = _open_locked(self.path, fcntl.LOCK_EX)

    def downgrade(self) -> Pin | None:
        """The lock as a shared one, i.e. a `Pin`; None when the entry was evicted in the instant
        between (``flock`` conversions are not atomic): the caller starts again."""
        fd, self._fd = self._fd, None
        if fd is None:
            raise CacheError("lock already released")
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            same = os.path.samestat(os.fstat(fd), os.stat(self.path))
        except FileNotFoundError:
            same = False
        except BaseException:
            os.close(fd)
            raise
        if not same:
            os.close(fd)
            return None
        return _register(self.path, fd)

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)

    def __enter__(self) -> Exclusive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


# --------------------------------------------------------------------------------------------------
# entries


@dataclass(frozen=True)
class Entry:
    """One whole cache entry: a build directory, a Yosys record, or a gcc object (with its source)."""

    kind: str
    path: Path
    size: int
    mtime: float
    lock: Path | None = None  # builds: the lock file beside the directory
    files: tuple[Path, ...] = ()  # gcc: every file of the entry


@dataclass(frozen=True)
class Scope:
    """The directories sharing one budget, and the directory whose ``flock`` serialises evictions."""

    lock_dir: Path
    dirs: tuple[tuple[str, Path], ...]


def _same_dir(a: Path, b: Path) -> bool:
    try:
        return a.expanduser().resolve() == b.expanduser().resolve()
    except OSError:
        return False


def root_scope() -> Scope:
    """The bounded kinds under `cache_root` (Yosys's only when ``$DPN_SYNTH_YOSYS_CACHE`` keeps it there)."""
    root = cache_root()
    dirs = [(kind, root / kind) for kind in BOUNDED_KINDS if _same_dir(kind_dir(kind), root / kind)]
    return Scope(root, tuple(dirs))


def scope_for(kind: str, directory: os.PathLike[str] | str) -> Scope:
    """The budget *directory* (holding entries of *kind*) belongs to: the root's when it is the root's
    directory of that kind, else its own."""
    d = Path(directory)
    if _same_dir(d, cache_root() / kind):
        return root_scope()
    return Scope(d, ((kind, d),))


def _tree_size(path: Path) -> int:
    """Apparent size of the files under *path* (symlinks not followed); vanished files count 0."""
    total = 0
    try:
        it = os.scandir(path)
    except OSError:
        return 0
    with it:
        for de in it:
            try:
                if de.is_dir(follow_symlinks=False):
                    total += _tree_size(Path(de.path))
                else:
                    total += de.stat(follow_symlinks=False).st_size
            except OSError:
                pass
    return total


def _listdir(d: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(d) as it:
            return list(it)
    except OSError:
        return []


def _build_entries(kind: str, d: Path) -> list[Entry]:
    out = []
    for de in _listdir(d):
        if de.name.startswith(".") or not de.is_dir(follow_symlinks=False):
            continue
        try:
            mtime = de.stat(follow_symlinks=False).st_mtime
        except OSError:
            continue
        out.append(Entry(kind, Path(de.path), _tree_size(Path(de.path)), mtime, d / f"{de.name}.lock"))
    return out


def _record_entries(d: Path) -> list[Entry]:
    out = []
    for sub in _listdir(d):
        if sub.name.startswith(".") or not sub.is_dir(follow_symlinks=False):
            continue
        for de in _listdir(Path(sub.path)):
            if de.name.startswith(".") or not de.name.endswith(".json"):
                continue
            try:
                st = de.stat(follow_symlinks=False)
            except OSError:
                continue
            out.append(Entry("yosys", Path(de.path), st.st_size, st.st_mtime))
    return out


def _gcc_entries(d: Path) -> list[Entry]:
    groups: dict[str, list[os.DirEntry[str]]] = {}
    for de in _listdir(d):
        if de.name.startswith("ref-") and de.is_file(follow_symlinks=False):
            groups.setdefault(de.name.rsplit(".", 1)[0], []).append(de)
    out = []
    for stem, des in sorted(groups.items()):
        size, mtime = 0, 0.0
        for de in des:
            try:
                st = de.stat(follow_symlinks=False)
            except OSError:
                continue
            size, mtime = size + st.st_size, max(mtime, st.st_mtime)
        out.append(Entry("gcc", d / stem, size, mtime, files=tuple(Path(de.path) for de in des)))
    return out


def entries(kind: str, directory: os.PathLike[str] | str) -> list[Entry]:
    """The entries of *kind* in *directory* (empty when it does not exist)."""
    d = Path(directory)
    layout = _LAYOUT.get(kind)
    if layout == "builds":
        return _build_entries(kind, d)
    if layout == "records":
        return _record_entries(d)
    if layout == "gcc":
        return _gcc_entries(d)
    raise ValueError(f"unknown cache kind {kind!r}")


def _remove(entry: Entry) -> bool:
    """Remove *entry* unless it is in use; True when it is gone."""
    if _LAYOUT[entry.kind] == "builds":
        assert entry.lock is not None
        fd = _open_locked(str(entry.lock), fcntl.LOCK_EX | fcntl.LOCK_NB)
        if fd is None:
            return False  # being built or used
        trash = None
        try:
            if entry.path.is_dir():
                # Renamed first, so the entry disappears at once and never looks half deleted.
                trash = entry.path.with_name(f".evicted-{entry.path.name}-{os.getpid()}")
                os.rename(entry.path, trash)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(entry.lock)
        except OSError:
            return False
        finally:
            os.close(fd)
        if trash is not None:
            shutil.rmtree(trash, ignore_errors=True)
        return True
    ok = True
    for path in entry.files or (entry.path,):
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        except OSError:
            ok = False
    return ok


def _sweep(kind: str, d: Path) -> None:
    """Remove debris of killed processes: builds' temp and evicted directories whose builder is gone,
    lock files without a build, old temp files of Yosys writers.  Call with the budget's lock held."""
    if _LAYOUT[kind] == "builds":
        listing = _listdir(d)
        names = {de.name for de in listing}
        keys = set()
        for name in names:
            if name.startswith(".evicted-"):  # an eviction was killed half way (evictions are serialised)
                shutil.rmtree(d / name, ignore_errors=True)
            elif name.startswith(".") and ".tmp-" in name:
                keys.add(name[1:name.index(".tmp-")])
            elif name.endswith(".lock") and name[:-5] not in names:
                keys.add(name[:-5])
        for key in sorted(keys):
            lock = d / f"{key}.lock"
            try:
                fd = _open_locked(str(lock), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue
            if fd is None:
                continue  # a builder is at work
            try:
                for tmp in d.glob(f".{key}.tmp-*"):
                    shutil.rmtree(tmp, ignore_errors=True)
                if not (d / key).exists():
                    with contextlib.suppress(OSError):
                        os.unlink(lock)
            finally:
                os.close(fd)
    elif _LAYOUT[kind] == "records":
        now = time.time()
        for sub in _listdir(d):
            if not sub.is_dir(follow_symlinks=False):
                continue
            for de in _listdir(Path(sub.path)):
                with contextlib.suppress(OSError):
                    if de.name.startswith(".tmp-") and now - de.stat().st_mtime > _STALE_TMP_SECONDS:
                        os.unlink(de.path)


@contextlib.contextmanager
def _scope_lock(d: Path, *, blocking: bool) -> Iterator[bool]:
    """Serialise evictions of one budget (``flock`` on its directory); yields False when another
    process is evicting and *blocking* is off.  Filesystems without it: go ahead unserialised
    (removal stays safe entry by entry)."""
    fd = -1
    got = True
    try:
        d.mkdir(parents=True, exist_ok=True)
        fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
    except BlockingIOError:
        got = False
    except OSError:
        pass
    try:
        yield got
    finally:
        if fd >= 0:
            os.close(fd)


@dataclass
class EvictResult:
    """What an eviction found and did."""

    budget: int
    bytes_before: int = 0
    bytes_after: int = 0
    removed: list[Entry] = field(default_factory=list)
    in_use: list[Entry] = field(default_factory=list)  # over budget but skipped: in use


def evict(scope: Scope, budget: int | None = None, *, blocking: bool = False) -> EvictResult | None:
    """Remove least recently used entries of *scope* until it fits *budget* (default `max_bytes`);
    entries in use are skipped.  None when another process is evicting the same budget right now
    (unless *blocking*, which waits for it)."""
    budget = max_bytes() if budget is None else budget
    with _scope_lock(scope.lock_dir, blocking=blocking) as got:
        if not got:
            return None
        found: list[Entry] = []
        for kind, d in scope.dirs:
            if d.is_dir():
                _sweep(kind, d)
                found += entries(kind, d)
        total = sum(e.size for e in found)
        result = EvictResult(budget, bytes_before=total)
        for entry in sorted(found, key=lambda e: (e.mtime, str(e.path))):
            if total <= budget:
                break
            if _remove(entry):
                total -= entry.size
                result.removed.append(entry)
            else:
                result.in_use.append(entry)
        result.bytes_after = total
        return result


def after_publish(kind: str, directory: os.PathLike[str] | str, budget: int | None = None) -> EvictResult | None:
    """Call after publishing a new entry of *kind* in *directory* (pin it first if it is a build):
    evicts within its budget.  Never raises `OSError`: a cache that cannot be trimmed still works."""
    try:
        return evict(scope_for(kind, directory), budget)
    except OSError:
        return None


# --------------------------------------------------------------------------------------------------
# `dpn-synth cache --info / --clear`


def _all_dirs() -> list[tuple[str, Path]]:
    return [(kind, kind_dir(kind)) for kind in KINDS]


def info() -> dict[str, object]:
    """Root, budget, and per kind: directory, entries, bytes, and whether the root's budget bounds it."""
    root = cache_root()
    budget = max_bytes()
    bounded = {str(d) for _, d in root_scope().dirs}
    kinds = []
    for kind, d in _all_dirs():
        found = entries(kind, d)
        kinds.append({
            "kind": kind,
            "dir": str(d),
            "entries": len(found),
            "bytes": sum(e.size for e in found),
            "budget": "root" if str(d) in bounded else ("own" if kind in BOUNDED_KINDS else "none"),
        })
    bounded_bytes = sum(k["bytes"] for k in kinds if k["budget"] == "root")
    return {
        "root": str(root),
        "budget": budget,
        "budget_from_env": bool(os.environ.get("DPN_SYNTH_CACHE_MAX", "").strip()),
        "kinds": kinds,
        "bytes": sum(k["bytes"] for k in kinds),
        "bounded_bytes": bounded_bytes,
    }


def format_info(data: dict[str, object] | None = None) -> str:
    d = info() if data is None else data
    budget = format_size(int(d["budget"]))  # type: ignore[arg-type]
    source = "DPN_SYNTH_CACHE_MAX" if d["budget_from_env"] else "default; DPN_SYNTH_CACHE_MAX overrides"
    lines = [f"cache root: {d['root']}", f"budget:     {budget} ({source})"]
    notes = {"root": "", "own": " (own budget: $DPN_SYNTH_YOSYS_CACHE)", "none": " (not bounded)"}
    for k in d["kinds"]:  # type: ignore[attr-defined]
        lines.append(f"  {k['kind']:<10}{k['entries']:>7} entries {format_size(k['bytes']):>8}  {k['dir']}"
                     f"{notes[k['budget']]}")
    lines.append(f"total:      {format_size(int(d['bytes']))}; bounded: "  # type: ignore[arg-type]
                 f"{format_size(int(d['bounded_bytes']))} of {budget}")  # type: ignore[arg-type]
    return "\n".join(lines) + "\n"


@dataclass
class ClearResult:
    removed: int = 0
    freed: int = 0
    in_use: list[Entry] = field(default_factory=list)


def clear() -> ClearResult:
    """Empty every kind's directory, skipping (and listing) entries in use."""
    result = ClearResult()
    scopes = [root_scope()]
    for kind in BOUNDED_KINDS:  # moved out of the root ($DPN_SYNTH_YOSYS_CACHE)
        d = kind_dir(kind)
        if not any(_same_dir(d, sd) for _, sd in scopes[0].dirs):
            scopes.append(Scope(d, ((kind, d),)))
    gcc = kind_dir("gcc")
    for scope in scopes:
        if not any(d.is_dir() for _, d in scope.dirs):
            continue
        with _scope_lock(scope.lock_dir, blocking=True):
            for kind, d in scope.dirs:
                _sweep(kind, d)
                for entry in entries(kind, d):
                    if _remove(entry):
                        result.removed += 1
                        result.freed += entry.size
                    else:
                        result.in_use.append(entry)
                if _LAYOUT[kind] == "builds":
                    shutil.rmtree(d / SHARED_DIR, ignore_errors=True)  # a build using it rebuilds it
    # gcc objects are loaded right after they are looked up, and removing a loaded object is harmless.
    for entry in entries("gcc", gcc):
        if _remove(entry):
            result.removed += 1
            result.freed += entry.size
    return result


def format_clear(result: ClearResult) -> str:
    lines = [f"removed {result.removed} entries ({format_size(result.freed)}) from {cache_root()}"]
    if result.in_use:
        lines.append(f"skipped {len(result.in_use)} entries in use "
                     f"({format_size(sum(e.size for e in result.in_use))}):")
        lines += [f"  {e.path}" for e in result.in_use]
    return "\n".join(lines) + "\n"
