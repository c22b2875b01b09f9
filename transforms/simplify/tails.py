"""Tails: a continuation that only passes its values on is ``k``.

Invariant: after ``return_directly``, no continuation ends ``x_bar = k(...); return x_bar`` with
``x_bar`` a generated name used nowhere else (it is ``return k(...)``); after ``eta``, no
continuation whose body is only ``return k(x, ...)`` (or ``k(x, ...)``) of its own parameters is
left where its scope reads it only directly: ``k`` is used in its place, so a loop's recursive
call is a tail call -- nor one whose body is ``k(x); return zeros_like(x)`` where every
continuation its function's ``k`` is given returns ``zeros_like`` of its value (``_zero_k``).

Tests: tests/test_simplify_rewrites.py, its cases ``tails`` and ``tails_zero`` (the effect, with
the rewrite and without, and the gradient).
"""

from __future__ import annotations

from .. import anno
from .. import astlib as A
from .. import scoping as S
from ..joins import parents_of
from ._common import statement_lists


class Tails:
    """``return_directly`` and ``eta`` (a mixin of ``Simplify``: its state is the driver's)."""

    def return_directly(self, f) -> bool:
        """In a continuation, ``x_bar = e; return x_bar``  ->  ``return e`` (x_bar used nowhere
        else), so that one which only passes its values on is recognisably ``k`` (see ``eta``)."""
        if not anno.hasanno(f, anno.CONT):
            return False
        fa = self.facts[id(f)]
        changed = False
        for block in statement_lists(f):
            for i in range(len(block) - 1):
                a, r = block[i], block[i + 1]
                if (
                    isinstance(a, A.Assign)
                    and isinstance(a.targets[0], A.Name)
                    and isinstance(r, A.Return)
                    and A.is_name(r.value, a.targets[0].id)
                ):
                    x = a.targets[0].id
                    passes_on = (  # x_bar = k(x): the continuation of the whole function
                        isinstance(a.value, A.Call)
                        and A.is_name(a.value.func, self.unit.cont_name)
                        and all(isinstance(arg, A.Name) for arg in a.value.args)
                    )
                    if (
                        passes_on
                        and x in self.namer.generated
                        and fa.assignments.get(x) == 1
                        and fa.reads.get(x) == 1
                        and x not in fa.declared
                    ):
                        r.value = a.value
                        del block[i]
                        return True
        return changed

    def eta(self, f) -> bool:
        """A continuation that only passes its values on to ``k`` *is* ``k``: use ``k`` instead.

        This makes a loop's recursive call a tail call -- ``loop_L5_bp(k, i + 1, acc)`` -- so an
        iteration costs one frame, not two.
        """
        fa = self.facts[id(f)]
        if not fa.nested:
            return False  # (for speed: the facts say it defines no function, without a sweep)
        for block in statement_lists(f):
            for d in block:
                if not (isinstance(d, A.FunctionDef) and anno.hasanno(d, anno.CONT)):
                    continue
                zero = len(d.body) == 2 and self._returns_zero(d)
                if not (len(d.body) == 1 or zero) or not isinstance(d.body[0], (A.Return, A.Expr)):
                    continue  # `return k(x)`, or `k(x)` when nothing uses what it returns
                call = d.body[0].value
                params = A.arg_names(d.args)
                if not (
                    isinstance(call, A.Call)
                    and isinstance(call.func, A.Name)
                    and not call.keywords
                    and [getattr(a, "id", None) for a in call.args] == params
                    and call.func.id not in params
                ):
                    continue
                if fa.reads.get(d.name) != fa.loads.get(d.name):
                    continue  # used inside a nested function, where `k` may mean another one
                if zero and not (isinstance(d.body[0], A.Expr) and self._zero_k(f, call.func.id)):
                    continue
                target = call.func.id
                block.remove(d)
                for n in S.own_nodes(f):
                    if isinstance(n, A.Name) and n.id == d.name:
                        n.id = target
                return True
        return False

    def _returns_zero(self, g) -> bool:
        """Does every ``return`` of ``g`` -- one of them last in its body, so that no path falls
        off the end -- give ``zeros_like(p)`` of its one parameter ``p``, never assigned?"""
        params = A.arg_names(g.args)
        if len(params) != 1 or not g.body or not isinstance(g.body[-1], A.Return):
            return False
        p = params[0]
        for n in S.walk_own(g):
            if isinstance(n, A.Name) and n.id == p and not isinstance(n.ctx, A.Load):
                return False
            if isinstance(n, A.Return) and not (
                isinstance(n.value, A.Call)
                and A.is_name(n.value.func, self.zeros)
                and len(n.value.args) == 1
                and A.is_name(n.value.args[0], p)
                and not n.value.keywords
            ):
                return False
        return True

    def _zero_k(self, f, k: str) -> bool:
        """Is the parameter ``k`` of ``f`` (never assigned in it) given, at every call of ``f``,
        a continuation that returns ``zeros_like`` of its value (``_returns_zero``)? Then a
        continuation ``def c(v): k(v); return zeros_like(v)`` returns what ``k(v)`` returns --
        both a new zero of ``v``'s kind -- and *is* ``k`` (``eta``): a loop whose carried value
        is unused after it (an RNN collecting its states in a list) hands its continuation
        down unchanged, one frame an iteration, and a loop Defunctionalize can rewrite."""
        params = A.arg_names(f.args)
        fa = self.facts[id(f)]
        if k not in params or fa.assignments.get(k) or k in fa.declared:
            return False
        at = params.index(k)
        defs: dict = {}
        for g in A.function_defs(self.unit.tree):
            defs.setdefault(g.name, []).append(g)
        if len(defs.get(f.name, ())) != 1:
            return False
        parents = parents_of(self.unit.tree)
        names = S.name_nodes(self.unit.tree)
        # (a name bound other than by its def: not known to be the def's)
        stored = {n.id for n in names if not isinstance(n.ctx, A.Load)}
        for n in names:
            if n.id != f.name:
                continue
            call = parents.get(id(n))
            if not (isinstance(call, A.Call) and call.func is n and not call.keywords):
                return False  # (``f`` used as a value: called with anything)
            if len(call.args) <= at or any(isinstance(a, A.Starred) for a in call.args):
                return False
            given = call.args[at]
            if not isinstance(given, A.Name):
                return False
            if given.id == k:  # ``f`` handing its own ``k`` down -- not another ``k``
                if not any(x is n for x in S.walk_own(f)):
                    return False
                continue
            bound = defs.get(given.id, ())
            if len(bound) != 1 or given.id in stored or not self._returns_zero(bound[0]):
                return False
        return True
