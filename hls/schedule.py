"""`schedule.svg` for `compile`: which network's cycle model is drawn (`hls/dpn/gantt.py`), and why.

The picture needs one more run of the cycle model with a recorder: the runs the pipeline made to
choose and deepen the network kept only their counts.  That run costs what the model costs on the
full-size network (tens of microseconds per statement instance: 14 s at 340k instances), so it is
made only up to `SCHEDULE_BELOW` instances, the size up to which the pipeline chooses at full size
and has already modelled the network many times (`reduced.REDUCE_ABOVE`): the compiled network is
then drawn, and its cycles are the estimate the report gives.  Above it, compile time does not grow
for the picture: when the network was chosen on a reduced instance (`timing["reduced_instance"]`),
that instance's schedule is drawn (its first `PICTURE_CYCLES` cycles at most), cheap and the same processes, and the title and notes say so and
how the estimate relates to it; otherwise the SVG says in text why there is no schedule.  A network
whose model did not finish (cut off, or no progress) is not modelled again either.
"""

from __future__ import annotations

from typing import Optional

from .dpn.gantt import message_svg, schedule_svg
from .dpn.network import ProcessNetwork
from .dpn.reduced import REDUCE_ABOVE
from .dpn.restrict import instance_count
from .dpn.tables import NetworkTables
from .dpn.timing import ScheduleRecorder, simulate_timing
from .pipeline import Compiled
from .rtl.generate import process_latencies, read_stages

SCHEDULE_BELOW = REDUCE_ABOVE  # statement instances up to which the compiled network is modelled again
#: Cycles of a reduced instance drawn at most: the recorded run is the Python model, whose cost grows
#: with the corner's cycles (lenet-c3's corner, 77k instances and 77,594 cycles: 0.8 s, 0.5 s with
#: the cap).  The first cycles show the pipelines filling and the steady state; the title says what
#: is drawn.
PICTURE_CYCLES = 20_000


def recorded_schedule(net: ProcessNetwork, tables: NetworkTables,
                      max_cycles: int = 10_000_000) -> ScheduleRecorder:
    """One run of the cycle model on `net` as the pipeline models it (its operand read policy,
    the datapath latencies at the current clock target), recorded."""
    rec = ScheduleRecorder()
    simulate_timing(net, tables, process_latencies(net), read_stage=read_stages(net) if net.late_reads else None,
                    max_cycles=max_cycles, recorder=rec)
    return rec


def _ran(rec: ScheduleRecorder) -> str:
    return f"{rec.cycles} cycles" if rec.cycles is not None else f"stopped after {rec.end} cycles"


def compiled_schedule_svg(res: Compiled) -> str:
    """The SVG `compile` writes as schedule.svg (module docstring)."""
    name = res.program.name
    timing = res.timing or {}
    estimate: Optional[int] = timing.get("estimated_cycles")
    instances = instance_count(res.program)
    reduced = timing.get("reduced_instance")
    if estimate is None:
        return message_svg(f"{name}: no schedule drawn", [
            "The cycle model did not finish for this network (it stopped making progress, or was cut off),",
            "so there is no schedule to draw; report.md has no cycle estimate either."])
    limit = 2 * estimate + 1000  # the run repeats the estimate's: the bound only guards against surprises
    if instances <= SCHEDULE_BELOW and res.tables is not None:
        rec = recorded_schedule(res.network, res.tables, max_cycles=limit)
        notes = [f"the compiled network, {instances} statement instances; cycle model of hls/dpn/timing.py "
                 f"(report.md: {estimate} cycles)"]
        return schedule_svg(rec, res.network, f"{name}: schedule of the compiled network, {_ran(rec)}", notes)
    if reduced is not None and res.reduced is not None:
        net, tables = res.reduced
        small = reduced.get("estimated_cycles")
        whole = 2 * (small or estimate) + 1000
        rec = recorded_schedule(net, tables, max_cycles=min(whole, PICTURE_CYCLES))
        ran = _ran(rec) if rec.cycles is not None or whole <= PICTURE_CYCLES else \
            f"its first {PICTURE_CYCLES} cycles (of {small})"
        small_work, full_work = reduced["busiest_iterations"]
        source = (f"this model's {small} cycles plus one per further iteration of the busiest process "
                  f"({full_work - small_work})")
        if "extrapolated_cycles" in timing:
            source = "one run of the cycle model on the full-size network"
        notes = [f"the reduced instance the network was chosen on: {reduced['instances']} of {instances} statement "
                 "instances (the corner of each tile band), the same processes;",
                 f"the compiled network's estimate in report.md, {estimate} cycles, is {source}; the full-size "
                 f"network is modelled again for this picture up to {SCHEDULE_BELOW} instances"]
        return schedule_svg(rec, net, f"{name}: schedule of the reduced instance, {ran}", notes)
    return message_svg(f"{name}: no schedule drawn", [
        f"The network runs {instances} statement instances: modelling it again for a picture would enumerate",
        f"every one (the schedule is drawn up to {SCHEDULE_BELOW}). The estimate in report.md is {estimate} cycles."])
