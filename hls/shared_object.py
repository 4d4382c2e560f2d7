"""Shared objects built by gcc from C source and kept in the ``gcc`` kind of the build cache (`hls.cache`).

Two users: the gcc reference of a kernel (`sim.gcc_ref`, `sim.hoisted`), and the compiler's own
cycle model (`hls.dpn.native_model`), whose C is part of the package.  gcc is already a requirement
of the front end (`hls.frontend.preprocess` runs ``gcc -E``).
"""

from __future__ import annotations

import functools
import hashlib
import os
import subprocess
import tempfile


def default_cache_dir() -> str:
    """`$DPN_SYNTH_CACHE/gcc`, else `~/.cache/dpn-synth/gcc`."""
    root = os.environ.get("DPN_SYNTH_CACHE")
    if root:
        return os.path.join(root, "gcc")
    return os.path.join(os.path.expanduser("~"), ".cache", "dpn-synth", "gcc")


@functools.lru_cache(maxsize=1)
def gcc_identity() -> str:
    """Version and target of gcc: part of the cache key, so a new compiler never reuses old objects."""
    try:
        out = subprocess.run(
            ["gcc", "-dumpfullversion", "-dumpmachine"], capture_output=True, text=True, check=False, timeout=60
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise RuntimeError(f"cannot run gcc: {exc}") from None
    return out.stdout.strip()


def _atomic_write(path: str, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-", suffix=os.path.basename(path))
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _usable_dir(directory: str) -> str:
    try:
        os.makedirs(directory, exist_ok=True)
        if os.access(directory, os.W_OK):
            return directory
    except OSError:
        pass
    fallback = os.path.join(tempfile.gettempdir(), f"dpn-synth-gcc-{os.getuid()}")
    os.makedirs(fallback, exist_ok=True)
    return fallback


def compile_shared_object(source: str, flags: tuple[str, ...], cache_dir: str) -> tuple[str, bool]:
    """Compile `source` into a shared object in `cache_dir` unless it is there; (path, compiled?).

    Both the source and the object are written under temporary names and renamed into place, so
    concurrent processes (pytest-xdist workers) building the same kernel never see a partial file.
    """
    key = hashlib.sha256("\0".join([gcc_identity(), " ".join(flags), source]).encode()).hexdigest()[:40]
    directory = _usable_dir(cache_dir)
    so_path = os.path.join(directory, f"ref-{key}.so")
    if os.path.exists(so_path):
        return so_path, False
    c_path = os.path.join(directory, f"ref-{key}.c")
    _atomic_write(c_path, source.encode())
    fd, tmp_so = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".so")
    os.close(fd)
    try:
        proc = subprocess.run(
            ["gcc", *flags, "-o", tmp_so, c_path, "-lm"],
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
            env=dict(os.environ, LC_ALL="C"),
        )
        if proc.returncode != 0:
            raise RuntimeError(f"gcc failed to compile {c_path}:\n{proc.stderr}")
        os.replace(tmp_so, so_path)
    finally:
        if os.path.exists(tmp_so):
            os.unlink(tmp_so)
    return so_path, True
