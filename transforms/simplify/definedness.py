"""Definedness: code for an adjoint whose state is known is specialized by it.

Invariant: where an adjoint is known to be absent (``None``), still ``0.0`` or present at a
point, no guard this transformation made for it remains there: ``acc(x_bar, e)`` is ``e`` or
``x_bar + e``, ``x_bar if x_bar is not None else zeros_like(x)`` is one side, and ``if y_bar is
not None:`` around a shift's rules is its body or nothing. What remains depends on the path taken.
Each name taken out is counted (``_count_removed``), so the driver can bring the facts up to date
without a walk of the tree.

Tests: tests/test_simplify_rewrites.py, its case ``definedness`` (the effect, with the rewrite and
without, and the gradient); tests/test_passes.py,
``test_simplify_keeps_the_join_and_nothing_else``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import anno
from .. import astlib as A
from .. import scoping as S
from ._common import MAYBE, NONE, SET, ZERO

if TYPE_CHECKING:
    from . import Simplify


def _is_none(node) -> bool:
    return isinstance(node, A.Constant) and node.value is None


def _skip_guard(s):
    """``y_bar`` of ``if y_bar is not None:`` that cps put around a shift's rules, else None."""
    if not (isinstance(s, A.If) and anno.getanno(s, anno.GUARD)):
        return None
    t = s.test
    return t.left.id if isinstance(t, A.Compare) and isinstance(t.left, A.Name) else None


def _is_acc(node, acc: str) -> bool:
    """``acc(x_bar, e)`` as this transformation made it (a guard)."""
    return (
        isinstance(node, A.Call)
        and A.is_name(node.func, acc)
        and len(node.args) == 2
        and bool(anno.getanno(node, anno.GUARD))
    )


def _is_zero(node) -> bool:
    return isinstance(node, A.Constant) and type(node.value) is float and node.value == 0.0


_VALUED = (A.Assign, A.AugAssign, A.Return, A.Expr)  # statements whose value may hold a guard
_LOOKED_INTO = (A.Call, A.IfExp, A.Tuple)  # what ``_Rewrite`` looks into (or rewrites)


def _join(a: dict, b: dict) -> dict:
    out = {}
    for k in set(a) | set(b):
        x, y = a.get(k), b.get(k)
        if x == y:
            out[k] = x
        elif {x, y} == {ZERO, SET}:
            out[k] = SET  # present either way
        else:
            out[k] = MAYBE
    return out


class Definedness:
    """What is known of each adjoint, flowing forward through a function (a mixin of
    ``Simplify``: its state is the driver's)."""

    def definedness(self, f) -> None:
        state = {p: SET for p in A.arg_names(f.args)}
        state.update(self._never_none(f))
        self._flow(f, f.body, state, rewrite=True)

    def _never_none(self, f) -> dict:
        """Borrowed adjoints of Python numbers: ``0.0`` or more, never absent."""
        declared = self.facts[id(f)].declared if id(f) in self.facts else set()
        return {n: SET for n in declared if n in self.unit.never_none}

    def _definite_writes(self, g) -> set[str]:
        """Borrowed names every run of ``g`` assigns (a continuation runs exactly once)."""
        cached = self._definite.get(id(g))
        if cached is None:
            state = {p: SET for p in A.arg_names(g.args)}
            state.update(self._never_none(g))
            end = self._flow(g, g.body, state, rewrite=False)
            declared = self.facts[id(g)].declared
            cached = self._definite[id(g)] = {w for w in declared if end.get(w) == SET}
        return cached

    def _flow(self, f, block, state, rewrite: bool) -> dict:
        _, writes = self.effects
        nested = {g.name: g for g in self.facts[id(f)].nested}
        closures = set(writes)
        rewriter = _Rewrite(self, state, f)  # (one for the block: its state is set before use)
        i = 0
        while i < len(block):
            s = block[i]
            i += 1
            cls = s.__class__
            if cls is A.FunctionDef:
                continue
            skip = _skip_guard(s) if cls is A.If else None  # (for speed: only an ``if`` is one)
            if skip is not None and state.get(skip, MAYBE) != MAYBE:
                # ``if y_bar is not None:`` (cps) where it is known: its body, or nothing
                if rewrite:
                    i -= 1
                    if state[skip] != NONE:
                        block[i : i + 1] = s.body
                        self._count_removed(f, s.test)
                    else:
                        del block[i]
                        self._count_removed(f, s)
                elif state[skip] != NONE:
                    state = self._flow(f, s.body, state, rewrite)
                continue
            if isinstance(s, A.If):
                inner = dict(state)
                if skip is not None:
                    inner[skip] = SET
                a = self._flow(f, s.body, inner, rewrite)
                b = self._flow(f, s.orelse, dict(state), rewrite)
                state = _join(a, b)
                continue
            if rewrite and cls in _VALUED and s.value.__class__ in _LOOKED_INTO:
                rewriter.state = state
                s.value = rewriter.visit(s.value)
            if closures:  # (for speed: without closures, a statement's names are not asked)
                self._closures_run(s, state, nested, writes, closures)
            if cls is A.Assign:
                t = s.targets[0]
                if isinstance(t, A.Name):
                    state[t.id] = self._state_of(s.value, state)
                else:
                    for n in A.walk(t):
                        if isinstance(n, A.Name):
                            state[n.id] = SET
        return state

    def _closures_run(self, s, state, nested, writes, closures) -> None:
        """Closures ``s`` runs (and the closures they run) can set adjoints they borrow. A
        continuation nested here runs exactly once -- called here, or passed to a
        backpropagator, which calls it once -- so what it always sets is set after."""
        reset = set()  # a cell's adjoint, which a closure may set back to None (a write
        # of the cell starts its adjoint again), whatever else a continuation sets
        for name in S.names(s) & closures:
            g = nested.get(name)
            definite = (
                self._definite_writes(g) if g is not None and anno.hasanno(g, anno.CONT) else set()
            )
            for w in writes[name]:
                if w in definite or state.get(w) == ZERO:
                    state[w] = SET
                elif state.get(w, MAYBE) == NONE:
                    state[w] = MAYBE
                if w not in definite and self._shared(w):
                    reset.add(w)
        for w in reset:
            state[w] = MAYBE

    def _state_of(self, value, state) -> str:
        """What is known of an adjoint assigned ``value``: a copy of another adjoint is what
        that one is, ``acc`` of two absent ones absent, of a present one present; any other
        value this transformation made is present (a rule's, a continuation's, a guard's)."""
        cls = value.__class__  # (for speed, the class first: asked of every assignment)
        if cls is A.Constant:
            return NONE if _is_none(value) else ZERO if _is_zero(value) else SET
        if cls is A.Name:
            return state.get(value.id, MAYBE) if self.namer.primal(value.id) is not None else SET
        if cls is A.Call and _is_acc(value, self.acc):
            known = [self._state_of(a, state) for a in value.args]
            if SET in known or ZERO in known:
                return SET
            return NONE if known == [NONE, NONE] else MAYBE
        return SET


class _Rewrite(A.NodeTransformer):
    """Specialize ``acc`` and ``x if x is not None else zeros`` by what is known of each adjoint.

    Guards are made (cps, shift/reset) as a statement's value, an argument of ``acc`` or an
    item of a returned tuple, and only move as whole values (inlining assigns a returned value):
    so only calls' arguments, tuples and conditional expressions are looked into -- the rest of
    an expression (a rule's arithmetic) holds none, and visiting it was most of this stage's time.
    """

    def __init__(self, simplify: Simplify, state: dict, f):
        self.s = simplify
        self.state = state
        self.f = f  # (whose names' counts what is left out is taken from)

    def visit(self, node):
        cls = node.__class__
        if cls is A.Call:
            return self.visit_Call(node)
        if cls is A.IfExp:
            return self.visit_IfExp(node)
        if cls is A.Tuple:
            node.elts = [self.visit(e) for e in node.elts]
        return node

    def generic_visit(self, node):
        if node.__class__ is A.Call:
            # (for speed: an argument of another class is left as ``visit`` leaves it)
            node.args = [self.visit(a) if a.__class__ in _LOOKED_INTO else a for a in node.args]
        else:  # an IfExp
            node.body, node.orelse = self.visit(node.body), self.visit(node.orelse)
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        if not anno.getanno(node, anno.GUARD):
            return node  # a call the transformed code itself makes (emitted code, again)
        if isinstance(f, A.Name) and f.id == self.s.acc and len(node.args) == 2:
            x, e = node.args
            if isinstance(x, A.Name):
                st = self.state.get(x.id, MAYBE)
                present = self.s._state_of(e, self.state) in (SET, ZERO)
                if st == NONE or (st == ZERO and present):
                    self.s._count_removed(self.f, f)
                    self.s._count_removed(self.f, x)
                    return e
                if st == SET and present:
                    self.s._count_removed(self.f, f)
                    return A.copy_location(A.binop(A.name(x.id), A.Add(), e), node)
        return node

    def visit_IfExp(self, node):
        self.generic_visit(node)
        if not anno.getanno(node, anno.GUARD):
            return node
        t = node.test
        if (
            isinstance(t, A.Compare)
            and isinstance(t.left, A.Name)
            and len(t.ops) == 1
            and isinstance(t.ops[0], A.IsNot)
            and _is_none(t.comparators[0])
            and A.is_name(node.body, t.left.id)
        ):
            st = self.state.get(t.left.id, MAYBE)
            if st in (SET, ZERO):
                self.s._count_removed(self.f, t)
                self.s._count_removed(self.f, node.orelse)
                return node.body
            if st == NONE:
                self.s._count_removed(self.f, t)
                self.s._count_removed(self.f, node.body)
                return node.orelse
        return node
