"""Negations: a negated value that is a product or quotient of a negation loses both signs.

Invariant: after ``cancel_negations(f)``, no statement ``t = -n`` of ``f``'s own scope remains
whose sign could cancel: one where ``n`` is assigned and read once there, by the statement right
before, and the sign, pushed down the operands of ``*`` and ``/`` in ``n``'s value -- and through
names assigned and read once the same way, each by the statement right before the last one
taken, with values of names, constants and operators only -- reaches a negation or a float
constant. There the two signs cancel, and the statements that only carried the sign are gone.
The sigmoid's adjoint, ``exp_bar = -i_bar * i / add; neg_bar = exp_bar * exp; add_bar =
-neg_bar``, becomes ``add_bar = i_bar * i / add * exp``: two negations fewer a use, each an
array operation.

Every step is exact: rounding to nearest is symmetric, so ``-(x * y)`` is ``(-x) * y`` and
``-(x / y)`` is ``(-x) / y`` bit for bit (a NaN's sign aside), and ``-(-x)`` is ``x``. The names
read are read in the same order, and nothing between the statements taken assigns them (each
assigns only a name read once, by the next). Only ``n``'s value may call something: it is
evaluated where it was; the values moved into it call nothing, and where ``n``'s value calls
something, read no name a call made in ``f`` may assign (a continuation adds to adjoints ``f``
declares ``nonlocal``).

Tests: tests/test_simplify_rewrites.py, its case ``negations`` (the effect, with the rewrite and
without, and the gradient), and ``test_negations_cancel_exactly`` (the same bits, on the
sigmoid's chain and on chains the rewrite leaves alone).
"""

from __future__ import annotations

from .. import astlib as A
from .. import scoping as S
from ._common import statement_lists


class Negations:
    """Cancelling negations (a mixin of ``Simplify``: its state is the driver's, whose scope facts
    must be current: it runs once, after the rounds of the other rewrites reach their fixed
    point)."""

    def cancel_negations(self, f) -> bool:
        """Rewrite every ``t = -n`` of ``f`` whose sign cancels (see the module); say whether
        any was. The facts of the names taken out are left as they were: nothing reads them
        after this rewrite."""
        fa = self.facts[id(f)]

        def once(name: str) -> bool:
            return (
                fa.assignments.get(name) == 1
                and fa.reads.get(name) == 1
                and name in fa.local
                and name not in fa.declared
                and name not in fa.params
            )

        written = None

        def written_by_calls() -> set:
            nonlocal written
            if written is None:
                written = self._written_by_calls(f)
            return written

        changed = False
        for block in statement_lists(f):
            j = 1
            while j < len(block):
                value = _negated_name(block[j])
                if value is not None:
                    push = _Push(block, j, once, written_by_calls)
                    pushed = push.into(value.operand)
                    if pushed is not None:
                        block[j].value = pushed
                        del block[push.front : j]
                        j = push.front
                        changed = True
                j += 1
        return changed


def _negated_name(stmt):
    """The value ``-n`` of ``stmt``, a statement ``t = -n`` (one name target); else None."""
    if stmt.__class__ is not A.Assign or len(stmt.targets) != 1:
        return None
    if stmt.targets[0].__class__ is not A.Name:
        return None
    v = stmt.value
    if v.__class__ is A.UnaryOp and v.op.__class__ is A.USub and v.operand.__class__ is A.Name:
        return v
    return None


class _Push:
    """The sign of ``block[j]``'s value pushed into the values of the statements right above it:
    ``front`` is the first statement taken (``j`` while none is)."""

    def __init__(self, block: list, j: int, once, written):
        self.block, self.j, self.front, self.once = block, j, j, once
        self.written = written  # () -> the names a call made in the function may assign
        self.calls = False  # the first value taken (``n``'s) calls something

    def into(self, node):
        """``-node`` with a sign cancelled inside it (``node`` is changed in place), or None
        (then nothing was changed and nothing taken)."""
        cls = node.__class__
        if cls is A.UnaryOp and node.op.__class__ is A.USub:
            return node.operand
        if cls is A.Constant and type(node.value) is float:
            return A.const(-node.value)
        if cls is A.BinOp and node.op.__class__ in (A.Mult, A.Div):
            for side in ("left", "right"):
                pushed = self.into(getattr(node, side))
                if pushed is not None:
                    setattr(node, side, pushed)
                    return node
            return None
        if cls is A.Name and self.front > 0:
            return self._through(node.id)
        return None

    def _through(self, name: str):
        """``-name``'s sign pushed into the value of the statement right above the first one
        taken, where that statement assigns ``name`` (and may be taken: see the module)."""
        above = self.block[self.front - 1]
        if not (
            above.__class__ is A.Assign
            and len(above.targets) == 1
            and above.targets[0].__class__ is A.Name
            and above.targets[0].id == name
            and self.once(name)
        ):
            return None
        first = self.front == self.j
        if first:
            self.calls = not _arithmetic(above.value)
        elif not _arithmetic(above.value) or (self.calls and S.loads(above.value) & self.written()):
            return None
        self.front -= 1
        pushed = self.into(above.value)
        if pushed is None:
            self.front += 1
        return pushed


_ARITHMETIC = (A.Name, A.Constant, A.BinOp, A.UnaryOp)


def _arithmetic(value) -> bool:
    """Only names, constants and operators: nothing is called, no attribute or item read
    (moving it later runs nothing else first)."""
    return all(isinstance(n, _ARITHMETIC) for n in A.walk_nodes(value))
