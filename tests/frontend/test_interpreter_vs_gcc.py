"""The polyhedral model, executed by the reference interpreter, equals gcc on the user's own C."""

from __future__ import annotations

import numpy as np
import pytest

from hls.frontend import load_kernel
from hls.poly.interpret import interpret
from sim.gcc_ref import GccReference
from sim.inputs import compare, random_inputs
from tests.kernels import EXAMPLES, POLYBENCH_FLAGS, POLYBENCH_KERNELS, example_params, ids


def _check(path: str, *, params=None, include_dirs=(), defines=(), seed: int = 1) -> None:
    kernel, program = load_kernel(path, include_dirs=include_dirs, defines=defines, params=params or {})
    inputs = random_inputs(program, seed)
    got = interpret(program, inputs)
    expected = {k: np.array(v, copy=True) for k, v in inputs.items() if isinstance(v, np.ndarray)}
    GccReference(kernel).run({**inputs, **expected})
    assert expected.keys() == got.keys()
    mism = compare(expected, got)
    assert not mism, f"{len(mism)} mismatches, first: {mism[0]}"
    # The kernel must actually have computed something: some output differs from its input.
    assert any(not np.array_equal(inputs[k], got[k], equal_nan=True) for k in got), "kernel changed nothing"


@pytest.mark.parametrize("path", EXAMPLES, ids=ids(EXAMPLES))
def test_example_interpreter_matches_gcc(path):
    _check(str(path), params=example_params(path))


@pytest.mark.parametrize("path", POLYBENCH_KERNELS, ids=ids(POLYBENCH_KERNELS))
def test_polybench_lookalike_interpreter_matches_gcc(path):
    inc, defs = POLYBENCH_FLAGS[1], [POLYBENCH_FLAGS[2][2:], POLYBENCH_FLAGS[3][2:]]
    if path.stem == "floyd-warshall":
        defs.append("N=20")  # MINI is 60: 216k instances, slow in a Python interpreter
    params = {"tsteps": 4} if path.parent.parent.name == "stencils" else {}
    _check(str(path), include_dirs=[inc], defines=defs, params=params)


def test_interpreter_detects_a_wrong_model(tmp_path):
    """The comparison can fail: a program whose model differs from the C (here: mutated) is caught."""
    src = tmp_path / "k.c"
    src.write_text("void k(double A[8], double B[8]) {\n#pragma scop\n for (int i = 1; i < 8; i++)\n"
                   "  B[i] = A[i] - A[i-1];\n#pragma endscop\n}\n")
    kernel, program = load_kernel(str(src))
    inputs = random_inputs(program, 0)
    got = interpret(program, inputs)
    expected = {k: np.array(v, copy=True) for k, v in inputs.items() if isinstance(v, np.ndarray)}
    GccReference(kernel).run({**inputs, **expected})
    assert not compare(expected, got)
    got["B"][3] += 1.0
    assert [str(m).split(":")[0] for m in compare(expected, got)] == ["B[3]"]
