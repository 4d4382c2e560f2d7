"""The polyhedral model of a kernel: `PolyProgram`, the IR between the C frontend and the DPN.

Iteration domains, access relations and the original schedule are isl objects; expressions are
typed trees (`expr.py`).  Structure parameters are the kernel's integer scalar arguments: they stay
symbolic in `analyze` and are bound to integers (`bind_params`) before any hardware is built.

A `PolyProgram` is immutable; passes return new ones with `dataclasses.replace`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional

import islpy as isl

from ..diagnostics import SourceLoc
from . import isl_utils as iu
from .expr import Expr
from .types import ScalarType


@dataclass(frozen=True, eq=False)
class Access:
    """One array reference of a statement: `relation` maps each statement instance to the element."""

    id: str  # "S0.w" for the write, "S0.r<k>" for the k-th read
    statement: str
    array: str
    is_write: bool
    relation: isl.Map  # { S0[i, j] -> A[i, j + 1] }, domain restricted to the statement domain
    loc: SourceLoc
    text: str


@dataclass(frozen=True, eq=False)
class Statement:
    """An assignment `write = expr` executed once per point of `domain`."""

    name: str
    domain: isl.Set  # { S0[i, j] : ... }
    iterators: tuple[str, ...]
    write: Access
    reads: tuple[Access, ...]
    expr: Expr  # already converted to the written element's type
    loc: SourceLoc
    text: str

    @property
    def accesses(self) -> tuple[Access, ...]:
        return (self.write, *self.reads)

    def read(self, access_id: str) -> Access:
        for r in self.reads:
            if r.id == access_id:
                return r
        raise KeyError(access_id)


@dataclass(frozen=True, eq=False)
class Array:
    """An array of the kernel: an argument (`is_arg`, lives off-chip) or a local (scalars are 0-d)."""

    name: str
    type: ScalarType
    shape: tuple[str, ...]  # extent expressions, as written (after preprocessing)
    extent: isl.Set  # { A[i, j] : 0 <= i < N and 0 <= j < M }
    is_arg: bool
    loc: SourceLoc

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def bound_shape(self) -> tuple[int, ...]:
        """Elements per dimension once the parameters are bound (0 where the extent is not a
        constant): the row-major layout of the array in memory and in the testbench's data."""
        shape = []
        for d in range(self.extent.dim(isl.dim_type.set)):
            mx = iu.constant_value(self.extent.dim_max(d))
            shape.append(0 if mx is None else mx + 1)
        return tuple(shape)


@dataclass(frozen=True)
class Param:
    """An integer scalar argument of the kernel: a structure parameter of the polyhedral model."""

    name: str
    type: ScalarType
    loc: SourceLoc
    value: Optional[int] = None  # set once bound
    inferred: bool = False  # value chosen by dpn-synth, not given by the user


@dataclass(frozen=True)
class KernelArg:
    """A kernel argument in declaration order: 'param', 'scalar' (read-only value) or 'array'.

    `hoisted` marks a scalar that is not in the C signature but computed on the host from the real
    arguments (`PolyProgram.hoisted`): the hardware takes it like any scalar input, the C call does not."""

    name: str
    kind: str
    type: ScalarType
    loc: SourceLoc
    hoisted: bool = False


@dataclass(frozen=True)
class HoistedScalar:
    """A subexpression of the kernel that depends only on scalar arguments and constants.

    It is computed once, before start, by gcc from `c_text` (the original C, casts spelled with
    canonical types), so the value is bit-identical to the kernel's even for functions no datapath
    implements (`exp`, `pow`, ...); statements read it as the scalar argument `name`."""

    name: str
    expr: Expr  # the typed tree, for dumps; never evaluated in Python
    type: ScalarType  # C type of the subexpression, before any conversion its context applies
    loc: SourceLoc
    c_text: str  # C source evaluated on the host
    text: str  # as written in the kernel (for messages)
    inputs: tuple[str, ...]  # scalar arguments and parameters it reads, in declaration order


@dataclass(frozen=True, eq=False)
class Dependence:
    """Direct (flow) dependences from a writing statement to one read access of another statement."""

    source: str  # writing statement
    sink: str  # reading statement
    sink_access: str  # read access id
    relation: isl.Map  # { S_src[..] -> S_sink[..] }, a function of the sink (the source function inverted)


@dataclass(frozen=True, eq=False)
class DataFlow:
    """Exact array dataflow: who produces every value read, and which writes reach the outside."""

    dependences: tuple[Dependence, ...]
    live_in: Mapping[str, isl.Map]  # read access id -> { S[..] -> A[..] } reads of values from before the kernel
    live_out: Mapping[str, isl.Map]  # write access id -> { S[..] -> A[..] } final writes of argument arrays

    def into(self, access_id: str) -> tuple[Dependence, ...]:
        return tuple(d for d in self.dependences if d.sink_access == access_id)


@dataclass(frozen=True, eq=False)
class PolyProgram:
    """A kernel in the polyhedral model."""

    name: str  # the C function
    file: str
    loc: SourceLoc
    args: tuple[KernelArg, ...]
    params: tuple[Param, ...]
    context: isl.Set  # parameter values considered (bound values, or assumptions that keep accesses in bounds)
    arrays: Mapping[str, Array]
    statements: tuple[Statement, ...]
    schedule: isl.UnionMap  # original sequential order: statement instance -> time vector
    flow: Optional[DataFlow] = None
    notes: tuple[str, ...] = field(default=())
    hoisted: tuple[HoistedScalar, ...] = field(default=())  # also in `args` as scalars with `hoisted=True`

    def statement(self, name: str) -> Statement:
        for s in self.statements:
            if s.name == name:
                return s
        raise KeyError(name)

    def access(self, access_id: str) -> Access:
        return self.statement(access_id.split(".")[0]).read(access_id) if ".r" in access_id else self.statement(
            access_id.split(".")[0]
        ).write

    def statement_schedule(self, name: str) -> isl.Map:
        return isl.Map.from_union_map(self.schedule.intersect_domain(isl.UnionSet.from_set(self.statement(name).domain)))

    @property
    def is_bound(self) -> bool:
        return all(p.value is not None for p in self.params)

    @property
    def c_args(self) -> tuple[KernelArg, ...]:
        """The arguments of the C function (without hoisted scalars), and the array holding its result
        if it returns one (`frontend.returned`), which the reference fills."""
        return tuple(a for a in self.args if not a.hoisted)

    def param_values(self) -> dict[str, int]:
        return {p.name: p.value for p in self.params if p.value is not None}
