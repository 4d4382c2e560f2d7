"""Run one C kernel through dpn-synth and gcc and return a verdict.

Stages, in order (the first failing stage ends the run, except that the interpreter and the DPN
simulator are both tried, so a verdict says whether the front end or the network is at fault):

* ``cc``: ``gcc -std=c99 -Wall -c`` accepts the file (a failure here is a generator bug);
* ``pipeline``: `hls.pipeline.run` up to sized channels (any exception, including a `CompileError`
  on a kernel that is valid by construction, is a failure);
* ``gcc``: the oracle, `sim.gcc_ref.GccReference`, on random inputs;
* ``interp``: `hls.poly.interpret.interpret` bit for bit against gcc;
* ``dataflow``: the exact dataflow of the `dataflow` pass (isl) equals a brute-force replay of the
  schedule (source of every read instance, live-in reads, live-out writes);
* ``dpn``: `hls.dpn.simulate.simulate` (random interleaving): no deadlock, bit for bit against gcc;
* ``tiled`` (when asked, `tile="auto"` or sizes): the same kernel compiled with `Options(tile=...)`,
  through the DPN simulator against gcc;
* ``rtl`` (when asked): `hls.rtl.generate.generate` + Verilator with random back-pressure.  Kernels
  with floating-point values skip it (the RTL back end is integer-only for now), and so does a
  `CompileError` from `generate` that mentions floating point.

A `Verdict`'s `signature` (stage, kind, where) identifies "the same failure" for the shrinker.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import signal
import subprocess
import tempfile
import threading
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable, Optional, Sequence, Union

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


class FuzzTimeout(BaseException):
    """Raised by the alarm when a check runs too long (a BaseException so no `except Exception` eats it)."""


@dataclass
class Failure:
    stage: str
    kind: str  # invalid | compile-error | exception | mismatch | deadlock | incomplete | timeout
    message: str
    where: str = ""  # exception type and innermost project frame, or a normalized CompileError text
    detail: str = ""  # traceback tail / deadlock report

    @property
    def signature(self) -> tuple[str, str, str]:
        return (self.stage, self.kind, self.where)

    def summary(self) -> str:
        return f"{self.stage} {self.kind}: {self.message}"


@dataclass
class Verdict:
    failures: list[Failure] = field(default_factory=list)
    rtl: str = "not run"  # pass | fail | skipped: why | not run
    seconds: float = 0.0
    instances: int = 0
    is_float: Optional[bool] = None
    path: str = ""
    tiling: str = ""  # with `tile`: what the tiled compile did ("tiled 2,2" / "not tiled")
    variants: int = 1  # distinct networks over `compiles` compilations
    rtl_designs: int = 0  # distinct Verilog designs run

    @property
    def ok(self) -> bool:
        return not self.failures

    @property
    def first(self) -> Optional[Failure]:
        return self.failures[0] if self.failures else None

    @property
    def signature(self) -> Optional[tuple[str, str, str]]:
        return self.first.signature if self.first else None

    def has(self, signature: tuple[str, str, str]) -> bool:
        return any(f.signature == signature for f in self.failures)

    def summary(self) -> str:
        if self.ok:
            return f"pass (rtl: {self.rtl})"
        return "; ".join(f.summary() for f in self.failures)

    def to_json(self) -> dict:
        d = asdict(self)
        d["ok"] = self.ok
        return d


# ------------------------------------------------------------------------------------------------


def _where(exc: BaseException) -> str:
    """Exception type and the innermost frame in the project's own code (hls/, sim/)."""
    frames = traceback.extract_tb(exc.__traceback__)
    own = [f for f in frames if "/hls/" in f.filename or "/sim/" in f.filename]
    loc = ""
    if own:
        f = own[-1]
        loc = f"{Path(f.filename).parent.name}/{Path(f.filename).name}:{f.name}"
    return f"{type(exc).__name__}@{loc}"


def normalize_message(msg: str) -> str:
    """A CompileError message without the parts that change while shrinking (numbers, names, text)."""
    msg = msg.splitlines()[0] if msg else ""
    msg = re.sub(r"^.*?error: ", "", msg)
    msg = re.sub(r"`[^`]*`", "`_`", msg)
    msg = re.sub(r"'[^']*'", "'_'", msg)
    msg = re.sub(r"-?\d+", "N", msg)
    return msg


def _exc_failure(stage: str, exc: BaseException) -> Failure:
    from hls.diagnostics import CompileError

    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-3000:]
    if isinstance(exc, CompileError):
        return Failure(stage, "compile-error", str(exc)[:500], "CompileError: " + normalize_message(str(exc)), tb)
    return Failure(stage, "exception", f"{type(exc).__name__}: {str(exc)[:400]}", _where(exc), tb)


def _mismatch(stage: str, mism) -> Failure:
    arrays = sorted({m.array for m in mism})
    return Failure(stage, "mismatch", f"{len(mism)} elements differ (arrays {', '.join(arrays)}); first {mism[0]}")


@contextlib.contextmanager
def _deadline(seconds: Optional[float]):
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return

    def fire(signum, frame):
        raise FuzzTimeout()

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def gcc_accepts(path: Union[str, Path]) -> tuple[bool, str]:
    """`gcc -std=c99 -Wall -c` on the file: (no error, diagnostics other than the ignored pragmas)."""
    proc = subprocess.run(["gcc", "-std=c99", "-Wall", "-Wno-unknown-pragmas", "-c", str(path), "-o", "/dev/null"],
                          capture_output=True, text=True, timeout=120)
    return proc.returncode == 0, proc.stderr


def program_is_float(program) -> bool:
    """Whether any array, scalar or expression of the polyhedral program is floating point."""
    from hls.poly.expr import walk

    if any(a.type.is_float for a in program.arrays.values()):
        return True
    if any(a.kind == "scalar" and a.type.is_float for a in program.args if hasattr(a, "type")):
        return True
    return any(e.type.is_float for s in program.statements for e in walk(s.expr))


def dataflow_difference(program) -> Optional[str]:
    """Compare `program.flow` with a replay of the schedule; a description of the first difference."""
    import islpy as isl

    from hls.poly import isl_utils as iu
    from hls.poly.interpret import access_table, instances_in_order

    tables = {}
    for st in program.statements:
        tables[st.write.id] = access_table(st.write.relation)
        for r in st.reads:
            tables[r.id] = access_table(r.relation)
    truth: dict = {}  # (read id, sink iteration) -> (source statement, source iteration) or None (live-in)
    last: dict = {}
    for _t, name, it in instances_in_order(program):
        st = program.statement(name)
        for r in st.reads:
            truth[(r.id, it)] = last.get((r.array, tables[r.id][it]))
        last[(st.write.array, tables[st.write.id][it])] = (name, it)
    truth_out = {(f"{name}.w", it) for (arr, _e), (name, it) in last.items() if program.arrays[arr].is_arg}

    claimed: dict = {}
    dup = []
    for d in program.flow.dependences:
        n = d.relation.dim(isl.dim_type.in_)
        for p in iu.map_pairs(d.relation).tolist():
            key = (d.sink_access, tuple(p[n:]))
            if key in claimed:
                dup.append(key)
            claimed[key] = (d.source, tuple(p[:n]))
    for rid, m in program.flow.live_in.items():
        n = m.dim(isl.dim_type.in_)
        for p in iu.map_pairs(m).tolist():
            key = (rid, tuple(p[:n]))
            if key in claimed:
                dup.append(key)
            claimed[key] = None
    claimed_out = set()
    for wid, m in program.flow.live_out.items():
        n = m.dim(isl.dim_type.in_)
        claimed_out |= {(wid, tuple(p[:n])) for p in iu.map_pairs(m).tolist()}

    def show(src) -> str:
        return "live-in" if src is None else f"{src[0]}{list(src[1])}"

    if dup:
        rid, it = sorted(dup)[0]
        return f"read {rid} at {list(it)} has two sources in the dataflow"
    for key in sorted(set(truth) | set(claimed), key=repr):
        if key not in claimed:
            return f"read {key[0]} at {list(key[1])}: no source in the dataflow (replay: {show(truth[key])})"
        if key not in truth:
            return f"read {key[0]} at {list(key[1])}: the dataflow has a source for an instance that does not run"
        if claimed[key] != truth[key]:
            return (f"read {key[0]} at {list(key[1])}: dataflow says {show(claimed[key])}, "
                    f"replay says {show(truth[key])}")
    if claimed_out != truth_out:
        diff = sorted(claimed_out ^ truth_out, key=repr)[0]
        side = "claims" if diff in claimed_out else "misses"
        return f"live-out: the dataflow {side} the final write {diff[0]} at {list(diff[1])}"
    return None


def _copy_arrays(inputs: dict) -> dict:
    """A copy whose arrays the run may overwrite; it still answers for hoisted scalars (`KernelInputs`)."""
    from sim.inputs import KernelInputs

    out = {k: (np.array(v, copy=True) if isinstance(v, np.ndarray) else v) for k, v in inputs.items()}
    return KernelInputs(inputs.program, out) if isinstance(inputs, KernelInputs) else out


def check_file(path: Union[str, Path], *, seeds: Sequence[int] = (0,), rtl: bool = False,
               workdir: Optional[Path] = None, cache_root: Optional[Path] = None, timeout: Optional[float] = None,
               cc: bool = True, stall: float = 0.3, rtl_float: bool = False, tile: Optional[str] = None,
               local_words: Optional[int] = None, compiles: int = 1, rtl_min_designs: int = 1) -> Verdict:
    """Check one C file (the kernel is the function holding `#pragma scop`).

    With `compiles` > 1 the kernel is compiled that many times: isl may return different (equal)
    representations from run to run, so the network and the Verilog can differ; every distinct network
    goes through the DPN simulator and every distinct design through Verilator (`Verdict.variants`).
    With `rtl_min_designs` = 2, Verilator is not run at all unless the compilations gave at least two
    distinct designs (cheap rejection while shrinking a failure that only some representations show).
    `local_words` is the on-chip budget of the tiled compile (`--local-words`): a small one gives small
    tiles, partial tiles at every edge and more bands, which the default budget leaves out on small
    programs.
    """
    from hls.diagnostics import CompileError
    from hls.dpn.simulate import simulate
    from hls.pipeline import Options, run
    from hls.poly.interpret import interpret
    from sim.gcc_ref import GccReference
    from sim.inputs import compare, random_inputs

    t0 = time.perf_counter()
    v = Verdict(path=str(path))
    stage = "cc"
    try:
        with _deadline(timeout):
            if cc:
                ok, err = gcc_accepts(path)
                if not ok:
                    v.failures.append(Failure("cc", "invalid", err.strip()[:500], "gcc rejects the program"))
                    return v
            stage = "pipeline"
            try:
                res = run(Options(str(path)))
            except Exception as exc:  # noqa: BLE001 - every exception is a finding
                v.failures.append(_exc_failure("pipeline", exc))
                return v
            v.is_float = program_is_float(res.program)
            variants = [res]
            if compiles > 1:
                from hls.dpn.serialize import network_to_json

                def net_key(r) -> str:
                    return hashlib.sha1(json.dumps(network_to_json(r.network), sort_keys=True).encode()).hexdigest()

                seen = {net_key(res)}
                for _ in range(compiles - 1):
                    r2 = run(Options(str(path)))
                    k2 = net_key(r2)
                    if k2 not in seen:
                        seen.add(k2)
                        variants.append(r2)
            v.variants = len(variants)
            for seed in seeds:
                inputs = random_inputs(res.program, seed)
                stage = "gcc"
                try:
                    expected = _copy_arrays({k: x for k, x in inputs.items() if isinstance(x, np.ndarray)})
                    GccReference(res.kernel).run({**inputs, **expected})
                except Exception as exc:  # noqa: BLE001
                    v.failures.append(_exc_failure("gcc", exc))
                    return v
                stage = "interp"
                try:
                    got = interpret(res.program, _copy_arrays(inputs))
                    mism = compare(expected, got)
                    if mism:
                        v.failures.append(_mismatch("interp", mism))
                except Exception as exc:  # noqa: BLE001
                    v.failures.append(_exc_failure("interp", exc))
                if seed == seeds[0]:
                    stage = "dataflow"
                    try:
                        diff = dataflow_difference(res.program)
                        if diff:
                            v.failures.append(Failure("dataflow", "mismatch", diff))
                    except Exception as exc:  # noqa: BLE001
                        v.failures.append(_exc_failure("dataflow", exc))
                stage = "dpn"
                for r in variants:
                    try:
                        out = simulate(r.network, _copy_arrays(inputs), seed=seed, tables=r.tables)
                        if out.deadlock is not None:
                            text = out.deadlock.format()
                            v.failures.append(Failure("dpn", "deadlock", text.splitlines()[1].strip()[:300]
                                                      if len(text.splitlines()) > 1 else text, "", text[-3000:]))
                        else:
                            mism = compare(expected, out.outputs)
                            if mism:
                                v.failures.append(_mismatch("dpn", mism))
                    except Exception as exc:  # noqa: BLE001
                        v.failures.append(_exc_failure("dpn", exc))
                    if v.failures:
                        break
                if v.failures:
                    return v
            if tile and tile != "none":
                stage = "tiled"
                try:
                    tres = run(Options(str(path), tile=tile, **({"local_words": local_words} if local_words else {})))
                    t = getattr(tres.network, "tiling", None)
                    v.tiling = (f"tiled {','.join(map(str, t.sizes))}" if t is not None and t.is_tiled
                                else "not tiled")
                    for seed in seeds:
                        inputs = random_inputs(tres.program, seed)
                        expected = _copy_arrays({k: x for k, x in inputs.items() if isinstance(x, np.ndarray)})
                        GccReference(tres.kernel).run({**inputs, **expected})
                        out = simulate(tres.network, _copy_arrays(inputs), seed=seed, tables=tres.tables)
                        if out.deadlock is not None:
                            text = out.deadlock.format()
                            v.failures.append(Failure("tiled", "deadlock", " ".join(text.split())[:300], "", text[-3000:]))
                        else:
                            mism = compare(expected, out.outputs)
                            if mism:
                                v.failures.append(_mismatch("tiled", mism))
                        if v.failures:
                            return v
                except Exception as exc:  # noqa: BLE001
                    v.failures.append(_exc_failure("tiled", exc))
                    return v
            if not rtl:
                return v
            if v.is_float and not rtl_float:
                v.rtl = "skipped: floating point (the RTL back end is integer-only)"
                return v
            stage = "rtl"
            from hls.rtl.generate import generate
            from sim.rtl_sim import run_rtl

            designs: dict[str, object] = {}
            for r in variants:
                try:
                    d = generate(r.network)
                except CompileError as exc:
                    if "floating" in str(exc).lower():
                        v.rtl = f"skipped: {exc.message}"
                        return v
                    v.failures.append(_exc_failure("rtl", exc))
                    v.rtl = "fail"
                    return v
                except Exception as exc:  # noqa: BLE001
                    v.failures.append(_exc_failure("rtl", exc))
                    v.rtl = "fail"
                    return v
                text = "".join(k + t for k, t in sorted(d.rtl.items()))
                designs.setdefault(hashlib.sha1(text.encode()).hexdigest()[:10], d)
            v.rtl_designs = len(designs)
            if len(designs) < rtl_min_designs:
                v.rtl = f"skipped: {len(designs)} distinct design(s) < {rtl_min_designs}"
                return v
            seed = seeds[0]
            inputs = random_inputs(res.program, seed)
            expected = _copy_arrays({k: x for k, x in inputs.items() if isinstance(x, np.ndarray)})
            GccReference(res.kernel).run({**inputs, **expected})
            own_tmp = None
            if workdir is None:
                own_tmp = tempfile.TemporaryDirectory(prefix="dpn-fuzz-rtl-")
                workdir = Path(own_tmp.name)
            try:
                for dkey, design in designs.items():
                    try:
                        out = run_rtl(design, _copy_arrays(inputs), Path(workdir) / f"rtl-{dkey}-{seed}",
                                      stall=stall, seed=seed, cache_root=cache_root)
                    except Exception as exc:  # noqa: BLE001
                        v.failures.append(_exc_failure("rtl", exc))
                        v.rtl = "fail"
                        return v
                    which = f" (design {dkey}, {len(designs)} distinct designs)" if len(designs) > 1 else ""
                    if not out.completed or out.problem:
                        problem = out.problem or "did not complete"
                        kind = "deadlock" if "deadlock" in problem else "incomplete"
                        v.failures.append(Failure("rtl", kind, problem[:300] + which, "", (out.log or "")[-3000:]))
                        v.rtl = "fail"
                        return v
                    mism = compare(expected, out.outputs)
                    if mism:
                        f = _mismatch("rtl", mism)
                        f.message += which
                        v.failures.append(f)
                        v.rtl = "fail"
                        return v
            finally:
                if own_tmp is not None:
                    own_tmp.cleanup()
            v.rtl = "pass"
            return v
    except FuzzTimeout:
        v.failures.append(Failure(stage, "timeout", f"no verdict within {timeout} s", "timeout"))
        return v
    finally:
        v.seconds = time.perf_counter() - t0


def check_source(text: str, *, workdir: Optional[Path] = None, **kw) -> Verdict:
    """Write `text` to a file (in `workdir`, else a temporary directory) and `check_file` it."""
    key = hashlib.sha1(text.encode()).hexdigest()[:12]
    if workdir is not None:
        Path(workdir).mkdir(parents=True, exist_ok=True)
        path = Path(workdir) / f"fuzz_{key}.c"
        path.write_text(text)
        return check_file(path, workdir=workdir, **kw)
    with tempfile.TemporaryDirectory(prefix="dpn-fuzz-") as tmp:
        path = Path(tmp) / f"fuzz_{key}.c"
        path.write_text(text)
        return check_file(path, workdir=Path(tmp), **kw)


def check_program(program, **kw) -> Verdict:
    """Render a generator `Program` and check it."""
    from .generator import layout, render

    lay = layout(program)
    v = check_source(render(program, lay), **kw)
    v.instances = lay.total
    return v


def check_seed(seed: int, config=None, **kw) -> Verdict:
    from .generator import GenConfig, generate

    return check_program(generate(seed, config or GenConfig()), seeds=kw.pop("seeds", (seed,)), **kw)


def verdicts_summary(verdicts: Iterable[Verdict]) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in verdicts:
        key = "pass" if v.ok else f"{v.first.stage}/{v.first.kind}"
        out[key] = out.get(key, 0) + 1
    return out
