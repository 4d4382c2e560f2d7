"""The cycle model in C (`native_model`, `cycle_model.c`) against its specification, the Python model
(`timing.simulate_timing` with engine="python"): the same cycles, waits per channel, iterations issued
and issue checkpoints, on compiled networks at their sizes, FIFOs shallower (deadlocks included) and
deeper, operands read at issue and late, and wide read ports."""

import pytest

from hls.dpn import native_model
from hls.dpn.network import ChannelKind
from hls.dpn.tables import NetworkTables
from hls.dpn.timing import ScheduleRecorder, plan_of, simulate_timing
from hls.pipeline import Options, run
from hls.rtl.generate import process_latencies, read_stages
from tests.kernels import ROOT, example_params

pytestmark = pytest.mark.skipif(not native_model.available(), reason="gcc cannot build the native cycle model")

QUICK = ["gemm-int", "2mm", "fdtd-2d", "heat-3d", "lifting-53", "trisolv", "symm", "fir-int"]
WIDE = [("gemv-float", dict(parallel=4, mem_width=512)), ("mvt", dict(parallel=4, mem_width=512)),
        ("gemm-int", dict(parallel=4))]
EVERY = sorted(p.stem for p in (ROOT / "examples").glob("*.c"))


def _depths(net):
    """The network's own depths, then every FIFO halved (down to 1: some deadlock) and doubled."""
    fifos = [c for c in net.channels if c.kind != ChannelKind.BUFFER]
    yield None
    yield {c.name: max(1, c.depth // 2) for c in fifos}
    yield {c.name: 2 * c.depth for c in fifos}


def _agree(stem: str, **options) -> int:
    path = ROOT / "examples" / f"{stem}.c"
    net = run(Options(str(path), params=example_params(path), tile="auto", **options)).network
    tables = NetworkTables(net)
    lat = process_latencies(net)
    finished = 0
    for stages in (None, read_stages(net)):
        plan = plan_of(net, tables, stages)
        for depth in _depths(net):
            spec = simulate_timing(net, tables, lat, depth, plan=plan, engine="python")
            fast = simulate_timing(net, tables, lat, depth, plan=plan, engine="native")
            assert fast == spec, (stem, bool(stages), depth)
            finished += spec.cycles is not None
            # a cycle limit below the run stops both alike
            if spec.cycles:
                limit = spec.cycles // 2
                cut = simulate_timing(net, tables, lat, depth, plan=plan, max_cycles=limit, engine="native")
                assert cut == simulate_timing(net, tables, lat, depth, plan=plan, max_cycles=limit, engine="python")
                assert cut.cycles is None
    return finished


@pytest.mark.parametrize("stem", QUICK)
def test_native_model_is_the_python_model(stem):
    assert _agree(stem) >= 2  # the own depths finish, at issue and late


@pytest.mark.parametrize("stem,options", WIDE, ids=[f"{s}-p{o['parallel']}" for s, o in WIDE])
def test_native_model_with_wide_ports_and_parts(stem, options):
    assert _agree(stem, **options) >= 2


@pytest.mark.slow
@pytest.mark.parametrize("stem", [s for s in EVERY if s not in QUICK])
def test_native_model_on_every_example(stem):
    assert _agree(stem) >= 1


def test_recording_runs_the_python_model():
    """Only the Python model records; a recorded run gives the native run's figures."""
    path = ROOT / "examples" / "gemm-int.c"
    res = run(Options(str(path), params=example_params(path), tile="auto"))
    net, tables = res.network, NetworkTables(res.network)
    lat, stages = process_latencies(net), read_stages(net)
    rec = ScheduleRecorder()
    recorded = simulate_timing(net, tables, lat, read_stage=stages, recorder=rec)
    assert rec.cycles == recorded.cycles == simulate_timing(net, tables, lat, read_stage=stages).cycles
    assert recorded == simulate_timing(net, tables, lat, read_stage=stages, engine="native")
