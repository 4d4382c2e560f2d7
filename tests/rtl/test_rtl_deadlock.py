"""Deadlock reports of RTL runs: a design with one channel a word too small stops on the watchdog and
the report names every blocked process, what it waits for and every channel's fill level, like the
DPN simulator's (`hls.dpn.simulate.DeadlockReport.format`)."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest

from hls.cli import main
from hls.dpn.simulate import simulate
from hls.pipeline import Options, run
from hls.rtl.generate import generate
from sim.inputs import random_inputs
from sim.rtl_sim import deadlock_report, run_rtl
from tests.conftest import requires_iverilog
from tests.kernels import ROOT, cli_args, example_params

KERNEL = ROOT / "examples" / "gemm-int.c"  # C[i][j] accumulates along k in a FIFO from S1 to itself
WAIT = re.compile(r"^  (\S+) (?:at iteration \[[-\d, ]*\] )?waits (?:to (read|write) channel (\S+)|for memory (\S+))"
                  r"(?: \(if its iteration reads it\))?: (.+)$")
FILL = re.compile(r"(\S+) (\d+)/(\d+)")


@pytest.fixture(scope="module")
def compiled():
    return run(Options(str(KERNEL), params=example_params(KERNEL)))


def _accumulator(net):
    """The self-loop FIFO: one word less and its process blocks whatever the timing."""
    return next(c for c in net.channels if c.producer == c.consumer and c.kind.value == "fifo" and c.depth >= 2)


# words a channel holds beyond its depth in RTL: the FIFO's input register and consumer side and the
# producer's output buffer (hw_templates/fifo.v.j2, process.v.j2); a channel must be this much smaller
# to deadlock
EXTRA_WORDS = 5


def _cap(c) -> int:
    """What a channel's count reaches in the deadlock report: a FIFO's depth and its input register."""
    return c.depth + (0 if c.kind.value == "buffer" else 1)


def _short(res, acc) -> int:
    """One word less than the accumulator holds when the schedule is replayed, less the words the RTL
    keeps beyond a channel's depth: too small whatever the timing (`deepen` may have made the channel
    deeper than that, for throughput)."""
    seq = simulate(res.network, random_inputs(res.program, 0), order="schedule", tables=res.tables)
    short = seq.max_fill[acc.name] - 1 - EXTRA_WORDS
    assert short >= 1, seq.max_fill[acc.name]
    return short


def _shrunk(net, name: str, depth: int):
    return net.with_channels([replace(c, depth=depth) if c.name == name else c for c in net.channels], net.stage)


def _parse(report: str) -> tuple[list[tuple[str, str, str, str]], dict[str, tuple[int, int]]]:
    """(process, phase, channel or memory, detail) per wait line, and channel -> (fill, depth)."""
    lines = report.splitlines()
    assert lines[0].startswith("deadlock: no process can make progress"), report
    assert lines[-1].startswith("  channel fill levels: "), report
    waits = []
    for line in lines[1:-1]:
        m = WAIT.match(line)
        assert m, f"unexpected report line {line!r}"
        proc, phase, chan, mem, detail = m.groups()
        waits.append((proc, phase or "memory", chan or mem, detail))
    fills = {n: (int(u), int(d)) for n, u, d in FILL.findall(lines[-1].split(": ", 1)[1])}
    return waits, fills


def _check_consistent(waits, fills, net) -> None:
    """Every wait matches the network (who writes/reads what) and the fill levels it quotes."""
    for proc, phase, chan, detail in waits:
        if phase == "memory":
            assert net.process(proc).array == chan
            continue
        c = net.channel(chan)
        used, depth = fills[chan]
        if phase == "write":
            assert c.producer == proc
            if c.kind.value != "buffer":
                assert detail == f"full ({depth}/{depth})" and used == depth
        else:
            assert c.consumer == proc
            if c.kind.value == "fifo":
                assert detail == f"empty (0/{depth})" and used == 0


@pytest.mark.parametrize("simulator", ["verilator", pytest.param("icarus", marks=requires_iverilog)])
def test_undersized_channel_is_reported(compiled, simulator, rtl_cache, tmp_path):
    res = compiled
    acc = _accumulator(res.network)
    depth = _short(res, acc)
    inputs = random_inputs(res.program, 0)
    # The DPN simulator, replaying the schedule, blocks on exactly this channel too.
    dpn = simulate(res.network, inputs, order="schedule", capacities={acc.name: depth}, tables=res.tables)
    assert dpn.deadlock is not None and [b.channel for b in dpn.deadlock.blocked] == [acc.name]

    small = _shrunk(res.network, acc.name, depth)
    out = run_rtl(generate(small), inputs, tmp_path, cache_root=rtl_cache, simulator=simulator, quiet_limit=500)
    assert not out.completed
    assert out.deadlock is not None and out.problem == out.deadlock, out.problem or out.log[-2000:]
    report = out.deadlock
    # The full channel, at its depth, and the process that cannot write it.
    assert re.search(rf"^  {acc.producer} (?:at iteration \[[-\d, ]*\] )?waits to write channel {acc.name}: "
                     rf"full \({depth + 1}/{depth + 1}\)$", report, re.M), report
    waits, fills = _parse(report)
    assert fills[acc.name] == (depth + 1, depth + 1)
    assert fills == {c.name: (fills[c.name][0], _cap(c)) for c in small.channels}  # every channel, its capacity
    assert all(0 <= used <= cap for used, cap in fills.values())
    # Every unfinished process is named, with what it waits for, and no finished one is.
    assert {w[0] for w in waits} == set(out.unfinished) and acc.producer in out.unfinished
    _check_consistent(waits, fills, small)
    # Some process starves downstream of the blocked one (the store unit waits for results).
    assert any(phase == "read" for _, phase, _, _ in waits), report


def test_sim_command_prints_the_report(compiled, rtl_cache, monkeypatch, capsys):
    """`dpn-synth sim` on a deadlocking design: the report on stderr, in --json, exit status 1."""
    import hls.rtl.generate as gen
    import sim.rtl_runner

    acc = _accumulator(compiled.network)
    depth = _short(compiled, acc)
    real = gen.generate
    monkeypatch.setattr(gen, "generate", lambda net: real(_shrunk(net, acc.name, depth)))
    monkeypatch.setattr(sim.rtl_runner, "default_cache_root", lambda: rtl_cache)
    args = ["sim", str(KERNEL), *cli_args(KERNEL), "--tile", "none"]  # the untiled network the channel is from
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "deadlock: no process can make progress" in err
    assert re.search(rf"{acc.producer} at iteration \[[-\d, ]*\] waits to write channel {acc.name}: "
                     rf"full \({depth + 1}/{depth + 1}\)", err), err
    assert "channel fill levels:" in err and "Traceback" not in err
    assert main([*args, "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    assert d["ok"] is False and d["simulator"] == "verilator"
    assert f"waits to write channel {acc.name}: full" in d["deadlock"]


def test_report_decodes_every_kind_of_wait(compiled):
    """Decoding alone, on a hand-made status: buffer slots, a FIFO with multiplicity, memory, x bits."""
    layout = generate(compiled.network).interface["debug"]
    bits = ["0"] * layout["width"]

    def put(entry: dict, name: str, value: int) -> None:
        lsb, width = entry["fields"][name]
        for k in range(width):
            bits[len(bits) - 1 - (lsb + k)] = "1" if (value >> k) & 1 else "0"

    chans = {c["name"]: c for c in layout["channels"]}
    kind = {c["kind"]: c for c in layout["channels"]}
    procs = {p["name"]: p for p in layout["processes"]}
    buf, mult = kind["buffer"], kind["fifo_mult"]
    for name, p in procs.items():
        put(p, "finished", 0 if name in (buf["producer"], mult["consumer"], "STORE_C") else 1)
    put(buf, "w_valid", 1)
    put(buf, "count", buf["depth"])
    put(buf, "w_addr", 5)
    put(mult, "r_first", 0)
    put(mult, "count", 0)
    for c in chans.values():
        if c["kind"] == "fifo":
            put(c, "w_ready", 1)
    mem = next(m for m in layout["memories"] if m["name"] == "C")
    store = next(u for u in mem["units"] if u["kind"] == "store")
    put(store, "req_valid", 1)
    status = "".join(bits)
    # An unknown bit in a channel's count is shown as '?' rather than decoded.
    c3 = chans["c3"]
    lsb = c3["fields"]["count"][0]
    status = status[:len(status) - 1 - lsb] + "x" + status[len(status) - lsb:]
    sel = f"u_top.{mult['probes']['sel']}"
    report = deadlock_report(layout, {"status": status, "probes": {sel: None}}, cycles=100, quiet_cycles=60)
    lines = report.splitlines()
    assert lines[0] == "deadlock: no process can make progress (RTL: no handshake for 60 cycles, stopped at cycle 100)"
    assert (f"  {buf['producer']} waits to write channel {buf['name']}: slot 5 still holds a value "
            f"({buf['depth']}/{buf['depth']} slots full)") in lines
    assert (f"  {mult['consumer']} waits to read channel {mult['name']} (if its iteration reads it): "
            f"no value popped yet (0/{mult['depth'] + 1})") in lines
    assert "  STORE_C waits for memory C: write request not accepted" in lines
    assert "c3 ?/" in lines[-1]
    # Finished processes are not named.
    named = {line.split()[0] for line in lines[1:-1]}
    assert named == {buf["producer"], mult["consumer"], "STORE_C"}
