"""What Aliasing's answers are made of, and how the passes after it read them: the ``Update``
Normalize marks an augmented assignment with, the ``Sharing`` the analysis answers for it, a
change of a container in place (``mutation``), the parameters a caller holds (``HELD``).

The invariant: these are plain records and predicates over them; nothing here analyses a
program (``aliasing.analyze`` does).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import anno
from .. import astlib as A
from .tables import MUTATING_METHODS

# --------------------------------------------------------------------------- what Normalize marks


@dataclass
class Update:
    """``y op= v`` as Normalize lowered it: ``target = operand op v`` (the statement carrying this
    in ``anno.AUG``). ``operand`` is the name whose value Python would change in place: ``y``,
    or for ``x[i] op= v`` the temporary holding ``x[i]`` (``container`` is ``x``: the new value
    is stored back into it)."""

    operand: str
    target: str
    op: str  # "+=", ...
    python_op: str  # "iadd", ...: the operator module's in-place function
    node: object  # the user's statement (an AugAssign), for messages
    line: int
    container: str | None = None
    name: str | None = None  # the user's variable, where it is rebound after ``target``
    # a change of ``operand``'s value in place that cpsad makes too (``xs.append(v)``,
    # ``d[k] = v``: ``op`` is ".append", "[]="): whoever else reads the value after it sees
    # the change, which the adjoints of ``operand``'s entries do not reach
    mutation: bool = False

    @property
    def text(self) -> str:
        return A.to_source(self.node).strip()


@dataclass
class Sharing:
    """Who may read, after an update, the value it changes (see the module docstring)."""

    names: list[str]  # variables visible at the update that may hold the value and are read later
    held: str | None  # a holder that cannot be named there, described; None if there is none
    must: list[str]  # of ``names``, those that surely hold the very same value (copies)
    # for Python's own in-place operation (``operator.iadd``), where no derivative can see it:
    confined: bool = False  # the value was made in this activation and never left it
    mentions: list = field(default_factory=list)  # statements naming a variable that may hold it
    # the parameters and globals that hold it only if the caller passed one array twice
    related: list = field(default_factory=list)


def mutation(s) -> Update | None:
    """``xs.append(v)`` (a method that changes its object) or ``d[k] = v`` / ``o.a = v`` on a
    name: the change in place, as an ``Update`` (``mutation``), or None."""
    if isinstance(s, A.Expr) and isinstance(s.value, A.Call):
        f = s.value.func
        if (
            isinstance(f, A.Attribute)
            and isinstance(f.value, A.Name)
            and f.attr in MUTATING_METHODS
            and anno.getanno(f, anno.CALLEE_KIND) == "method"
        ):
            name = f.value.id
            return Update(name, name, "." + f.attr, f.attr, s, s.lineno, mutation=True)
    if isinstance(s, A.Assign) and not anno.hasanno(s, anno.AUG):
        t = s.targets[0]
        if isinstance(t, (A.Subscript, A.Attribute)) and isinstance(t.value, A.Name):
            op = "[]=" if isinstance(t, A.Subscript) else ".="
            name = t.value.id
            return Update(name, name, op, "__setitem__", s, s.lineno, mutation=True)
    return None


HELD = "*held*"  # the key of the specialization (kinds) that names a callee's held parameters


def held_parameters(arg_kinds) -> frozenset:
    """The parameters whose values the caller may read after the call (``HELD`` in the
    specialization a unit is made for: ``("held:p", ...)``)."""
    return frozenset(h[5:] for h in (arg_kinds or {}).get(HELD, ()))


def held_entry(params) -> tuple:
    """The specialization's entry for ``params`` held by the caller (see ``held_parameters``)."""
    return (HELD, tuple(sorted(f"held:{p}" for p in params)))


def python_may_run_in_place(sharing: Sharing, stmt) -> bool:
    """May the update ``stmt`` (its ``Sharing`` computed before Activity) run as Python's own
    in-place operation? Where the value was made and stays in the function, the update's own
    value does not depend on the inputs, and no statement naming a variable that may hold it
    computes an active value: no derivative reads it, so changing it in place changes only what
    Python changes. (Read after Activity.)"""
    if not sharing.confined or anno.getanno(stmt, anno.ACTIVE) or anno.getanno(stmt, anno.VARIED):
        return False  # (varied: its value depends on the inputs, another name may carry it on)
    return not any(anno.getanno(st, anno.ACTIVE) for st in sharing.mentions)


def certain_refusal(sharing: Sharing, kind) -> str | None:
    """The alias that surely shares an array, for a refusal at the user's line when the value is
    surely an array (``kind`` from Kinds); else None (the run-time check decides)."""
    if sharing.must and kind and set(kind) <= {"array"}:
        return sharing.must[0]
    return None
