"""The structural invariants of every network the passes build (`ProcessNetwork.verify`): each channel
joins instances of its two processes, and no consumer instance has two sources.  The passes do not ask
it themselves (it was a tenth of a large compile), so these tests ask it of every candidate network a
compile builds: partitioned (`build_network`) and merged (`merge_processes`), untiled, tiled, in
parallel parts with their own load units, in slabs and merged."""

from __future__ import annotations

import islpy as isl
import pytest

from hls import pipeline
from hls.dpn.network import replace
from hls.pipeline import Options, run
from tests.kernels import ROOT, example_params

CASES = [
    ("atax", dict(tile="none")),
    ("gemm", dict(tile="auto")),  # merged
    ("fir-int", dict(tile="auto")),  # slabs
    ("jacobi-2d", dict(tile="auto")),  # skewed bands: loads with many-piece schedules
    ("gemm", dict(tile="auto", parallel=2, read_ports="per-part")),  # parallel parts, a load unit per part
]


@pytest.mark.parametrize("name,kw", CASES, ids=[f"{c[0]}-{c[1].get('parallel', 1)}" for c in CASES])
def test_every_built_network_keeps_its_invariants(name, kw, monkeypatch):
    built: list[str] = []

    def checked(fn, what):
        def wrapper(*a, **k):
            net = fn(*a, **k)
            net.verify()
            built.append(what)
            return net
        return wrapper

    monkeypatch.setattr(pipeline, "build_network", checked(pipeline.build_network, "partition"))
    monkeypatch.setattr(pipeline, "merge_processes", checked(pipeline.merge_processes, "merge"))
    path = ROOT / "examples" / f"{name}.c"
    res = run(Options(str(path), params=example_params(path), **kw))
    assert res.network is not None
    res.network.verify()
    assert "partition" in built and "merge" in built


def test_verify_rejects_a_channel_into_instances_its_consumer_does_not_run():
    """The check can fail: a channel whose relation reaches past its consumer's domain is refused."""
    path = ROOT / "examples" / "gemm.c"
    net = run(Options(str(path), params=example_params(path), tile="none")).network
    net.verify()
    c = next(c for c in net.channels if not c.relation.is_empty())
    space = c.relation.get_space()
    shifted = c.relation.apply_range(_shift_out(space))
    broken = net.with_channels([replace(x, relation=shifted) if x.name == c.name else x for x in net.channels],
                               net.stage)
    with pytest.raises(AssertionError):
        broken.verify()


def _shift_out(space: isl.Space) -> isl.Map:
    """{ y -> y + (10^6, 0, ...) }: a consumer instance far outside any domain."""
    n = space.dim(isl.dim_type.out)
    names = [f"y{k}" for k in range(n)]
    name = space.get_tuple_name(isl.dim_type.out)
    target = [f"{names[0]} + 1000000", *names[1:]]
    return isl.Map(f"{{ {name}[{', '.join(names)}] -> {name}[{', '.join(target)}] }}")
