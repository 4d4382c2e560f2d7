"""Verilator's runtime library objects, compiled once and shared by every model build of a cache.

cocotb's Verilator flow compiles Verilator's runtime (``verilated.cpp``, ``verilated_vpi.cpp``,
``verilated_dpi.cpp``, ``verilated_threads.cpp``, and the trace writers when tracing) into every
build directory.  Those objects depend on the Verilator install, the C++ compiler, the make variables
(optimisation levels) and the tracing format, never on the design, yet they are most of a small
model's build: 9.4 of 12 CPU seconds for ``gemm-int`` at ``-O0``.  So the first build of a runtime
configuration keeps a copy of them (`harvest`), and later builds link that copy (`link_vars`).

cocotb's own ``verilator.cpp`` includes the model's ``Vtop.h``; its object stays per build.

The store is ``<cache dir>/.shared/<key>/`` beside the builds (`hls.cache.SHARED_DIR`: eviction never
takes it for a build, ``dpn-synth cache --clear`` empties it), a few megabytes per configuration.  A copy is
published by an atomic rename, so a reader sees a whole set or none.  If a build that started from a
copy fails, the caller drops the copy (`discard`) and builds from scratch: a shared object can cost
a rebuild, never a wrong result.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from hls.cache import SHARED_DIR

__all__ = ["discard", "harvest", "runtime_key", "link_vars", "runtime_objects", "store_for"]

#: Verilator's runtime objects are named after their sources, all ``verilated*.cpp``.
_PREFIX = "verilated"


@functools.lru_cache(maxsize=None)
def _compiler_identity(cxx: str) -> str:
    """The C++ compiler's version line: a new compiler must not link objects of the old one."""
    try:
        out = subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return f"{cxx}: unknown"
    lines = (out.stdout or out.stderr).splitlines()
    return f"{cxx}: {lines[0] if lines else 'unknown'}"


def runtime_key(
    verilator: str,
    verilator_root: Path,
    cocotb: Mapping[str, str],
    make_vars: Mapping[str, str],
    trace: str | None,
) -> str:
    """The content name of one runtime configuration: everything the runtime objects depend on."""
    payload = {
        "verilator": verilator,
        "root": str(verilator_root),  # whose headers the objects were compiled against
        "cocotb": dict(sorted(cocotb.items())),
        "make_vars": sorted((str(k), str(v)) for k, v in make_vars.items()),
        "trace": trace,
        "cxx": _compiler_identity(os.environ.get("CXX", "c++")),
    }
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()[:32]


def store_for(cache_dir: Path, key: str) -> Path:
    return Path(cache_dir) / SHARED_DIR / key


def runtime_objects(build_dir: Path) -> list[Path]:
    """The runtime's objects in a finished build directory (or a store)."""
    return sorted(p for p in Path(build_dir).glob(f"{_PREFIX}*.o") if p.is_file())


def link_vars(store: Path) -> dict[str, str] | None:
    """Make variables that link the stored objects instead of compiling the runtime (None when
    nothing is stored).

    Verilator's makefile makes its runtime objects depend on the generated ``Vtop.mk``, so copies
    placed in the build directory would be compiled again; emptying the runtime's class lists and
    handing the stored objects to the link (``LOADLIBES``, after the model's objects and before its
    libraries) skips the rule instead.
    """
    if not store.is_dir():
        return None
    objs = runtime_objects(store)
    if not objs:
        return None
    return {"VM_GLOBAL_FAST": "", "VM_GLOBAL_SLOW": "", "LOADLIBES": " ".join(str(p) for p in objs)}


def harvest(build_dir: Path, store: Path) -> None:
    """Keep the runtime objects of a successful build, unless a copy is stored already."""
    if store.is_dir():
        return
    files = runtime_objects(build_dir)
    if not files:
        return
    store.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=store.parent))
    try:
        for src in files:
            shutil.copyfile(src, tmp / src.name)
        os.rename(tmp, store)  # atomic; fails if another build published first, which is as good
    except OSError:
        pass
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def discard(store: Path) -> None:
    """Drop a stored copy that a build could not use."""
    trash = store.with_name(f".tmp-discard-{store.name}-{os.getpid()}")
    try:
        os.rename(store, trash)
    except OSError:
        return
    shutil.rmtree(trash, ignore_errors=True)
