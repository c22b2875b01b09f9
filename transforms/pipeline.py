"""The pipeline: one declared list of passes, and the driver that runs it.

Each pass establishes one invariant (its module docstring says which) and no pass calls another.
The driver runs them in order, times them, can record each stage's program for ``cpsad show
--stage``, checks the invariants when asked (the tests do), and reports a failure inside a pass as
an internal error naming the pass and the user's line -- a ``TransformError`` goes to the user as
it is.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from .activity import Activity
from .callees import Callees
from .cps import LowerCPS
from .defunctionalize import Defunctionalize
from .desugar import Desugar
from .emit import Emit, render
from .errors import InternalError, TransformError
from .fence import Fence
from .flatten import Flatten
from .inline import Inline
from .joins import Joins
from .kinds import Kinds
from .nested import Nested
from .normalize import Normalize
from .parse import Parse
from .recursion import Recursion
from .release import Release
from .resolve import Resolve
from .shapes import Shapes
from .shift_reset import ShiftReset
from .simplify import Simplify
from .stacks import Stacks
from .tangent import Tangent
from .unit import Unit

PIPELINE = [
    (Parse, "read the function's source; lines and columns are the user's"),
    (Fence, "reject unsupported syntax with a TransformError at the user's line"),
    (Desugar, "loops, comprehensions and lambdas become local (recursive) functions"),
    (Nested, "a derivative of a function defined inside becomes its backpropagator, here"),
    (Resolve, "bind every called name to a real object: primitive, user function, ..."),
    (Inline, "replace calls of small helper functions by the expressions they compute"),
    (Normalize, "A-normal form: every operand a name or a constant, one operation a line"),
    (Activity, "mark what depends on the differentiated inputs and reaches the result"),
    (Shapes, "each name's shape, where the arguments' shapes prove it (staged at shapes only)"),
    (Kinds, "what each name may hold (number, numpy scalar, array), from the arguments' kinds"),
    (ShiftReset, "each active operation an explicit shift with its adjoint rule; entry a reset"),
    (LowerCPS, "shift/reset become plain closures: the rest of the block is the continuation"),
    (Simplify, "inline continuations used once; drop zero and dead adjoint code"),
    (Defunctionalize, "a loop's chain of continuations becomes a stack of frames, two while loops"),
    (Release, "each array is deleted after its last use: no dead intermediate stays alive"),
    (Emit, "Python source with the user's lines as comments"),
]

# Forward mode (jvp) shares the front end and the back end; in between, tangents travel with the
# values, so there are no continuations to introduce.
FORWARD = [
    *PIPELINE[: [c for c, _ in PIPELINE].index(ShiftReset)],
    (Tangent, "each active statement followed by its tangent; functions return (value, tangent)"),
    *[(c, w) for c, w in PIPELINE if c in (Simplify, Defunctionalize, Emit)],
]

# Staged for Numba (``cpsad.jit``): the reverse pipeline without Release (Numba compiles no
# ``del``, and frees what it made itself), flattened into one function before it is emitted.
_BEFORE_LOOPS = [c for c, _ in PIPELINE].index(Defunctionalize)

_CALLEES = (Callees, "the backpropagator of each user function it calls, defined in it")
STAGED = [
    *PIPELINE[:_BEFORE_LOOPS],
    _CALLEES,
    (Recursion, "a call of itself runs with the seed 1.0, its adjoints scaled afterwards"),
    (Joins, "an if's join, called from its branches, is inlined once after it"),
    *[(c, w) for c, w in PIPELINE[_BEFORE_LOOPS:] if c not in (Release, Emit)],
    (Flatten, "one flat function for Numba: continuations inlined, the seed a parameter"),
    (Stacks, "a counted loop's floats saved in buffers of its trip count, not lists"),
    PIPELINE[-1],
]

STAGED_FORWARD = [
    *[(c, w) for c, w in FORWARD if c not in (Defunctionalize, Emit)],
    _CALLEES,
    *[(c, w) for c, w in FORWARD if c is Defunctionalize],
    (Flatten, "one flat function for Numba: local functions inlined"),
    PIPELINE[-1],
]

STAGES = [cls.name for cls, _ in PIPELINE]
FORWARD_STAGES = [cls.name for cls, _ in FORWARD]


@dataclass
class Stage:
    name: str
    what: str
    source: str
    notes: list[str] = field(default_factory=list)


def run(
    unit: Unit,
    record: bool = False,
    check: bool = False,
    upto: str | None = None,
    skip=(),
    start: str | None = None,
):
    """Run the pipeline on ``unit``; return the recorded stages (empty unless ``record``).

    ``skip`` leaves out passes that only improve the program (the tests run the emitted code
    without Simplify to check that simplifying changes no gradient); ``start`` begins at a later
    stage, on a unit whose ``tree`` earlier stages already made.
    """
    stages: list[Stage] = []
    timings: dict[str, float] = {}
    if unit.mode == "forward":
        passes = STAGED_FORWARD if unit.staged else FORWARD
    else:
        passes = STAGED if unit.staged else PIPELINE
    names = [cls.name for cls, _ in passes]
    if upto is not None and upto not in names:
        raise ValueError(f"no stage {upto!r}; the stages are {', '.join(names)}")
    if start is not None:
        passes = passes[names.index(start) :]
    unit.derive = derive
    for cls, what in passes:
        if cls.name in skip:
            continue
        p = cls()
        t0 = time.perf_counter()
        try:
            p.run(unit)
            if check and hasattr(p, "check"):
                p.check(unit)
        except TransformError:
            raise
        except Exception as exc:  # a bug in cpsad: say where
            line = getattr(unit.tree, "lineno", None)
            where = f"{unit.source.filename}:{line}" if unit.source and line else "?"
            raise InternalError(
                f"cpsad failed in pass {p.name!r} on `{unit.fn.__qualname__}` ({where}): "
                f"{type(exc).__name__}: {exc}. This is a bug in cpsad; please report it with "
                "the function's source."
            ) from exc
        timings[p.name] = time.perf_counter() - t0
        if record:
            text = unit.text if p.name == "emit" else render(unit.tree, unit)
            stages.append(Stage(p.name, what, text, list(unit.notes.get(p.name, []))))
        if p.name == upto:
            break
    unit.timings = timings
    return stages


def derive(sub: Unit) -> None:
    """Reverse mode of a function met inside the one being transformed (``cpsad.grad(h)`` with
    ``h`` defined there): ``sub.tree`` is its definition, desugared; this runs the stages from
    Resolve through Simplify on it, leaving its backpropagator in ``sub.tree``. (The Nested pass
    asks for this through ``unit.derive``, so no pass calls another.)"""
    run(sub, start="resolve", upto="simplify")
