"""Forward substitution: a temporary used once, in the next statement, moves back into it.

Invariant: after a sweep of ``forward_substitute(f)``, no temporary of ``f``'s scope assigned and
read once remains where its one read is in the next statement that runs something (defs and
declarations between run nothing), unless moving it would change what runs first: a value that
calls something only moves to before every call of the statement it moves into, and not past a
read of a name a call made there may assign. The forward pass shows the user's expressions again
(``h = np.tanh(W @ x + b)``). Each substitution is recorded (``self.substituted``): the names it
moved are counted as before, in the same scope.

Tests: tests/test_simplify_rewrites.py, its case ``forward`` (the effect, with the rewrite and
without, and the gradient); tests/test_passes.py, ``test_simplify_straight_line_code_is_flat``.
"""

from __future__ import annotations

from .. import astlib as A
from .. import scoping as S
from ._common import _inert, statement_lists


class Forward:
    """Forward substitution (a mixin of ``Simplify``: its state is the driver's; ``_pure`` is
    dead stores')."""

    def forward_substitute(self, f) -> bool:
        """Every temporary assigned and read once, the read in the next statement that runs
        something: its value moves there. One sweep does a chain (``a = e; b = g(a)`` and
        then ``b``): a moved value's names are counted as before, in the same scope."""
        counts = self.facts[id(f)].assignments
        loads = self.facts[id(f)].reads
        changed = False
        temps, Assign, Name = self.namer.temps, A.Assign, A.Name
        for block in statement_lists(f):
            i = 0
            while i < len(block) - 1:
                s = block[i]
                # (the first tests of ``_substitute_forward``, here for speed: most fail them)
                if (
                    s.__class__ is Assign
                    and s.targets[0].__class__ is Name
                    and s.targets[0].id in temps
                    and self._substitute_forward(f, block, i, counts, loads)
                ):
                    changed = True  # block[i] is now the statement that received the value
                else:
                    i += 1
        return changed

    def _substitute_forward(self, f, block, i, counts, loads) -> bool:
        s = block[i]
        if not (isinstance(s, A.Assign) and isinstance(s.targets[0], A.Name)):
            return False
        t = s.targets[0].id
        if t not in self.namer.temps or counts.get(t) != 1 or loads.get(t) != 1:
            return False
        j = i + 1
        while j < len(block) - 1 and _inert(block[j]):
            j += 1  # a def runs nothing: the temporary can move past it
        nxt = block[j]
        where = nxt.test if isinstance(nxt, A.If) else nxt
        if isinstance(nxt, (A.FunctionDef, A.Nonlocal)):
            return False
        uses = [
            n
            for n in S.walk_own(where)
            if isinstance(n, A.Name) and n.id == t and isinstance(n.ctx, A.Load)
        ]
        if len(uses) != 1:
            return False
        pure = self._pure(s.value)
        if not (pure or _first_effect_is(where, uses[0])):
            return False
        if not pure and _read_before(where, uses[0]) & self._written_by_calls(f):
            return False  # `a = acc(a, k(x))` would read `a` before the call that adds to it
        A.replace(nxt, uses[0], A.deepcopy(s.value))
        del block[i]
        self.substituted.append((f, t))
        return True

    def _written_by_calls(self, f) -> set[str]:
        """Names of ``f``'s scope a call made in it may assign: those it declares ``nonlocal``
        (a continuation it calls may add to them) and those its closures assign."""
        fa = self.facts[id(f)]
        out = set(fa.declared)
        for g in fa.nested:
            out |= self.facts[id(g)].writes
        return out


def _read_before(stmt, use) -> set[str]:
    """The names ``stmt`` reads before it evaluates ``use`` (Python's order of evaluation)."""
    out: set[str] = set()

    def visit(node) -> bool:
        fields = list(A.iter_child_nodes(node))
        if isinstance(node, A.Assign):  # the value is evaluated before the targets
            fields = [node.value, *node.targets]
        for child in fields:
            if child is use:
                return True
            if isinstance(child, A.Name) and isinstance(child.ctx, A.Load):
                out.add(child.id)
            elif visit(child):
                return True
        return False

    visit(stmt)
    visit = (
        None  # (it calls itself: a reference cycle, which kept the tree alive until a collection)
    )
    return out


def _first_effect_is(stmt, use) -> bool:
    """Is ``use`` evaluated before any call in ``stmt`` happens? (Then a call may move into it.)"""

    def visit(node):
        fields = list(A.iter_child_nodes(node))
        if isinstance(node, A.Assign):  # the value is evaluated before the targets
            fields = [node.value, *node.targets]
        for child in fields:
            if child is use:
                return "use"
            r = visit(child)
            if r:
                return r
        return "call" if isinstance(node, A.Call) else None

    try:
        return visit(stmt) == "use"
    finally:
        visit = None  # (it calls itself: a reference cycle, which kept the tree alive until a collection)
