"""The simulation memory model template: lint cleanliness, plusarg configuration, behaviour.

Every simulation here runs on ONE Verilator build: latencies, interval, stall and seed are plusargs
read at time 0, so each configuration is just another run of the same executable (and
`run_cocotb(plusargs=...)` gets its own test on the way).
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from hls.rtl.render import render_to_file
from sim.rtl_runner import SimBuild, build_verilator, lint_verilator, run_cocotb
from tests.rtl.cocotb_mem_model import parse_memh

TOP = "dpn_mem_model"
NAME = "A"  # the array name in the plusargs: +A_latency=, +A_init=, ...
COCOTB_MODULE = "tests.rtl.cocotb_mem_model"
SIM_TIMEOUT_S = 120.0
WIDTH, AW, DEPTH = 36, 6, 50  # > 32 bits, and addresses beyond DEPTH exist
QUEUE = 256  # the template's default QUEUE parameter


@pytest.fixture(scope="session")
def mem_build(tmp_path_factory: pytest.TempPathFactory, rtl_cache: Path) -> SimBuild:
    src = render_to_file(
        tmp_path_factory.mktemp("mem_src") / f"{TOP}.v", "mem_model.v.j2",
        module_name=TOP, name=NAME, width=WIDTH, addr_width=AW, depth=DEPTH,
    )
    return build_verilator([src], TOP, cache_root=rtl_cache)


def _write_init(path: Path, rng: random.Random) -> dict[int, int]:
    """A $readmemh file with a comment and an @address jump, as the model must accept."""
    words = {a: rng.getrandbits(WIDTH) for a in range(DEPTH)}
    half = DEPTH // 2
    lines = ["// initial contents of A"]
    lines += [f"{words[a]:09x}" for a in range(half)]
    lines.append(f"@{half:x}")
    lines += [f"{words[a]:x}" for a in range(half, DEPTH)]
    path.write_text("\n".join(lines) + "\n")
    return words


def _run(build: SimBuild, tmp_path: Path, config: dict[str, int], init: bool, **kwargs):
    """Run the testbench with *config* as plusargs (absent keys: the model's defaults)."""
    rng = random.Random(1234)
    plusargs = {f"{NAME}_{k}": str(v) for k, v in config.items() if k in ("latency", "write_latency", "interval")}
    plusargs |= {k: str(v) for k, v in config.items() if k in ("stall", "seed")}
    init_file = tmp_path / "init A.hex"  # a blank in the path on purpose
    if init:
        _write_init(init_file, rng)
        plusargs[f"{NAME}_init"] = str(init_file)
    dump_file = tmp_path / "dump A.hex"
    plusargs[f"{NAME}_dump"] = str(dump_file)
    expected = tmp_path / "expected.json"
    env = {
        "MEM_WIDTH": str(WIDTH), "MEM_DEPTH": str(DEPTH), "MEM_AW": str(AW), "MEM_QUEUE": str(QUEUE),
        "MEM_LATENCY": str(config.get("latency", "")), "MEM_WRITE_LATENCY": str(config.get("write_latency", "")),
        "MEM_INTERVAL": str(config.get("interval", "")),
        "MEM_STALL": str(config.get("stall", "")), "MEM_CYCLES": "3000",
        "MEM_INIT": str(init_file) if init else "", "MEM_DUMP": str(dump_file),
        "MEM_EXPECTED_JSON": str(expected), "MEM_PLUSARGS": json.dumps(plusargs),
    }
    result = run_cocotb(
        build, COCOTB_MODULE, test_dir=tmp_path / "sim", extra_env=env, timeout_s=SIM_TIMEOUT_S,
        # cocotb would seed Python's `random` from +seed (with a warning); give it its own seed.
        seed=random.randrange(2**31),
        plusargs=[f"+{k}={v}" for k, v in plusargs.items()],
        **kwargs,
    )
    return result, dump_file, expected


# (id, plusargs, with an init file).  One build; each case is a separate simulator run.
SIM_CASES = [
    ("defaults", {}, True),  # no timing plusargs at all: latency 4, interval 1, stall 0
    ("lat1", {"latency": 1, "interval": 1, "stall": 0}, True),
    ("lat3_stall100", {"latency": 3, "stall": 100, "seed": 7}, True),
    ("lat1_wlat9_stall300", {"latency": 1, "write_latency": 9, "stall": 300, "seed": 3}, True),
    ("lat7_int3_stall250", {"latency": 7, "interval": 3, "stall": 250, "seed": 5}, True),
    ("lat2_int2_stall600_noinit", {"latency": 2, "interval": 2, "stall": 600, "seed": 99}, False),
]


@pytest.mark.parametrize(("config", "init"), [c[1:] for c in SIM_CASES], ids=[c[0] for c in SIM_CASES])
def test_mem_model_simulation(config: dict[str, int], init: bool, mem_build: SimBuild, tmp_path: Path) -> None:
    result, dump_file, expected = _run(mem_build, tmp_path, config, init)
    assert result.ok, result.summary()
    assert result.passed == 2
    # The $writememh file, read back here: one hex word of ceil(WIDTH/4) digits per address.
    text = dump_file.read_text()
    tokens = [t for line in text.splitlines() for t in line.split("//", 1)[0].split()]
    assert all(re.fullmatch(r"[0-9a-fA-F]{9}", t) for t in tokens if not t.startswith("@")), text[:500]
    want = {int(a): v for a, v in json.loads(expected.read_text()).items()}
    assert len(want) == DEPTH
    assert parse_memh(text) == want
    # The out-of-range request of the testbench was reported.
    assert f"outside 0..{DEPTH - 1}" in result.log_file.read_text()


def test_run_cocotb_passes_plusargs(mem_build: SimBuild, tmp_path: Path) -> None:
    """`run_cocotb(plusargs=...)` puts them on the simulator command line, verbatim."""
    config = {"latency": 9, "write_latency": 6, "interval": 2, "stall": 5}
    test_dir = tmp_path / "sim"
    plusargs = {f"{NAME}_latency": "9", f"{NAME}_write_latency": "6", f"{NAME}_interval": "2", "stall": "5",
                "note": "a b=c"}
    env = {
        "MEM_WIDTH": str(WIDTH), "MEM_DEPTH": str(DEPTH), "MEM_AW": str(AW), "MEM_QUEUE": str(QUEUE),
        "MEM_LATENCY": str(config["latency"]), "MEM_WRITE_LATENCY": str(config["write_latency"]),
        "MEM_INTERVAL": str(config["interval"]), "MEM_STALL": str(config["stall"]),
        "MEM_PLUSARGS": json.dumps(plusargs),
    }
    result = run_cocotb(
        mem_build, COCOTB_MODULE, test_dir=test_dir, extra_env=env, timeout_s=SIM_TIMEOUT_S,
        testcase="plusargs_reach_simulator", plusargs=[f"+{k}={v}" for k, v in plusargs.items()],
    )
    assert result.ok and result.passed == 1, result.summary()
    # Without the argument: no plusargs, the model's defaults.
    env.update(MEM_LATENCY="4", MEM_WRITE_LATENCY="4", MEM_INTERVAL="1", MEM_STALL="0", MEM_PLUSARGS="{}")
    result = run_cocotb(
        mem_build, COCOTB_MODULE, test_dir=tmp_path / "sim2", extra_env=env, timeout_s=SIM_TIMEOUT_S,
        testcase="plusargs_reach_simulator",
    )
    assert result.ok and result.passed == 1, result.summary()


def test_mem_model_rejects_bad_latency(mem_build: SimBuild, tmp_path: Path) -> None:
    """LATENCY or WRITE_LATENCY outside 1..QUEUE-2 stops the simulation at time 0 with an error."""
    for which, latency in (("latency", 0), ("latency", QUEUE - 1), ("write_latency", 0)):
        result = run_cocotb(
            mem_build, COCOTB_MODULE, test_dir=tmp_path / f"sim{which}{latency}",
            extra_env={"MEM_PLUSARGS": "{}"}, timeout_s=SIM_TIMEOUT_S,
            testcase="plusargs_reach_simulator", plusargs=[f"+{NAME}_{which}={latency}"],
        )
        assert not result.ok
        assert f"+{NAME}_{which}={latency} is outside 1..{QUEUE - 2}" in result.log_file.read_text()


# --------------------------------------------------------------------------------------------------
# lint


@pytest.mark.parametrize(("width", "depth", "addr_width"), [
    (1, 1, 1), (8, 2, 1), (32, 3, 2), (64, 17, 5), (32, 16, 4), (16, 17, 8), (8, 4, 1),
])
def test_mem_model_lint_clean(width: int, depth: int, addr_width: int, tmp_path: Path) -> None:
    name = f"mem_w{width}_d{depth}_a{addr_width}"
    src = render_to_file(
        tmp_path / f"{name}.v", "mem_model.v.j2",
        module_name=name, name="B", width=width, addr_width=addr_width, depth=depth,
    )
    assert lint_verilator([src], name) == []
    # The same source with the sizes overridden at elaboration.
    other = render_to_file(
        tmp_path / "other" / f"{TOP}.v", "mem_model.v.j2",
        module_name=TOP, name=NAME, width=WIDTH, addr_width=AW, depth=DEPTH,
    )
    params = {"WIDTH": width, "DEPTH": depth, "AW": addr_width, "QUEUE": 5 + depth}
    assert lint_verilator([other], TOP, parameters=params) == []


@pytest.mark.parametrize(("width", "depth", "line"), [(32, 10, 4), (8, 3, 64), (64, 64, 8)])
def test_wide_read_port_lint_clean(width: int, depth: int, line: int, tmp_path: Path) -> None:
    """A read channel of lines (`LINE` words, `RAW` address bits: hls/dpn/memports.py), an array smaller
    than one line included."""
    name = f"mem_w{width}_d{depth}_l{line}"
    addr_width = max(1, (depth - 1).bit_length())
    raw = max(1, (-(-depth // line) - 1).bit_length())
    src = render_to_file(tmp_path / f"{name}.v", "mem_model.v.j2", module_name=name, name="B", width=width,
                         addr_width=addr_width, depth=depth, line=line, read_addr_width=raw)
    assert lint_verilator([src], name) == []
