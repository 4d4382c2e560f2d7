"""Where a sweep's tasks run: a pool of local worker processes, or the workers of a Dask cluster.

`dpn-synth explore` and `python -m bench` both map one CPU-bound, picklable function over a list of
independent tasks (a compile per configuration).  A large sweep outgrows one machine's cores; Dask
distributed spreads the same tasks over a cluster.  Both commands go through `map_unordered`, so
they behave alike whatever runs the tasks: results come back as they finish, tagged with the task's
index (the caller restores the order), an exception raised by the function is raised here as it would
be in-process, and a worker that dies under a task makes that task's result a `TaskFailed` instead
of ending the sweep.

dask is optional (`pip install 'dpn-synth[dask]'`): nothing imports it unless a `Backend` asks for it.
"""

from __future__ import annotations

import argparse
import importlib
import multiprocessing as mp
import re
import sys
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait as wait_local
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional, Sequence

from .diagnostics import UsageError

__all__ = ["add_backend_options", "Backend", "NoProgress", "TaskFailed", "map_unordered", "require_dask", "DASK_EXTRA"]

DASK_EXTRA = "dask[distributed]: pip install 'dpn-synth[dask]'"

# what Dask accepts as a scheduler address: [protocol://]host:port (the host may be a bracketed IPv6 address)
_ADDRESS = re.compile(r"^(?:(tcp|tls|ws|wss)://)?(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_.-]+):([0-9]{1,5})$")


def add_backend_options(parser: argparse.ArgumentParser, what: str, workers_need: str) -> None:
    """`--jobs`, and `--scheduler` / `--dask` (exclusive), the same in `explore` and `python -m bench`;
    `what` names the tasks ("configurations", "rows"), `workers_need` what a remote worker must import."""
    parser.add_argument("-j", "--jobs", type=int, default=2, metavar="J",
                        help="worker processes (default 2); with --dask, the local Dask cluster's workers")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="ADDRESS",
                       help=f"run the {what} on the workers of the Dask scheduler at ADDRESS (tcp://HOST:PORT), "
                            f"which must be able to import {workers_need} (needs pip install 'dpn-synth[dask]')")
    where.add_argument("--dask", action="store_true",
                       help=f"run the {what} on a Dask LocalCluster of --jobs worker processes started for this "
                            "run (needs pip install 'dpn-synth[dask]')")


def require_dask(option: str) -> None:
    """Raise the usage error that says `option` needs dask[distributed] when it is not installed.

    Checked before any work starts, so a missing optional extra is one line, not a traceback from a
    worker halfway through the sweep."""
    try:
        importlib.import_module("distributed")  # only whether it imports: the backends import it when they run
    except ImportError:
        raise UsageError(f"{option} needs {DASK_EXTRA}") from None


@dataclass(frozen=True)
class Backend:
    """Where `map_unordered` runs tasks.

    Default: `jobs` local worker processes, spawned (not forked: the caller may hold isl state and
    threads such as the progress spinner, neither of which survives a fork reliably); one job or one
    task runs in-process.  `local_cluster`: a `distributed.LocalCluster` of `jobs` single-threaded
    worker processes, started for the run and closed after it.  `scheduler`: the workers of the
    running Dask scheduler at that address (`jobs` does not apply: the cluster has its own); they must
    be able to import dpn-synth, and for the benchmark the source checkout (bench/, tests/)."""

    jobs: int = 1
    scheduler: Optional[str] = None
    local_cluster: bool = False

    def __post_init__(self) -> None:
        if self.jobs < 1:
            raise UsageError(f"--jobs must be a positive integer, got {self.jobs}")
        if self.scheduler is not None and self.local_cluster:
            raise UsageError("--scheduler and --dask exclude each other (--dask starts a cluster of its own)")
        if self.scheduler is not None:
            m = _ADDRESS.match(self.scheduler.strip())
            if m is None or not 0 < int(m.group(3)) < 65536:
                raise UsageError(f"--scheduler expects a Dask scheduler address like tcp://HOST:PORT, "
                                 f"got `{self.scheduler}`")
            require_dask("--scheduler")
        if self.local_cluster:
            require_dask("--dask")

    @property
    def uses_dask(self) -> bool:
        return self.local_cluster or self.scheduler is not None

    def describe(self) -> str:
        """One line for the results' metadata: what ran the tasks."""
        if self.scheduler is not None:
            return f"dask scheduler {self.scheduler.strip()}"
        if self.local_cluster:
            return f"dask LocalCluster, {self.jobs} workers"
        return f"local processes, {self.jobs} jobs"


@dataclass(frozen=True)
class TaskFailed:
    """The result of a task whose worker died under it (a crash in native code, the OOM killer, a
    lost cluster node): the task has no result, the others go on."""

    message: str


class NoProgress(TimeoutError):
    """No task finished within the time limit; the workers have been stopped."""


def map_unordered(fn: Callable[[Any], Any], tasks: Sequence[Any], backend: Backend, *,
                  timeout: Optional[float] = None,
                  max_tasks_per_child: Optional[int] = None) -> Iterator[tuple[int, Any]]:
    """`(index, fn(tasks[index]))` for every task, in the order they finish.

    `fn` and the tasks are pickled to the workers: `fn` must be a module-level function of a module
    the workers can import.  A result is a `TaskFailed` when the worker died under the task.
    `timeout`: raise `NoProgress` (after stopping the workers) when no task finishes for that many
    seconds.  `max_tasks_per_child`: local workers are replaced after that many tasks (memory that
    isl does not give back); Dask workers are not.  One local job, or a single task, runs in-process
    (a pool would only add its start-up; `timeout` does not apply).  Closing the iterator early stops
    the workers."""
    if not tasks:
        return iter(())
    if backend.uses_dask:
        return _dask(fn, tasks, backend, timeout)
    if backend.jobs <= 1 or len(tasks) <= 1:
        return ((k, fn(t)) for k, t in enumerate(tasks))
    return _local(fn, tasks, backend.jobs, timeout, max_tasks_per_child)


def _local(fn: Callable[[Any], Any], tasks: Sequence[Any], jobs: int, timeout: Optional[float],
           max_tasks_per_child: Optional[int]) -> Iterator[tuple[int, Any]]:
    """Spawned workers; their `sys.path` is the parent's (multiprocessing hands it over)."""
    extra = {}
    if max_tasks_per_child and sys.version_info >= (3, 11):
        extra["max_tasks_per_child"] = max_tasks_per_child
    before = set(mp.active_children())
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), mp_context=mp.get_context("spawn"), **extra)
    finished = False
    try:
        pending: dict[Future, int] = {pool.submit(fn, t): k for k, t in enumerate(tasks)}
        while pending:
            done, _ = wait_local(pending, timeout=timeout, return_when=FIRST_COMPLETED)
            if not done:
                raise NoProgress(f"no task finished for {timeout:g} s")
            for fut in sorted(done, key=pending.__getitem__):
                k = pending.pop(fut)
                exc = fut.exception()
                if isinstance(exc, BrokenProcessPool):  # every task still pending shares this fate
                    yield k, TaskFailed(f"worker process died: {exc}")
                elif exc is not None:
                    raise exc
                else:
                    yield k, fut.result()
        finished = True
    finally:
        pool.shutdown(wait=finished, cancel_futures=True)
        if not finished:
            _stop_workers(pool, before)


def _stop_workers(pool: ProcessPoolExecutor, before: set) -> None:
    """Stop the workers of an abandoned pool (timeout, Ctrl-C, the caller gave up): `shutdown` would
    let running tasks go on, and the interpreter waits for them at exit.  Python 3.14 has
    `terminate_workers`; before it, the pool's workers are the children started since `before`."""
    terminate = getattr(pool, "terminate_workers", None)
    if terminate is not None:
        terminate()
        return
    for proc in mp.active_children():
        if proc not in before:
            proc.terminate()


def _dask(fn: Callable[[Any], Any], tasks: Sequence[Any], backend: Backend,
          timeout: Optional[float]) -> Iterator[tuple[int, Any]]:
    """The tasks as Dask futures (`pure=False`: equal tasks are still separate runs).  Dask retries a
    task whose worker died (`distributed.scheduler.allowed-failures`), then reports `KilledWorker`."""
    import contextlib
    import logging

    from distributed import Client, KilledWorker, LocalCluster, TimeoutError as DaskTimeout, wait

    with contextlib.ExitStack() as stack:
        if backend.local_cluster:
            cluster = stack.enter_context(LocalCluster(
                n_workers=min(backend.jobs, len(tasks)), threads_per_worker=1, processes=True,
                dashboard_address=None, memory_limit=0,  # as the local pool: no memory ceiling per worker
                silence_logs=logging.ERROR))
            client = stack.enter_context(Client(cluster))
        else:
            try:
                client = stack.enter_context(Client(backend.scheduler.strip()))
            except OSError as e:
                raise UsageError(f"--scheduler {backend.scheduler}: cannot reach the Dask scheduler ({e})") from None
        pending = {client.submit(fn, t, pure=False): k for k, t in enumerate(tasks)}
        try:
            while pending:
                try:
                    done, _ = wait(list(pending), timeout=timeout, return_when=FIRST_COMPLETED)
                except DaskTimeout:
                    raise NoProgress(f"no task finished for {timeout:g} s") from None
                for fut in sorted(done, key=pending.__getitem__):
                    k = pending.pop(fut)
                    if fut.status == "cancelled":
                        yield k, TaskFailed(f"cancelled by the Dask scheduler: {fut.exception() or 'lost'}")
                    elif fut.status == "error" and isinstance(fut.exception(), KilledWorker):
                        yield k, TaskFailed(f"worker process died: {fut.exception()}")
                    else:
                        yield k, fut.result()  # raises the task's own exception, as in-process
        finally:
            if pending:  # abandoned: a running task on a remote worker still runs to its end
                client.cancel(list(pending))
